"""The ``ssdlab`` command (also ``python -m ssdlab``).

Commands:
  ssdlab run --drive ID_OR_FILE --rw randwrite --bs 4k --iodepth 32 --runtime 60s ...
  ssdlab replay FILE | --generated WORKLOAD [--mode as-recorded|as-fast-as-possible]
  ssdlab drives
  ssdlab drive show ID_OR_FILE
  ssdlab trace stats FILE [--format ...] | --generated WORKLOAD
  ssdlab trace generate WORKLOAD --out FILE
  ssdlab trace workloads
  ssdlab tests
  ssdlab test TEST_ID --drive ID_OR_FILE [--quick] [--json]
  ssdlab review --drive A --drive B ... --out DIR [--jobs N] [--tests ...] [--quick]
  ssdlab report RESULTS... --out DIR
  ssdlab calibrate [--drive ID ...] [--kind measured|rated] [--table FILE] [--json]
  ssdlab spec ID_OR_FILE [--json]

Sizes take fio's suffixes: k, m, g, t are powers of 1024 (``8g`` = 8 GiB),
also written ``kb``/``KiB``/``GB``...: ``--capacity 120GB`` means 120 GiB as in
fio; give bytes (``120000000000``) for a decimal 120GB. Results use MB/s =
1e6 B/s and GB = 1e9 B. Bad input prints one line ``ssdlab: error: ...`` and
exits 2; Ctrl-C prints what finished and exits 130.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Callable, Dict, List, NoReturn, Optional, Sequence, TextIO

from . import _core
from .drive import Drive
from .errors import (
    DriveError,
    IntegrityError,
    SsdlabError,
    workload_error,
)
from .progress import ProgressBar
from .results import PhaseResult, command_line, fio_document, format_summary, manifest
from .sim import Simulator
from .traces import (
    DEFAULT_CAPACITY_BYTES,
    TRACE_FORMATS,
    generated_stats,
    storage_bench_traces,
    trace_stats,
    write_generated_trace,
)

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

DEFAULT_DRIVE = "generic-mlc-120"


class UsageError(Exception):
    """A bad command line, reported as one line and exit 2."""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage dump) and exit code 2."""

    def error(self, message: str) -> NoReturn:
        hint = f" (see '{self.prog} --help')"
        raise UsageError(f"{message}{hint}")


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def _parse_set(items: Optional[Sequence[str]]) -> Dict[str, Any]:
    """``--set nand.tprog_ns=1800000`` -> {"nand.tprog_ns": 1800000}; values
    are JSON when they parse as JSON (numbers, true/false), else strings."""
    out: Dict[str, Any] = {}
    for item in items or ():
        if "=" not in item:
            raise UsageError(f"argument --set: '{item}' must be SECTION.FIELD=VALUE, e.g. nand.tprog_ns=1800000")
        k, v = item.split("=", 1)
        try:
            out[k.strip()] = json.loads(v)
        except ValueError:
            out[k.strip()] = v
    return out


def _load_drive(spec: str, changes: Optional[Sequence[str]] = None) -> Drive:
    d = Drive.load(spec)
    ch = _parse_set(changes)
    return d.with_changes(ch) if ch else d


def _capacity(args: argparse.Namespace) -> int:
    if getattr(args, "capacity", None):
        cap = _core.parse_size_bytes(args.capacity, 0, "capacity")
        if cap <= 0:
            raise workload_error("capacity", f"'{args.capacity}' must be a positive size")
        return cap
    if getattr(args, "drive", None):
        return _load_drive(args.drive).capacity_bytes
    return DEFAULT_CAPACITY_BYTES


def _print_json(doc: Any, out: TextIO = sys.stdout) -> None:
    out.write(json.dumps(doc, indent=2, allow_nan=False, default=_json_default))
    out.write("\n")
    out.flush()


def _json_default(o: Any) -> Any:
    if hasattr(o, "tolist"):
        return o.tolist()
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def _write_output(path: str, doc: Any) -> None:
    try:
        with open(path, "w", encoding="utf-8") as f:
            _print_json(doc, f)
    except OSError as e:
        raise UsageError(f"argument --output: cannot write {path}: {e.strerror or e}") from None


def _gb(b: float) -> str:
    return f"{b / 1e9:,.2f} GB"


# ---------------------------------------------------------------------------
# ssdlab run
# ---------------------------------------------------------------------------

# CLI flag -> fio key passed to the engine as the user typed it.
_JOB_FLAGS = {
    "name": "name",
    "rw": "rw",
    "bs": "bs",
    "bssplit": "bssplit",
    "blockalign": "blockalign",
    "iodepth": "iodepth",
    "runtime": "runtime",
    "size": "size",
    "offset": "offset",
    "io_size": "io_size",
    "number_ios": "number_ios",
    "rwmixread": "rwmixread",
    "data": "data_pattern",
    "log_avg_msec": "log_avg_msec",
    "randseed": "randseed",
}


def _add_progress_flags(p: argparse.ArgumentParser) -> None:
    prog = p.add_mutually_exclusive_group()
    prog.add_argument("--progress", dest="progress", action="store_true", default=None, help="always show progress on stderr")
    prog.add_argument("--no-progress", dest="progress", action="store_false", help="never show progress")


def _add_sim_flags(p: argparse.ArgumentParser, what: str) -> None:
    """Flags shared by the commands that run a simulated drive."""
    p.add_argument("--drive", default=DEFAULT_DRIVE, help=f"preset id or .toml/.json file (default {DEFAULT_DRIVE})")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="change a drive field, e.g. nand.tprog_ns=1800000 (repeatable)")
    p.add_argument("--link", choices=["sata-3g", "sata-6g"], help="test the drive on this host link (usable bandwidth and command overhead of the preset)")
    p.add_argument(
        "--precondition",
        choices=["clean", "fill", "filled", "dirty", "tortured"],
        help=f"state before the {what}: clean = secure erase; fill/filled = clean + one sequential 128KB QD32 "
        "incompressible pass; dirty = filled + a second pass; tortured = filled + 20 min of 4KB random QD32",
    )
    p.add_argument("--idle-after", dest="idle_after", metavar="DURATION", help=f"idle time after the {what} (background GC), e.g. 5s")
    p.add_argument("--seed", default="1", help="master seed (default 1)")
    p.add_argument("--check", action="store_true", help="checking mode: verify every read and each phase against a shadow model")
    p.add_argument("--memory-limit", dest="memory_limit", metavar="SIZE", help="refuse drives needing more RAM (default 8g)")
    p.add_argument("--json", action="store_true", help="print fio-shaped JSON to stdout instead of the summary")
    p.add_argument("--output", metavar="FILE", help="also write the JSON to FILE")
    _add_progress_flags(p)


