"""Run an fio job file on a simulated drive and write what fio would:
``--output-format=json`` and the per-interval logs (``write_iops_log``,
``write_bw_log``), so that fio tooling and :mod:`ssdlab.fio.parse` read them.

How fio's semantics map onto the engine (one closed-loop job per call):

- Jobs run in file order. Jobs not separated by ``stonewall`` run at the same
  time in fio; the simulator runs one queue at a time, so such a group is an
  error unless its jobs are *identical* (same options but ``name`` and
  ``description``; ``numjobs`` clones are identical by definition), random
  (``randread``, ``randwrite``, ``randrw``, ``randtrim``) and reported with
  N identical random jobs of depth D over one region are one queue of depth
  N*D whose I/Os fall uniformly on the region, which is what the engine runs
  (byte and I/O bounds add up). Sequential clones are N separate streams and
  cannot be merged. With ``group_reporting`` the queue is one entry, as in
  fio; without it fio reports each clone, and each clone's entry gets 1/N of
  the queue's I/Os and bytes (counts split exactly, the remainder to the first
  clones) with the queue's latency distribution: fio's clones would differ by
  noise (a note says so).
- Reporting groups (``groupid``) follow fio: a job with ``stonewall`` or
  ``new_group`` starts a new group when the current one has jobs.
- Bounds follow fio: without ``time_based`` a job does one pass over ``size``
  (or ``io_size`` bytes, times ``loops``), stopping earlier at ``runtime`` or
  ``number_ios``; with ``time_based`` it runs for ``runtime``.
- ``ramp_time`` (time-based random jobs only) runs the job for the ramp, then
  the measured phase; only the latter is reported. The queue drains at the
  boundary (microseconds to milliseconds): a sequential stream would restart at
  ``offset``, so a sequential ramp is an error.
- ``startdelay`` is an idle phase before the job; ``end_fsync`` a FLUSH CACHE
  after it.
- ``fsync=N`` (and ``fdatasync=N``, the same on a block device) is the
  engine's: after every N writes the job waits for its I/O in flight, sends a
  FLUSH CACHE and waits until what it wrote is programmed (a partial program
  unit padded), then goes on, as fio's async engines do. Its count and
  latency are the job's ``sync`` section (``total_ios``, ``lat_ns``), as in
  fio's JSON; ``fsync=0`` is no option. Giving both with different periods is
  an error (fio would send two kinds of sync; a block device has one).
- Synchronous engines (``ioengine=psync``, fio's default on Linux, and the
  other sync engines) keep one I/O in flight whatever ``iodepth`` says, as fio
  does; a note says so when ``iodepth`` > 1.
- Random offsets are drawn with replacement, as fio's ``norandommap=1``; fio's
  default random map would touch every block once per pass (a note says so).

The JSON has fio's fields (``fio version`` is ``ssdlab-VERSION``): per job
``jobname``, ``groupid``, ``job options``, ``read``/``write``/``trim`` with
``io_bytes``, ``io_kbytes``, ``bw_bytes``, ``bw`` (KiB/s), ``iops``, ``runtime``
(ms), ``total_ios``, ``slat_ns`` (zeros: the simulated host has no submission
latency), ``clat_ns`` and ``lat_ns`` (min, max, mean, stddev from the engine's
histogram, N, percentiles: fio's list or ``percentile_list``; json+ adds the
histogram's ``bins``) and ``iops_*``/``bw_*`` statistics over the log
intervals (a job shorter than one interval is one sample); per job fio's
``latency_ns/us/ms`` shares, ``iodepth_level`` (the closed loop's fill, then
full), ``iodepth_submit``/``complete`` (one I/O per call), the latency-target
fields (fio's defaults) and CPU keys of 0 (a simulation has no host CPU); plus an ``ssdlab`` object per job (WAF, GC, SMART,
notes) and at the top (manifest, notes). Logs have fio's line format
``msec, value, ddir, bs, offset`` and, as fio, no line for an interval without
I/O of that direction. Merged clones each get a log with 1/N of the group's
I/Os (the sum over clones is exact; fio's clones would differ by noise).

API:
- :func:`plan` ``(jobfile, capacity_bytes) -> tuple[PlannedJob, ...]`` checks
  everything without running;
- :func:`simulate` ``(jobfile, drive=..., seed=1, simulator=None, progress=None) -> SimulatedRun``;
- :func:`write_outputs` ``(run, output, log_dir, output_format) -> list[Path]``
  (``normal``: fio's text report, :mod:`ssdlab.fio.normal`; ``json``; ``json+``);
- :func:`main` ``(argv) -> int``: a standalone form of ``ssdlab fio JOBFILE --drive X
  [--seed N] [--output-format json] [--output F] [--log-dir D] [--parse-only]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import json
import math
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from ..errors import SsdlabError, WorkloadError
from ..outputs import write_text
from ..results import PhaseResult, ssdlab_version
from . import fiojson, steadystate
from .errors import JobFileError
from .jobfile import SYNC_ENGINES, Job, JobFile, Percent, parse_jobfile, rw_base

#: Most I/Os one job keeps in flight (the engine's ``MAX_IODEPTH``: an NVMe
#: queue's 65536 entries).
MAX_IODEPTH = 65536

__all__ = ["PlannedJob", "SimulatedRun", "plan", "simulate", "write_outputs", "output_format_for", "OUTPUT_FORMATS", "main",
           "RANDOM_MODES"]

RANDOM_MODES = ("randread", "randwrite", "randrw", "randtrim", "randtrimwrite")
_READS = ("read", "randread", "rw", "readwrite", "randrw")
_WRITES = ("write", "randwrite", "rw", "readwrite", "randrw", "trimwrite", "randtrimwrite")
_TRIMS = ("trim", "randtrim")

#: Options that may differ between jobs merged into one queue.
_MERGE_FREE = frozenset({"name", "description", "stonewall", "numjobs", "new_group"})

ProgressCallback = Callable[[int, int, int, int], Optional[bool]]


@dataclass(frozen=True)
class PlannedJob:
    """One engine job: the fio jobs it stands for (``jobs``; more than one
    only when identical concurrent jobs are merged), ``clones`` (fio job
    instances, the sum of their ``numjobs``), the engine keys of the measured
    phase (``engine``), and what ssdlab does around it."""

    jobs: Tuple[Job, ...]
    clones: int
    groupid: int
    engine: Dict[str, Any]
    ramp_ns: int = 0
    startdelay_ns: int = 0
    end_fsync: bool = False
    iops_log: Optional[str] = None
    bw_log: Optional[str] = None
    per_job_logs: bool = True
    interval_ms: int = 1000
    notes: Tuple[str, ...] = ()
    #: Reported clone by clone (no ``group_reporting``): one JSON entry per clone.
    per_clone: bool = False
    #: fio's ``percentile_list`` (None: the default list), ``clat_percentiles``, ``lat_percentiles``.
    percentile_list: Optional[Tuple[float, ...]] = None
    clat_percentiles: bool = True
    lat_percentiles: bool = False
    #: fio's latency logs: name prefixes (None: not asked for).
    lat_log: Optional[str] = None
    clat_log: Optional[str] = None
    slat_log: Optional[str] = None
    #: I/Os in flight per clone (fio's ``iodepth`` after the engine's rule).
    depth: int = 1
    #: Index of the concurrency group whose jobs run side by side (one
    #: submitter each); None when the job runs alone (or as one queue).
    concurrent: Optional[int] = None
    #: fio's job number of this planned job when it is one clone of a job.
    first_number: Optional[int] = None
    #: fio's ``verify``: the engine's checking mode, and the job's region
    #: read back after it (``do_verify``) as fio's verify phase.
    verify: bool = False
    #: fio's ``ss``: the criterion, the window and the ramp in seconds.
    steady: Optional[Tuple[steadystate.Criterion, int, int]] = None

    @property
    def name(self) -> str:
        return self.jobs[0].name

    @property
    def numbers(self) -> Tuple[int, ...]:
        """fio's job numbers of every clone (log file indices)."""
        if self.first_number is not None:
            return (self.first_number,)
        out: List[int] = []
        for j in self.jobs:
            out += [j.number + i for i in range(j.int_value("numjobs", 1))]
        return tuple(out)


