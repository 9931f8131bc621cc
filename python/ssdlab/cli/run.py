"""The commands that run phases on one simulated drive: ``ssdlab run`` (an
fio-style job), ``ssdlab replay`` (a trace) and ``ssdlab storage-bench`` (a
Storage Bench trace as the suite runs it). Each preconditions the drive,
runs the phase, idles after it when asked, and prints the summary or
fio-shaped JSON of what finished."""

from __future__ import annotations

import argparse
import os
import re
import sys
from typing import Any, Callable, Dict, List, NamedTuple, Optional

from .. import _core
from ..drive import Drive
from ..errors import MemoryLimitError
from ..progress import ProgressBar
from ..results import PhaseResult, command_line, fio_document
from ..sim import Simulator
from ..suite.definitions import storage_bench_method
from ..suite.states import STATE_ABOUT, STATES
from ..suite.vocabulary import StorageBenchMethod
from ..text import format_summary
from ..trace import TRACE_FORMATS, storage_bench_traces
from .flags import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    UsageError,
    add_drive,
    add_json,
    add_output,
    add_progress,
    add_seed,
    add_settings,
    duration,
    emit,
    idle_cap,
    load_drive,
    seed,
    size_bytes,
    size_text,
    whole,
)

__all__ = ["add_parsers", "add_import_flags"]

#: CLI flag (argparse dest) -> fio key, passed to the engine as the user typed it.
_JOB_FLAGS = ("name", "rw", "bs", "bssplit", "blockalign", "iodepth", "runtime", "size", "offset", "io_size",
              "number_ios", "rwmixread", "data_pattern", "log_avg_msec", "randseed", "force")

#: The Destroyer is not a suite test: a filled drive, gaps cut to 25 ms (as its reviews did).
_DESTROYER_METHOD: StorageBenchMethod = {"test_id": None, "state": "filled",
                                         "replay": {"mode": "as-recorded", "idle_cap": "25ms", "lay_down_reads": True}}


def _add_sim_flags(p: argparse.ArgumentParser, what: str) -> None:
    """Flags shared by the commands that run a simulated drive."""
    add_drive(p)
    add_settings(p, "change a drive field, e.g. nand.tprog_ns=1800000 (repeatable)")
    p.add_argument("--link", type=host_link, metavar="LINK",
                   help="test the drive on this host link: sata-3g or sata-6g for a SATA drive, pcieG-xL for an NVMe "
                        "drive (G 3-5, L 1, 2, 4, 8 or 16; e.g. pcie3-x4: a Gen4 drive in a Gen3 slot); bandwidth and "
                        "command overhead follow from the link")
    p.add_argument(
        "--precondition",
        choices=STATES,
        help=f"state before the {what}: " + "; ".join(f"{s} = {STATE_ABOUT[s]}" for s in STATES),
    )
    p.add_argument("--idle-after", dest="idle_after", type=duration, metavar="DURATION", help=f"idle time after the {what} (background GC), e.g. 5s")
    add_seed(p)
    p.add_argument("--check", action="store_true", help="checking mode: verify every read and each phase against a shadow model")
    p.add_argument("--memory-limit", dest="memory_limit", type=memory_limit, metavar="SIZE",
                   help="refuse drives needing more RAM (default 8g; at least what the drive needs: 'ssdlab drive show')")
    add_json(p, "print fio-shaped JSON to stdout instead of the summary")
    add_output(p, "also write the JSON to FILE")
    add_progress(p)


def add_import_flags(p: argparse.ArgumentParser) -> None:
    """How a trace file is read: the options of the engine's importers."""
    p.add_argument("--format", choices=TRACE_FORMATS, help="trace format (default auto)")
    p.add_argument("--device", help="keep only this device (MSR host_disk, SYSTOR LUN, SPC ASU, ...)")
    p.add_argument("--device-mapping", dest="device_mapping", choices=["merge", "concatenate"],
                   help="how devices share the drive (default merge)")
    p.add_argument("--device-region", dest="device_region", type=size_text, metavar="SIZE",
                   help="region per device with --device-mapping concatenate")
    oor = p.add_mutually_exclusive_group()
    oor.add_argument("--fold", dest="out_of_range", action="store_const", const="fold", help="fold I/O past the capacity back in (default)")
    oor.add_argument("--reject", dest="out_of_range", action="store_const", const="reject", help="stop at I/O past the capacity")
    p.add_argument("--skip-bad-lines", dest="skip_bad_lines", action="store_true", help="skip (and count) malformed lines")