def _add_run(sub: Any) -> None:
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
    p.add_argument("--bssplit", help="block size mix, e.g. 4k/50:64k/50")
    p.add_argument("--blockalign", help="offset alignment (default: the smallest block size)")
    p.add_argument("--iodepth", help="queue depth (default 1; the drive's NCQ takes up to 32)")
    p.add_argument("--runtime", help="simulated run time, e.g. 60s, 5m (a bare number is seconds)")
    p.add_argument("--size", help="region length (default: the whole drive from --offset); also 75%%")
    p.add_argument("--offset", help="region start (default 0)")
    p.add_argument("--io-size", dest="io_size", help="stop after this many bytes")
    p.add_argument("--number-ios", dest="number_ios", help="stop after this many I/Os")
    p.add_argument("--rwmixread", help="percent reads in mixed modes (default 50)")
    p.add_argument("--data", help="incompressible (default), repeated, compressible, zeros, ratio:R")
    p.add_argument("--log-avg-msec", dest="log_avg_msec", help="series interval in ms (default 1000)")
    p.add_argument("--randseed", help="seed of the job's offsets only (default: from --seed)")
    _add_sim_flags(p, "job")
    p.set_defaults(func=cmd_run)


def _add_import_flags(p: argparse.ArgumentParser) -> None:
    """How a trace file is read: the options of the engine's importers."""
    p.add_argument("--format", choices=TRACE_FORMATS, help="trace format (default auto)")
    p.add_argument("--device", help="keep only this device (MSR host_disk, SYSTOR LUN, SPC ASU, ...)")
    p.add_argument("--device-mapping", dest="device_mapping", choices=["merge", "concatenate"], help="how devices share the drive (default merge)")
    p.add_argument("--device-region", dest="device_region", metavar="SIZE", help="region per device with --device-mapping concatenate")
    oor = p.add_mutually_exclusive_group()
    oor.add_argument("--fold", dest="out_of_range", action="store_const", const="fold", help="fold I/O past the capacity back in (default)")
    oor.add_argument("--reject", dest="out_of_range", action="store_const", const="reject", help="stop at I/O past the capacity")
    p.add_argument("--skip-bad-lines", dest="skip_bad_lines", action="store_true", help="skip (and count) malformed lines")


def _add_replay(sub: Any) -> None:
    p = sub.add_parser(
        "replay",
        help="replay a trace file or a generated Storage Bench trace on a simulated drive",
        description="Replay a trace (Storage Bench playback): as recorded (each I/O at its timestamp, idle "
        "gaps kept so idle-time GC can use them; --idle-cap shortens them) or as fast as possible. Reports "
        "data rates over busy time (MB/s = 1e6 B/s). I/O past the drive's capacity is folded in by default.",
    )
    p.add_argument("file", nargs="?", help="trace file (format detected; gzip/bzip2/xz)")
    p.add_argument("--generated", metavar="WORKLOAD", help="a Storage Bench workload id, e.g. heavy-2011")
    p.add_argument("--trace-seed", dest="trace_seed", metavar="N", help="seed of the generated trace (default: --seed)")
    p.add_argument("--mode", choices=["as-recorded", "as-fast-as-possible"], default="as-recorded", help="default as-recorded")
    p.add_argument("--idle-cap", dest="idle_cap", metavar="DURATION", help="shorten every idle gap to at most this, e.g. 25ms (default none: gaps kept)")
    p.add_argument("--queue-depth", dest="queue_depth", metavar="N", help="queue depth for records that carry none (default 1)")
    p.add_argument("--log-avg-msec", dest="log_avg_msec", help="series interval in ms (default 1000)")
    p.add_argument("--number-ios", dest="number_ios", metavar="N", help="replay only the first N records (fio's number_ios)")
    p.add_argument("--runtime", metavar="DURATION", help="replay only the records of the first DURATION of trace time, e.g. 10min (fio's runtime)")
    _add_import_flags(p)
    p.add_argument("--data", help="data pattern of the trace's writes (default incompressible)")
    _add_sim_flags(p, "replay")
    p.set_defaults(func=cmd_replay)


def _add_storage_bench(sub: Any) -> None:
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
    p.add_argument("--workload", required=True, choices=ids, help="which Storage Bench workload")
    p.add_argument("--full", action="store_true",
                   help="fill the drive first (the 2015 worst case; test storage-bench-WORKLOAD-full) instead of a secure erase")
    p.add_argument("--trace-seed", dest="trace_seed", metavar="N", help="seed of the generated trace (default: --seed)")
    p.add_argument("--mode", choices=["as-recorded", "as-fast-as-possible"], help="default as-recorded")
    p.add_argument("--idle-cap", dest="idle_cap", metavar="DURATION",
                   help="shorten every idle gap to at most this (default 25ms, the method); 'none' keeps the gaps")
    p.add_argument("--log-avg-msec", dest="log_avg_msec", help="series interval in ms (default 1000)")
    p.add_argument("--number-ios", dest="number_ios", metavar="N", help="replay only the first N records (a partial run)")
    p.add_argument("--runtime", metavar="DURATION", help="replay only the first DURATION of trace time (a partial run)")
    _add_sim_flags(p, "trace")
    p.set_defaults(func=cmd_storage_bench)


#: The Destroyer is not a suite test: a filled drive, gaps cut to 25 ms (as its reviews did).
_DESTROYER_METHOD: Dict[str, Any] = {"test_id": None, "state": "filled", "replay": {"mode": "as-recorded", "idle_cap": "25ms"}}


