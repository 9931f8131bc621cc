"""The review suite on a real drive through fio (``ssdlab review --device``).

The same test descriptions the simulator runs (``definitions.TESTS``, their
states' phases, rendered by :mod:`ssdlab.suite.fio`) run with fio on a block
device or on a test file ssdlab creates, and their results are written in the
same schema (docs/results-schema.md) so that ``ssdlab report`` draws real and
simulated drives in the same charts. The drive of such results has
``"kind": "real"`` (the report marks it) and an id starting ``real-``.

How the pieces map onto fio:

- the target is checked first (:func:`ssdlab.fio.safety.check_target`: a
  mounted, busy or read-only device is refused, one holding data only with
  ``--destroy-data`` naming it); a file target is one file ssdlab creates at
  the start (``--size``, by default 1 GiB or half the free space when that is
  less) and removes at the end, whatever happens;
- each phase and step of a test (a section of :func:`ssdlab.suite.fio.fio_sections`)
  is one fio run, in order, so that a failing phase stops the test at once
  (``ioengine=libaio``, ``direct=1`` unless the file system refuses
  O_DIRECT, ``norandommap`` as the simulator draws offsets, ``randseed`` from
  ``--seed``); measured steps log IOPS and bandwidth per ``log_avg_msec``
  (1 s unless the step says), which become the per-interval series of the
  results at fio's own sample times (:func:`log_series`);
- the secure erase that starts every state is not something fio can do: on a
  block device that accepts discard it is replaced by a TRIM of the span
  (fio's trim workload), elsewhere left out (the fill that follows writes the
  whole span); tests that measure a secure-erased drive (runs from the
  ``clean`` state) are skipped with the reason unless ``--clean-by-trim``
  accepts the TRIM instead on a device that has it;
- tests that need TRIM (a TRIM step or the ``trimmed`` state) are skipped on a
  target without it (a file), the power test everywhere (fio measures no
  power); the reason is recorded in the results (``skipped``) and shown in the
  report;
- a Storage Bench step replays the generated trace as an fio iolog written
  for this target (:mod:`ssdlab.fio.iolog`: placed on its capacity, aligned,
  idle gaps cut to the playback's cap, TRIM records dropped on fio < 3.34 with
  a note), in its own fio run; the busy time comes from the kernel's disk
  statistics fio reports (``disk_util``), which count all I/O to that disk.

A test fio fails in (an error of a job, e.g. a TRIM the device refuses) is
recorded as not run, with fio's error, and the review goes on.

Ctrl-C and SIGTERM stop fio (it writes what ran) and end the review: tests
that finished are saved (each as soon as it finishes), the one running is
not. fio's job files, JSON and logs of every phase are kept in
``OUT/fio/<drive>/<test>/NN-<section>/``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, TextIO, Tuple

import numpy as np

from ..errors import SsdlabError
from ..fio.guard import filename_value
from ..fio.parse import FioResult, JobResult, Latency
from ..fio.run import FileTarget, FioRun, FioVersion, find_fio, fio_version, iolog_trim_problem, iolog_v3_problem, run_fio
from ..fio.safety import Capabilities, SystemView, TargetCheck, capabilities, check_target
from ..interrupt import sigterm_interrupts
from ..results import PhaseResult, save_document, write_figures_csv
from ..results import manifest as _manifest
from ..results.documents import SCHEMA_VERSION, TEST_RESULT_SCHEMA
from . import summary as _summary
from .definitions import get_test
from .fio import FioSection, ProfileSizes, fio_sections, trim_options
from .profile import FULL, Profile
from .runner import KEPT_SERIES
from .vocabulary import Measured, SuiteTest

__all__ = [
    "DeviceReview", "DeviceReviewInterrupted", "DeviceTarget", "needs_of", "skip_reason", "default_file_size",
    "target_drive_info", "phase_from_fio", "log_series", "disk_stat",
    "results_from_fio", "run_device_test", "review_device", "DEFAULT_FILE_BYTES", "MIN_FILE_BYTES", "OpenedTarget",
    "open_target",
]

#: The test file's size when ``--size`` is not given (less when free space is short).
DEFAULT_FILE_BYTES = 1 << 30
#: The smallest test file a review runs on.
MIN_FILE_BYTES = 8 << 20
#: Free space left beside a test file.
_FREE_MARGIN_BYTES = 64 << 20

_MiB = 1 << 20


class DeviceReviewInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM stopped the review: ``saved`` are the results files of
    the tests that finished (or were skipped) before."""

    def __init__(self, saved: Sequence[str]) -> None:
        super().__init__("interrupted")
        self.saved = list(saved)


class _TestFailed(Exception):
    """fio failed in a test: the test is recorded as not run, with why."""


@dataclass
class DeviceReview:
    """A finished device review: the results files, how many tests ran and
    were skipped, the target as given, the wall time."""

    target: str
    saved: List[str]
    ran: int
    skipped: int
    wall_time_s: float