def add_parsers(sub: Any) -> None:
    p = sub.add_parser(
        "run",
        help="run one fio-style job on a simulated drive",
        description="Run one fio-style job on a simulated drive and print a summary (or fio-shaped JSON). "
        "Sizes: k/m/g = powers of 1024 as in fio; results: MB/s = 1e6 B/s. --precondition works over the "
        "job's region (--offset, --size).",
    )
    p.add_argument("--name", help="job name (default: the rw mode)")
    p.add_argument("--rw", required=True, help="read, write, randread, randwrite, readwrite, randrw, trim, randtrim")
    p.add_argument("--bs", help="block size (default 4k)")
    p.add_argument("--bssplit", help="block size mix, e.g. 4k/50:64k/50 (percentages add up to 100, as in fio)")
    p.add_argument("--blockalign", help="offset alignment (default: the smallest block size)")
    p.add_argument("--iodepth", help="queue depth (default 1; a SATA drive's NCQ takes up to 32 at once, an NVMe queue queue_depth - 1)")
    p.add_argument("--runtime", help="simulated run time, e.g. 60s, 5m (a bare number is seconds; at most 7 days without --force)")
    p.add_argument("--size", help="region length (default: the whole drive from --offset); also 75%%")
    p.add_argument("--offset", help="region start (default 0)")
    p.add_argument("--io-size", dest="io_size", help="stop after this many bytes (at most 100 x the capacity without --force)")
    p.add_argument("--number-ios", dest="number_ios", help="stop after this many I/Os (0: no limit, as in fio)")
    p.add_argument("--rwmixread", help="percent reads in mixed modes (default 50)")
    p.add_argument("--data-pattern", dest="data_pattern", help="incompressible (default), repeated, compressible, zeros, ratio:R")
    p.add_argument("--log-avg-msec", dest="log_avg_msec", help="series interval in ms (default 1000)")
    p.add_argument("--randseed", help="seed of the job's offsets only (default: from --seed)")
    p.add_argument("--force", action="store_true", default=None, help="run beyond the maxima (runtime 7 days; io_size, number_ios 100 x capacity)")
    _add_sim_flags(p, "job")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser(
        "replay",
        help="replay a trace file or a generated Storage Bench trace on a simulated drive",
        description="Replay a trace (Storage Bench playback): as recorded (each I/O at its timestamp, idle "
        "gaps kept so idle-time GC can use them; --idle-cap shortens them) or as fast as possible. Reports "
        "data rates over busy time (MB/s = 1e6 B/s). I/O past the drive's capacity is folded in by default.",
    )
    p.add_argument("file", nargs="?", help="trace file (format detected; gzip/bzip2/xz)")
    p.add_argument("--generated", metavar="WORKLOAD", help="a Storage Bench workload id, e.g. heavy-2011")
    _add_playback_flags(p, "seed of the generated trace (default: --seed)", "default as-recorded",
                        "shorten every idle gap to at most this, e.g. 25ms (default none: gaps kept)",
                        "replay only the first N records (fio's number_ios)",
                        "replay only the records of the first DURATION of trace time, e.g. 10min (fio's runtime)",
                        mode_default="as-recorded", iodepth=True)
    add_import_flags(p)
    p.add_argument("--data-pattern", dest="data_pattern", help="data pattern of the trace's writes (default incompressible)")
    _add_sim_flags(p, "replay")
    p.set_defaults(func=cmd_replay)

    ids = [w["id"] for w in storage_bench_traces()]
    p = sub.add_parser(
        "storage-bench",
        help="run a Storage Bench workload (a generated desktop trace) and print its metrics",
        description="Storage Bench, as the suite runs it (ssdlab test storage-bench-WORKLOAD gives the same "
        "figures for the same drive and seed): replay a generated desktop trace that matches the published "
        "statistics (`ssdlab trace stats --generated ID` shows the match) on a secure-erased drive (--full: on "
        "a drive filled first, test storage-bench-WORKLOAD-full), each I/O at its recorded time with every idle "
        "gap cut to at most 25 ms (--idle-cap none keeps the gaps). Idle time does not count. Metrics: average "
        "data rate = bytes / busy time (all, reads, writes; MB/s = 1e6 B/s), busy time, average IOPS over busy "
        "time, latency mean and p99. destroyer-2013 is not a suite test: it runs on a filled drive with gaps "
        "cut to 25 ms, as its reviews did.",
    )
    p.add_argument("--bench", required=True, choices=ids, help="which Storage Bench workload")
    p.add_argument("--full", action="store_true",
                   help="fill the drive first (the 2015 worst case; test storage-bench-WORKLOAD-full) instead of a secure erase")
    _add_playback_flags(p, "seed of the generated trace (default: --seed)", "default as-recorded",
                        "shorten every idle gap to at most this (default 25ms, the method); 'none' keeps the gaps",
                        "replay only the first N records (a partial run)",
                        "replay only the first DURATION of trace time (a partial run)")
    _add_sim_flags(p, "trace")
    p.set_defaults(func=cmd_storage_bench)


