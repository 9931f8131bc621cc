"""The probe's later stages: the fill (the state writes: fill, torture, dirty and trimmed writes), the full drive
(right after the fill's whole-drive write, before its torture), the write cache, and the queue and map-cache reads
(reads leave every earlier job's figures as they were)."""

from __future__ import annotations

from typing import Optional

from ...suite.fio import DATA_PATTERN_OPTIONS
from .names import (
    AFTER_IDLE_RANDWRITE,
    AFTER_TRIM_SEQWRITE,
    CACHE,
    CACHE_AFTER_IDLE,
    CACHE_FILL,
    CACHE_IDLE_S,
    CACHE_TRIM,
    DIRTY_SEQWRITE,
    FILL,
    FILL_JOB,
    FULL,
    FULL_FILL,
    FULL_IDLE_SEQWRITE,
    FULL_RANDREAD,
    FULL_RANDWRITE,
    FULL_SEGMENT_S,
    FULL_SEQREAD,
    FULL_SEQWRITE,
    LINK_JOBS,
    LINK_SEQREAD,
    MAP_RAMP_S,
    MAP_SPAN_FIRST_BYTES,
    MAP_SPAN_S,
    MAP_TAIL,
    QUEUE_GRID,
    QUEUE_S,
    QUEUES,
    TORTURE,
    TORTURE_AFTER_FULL_MIN_S,
    TORTURE_AFTER_FULL_S,
    TORTURED_FLUSH,
    TORTURED_RANDREAD,
    TORTURED_SEQREAD,
    TRIM_ALL,
    GiB,
    map_span,
    map_spans,
    queue_read,
)
from .spec import JobList, Spans, align, cache_sizes, full_sizes, secs, static_idle_times


def fill_job(jobs: JobList) -> None:
    """The fill stage's first job: the whole drive written once (the full stage's jobs may follow at once)."""
    jobs.add(FILL_JOB, FILL, "sequential write of the whole drive",
        "every LBA written once in order: the first-pass sequential rate", "write", log_ms=1000, rw="write",
        bs="128k", iodepth=32, **DATA_PATTERN_OPTIONS["incompressible"])


