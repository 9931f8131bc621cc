"""Storage Bench traces as fio iologs (v3) a real target can replay.

Three problems of a plain generated iolog on a real device:
1. nothing wrote the iolog a job file names: :func:`write_storage_bench_iolog`
   writes it, placed by the engine's generator on the *target's* capacity (it
   places a trace on any drive of 1 GB or more), with the target's path as the
   file name (no ``replay_redirect`` needed);
2. an iolog made for a bigger drive would make fio grow a file target to the
   highest offset: :func:`rewrite_iolog` scales offsets to the target
   (``mode="scale"``: positions scale by target/source in chunks of
   ``chunk_bytes``, so runs inside a chunk stay sequential; ``"fold"``: offsets
   wrap modulo the target, keeping runs and gaps but aliasing distant regions),
   aligns them (and lengths) to the target's logical block size, and keeps
   every I/O inside the target;
3. fio 3.33 ignores ``number_ios`` (and a shorter ``runtime`` keeps the queue's
   tail) when replaying: the bound is applied to the file itself
   (``max_ios``, ``max_time_us``).

TRIM records: fio before 3.34 skips them (``trims="drop"`` removes them and
counts them, ``"error"`` refuses, ``"keep"`` leaves them); see
:func:`ssdlab.fio.run.iolog_trim_problem`.

Timestamps of v3 iologs are microseconds since the start (fio's
``utime_since_now``).

API: :func:`write_storage_bench_iolog`, :func:`rewrite_iolog`
(both ``-> IologStats``), :func:`replay_jobfile` (job file text),
:func:`replay_on_target` ``(workload, target, *, size_bytes, destroy_data, max_ios,
max_time_us, ...) -> ReplayRun`` (what ``ssdlab review --device`` runs for a
Storage Bench test),
:func:`main` ``(argv) -> int``: a standalone form of ``ssdlab trace iolog WORKLOAD
--target-bytes N --out FILE [--filename PATH] [--align 4096] [--max-ios N]
[--max-time 600s] [--trims keep|drop|error]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence, Tuple, Union

from ..errors import SsdlabError, TraceError
from ..outputs import atomic_open
from .errors import FioNotFoundError, FioOutputError, FioRunError
from .jobfile import parse_size, parse_time_ns
from .run import FioRun

__all__ = ["IologStats", "ReplayRun", "write_storage_bench_iolog", "rewrite_iolog", "replay_jobfile", "replay_on_target", "scale_offset", "main"]

PathLike = Union[str, "os.PathLike[str]"]
HEADER_V3 = "fio version 3 iolog"
_IO_ACTIONS = ("read", "write", "trim")


@dataclass(frozen=True)
class IologStats:
    """What an iolog holds after rewriting: I/O records by kind, TRIMs
    dropped, records moved to fit or aligned, whether the bound cut it
    (``truncated``), its last timestamp (us) and highest byte touched."""

    records: int
    reads: int
    writes: int
    trims: int
    dropped_trims: int
    adjusted: int
    truncated: bool
    duration_us: int
    max_end_bytes: int


def scale_offset(offset: int, length: int, source_bytes: int, target_bytes: int, *, align_bytes: int = 512,
                 chunk_bytes: int = 1 << 20, mode: str = "scale") -> "tuple[int, int]":
    """One I/O moved from a ``source_bytes`` drive onto ``target_bytes``:
    (offset, length), both multiples of ``align_bytes``, inside the target."""
    if mode == "scale":
        inner = offset % chunk_bytes
        base = (offset - inner) * target_bytes // source_bytes
        base -= base % chunk_bytes
        off = base + inner
    elif mode == "fold":
        off = offset % target_bytes
    else:
        raise ValueError(f"mode '{mode}': use scale or fold")
    off -= off % align_bytes
    ln = -(-length // align_bytes) * align_bytes
    ln = min(ln, target_bytes - target_bytes % align_bytes)
    if off + ln > target_bytes:
        off = (target_bytes - ln) // align_bytes * align_bytes
    return off, ln


def _check_rewrite(trims: str, target_bytes: int, align_bytes: int) -> None:
    if trims not in ("keep", "drop", "error"):
        raise ValueError(f"trims '{trims}': use keep, drop or error")
    if target_bytes < align_bytes:
        raise ValueError(f"target of {target_bytes} B is smaller than one {align_bytes} B block")


def _check_header(path: str, first_line: str) -> None:
    first = first_line.strip()
    if first != HEADER_V3:
        raise FioOutputError(path, f"first line is {first!r}, not '{HEADER_V3}' (only v3 iologs carry timestamps)", line=1)


def _io_record(path: str, parts: List[str], line: str, ln: int) -> Tuple[int, int, int]:
    """An I/O or sync record's timestamp, offset and length; FioOutputError naming line ``ln`` otherwise."""
    if len(parts) != 5 or parts[2] not in _IO_ACTIONS + ("sync", "datasync"):
        raise FioOutputError(path, f"'{line.strip()}' is not 'timestamp filename action offset length'", line=ln)
    try:
        return int(parts[0]), int(parts[3]), int(parts[4])
    except ValueError:
        raise FioOutputError(path, f"'{line.strip()}': timestamp, offset and length must be whole numbers", line=ln) from None


