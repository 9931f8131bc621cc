"""A job file planned for the simulator, checked before anything runs: each
job's region, its engine job (fio's options into the engine's vocabulary),
its pacing, and which jobs share one queue or run side by side (the rules are
in :mod:`ssdlab.fio.simulate`'s docstring)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from . import steadystate
from .jobfile import SYNC_ENGINES, Job, JobFile, Percent, rw_base
from .values import PerDirection

#: Most I/Os one job keeps in flight (the engine's ``MAX_IODEPTH``: an NVMe
#: queue's 65536 entries).
MAX_IODEPTH = 65536

RANDOM_MODES = ("randread", "randwrite", "randrw", "randtrim", "randtrimwrite")
_READS = ("read", "randread", "rw", "readwrite", "randrw")
_WRITES = ("write", "randwrite", "rw", "readwrite", "randrw", "trimwrite", "randtrimwrite")
_TRIMS = ("trim", "randtrim")

#: Options that may differ between jobs merged into one queue.
_MERGE_FREE = frozenset({"name", "description", "stonewall", "numjobs", "new_group"})

#: Why a job whose region ends past the drive is refused: fio's result on a
#: device this size would not be the test the file describes.
LARGER_DRIVE = "the job file is written for a larger drive"

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
                        f"{capacity_bytes} B: {LARGER_DRIVE} (fio on a block device this size ends the job at its first "
                        "I/O past the end; on a file system it gets ENOSPC)")
    _check_files(job, nrfiles)
    notes.append(f"the job's {nrfiles} file(s) of {filesize} B are consecutive regions of the drive from offset {offset}")
    total = _bytes(job, "size", capacity_bytes, span) if job.has("size") else span
    return offset, span, (total if total != span else None)


def _check_files(job: Job, nrfiles: int) -> None:
    """Several files read or written in order are several streams unless they
    are served one after the other (``file_service_type=sequential``)."""
    service = str(job.value("file_service_type", "roundrobin")).split(":", 1)[0]
    if nrfiles > 1 and service in ("zipf", "pareto", "normal", "gauss"):
        # Round robin and random choices of equal files are uniform over
        # their span, which is what the engine draws; a skewed choice is not.
        raise job.error("file_service_type", f"'{service}' favours some of the {nrfiles} files, which is not simulated: "
                        "give the files' shares with random_distribution=zoned_abs:SHARE/FILESIZE:... instead, or use "
                        "roundrobin, random or sequential")
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
    _block_sizes(job, e, notes)
    if job.has("blockalign"):
        e["blockalign"] = job.int_value("blockalign", 4096)
    offset, size, pass_bytes = _region(job, capacity_bytes, notes)
    e["offset"] = offset
    e["size"] = size
    _data_keys(job, e, notes)
    e.update(_pacing(job, rw))
    dist = str(job.value("random_distribution", "random")).strip()
    if dist != "random" and random:
        e["random_distribution"] = dist
    _queue_depth(job, clones, e, notes)
    time_based, number_ios = _bounds(job, clones, e, notes, random, size, pass_bytes)
    _log_interval(job, e, notes)
    ramp = job.int_value("ramp_time", 0) if job.has("ramp_time") else 0
    if ramp:
        _check_ramp(job, time_based, random, number_ios, notes)
    if random and not job.flag("norandommap"):
        notes.append("random offsets are drawn with replacement, as fio with norandommap=1 (fio's default random map touches "
                     "each block once per pass)")
    if job.has("direct") and not job.flag("direct") or job.flag("buffered"):
        notes.append("a simulated drive has no page cache: buffered I/O (direct=0) is simulated as direct I/O")
    return e, notes, ramp


def _block_sizes(job: Job, e: Dict[str, Any], notes: List[str]) -> None:
    """``bsrange``, ``bssplit`` or ``bs`` (per direction too) as engine keys."""
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
        if isinstance(split, PerDirection):
            # fio draws a mixed job's read and write sizes each from its own split.
            assert isinstance(split.read, tuple) and isinstance(split.write, tuple)
            e["bssplit"] = _split_text(split.read)
            e["write_bssplit"] = _split_text(split.write)
        else:
            assert isinstance(split, tuple)
            e["bssplit"] = _split_text(split)  # type: ignore[arg-type]
        if job.has("bs"):
            notes.append("bssplit overrides bs (as in fio)")
    elif isinstance(job.value("bs"), PerDirection):
        bs = job.value("bs")
        assert isinstance(bs, PerDirection) and isinstance(bs.read, int) and isinstance(bs.write, int)
        e["bs"] = bs.read
        e["write_bssplit"] = f"{bs.write}/100"
    else:
        e["bs"] = job.int_value("bs", 4096)


def _data_keys(job: Job, e: Dict[str, Any], notes: List[str]) -> None:
    """The mix, the data written (fio's buffer options), the seed and the syncs as engine keys."""
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


def _queue_depth(job: Job, clones: int, e: Dict[str, Any], notes: List[str]) -> None:
    """The queue depth of ``clones`` instances: sync engines (fio's default psync) keep one I/O in flight."""
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


def _bounds(job: Job, clones: int, e: Dict[str, Any], notes: List[str], random: bool, size: int,
            pass_bytes: Optional[int]) -> Tuple[bool, Optional[int]]:
    """When the job ends, with fio's semantics as explicit engine keys; whether it is time based and its
    ``number_ios``."""
    time_based = job.flag("time_based")
    runtime = job.value("runtime")
    loops = job.int_value("loops", 1)
    io_size = job.value("io_size")
    number_ios = job.value("number_ios") or None  # fio: 0 (its default) sets no limit
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
                e["loop_bytes"] = io_size  # fio: a time-based stream starts again at offset every io_size bytes
        if loops > 1:
            notes.append("loops has no effect with time_based (as in fio)")
    else:
        e["time_based"] = 0
        per_pass = (pass_bytes or size) if io_size is None else int(io_size)  # type: ignore[arg-type]
        if not random and loops > 1 and per_pass % size != 0:
            e["loop_bytes"] = per_pass  # fio runs every loop from the job's offset
        e["io_size"] = per_pass * loops * clones
    if number_ios is not None:
        assert isinstance(number_ios, int)
        e["number_ios"] = number_ios * clones
    return time_based, number_ios


def _log_interval(job: Job, e: Dict[str, Any], notes: List[str]) -> None:
    """The series interval: fio logs every I/O without log_avg_msec; the simulator averages."""
    if job.has("log_avg_msec"):
        e["log_avg_msec"] = job.int_value("log_avg_msec", 1000)
    elif any(job.has(k) for k in ("write_iops_log", "write_bw_log", "write_lat_log", "write_clat_log", "write_slat_log")):
        e["log_avg_msec"] = 1000
        notes.append("log_avg_msec unset: fio would log every I/O; the simulator logs 1000 ms averages")


def _check_ramp(job: Job, time_based: bool, random: bool, number_ios: Optional[int], notes: List[str]) -> None:
    """A ramp is a phase of its own: what fio counts across it the simulator cannot split."""
    if not time_based:
        raise job.error("ramp_time", "ramp_time is supported on time_based jobs only (fio counts the ramp's I/O toward "
                        "size/io_size, which the simulator cannot split)")
    if not random:
        raise job.error("ramp_time", "a sequential job would restart at offset after the ramp (fio continues the stream): "
                        "ramp_time is supported on random jobs only")
    if number_ios is not None:
        raise job.error("number_ios", "number_ios with ramp_time: fio counts the ramp's I/Os; not supported")
    if job.has("latency_target"):
        raise job.error("ramp_time", "ramp_time with latency_target is not simulated (fio holds the search at depth 1 "
                        "through the ramp): drop one of them")
    notes.append("ramp_time: the ramp and the measurement are two engine phases; the queue drains at the boundary")

def _pacing(job: Job, rw: str) -> Dict[str, Any]:
    """fio's rate limits, think time, flows and latency target as engine
    keys. A rate given per direction (``rate=R,W,T``) applies to the job's
    direction; different rates for the directions of a mixed job are not
    simulated (a mixed job is paced as a whole, with one poisson process)."""
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
    if job.has("rate_process") and str(job.value("rate_process")) == "poisson":
        if not out:
            raise job.error("rate_process", "poisson spreads the I/Os of a rate: give rate or rate_iops")
        out["rate_process"] = "poisson"
    if job.int_value("flow", 0) > 0:
        out["flow"] = job.int_value("flow", 0)
        out["flow_id"] = job.int_value("flow_id", 0)
        if job.has("flow_sleep"):
            out["flow_sleep"] = f"{job.int_value('flow_sleep', 0)}ns"
    if job.has("latency_target") and job.int_value("latency_target", 0) > 0:
        out["latency_target"] = f"{job.int_value('latency_target', 0)}ns"
        out["latency_window"] = f"{job.int_value('latency_window', 0) if job.has('latency_window') else 0}ns"
        pct = str(job.value("latency_percentile", "100")).strip().rstrip("%")
        try:
            if not 0.0 <= float(pct) <= 100.0:
                raise ValueError
        except ValueError:
            raise job.error("latency_percentile", f"'{job.value('latency_percentile')}': give a percentage 0..100") from None
        out["latency_percentile"] = float(pct)
        out["latency_run"] = int(job.flag("latency_run"))
    if job.has("thinktime") and job.int_value("thinktime", 0) > 0:
        out["thinktime"] = f"{job.int_value('thinktime', 0)}ns"
        out["thinktime_blocks"] = job.int_value("thinktime_blocks", 1)
    return out


def _split_text(split: Tuple[Tuple[int, int], ...]) -> str:
    return ":".join(f"{b}/{w}" for b, w in split)


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
    for k in ("offset_increment", "rate", "rate_iops", "thinktime", "startdelay", "flow", "latency_target"):
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
    if "offset" in overrides and (int(engine["offset"]) >= capacity_bytes
                                  or int(engine["offset"]) + int(engine["size"]) > capacity_bytes):
        where = (f"starts at offset {engine['offset']}, past the end of the drive's {capacity_bytes} B"
                 if int(engine["offset"]) >= capacity_bytes else
                 f"at offset {engine['offset']} with size {engine['size']} ends past the drive's {capacity_bytes} B")
        raise first.error("offset_increment", f"clone {where}: {LARGER_DRIVE} (fio on a block device this size gives such a "
                          "clone no I/O past the end)")
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
        verify=verifies(first) and (rw_base(first.value("rw", "read")) in _WRITES or first.flag("verify_only")),
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


def verifies(job: Job) -> bool:
    """fio reads back and checks a writing job's data when ``verify`` names
    a method (``null``: none) and ``do_verify`` is on; ``verify_only`` only
    reads back."""
    v = job.value("verify")
    if v is None or str(v) in ("", "0", "null"):
        return False
    return job.flag("do_verify", True) or job.flag("verify_only")