def cmd_storage_bench(args: argparse.Namespace) -> int:
    from .suite.definitions import storage_bench_method

    # One definition: the suite's test description gives the state and the playback.
    method = storage_bench_method(args.workload, full=args.full)
    if method is None:
        if args.full:
            raise UsageError(f"argument --full: {args.workload} is not a suite test; give --precondition instead")
        method = _DESTROYER_METHOD
    if args.precondition is not None and args.full:
        raise UsageError("argument --full: give --full or --precondition, not both")
    # the run is the suite test only as the method has it (whole trace, the test's state and playback)
    same_as_test = (args.precondition in (None, method["state"]) and args.mode in (None, method["replay"].get("mode"))
                    and args.idle_cap in (None, method["replay"].get("idle_cap")) and args.number_ios is None
                    and args.runtime is None and args.trace_seed is None and not args.set and not args.link)
    if args.precondition is None:
        args.precondition = method["state"]
    if args.mode is None:
        args.mode = method["replay"].get("mode", "as-recorded")
    if args.idle_cap is None:
        args.idle_cap = method["replay"].get("idle_cap")
    args.storage_bench_test = method["test_id"] if same_as_test else None
    args.file = None
    args.generated = args.workload
    args.queue_depth = None
    for flag in ("format", "device", "device_mapping", "device_region", "data", "out_of_range"):
        setattr(args, flag, None)
    args.skip_bad_lines = False
    return cmd_replay(args)


def _optional_whole(text: Optional[str], flag: str) -> Optional[int]:
    """A flag's whole-number value, or None when it was not given."""
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        raise UsageError(f"argument {flag}: '{text}' is not a whole number") from None


def _seed(text: str) -> int:
    try:
        v = int(text, 0)
    except ValueError:
        raise UsageError(f"argument --seed: '{text}' is not a whole number") from None
    if not 0 <= v < 2**64:
        raise UsageError(f"argument --seed: {v} must be 0 .. 2^64-1")
    return v


def _reproduce(cmd: str, seed: int) -> str:
    """The command with the seed made explicit."""
    if "--seed" in sys.argv[1:] or any(a.startswith("--seed=") for a in sys.argv[1:]):
        return cmd
    return f"{cmd} --seed {seed}"


def _simulator(args: argparse.Namespace) -> "tuple[Simulator, Drive, int]":
    seed = _seed(args.seed)
    drive = _load_drive(args.drive, args.set)
    if getattr(args, "link", None):
        # The link preset replaces whatever bandwidth and overhead the file gives.
        drive = drive.with_changes({"host.interface": args.link, "host.link_bytes_per_s": 0, "host.command_overhead_ns": 0})
    limit = _core.parse_size_bytes(args.memory_limit, 0, "memory_limit") if args.memory_limit else None
    return Simulator(drive, seed=seed, check=args.check, memory_limit_bytes=limit), drive, seed


def _execute(
    args: argparse.Namespace,
    sim: Simulator,
    drive: Drive,
    seed: int,
    man: Dict[str, Any],
    label: str,
    phase: Callable[[ProgressBar], PhaseResult],
    span: Optional[int] = None,
    offset: int = 0,
) -> int:
    """Precondition (over span/offset), run the measured phase, idle after;
    print the summary or JSON of what finished; Ctrl-C -> exit 130."""
    idle_ns = _core.parse_duration_ns(args.idle_after, "idle_after") if args.idle_after else None
    man["precondition"] = args.precondition
    if args.idle_after:
        man["idle_after"] = args.idle_after

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
        if idle_ns is not None:
            after.append(sim.idle(duration_ns=idle_ns))
            after[-1].data["jobname"] = f"idle {args.idle_after}"
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
    doc = fio_document([result], man, phases=sim.history)
    if args.output:
        _write_output(args.output, doc)
    if args.json:
        _print_json(doc)
    else:
        print(
            format_summary(
                result,
                man,
                preconditioning=pre,
                after=after,
                drive_name=drive.name,
                reproduce=_reproduce(str(man["command"]), seed),
            )
        )
        sys.stdout.flush()
    if interrupted:
        print(f"ssdlab: interrupted during the {man.get('interrupted_during', 'run')}; figures above cover what finished", file=sys.stderr)
        return EXIT_INTERRUPTED
    return EXIT_OK


def cmd_run(args: argparse.Namespace) -> int:
    sim, drive, seed = _simulator(args)
    job: Dict[str, Any] = {key: getattr(args, flag) for flag, key in _JOB_FLAGS.items() if getattr(args, flag) is not None}
    norm = sim.parse_job(job)  # fail fast: every flag checked before any phase runs
    man = sim.manifest(command=command_line())
    man["job"] = job
    return _execute(
        args,
        sim,
        drive,
        seed,
        man,
        f"job {norm['name']}",
        lambda b: sim.run(norm, progress=b),
        span=norm["size_bytes"],
        offset=norm["offset_bytes"],
    )


def cmd_replay(args: argparse.Namespace) -> int:
    if (args.file is None) == (args.generated is None):
        raise UsageError("replay: give a trace FILE or --generated WORKLOAD (one of them)")
    sim, drive, seed = _simulator(args)
    options: Dict[str, Any] = {}
    if args.file is not None:
        if args.trace_seed is not None:
            raise UsageError("argument --trace-seed: applies to --generated, not to a trace file")
        cap = sim.capacity_bytes
        options = {
            "format": args.format,
            "device": args.device,
            "device_mapping": args.device_mapping,
            "device_region_bytes": _core.parse_size_bytes(args.device_region, cap, "device_region") if args.device_region else None,
            "out_of_range": args.out_of_range,
            "skip_bad_lines": args.skip_bad_lines or None,
            "data_pattern": args.data,
        }
        if args.device_mapping == "concatenate" and not args.device_region:
            raise UsageError("argument --device-region: needed with --device-mapping concatenate")
    else:
        for flag in ("format", "device", "device_mapping", "device_region", "data"):
            if getattr(args, flag) is not None:
                raise UsageError(f"argument --{flag.replace('_', '-')}: applies to a trace file, not to --generated")
    trace_seed = _seed(args.trace_seed) if args.trace_seed is not None else None
    # 'none' keeps every idle gap (the default of a replay)
    keep_gaps = args.idle_cap is None or args.idle_cap.strip().lower() == "none"
    idle_cap_ns = None if keep_gaps else _core.parse_duration_ns(args.idle_cap, "idle_cap")
    queue_depth = _optional_whole(args.queue_depth, "--queue-depth")
    log_avg = _optional_whole(args.log_avg_msec, "--log-avg-msec")
    number_ios = _optional_whole(args.number_ios, "--number-ios")
    if number_ios is not None and number_ios < 1:
        raise UsageError(f"argument --number-ios: {number_ios}: must be at least 1")
    if args.runtime is not None:
        _core.parse_duration_ns(args.runtime, "runtime")
    man = sim.manifest(command=command_line())
    man["replay"] = {"file": args.file, "generated": args.generated, "trace_seed": trace_seed, "mode": args.mode,
                     "idle_cap": None if keep_gaps else args.idle_cap, "number_ios": number_ios, "runtime": args.runtime}
    if getattr(args, "storage_bench_test", None):
        man["storage_bench_test"] = args.storage_bench_test
    label = args.generated or os.path.basename(args.file)
    kwargs = {k: v for k, v in options.items() if v is not None}
    return _execute(
        args,
        sim,
        drive,
        seed,
        man,
        label,
        lambda b: sim.replay(
            args.file,
            generated=args.generated,
            seed=trace_seed,
            mode=args.mode,
            iodepth=queue_depth,
            idle_cap_ns=idle_cap_ns,
            log_avg_msec=log_avg,
            number_ios=number_ios,
            runtime=args.runtime,
            progress=b,
            **kwargs,
        ),
    )