@dataclass
class DeviceTarget:
    """Where the tests run: the checked target, the path fio writes
    (``filename``), its usable ``capacity_bytes``, what it can do, the fio to
    use, and what the review notes about it (``notes``)."""

    check: TargetCheck
    filename: str
    capacity_bytes: int
    caps: Capabilities
    fio: str
    version: FioVersion
    direct: bool = True
    seed: int = 1
    clean_by_trim: bool = False
    notes: List[str] = field(default_factory=list)

    @property
    def is_block(self) -> bool:
        return self.check.kind == "block"

    @property
    def disk(self) -> Optional[str]:
        """The kernel name of the disk the I/O reaches (the device, or the one
        holding the test file's file system)."""
        if self.is_block:
            return self.check.name
        fs = _fs_device(os.path.dirname(self.filename))
        return None if fs == "fs" else fs

    @property
    def align_bytes(self) -> int:
        return max(4096, self.check.logical_block_bytes) if self.is_block else 4096


# ---------------------------------------------------------------------------
# what a test needs
# ---------------------------------------------------------------------------


def needs_of(test: SuiteTest) -> Tuple[str, ...]:
    """What a test needs beyond reads and writes: ``secure_erase`` (a run
    measures a drive from the ``clean`` state), ``trim`` (a TRIM step or the
    ``trimmed`` state), ``power`` (the power test), ``iolog`` (a replay),
    ``drive_changes`` (a run on a changed drive, e.g. a SATA 3Gbps link)."""
    out: List[str] = []
    states = [r["state"]["state"] for r in test["runs"]]
    states += [s["state"] for r in test["runs"] for s in r["steps"] if s.get("action") == "precondition"]
    if "clean" in [r["state"]["state"] for r in test["runs"]]:
        out.append("secure_erase")
    if "trimmed" in states or any(s.get("action") == "trim" for r in test["runs"] for s in r["steps"]):
        out.append("trim")
    if test.get("summary") == "power":
        out.append("power")
    if any(s.get("action") == "replay" for r in test["runs"] for s in r["steps"]):
        out.append("iolog")
    if any(r.get("drive") for r in test["runs"]):
        out.append("drive_changes")
    return tuple(out)


def skip_reason(test: SuiteTest, *, profile: Profile, capacity_bytes: int, caps: Capabilities, clean_by_trim: bool = False,
                version: Optional[FioVersion] = None) -> Optional[str]:
    """Why ``test`` cannot run on this target (None when it can)."""
    if test["id"] in profile.skip:
        return f"left out of the {profile.name} profile"
    need_cap = int(test.get("min_capacity_bytes", 0))
    if capacity_bytes < need_cap:
        return f"needs a drive of at least {need_cap:,} B and the target has {capacity_bytes:,} B"
    needs = needs_of(test)
    reasons: List[str] = []
    if "power" in needs:
        reasons.append("fio measures no power (a power meter on the drive's supply would)")
    if "drive_changes" in needs:
        changes = sorted({f"{k}={v}" for r in test["runs"] for k, v in (r.get("drive") or {}).items()})
        reasons.append(f"it changes the drive ({', '.join(changes)}), which fio cannot do to a real one (connect the drive "
                       "that way and run the tests it repeats)")
    if "secure_erase" in needs and caps.secure_erase is not None and not (clean_by_trim and caps.trim is None):
        erase = f"it starts from a secure-erased drive: {caps.secure_erase}"
        if caps.trim is None:
            erase += "; --clean-by-trim accepts a TRIM of the span instead"
        elif "trim" not in needs:
            erase += f"; nor a TRIM instead: {caps.trim}"
        reasons.append(erase)
    if "trim" in needs and caps.trim is not None:
        reasons.append(f"it needs TRIM: {caps.trim}")
    if "iolog" in needs and version is not None:
        problem = iolog_v3_problem(version)
        if problem:
            reasons.append(problem)
    return "; ".join(reasons) or None


# ---------------------------------------------------------------------------
# the target
# ---------------------------------------------------------------------------