@dataclass
class SimulatedRun:
    """A finished (or interrupted) simulated run: ``document`` is the fio JSON,
    ``logs`` maps log file names to their text, ``phases`` every phase run
    (ramps, idles and measured phases, in order), ``measured`` the measured
    phase of each planned job that ran."""

    document: Dict[str, Any]
    logs: Dict[str, str]
    phases: List[PhaseResult] = field(default_factory=list)
    measured: List[PhaseResult] = field(default_factory=list)
    interrupted: bool = False

    def to_json(self, output_format: str = "json") -> str:
        """fio's ``json`` (the histogram ``bins`` left out) or ``json+``."""
        doc = self.document if output_format == "json+" else _without_bins(self.document)
        return json.dumps(doc, indent=2) + "\n"

    def render(self, output_format: str = "json") -> str:
        """The run as fio's ``--output-format`` (normal, json, json+) prints it."""
        if output_format == "normal":
            from .normal import render

            return render(_without_bins(self.document))
        return self.to_json(output_format)


def _without_bins(doc: Dict[str, Any]) -> Dict[str, Any]:
    jobs = []
    for j in doc.get("jobs", []):
        j = dict(j)
        for d in ("read", "write", "trim"):
            if d in j and "bins" in j[d].get("clat_ns", {}):
                j[d] = dict(j[d], clat_ns={k: v for k, v in j[d]["clat_ns"].items() if k != "bins"})
        jobs.append(j)
    return dict(doc, jobs=jobs)


# ---------------------------------------------------------------------------
# Planning
# ---------------------------------------------------------------------------


def _bytes(job: Job, name: str, capacity_bytes: int, default: int) -> int:
    v = job.value(name)
    if v is None:
        return default
    if isinstance(v, Percent):
        return v.bytes_of(capacity_bytes)
    assert isinstance(v, int)
    return v


def _is_random(job: Job) -> bool:
    return rw_base(job.value("rw", "read")) in RANDOM_MODES


def _region(job: Job, capacity_bytes: int, notes: List[str]) -> Tuple[int, int, Optional[int]]:
    """The job's region of the drive (offset, length) and the bytes of one
    pass when they differ from the length. fio's files are consecutive
    regions of ``filesize`` from ``offset`` (the simulated drive is one block
    device); ``fill_device`` writes to the drive's end."""
    offset = _bytes(job, "offset", capacity_bytes, 0)
    if job.flag("fill_device"):
        notes.append("fill_device: the job runs to the end of the drive (a block device's ENOSPC)")
        return offset, max(capacity_bytes - offset, 0), None
    nrfiles = job.int_value("nrfiles", 1)
    if not job.has("filesize"):
        size = _bytes(job, "size", capacity_bytes, max(capacity_bytes - offset, 0))
        if nrfiles > 1:
            _check_files(job, nrfiles)
            notes.append(f"nrfiles={nrfiles}: the files are {nrfiles} consecutive regions of size/nrfiles of the drive")
        return offset, size, None
    filesize = _bytes(job, "filesize", capacity_bytes, 0)
    if filesize <= 0:
        raise job.error("filesize", "must be more than 0")
    span = filesize * nrfiles
    if offset + span > capacity_bytes:
        raise job.error("filesize", f"{nrfiles} file(s) of {filesize} B from offset {offset} end past the drive's "
                        f"{capacity_bytes} B: the files are regions of the drive")
    _check_files(job, nrfiles)
    notes.append(f"the job's {nrfiles} file(s) of {filesize} B are consecutive regions of the drive from offset {offset}")
    total = _bytes(job, "size", capacity_bytes, span) if job.has("size") else span
    return offset, span, (total if total != span else None)


def _check_files(job: Job, nrfiles: int) -> None:
    """Several files read or written in order are several streams unless they
    are served one after the other (``file_service_type=sequential``)."""
    service = str(job.value("file_service_type", "roundrobin")).split(":", 1)[0]
    if nrfiles > 1 and not _is_random(job) and service != "sequential":
        raise job.error("nrfiles", f"{nrfiles} files served '{service}' by a sequential job are {nrfiles} interleaved "
                        "streams; the simulator runs one stream per job: set file_service_type=sequential (one file "
                        "after the other) or nrfiles=1")