# ---------------------------------------------------------------------------
# ssdlab drives / drive show
# ---------------------------------------------------------------------------


def cmd_drives(args: argparse.Namespace) -> int:
    presets = Drive.presets()
    if args.json:
        _print_json(
            [
                {
                    "id": p.id,
                    "name": p.name,
                    "description": p.description,
                    "user_capacity_bytes": p.user_capacity_bytes,
                    "dies": p.dies,
                }
                for p in presets
            ]
        )
        return EXIT_OK
    w = max((len(p.id) for p in presets), default=2)
    for p in presets:
        print(f"{p.id:<{w}}  {p.user_capacity_bytes / 1e9:6.0f} GB  {p.dies:3d} dies  {p.description or p.name}")
    return EXIT_OK


def _fmt_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return f"{v:_}" if abs(v) >= 10_000 else str(v)
    if isinstance(v, str):
        return json.dumps(v)
    return json.dumps(v)


def cmd_drive_show(args: argparse.Namespace) -> int:
    d = _load_drive(args.drive, args.set)
    g = d.geometry
    prov = d.provenance
    if args.json:
        _print_json({"id": d.id, "source": d.source, "hash": d.hash, "changes": d.changes, "config": d.config,
                     "provenance": prov, "overrides": [list(o) for o in d.overrides], "geometry": g})
        return EXIT_OK
    print(f"# {d.name}")
    print(f"# source: {d.source}   hash: {d.hash}")
    cfg = d.config
    built = [f"controller profile {cfg['drive']['controller']}"] if "controller" in cfg["drive"] else []
    built += [f"NAND part {cfg['drive']['nand_part']}"] if "nand_part" in cfg["drive"] else []
    if built:
        print("# built from: " + " + ".join(built) + " (ssdlab drive parts; the comment after each value says where it comes from)")
    if d.changes:
        print("# changes: " + ", ".join(f"{k}={v}" for k, v in d.changes.items()))
    for section, fields in cfg.items():
        print(f"\n[{section}]")
        rows = [(f"{k} = {_fmt_value(v)}", prov.get(f"{section}.{k}", "")) for k, v in fields.items()]
        w = min(max(len(r[0]) for r in rows), 48) if rows else 0
        for text, src in rows:
            print(f"{text:<{w}}  # {src}" if src else text)
    print("\n# derived geometry (GB = 1e9 B, GiB = 2^30 B)")
    rows = [
        ("dies", f"{g['dies_total']} ({g['dies']} for data, {g['reserved_dies']} reserved) on {g['channels']} channels"),
        ("planes per die", g["planes_per_die"]),
        ("block", f"{g['pages_per_block']} pages x {g['page_size_bytes']} B x {g['planes_per_die']} planes = {g['block_bytes'] / 2**20:g} MiB, {g['blocks_per_die']} per die, {g['total_blocks']:,} in all"),
        ("raw capacity", f"{_gb(g['raw_bytes'])} ({g['raw_bytes'] / 2**30:,.2f} GiB)"),
        ("user capacity", f"{_gb(g['user_bytes'])} ({g['user_bytes'] / 2**30:,.2f} GiB)"),
        ("spare area", f"{_gb(g['spare_bytes'])} = {g['spare_fraction'] * 100:.2f}% of user capacity"),
        ("4KB mapping units", f"{g['user_units']:,} user, {g['raw_slots']:,} raw slots"),
        ("memory estimate", f"{g['memory_estimate_bytes'] / 2**20:,.0f} MiB ({g['memory_estimate_check_bytes'] / 2**20:,.0f} MiB in checking mode)"),
    ]
    for k, v in rows:
        print(f"# {k:<18} {v}")
    return EXIT_OK


def cmd_drive_parts(args: argparse.Namespace) -> int:
    entries = _core.library_entries()
    if args.id:
        found = [e for e in entries if e[1] == args.id]
        if not found:
            raise UsageError(f"argument id: unknown profile or part '{args.id}'; known: {', '.join(e[1] for e in entries)}")
        kind, pid, name, text = found[0]
        if args.json:
            _print_json({"kind": kind, "id": pid, "name": name, "text": text})
        else:
            print(text, end="")
        return EXIT_OK
    users: Dict[str, List[str]] = {}
    for pid in Drive.preset_ids():
        cfg = Drive.load(pid).config["drive"]
        for key in ("controller", "nand_part"):
            if key in cfg:
                users.setdefault(cfg[key], []).append(pid)
    if args.json:
        _print_json([{"kind": k, "id": i, "name": n, "presets": users.get(i, [])} for k, i, n, _ in entries])
        return EXIT_OK
    for label, kind in (("controller profiles (drive.controller)", "profile"), ("NAND parts (drive.nand_part)", "part")):
        print(label)
        rows = [e for e in entries if e[0] == kind]
        w = max(len(e[1]) for e in rows)
        for _, pid, name, _ in rows:
            print(f"  {pid:<{w}}  {name}; presets: {', '.join(users.get(pid, [])) or '-'}")
    return EXIT_OK


# ---------------------------------------------------------------------------
# ssdlab trace ...
# ---------------------------------------------------------------------------


def _fmt_measured(figure: str, v: Optional[float]) -> str:
    if v is None:
        return "unknown"
    if figure in ("reads", "writes", "read_bytes", "write_bytes"):
        return f"{v:,.0f}"
    return f"{v:,.4g}" if figure == "iodepth_mean" else f"{v:,.2f}"