def default_file_size(directory: str) -> int:
    """1 GiB, or half the free space of ``directory`` when that is less
    (whole MiB); SsdlabError when not even :data:`MIN_FILE_BYTES` fit."""
    st = os.statvfs(directory)
    free = st.f_bavail * st.f_frsize
    size = min(DEFAULT_FILE_BYTES, free // 2)
    size -= size % _MiB
    if size < MIN_FILE_BYTES:
        raise SsdlabError(f"only {free:,} B free in {directory}: a test file needs at least {MIN_FILE_BYTES:,} B; free some space")
    return size


def _check_file_size(directory: str, size: int) -> None:
    if size < MIN_FILE_BYTES:
        raise SsdlabError(f"argument --size: {size:,} B is less than the smallest test file, {MIN_FILE_BYTES:,} B (8m)")
    st = os.statvfs(directory)
    free = st.f_bavail * st.f_frsize
    if size + _FREE_MARGIN_BYTES > free:
        raise SsdlabError(f"argument --size: a {size:,} B test file does not fit in {directory} ({free:,} B free, "
                          f"{_FREE_MARGIN_BYTES // _MiB} MiB kept free); give a smaller --size")


def _fs_device(path: str) -> str:
    """The kernel name of the block device holding ``path``'s file system
    (``vda1``, ``dm-0``), or "fs" when there is none (tmpfs, overlay)."""
    try:
        st = os.stat(path)
        link = f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
        if os.path.exists(link):
            return os.path.basename(os.path.realpath(link))
    except OSError:
        pass
    return "fs"


def _sys(view: SystemView, name: str, *parts: str) -> str:
    try:
        with open(os.path.join(view.sys_block(name), *parts)) as f:
            return f.read().strip()
    except OSError:
        return ""


def target_drive_info(check: TargetCheck, capacity_bytes: int, version: FioVersion, view: Optional[SystemView] = None,
                      directory: Optional[str] = None) -> Dict[str, Any]:
    """The ``drive`` object of a real target's results: ``id`` ``real-NAME``,
    a ``name`` marked "(real, fio)" (the report labels drives by name), a
    ``hash`` of what identifies it (same device or directory and size: the
    same hash, so a later review replaces an earlier one's results), and
    ``kind`` "real" with the ``target`` and ``fio_version``."""
    sv = view or SystemView()
    if check.kind == "block":
        name = check.name or os.path.basename(check.resolved)
        model = " ".join(_sys(sv, name, "device", "model").split())
        vendor = " ".join(_sys(sv, name, "device", "vendor").split())
        serial = _sys(sv, name, "device", "serial") or _sys(sv, name, "wwid")
        label = " ".join(x for x in (vendor, model) if x) or name
        short = label if label == name else f"{label} ({name})"
        ident: Dict[str, Any] = {"kind": "block", "name": name, "model": label, "serial": serial, "size": capacity_bytes}
        drive_id = f"real-{name}"
        desc = f"{label}, block device {check.resolved}"
        target = {"kind": "block", "path": check.path, "device": check.resolved, "name": name, "model": label,
                  "logical_block_bytes": check.logical_block_bytes}
    else:
        d = directory or (check.resolved if check.kind == "directory" else os.path.dirname(os.path.abspath(check.path)))
        fs = _fs_device(d)
        ident = {"kind": "file", "directory": os.path.realpath(d), "fs_device": fs, "size": capacity_bytes}
        drive_id = f"real-file-{fs}"
        size = f"{capacity_bytes / 2**30:.3g} GiB" if capacity_bytes >= 2**30 else f"{capacity_bytes / 2**20:.3g} MiB"
        short = f"{size} file on {fs}"
        desc = f"a {capacity_bytes:,} B test file ssdlab created in {os.path.realpath(d)} (file system on {fs}) and removed afterwards"
        target = {"kind": "file", "path": check.path, "directory": os.path.realpath(d), "fs_device": fs}
    digest = hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:16]
    return {
        "id": drive_id,
        "name": f"{short} (real, fio)",
        "description": f"A real drive measured with {version}: {desc}.",
        "hash": digest,
        "capacity_bytes": int(capacity_bytes),
        "config": {},
        "geometry": {},
        "changes": {},
        "kind": "real",
        "target": target,
        "fio_version": str(version),
    }


def _direct_io_works(path: str) -> bool:
    flag = getattr(os, "O_DIRECT", 0)
    if not flag:
        return False
    try:
        fd = os.open(path, os.O_RDWR | flag)
    except OSError:
        return False
    os.close(fd)
    return True


# ---------------------------------------------------------------------------
# fio results as phases
# ---------------------------------------------------------------------------


def _latency(x: Latency) -> Dict[str, Any]:
    return {"min": x.min_ns, "max": x.max_ns, "mean": x.mean_ns, "N": x.count,
            "percentile": {f"{k:.6f}": v for k, v in sorted(x.percentiles.items())}}


def _cumulative(entries: Sequence[Tuple[int, int, int, int, int]], scale: float) -> Tuple[Any, Any]:
    """A log's sample times (ms, unique, ascending) and, per direction, the
    cumulative amount up to each: fio's value is an average over the time
    since its previous sample (``value * spent``), a late or missed sample
    covering a longer span."""
    times = np.unique(np.asarray([e[0] for e in entries], dtype=np.int64))
    amounts = np.zeros((3, len(times)), dtype=np.float64)
    starts = np.concatenate(([0], times[:-1]))
    spent = (times - starts) / 1000.0
    index = {int(t): i for i, t in enumerate(times)}
    for ms, value, ddir, _bs, _off in entries:
        i = index[int(ms)]
        amounts[ddir, i] += value * scale * spent[i]
    return times, np.cumsum(amounts, axis=1)


def log_series(log_dir: Path, prefix: str) -> Optional[Dict[str, Any]]:
    """Per-sample series of a job from its fio logs ``PREFIX_iops[.N].log``
    and ``PREFIX_bw[.N].log`` at fio's own sample times (a late sample is a
    longer interval, not a gap): ``time_ns`` and per direction I/Os and bytes.
    None when there is no IOPS log."""
    from ..fio.parse import read_log

    def entries(kind: str) -> List[Tuple[int, int, int, int, int]]:
        files = sorted(log_dir.glob(f"{prefix}_{kind}.*.log")) or sorted(log_dir.glob(f"{prefix}_{kind}.log"))
        return [e for f in files for e in read_log(f).entries]

    io = entries("iops")
    if not io:
        return None
    t, cum_io = _cumulative(io, 1.0)
    out: Dict[str, Any] = {"time_ns": t.astype(np.uint64) * np.uint64(1_000_000)}
    for d, name in enumerate(("read", "write", "trim")):
        out[f"{name}_ios"] = np.diff(np.concatenate(([0.0], cum_io[d])))
    bw = entries("bw")
    if bw:
        tb, cum_b = _cumulative(bw, 1024.0)  # KiB/s
        for d, name in ((0, "read"), (1, "write")):
            at = np.interp(t, np.concatenate(([0], tb)), np.concatenate(([0.0], cum_b[d])))
            out[f"{name}_bytes"] = np.diff(np.concatenate(([0.0], at)))
    else:
        out["read_bytes"] = np.zeros(len(t))
        out["write_bytes"] = np.zeros(len(t))
    return out