def _engine_job(job: Job, clones: int, capacity_bytes: int) -> Tuple[Dict[str, Any], List[str], int]:
    """Engine keys for ``clones`` identical instances of ``job`` (the measured
    phase), the notes, and the ramp in ns."""
    notes: List[str] = []
    rw = str(job.value("rw", "read"))
    if job.flag("verify_only"):
        notes.append("verify_only: the job writes nothing and its read-back checks what the drive holds")
    random = rw_base(rw) in RANDOM_MODES
    e: Dict[str, Any] = {"name": job.name, "rw": rw}
    if job.has("bsrange") and not job.has("bssplit"):
        rng = job.value("bsrange")
        assert isinstance(rng, tuple)
        first = rng[0]
        assert isinstance(first, tuple)
        lo, hi = int(first[0]), int(first[1])
        if lo == hi:
            e["bs"] = lo
        else:
            e["bsrange"] = f"{lo}-{hi}"
        if job.has("bs"):
            notes.append("bsrange overrides bs")
    elif job.has("bssplit"):
        split = job.value("bssplit")
        assert isinstance(split, tuple)
        e["bssplit"] = ":".join(f"{b}/{w}" for b, w in split)  # type: ignore[misc]
        if job.has("bs"):
            notes.append("bssplit overrides bs (as in fio)")
    else:
        e["bs"] = job.int_value("bs", 4096)
    if job.has("blockalign"):
        e["blockalign"] = job.int_value("blockalign", 4096)
    offset, size, pass_bytes = _region(job, capacity_bytes, notes)
    e["offset"] = offset
    e["size"] = size
    for k in ("rwmixread", "refill_buffers", "scramble_buffers", "zero_buffers", "buffer_compress_percentage", "randseed"):
        v = job.value(k)
        if v is not None:
            e[k] = int(v) if isinstance(v, (bool, int)) else v
    if job.has("buffer_pattern") and str(job.value("buffer_pattern")).strip():
        for k in ("refill_buffers", "scramble_buffers", "zero_buffers", "buffer_compress_percentage"):
            e.pop(k, None)
        e["data_pattern"] = "zeros"
        notes.append(f"buffer_pattern={job.value('buffer_pattern')}: a short pattern repeated compresses as zeros do; the "
                     "simulator writes its zeros pattern")
    for k in ("fsync", "fdatasync"):
        n = job.int_value(k, 0)
        if n > 0:  # fio: 0 (its default) never syncs
            e[k] = n
    e.update(_pacing(job, rw))
    dist = str(job.value("random_distribution", "random")).strip()
    if dist != "random" and random:
        e["random_distribution"] = dist

    # Queue depth: sync engines (fio's default psync) keep one I/O in flight.
    engine = str(job.value("ioengine", "psync"))
    qd = job.int_value("iodepth", 1)
    if engine in SYNC_ENGINES:
        if qd > 1:
            notes.append(f"ioengine={engine} (fio's default when unset) keeps one I/O in flight: iodepth={qd} has no effect; "
                         "set ioengine=libaio or io_uring")
        qd = 1
    total_qd = qd * clones
    if total_qd > MAX_IODEPTH:
        raise job.error("numjobs" if clones > 1 else "iodepth",
                        f"{clones} clone(s) x iodepth {qd} = {total_qd} I/Os in flight; the engine takes at most {MAX_IODEPTH}")
    e["iodepth"] = total_qd
    if clones > 1:
        notes.append(f"{clones} identical random jobs run as one queue of {clones} x {qd} = {total_qd} I/Os in flight")

    # Bounds (fio semantics; the engine gets explicit keys).
    time_based = job.flag("time_based")
    runtime = job.value("runtime")
    loops = job.int_value("loops", 1)
    io_size = job.value("io_size")
    number_ios = job.value("number_ios") or None  # fio: 0 (its default) sets no limit
    ramp = job.int_value("ramp_time", 0) if job.has("ramp_time") else 0
    if runtime is not None:
        assert isinstance(runtime, int)
        if runtime <= 0:
            raise job.error("runtime", "must be longer than 0")
        e["runtime"] = f"{runtime}ns"
    if time_based:
        if runtime is None:
            raise job.error("time_based", "time_based needs a runtime (fio would run until stopped)")
        e["time_based"] = 1
        if io_size is not None:
            assert isinstance(io_size, int)
            if not random and io_size % size != 0:
                raise job.error("io_size", "with time_based, a sequential job restarts at offset every io_size bytes; the engine wraps "
                                "at size: make io_size a multiple of size or drop it")
        if loops > 1:
            notes.append("loops has no effect with time_based (as in fio)")
    else:
        e["time_based"] = 0
        per_pass = (pass_bytes or size) if io_size is None else int(io_size)  # type: ignore[arg-type]
        if not random and loops > 1 and per_pass % size != 0:
            raise job.error("loops", "a sequential job restarts at offset every loop of io_size bytes; the engine wraps at size: "
                            "make io_size a multiple of size")
        e["io_size"] = per_pass * loops * clones
    if number_ios is not None:
        assert isinstance(number_ios, int)
        e["number_ios"] = number_ios * clones
    if job.has("log_avg_msec"):
        e["log_avg_msec"] = job.int_value("log_avg_msec", 1000)
    elif any(job.has(k) for k in ("write_iops_log", "write_bw_log", "write_lat_log", "write_clat_log", "write_slat_log")):
        e["log_avg_msec"] = 1000
        notes.append("log_avg_msec unset: fio would log every I/O; the simulator logs 1000 ms averages")

    if ramp:
        if not time_based:
            raise job.error("ramp_time", "ramp_time is supported on time_based jobs only (fio counts the ramp's I/O toward "
                            "size/io_size, which the simulator cannot split)")
        if not random:
            raise job.error("ramp_time", "a sequential job would restart at offset after the ramp (fio continues the stream): "
                            "ramp_time is supported on random jobs only")
        if number_ios is not None:
            raise job.error("number_ios", "number_ios with ramp_time: fio counts the ramp's I/Os; not supported")
        notes.append("ramp_time: the ramp and the measurement are two engine phases; the queue drains at the boundary")
    if random and not job.flag("norandommap"):
        notes.append("random offsets are drawn with replacement, as fio with norandommap=1 (fio's default random map touches "
                     "each block once per pass)")
    if job.has("direct") and not job.flag("direct") or job.flag("buffered"):
        notes.append("a simulated drive has no page cache: buffered I/O (direct=0) is simulated as direct I/O")
    return e, notes, ramp


def _pacing(job: Job, rw: str) -> Dict[str, Any]:
    """fio's rate limits and think time as engine keys. A rate given per
    direction (``rate=R,W,T``) applies to the job's direction; different
    rates for the directions of a mixed job are not simulated."""
    out: Dict[str, Any] = {}
    base = rw_base(rw)
    dirs = [i for i, modes in enumerate((_READS, _WRITES, _TRIMS)) if base in modes]
    for opt, key in (("rate", "rate"), ("rate_iops", "rate_iops")):
        v = job.value(opt)
        if v is None:
            continue
        assert isinstance(v, tuple)
        vals = [int(x) for x in v if isinstance(x, (int, float))]
        picked = {vals[i] for i in dirs if i < len(vals) and vals[i] > 0} if len(vals) > 1 else set(vals[:1])
        if len(picked) > 1:
            raise job.error(opt, f"different {opt} per direction on a mixed job: the simulator paces a job as a whole")
        if picked and picked != {0}:
            out[key] = picked.pop()
    if job.has("rate_process") and str(job.value("rate_process")) != "linear":
        raise job.error("rate_process", "rate_process=poisson is not simulated yet (the engine paces linearly)")
    if job.has("thinktime") and job.int_value("thinktime", 0) > 0:
        out["thinktime"] = f"{job.int_value('thinktime', 0)}ns"
        out["thinktime_blocks"] = job.int_value("thinktime_blocks", 1)
    return out


def _floats(v: Any) -> Optional[Tuple[float, ...]]:
    return tuple(float(x) for x in v) if isinstance(v, tuple) else None


def _log_name(job: Job, option: str) -> Optional[str]:
    """A log's name prefix (fio: the job name when the option has no value)."""
    v = job.value(option)
    return None if v is None else (str(v) or job.name)


def _mergeable(a: Job, b: Job) -> Optional[str]:
    """Why ``b`` cannot join ``a``'s queue (None when it can)."""
    keys = (set(a.values) | set(b.values)) - _MERGE_FREE
    for k in sorted(keys):
        if a.values.get(k) != b.values.get(k):
            return f"'{k}' differs ({a.values.get(k)!r} vs {b.values.get(k)!r})"
    return None


def plan(jobfile: JobFile, capacity_bytes: int, *, queue_per_job: bool = False) -> Tuple[PlannedJob, ...]:
    """Check a job file against fio's semantics and the engine's abilities
    without running it. Raises JobFileError naming the file, line and option.

    ``queue_per_job``: the drive gives every job its own queue (NVMe), so
    identical clones run side by side instead of as one merged queue."""
    # Concurrency groups (split by stonewall) and fio's reporting groups.
    conc: List[List[Job]] = []
    groupids: Dict[int, int] = {}
    groupid = 0
    prev_group_jobs = 0
    waits: Dict[int, str] = {}
    for job in jobfile.jobs:
        target = job.value("wait_for")
        if target is not None:
            if not any(j.name == str(target) for j in jobfile.jobs[: jobfile.jobs.index(job)]):
                raise job.error("wait_for", f"no job named '{target}' before this one")
            if conc and any(j.name != str(target) for j in conc[-1]):
                waits[id(job)] = str(target)
        if (job.flag("stonewall") or job.flag("new_group")) and prev_group_jobs:
            groupid += 1
            prev_group_jobs = 0
        groupids[id(job)] = groupid
        prev_group_jobs += job.int_value("numjobs", 1)
        if not conc or job.flag("stonewall") or target is not None:
            conc.append([job])
        else:
            conc[-1].append(job)

    planned: List[PlannedJob] = []
    for index, group in enumerate(conc):
        first = group[0]
        wait_note = ([f"wait_for={waits[id(first)]}: the job starts when every job before it has finished (not only "
                      f"'{waits[id(first)]}')"] if id(first) in waits else [])
        clones = sum(j.int_value("numjobs", 1) for j in group)
        if clones == 1 or (not queue_per_job and _one_queue(group, groupids) is None):
            what = (f"jobs '{first.name}', " + ", ".join(f"'{j.name}'" for j in group[1:]) if len(group) > 1
                    else f"the {clones} clones of '{first.name}' (numjobs)")
            notes: List[str] = []
            if clones > 1 and not first.flag("group_reporting"):
                notes.append(f"{what} run as one queue and are reported one by one (no group_reporting), each with 1/{clones} "
                             "of the queue's I/Os and its latency distribution (fio's clones would differ by noise)")
            planned.append(_planned(group, clones, groupids[id(first)], capacity_bytes, notes + wait_note, {}, None))
            continue
        # Jobs that run side by side: a submitter each (a job's identical
        # random clones still share one queue).
        for job in group:
            n = job.int_value("numjobs", 1)
            gid = groupids[id(job)]
            if n > 1 and not queue_per_job and _one_queue([job], groupids) is None:
                notes = [f"the {n} clones of '{job.name}' run as one queue beside the group's other jobs"]
                if not job.flag("group_reporting"):
                    notes.append(f"the {n} clones of '{job.name}' are reported one by one, each with 1/{n} of the queue's I/Os")
                planned.append(_planned([job], n, gid, capacity_bytes, notes, _side_by_side(job, 0, capacity_bytes), index))
                continue
            for k in range(n):
                planned.append(_planned([job], 1, gid, capacity_bytes, [], _side_by_side(job, k, capacity_bytes), index,
                                        number=job.number + k))
    return tuple(planned)