def _comparison_table(comparison: List[Dict[str, Any]]) -> str:
    lines = [f"{'figure':<30} {'published':>16} {'measured':>16}  match"]
    for c in comparison:
        pub = c["published"]
        if c["figure"] in ("reads", "writes", "read_bytes", "write_bytes"):
            try:
                pub = f"{int(pub):,}"
            except ValueError:
                pass
        lines.append(f"{c['figure']:<30} {pub:>16} {_fmt_measured(c['figure'], c['measured']):>16}  {'yes' if c['ok'] else 'NO'}")
    return "\n".join(lines)


def _trace_manifest(seed: Optional[int] = None, **extra: Any) -> Dict[str, Any]:
    return manifest(seed=seed if seed is not None else 0, drive_id="", drive_hash="", extra=extra)


def cmd_trace_stats(args: argparse.Namespace) -> int:
    if (args.file is None) == (args.generated is None):
        raise UsageError("trace stats: give a trace FILE or --generated WORKLOAD (one of them)")
    cap = _capacity(args)
    if args.generated is not None:
        seed = _seed(args.seed)
        for flag in ("format", "device", "device_mapping", "device_region"):
            if getattr(args, flag) is not None:
                raise UsageError(f"argument --{flag.replace('_', '-')}: applies to a trace file, not to --generated")
        res = generated_stats(args.generated, cap, seed)
        if args.json:
            res["manifest"] = _trace_manifest(seed=seed, capacity_bytes=cap)
            _print_json(res)
            return EXIT_OK
        ok = sum(1 for c in res["comparison"] if c["ok"])
        print(f"{res['name']} ({res['bench']}): generated with seed {seed} on a {_gb(cap)} drive")
        print(_comparison_table(res["comparison"]))
        print(f"{ok} of {len(res['comparison'])} published figures matched (tolerances of STORAGE_BENCH.md)")
        print()
        print(res["stats"]["summary_text"].rstrip())
        print(f"reproduce: {command_line()}")
        return EXIT_OK
    if args.device_mapping == "concatenate" and not args.device_region:
        raise UsageError("argument --device-region: needed with --device-mapping concatenate")
    region = _core.parse_size_bytes(args.device_region, cap, "device_region") if args.device_region else None
    res = trace_stats(
        args.file,
        cap,
        format=args.format or "auto",
        device=args.device,
        device_mapping=args.device_mapping or "merge",
        device_region_bytes=region,
        out_of_range=args.out_of_range,
        skip_bad_lines=args.skip_bad_lines,
        compare_with=args.compare_with,
    )
    if args.json:
        res["manifest"] = _trace_manifest(capacity_bytes=cap)
        _print_json(res)
        return EXIT_OK
    imp = res["import"]
    devs = ", ".join(imp["device_names"][:8]) + (" ..." if imp["devices_seen"] > 8 else "")
    print(f"{res['file']}: format {imp['format']}, {imp['records']:,} records from {imp['lines']:,} lines")
    print(
        f"  {imp['non_io_lines']:,} non-I/O lines, {imp['filtered_other_devices']:,} of other devices, "
        f"{imp['skipped_lines']:,} bad lines skipped, {imp['folded']:,} folded into {_gb(cap)}, "
        f"{imp['reordered_records']:,} reordered; {imp['devices_seen']:,} device(s): {devs}"
    )
    for ex in imp["skipped_examples"][:5]:
        print(f"  skipped line {ex['line']}: {ex['reason']}")
    print()
    print(res["stats"]["summary_text"].rstrip())
    if "comparison" in res:
        print()
        print(f"compared with the published figures of {res['published']['name']}:")
        print(_comparison_table(res["comparison"]))
    return EXIT_OK


def cmd_trace_generate(args: argparse.Namespace) -> int:
    seed = _seed(args.seed)
    cap = _capacity(args)
    fmt = args.format
    n = write_generated_trace(args.workload, args.out, cap, seed, fmt)
    fmt = fmt or ("csv" if args.out.lower().endswith(".csv") else "fio-iolog")
    print(f"wrote {n:,} records of {args.workload} (seed {seed}, {_gb(cap)} drive) to {args.out} as {fmt}")
    return EXIT_OK


def cmd_trace_workloads(args: argparse.Namespace) -> int:
    for w in storage_bench_traces():
        print(f"{w['id']:<18} {w['records']:>12,} records  {w['duration_s']:>7,} s  {w['name']}")
    return EXIT_OK


def _add_trace(sub: Any) -> None:
    t = sub.add_parser("trace", help="trace statistics and Storage Bench trace generation")
    tsub = t.add_subparsers(dest="trace_cmd", metavar="{stats,generate,workloads}")
    tsub.required = True

    s = tsub.add_parser(
        "stats",
        help="statistics of a trace file or of a generated Storage Bench trace",
        description="Size mix, sequential share, queue depth and busy time of a trace. With --generated, "
        "side by side with the published figures. --capacity takes fio sizes (120g = 120 GiB); the default is "
        "the capacity of --drive (generic-mlc-120: 120e9 B).",
    )
    s.add_argument("file", nargs="?", help="trace file (gzip/bzip2/xz detected)")
    s.add_argument("--generated", metavar="WORKLOAD", help="a Storage Bench workload id, e.g. heavy-2011")
    _add_import_flags(s)
    s.add_argument("--capacity", help="drive capacity the trace is placed on (fio size)")
    s.add_argument("--drive", help="take the capacity from this drive (preset or file)")
    s.set_defaults(out_of_range="fold")
    s.add_argument("--compare-with", dest="compare_with", metavar="WORKLOAD", help="compare a trace file with a workload's published figures")
    s.add_argument("--seed", default="1", help="seed of the generator (default 1)")
    s.add_argument("--json", action="store_true", help="print JSON")
    s.set_defaults(func=cmd_trace_stats)

    g = tsub.add_parser(
        "generate",
        help="write a generated Storage Bench trace to a file",
        description="Write a generated Storage Bench trace: fio iolog v3 (replay on a real drive with "
        "fio --read_iolog=FILE --replay_redirect=/dev/sdX) or CSV with every field "
        "(time_ns,op,offset_bytes,length_bytes,iodepth,recorded_latency_ns,data_pattern).",
    )
    g.add_argument("workload", help="heavy-2011, light-2011, typical-2010, multitasking-2010, gaming-2010, destroyer-2013")
    g.add_argument("--out", required=True, metavar="FILE", help="output file (.csv selects csv)")
    g.add_argument("--format", choices=["fio-iolog", "csv"], help="default: csv for a .csv file, else fio-iolog")
    g.add_argument("--capacity", help="drive capacity (fio size; default: --drive's, 120e9 B)")
    g.add_argument("--drive", help="take the capacity from this drive")
    g.add_argument("--seed", default="1", help="seed (default 1)")
    g.set_defaults(func=cmd_trace_generate)

    w = tsub.add_parser("workloads", help="list the Storage Bench workloads")
    w.set_defaults(func=cmd_trace_workloads)