def phase_from_fio(job: JobResult, label: str, kind: str = "workload", series: Optional[Dict[str, Any]] = None) -> PhaseResult:
    """A phase of the results from one fio job: fio's figures per direction
    (``iops``, ``bw_bytes``, ``io_bytes``, ``total_ios``, ``clat_ns``) and
    per-interval series: ``series`` as :func:`log_series` makes it, else from
    the job's attached logs (fixed intervals, :mod:`ssdlab.fio.parse`)."""
    data: Dict[str, Any] = {"jobname": label, "kind": kind, "duration_ns": int(job.runtime_ms) * 1_000_000, "interrupted": False}
    for d, x in (("read", job.read), ("write", job.write), ("trim", job.trim)):
        data[d] = {"iops": x.iops, "bw_bytes": x.mbps * 1e6, "io_bytes": x.io_bytes, "total_ios": x.total_ios,
                   "runtime": x.runtime_ms, "clat_ns": _latency(x.clat)}
    data["fio"] = {"jobname": job.name, "error": job.error, "ioengine": job.ioengine, "iodepth": job.iodepth,
                   "options": dict(job.options)}
    if series is not None:
        return PhaseResult(data, series)
    series = {}
    io, bw = job.iops_series, job.bw_series
    if io is not None:
        n = len(io.time_ms)
        iv = io.interval_ms / 1000.0

        def col(vals: Sequence[float], scale: float) -> Any:
            a = np.zeros(n, dtype=np.float64)
            m = min(n, len(vals))
            a[:m] = np.asarray(vals[:m], dtype=np.float64) * scale
            return a

        series["time_ns"] = np.asarray(io.time_ms, dtype=np.uint64) * np.uint64(1_000_000)
        series["read_ios"] = col(io.read, iv)
        series["write_ios"] = col(io.write, iv)
        series["trim_ios"] = col(io.trim, iv)
        series["read_bytes"] = col(bw.read, 1e6 * iv) if bw is not None else np.zeros(n)
        series["write_bytes"] = col(bw.write, 1e6 * iv) if bw is not None else np.zeros(n)
    return PhaseResult(data, series)


def _disk_util(json_path: Path, device: Optional[str]) -> Optional[Dict[str, Any]]:
    try:
        text = json_path.read_text(errors="replace")
        doc, _ = json.JSONDecoder().raw_decode(text[text.index("{"):])
    except (OSError, ValueError):
        return None
    utils = [u for u in doc.get("disk_util", []) if isinstance(u, dict)]
    if not utils:
        return None
    return next((u for u in utils if u.get("name") == device), utils[0])


def disk_stat(name: Optional[str], view: Optional[SystemView] = None) -> Optional[Tuple[int, int, int]]:
    """(read ticks, write ticks, io ticks) in ms from ``/sys/class/block/NAME/stat``
    (io ticks: the time the disk had at least one I/O in flight), or None."""
    if not name:
        return None
    fields = _sys(view or SystemView(), name, "stat").split()
    if len(fields) < 10 or not all(f.isdigit() for f in fields[:10]):
        return None
    return int(fields[3]), int(fields[7]), int(fields[9])


def _storage_bench(job: JobResult, util: Optional[Dict[str, Any]], ticks: Optional[Tuple[int, int, int]] = None,
                   disk: Optional[str] = None) -> Tuple[Dict[str, Any], Optional[str]]:
    """The Storage Bench figures of a replay: bytes over the time the disk was
    busy: the kernel's io_ticks over the replay (``ticks``: read, write and io
    ticks in ms), else fio's ``disk_util``; without either, over the replay's
    run time (a note says so)."""
    run_ns = int(job.runtime_ms) * 1_000_000
    note = None
    source = "run time"
    if ticks is not None and ticks[2] > 0:
        source = "io_ticks"
        busy = min(ticks[2] * 1_000_000, run_ns) if run_ns else ticks[2] * 1_000_000
        rt, wt = float(ticks[0]), float(ticks[1])
        rshare = rt / (rt + wt) if rt + wt > 0 else (1.0 if job.read.total_ios else 0.0)
        rbusy, wbusy = int(busy * rshare), int(busy * (1 - rshare))
        util = {"name": disk}
    elif util is not None and isinstance(util.get("util"), (int, float)):
        source = "disk_util"
        busy = int(run_ns * float(util["util"]) / 100.0)
        rt, wt = float(util.get("read_ticks", 0)), float(util.get("write_ticks", 0))
        rshare = rt / (rt + wt) if rt + wt > 0 else (1.0 if job.read.total_ios else 0.0)
        rbusy, wbusy = int(busy * rshare), int(busy * (1 - rshare))
    else:
        busy = rbusy = wbusy = run_ns
        note = "fio reported no disk statistics: busy time is the replay's run time"

    def rate(b: int, ns: int) -> float:
        return b / (ns / 1e9) / 1e6 if ns > 0 else 0.0

    ios = job.read.total_ios + job.write.total_ios + job.trim.total_ios
    return {
        "data_rate_mb_per_s": rate(job.read.io_bytes + job.write.io_bytes, busy),
        "read_data_rate_mb_per_s": rate(job.read.io_bytes, rbusy),
        "write_data_rate_mb_per_s": rate(job.write.io_bytes, wbusy),
        "busy_time_ns": busy,
        "read_busy_time_ns": rbusy,
        "write_busy_time_ns": wbusy,
        "iops": ios / (busy / 1e9) if busy > 0 else 0.0,
        "busy_time_from": source,
        "disk": util.get("name") if util else None,
    }, note


