"""The probe's stages and job names: constants for the fixed names, functions for the families (over a queue
depth, a transfer size or a data pattern), so that the features and the fit, which read figures by job name, fail
at import on a typo rather than reading ``None``."""

from __future__ import annotations

from typing import List

#: The stages: ``clean`` after a TRIM of the whole target, ``fill`` the state writes, ``cache`` the write cache's
#: size and recovery (last, so that it leaves every earlier job's figures as they were).
CLEAN = "clean"
FILL = "fill"
CACHE = "cache"
#: The host link's and the command queues' ceilings: reads at depth over the span the cache stage wrote, after it
#: (reads leave every earlier job's figures as they were).
QUEUES = "queues"
#: The full drive: writes and reads right after the fill stage's whole-drive fill, while every LBA holds data (its
#: native NAND past any cache, and the spare area from where 128KB random writes step down), before the fill
#: stage's torture, so that one whole-drive write serves both stages. Without the fill stage it fills the drive
#: itself first.
FULL = "full"
#: Every stage the probe can run (``--stages`` chooses among them). The full stage runs inside the fill stage,
#: right after its whole-drive fill (:func:`ssdlab.twin.probe.jobs.probe_jobs` gives the order).
STAGES = (CLEAN, FILL, CACHE, QUEUES, FULL)
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
#: Sequential 8KB reads at QD8: the read-ahead window (how far the drive reads ahead of a deep stream).
SEQREAD_WINDOW = "seqread-8k-qd8"
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
FULL_FILL = "full-fill"
FULL_SEQWRITE = "full-seqwrite-128k-qd32"
FULL_SEQREAD = "full-seqread-128k-qd32"
FULL_RANDREAD = "full-randread-4k-qd32"
FULL_RANDWRITE = "full-randwrite-128k-qd32"
#: The full drive after idle time: what it writes at the cache's rate then is the static part of its cache (on a
#: full drive the dynamic part is gone), given back once idle time folded what the fill left in it.
FULL_IDLE_SEQWRITE = "full-after-idle-seqwrite-128k-qd32"
#: The largest static part looked for, as a share of the capacity (the modern profiles' 0-1.2%, and room past it).
STATIC_MAX_SHARE = 0.025
#: Idle time before that write: long enough to fold a static part of :data:`STATIC_MAX_SHARE` at the slowest native
#: write rate of a modern drive (80 MB/s, a QLC drive's direct-to-QLC rate on SATA), and :data:`STATIC_IDLE_MIN_S` at
#: least; whatever the budget, as a shorter idle time would show part of the cache and take it for the whole
#: (crucial-p1-1000 gives back none of its 12 GB in 120 s, all of it in 400 s).
STATIC_FOLD_FLOOR_BYTES_PER_S = 80e6
STATIC_IDLE_MIN_S = 30.0
#: ... and the write runs until it has passed such a part at the slowest cache rate (a SATA link's 500 MB/s), and
#: :data:`STATIC_WRITE_MIN_S` at least, so that the native rate after the step is measured too.
STATIC_SLC_FLOOR_BYTES_PER_S = 500e6
STATIC_WRITE_MIN_S = 10.0
#: A real target's probe without ``--stages`` runs the fill and the full stage only where one whole-drive write at
#: the stated 100 MB/s (the estimate's rate before anything is measured) takes at most this long: past it
#: (360 GB and up) the whole-drive write alone is most of the half hour the default should take on a real drive
#: (a 1TB TLC drive's fill is 26 min at 636 MB/s, a QLC one's 2.8 h at 98 MB/s), and the torture grows with the
#: capacity too. They run where ``--stages`` names them.
WHOLE_DRIVE_DEFAULT_MAX_S = 3600.0
#: The share of the capacity the full drive's random writes write per unit of --budget, and the least share at any
#: budget: past the spare area of the modern drives (7-12% of their capacity) even at the quick budget, so that
#: garbage collection bites and the rate steps down (the bytes before the step ~ the spare area).
FULL_RANDWRITE_SHARE = 0.3
FULL_RANDWRITE_MIN_SHARE = 0.15
#: The full drive's random writes run in segments of this many seconds, their rate checked between them: the GC
#: onset is what they look for, and past it they only confirm the steady state (at an eighth of the rate before the
#: step on samsung980-1000's twin), so they end a bounded time after the step instead of writing their whole size.
#: On a modern drive the cache stage's two writes run so too (past the cache's step they write at the native rate:
#: 98 MB/s on crucial-p1-1000's QLC).
FULL_SEGMENT_S = 20.0
#: A segment whose rate is below this share of the median of the segments before it is past the step (the
#: features' rule for a fall: the steady state below the first rate / 1.3).
STEP_FALL_SHARE = 1 / 1.3
#: The full drive's 128KB random writes are past garbage collection's onset only below this share of the rate
#: before it: the onset multiplies the writes by the blocks' valid pages (to 1/5-1/8 of the rate on every modern
#: preset), where a milder fall is the drive reclaiming its cache's blocks on the way (crucial-p1-1000: 96 MB/s,
#: then 71-78 for 100 GB, then 12-16).
GC_FALL_SHARE = 0.5
#: After the step the writes go on for this share of the time before it (at least two segments): the features
#: read the steady state from the last 20% of the series, which must then lie wholly past the step.
FULL_TAIL_SHARE = 0.5
#: The bytes the estimate expects before the step, as a share of the capacity: the upper end of a modern drive's
#: spare area (7-12%); the writes go on to their whole size only where the rate never steps down.
FULL_EXPECTED_ONSET_SHARE = 0.12
#: The bytes the estimate expects a segmented cache fill to write before its step, as a share of the capacity: the
#: upper end of the dynamic caches of TLC/QLC drives on an empty drive (10-25%).
CACHE_EXPECTED_SHARE = 0.25
#: The 4KB torture's seconds per unit of --budget (at least :data:`TORTURE_AFTER_FULL_MIN_S`) where the full
#: stage ran before it: its 128KB random writes took the drive past its spare area, so the torture starts in the
#: steady state and needs only to settle there (its GC onset is the full stage's).
TORTURE_AFTER_FULL_S = 120.0
TORTURE_AFTER_FULL_MIN_S = 30.0
#: The map cache: 4KB random reads at QD1 over growing spans of the full drive (from 1 GiB, doubling, then the
#: whole drive), this long each per unit of --budget (at least a second), after an unmeasured ramp of
#: :data:`MAP_RAMP_S` whatever the budget: a span's translation pages are loaded once each as its reads first meet
#: them (a 64 GiB span's 4,096 pages of 16 KiB at 4 B per 4KB unit), which is not the cache's steady miss rate.
MAP_SPAN_PREFIX = "map-span-"
MAP_SPAN_FIRST_BYTES = 1 << 30
MAP_SPAN_S = 2.0
MAP_RAMP_S = 2.0
#: The same reads over the drive's last GiB, past everything the cache stage wrote: what the spans' tail reads
#: (after the stage's TRIM, LBAs that hold nothing) costs where the map is held. Without it that latency and the
#: map's step are the same curve past the written span (both a + b / span), and the covered span is not found.
MAP_TAIL = "map-tail-1g"
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