# ---------------------------------------------------------------------------
# the review suite: ssdlab tests / test / review / report
# ---------------------------------------------------------------------------


def _suite_test_ids(ids: Optional[Sequence[str]], default: Sequence[str]) -> List[str]:
    from .suite.definitions import test_ids

    known = test_ids()
    if not ids:
        return list(default)
    out: List[str] = []
    for item in ids:
        for tid in item.split(","):
            tid = tid.strip()
            if not tid:
                continue
            if tid not in known:
                raise UsageError(f"argument --tests: unknown test '{tid}' (see 'ssdlab tests')")
            out.append(tid)
    return out


def cmd_tests(args: argparse.Namespace) -> int:
    from .suite.definitions import TESTS

    w = max(len(t["id"]) for t in TESTS)
    for t in TESTS:
        flag = "  (on request)" if t["on_request"] else ""
        print(f"{t['id']:<{w}} {t['title']}{flag}")
    return EXIT_OK


def _profile(args: argparse.Namespace) -> Any:
    from .suite.profile import get_profile

    return get_profile("quick" if args.quick else "full")


class _StepBar:
    """One redrawn stderr line: the running phase of a test and its done fraction."""

    def __init__(self, force: Optional[bool]) -> None:
        import time as _time

        self._time = _time
        self.enabled = force if force is not None else sys.stderr.isatty()
        self._last = 0.0
        self._drawn = False

    def __call__(self, text: str, frac: float) -> None:
        now = self._time.monotonic()
        if not self.enabled or now - self._last < 0.1:
            return
        self._last = now
        pct = f" {100 * frac:5.1f}%" if frac >= 0 else ""
        sys.stderr.write(f"\r{text}{pct}\x1b[K")
        sys.stderr.flush()
        self._drawn = True

    def close(self) -> None:
        if self._drawn:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def cmd_test(args: argparse.Namespace) -> int:
    from .suite.definitions import test_ids
    from .suite.review import run_test_document, save_document
    from .suite.runner import SuiteRunner

    if args.test_id not in test_ids():
        raise UsageError(f"unknown test '{args.test_id}' (see 'ssdlab tests')")
    if args.fio:
        from .suite.definitions import get_test
        from .suite.fio import to_fio_jobfile

        sys.stdout.write(to_fio_jobfile(get_test(args.test_id), device=args.filename))
        return EXIT_OK
    seed = _seed(args.seed)
    drive = _load_drive(args.drive)
    profile = _profile(args)
    bar = _StepBar(args.progress)

    def progress(text: str, frac: float) -> None:
        bar(text, frac)

    runner = SuiteRunner(drive, seed=seed, profile=profile, progress=progress)
    try:
        doc = run_test_document(runner, args.drive, args.test_id, command=command_line())
    finally:
        bar.close()
    if args.output:
        from pathlib import Path

        save_document(doc, Path(args.output))
    if args.json:
        from .suite.review import _finite

        _print_json(_finite(doc))  # NaN (e.g. no steady state) as null, as in results files
        return EXIT_OK
    t = doc["test"]
    print(f"{t['title']}  [{t['id']}]  drive {drive.id} [{drive.hash}]  seed {seed}  profile {profile.name}")
    if doc["skipped"]:
        print(f"  not run: {doc['skipped']}")
    for f in doc["figures"]:
        v = f["value"]
        val = "-" if v is None or v != v else (f"{v:,.1f}" if abs(v) < 1000 else f"{v:,.0f}")
        print(f"  {f['label']:<36} {f['metric']:<36} {val:>12} {f['unit']}")
    print(f"  simulated in {doc['wall_time_s']:.1f} s wall")
    print("units: MB/s = 1e6 B/s, GB = 1e9 B, KB = 1024 B")
    print(f"reproduce: {doc['manifest']['reproduce']}")
    return EXIT_OK


def cmd_review(args: argparse.Namespace) -> int:
    from .report import build_report
    from .suite.definitions import default_test_ids
    from .suite.review import load_results, review

    if not args.drive:
        raise UsageError("review: give at least one --drive")
    from .suite.review import drive_keys

    try:
        drive_keys(args.drive)  # fail fast on an unknown drive or one given twice
    except ValueError as e:
        if isinstance(e, SsdlabError):
            raise
        raise UsageError(f"argument --drive: {e}") from None
    ids = _suite_test_ids(args.tests, default_test_ids())
    seed = _seed(args.seed)
    jobs = _jobs(args.jobs)
    os.makedirs(args.out, exist_ok=True)
    cmd = command_line()
    try:
        saved = review(args.drive, args.out, ids, jobs=jobs, seed=seed, profile=_profile(args), command=cmd)
    except KeyboardInterrupt:
        # every finished test is saved: draw what there is
        results = os.path.join(args.out, "results")
        try:
            page = build_report(load_results([results]), args.out, command=cmd)
            done = f"the report of the finished tests is {page}"
        except (ValueError, FileNotFoundError):
            done = "no test had finished"
        print(f"ssdlab: interrupted; {done} (results in {results})", file=sys.stderr)
        return EXIT_INTERRUPTED
    page = build_report(load_results(saved), args.out, command=cmd)
    print(f"ssdlab review: {len(saved)} results files in {os.path.join(args.out, 'results')}; report {page}")
    return EXIT_OK


def cmd_report(args: argparse.Namespace) -> int:
    from .report import build_report
    from .suite.review import load_results

    try:
        docs = load_results(args.results)
    except (FileNotFoundError, ValueError) as e:
        raise UsageError(str(e)) from None
    page = build_report(docs, args.out, command=command_line())
    print(f"ssdlab report: {len(docs)} results from {len({d['drive']['hash'] for d in docs})} drive(s); report {page}")
    return EXIT_OK


def _jobs(text: Optional[str]) -> Optional[int]:
    if text is None:
        return None
    try:
        jobs = int(text)
    except ValueError:
        raise UsageError(f"argument --jobs: '{text}' is not a whole number") from None
    if jobs < 1:
        raise UsageError("argument --jobs: must be at least 1")
    return jobs