# ---------------------------------------------------------------------------
# running a test
# ---------------------------------------------------------------------------


def _header(t: DeviceTarget, with_file: bool) -> List[str]:
    lines = ["[global]"]
    if with_file:
        lines.append(f"filename={filename_value(t.filename, 'device target')}")
        if not t.is_block:
            lines.append(f"size={t.capacity_bytes}")
    lines += ["ioengine=libaio", f"direct={int(t.direct)}", "group_reporting=1", "norandommap=1", "randrepeat=0",
              f"randseed={t.seed}", ""]
    return lines


def _section_text(sec: FioSection, logs: Optional[str]) -> List[str]:
    lines = [f"[{sec.name}]", "stonewall"]
    opts = dict(sec.options)
    if logs:
        opts.setdefault("log_avg_msec", 1000)
        opts["write_iops_log"] = logs
        if opts.get("rw") not in ("trim", "randtrim"):
            opts["write_bw_log"] = logs
    lines += [f"{k}={v}" for k, v in opts.items()]
    lines.append("")
    return lines


def _failure(run: FioRun, what: str) -> str:
    bad = [j for j in run.result.jobs if j.error] if run.result is not None else []
    if bad:
        return "fio failed in " + ", ".join(f"{j.name}: error {j.error} ({os.strerror(j.error)})" for j in bad)
    tail = " | ".join(ln.strip() for ln in run.stderr.strip().splitlines()[-2:]) or f"exit status {run.returncode}"
    return f"fio failed running {what}: {tail}"


def _check_run(run: FioRun, what: str) -> FioResult:
    """The run's result, or _TestFailed saying what failed (KeyboardInterrupt
    when it was stopped by a signal)."""
    if run.interrupted:
        raise KeyboardInterrupt()
    if run.result is None:
        raise _TestFailed(f"fio wrote no results for {what}")
    if any(j.error for j in run.result.jobs) or run.returncode not in (0, None):
        raise _TestFailed(_failure(run, what))
    return run.result


def _run_jobs(t: DeviceTarget, sections: List[FioSection], workdir: Path, measured_logs: Dict[str, str]) -> FioResult:
    text = _header(t, True)
    for sec in sections:
        text += _section_text(sec, measured_logs.get(sec.name))
    run = run_fio("\n".join(text), workdir, fio=t.fio)
    return _check_run(run, f"{workdir / 'ssdlab.fio'}")


def _run_replay(t: DeviceTarget, sec: FioSection, workdir: Path, notes: List[str]) -> Tuple[JobResult, Dict[str, Any]]:
    from ..fio.iolog import write_storage_bench_iolog
    from ..fio.jobfile import parse_time_ns

    workdir.mkdir(parents=True, exist_ok=True)
    workload = str(sec.options["generated"])
    log = workdir / f"{workload}.iolog"
    trim_problem = iolog_trim_problem(t.version)
    cap = sec.options.get("idle_cap")
    cap_us = parse_time_ns(str(cap)) // 1000 if cap not in (None, "none") else None
    st = write_storage_bench_iolog(workload, log, target_bytes=t.capacity_bytes, seed=t.seed, filename=t.filename,
                                   align_bytes=t.align_bytes, trims="drop" if trim_problem else "keep", idle_cap_us=cap_us)
    if st.dropped_trims:
        notes.append(f"{workload}: {st.dropped_trims:,} TRIM records dropped: {trim_problem}")
    if st.adjusted:
        notes.append(f"{workload}: {st.adjusted:,} I/Os moved or aligned to fit the {t.capacity_bytes:,} B target")
    opts: Dict[str, Any] = {"read_iolog": str(log), "iodepth": int(sec.options.get("iodepth", 32))}
    if sec.options.get("mode") == "as-fast-as-possible":
        opts["replay_no_stall"] = 1
    replay = FioSection(sec.name, opts, sec.run, sec.step, "replay", sec.measure, sec.about)
    text = _header(t, False) + _section_text(replay, "m")
    before = disk_stat(t.disk)
    try:
        run = run_fio("\n".join(text), workdir, fio=t.fio)
    finally:
        log.unlink(missing_ok=True)  # big, and rewritten from the seed when needed
    after = disk_stat(t.disk)
    result = _check_run(run, sec.name)
    job = result.job(sec.name)
    ticks = tuple(a - b for a, b in zip(after, before)) if before is not None and after is not None else None
    sb, note = _storage_bench(job, _disk_util(run.json_path, t.disk), ticks, t.disk)  # type: ignore[arg-type]
    if note:
        notes.append(f"{workload}: {note}")
    else:
        notes.append(f"{workload}: busy time from the kernel's statistics of {sb['disk']} ({sb['busy_time_from']}), "
                     "which count all I/O to that disk")
    info = {"records": st.records, "reads": st.reads, "writes": st.writes, "trims": st.trims, "dropped_trims": st.dropped_trims,
            "duration_us": st.duration_us, "idle_cap_us": cap_us}
    return job, {"storage_bench": sb, "iolog": info}