def segment_name(job: str, i: int) -> str:
    """The ``i``-th segment (from 0) of a write run in segments, as its own fio job."""
    return f"{job}-s{i:02d}"


def full_segment(i: int) -> str:
    """The ``i``-th segment (from 0) of the full drive's random writes."""
    return segment_name(FULL_RANDWRITE, i)


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


__all__ = ["CLEAN", "FILL", "CACHE", "QUEUES", "FULL", "STAGES", "HOST", "FULL_FILL", "FULL_SEQWRITE", "FULL_SEQREAD",
           "FULL_RANDREAD", "FULL_RANDWRITE", "FULL_IDLE_SEQWRITE", "STATIC_MAX_SHARE", "STATIC_FOLD_FLOOR_BYTES_PER_S",
           "STATIC_IDLE_MIN_S", "STATIC_SLC_FLOOR_BYTES_PER_S", "STATIC_WRITE_MIN_S", "FULL_RANDWRITE_SHARE", "FULL_RANDWRITE_MIN_SHARE",
           "FULL_SEGMENT_S", "STEP_FALL_SHARE", "GC_FALL_SHARE", "FULL_TAIL_SHARE", "FULL_EXPECTED_ONSET_SHARE",
           "TORTURE_AFTER_FULL_S",
           "TORTURE_AFTER_FULL_MIN_S", "full_segment", "segment_name", "CACHE_EXPECTED_SHARE", "WHOLE_DRIVE_DEFAULT_MAX_S",
           "BUDGETS", "KiB", "MiB", "GiB", "ERASE", "UNWRITTEN_READ",
           "UNWRITTEN_SEQREAD", "SEQWRITE_128K_QD32", "SEQWRITE_128K_QD1", "SEQWRITE_4M_QD4", "SEQREAD_4M_QD4", "SEQREAD_WINDOW",
           "RANDREAD_128K_QD32", "RANDWRITE_SPAN", "RANDREAD_RANDOMLY_WRITTEN", "SEQREAD_RANDOMLY_WRITTEN",
           "RANDRW_4K_QD4", "FILL_JOB", "TORTURE", "TORTURED_FLUSH", "AFTER_IDLE_RANDWRITE",
           "TORTURED_RANDREAD", "TORTURED_SEQREAD", "DIRTY_SEQWRITE", "TRIM_ALL", "AFTER_TRIM_SEQWRITE",
           "HOST_BUFFERS", "CACHE_TRIM", "CACHE_FILL", "CACHE_AFTER_IDLE", "CACHE_FILL_SHARE", "CACHE_IDLE_S",
           "MAP_SPAN_PREFIX", "MAP_TAIL", "MAP_SPAN_FIRST_BYTES", "MAP_SPAN_S", "MAP_RAMP_S", "QUEUE_GRID", "QUEUE_S",
           "QUEUE_PREFIX", "LINK_JOBS", "LINK_SEQREAD", "BURST_PREFIX", "SEQWRITE_PREFIX", "RANDWRITE_PREFIX",
           "burst", "randwrite_4k", "flushwrite", "seqwrite_pattern", "randread_4k", "randread_qd1",
           "seqread_128k", "seqread_4k", "seqwrite_small", "seqread_small", "rewrite", "map_span", "queue_read",
           "map_spans"]