def fill_stage(jobs: JobList, sp: Spans, trim: bool, after_full: bool = False) -> None:
    """The fill stage's jobs after its fill: the state (write past the capacity, dirty, idle, TRIM). ``after_full``:
    the full stage ran before them, and its random writes took the drive past its spare area."""
    inc = dict(DATA_PATTERN_OPTIONS["incompressible"])
    # long enough to write 35% of the capacity at 100 MB/s: past the spare area of the drives of the era
    # (7-28%) and on into the steady state; after the full stage the drive is in the steady state already
    torture_s = (max(TORTURE_AFTER_FULL_MIN_S, TORTURE_AFTER_FULL_S * sp.budget) if after_full else
                 max(60.0, 0.35 * sp.cap / 100e6) * sp.budget)
    jobs.add(TORTURE, FILL, "spare area, GC onset and steady state",
        "4KB random writes after the fill: the rate stays at the clean one until the spare area is used up, then "
        "falls to the steady state garbage collection allows (bytes written before the fall ~ the spare area)",
        "write", log_ms=1000, rw="randwrite", bs="4k", iodepth=32, time_based=1, runtime=secs(torture_s), **inc)
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
        "write", rw="randwrite", bs="4k", iodepth=32, time_based=1, runtime=secs(5.0 * sp.budget),
        startdelay=secs(60.0 * sp.budget), **inc)
    for name, rw, bs in ((TORTURED_RANDREAD, "randread", "4k"), (TORTURED_SEQREAD, "read", "128k")):
        jobs.add(name, FILL, "reads of data written at random",
            "reads after the torture, over the whole drive: the layout random writes leave", "read", rw=rw, bs=bs,
            iodepth=32, time_based=1, runtime=secs(2.0 * sp.budget))
    dirty_size = align(min(2 * GiB * sp.budget, sp.cap // 8))
    jobs.add(DIRTY_SEQWRITE, FILL, "sequential write on a dirty drive",
        "a sequential write right after random writes: how much garbage collection costs a large write",
        "write", rw="write", bs="128k", iodepth=32, offset=0, size=dirty_size, **inc)
    if trim:
        jobs.add(TRIM_ALL, FILL, "TRIM response", "a TRIM of the whole drive after the torture", "trim", rw="trim", bs="64m")
        jobs.add(AFTER_TRIM_SEQWRITE, FILL, "TRIM response",
            "a sequential write right after the full TRIM: back near the clean rate when TRIM frees the blocks at "
            "once; at the dirty rate when the drive still recycles the trimmed blocks", "write", rw="write",
            bs="128k", iodepth=32, offset=dirty_size, size=dirty_size, **inc)



def cache_stage(jobs: JobList, sp: Spans, trim: bool, written: Optional[int] = None) -> None:
    """The cache stage's jobs; ``written``: the bytes the cache fill wrote where it ended early (a segmented write
    past its step), from where the write after idle time goes on."""
    inc = dict(DATA_PATTERN_OPTIONS["incompressible"])
    fill, after, _ = cache_sizes(sp.cap, sp.budget)
    at = fill if written is None else written
    if trim:
        jobs.add(CACHE_TRIM, CACHE, "write cache size", "a TRIM of the whole drive: every native block free again, so "
                 "a cache that uses free blocks in SLC mode (a dynamic part) is at its largest", "trim", rw="trim",
                 bs="64m")
    # the idle time first lets a drive fold what the TRIM's write before it left in its cache
    jobs.add(CACHE_FILL, CACHE, "write cache size, in-cache and post-cache write speed",
             "a long sequential write after idle time: it runs at the cache's (SLC mode's) rate until the cache is "
             "full, then steps down to the native NAND's (with folding) for good: the bytes written before the step "
             "are the cache", "write", log_ms=1000, rw="write", bs="128k", iodepth=32, offset=0, size=fill,
             startdelay=secs(max(5.0, 10.0 * sp.budget)), **inc)
    jobs.add(CACHE_AFTER_IDLE, CACHE, "write cache recovery in idle time",
             f"the same write again after {CACHE_IDLE_S * sp.budget:.0f} s idle: the bytes it writes at the cache's "
             "rate are what idle time gave back (folded into native blocks)", "write", log_ms=1000, rw="write",
             bs="128k", iodepth=32, offset=at, size=after, startdelay=secs(CACHE_IDLE_S * sp.budget), **inc)



def queue_stage(jobs: JobList, sp: Spans, written: Optional[int] = None) -> None:
    """The queue and map-cache reads; ``written``: the bytes the cache fill wrote where it ended early (the span
    the queue reads read is the one it wrote)."""
    span, _, _ = cache_sizes(sp.cap, sp.budget)
    span = span if written is None else align(written)
    for n, qd in QUEUE_GRID:
        jobs.add(queue_read(n, qd), QUEUES, "command queues and the host interface",
                 f"4KB random reads by {n} fio job(s) at QD{qd} each over the span the cache fill wrote: how the rate "
                 "scales with the commands outstanding (SATA's 32 NCQ tags stop it at 32; NVMe gives each job its own "
                 "queue pair, so it scales on to the controller's ceiling)", "read", rw="randread", bs="4k",
                 iodepth=qd, numjobs=n, size=span, time_based=1, runtime=secs(QUEUE_S * sp.budget))
    part = align(span // LINK_JOBS)
    jobs.add(LINK_SEQREAD, QUEUES, "host link (NVMe: its PCIe generation and lanes)",
             f"128KB sequential reads by {LINK_JOBS} fio jobs at QD32, each in its own quarter of the span the cache "
             "fill wrote: the host link's ceiling where one queue's stream does not reach it", "read", rw="read",
             bs="128k", iodepth=32, numjobs=LINK_JOBS, size=part, offset_increment=part, time_based=1,
             runtime=secs(QUEUE_S * sp.budget))
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
            time_based=1, ramp_time=secs(MAP_RAMP_S), runtime=secs(max(1.0, MAP_SPAN_S * sp.budget)))
    tail = min(MAP_SPAN_FIRST_BYTES, sp.cap)
    jobs.add(MAP_TAIL, QUEUES, "map cache (what the spans read past the data written last)",
             "4KB random reads at QD1 over the drive's last GiB, whose map fits any map cache: the latency of the "
             "LBAs past the cache stage's writes, which the larger spans read as well", "read", rw="randread",
             bs="4k", iodepth=1, offset=(sp.cap - tail) >> 20 << 20, size=tail, time_based=1, ramp_time=secs(MAP_RAMP_S),
             runtime=secs(max(1.0, MAP_SPAN_S * sp.budget)))



def full_stage(jobs: JobList, sp: Spans, own_fill: bool = False) -> None:
    """The full drive. A drive with a write cache writes the fill stage's whole-drive fill partly in its cache and
    its clean stage wholly in it, so neither shows its native NAND alone; on the full drive the dynamic cache is
    gone. Right after the fill stage's fill (every LBA holds data); ``own_fill``: the fill stage does not run, so
    the stage first writes the whole drive itself."""
    inc = dict(DATA_PATTERN_OPTIONS["incompressible"])
    seq, rand = full_sizes(sp.cap, sp.budget)
    if own_fill:
        jobs.add(FULL_FILL, FULL, "the full drive's state",
            "every LBA written once in order: the drive full, its dynamic write cache used up", "write", log_ms=1000,
            rw="write", bs="128k", iodepth=32, offset=0, size=sp.cap, **inc)
    jobs.add(FULL_SEQWRITE, FULL, "native write rate on the full drive (dies x native program unit / native program time)",
        "a sequential write from LBA 0 on the full drive: past a static cache (its first seconds) it runs at the "
        "native NAND's rate, with no cache to fill or fold; with the cache's rate (dies x SLC unit / SLC program) it "
        "tells the program times apart", "write", log_ms=1000, rw="write", bs="128k", iodepth=32, offset=0, size=seq,
        **inc)
    jobs.add(FULL_SEQREAD, FULL, "native read rate (dies x planes x page / native page read)",
        "128KB sequential reads at QD32 of data the fill wrote in order (past the write before): data in native "
        "blocks, where the clean stage read its own writes back from the cache", "read", rw="read", bs="128k",
        iodepth=32, offset=seq, size=sp.read, time_based=1, runtime=secs(2.0 * sp.budget))
    jobs.add(FULL_RANDREAD, FULL, "native read parallelism (the dies that read at once)",
        "4KB random reads at QD32 over the whole full drive: native pages on every die", "read", rw="randread",
        bs="4k", iodepth=32, time_based=1, runtime=secs(2.0 * sp.budget))
    idle, run_s, most = static_idle_times(sp.cap)
    jobs.add(FULL_IDLE_SEQWRITE, FULL, "the static part of the write cache (what a full drive caches)",
        f"a sequential write on the full drive after {idle:.0f} s idle, for {run_s:.0f} s: the idle time folds what the "
        "writes before left in the cache, and on a full drive only the static part comes back (the dynamic part "
        "lives in free native blocks); the bytes written at the cache's rate before the step down to the native "
        "rate are that part", "write", log_ms=1000, rw="write", bs="128k", iodepth=32, offset=seq, size=most,
        runtime=secs(run_s), startdelay=secs(idle), **inc)
    jobs.add(FULL_RANDWRITE, FULL, "spare area (GC onset on the full drive) and the steady state",
        f"128KB random writes at QD32 on the full drive, at most {rand / 1e9:,.0f} GB, in segments of "
        f"{FULL_SEGMENT_S:.0f} s: they run at the native rate until the spare area is used up, then step down to what "
        "garbage collection leaves (the bytes before the step ~ the spare area), and end a bounded time after the "
        "step; 128KB writes reach it sooner than 4KB ones where a drive's small writes are bound by its map cache or "
        "its commands", "write", log_ms=1000, rw="randwrite", bs="128k", iodepth=32, io_size=rand, **inc)