def _one_queue(group: Sequence[Job], groupids: Mapping[int, int]) -> Optional[str]:
    """Why the jobs of a concurrency group cannot be one queue (None when
    they can: identical random jobs of one reporting group, without their
    own flushes, offsets or pacing)."""
    first = group[0]
    for j in group[1:]:
        why = _mergeable(first, j)
        if why is not None:
            return why
        if groupids[id(j)] != groupids[id(first)]:
            return "they are reported in separate groups"
    for k in ("fsync", "fdatasync"):
        if first.int_value(k, 0) > 0:
            return "each would send its own FLUSH CACHE"
    if not _is_random(first):
        return "sequential streams are separate"
    clones = sum(j.int_value("numjobs", 1) for j in group)
    if first.int_value("iodepth", 1) * clones > MAX_IODEPTH:
        return f"one queue would hold more than the engine's {MAX_IODEPTH} I/Os"
    for k in ("offset_increment", "rate", "rate_iops", "thinktime", "startdelay"):
        if first.has(k):
            return f"each clone has its own {k}"
    return None


def _side_by_side(job: Job, clone: int, capacity_bytes: int) -> Dict[str, Any]:
    """Engine keys of one submitter beside others: fio's clone offset
    (``offset_increment``), its own random seed, its start delay."""
    extra: Dict[str, Any] = {}
    if job.has("offset_increment") and clone:
        base = _bytes(job, "offset", capacity_bytes, 0)
        extra["offset"] = base + clone * _bytes(job, "offset_increment", capacity_bytes, 0)
    if job.has("randseed") and clone:
        extra["randseed"] = job.int_value("randseed", 0) + clone
    if job.has("startdelay"):
        extra["startdelay"] = f"{job.int_value('startdelay', 0)}ns"
    return extra


def _planned(group: Sequence[Job], clones: int, groupid: int, capacity_bytes: int, notes: List[str],
             overrides: Mapping[str, Any], concurrent: Optional[int], number: Optional[int] = None) -> PlannedJob:
    first = group[0]
    engine, more, ramp = _engine_job(first, clones, capacity_bytes)
    engine.update(overrides)
    if "offset" in overrides and not first.has("size") and not first.has("filesize"):
        engine["size"] = capacity_bytes - int(engine["offset"])  # fio: the rest of the device from the clone's offset
    if concurrent is not None and ramp:
        raise first.error("ramp_time", "ramp_time on a job that runs beside others is not simulated yet: add stonewall")
    if "offset" in overrides and int(engine["offset"]) + int(engine["size"]) > capacity_bytes:
        raise first.error("offset_increment", f"clone at offset {engine['offset']} with size {engine['size']} ends past the drive's "
                          f"{capacity_bytes} B")
    iops_log = first.value("write_iops_log")
    bw_log = first.value("write_bw_log")
    if bw_log is not None and rw_base(first.value("rw", "read")) in _TRIMS:
        raise first.error("write_bw_log", "the engine's series have no trim bytes per interval; use write_iops_log for trim jobs")
    return PlannedJob(
        jobs=tuple(group),
        clones=clones,
        groupid=groupid,
        engine=engine,
        ramp_ns=ramp,
        startdelay_ns=(first.int_value("startdelay", 0) if first.has("startdelay") and concurrent is None else 0),
        end_fsync=first.flag("end_fsync"),
        iops_log=(str(iops_log) or first.name) if iops_log is not None else None,
        bw_log=(str(bw_log) or first.name) if bw_log is not None else None,
        per_job_logs=first.flag("per_job_logs", True),
        interval_ms=int(engine.get("log_avg_msec", 1000)),
        notes=tuple(more + notes),
        per_clone=clones > 1 and not first.flag("group_reporting"),
        percentile_list=_floats(first.value("percentile_list")),
        clat_percentiles=first.flag("clat_percentiles", True),
        lat_percentiles=first.flag("lat_percentiles"),
        lat_log=_log_name(first, "write_lat_log"),
        clat_log=_log_name(first, "write_clat_log") or _log_name(first, "write_lat_log"),
        slat_log=_log_name(first, "write_slat_log") or _log_name(first, "write_lat_log"),
        depth=int(engine["iodepth"]) // clones,
        concurrent=concurrent,
        first_number=number,
        # a reading job's reads are checked as they happen; a writing one reads back
        verify=_verifies(first) and (rw_base(first.value("rw", "read")) in _WRITES or first.flag("verify_only")),
        steady=_steady(first),
    )


def _steady(job: Job) -> Optional[Tuple[steadystate.Criterion, int, int]]:
    """fio's ``ss``/``ss_dur``/``ss_ramp``, checked: per-second samples need
    the engine's 1 s intervals."""
    v = job.value("steadystate")
    if v is None:
        return None
    try:
        c = steadystate.parse(str(v))
    except ValueError as e:
        raise job.error("steadystate", str(e)) from None
    if not job.has("steadystate_duration"):
        raise job.error("steadystate", "give ss_dur (the window steady state is judged over), as fio requires")
    dur_ns = job.int_value("steadystate_duration", 0)
    ramp_ns = job.int_value("steadystate_ramp_time", 0) if job.has("steadystate_ramp_time") else 0
    if dur_ns < 2 * 10**9 or dur_ns % 10**9 or ramp_ns % 10**9:
        raise job.error("steadystate_duration", "ss_dur (at least 2 s) and ss_ramp are whole seconds: fio samples once a second")
    if job.has("steadystate_check_interval") and job.int_value("steadystate_check_interval", 0) != 10**9:
        raise job.error("steadystate_check_interval", "only fio's default of 1 s is simulated")
    if job.has("log_avg_msec") and job.int_value("log_avg_msec", 1000) != 1000:
        raise job.error("log_avg_msec", "with ss the simulator samples every second: log_avg_msec=1000 or unset")
    return c, dur_ns // 10**9, ramp_ns // 10**9


