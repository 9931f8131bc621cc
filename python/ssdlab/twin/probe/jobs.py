"""The probe's jobs as data: each :class:`ProbeJob` has its name, its stage, the
feature it reveals and why, its fio options and the direction its figures
come from. The names are constants here (fixed ones) or functions (families
over a queue depth, a transfer size or a data pattern), so that the features
and the fit, which read figures by job name, fail at import on a typo rather
than reading ``None``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ...errors import SsdlabError
from ...fio.guard import filename_value
from ...suite.fio import DATA_PATTERN_OPTIONS

__all__ = ["ProbeJob", "probe_jobs", "jobfile_text", "cache_span_note", "CLEAN", "FILL", "CACHE", "QUEUES", "BUDGETS",
           "KiB", "MiB", "GiB"]

#: The stages: ``clean`` after a TRIM of the whole target, ``fill`` the state writes, ``cache`` the write cache's
#: size and recovery (last, so that it leaves every earlier job's figures as they were).
CLEAN = "clean"
FILL = "fill"
CACHE = "cache"
#: The host link's and the command queues' ceilings: reads at depth over the span the cache stage wrote, after it
#: (reads leave every earlier job's figures as they were).
QUEUES = "queues"
#: The host's own rate (no device I/O), on a real target: in no stage the fit simulates.
HOST = "host"

#: --budget names: a factor on every runtime and on the sizes of the state writes.
BUDGETS = {"quick": 0.25, "default": 1.0, "thorough": 3.0}

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB

# The job names. Fixed names first, then the families.
ERASE = "erase"
UNWRITTEN_READ = "unwritten-read"
UNWRITTEN_SEQREAD = "unwritten-seqread-128k-qd32"
SEQWRITE_128K_QD32 = "seqwrite-128k-qd32"
SEQWRITE_128K_QD1 = "seqwrite-128k-qd1"
SEQWRITE_4M_QD4 = "seqwrite-4m-qd4"
SEQREAD_4M_QD4 = "seqread-4m-qd4"
RANDREAD_128K_QD32 = "randread-128k-qd32"
RANDWRITE_SPAN = "randwrite-span"
RANDREAD_RANDOMLY_WRITTEN = "randread-randomly-written-4k-qd32"
SEQREAD_RANDOMLY_WRITTEN = "seqread-randomly-written-128k-qd32"
RANDRW_4K_QD4 = "randrw-4k-qd4"
FILL_JOB = "fill"
TORTURE = "torture"
TORTURED_FLUSH = "tortured-flush"
AFTER_IDLE_RANDWRITE = "after-idle-randwrite"
TORTURED_RANDREAD = "tortured-randread-4k-qd32"
TORTURED_SEQREAD = "tortured-seqread-128k-qd32"
DIRTY_SEQWRITE = "dirty-seqwrite"
TRIM_ALL = "trim-all"
AFTER_TRIM_SEQWRITE = "after-trim-seqwrite"
HOST_BUFFERS = "host-buffer-rate"
CACHE_TRIM = "cache-trim"
CACHE_FILL = "cache-fill"
CACHE_AFTER_IDLE = "cache-after-idle"
#: The share of the capacity the cache fill writes per unit of --budget: past the SLC caches of the TLC/QLC
#: drives on an empty drive (10-25% of their capacity) at the default budget, about 5-10 minutes on a 1TB drive.
CACHE_FILL_SHARE = 0.3
#: Seconds of idle time (per unit of --budget) before the write that shows how much cache idle time gave back.
CACHE_IDLE_S = 30.0
#: The map cache: 4KB random reads at QD1 over growing spans of the full drive (from 1 GiB, doubling, then the
#: whole drive), this long each per unit of --budget (at least a second), after an unmeasured ramp of
#: :data:`MAP_RAMP_S` whatever the budget: a span's translation pages are loaded once each as its reads first meet
#: them (a 64 GiB span's 4,096 pages of 16 KiB at 4 B per 4KB unit), which is not the cache's steady miss rate.
MAP_SPAN_PREFIX = "map-span-"
MAP_SPAN_FIRST_BYTES = 1 << 30
MAP_SPAN_S = 2.0
MAP_RAMP_S = 2.0
#: The queue jobs: 4KB random reads over (fio jobs, iodepth per job), QD1 to 256 with 1 to 8 jobs (on NVMe each
#: fio job has its own queue pair; on SATA every job shares the drive's 32 NCQ tags), this long each per unit of
#: --budget.
QUEUE_GRID = ((1, 1), (1, 8), (1, 32), (1, 128), (1, 256), (2, 32), (4, 32), (8, 32), (4, 64))
QUEUE_S = 1.0
QUEUE_PREFIX = "queue-randread-4k-"
#: 128KB sequential reads by this many fio jobs at QD32, each in its own part of the span: the link's ceiling
#: where one queue does not reach it.
LINK_JOBS = 4
LINK_SEQREAD = f"link-seqread-128k-j{LINK_JOBS}-qd32"
#: The prefixes of the write families (a burst, a sequential or a random write).
BURST_PREFIX = "burst-"
SEQWRITE_PREFIX = "seqwrite-"
RANDWRITE_PREFIX = "randwrite-"


def burst(label: str) -> str:
    return f"{BURST_PREFIX}{label}"


def randwrite_4k(qd: int) -> str:
    return f"randwrite-4k-qd{qd}"


def flushwrite(bs: str) -> str:
    return f"flushwrite-{bs}-qd1"


def seqwrite_pattern(pattern: str) -> str:
    return f"seqwrite-{pattern}"


def randread_4k(qd: int) -> str:
    return f"randread-4k-qd{qd}"


def randread_qd1(bs: str) -> str:
    return f"randread-{bs}-qd1"


def seqread_128k(qd: int) -> str:
    return f"seqread-128k-qd{qd}"


def seqread_4k(qd: int) -> str:
    return f"seqread-4k-qd{qd}"


def seqwrite_small(bs: str, qd: int) -> str:
    return f"seqwrite-{bs}-qd{qd}"


def seqread_small(bs: str, qd: int) -> str:
    return f"seqread-{bs}-qd{qd}"


def rewrite(bs: str) -> str:
    return f"rewrite-{bs}-qd32"


def map_span(span_bytes: int, capacity_bytes: int) -> str:
    """The map-cache job over ``span_bytes`` (``all``: the whole drive)."""
    return f"{MAP_SPAN_PREFIX}all" if span_bytes >= capacity_bytes else f"{MAP_SPAN_PREFIX}{span_bytes // GiB}g"


def queue_read(numjobs: int, qd: int) -> str:
    return f"{QUEUE_PREFIX}j{numjobs}-qd{qd}"


def map_spans(capacity_bytes: int) -> List[int]:
    """The spans the map-cache jobs read: 1 GiB, doubling while below the capacity, then the whole drive."""
    spans, s = [], MAP_SPAN_FIRST_BYTES
    while s < capacity_bytes:
        spans.append(s)
        s *= 2
    return spans + [capacity_bytes]


@dataclass(frozen=True)
class ProbeJob:
    """One diagnosis job: fio ``options`` (beyond the shared header), the
    ``stage``, the ``feature`` it reveals and ``why``, the direction its
    figures come from (``read``, ``write``, ``trim``, or ``rw``: both), and whether fio
    logs its IOPS and bandwidth per ``log_ms``."""

    name: str
    stage: str
    feature: str
    why: str
    options: Dict[str, Any]
    direction: str
    log_ms: int = 0

    @property
    def block_bytes(self) -> int:
        bs = str(self.options.get("bs", "4k")).lower()
        mult = {"k": KiB, "m": MiB, "g": GiB}.get(bs[-1], 1)
        return int(bs[:-1] if bs[-1] in "kmg" else bs) * mult


def _align(n: float, unit: int = MiB) -> int:
    return max(unit, int(n) // unit * unit)


def _secs(s: float) -> str:
    return f"{int(round(max(s, 0.2) * 1000))}ms"


@dataclass(frozen=True)
class _Spans:
    """Where the jobs of one target write and read, and for how long."""

    cap: int
    budget: float

    @property
    def read(self) -> int:
        return _align(min(8 * GiB, self.cap // 4))

    @property
    def write(self) -> int:
        return _align(min(8 * GiB, self.cap // 4))

    @property
    def reduction(self) -> int:
        return _align(min(1 * GiB, self.cap // 16))

    @property
    def short(self) -> str:
        return _secs(1.0 * self.budget)


class _Jobs(List[ProbeJob]):
    def add(self, name: str, stage: str, feature: str, why: str, direction: str, log_ms: int = 0, **opts: Any) -> None:
        self.append(ProbeJob(name, stage, feature, why, opts, direction, log_ms))


def probe_jobs(capacity_bytes: int, budget: float = 1.0, trim: bool = True) -> List[ProbeJob]:
    """The probe for a target of ``capacity_bytes`` (``budget``: factor on
    runtimes and state-write sizes; ``trim``: the target accepts TRIM)."""
    if capacity_bytes < 256 * MiB:
        raise SsdlabError(f"the probe needs a target of at least 256 MiB; this one has {capacity_bytes:,} B")
    sp = _Spans(capacity_bytes, float(budget))
    jobs = _Jobs()
    _clean_start(jobs, sp, trim)
    _clean_writes(jobs, sp)
    _clean_reads(jobs, sp)
    _clean_layout(jobs, sp)
    _fill_stage(jobs, sp, trim)
    _cache_stage(jobs, sp, trim)
    _queue_stage(jobs, sp)
    return list(jobs)


def _clean_start(jobs: _Jobs, sp: _Spans, trim: bool) -> None:
    inc = dict(DATA_PATTERN_OPTIONS["incompressible"])
    d0 = sp.read + sp.write
    if trim:
        jobs.add(ERASE, CLEAN, "starting state", "a TRIM of the whole target leaves no valid data, as a secure erase would "
            "(the probe issues no ATA SECURITY ERASE)", "trim", rw="trim", bs="64m")
    jobs.add(UNWRITTEN_READ, CLEAN, "unwritten-LBA reads",
        "4KB reads of LBAs that hold no data: a drive that answers them from its map is much faster than a die read",
        "read", rw="randread", bs="4k", iodepth=1, size=sp.read, time_based=1, runtime=sp.short)
    jobs.add(UNWRITTEN_SEQREAD, CLEAN, "host link",
        "128KB sequential reads of LBAs that hold no data, at QD32: a drive that answers them from its map moves "
        "them at the link's rate even where its NAND reads and writes slower (Crucial m4: 440 MB/s from the NAND, "
        "543 MB/s on the link)", "read", rw="read", bs="128k", iodepth=32, size=sp.read, time_based=1,
        runtime=sp.short)
    # write buffer: bursts after idle, growing; a burst the buffer absorbs goes at link speed
    off = d0
    # (the 8 GiB burst gives a large buffer on a NAND almost as fast as the link a second burst that outruns
    # it; it runs only where it ends below 40% of the drive, so the fill still crosses half of it in order)
    for s in (8 * MiB, 32 * MiB, 128 * MiB, 512 * MiB, 2 * GiB, 8 * GiB):
        if off + s > (sp.cap if s <= 2 * GiB else 0.4 * sp.cap):
            break
        label = f"{s // MiB}m" if s < GiB else f"{s // GiB}g"
        jobs.add(burst(label), CLEAN, "write buffer size",
            "a burst after idle time (3 s, at least 1 s) goes at the host link's rate while the write buffer takes it; where the rate "
            "falls to the NAND's, the buffer is full", "write", rw="write", bs="128k", iodepth=32, offset=off, size=s,
            startdelay=_secs(max(1.0, 3.0 * sp.budget)), **inc)
        off += s


def _clean_writes(jobs: _Jobs, sp: _Spans) -> None:
    inc = dict(DATA_PATTERN_OPTIONS["incompressible"])
    w0 = sp.read
    d0 = sp.read + sp.write
    for qd in (1, 4, 32):
        jobs.add(randwrite_4k(qd), CLEAN, "write parallelism and command cost",
            "4KB random writes on a clean drive: QD1 gives the write latency (command cost, buffer), QD32 the "
            "controller's and the dies' ceiling", "write", rw="randwrite", bs="4k", iodepth=qd, offset=w0,
            size=sp.write, time_based=1, runtime=sp.short, **inc)
    for bs in ("4k", "16k", "64k"):
        jobs.add(flushwrite(bs), CLEAN, "program time (tPROG) and the program unit",
            f"{bs} random writes one at a time, each followed by a FLUSH CACHE (fio fsync=1): the flush returns once "
            "the data is programmed, so its latency less the plain write's is the program time plus the unit's "
            "transfer to the die; a flush of less than a program unit programs (pads) the whole unit, so the "
            "latency stays flat over 4-64KB (a drive that acknowledges flushes at once has power-loss protection)",
            "write", rw="randwrite", bs=bs, iodepth=1, fsync=1, offset=w0, size=sp.write, time_based=1,
            runtime=sp.short, **inc)
    jobs.add(SEQWRITE_128K_QD32, CLEAN, "NAND program bandwidth",
        "a sequential write over the read span on a clean drive: dies x program unit / tPROG, or the link",
        "write", rw="write", bs="128k", iodepth=32, offset=0, size=sp.read, **inc)
    jobs.add(SEQWRITE_128K_QD1, CLEAN, "write latency of large transfers",
        "128KB writes one at a time: the buffer and the link per transfer", "write", rw="write", bs="128k",
        iodepth=1, offset=d0, size=sp.reduction, **inc)
    for pattern in ("incompressible", "compressible", "repeated", "zeros"):
        jobs.add(seqwrite_pattern(pattern), CLEAN, "data reduction",
            f"a sequential write of {pattern} data: a drive that compresses or deduplicates writes reducible data "
            "faster than incompressible data (stored bytes / host bytes ~ the ratio of the rates)", "write",
            rw="write", bs="128k", iodepth=32, offset=d0, size=sp.reduction, **DATA_PATTERN_OPTIONS[pattern])
    # ATTO's large transfers: a short write at QD4 then, at once, a read of what it wrote: the read meets the
    # programs the buffer still holds, and a large request is split into many die operations (128 MiB, ATTO's
    # span in the quick scale: the buffer's share of it shows)
    atto_span = _align(min(128 * MiB, sp.cap // 16))
    jobs.add(SEQWRITE_4M_QD4, CLEAN, "reads right after writes, large transfers",
        "4MB sequential writes at QD4 over a short span, as ATTO's largest transfers: the write path with many "
        "die operations per command, and what the buffer takes of the span", "write", rw="write", bs="4m",
        iodepth=4, offset=d0, size=atto_span, **inc)
    jobs.add(SEQREAD_4M_QD4, CLEAN, "reads right after writes, large transfers",
        "the same span read back at once in 4MB transfers at QD4: reads that meet the programs the buffer still "
        "holds, and how many dies a request reads at once", "read", rw="read", bs="4m", iodepth=4, offset=d0,
        size=atto_span)


def _clean_reads(jobs: _Jobs, sp: _Spans) -> None:
    inc = dict(DATA_PATTERN_OPTIONS["incompressible"])
    d0 = sp.read + sp.write
    for qd in (1, 2, 3, 4, 8, 16, 32):
        # the first after the writes starts after 1 s of idle: the programs the buffer still holds would hold
        # its reads (by up to half a program each), and QD1 is where the die read's own time is measured
        idle: Dict[str, Any] = {"startdelay": _secs(1.0)} if qd == 1 else {}
        jobs.add(randread_4k(qd), CLEAN, "read parallelism",
            "4KB random reads of written data: QD1 gives the die read time plus the controller's, the knee over "
            "queue depth the dies that work at once", "read", rw="randread", bs="4k", iodepth=qd, size=sp.read,
            time_based=1, runtime=sp.short, **idle)
    for bs in ("8k", "16k", "32k", "64k", "128k", "512k"):
        jobs.add(randread_qd1(bs), CLEAN, "page and stripe size",
            "random reads one at a time against transfer size: the step where a transfer needs another page read "
            "or another die", "read", rw="randread", bs=bs, iodepth=1, size=sp.read, time_based=1, runtime=sp.short)
    jobs.add(RANDREAD_128K_QD32, CLEAN, "read bandwidth", "large random reads at depth: the dies' read bandwidth or the link",
        "read", rw="randread", bs="128k", iodepth=32, size=sp.read, time_based=1, runtime=sp.short)
    for qd in (1, 32):
        jobs.add(seqread_128k(qd), CLEAN, "link and read-ahead",
            "sequential 128KB reads: at QD32 the host link's ceiling; at QD1 whether the drive reads ahead",
            "read", rw="read", bs="128k", iodepth=qd, size=sp.read, time_based=1, runtime=sp.short)
    for qd in (1, 2, 3, 4):
        jobs.add(seqread_4k(qd), CLEAN, "read-ahead and its queue-depth threshold",
            "sequential 4KB reads against random ones at the same depth: a read-ahead serves them from the buffer, "
            "from the depth at which the firmware detects the stream", "read", rw="read", bs="4k", iodepth=qd,
            size=sp.read, time_based=1, runtime=sp.short)
    for bs, qd in (("512", 4), ("512", 32), ("32k", 4)):
        depth = ("at QD4 (ATTO's depth)" if qd == 4 else
                 f"at QD{qd}: with almost no data to move, the most commands the controller completes per second")
        jobs.add(seqwrite_small(bs, qd), CLEAN, "small and partial-unit writes",
            f"sequential writes {depth}; below the 4KB mapping unit a write costs a read-modify-write; "
            "small transfers show the per-command cost", "write", rw="write", bs=bs, iodepth=qd, offset=d0,
            size=sp.reduction, time_based=1, runtime=sp.short, **inc)
        jobs.add(seqread_small(bs, qd), CLEAN, "small reads",
            f"sequential reads {depth}; a drive that reads ahead serves transfers smaller than a 4KB unit from "
            "its buffer, one that does not reads the unit again for each", "read", rw="read",
            bs=bs, iodepth=qd, size=sp.read, time_based=1, runtime=sp.short)


def _clean_layout(jobs: _Jobs, sp: _Spans) -> None:
    inc = dict(DATA_PATTERN_OPTIONS["incompressible"])
    w0 = sp.read
    rnd_span = _align(min(256 * MiB, sp.cap // 16))
    jobs.add(RANDWRITE_SPAN, CLEAN, "reads of data written at random",
        "4KB random writes over a small span, twice its size: the data the next two jobs read was written at random",
        "write", rw="randwrite", bs="4k", iodepth=32, offset=w0, size=rnd_span, io_size=2 * rnd_span, **inc)
    jobs.add(RANDREAD_RANDOMLY_WRITTEN, CLEAN, "reads of data written at random",
        "4KB random reads of data written at random: slower than of data written in order when the controller "
        "stripes its stored stream across dies or maps coarsely", "read", rw="randread", bs="4k", iodepth=32,
        offset=w0, size=rnd_span, time_based=1, runtime=sp.short)
    jobs.add(SEQREAD_RANDOMLY_WRITTEN, CLEAN, "reads of data written at random",
        "sequential 128KB reads of data written at random: a drive whose physical layout follows the writes reads "
        "it scattered", "read", rw="read", bs="128k", iodepth=32, offset=w0, size=rnd_span, time_based=1, runtime=sp.short)
    for bs in ("4k", "8k", "16k"):
        jobs.add(rewrite(bs), CLEAN, "map unit",
            f"{bs} random writes, aligned, of reducible (repeated) data over the span just written at random: a drive "
            "whose map unit is larger than a write rewrites the rest of the unit with it (reads it back and programs "
            "it again), so its writes below the unit run well below those of a whole unit; with a 4KB map the "
            "smaller writes run at least as fast", "write", rw="randwrite", bs=bs, blockalign=bs, iodepth=32,
            offset=w0, size=rnd_span, time_based=1, runtime=sp.short, **DATA_PATTERN_OPTIONS["repeated"])
    jobs.add(RANDRW_4K_QD4, CLEAN, "mixed reads and writes",
        "4KB random I/O, 70% reads, at QD4: reads waiting behind programs on their die", "rw", rw="randrw",
        rwmixread=70, bs="4k", iodepth=4, size=sp.read, time_based=1, runtime=sp.short, **inc)


def _fill_stage(jobs: _Jobs, sp: _Spans, trim: bool) -> None:
    inc = dict(DATA_PATTERN_OPTIONS["incompressible"])
    # the state: fill, write past the capacity, dirty, idle, TRIM
    jobs.add(FILL_JOB, FILL, "sequential write of the whole drive",
        "every LBA written once in order: the first-pass sequential rate", "write", log_ms=1000, rw="write",
        bs="128k", iodepth=32, **inc)
    # long enough to write 35% of the capacity at 100 MB/s: past the spare area of the drives of the era
    # (7-28%) and on into the steady state
    torture_s = max(60.0, 0.35 * sp.cap / 100e6) * sp.budget
    jobs.add(TORTURE, FILL, "spare area, GC onset and steady state",
        "4KB random writes after the fill: the rate stays at the clean one until the spare area is used up, then "
        "falls to the steady state garbage collection allows (bytes written before the fall ~ the spare area)",
        "write", log_ms=1000, rw="randwrite", bs="4k", iodepth=32, time_based=1, runtime=_secs(torture_s), **inc)
    # the buffer in the steady state: the torture leaves it full (the host is held at the rate garbage collection
    # lets the buffer drain), so a FLUSH CACHE at once waits for all of it to drain at that rate. On a clean drive
    # whose NAND writes as fast as the link lets data in, no burst fills the buffer, and this is what shows it
    jobs.add(TORTURED_FLUSH, FILL, "write buffer size",
        "one 4KB write and a FLUSH CACHE (fio fsync=1) right after the torture: the torture leaves the buffer full "
        "and draining at the steady state's rate, so the flush's latency x that rate is the buffer (a drive that "
        "acknowledges flushes at once has power-loss protection: no buffer shows)", "write", rw="randwrite",
        bs="4k", iodepth=1, fsync=1, io_size=8192, **inc)
    jobs.add(AFTER_IDLE_RANDWRITE, FILL, "idle-time garbage collection",
        "4KB random writes after idle time: faster than the steady state when the drive cleans blocks while idle",
        "write", rw="randwrite", bs="4k", iodepth=32, time_based=1, runtime=_secs(5.0 * sp.budget),
        startdelay=_secs(60.0 * sp.budget), **inc)
    for name, rw, bs in ((TORTURED_RANDREAD, "randread", "4k"), (TORTURED_SEQREAD, "read", "128k")):
        jobs.add(name, FILL, "reads of data written at random",
            "reads after the torture, over the whole drive: the layout random writes leave", "read", rw=rw, bs=bs,
            iodepth=32, time_based=1, runtime=_secs(2.0 * sp.budget))
    dirty_size = _align(min(2 * GiB * sp.budget, sp.cap // 8))
    jobs.add(DIRTY_SEQWRITE, FILL, "sequential write on a dirty drive",
        "a sequential write right after random writes: how much garbage collection costs a large write",
        "write", rw="write", bs="128k", iodepth=32, offset=0, size=dirty_size, **inc)
    if trim:
        jobs.add(TRIM_ALL, FILL, "TRIM response", "a TRIM of the whole drive after the torture", "trim", rw="trim", bs="64m")
        jobs.add(AFTER_TRIM_SEQWRITE, FILL, "TRIM response",
            "a sequential write right after the full TRIM: back near the clean rate when TRIM frees the blocks at "
            "once; at the dirty rate when the drive still recycles the trimmed blocks", "write", rw="write",
            bs="128k", iodepth=32, offset=dirty_size, size=dirty_size, **inc)


def _cache_sizes(cap: int, budget: float) -> Tuple[int, int, float]:
    """The cache fill's and the write after idle's sizes, and what the budget asked of the fill (bytes)."""
    asked = CACHE_FILL_SHARE * budget * cap
    fill = _align(min(asked, 0.75 * cap))
    return fill, _align(min(fill / 2, cap - fill)), asked


def cache_span_note(capacity_bytes: int, budget: float) -> Optional[str]:
    """What the cache stage cannot write at this budget, said before the probe starts (None: nothing)."""
    fill, after, asked = _cache_sizes(capacity_bytes, float(budget))
    if asked <= 0.75 * capacity_bytes:
        return None
    return (f"the cache fill would write {asked / 1e9:,.1f} GB at --budget {budget:g}, more than the "
            f"{0.75 * capacity_bytes / 1e9:,.1f} GB (75% of the capacity) it may: it writes {fill / 1e9:,.1f} GB, then "
            f"{after / 1e9:,.1f} GB after idle time")


def _cache_stage(jobs: _Jobs, sp: _Spans, trim: bool) -> None:
    inc = dict(DATA_PATTERN_OPTIONS["incompressible"])
    fill, after, _ = _cache_sizes(sp.cap, sp.budget)
    if trim:
        jobs.add(CACHE_TRIM, CACHE, "write cache size", "a TRIM of the whole drive: every native block free again, so "
                 "a cache that uses free blocks in SLC mode (a dynamic part) is at its largest", "trim", rw="trim",
                 bs="64m")
    # the idle time first lets a drive fold what the TRIM's write before it left in its cache
    jobs.add(CACHE_FILL, CACHE, "write cache size, in-cache and post-cache write speed",
             "a long sequential write after idle time: it runs at the cache's (SLC mode's) rate until the cache is "
             "full, then steps down to the native NAND's (with folding) for good: the bytes written before the step "
             "are the cache", "write", log_ms=1000, rw="write", bs="128k", iodepth=32, offset=0, size=fill,
             startdelay=_secs(max(5.0, 10.0 * sp.budget)), **inc)
    jobs.add(CACHE_AFTER_IDLE, CACHE, "write cache recovery in idle time",
             f"the same write again after {CACHE_IDLE_S * sp.budget:.0f} s idle: the bytes it writes at the cache's "
             "rate are what idle time gave back (folded into native blocks)", "write", log_ms=1000, rw="write",
             bs="128k", iodepth=32, offset=fill, size=after, startdelay=_secs(CACHE_IDLE_S * sp.budget), **inc)


def _queue_stage(jobs: _Jobs, sp: _Spans) -> None:
    span, _, _ = _cache_sizes(sp.cap, sp.budget)
    for n, qd in QUEUE_GRID:
        jobs.add(queue_read(n, qd), QUEUES, "command queues and the host interface",
                 f"4KB random reads by {n} fio job(s) at QD{qd} each over the span the cache fill wrote: how the rate "
                 "scales with the commands outstanding (SATA's 32 NCQ tags stop it at 32; NVMe gives each job its own "
                 "queue pair, so it scales on to the controller's ceiling)", "read", rw="randread", bs="4k",
                 iodepth=qd, numjobs=n, size=span, time_based=1, runtime=_secs(QUEUE_S * sp.budget))
    part = _align(span // LINK_JOBS)
    jobs.add(LINK_SEQREAD, QUEUES, "host link (NVMe: its PCIe generation and lanes)",
             f"128KB sequential reads by {LINK_JOBS} fio jobs at QD32, each in its own quarter of the span the cache "
             "fill wrote: the host link's ceiling where one queue's stream does not reach it", "read", rw="read",
             bs="128k", iodepth=32, numjobs=LINK_JOBS, size=part, offset_increment=part, time_based=1,
             runtime=_secs(QUEUE_S * sp.budget))
    # then the map cache (after the queue reads, whose span it would push out of the cache): a drive that holds
    # only part of its map (DRAM-less, a host memory buffer) loads a translation page from the NAND before a read
    # whose entry it does not hold, whether the LBA holds data or not (the whole drive was written and trimmed by
    # now, so every translation page is on the NAND); last, so that no earlier job's figures move (reads in the
    # fill stage gave SandForce drives time to recycle before its TRIM: their write after it ran up to 4.5% faster)
    for s in map_spans(sp.cap):
        jobs.add(map_span(s, sp.cap), QUEUES, "map cache (the span whose map the controller holds)",
            f"4KB random reads at QD1 over the first {s / 1e9:,.1f} GB: the latency is flat while the span's map fits "
            "the controller's map cache and steps up past it (each read then also loads a translation page from the "
            "NAND)", "read", rw="randread", bs="4k", iodepth=1, offset=0, size=s,
            time_based=1, ramp_time=_secs(MAP_RAMP_S), runtime=_secs(max(1.0, MAP_SPAN_S * sp.budget)))


def host_buffer_job(capacity_bytes: int) -> ProbeJob:
    """The host's own rate of generating incompressible buffers (fio's null engine: no I/O), run on a real target
    only: a drive whose incompressible writes reach it is bound by the host, not by its NAND, so the data-reduction
    jobs cannot tell a reducing drive from the host's cost of fresh buffers."""
    return ProbeJob(HOST_BUFFERS, HOST, "host's buffer generation rate",
                    "incompressible 128KB writes to fio's null engine (no device): the rate at which the host makes "
                    "fresh buffers; an incompressible write near it is host-bound", {"ioengine": "null", "rw": "write",
                    "bs": "128k", "size": _align(min(1 * GiB, capacity_bytes // 16)),
                    **DATA_PATTERN_OPTIONS["incompressible"]}, "write")


def jobfile_text(jobs: Sequence[ProbeJob], *, seed: int = 1, filename: Optional[str] = None,
                 size_bytes: Optional[int] = None, direct: bool = True) -> str:
    """The probe as one fio job file: a ``[global]`` header, then each job
    behind a ``stonewall`` (``filename``/``size`` for a real target)."""
    lines = ["# ssdlab probe: diagnosis jobs (ssdlab.twin.probe); every job's 'description' names the feature", "[global]"]
    if filename is not None:
        lines.append(f"filename={filename_value(filename, 'probe target')}")
    if size_bytes is not None:
        lines.append(f"size={size_bytes}")
    lines += ["ioengine=libaio", f"direct={int(direct)}", "group_reporting=1", "norandommap=1", "randrepeat=0",
              f"randseed={seed}", ""]
    for j in jobs:
        lines += [f"[{j.name}]", "stonewall", f"description={j.feature}"]
        opts = dict(j.options)
        if j.log_ms:
            opts["log_avg_msec"] = j.log_ms
            opts["write_iops_log"] = j.name
            opts["write_bw_log"] = j.name
        lines += [f"{k}={v}" for k, v in opts.items()]
        lines.append("")
    return "\n".join(lines)