def _add_playback_flags(p: argparse.ArgumentParser, trace_seed: str, mode: str, cap: str, number_ios: str,
                        runtime: str, mode_default: Optional[str] = None, iodepth: bool = False) -> None:
    """How a trace is played back (``replay`` and ``storage-bench``)."""
    p.add_argument("--trace-seed", dest="trace_seed", type=seed, metavar="N", help=trace_seed)
    p.add_argument("--mode", choices=["as-recorded", "as-fast-as-possible"], default=mode_default, help=mode)
    p.add_argument("--idle-cap", dest="idle_cap", type=idle_cap, metavar="DURATION", help=cap)
    if iodepth:
        p.add_argument("--iodepth", type=whole, metavar="N", help="queue depth for records that carry none (default 1)")
    p.add_argument("--log-avg-msec", dest="log_avg_msec", type=whole, help="series interval in ms (default 1000)")
    p.add_argument("--number-ios", dest="number_ios", type=whole, metavar="N", help=f"{number_ios}; 0: every record, as in fio")
    p.add_argument("--runtime", type=duration, metavar="DURATION", help=runtime)


# ---------------------------------------------------------------------------
# the commands
# ---------------------------------------------------------------------------


def _reproduce(cmd: str, seed: int) -> str:
    """The command with the seed made explicit."""
    if "--seed" in sys.argv[1:] or any(a.startswith("--seed=") for a in sys.argv[1:]):
        return cmd
    return f"{cmd} --seed {seed}"


class MemoryLimit(NamedTuple):
    """``--memory-limit`` as typed and in bytes."""

    text: str
    bytes: int


def memory_limit(text: str) -> MemoryLimit:
    return MemoryLimit(text, size_bytes(text))


#: PCIe generations and lane counts a link may have (the engine's tables).
PCIE_GENS = (3, 4, 5)
PCIE_LANES = (1, 2, 4, 8, 16)


def host_link(text: str) -> str:
    """``--link``: sata-3g, sata-6g or pcieG-xL."""
    m = re.fullmatch(r"pcie(\d+)-x(\d+)", text)
    if text in ("sata-3g", "sata-6g") or (m and int(m.group(1)) in PCIE_GENS and int(m.group(2)) in PCIE_LANES):
        return text
    raise argparse.ArgumentTypeError(f"'{text}': a link is sata-3g, sata-6g or pcieG-xL with G in 3, 4, 5 and L in 1, 2, 4, 8, 16")


def with_link(drive: Drive, link: str) -> Drive:
    """The drive on another host link of its own kind: the link's bandwidth
    and command overhead replace whatever the file gives."""
    if link.startswith("sata"):
        if drive.is_nvme:
            raise UsageError(f"argument --link: {link} is a SATA link and {drive.id} is an NVMe drive: give pcieG-xL")
        return drive.with_changes({"host.interface": link, "host.link_bytes_per_s": 0, "host.command_overhead_ns": 0})
    if not drive.is_nvme:
        raise UsageError(f"argument --link: {link} is a PCIe link and {drive.id} is a SATA drive: give sata-3g or sata-6g")
    gen, lanes = (int(x) for x in link[4:].split("-x"))
    return drive.with_changes({"host.pcie_gen": gen, "host.pcie_lanes": lanes, "host.link_bytes_per_s": 0,
                               "host.command_overhead_ns": 0})


