"""The probe's clean stage: after a TRIM of the whole target, what a drive does before garbage collection (the
write buffer, writes and reads at several depths and transfer sizes, data reduction, read-ahead, the layout of data
written at random, the map unit)."""

from __future__ import annotations

from typing import Any, Dict

from ...suite.fio import DATA_PATTERN_OPTIONS
from .names import (
    CLEAN,
    ERASE,
    RANDREAD_128K_QD32,
    RANDREAD_RANDOMLY_WRITTEN,
    RANDRW_4K_QD4,
    RANDWRITE_SPAN,
    SEQREAD_4M_QD4,
    SEQREAD_RANDOMLY_WRITTEN,
    SEQREAD_WINDOW,
    SEQWRITE_4M_QD4,
    SEQWRITE_128K_QD1,
    SEQWRITE_128K_QD32,
    UNWRITTEN_READ,
    UNWRITTEN_SEQREAD,
    GiB,
    MiB,
    burst,
    flushwrite,
    randread_4k,
    randread_qd1,
    randwrite_4k,
    rewrite,
    seqread_4k,
    seqread_128k,
    seqread_small,
    seqwrite_pattern,
    seqwrite_small,
)
from .spec import JobList, Spans, align, secs


def clean_stage(jobs: JobList, sp: Spans, trim: bool) -> None:
    """The clean stage's jobs, in the order they run."""
    _clean_start(jobs, sp, trim)
    _clean_writes(jobs, sp)
    _clean_reads(jobs, sp)
    _clean_layout(jobs, sp)


def _clean_start(jobs: JobList, sp: Spans, trim: bool) -> None:
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
            startdelay=secs(max(1.0, 3.0 * sp.budget)), **inc)
        off += s
        if s == 8 * MiB:
            # The small writes and the flushes run while a write cache is still empty, so that a flush programs a
            # cached drive's SLC pages, as the fit takes them: after the bursts a cache of about their size is
            # full on one drive and not on a twin with a slightly larger one. After the first burst, not before:
            # a flush right after the full TRIM waits for the TRIM's map updates.
            _small_writes(jobs, sp)
    if off == d0:
        _small_writes(jobs, sp)


def _small_writes(jobs: JobList, sp: Spans) -> None:
    inc = dict(DATA_PATTERN_OPTIONS["incompressible"])
    for qd in (1, 4, 32):
        jobs.add(randwrite_4k(qd), CLEAN, "write parallelism and command cost",
            "4KB random writes on a clean drive: QD1 gives the write latency (command cost, buffer), QD32 the "
            "controller's and the dies' ceiling", "write", rw="randwrite", bs="4k", iodepth=qd, offset=sp.read,
            size=sp.write, time_based=1, runtime=sp.short, **inc)
    for bs in ("4k", "16k", "64k"):
        jobs.add(flushwrite(bs), CLEAN, "program time (tPROG) and the program unit",
            f"{bs} random writes one at a time, each followed by a FLUSH CACHE (fio fsync=1): the flush returns once "
            "the data is programmed, so its latency less the plain write's is the program time plus the unit's "
            "transfer to the die; a flush of less than a program unit programs (pads) the whole unit, so the "
            "latency stays flat over 4-64KB (a drive that acknowledges flushes at once has power-loss protection)",
            "write", rw="randwrite", bs=bs, iodepth=1, fsync=1, offset=sp.read, size=sp.write, time_based=1,
            runtime=sp.short, **inc)


def _clean_writes(jobs: JobList, sp: Spans) -> None:
    inc = dict(DATA_PATTERN_OPTIONS["incompressible"])
    d0 = sp.read + sp.write
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
    atto_span = align(min(128 * MiB, sp.cap // 16))
    jobs.add(SEQWRITE_4M_QD4, CLEAN, "reads right after writes, large transfers",
        "4MB sequential writes at QD4 over a short span, as ATTO's largest transfers: the write path with many "
        "die operations per command, and what the buffer takes of the span", "write", rw="write", bs="4m",
        iodepth=4, offset=d0, size=atto_span, **inc)
    jobs.add(SEQREAD_4M_QD4, CLEAN, "reads right after writes, large transfers",
        "the same span read back at once in 4MB transfers at QD4: reads that meet the programs the buffer still "
        "holds, and how many dies a request reads at once", "read", rw="read", bs="4m", iodepth=4, offset=d0,
        size=atto_span)


def _clean_reads(jobs: JobList, sp: Spans) -> None:
    inc = dict(DATA_PATTERN_OPTIONS["incompressible"])
    d0 = sp.read + sp.write
    for qd in (1, 2, 3, 4, 8, 16, 32):
        # the first after the writes starts after 1 s of idle: the programs the buffer still holds would hold
        # its reads (by up to half a program each), and QD1 is where the die read's own time is measured
        idle: Dict[str, Any] = {"startdelay": secs(1.0)} if qd == 1 else {}
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
    jobs.add(SEQREAD_WINDOW, CLEAN, "read-ahead window",
        "sequential 8KB reads at QD8: a deep queue of small transfers outruns the die reads unless the read-ahead "
        "keeps enough of them in flight, so the rate grows with the window (at QD1-4 and at 32KB and more the "
        "stream is bound elsewhere and windows of 1 and 2 MiB read alike)", "read", rw="read", bs="8k", iodepth=8,
        size=sp.read, time_based=1, runtime=sp.short)


def _clean_layout(jobs: JobList, sp: Spans) -> None:
    inc = dict(DATA_PATTERN_OPTIONS["incompressible"])
    w0 = sp.read
    rnd_span = align(min(256 * MiB, sp.cap // 16))
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