def _fmt_figure(v: Optional[float], unit: str, with_unit: bool) -> str:
    """A published or simulated figure: IOPS whole, MB/s to 0.1."""
    if v is None:
        return "-"
    text = f"{v:,.0f}" if unit == "IOPS" else f"{v:,.1f}"
    return f"{text} {unit}" if with_unit else text


def _calibration_table(results: List[Dict[str, Any]]) -> str:
    lines = [f"{'drive':<20} {'figure (as published)':<76} {'published':>12} {'simulated':>12} {'error':>8} {'tol':>5}  "]
    for r in results:
        def fmt(v: Optional[float]) -> str:
            return _fmt_figure(v, r["unit"], with_unit=False)

        err = "-" if r["error"] is None else f"{100 * r['error']:+.1f}%"
        verdict = "interrupted" if r.get("interrupted") else ("ok" if r["ok"] else "MISS")
        fig = f"{r['describe']} [{r['kind']}]"
        lines.append(f"{r['drive_id']:<20} {fig[:76]:<76} {fmt(r['value']):>12} {fmt(r['simulated']):>12} {err:>8} "
                     f"{100 * r['tolerance']:>4.0f}%  {verdict}")
    return "\n".join(lines)


def _calibration_markdown(results: List[Dict[str, Any]]) -> str:
    lines = ["| preset | figure | published | simulated | error | tolerance | |", "|---|---|---|---|---|---|---|"]
    for r in results:
        def fmt(v: Optional[float]) -> str:
            return _fmt_figure(v, r["unit"], with_unit=True)

        err = "-" if r["error"] is None else f"{100 * r['error']:+.1f}%"
        verdict = "ok" if r["ok"] else "**miss**"
        lines.append(f"| {r['drive_id']} | {r['describe']} ({r['kind']}; {r['source']}) | {fmt(r['value'])} | "
                     f"{fmt(r['simulated'])} | {err} | {100 * r['tolerance']:.0f}% | {verdict} |")
    return "\n".join(lines)


def cmd_calibrate(args: argparse.Namespace) -> int:
    from .suite.calibrate import TOLERANCE, Published, calibrate, load_table

    kinds = [args.kind] if args.kind else None
    rows = load_table(args.table, drives=args.drive, kinds=kinds)
    if not rows:
        raise UsageError("calibrate: no figure of the table matches the --drive / --kind given")
    seed = _seed(args.seed)
    cmd = command_line()
    results = calibrate(rows, jobs=_jobs(args.jobs), seed=seed)
    by_line = {r.line: r for r in rows}
    for x in results:
        p: Published = by_line[x["line"]]
        x["describe"] = p.describe()
    n_ok = sum(1 for x in results if x["ok"])
    interrupted = any(x.get("interrupted") for x in results)
    doc = {
        "schema": "ssdlab.calibration",
        "schema_version": 1,
        # one manifest for the table; each result row names its drive and drive_hash
        "manifest": manifest(seed=seed, drive_id="(calibration table)", drive_hash="", command=cmd,
                             extra={"table": str(args.table or "built-in (ssdlab/suite/published.csv)"),
                                    "tolerance": dict(TOLERANCE),
                                    "drives": {x["drive_id"]: x.get("drive_hash") for x in results}}),
        "passed": n_ok,
        "figures": len(results),
        "results": results,
    }
    if args.output:
        _write_output(args.output, doc)
    if args.json:
        _print_json(doc)
    elif args.markdown:
        print(_calibration_markdown(results))
    else:
        print(_calibration_table(results))
        print(f"{n_ok} of {len(results)} figures within tolerance (measured 10%, rated 15%); seed {seed}; "
              f"MB/s = 1e6 B/s; reproduce a row with the 'reproduce' command in --json output")
    if interrupted:
        print("ssdlab: interrupted; the drives that finished are above", file=sys.stderr)
        return EXIT_INTERRUPTED
    return EXIT_OK if n_ok == len(results) else EXIT_FAILURE


def cmd_spec(args: argparse.Namespace) -> int:
    from .suite.spec import format_spec, spec_sheet

    seed = _seed(args.seed)
    _load_drive(args.drive)  # a bad drive is one clear error before anything runs
    bar = _StepBar(args.progress)
    try:
        sheet = spec_sheet(args.drive, seed=seed, progress=bar, command=command_line())
    finally:
        bar.close()
    if args.output:
        _write_output(args.output, sheet)
    if args.json:
        _print_json(sheet)
    else:
        print(format_spec(sheet))
    return EXIT_OK