def _verifies(job: Job) -> bool:
    """fio reads back and checks a writing job's data when ``verify`` names
    a method (``null``: none) and ``do_verify`` is on; ``verify_only`` only
    reads back."""
    v = job.value("verify")
    if v is None or str(v) in ("", "0", "null"):
        return False
    return job.flag("do_verify", True) or job.flag("verify_only")


# ---------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------

_ENGINE_FIELD_TO_OPTION = {"data": "refill_buffers", "data_pattern": "refill_buffers", "io_limit": "io_size"}


def _interval_stats(values: np.ndarray) -> Tuple[float, float, float, float, int]:
    if len(values) == 0:
        return 0.0, 0.0, 0.0, 0.0, 0
    std = float(np.std(values, ddof=1)) if len(values) > 1 else 0.0
    return float(np.min(values)), float(np.max(values)), float(np.mean(values)), std, int(len(values))


def _complete(r: PhaseResult) -> np.ndarray:
    """Mask of the intervals that ended within the phase."""
    t = r.series.get("time_ns")
    if t is None:
        return np.zeros(0, dtype=bool)
    return np.asarray(t <= int(r.data["duration_ns"]), dtype=bool)


def _direction(r: PhaseResult, d: str, p: Optional["PlannedJob"] = None) -> Dict[str, Any]:
    x = r.data[d]
    n = int(x["total_ios"])
    dur_ms = int(round(int(r.data["duration_ns"]) / 1e6))
    clat = x["clat_ns"]
    hist = r.latency_hist.get(d)
    if n:
        sd = fiojson.stddev_ns(hist)
        c: Dict[str, Any] = {"min": int(clat["min"]), "max": int(clat["max"]), "mean": float(clat["mean"]), "stddev": sd,
                             "N": n, "percentile": dict(clat["percentile"])}
        lat: Dict[str, Any] = {"min": int(clat["min"]), "max": int(clat["max"]), "mean": float(clat["mean"]), "stddev": sd,
                               "N": n}
        if p is not None and p.percentile_list is not None:
            c["percentile"] = fiojson.percentiles(hist, p.percentile_list, c["min"], c["max"])
        if p is not None and p.lat_percentiles:
            lat["percentile"] = dict(c["percentile"])
        if p is not None and not p.clat_percentiles:
            del c["percentile"]
        c["bins"] = fiojson.jsonplus_bins(hist)
    else:
        c = {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0}
        lat = dict(c)
    out: Dict[str, Any] = {
        "io_bytes": int(x["io_bytes"]),
        "io_kbytes": int(x["io_bytes"]) // 1024,
        "bw_bytes": int(round(float(x["bw_bytes"]))),
        "bw": int(float(x["bw_bytes"]) // 1024),
        "iops": float(x["iops"]),
        "runtime": dur_ms if n else 0,
        "total_ios": n,
        "short_ios": 0,
        "drop_ios": 0,
        "slat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": n},
        "clat_ns": c,
        "lat_ns": lat,
    }
    mask = _complete(r)
    s = r.series
    if n and len(mask) and not mask.any():
        # A job shorter than one interval: its whole run is the one sample.
        secs = int(r.data["duration_ns"]) / 1e9
        iops = np.array([n / secs]) if secs > 0 else np.zeros(0)
        bw_kib = np.array([int(x["io_bytes"]) / secs / 1024.0]) if secs > 0 and d != "trim" else np.zeros(0)
    elif n and d in ("read", "write") and len(mask) and mask.any():
        dt = s["interval_s"][mask]
        iops = s[f"{d}_ios"][mask].astype(np.float64) / dt
        bw_kib = s[f"{d}_bytes"][mask].astype(np.float64) / dt / 1024.0
    elif n and d == "trim" and len(mask) and mask.any():
        dt = s["interval_s"][mask]
        iops = s["trim_ios"][mask].astype(np.float64) / dt
        bw_kib = np.zeros(0)
    else:
        iops = bw_kib = np.zeros(0)
    bmin, bmax, bmean, bdev, bn = _interval_stats(bw_kib)
    out.update({"bw_min": int(bmin), "bw_max": int(bmax), "bw_agg": 100.0 if bn else 0.0, "bw_mean": bmean, "bw_dev": bdev, "bw_samples": bn})
    imin, imax, imean, idev, inn = _interval_stats(iops)
    out.update({"iops_min": int(imin), "iops_max": int(imax), "iops_mean": imean, "iops_stddev": idev, "iops_samples": inn})
    return out