def _fit_offset(off: int, length: int, source_bytes: int, target_bytes: int, align_bytes: int, chunk_bytes: int,
                mode: str) -> Tuple[int, int]:
    """A record's extent on the target: scaled from a source of another size, else only folded in and aligned."""
    if source_bytes != target_bytes:
        return scale_offset(off, length, source_bytes, target_bytes, align_bytes=align_bytes, chunk_bytes=chunk_bytes, mode=mode)
    return scale_offset(off, length, target_bytes, target_bytes, align_bytes=align_bytes, chunk_bytes=chunk_bytes, mode="fold")


def rewrite_iolog(
    src: PathLike,
    dst: PathLike,
    *,
    target_bytes: int,
    source_bytes: Optional[int] = None,
    filename: Optional[str] = None,
    align_bytes: int = 512,
    mode: str = "scale",
    chunk_bytes: int = 1 << 20,
    max_ios: Optional[int] = None,
    max_time_us: Optional[int] = None,
    trims: str = "keep",
    idle_cap_us: Optional[int] = None,
) -> IologStats:
    """Copy a v3 iolog, fitting it to a target of ``target_bytes``: offsets
    scaled from ``source_bytes`` (when given and different; else only moved
    to fit and aligned), file names replaced by ``filename``, at most
    ``max_ios`` I/O records and none after ``max_time_us``. ``idle_cap_us``
    cuts every gap between consecutive timestamps to at most that long (the
    suite's Storage Bench playback: gaps cut to 25 ms), before the time bound
    applies. Raises FioOutputError naming the line of a bad record."""
    _check_rewrite(trims, target_bytes, align_bytes)
    s = os.fspath(src)
    reads = writes = kept_trims = dropped = adjusted = 0
    truncated = False
    last_t = 0
    max_end = 0
    name_seen: Optional[str] = None
    prev_in: Optional[int] = None  # the last timestamp read, before capping
    cut_us = 0  # idle time removed so far
    with open(s, encoding="utf-8") as fin, atomic_open(dst, what="iolog") as fout:
        _check_header(s, fin.readline())
        fout.write(HEADER_V3 + "\n")
        for ln, line in enumerate(fin, start=2):
            parts = line.split()
            if not parts:
                continue
            if len(parts) == 3:  # timestamp filename add|open|close
                if parts[2] == "close":
                    continue  # written at the end, after the last record kept
                name_seen = parts[1]
                fout.write(f"{parts[0]} {filename or parts[1]} {parts[2]}\n")
                continue
            t, off, length = _io_record(s, parts, line, ln)
            if idle_cap_us is not None:
                if prev_in is not None and t - prev_in > idle_cap_us:
                    cut_us += t - prev_in - idle_cap_us
                prev_in = t
                t -= cut_us
            if max_time_us is not None and t > max_time_us:
                truncated = True
                break
            action = parts[2]
            if action == "trim":
                if trims == "error":
                    raise FioOutputError(s, "a TRIM record, and this fio cannot replay TRIM (fio 3.34 or newer can)", line=ln, field="action")
                if trims == "drop":
                    dropped += 1
                    continue
            if action in _IO_ACTIONS:
                if max_ios is not None and reads + writes + kept_trims >= max_ios:
                    truncated = True
                    break
                noff, nlen = _fit_offset(off, length, source_bytes or target_bytes, target_bytes, align_bytes, chunk_bytes, mode)
                adjusted += (noff, nlen) != (off, length)
                off, length = noff, nlen
                max_end = max(max_end, off + length)
                if action == "read":
                    reads += 1
                elif action == "write":
                    writes += 1
                else:
                    kept_trims += 1
            name_seen = parts[1]
            last_t = max(last_t, t)
            fout.write(f"{t} {filename or parts[1]} {action} {off} {length}\n")
        if name_seen is not None:
            fout.write(f"{last_t} {filename or name_seen} close\n")
    return IologStats(reads + writes + kept_trims, reads, writes, kept_trims, dropped, adjusted, truncated, last_t, max_end)