def _add_suite(sub: Any) -> None:
    t = sub.add_parser("tests", help="list the review suite's tests")
    t.set_defaults(func=cmd_tests)

    p = sub.add_parser(
        "test",
        help="run one test of the suite on a drive and print its figures",
        description="Run one test of the review suite (see 'ssdlab tests') on a simulated drive: precondition, "
        "measure, print the figures (MB/s = 1e6 B/s). --quick cuts runtimes and spans (same code path).",
    )
    p.add_argument("test_id", help="a test id from 'ssdlab tests'")
    p.add_argument("--drive", default=DEFAULT_DRIVE, help=f"preset id or .toml/.json file (default {DEFAULT_DRIVE})")
    p.add_argument("--seed", default="1", help="master seed (default 1)")
    p.add_argument("--quick", action="store_true", help="the quick profile: shorter runtimes, smaller spans")
    p.add_argument("--json", action="store_true", help="print the results document (docs/results-schema.md)")
    p.add_argument("--output", metavar="FILE", help="also write the results document to FILE")
    p.add_argument("--fio", action="store_true", help="print the test as an fio job file for a real device instead of running it")
    p.add_argument("--filename", default="/dev/sdX", help="the device named in the --fio job file (default /dev/sdX)")
    _add_progress_flags(p)
    p.set_defaults(func=cmd_test)

    r = sub.add_parser(
        "review",
        help="run the suite on several drives (in parallel) and write results and the report",
        description="Run the review suite on every --drive (one process per drive, up to --jobs at once), save "
        "each test's results as it finishes (OUT/results/DRIVE/TEST.json, figures.csv), then write the report "
        "OUT/index.html with charts in OUT/charts.",
    )
    r.add_argument("--drive", action="append", help="preset id or .toml/.json file (repeat for each drive)")
    r.add_argument("--out", required=True, metavar="DIR", help="output directory")
    r.add_argument("--jobs", help="drives simulated at once (default: the number of cores)")
    r.add_argument("--tests", nargs="+", metavar="TEST_ID", help="only these tests (ids or comma-separated lists)")
    r.add_argument("--quick", action="store_true", help="the quick profile: shorter runtimes, smaller spans")
    r.add_argument("--seed", default="1", help="master seed (default 1)")
    r.set_defaults(func=cmd_review)

    rep = sub.add_parser(
        "report",
        help="rebuild the report from saved results (no simulation); merges several runs",
        description="Build the HTML report from results files or directories (searched for *.json results "
        "documents); several reviews merge, a later result of the same drive and test replacing an earlier one.",
    )
    rep.add_argument("results", nargs="+", help="results files or directories")
    rep.add_argument("--out", required=True, metavar="DIR", help="output directory")
    rep.set_defaults(func=cmd_report)

    c = sub.add_parser(
        "calibrate",
        help="run every published figure of the presets through the suite and compare",
        description="Run each figure of the calibration table (built in: every measured and rated figure of the "
        "presets' published sources, ssdlab/suite/published.csv; or --table FILE with the same columns) through "
        "the suite test that measures it, on its preset, and print simulated against published with the error. "
        "Measured figures must land within 10%%, rated figures within 15%%. Exit status 1 when one does not.",
    )
    c.add_argument("--drive", action="append", metavar="ID", help="only the figures of this drive (repeatable)")
    c.add_argument("--kind", choices=["measured", "rated"], help="only measured or only rated figures")
    c.add_argument("--table", metavar="FILE", help="a calibration table of your own (CSV with the built-in table's columns)")
    c.add_argument("--jobs", help="drives simulated at once (default: the number of cores)")
    c.add_argument("--seed", default="1", help="master seed (default 1)")
    cfmt = c.add_mutually_exclusive_group()
    cfmt.add_argument("--json", action="store_true", help="print the results as JSON")
    cfmt.add_argument("--markdown", action="store_true", help="print the comparison as a Markdown table (docs/presets.md)")
    c.add_argument("--output", metavar="FILE", help="also write the JSON results to FILE")
    c.set_defaults(func=cmd_calibrate)

    sp = sub.add_parser(
        "spec",
        help="the honest spec sheet of a drive: rated-style peaks beside steady-state figures",
        description="Print what a drive's box should say: the rated-style peak figures (128KB sequential read and "
        "write, 4KB random read and write, QD32, best-case data on a clean drive) beside the steady-state figures "
        "(incompressible data after the drive is filled and tortured) and the lowest one-second IOPS of the "
        "performance-consistency test; with the published rating where one is known.",
    )
    sp.add_argument("drive", help="preset id or .toml/.json file")
    sp.add_argument("--seed", default="1", help="master seed (default 1)")
    sp.add_argument("--json", action="store_true", help="print the sheet as JSON")
    sp.add_argument("--output", metavar="FILE", help="also write the JSON sheet to FILE")
    _add_progress_flags(sp)
    sp.set_defaults(func=cmd_spec)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="ssdlab",
        description="An SSD review lab in software: simulated drives and the reviewers' tests. "
        "Units: MB/s = 1e6 B/s, GB = 1e9 B in results; k/m/g sizes are powers of 1024 (fio).",
    )
    p.add_argument("--version", action="version", version=f"ssdlab {_version()} (engine {_core.version()})")
    sub = p.add_subparsers(dest="cmd", metavar="{run,replay,storage-bench,drives,drive,trace,tests,test,review,report,calibrate,spec}")
    sub.required = True
    _add_run(sub)
    _add_replay(sub)
    _add_storage_bench(sub)
    d = sub.add_parser("drives", help="list the drive presets")
    d.add_argument("--json", action="store_true")
    d.set_defaults(func=cmd_drives)
    ds = sub.add_parser("drive", help="show a drive description")
    dsub = ds.add_subparsers(dest="drive_cmd", metavar="{show,parts}")
    dsub.required = True
    show = dsub.add_parser("show", help="full description and derived geometry of a preset or file")
    show.add_argument("drive", help="preset id or .toml/.json file")
    show.add_argument("--set", action="append", metavar="KEY=VALUE", help="change a field first (repeatable)")
    show.add_argument("--json", action="store_true")
    show.set_defaults(func=cmd_drive_show)
    parts = dsub.add_parser("parts", help="the shared library: controller profiles and NAND parts (or one of them in full)")
    parts.add_argument("id", nargs="?", help="a profile or part id: print its file")
    parts.add_argument("--json", action="store_true")
    parts.set_defaults(func=cmd_drive_parts)
    _add_trace(sub)
    _add_suite(sub)
    return p


def _version() -> str:
    from .results import ssdlab_version

    return ssdlab_version()


def _one_line(msg: str) -> str:
    return " ".join(str(msg).split())


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        return int(args.func(args))
    except UsageError as e:
        print(f"ssdlab: error: {_one_line(str(e))}", file=sys.stderr)
        return EXIT_USAGE
    except (IntegrityError, DriveError) as e:
        print(f"ssdlab: error: {_one_line(str(e))} (reproduce: {command_line()})", file=sys.stderr)
        return EXIT_FAILURE
    except SsdlabError as e:
        print(f"ssdlab: error: {_one_line(str(e))}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("ssdlab: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # stdout closed early (e.g. piped into head): not an error of ours
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except OSError:
            pass
        return EXIT_OK
    except OSError as e:
        print(f"ssdlab: error: {_one_line(str(e))}", file=sys.stderr)
        return EXIT_USAGE
    except BaseException as e:
        # A bug (a Python exception, or a Rust panic: pyo3's PanicException
        # derives from BaseException): one line unless asked for the traceback.
        if isinstance(e, (SystemExit, GeneratorExit)) or not (
            isinstance(e, Exception) or type(e).__name__ == "PanicException"
        ):
            raise
        if os.environ.get("SSDLAB_DEBUG"):
            raise
        print(
            f"ssdlab: internal error: {type(e).__name__}: {_one_line(str(e))} "
            f"(reproduce: {command_line()}; set SSDLAB_DEBUG=1 for the traceback; please report it)",
            file=sys.stderr,
        )
        return EXIT_FAILURE


if __name__ == "__main__":
    sys.exit(main())