def _host_keys(p: PlannedJob, r: PhaseResult) -> Dict[str, Any]:
    """fio's job keys beside the directions: CPU (0: a simulation has no host
    CPU), the queue depths the closed loop ran at, the latency shares and
    fio's latency-target fields (no target: fio's defaults)."""
    total = sum(int(r.data[d]["total_ios"]) for d in ("read", "write", "trim"))
    per_clone = -(-total // p.clones) if p.clones else total
    lns, lus, lms = fiojson.latency_buckets([r.latency_hist.get(d) for d in ("read", "write", "trim")])
    one_batch = {k: (100.0 if k == "4" and total else 0.0) for k in fiojson.BATCH_KEYS}
    return {
        "usr_cpu": 0.0,
        "sys_cpu": 0.0,
        "ctx": 0,
        "majf": 0,
        "minf": 0,
        "iodepth_level": fiojson.iodepth_levels(per_clone, p.depth),
        "iodepth_submit": dict(one_batch),
        "iodepth_complete": dict(one_batch),
        "latency_ns": lns,
        "latency_us": lus,
        "latency_ms": lms,
        "latency_depth": p.depth,
        "latency_target": 0,
        "latency_percentile": 100.0,
        "latency_window": 0,
    }


def _sync(r: PhaseResult) -> Dict[str, Any]:
    """fio's ``sync`` section: the job's FLUSH CACHE commands (``fsync=N``)
    and their latency (zeros when it sent none, as fio)."""
    x = r.data.get("sync")
    if not x or not int(x["total_ios"]):
        return {"total_ios": 0, "lat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0}}
    lat = x["lat_ns"]
    return {"total_ios": int(x["total_ios"]),
            "lat_ns": {"min": int(lat["min"]), "max": int(lat["max"]), "mean": float(lat["mean"]), "N": int(lat["N"]),
                       "percentile": dict(lat["percentile"])}}


def _job_entry(p: PlannedJob, r: PhaseResult, ramp: Optional[PhaseResult], delay_ns: int) -> Dict[str, Any]:
    first = p.jobs[0]
    elapsed_ns = int(r.data["duration_ns"]) + (int(ramp.data["duration_ns"]) if ramp else 0) + delay_ns
    entry: Dict[str, Any] = {
        "jobname": first.name,
        "groupid": p.groupid,
        "error": 0,
        "eta": 0,
        "elapsed": int(math.ceil(elapsed_ns / 1e9)),
    }
    if first.own and first.job_options():
        entry["job options"] = first.job_options()
    desc = first.value("description")
    if desc:
        entry["desc"] = str(desc)
    for d in ("read", "write", "trim"):
        entry[d] = _direction(r, d, p)
    entry["sync"] = _sync(r)
    entry["job_runtime"] = int(round(int(r.data["duration_ns"]) / 1e6))
    entry.update(_host_keys(p, r))
    extra = {k: v for k, v in r.data.items() if k not in ("read", "write", "trim", "sync", "jobname")}
    extra.update(
        {
            "clones": p.clones,
            "merged_jobs": [j.name for j in p.jobs],
            "engine_job": dict(p.engine),
            "ramp_ns": int(ramp.data["duration_ns"]) if ramp else 0,
            "startdelay_ns": delay_ns,
            "notes": list(p.notes),
            "ioengine": str(first.value("ioengine", "psync")),
        }
    )
    entry["ssdlab"] = extra
    return entry


def _share(total: int, n: int, clone: int) -> int:
    """Clone ``clone``'s part of ``total`` split over ``n`` (the remainder to the first clones)."""
    return total // n + (1 if clone < total % n else 0)


def _clone_direction(x: Dict[str, Any], n: int, clone: int) -> Dict[str, Any]:
    """One clone's part of a direction of the merged queue: I/Os and bytes
    split exactly, rates and per-interval statistics in proportion."""
    ios, nbytes = int(x["total_ios"]), int(x["io_bytes"])
    mine, mine_b = _share(ios, n, clone), _share(nbytes, n, clone)
    f = mine / ios if ios else 0.0
    fb = mine_b / nbytes if nbytes else 0.0
    out = dict(x)
    out.update({"total_ios": mine, "io_bytes": mine_b, "io_kbytes": mine_b // 1024, "iops": float(x["iops"]) * f,
                "bw_bytes": int(round(float(x["bw_bytes"]) * fb))})
    out["bw"] = out["bw_bytes"] // 1024
    for k in ("bw_min", "bw_max", "iops_min", "iops_max"):
        out[k] = int(x[k] / n)
    for k in ("bw_mean", "bw_dev", "iops_mean", "iops_stddev"):
        out[k] = float(x[k]) / n
    if not mine:
        out["runtime"] = 0
    for k in ("slat_ns", "clat_ns", "lat_ns"):
        out[k] = dict(x[k], N=mine)
    return out


def _job_entries(p: PlannedJob, r: PhaseResult, ramp: Optional[PhaseResult], delay_ns: int) -> List[Dict[str, Any]]:
    """The JSON entries of a planned job: one (a group, or a single job), or
    one per clone when the clones are reported one by one."""
    entry = _job_entry(p, r, ramp, delay_ns)
    if not p.per_clone:
        return [entry]
    names = [j for j in p.jobs for _ in range(j.int_value("numjobs", 1))]
    out: List[Dict[str, Any]] = []
    for clone, job in enumerate(names):
        e = dict(entry, jobname=job.name)
        if job.own and job.job_options():
            e["job options"] = job.job_options()
        for d in ("read", "write", "trim"):
            e[d] = _clone_direction(entry[d], p.clones, clone)
        e["ssdlab"] = dict(entry["ssdlab"], clone=clone)
        out.append(e)
    return out


def _log_text(p: PlannedJob, r: PhaseResult, kind: str, clone: int) -> str:
    """fio's log lines ``msec, value, ddir, bs, offset`` for one clone (of
    ``p.clones``): IOPS, or KiB/s for ``kind == "bw"``; no line for an interval
    without I/O of that direction (as fio)."""
    s = r.series
    mask = _complete(r)
    if not len(mask):
        return ""
    t_ms = (s["time_ns"][mask] // 1_000_000).astype(np.int64)
    starts = np.concatenate(([0], s["time_ns"][:-1]))[mask]
    span_ms = ((s["time_ns"][mask] - starts) // 1_000_000).astype(np.int64)
    cols: List[Tuple[int, np.ndarray]] = []
    if kind in ("lat", "clat", "slat"):
        return _lat_log_text(r, mask, t_ms, kind)
    if kind == "iops":
        for ddir, key in ((0, "read_ios"), (1, "write_ios"), (2, "trim_ios")):
            cols.append((ddir, s[key][mask].astype(np.int64)))
    else:
        for ddir, key in ((0, "read_bytes"), (1, "write_bytes")):
            cols.append((ddir, s[key][mask].astype(np.int64)))
    lines: List[str] = []
    n = p.clones
    for i in range(len(t_ms)):
        for ddir, arr in cols:
            total = int(arr[i])
            share = total // n + (1 if clone < total % n else 0)
            if share == 0 or span_ms[i] <= 0:
                continue
            value = share * 1000 // int(span_ms[i])
            if kind == "bw":
                value //= 1024
            lines.append(f"{int(t_ms[i])}, {value}, {ddir}, 0, 0")
    return "".join(line + "\n" for line in lines)


def _lat_log_text(r: PhaseResult, mask: np.ndarray, t_ms: np.ndarray, kind: str) -> str:
    """fio's averaged latency log lines (ns): each interval's mean completion
    latency on a line per direction that had I/O in it (the engine keeps one
    mean over the directions); ``slat`` is 0 (no host submission time) and
    ``lat`` equals ``clat``."""
    s = r.series
    means = r.interval_lat_mean_ns
    if means is None:
        return ""
    means = means[: len(mask)][mask]
    lines: List[str] = []
    for i in range(len(t_ms)):
        for ddir, key in ((0, "read_ios"), (1, "write_ios"), (2, "trim_ios")):
            if int(s[key][mask][i]) == 0:
                continue
            value = 0 if kind == "slat" else int(means[i])
            lines.append(f"{int(t_ms[i])}, {value}, {ddir}, 0, 0")
    return "".join(line + "\n" for line in lines)


def _logs(p: PlannedJob, r: PhaseResult) -> Dict[str, str]:
    out: Dict[str, str] = {}
    for kind, prefix in (("iops", p.iops_log), ("bw", p.bw_log), ("lat", p.lat_log), ("clat", p.clat_log), ("slat", p.slat_log)):
        if prefix is None:
            continue
        for clone, number in enumerate(p.numbers):
            name = f"{prefix}_{kind}.{number}.log" if p.per_job_logs else f"{prefix}_{kind}.log"
            out[name] = out.get(name, "") + _log_text(p, r, kind, clone)
    return out


def _document(jobfile: JobFile, entries: List[Dict[str, Any]], sim: Any, notes: List[str], interrupted: bool) -> Dict[str, Any]:
    now = time.time()
    man = sim.manifest()
    doc: Dict[str, Any] = {
        "fio version": f"ssdlab-{ssdlab_version()}",
        "timestamp": int(now),
        "timestamp_ms": int(now * 1000),
        "time": _dt.datetime.fromtimestamp(now).strftime("%a %b %d %H:%M:%S %Y"),
        "global options": jobfile.global_options_shown(),
        "jobs": entries,
        "disk_util": [],
        "ssdlab": {
            "jobfile": jobfile.path,
            "drive_id": sim.drive.id,
            "seed": sim.seed,
            "capacity_bytes": sim.capacity_bytes,
            "interrupted": interrupted,
            "notes": notes,
            "manifest": man,
        },
    }
    return doc


# ---------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------


def _verify_phase(sim: Any, p: PlannedJob, written: Optional[PhaseResult], progress: Optional[ProgressCallback]) -> PhaseResult:
    """fio's verify phase: the job's region read back in order, in the job's
    block size, as much as it wrote (all of it for verify_only). In checking
    mode the engine compares every read with what was written last; a
    mismatch is an IntegrityError naming the LBA."""
    e = p.engine
    bs = int(e.get("bs", 0)) or 4096
    if "bssplit" in e or "bsrange" in e:
        bs = 4096
    size = int(e["size"])
    nbytes = size if written is None else min(size, int(written.data["write"]["io_bytes"]) or size)
    nbytes = max(nbytes // bs * bs, bs)
    job = {"name": f"{p.name} (verify)", "rw": "read", "bs": bs, "offset": int(e["offset"]), "size": size,
           "io_size": nbytes, "iodepth": int(e["iodepth"]), "time_based": 0}
    r: PhaseResult = sim.run(job, progress=progress)
    return r


def _per_second(r: PhaseResult) -> Tuple[List[int], List[int]]:
    """A job's I/Os and bytes in each whole second (its 1 s intervals)."""
    s = r.series
    mask = _complete(r)
    if not len(mask):
        return [], []
    ios = (s["read_ios"] + s["write_ios"] + s["trim_ios"])[mask]
    nbytes = (s["read_bytes"] + s["write_bytes"])[mask]
    return [int(x) for x in ios], [int(x) for x in nbytes]


def _summed(rs: Sequence[PhaseResult]) -> PhaseResult:
    """The first result with the group's per-second I/Os and bytes summed
    (fio judges a reporting group's steady state on its sum)."""
    if len(rs) == 1:
        return rs[0]
    first = rs[0]
    series = dict(first.series)
    n = min(len(r.series["time_ns"]) for r in rs)
    for k in ("read_ios", "write_ios", "trim_ios", "read_bytes", "write_bytes"):
        series[k] = np.sum([r.series[k][:n] for r in rs], axis=0)
    series["time_ns"] = first.series["time_ns"][:n]
    return PhaseResult(dict(first.data), series)


BatchRunner = Callable[[Any, Sequence[PlannedJob]], List[PhaseResult]]


def _run_steady(sim: Any, batch: Sequence[PlannedJob], run_batch: BatchRunner) -> Tuple[Any, List[PhaseResult]]:
    """Run a batch; with fio's ``ss``, run it from a copy of the drive and,
    once the window meets the criterion at second T, run it again from the
    same state for exactly T seconds (the simulation repeats itself), so the
    job stops where fio's would. Returns the simulator to go on with."""
    steady = batch[0].steady
    if steady is None:
        return sim, run_batch(sim, batch)
    base = sim.clone()
    rs = run_batch(sim, batch)
    c, dur_s, ramp_s = steady
    iops, bw = _per_second(_summed(rs))
    d = steadystate.detect(c, iops, bw, dur_s, ramp_s)
    if d.attained_s is None or d.attained_s * 10**9 >= min(int(r.data["duration_ns"]) for r in rs):
        return sim, rs
    cut = [dataclasses.replace(p, engine=dict(p.engine, runtime=f"{d.attained_s}s")) for p in batch]
    return base, run_batch(base, cut)


def _add_steady(p: PlannedJob, r: PhaseResult, entries: List[Dict[str, Any]]) -> None:
    if p.steady is None:
        return
    c, dur_s, ramp_s = p.steady
    iops, bw = _per_second(r)
    d = steadystate.detect(c, iops, bw, dur_s, ramp_s)
    section = steadystate.json_section(c, d, dur_s)
    for e in entries:
        e["steadystate"] = section


def _batches(planned: Sequence[PlannedJob]) -> List[List[PlannedJob]]:
    """Planned jobs in the order they run: alone, or side by side (the same
    concurrency group)."""
    out: List[List[PlannedJob]] = []
    for p in planned:
        if out and p.concurrent is not None and out[-1][0].concurrent == p.concurrent:
            out[-1].append(p)
        else:
            out.append([p])
    return out


def _group_entries(batch: Sequence[PlannedJob], rs: Sequence[PhaseResult]) -> List[Dict[str, Any]]:
    """The JSON entries of jobs that ran side by side: each job's own, or,
    with ``group_reporting``, one per reporting group (fio's merge)."""
    out: List[Dict[str, Any]] = []
    i = 0
    while i < len(batch):
        p = batch[i]
        same = [k for k in range(i, len(batch)) if batch[k].groupid == p.groupid]
        if p.jobs[0].flag("group_reporting") and len(same) > 1 and same == list(range(i, same[-1] + 1)):
            out.append(_merged_entry([batch[k] for k in same], [rs[k] for k in same]))
            i = same[-1] + 1
            continue
        out.extend(_job_entries(p, rs[i], None, 0))
        i += 1
    return out


def _merged_entry(ps: Sequence[PlannedJob], rs: Sequence[PhaseResult]) -> Dict[str, Any]:
    """fio's ``group_reporting`` of different jobs: I/O and bytes summed over
    the group's longest runtime, latency from the merged histograms."""
    entry = _job_entry(ps[0], rs[0], None, 0)
    dur_ns = max(int(r.data["duration_ns"]) for r in rs)
    for d in ("read", "write", "trim"):
        xs = [_direction(r, d, p) for p, r in zip(ps, rs)]
        n = sum(int(x["total_ios"]) for x in xs)
        if not n:
            continue
        nbytes = sum(int(x["io_bytes"]) for x in xs)
        hist = _merge_hist([r.latency_hist.get(d) for r in rs])
        lo = min(int(x["clat_ns"]["min"]) for x in xs if x["total_ios"])
        hi = max(int(x["clat_ns"]["max"]) for x in xs)
        mean = sum(float(x["clat_ns"]["mean"]) * int(x["total_ios"]) for x in xs) / n
        pts = ps[0].percentile_list or tuple(float(k) for k in xs[0]["clat_ns"].get("percentile", {})) or ()
        c: Dict[str, Any] = {"min": lo, "max": hi, "mean": mean, "stddev": fiojson.stddev_ns(hist), "N": n}
        if ps[0].clat_percentiles:
            c["percentile"] = fiojson.percentiles(hist, pts, lo, hi)
        c["bins"] = fiojson.jsonplus_bins(hist)
        x = dict(xs[0])
        secs = dur_ns / 1e9
        x.update({"io_bytes": nbytes, "io_kbytes": nbytes // 1024, "total_ios": n, "bw_bytes": int(round(nbytes / secs)),
                  "bw": int(nbytes / secs // 1024), "iops": n / secs, "runtime": int(round(dur_ns / 1e6)),
                  "clat_ns": c, "lat_ns": {k: v for k, v in c.items() if k not in ("bins", "percentile")},
                  "slat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": n}})
        for k in ("bw_min", "bw_max", "bw_mean", "iops_min", "iops_max", "iops_mean"):
            x[k] = sum(y[k] for y in xs)
        entry[d] = x
    entry["ssdlab"] = dict(entry["ssdlab"], clones=sum(p.clones for p in ps), merged_jobs=[j.name for p in ps for j in p.jobs])
    return entry


def _merge_hist(hs: Sequence[Optional[fiojson.Hist]]) -> Optional[fiojson.Hist]:
    counts: Dict[Tuple[int, int], int] = {}
    for h in hs:
        if h is None:
            continue
        for lo, w, c in zip(h[0], h[1], h[2]):
            counts[(int(lo), int(w))] = counts.get((int(lo), int(w)), 0) + int(c)
    if not counts:
        return None
    keys = sorted(counts)
    return (np.array([k[0] for k in keys], dtype=np.uint64), np.array([k[1] for k in keys], dtype=np.uint64),
            np.array([counts[k] for k in keys], dtype=np.uint64))


def _check_engine(sim: Any, p: PlannedJob) -> None:
    """Let the engine validate the job now, mapping its field to our line."""
    try:
        sim.parse_job(dict(p.engine))
    except WorkloadError as e:
        fld = str(getattr(e, "field", "") or "")
        opt = _ENGINE_FIELD_TO_OPTION.get(fld, fld)
        job = p.jobs[0]
        f, ln = job.where(opt)
        msg = str(e)
        raise JobFileError(f, ln, opt or "rw", f"job '{job.name}': {msg}") from None


def simulate(
    jobfile: JobFile,
    drive: Any = "generic-mlc-120",
    *,
    seed: int = 1,
    simulator: Any = None,
    progress: Optional[ProgressCallback] = None,
) -> SimulatedRun:
    """Run every job of ``jobfile`` on a simulated drive (a new
    ``ssdlab.Simulator(drive, seed=seed)``, or ``simulator`` as it is, e.g.
    preconditioned). Everything is checked before the first phase runs.
    Same job file, drive and seed -> the same document but its timestamps.

    Ctrl-C: the KeyboardInterrupt carries ``.run``, a SimulatedRun with the
    finished jobs and the interrupted one (marked in ``ssdlab.interrupted``)."""
    from ..sim import Simulator

    verifying = any(_verifies(j) for j in jobfile.jobs)
    sim = simulator if simulator is not None else Simulator(drive, seed=seed, check=verifying)
    planned = plan(jobfile, int(sim.capacity_bytes), queue_per_job=sim.drive.is_nvme)
    for p in planned:
        _check_engine(sim, p)
    run = SimulatedRun(document={}, logs={})
    entries: List[Dict[str, Any]] = []
    notes: List[str] = list(jobfile.notes)
    if verifying:
        notes.append("verify: the simulator runs in checking mode (every read and, after every phase, the whole FTL compared "
                      "with a trivial model of what was written); a verifying job then reads its region back, reported as "
                      "its reads, as fio's verify phase" + ("" if sim.check_mode else "; the simulator passed in is not in "
                                                             "checking mode, so only the read-back runs"))
    for p in planned:
        for n in p.notes:
            line = f"job '{p.name}': {n}"
            if line not in notes:
                notes.append(line)
    done = 0  # planned jobs finished
    try:
        for batch in _batches(planned):
            if len(batch) > 1 or batch[0].concurrent is not None:
                sim, rs = _run_steady(sim, batch, lambda s, b: s.run_jobs([dict(p.engine) for p in b], progress=progress))
                run.phases.extend(rs)
                run.measured.extend(rs)
                got = _group_entries(batch, rs)
                if batch[0].steady is not None:
                    _add_steady(batch[0], _summed(rs), got)
                entries.extend(got)
                for p, r in zip(batch, rs):
                    run.logs.update(_logs(p, r))
                if any(p.end_fsync for p in batch):
                    sim.flush()
                done += len(batch)
                continue
            p = batch[0]
            if p.startdelay_ns:
                run.phases.append(sim.idle(duration_ns=p.startdelay_ns))
            ramp: Optional[PhaseResult] = None
            if p.ramp_ns:
                rj = dict(p.engine, runtime=f"{p.ramp_ns}ns", time_based=1, name=f"{p.name} (ramp)")
                if "randseed" in rj:
                    rj["randseed"] = int(rj["randseed"]) ^ 0x5EED
                ramp = sim.run(rj, progress=progress)
                run.phases.append(ramp)
            if p.verify and p.jobs[0].flag("verify_only"):
                r = _verify_phase(sim, p, None, progress)
            else:
                sim, (r,) = _run_steady(sim, batch, lambda s, b: [s.run(dict(b[0].engine), progress=progress)])
            run.phases.append(r)
            run.measured.append(r)
            if p.end_fsync:
                sim.flush()
            got = _job_entries(p, r, ramp, p.startdelay_ns)
            _add_steady(p, r, got)
            if p.verify and not p.jobs[0].flag("verify_only"):
                v = _verify_phase(sim, p, r, progress)
                run.phases.append(v)
                for e in got:
                    e["read"] = _direction(v, "read", p)
                    e["ssdlab"]["verify"] = {"read_bytes": int(v.data["read"]["io_bytes"]), "checking_mode": bool(sim.check_mode),
                                             "errors": 0}
            entries.extend(got)
            run.logs.update(_logs(p, r))
            done += 1
    except KeyboardInterrupt as e:
        partial = getattr(e, "result", None)
        if isinstance(partial, PhaseResult) and partial.kind == "workload":
            if done < len(planned):
                cut = _job_entries(planned[done], partial, None, planned[done].startdelay_ns)
                for c in cut:
                    c["ssdlab"]["interrupted"] = True
                entries.extend(cut)
        run.interrupted = True
        run.document = _document(jobfile, entries, sim, notes, True)
        e.run = run  # type: ignore[attr-defined]
        raise
    run.document = _document(jobfile, entries, sim, notes, False)
    return run


#: fio's ``--output-format`` values ssdlab writes.
OUTPUT_FORMATS = ("normal", "json", "json+")


def output_format_for(given: Optional[str], output: Optional[Union[str, "os.PathLike[str]"]]) -> str:
    """fio's default is ``normal``; an ``--output`` named ``*.json`` without a
    format given gets JSON (what such a name promises)."""
    if given:
        return given
    return "json" if output is not None and os.fspath(output).endswith(".json") else "normal"


def write_outputs(run: SimulatedRun, output: Optional[Union[str, "os.PathLike[str]"]], log_dir: Union[str, "os.PathLike[str]"] = ".",
                  output_format: str = "json") -> List[Path]:
    """Write the report (``output_format``: normal, json, json+; to ``output``,
    stdout when None) and the logs (under ``log_dir``, names as fio makes
    them). Returns the files written."""
    written: List[Path] = []
    text = run.render(output_format)
    if output is None:
        sys.stdout.write(text)
    else:
        p = Path(output)
        write_text(p, text)
        written.append(p)
    base = Path(log_dir)
    for name, text in run.logs.items():
        lp = base / name
        write_text(lp, text)
        written.append(lp)
    return written


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``ssdlab fio JOBFILE --drive X``: 0 on success, 2 with one error line on
    bad input, 130 on Ctrl-C (the finished jobs are still written)."""
    ap = argparse.ArgumentParser(
        prog="ssdlab fio",
        description="Run an fio job file on a simulated drive; write fio's JSON (--output-format=json) and its logs.",
    )
    ap.add_argument("jobfile")
    ap.add_argument("--drive", default="generic-mlc-120", help="preset id or drive file (default generic-mlc-120)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--output-format", choices=OUTPUT_FORMATS, help="normal (fio's default; json for an --output named *.json), json, json+")
    ap.add_argument("--output", help="write the JSON here (default stdout)")
    ap.add_argument("--log-dir", default=".", help="where the logs go (fio writes them to the working directory)")
    ap.add_argument("--parse-only", action="store_true", help="check the job file against the drive without running it")
    args = ap.parse_args(argv)
    fmt = output_format_for(args.output_format, args.output)
    try:
        jf = parse_jobfile(args.jobfile)
        if args.parse_only:
            from ..drive import Drive

            d = Drive.load(args.drive)
            for p in plan(jf, int(d.capacity_bytes), queue_per_job=d.is_nvme):
                sys.stdout.write(f"{p.name}: group {p.groupid}, engine job {json.dumps(p.engine)}\n")
                for n in p.notes:
                    sys.stdout.write(f"  note: {n}\n")
            return 0
        run = simulate(jf, args.drive, seed=args.seed)
    except KeyboardInterrupt as e:
        partial = getattr(e, "run", None)
        if isinstance(partial, SimulatedRun):
            write_outputs(partial, args.output, args.log_dir, fmt)
        sys.stderr.write("ssdlab: interrupted: the finished jobs were written\n")
        return 130
    except SsdlabError as e:
        sys.stderr.write(f"ssdlab: error: {e}\n")
        return 2
    for n in run.document["ssdlab"]["notes"]:
        sys.stderr.write(f"ssdlab: note: {n}\n")
    try:
        write_outputs(run, args.output, args.log_dir, fmt)
    except (OSError, SsdlabError) as e:
        sys.stderr.write(f"ssdlab: error: cannot write the results: {e}\n")
        return 2
    return 0