def write_storage_bench_iolog(
    workload: str,
    path: PathLike,
    *,
    target_bytes: int,
    seed: int = 1,
    filename: Optional[str] = None,
    align_bytes: int = 512,
    max_ios: Optional[int] = None,
    max_time_us: Optional[int] = None,
    trims: str = "keep",
    idle_cap_us: Optional[int] = None,
) -> IologStats:
    """Write the iolog of a generated Storage Bench trace (``workload`` as in
    ``ssdlab trace generate``) placed on a target of ``target_bytes`` (at least
    1 GB), bounded and aligned for replay on it. Raises TraceError for a bad
    workload or a target too small."""
    from ..trace import write_generated_trace

    out = os.fspath(path)
    with tempfile.TemporaryDirectory(prefix="ssdlab-iolog-") as tmp:
        raw = os.path.join(tmp, "generated.iolog")
        write_generated_trace(workload, raw, capacity_bytes=int(target_bytes), seed=int(seed), format="fio-iolog")
        return rewrite_iolog(raw, out, target_bytes=int(target_bytes), filename=filename, align_bytes=align_bytes,
                             max_ios=max_ios, max_time_us=max_time_us, trims=trims, idle_cap_us=idle_cap_us)


def replay_jobfile(iolog: PathLike, *, name: str = "storage-bench", iodepth: int = 32, ioengine: str = "libaio",
                   direct: bool = True, log_prefix: Optional[str] = None, no_stall: bool = False) -> str:
    """Job file text replaying ``iolog`` (its records name the target, so no
    ``filename`` is given) with per-second IOPS logs."""
    lines = [
        f"; ssdlab: replay of {os.fspath(iolog)} (bounded and fitted to the target by ssdlab.fio.iolog)",
        f"[{name}]",
        f"read_iolog={os.fspath(iolog)}",
        f"ioengine={ioengine}",
        f"direct={int(direct)}",
        f"iodepth={iodepth}",
        f"write_iops_log={log_prefix or name}",
        "log_avg_msec=1000",
    ]
    if no_stall:
        lines.append("replay_no_stall=1")
    return "\n".join(lines) + "\n"


@dataclass
class ReplayRun:
    """A Storage Bench replay on a real target: fio's run, the iolog's figures
    and what was changed to make it replayable (``notes``)."""

    fio: FioRun
    iolog: IologStats
    notes: Tuple[str, ...]