def _simulator(args: argparse.Namespace) -> "tuple[Simulator, Drive]":
    drive = load_drive(args.drive, args.set)
    if getattr(args, "link", None):
        drive = with_link(drive, args.link)
    limit: Optional[MemoryLimit] = args.memory_limit
    try:
        sim = Simulator(drive, seed=args.seed, check=args.check, memory_limit_bytes=None if limit is None else limit.bytes)
    except MemoryLimitError as e:
        if limit is None:
            raise
        need = int(getattr(e, "needed_bytes", 0))
        mib = -(-need // (1 << 20))
        what = "in checking mode " if args.check else ""
        raise UsageError(f"argument --memory-limit: {limit.text} ({limit.bytes:,} B) is less than the RAM this drive needs {what}"
                         f"({need:,} B, {need / (1 << 20):.2f} MiB); give at least --memory-limit {mib}m") from None
    return sim, drive


def _execute(
    args: argparse.Namespace,
    sim: Simulator,
    drive: Drive,
    man: Dict[str, Any],
    label: str,
    phase: Callable[[ProgressBar], PhaseResult],
    span: Optional[int] = None,
    offset: int = 0,
) -> int:
    """Precondition (over span/offset), run the measured phase, idle after;
    print the summary or JSON of what finished; Ctrl-C -> exit 130."""
    man["precondition"] = args.precondition
    if args.idle_after:
        man["idle_after"] = args.idle_after.text

    def bar(text: str) -> ProgressBar:
        return ProgressBar(text, force=args.progress)

    pre: List[PhaseResult] = []
    result: Optional[PhaseResult] = None
    after: List[PhaseResult] = []
    interrupted = False
    try:
        if args.precondition:
            b = bar(f"precondition {args.precondition}")
            try:
                pre = sim.precondition(args.precondition, span=span, offset=offset, progress=b)
            finally:
                b.close()
        b = bar(label)
        try:
            result = phase(b)
        finally:
            b.close()
        if args.idle_after is not None:
            after.append(sim.idle(duration_ns=args.idle_after.ns))
            after[-1].data["jobname"] = f"idle {args.idle_after.text}"
    except KeyboardInterrupt as e:
        interrupted = True
        partial = getattr(e, "result", None)
        done = list(sim.history)
        if partial is not None and partial not in done:
            done.append(partial)
        if result is None and args.precondition and not pre:
            # interrupted while preconditioning: every finished phase is preconditioning
            pre, result = done[:-1], (done[-1] if done else None)
            man["interrupted_during"] = "precondition"
        elif result is None:
            result = done[-1] if len(done) > len(pre) else None
            man["interrupted_during"] = "job"
        else:
            man["interrupted_during"] = "idle"
    man["wall_time_s"] = round(sum(p.wall_time_s for p in sim.history), 3)
    if result is None:
        print("ssdlab: interrupted before any phase finished", file=sys.stderr)
        return EXIT_INTERRUPTED
    finished = result
    emit(args, fio_document([finished], man, phases=sim.history),
         lambda: format_summary(finished, man, preconditioning=pre, after=after, drive_name=drive.name,
                                reproduce=_reproduce(str(man["command"]), args.seed)))
    sys.stdout.flush()
    if interrupted:
        print(f"ssdlab: interrupted during the {man.get('interrupted_during', 'run')}; figures above cover what finished", file=sys.stderr)
        return EXIT_INTERRUPTED
    return EXIT_OK


def cmd_run(args: argparse.Namespace) -> int:
    sim, drive = _simulator(args)
    job: Dict[str, Any] = {key: getattr(args, key) for key in _JOB_FLAGS if getattr(args, key) is not None}
    norm = sim.parse_job(job)  # fail fast: every flag checked before any phase runs
    man = sim.manifest(command=command_line())
    man["job"] = job
    return _execute(args, sim, drive, man, f"job {norm['name']}", lambda b: sim.run(norm, progress=b),
                    span=norm["size_bytes"], offset=norm["offset_bytes"])


_FILE_ONLY = ("format", "device", "device_mapping", "device_region", "data_pattern")


def cmd_replay(args: argparse.Namespace) -> int:
    if (args.file is None) == (args.generated is None):
        raise UsageError("replay: give a trace FILE or --generated WORKLOAD (one of them)")
    if args.generated is not None and not args.generated.strip():
        raise UsageError("argument --generated: an empty workload id; 'ssdlab trace workloads' lists them")
    sim, drive = _simulator(args)
    options: Dict[str, Any] = {}
    if args.file is not None:
        if args.trace_seed is not None:
            raise UsageError("argument --trace-seed: applies to --generated, not to a trace file")
        if args.device_mapping == "concatenate" and not args.device_region:
            raise UsageError("argument --device-region: needed with --device-mapping concatenate")
        region = _core.parse_size_bytes(args.device_region, sim.capacity_bytes, "device_region") if args.device_region else None
        options = {
            "format": args.format,
            "device": args.device,
            "device_mapping": args.device_mapping,
            "device_region_bytes": region,
            "out_of_range": args.out_of_range,
            "skip_bad_lines": args.skip_bad_lines or None,
            "data_pattern": args.data_pattern,
        }
    else:
        for flag in _FILE_ONLY:
            if getattr(args, flag) is not None:
                raise UsageError(f"argument --{flag.replace('_', '-')}: applies to a trace file, not to --generated")
    cap = args.idle_cap if args.idle_cap is not None and args.idle_cap.ns is not None else None
    runtime = args.runtime.text if args.runtime is not None else None
    # storage-bench: the suite's playback writes first what the trace reads before writing it
    lay_down = getattr(args, "lay_down_reads", None)
    man = sim.manifest(command=command_line())
    man["replay"] = {"file": args.file, "generated": args.generated, "trace_seed": args.trace_seed, "mode": args.mode,
                     "idle_cap": None if cap is None else cap.text, "number_ios": args.number_ios, "runtime": runtime,
                     "lay_down_reads": lay_down}
    if getattr(args, "storage_bench_test", None):
        man["storage_bench_test"] = args.storage_bench_test
    label = args.generated or os.path.basename(args.file)
    kwargs = {k: v for k, v in options.items() if v is not None}
    return _execute(
        args, sim, drive, man, label,
        lambda b: sim.replay(args.file, generated=args.generated, seed=args.trace_seed, mode=args.mode,
                             iodepth=args.iodepth, idle_cap_ns=None if cap is None else cap.ns, log_avg_msec=args.log_avg_msec,
                             number_ios=args.number_ios, runtime=runtime, lay_down_reads=lay_down, progress=b, **kwargs),
    )


def cmd_storage_bench(args: argparse.Namespace) -> int:
    # One definition: the suite's test description gives the state and the playback.
    method = storage_bench_method(args.bench, full=args.full)
    if method is None:
        if args.full:
            raise UsageError(f"argument --full: {args.bench} is not a suite test; give --precondition instead")
        method = _DESTROYER_METHOD
    if args.precondition is not None and args.full:
        raise UsageError("argument --full: give --full or --precondition, not both")
    replay = method["replay"]
    # the run is the suite test only as the method has it (whole trace, the test's state and playback)
    same_as_test = (args.precondition in (None, method["state"]) and args.mode in (None, replay.get("mode"))
                    and (args.idle_cap is None or args.idle_cap.text == replay.get("idle_cap"))
                    and not args.number_ios and args.runtime is None and args.trace_seed is None
                    and not args.set and not args.link)
    if args.precondition is None:
        args.precondition = method["state"]
    if args.mode is None:
        args.mode = replay.get("mode", "as-recorded")
    if args.idle_cap is None and "idle_cap" in replay:
        args.idle_cap = idle_cap(replay["idle_cap"])
    args.lay_down_reads = replay.get("lay_down_reads")
    args.storage_bench_test = method["test_id"] if same_as_test else None
    args.file = None
    args.generated = args.bench
    args.iodepth = None
    for flag in _FILE_ONLY + ("out_of_range",):
        setattr(args, flag, None)
    args.skip_bad_lines = False
    return cmd_replay(args)