def _job_doc(m: Measured, wall_s: float) -> Dict[str, Any]:
    r = m["result"]
    d = r.to_dict(series=False)
    d["jobname"] = m["label"]
    d["run"] = m["run"]
    d["step"] = m["step"]
    d["job"] = m["job"]
    d["wall_time_s"] = round(wall_s, 3)
    d["series"] = {k: r.series[k].tolist() for k in KEPT_SERIES if k in r.series}
    return d


def _prepare(t: DeviceTarget, sections: List[FioSection], notes: List[str], sizes: ProfileSizes) -> List[FioSection]:
    """The secure erase phases as this target can do them: a TRIM of the span
    where it accepts discard, else left out (with a note)."""
    out: List[FioSection] = []
    for sec in sections:
        if sec.kind == "secure_erase":
            if t.caps.trim is None:
                out.append(FioSection(sec.name, trim_options(sec.options.get("size"), sizes), sec.run, sec.step, "trim", None, sec.about))
                msg = "secure erase replaced by a TRIM of the span (ssdlab issues no ATA SECURITY ERASE)"
            else:
                msg = "secure erase left out (this target can neither be erased nor trimmed); the fill writes the whole span"
            if msg not in notes:
                notes.append(msg)
            continue
        out.append(sec)
    return out


def run_device_test(test: SuiteTest, t: DeviceTarget, profile: Profile, workdir: Path) -> Dict[str, Any]:
    """Run one test on the target; the runner's output shape (``test``,
    ``skipped``, ``figures``, ``charts``, ``jobs``, ...) plus ``notes`` and
    ``target``. Raises KeyboardInterrupt when stopped, _TestFailed when fio fails."""
    t0 = time.perf_counter()
    sizes = ProfileSizes(t.capacity_bytes, profile)
    notes: List[str] = list(t.notes)
    sections = _prepare(t, fio_sections(test, sizes), notes, sizes)
    measured: List[Measured] = []
    job_docs: List[Dict[str, Any]] = []
    # One fio run per section: a failure stops the test at once (fio 3.33
    # would run the jobs behind later stonewalls, exitall_on_error or not),
    # and each part keeps its job file, JSON and logs.
    for i, sec in enumerate(sections):
        part = workdir / f"{i:02d}-{sec.name}"
        w0 = time.perf_counter()
        if sec.kind == "replay":
            job, extra = _run_replay(t, sec, part, notes)
            r = phase_from_fio(job, str(sec.measure or sec.name), "replay", log_series(part, "m"))
            r.data.update(extra)
            jd: Dict[str, Any] = {"action": "replay", **sec.options}
        else:
            result = _run_jobs(t, [sec], part, {sec.name: "m"} if sec.measure is not None else {})
            if sec.measure is None:
                continue
            kind = {"trim": "trim", "idle": "idle"}.get(sec.kind, "workload")
            r = phase_from_fio(result.job(sec.name), sec.measure, kind, log_series(part, "m"))
            jd = dict(sec.options)
        if sec.measure is None:
            continue
        m: Measured = {"run": sec.run, "step": sec.step if sec.step is not None else -1, "label": sec.measure,
                       "x": sec.x, "line": sec.line, "job": jd, "result": r}
        measured.append(m)
        job_docs.append(_job_doc(m, time.perf_counter() - w0))
    figures, charts = _summary.summarise(test, measured, profile)
    return {
        "test": test,
        "skipped": None,
        "profile": profile.name,
        "only_measures": None,
        "figures": figures,
        "charts": charts,
        "jobs": job_docs,
        "wall_time_s": round(time.perf_counter() - t0, 3),
        "notes": notes,
    }


# ---------------------------------------------------------------------------
# fio runs made by hand
# ---------------------------------------------------------------------------