def replay_on_target(
    workload: str,
    target: PathLike,
    *,
    size_bytes: int = 1_000_000_000,
    destroy_data: Optional[str] = None,
    seed: int = 1,
    iodepth: int = 32,
    max_ios: Optional[int] = None,
    max_time_us: Optional[int] = None,
    no_stall: bool = False,
    workdir: Optional[PathLike] = None,
    fio: Optional[str] = None,
    should_stop: Optional[Callable[[], bool]] = None,
) -> ReplayRun:
    """Replay a generated Storage Bench trace on a block device (checked by
    :mod:`ssdlab.fio.safety`) or on a test file ssdlab creates in a directory
    (``size_bytes``, written once sequentially by fio first so that reads
    touch real blocks; removed afterwards). The iolog is generated for the
    target's size, aligned to its logical block size and bounded by
    ``max_ios``/``max_time_us``; TRIM records are dropped (and counted in the
    notes) when the installed fio is older than 3.34."""
    from .run import FileTarget, find_fio, fio_version, iolog_trim_problem, iolog_v3_problem, run_fio
    from .safety import check_target

    exe = find_fio(fio)
    version = fio_version(exe)
    problem = iolog_v3_problem(version)
    if problem:
        raise FioNotFoundError(problem)
    notes: List[str] = []
    trim_problem = iolog_trim_problem(version)
    check = check_target(os.fspath(target), destroy_data=destroy_data)
    tmp = tempfile.TemporaryDirectory(prefix="ssdlab-replay-") if workdir is None else None
    wd = tmp.name if tmp is not None else os.fspath(workdir)  # type: ignore[arg-type]
    try:
        os.makedirs(wd, exist_ok=True)
        log = os.path.join(wd, f"{workload}.iolog")

        def go(path: str, nbytes: int, align: int) -> ReplayRun:
            st = write_storage_bench_iolog(workload, log, target_bytes=nbytes, seed=seed, filename=path, align_bytes=align,
                                           max_ios=max_ios, max_time_us=max_time_us, trims="drop" if trim_problem else "keep")
            if st.dropped_trims:
                notes.append(f"{st.dropped_trims:,} TRIM records dropped: {trim_problem}")
            if st.truncated:
                notes.append(f"replay bounded to {st.records:,} I/Os ({st.duration_us / 1e6:,.1f} s of trace time)")
            r = run_fio(replay_jobfile(log, name=workload, iodepth=iodepth, no_stall=no_stall), wd, fio=exe, should_stop=should_stop)
            r.target = check
            return ReplayRun(r, st, tuple(notes))

        if check.kind == "block":
            if not check.size_bytes:
                raise FioRunError(f"cannot read the size of {check.path} from /sys")
            return go(check.resolved, check.size_bytes, max(512, check.logical_block_bytes))
        with FileTarget(check.path, int(size_bytes)) as path:
            layout = f"[layout]\nfilename={path}\nsize={int(size_bytes)}\nrw=write\nbs=1m\nioengine=libaio\ndirect=1\niodepth=8\n"
            run_fio(layout, os.path.join(wd, "layout"), fio=exe, should_stop=should_stop)
            notes.append(f"test file of {int(size_bytes):,} B written once sequentially before the replay")
            return go(path, int(size_bytes), 4096)
    finally:
        if tmp is not None:
            tmp.cleanup()


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``ssdlab trace iolog WORKLOAD --target-bytes N --out FILE``: write a
    replayable iolog; one line of figures, or one error line (exit 2)."""
    ap = argparse.ArgumentParser(prog="ssdlab trace iolog", description="Write a Storage Bench iolog fitted to a real target.")
    ap.add_argument("workload")
    ap.add_argument("--target-bytes", required=True, help="the target's size (bytes or fio sizes: 64g)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--filename", help="the target's path, written into every record")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--align", default="512", help="offset/length alignment (the target's logical block size)")
    ap.add_argument("--max-ios", type=int)
    ap.add_argument("--max-time", help="keep records up to this trace time (fio times: 600, 10m)")
    ap.add_argument("--trims", choices=["keep", "drop", "error"], default="keep")
    args = ap.parse_args(argv)
    try:
        tb = parse_size(args.target_bytes)
        al = parse_size(args.align)
        if not isinstance(tb, int) or not isinstance(al, int):
            raise TraceError("--target-bytes and --align take sizes, not percentages")
        mt = parse_time_ns(args.max_time) // 1000 if args.max_time else None
        st = write_storage_bench_iolog(args.workload, args.out, target_bytes=tb, seed=args.seed, filename=args.filename,
                                       align_bytes=al, max_ios=args.max_ios, max_time_us=mt, trims=args.trims)
    except (SsdlabError, ValueError, OSError) as e:
        sys.stderr.write(f"ssdlab: error: {e}\n")
        return 2
    sys.stdout.write(f"{args.out}: {st.records:,} I/Os ({st.reads:,} reads, {st.writes:,} writes, {st.trims:,} TRIMs; "
                     f"{st.dropped_trims:,} TRIMs dropped), {st.duration_us / 1e6:,.1f} s, highest byte {st.max_end_bytes:,}"
                     f"{', cut at the bound' if st.truncated else ''}\n")
    return 0