def results_from_fio(result: FioResult, name: str, command: str = "") -> List[Dict[str, Any]]:
    """Results documents (one per test) from fio's JSON of a job file that
    ``ssdlab test ID --fio`` printed and someone ran by hand: its measured
    sections carry ``description=ssdlab:TEST:RUN:STEP``; with the logs attached
    (:func:`ssdlab.fio.parse.read_fio_output` with the log directory) they
    have their per-second series. ``name`` names the drive (``real-NAME``).
    Raises SsdlabError when no job of the JSON is one of ssdlab's."""
    from .fio import parse_measured_description

    found: Dict[str, List[Tuple[int, int, JobResult]]] = {}
    for j in result.jobs:
        key = parse_measured_description(j.description)
        if key is not None:
            found.setdefault(key[0], []).append((key[1], key[2], j))
    if not found:
        raise SsdlabError(f"{result.path}: no measured step of an ssdlab test (the job files 'ssdlab test ID --fio' prints "
                          "name them: description=ssdlab:TEST:RUN:STEP)")
    slug = "".join(c if c.isalnum() or c in "-_." else "-" for c in name).strip("-") or "drive"
    digest = hashlib.sha256(json.dumps({"kind": "fio-import", "name": name}).encode()).hexdigest()[:16]
    drive_id = f"real-{slug}"
    drive: Dict[str, Any] = {"id": drive_id, "name": f"{name} (real, fio)",
             "description": f"A real drive measured by hand with {result.version}; imported from {result.path}.",
             "hash": digest, "capacity_bytes": None, "config": {}, "geometry": {}, "changes": {}, "kind": "real",
             "target": {"kind": "imported", "fio_json": result.path, "filename": result.global_options.get("filename")},
             "fio_version": result.version}
    docs: List[Dict[str, Any]] = []
    for tid, jobs in found.items():
        try:
            test = get_test(tid)
        except KeyError:
            raise SsdlabError(f"{result.path}: '{tid}' is not a test of this ssdlab ('ssdlab tests' lists them)") from None
        measured: List[Measured] = []
        job_docs: List[Dict[str, Any]] = []
        for run, si, j in sorted(jobs, key=lambda x: (x[0], x[1])):
            try:
                step = test["runs"][run]["steps"][si]
            except IndexError:
                raise SsdlabError(f"{result.path}: job '{j.name}' names run {run}, step {si} of {tid}, which has no such step") from None
            label = str(step.get("measure", j.name))
            m: Measured = {"run": run, "step": si, "label": label, "x": step.get("x"), "line": step.get("line"),
                           "job": dict(j.options), "result": phase_from_fio(j, label)}
            measured.append(m)
            job_docs.append(_job_doc(m, 0.0))
        wanted = [s["measure"] for r in test["runs"] for s in r["steps"] if "measure" in s]
        missing = [w for w in wanted if w not in {m["label"] for m in measured}]
        figures, charts = _summary.summarise(test, measured, FULL)
        notes = [f"imported from {result.path} (fio run by hand from 'ssdlab test {tid} --fio')"]
        if missing:
            notes.append(f"not in the fio output: {', '.join(missing)}")
        rs = result.global_options.get("randseed", "0")
        seed = int(rs) if rs.isdigit() else 0
        man = _manifest(seed=seed, drive_id=drive_id, drive_hash=digest, command=command,
                        extra={"profile": FULL.name, "test_id": tid, "fio_version": result.version,
                               "reproduce": f"fio job file from 'ssdlab test {tid} --fio', run by hand; 'ssdlab fio-import' read it"})
        docs.append({"schema": TEST_RESULT_SCHEMA, "schema_version": SCHEMA_VERSION, "manifest": man, "drive": drive,
                     "test": test, "skipped": None, "profile": FULL.name, "only_measures": None, "figures": figures,
                     "charts": charts, "jobs": job_docs, "wall_time_s": 0.0, "notes": notes})
    return docs


# ---------------------------------------------------------------------------
# the review
# ---------------------------------------------------------------------------


def _reproduce(target: str, test_id: str, profile: Profile, size: Optional[int], clean_by_trim: bool, seed: int) -> str:
    out = f"ssdlab review --device {target} --tests {test_id} --seed {seed} --out DIR"
    if size is not None:
        out += f" --size {size}"
    if clean_by_trim:
        out += " --clean-by-trim"
    return out + (" --quick" if profile.name == "quick" else "")


@dataclass
class OpenedTarget:
    """A real target checked and sized: the safety check, the fio to run and
    its version, what the target can do (TRIM), the directory of a test file
    (None for a block device) and the capacity to use (a block device whole,
    a test file of the size asked for, 4 KiB-aligned)."""

    check: TargetCheck
    fio: str
    version: FioVersion
    caps: Capabilities
    directory: Optional[str]
    capacity_bytes: int
    view: SystemView


def open_target(target: str, *, size_bytes: Optional[int] = None, destroy_data: Optional[str] = None,
                fio: Optional[str] = None, view: Optional[SystemView] = None) -> OpenedTarget:
    """Check ``target`` (UnsafeTargetError with the flag that would allow it),
    find fio (FioNotFoundError) and size the target (SsdlabError for a bad
    ``size_bytes``): what ``review --device`` and ``probe`` share."""
    view = view or SystemView()
    check = check_target(target, destroy_data=destroy_data, view=view)
    exe = find_fio(fio)
    version = fio_version(exe)
    caps = capabilities(check, view)
    directory: Optional[str] = None
    if check.kind == "block":
        if size_bytes is not None:
            raise SsdlabError("argument --size: applies to a file target; a block device is used whole")
        if not check.size_bytes:
            raise SsdlabError(f"cannot read the size of {check.path}")
        capacity = int(check.size_bytes)
    else:
        directory = check.resolved if check.kind == "directory" else os.path.dirname(os.path.abspath(check.path))
        if size_bytes is None:
            capacity = default_file_size(directory)
        else:
            _check_file_size(directory, int(size_bytes))
            capacity = int(size_bytes) - int(size_bytes) % 4096
    return OpenedTarget(check, exe, version, caps, directory, capacity, view)


def review_device(
    target: str,
    out_dir: str,
    test_ids: Sequence[str],
    *,
    profile: Profile = FULL,
    size_bytes: Optional[int] = None,
    destroy_data: Optional[str] = None,
    clean_by_trim: bool = False,
    fio: Optional[str] = None,
    seed: int = 1,
    command: str = "",
    stream: TextIO = sys.stderr,
    view: Optional[SystemView] = None,
) -> DeviceReview:
    """Run ``test_ids`` on ``target`` with fio, saving each test's results
    document (``OUT/results/<drive>/<test>.json``, figures.csv) as it
    finishes or is skipped. Raises UnsafeTargetError (with the flag that would
    allow the target), FioNotFoundError, SsdlabError for a bad size, and
    DeviceReviewInterrupted (with what was saved) on Ctrl-C or SIGTERM."""
    t_start = time.perf_counter()
    opened = open_target(target, size_bytes=size_bytes, destroy_data=destroy_data, fio=fio, view=view)
    check, exe, version, caps, directory, capacity = (opened.check, opened.fio, opened.version, opened.caps,
                                                      opened.directory, opened.capacity_bytes)
    view = opened.view
    drive = target_drive_info(check, capacity, version, view, directory)
    key = drive["id"]
    base = Path(out_dir) / "results" / key
    fio_dir = Path(out_dir) / "fio" / key
    tests = [get_test(tid) for tid in test_ids]
    saved: List[str] = []
    docs: List[Dict[str, Any]] = []
    ran = skipped = 0
    where = check.resolved if check.kind == "block" else f"a {capacity:,} B test file in {directory}"
    stream.write(f"ssdlab review: {len(tests)} tests on {where} with {version} as {key}\n")
    stream.flush()

    def save(test: SuiteTest, out: Dict[str, Any]) -> None:
        man = _manifest(seed=seed, drive_id=key, drive_hash=drive["hash"], command=command,
                        extra={"profile": profile.name, "test_id": test["id"], "fio_version": str(version),
                               "reproduce": _reproduce(target, test["id"], profile, size_bytes, clean_by_trim, seed)})
        doc = {"schema": TEST_RESULT_SCHEMA, "schema_version": SCHEMA_VERSION, "manifest": man, "drive": drive, **out}
        path = base / f"{test['id']}.json"
        save_document(doc, path)
        docs.append(doc)
        write_figures_csv(docs, base / "figures.csv")
        saved.append(str(path))

    def skip_doc(test: SuiteTest, why: str) -> Dict[str, Any]:
        return {"test": test, "skipped": why, "profile": profile.name, "only_measures": None, "figures": [], "charts": {},
                "jobs": [], "wall_time_s": 0.0}

    try:
        with sigterm_interrupts(), (FileTarget(check.path, capacity) if check.kind != "block" else _nullpath(check.resolved)) as path:
            t = DeviceTarget(check, path, capacity, caps, exe, version, seed=seed, clean_by_trim=clean_by_trim)
            if check.kind != "block" and not _direct_io_works(path):
                t.direct = False
                t.notes.append(f"the file system of {directory} refuses O_DIRECT: buffered I/O (direct=0), so the page "
                               "cache takes part in every figure")
            for i, test in enumerate(tests):
                why = skip_reason(test, profile=profile, capacity_bytes=capacity, caps=caps, clean_by_trim=clean_by_trim,
                                  version=version)
                if why is not None:
                    save(test, skip_doc(test, why))
                    skipped += 1
                    stream.write(f"ssdlab review: [{key}] {i + 1}/{len(tests)} {test['id']} skipped: {why}\n")
                    stream.flush()
                    continue
                stream.write(f"ssdlab review: [{key}] {i + 1}/{len(tests)} {test['id']} ...\n")
                stream.flush()
                t0 = time.perf_counter()
                wd = fio_dir / test["id"]
                if wd.exists():
                    shutil.rmtree(wd)
                try:
                    out = run_device_test(test, t, profile, wd)
                except _TestFailed as e:
                    save(test, skip_doc(test, str(e)))
                    skipped += 1
                    stream.write(f"ssdlab review: [{key}] {i + 1}/{len(tests)} {test['id']} not run: {e}\n")
                    stream.flush()
                    continue
                out["target"] = {"capacity_bytes": capacity, "direct": t.direct, "fio_dir": str(wd)}
                save(test, out)
                ran += 1
                stream.write(f"ssdlab review: [{key}] {i + 1}/{len(tests)} {test['id']} done in {time.perf_counter() - t0:.1f} s; "
                             f"{time.perf_counter() - t_start:.1f} s wall\n")
                stream.flush()
    except KeyboardInterrupt:
        raise DeviceReviewInterrupted(saved) from None
    return DeviceReview(target, saved, ran, skipped, time.perf_counter() - t_start)


@contextmanager
def _nullpath(path: str) -> Iterator[str]:
    yield path
