"""``ssdlab trace stats | generate | workloads | iolog``: statistics of a trace
file or a generated Storage Bench trace, writing a generated trace, the list
of Storage Bench generators, and a generated trace as an fio iolog fitted to a
real target."""

from __future__ import annotations

import argparse
from typing import Any, Dict, Optional

from .. import _core
from ..results import command_line, manifest
from ..text import format_generated_trace_stats, format_storage_bench_list, format_trace_stats, gb
from ..trace import DEFAULT_CAPACITY_BYTES, generated_stats, storage_bench_traces, trace_stats, write_generated_trace
from .flags import (
    EXIT_OK,
    UsageError,
    add_drive,
    add_json,
    add_seed,
    duration,
    load_drive,
    positive_size_bytes,
    positive_whole,
    print_json,
)
from .run import add_import_flags

__all__ = ["add_parsers"]


def add_parsers(sub: Any) -> None:
    t = sub.add_parser("trace", help="trace statistics and Storage Bench trace generation")
    tsub = t.add_subparsers(dest="trace_cmd", metavar="{stats,generate,workloads,iolog}")
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
    add_import_flags(s)
    _add_capacity(s, "drive capacity the trace is placed on (fio size)", "take the capacity from this drive (preset or file)")
    s.set_defaults(out_of_range="fold")
    s.add_argument("--compare-with", dest="compare_with", metavar="WORKLOAD", help="compare a trace file with a workload's published figures")
    add_seed(s, "seed of the generator (default 1)")
    add_json(s, "print JSON")
    s.set_defaults(func=cmd_trace_stats)

    g = tsub.add_parser(
        "generate",
        help="write a generated Storage Bench trace to a file",
        description="Write a generated Storage Bench trace: fio iolog v3 (replay on a real drive with "
        "fio --read_iolog=FILE --replay_redirect=/dev/sdX) or CSV with every field "
        "(time_ns,op,offset_bytes,length_bytes,iodepth,recorded_latency_ns,data_pattern).",
    )
    g.add_argument("workload", help="heavy-2011, light-2011, typical-2010, multitasking-2010, gaming-2010, destroyer-2013")
    g.add_argument("--out", required=True, metavar="FILE", help="output file: .csv (csv), .iolog or .log (fio-iolog)")
    g.add_argument("--format", choices=["fio-iolog", "csv"], help="default: from the --out extension (another extension is an error)")
    _add_capacity(g, "drive capacity (fio size; default: --drive's, 120e9 B)", "take the capacity from this drive")
    add_seed(g, "seed (default 1)")
    g.set_defaults(func=cmd_trace_generate)

    w = tsub.add_parser("workloads", help="list the Storage Bench workloads")
    w.set_defaults(func=cmd_trace_workloads)

    io = tsub.add_parser(
        "iolog",
        help="write a Storage Bench trace as an fio iolog fitted to a real target",
        description="Write a generated Storage Bench trace as an fio iolog v3 for a real target of --target-bytes: "
        "placed on that capacity, offsets and lengths aligned to --align, every record naming --filename, bounded "
        "by --max-ios / --max-time (fio 3.33 ignores number_ios when replaying), idle gaps cut to --idle-cap. "
        "Replay it with 'fio --name=replay --read_iolog=FILE --ioengine=libaio --direct=1 --iodepth=32'. "
        "TRIM records need fio 3.34 or newer to replay (--trims drop removes them).",
    )
    io.add_argument("workload", help="a Storage Bench workload id, e.g. heavy-2011")
    io.add_argument("--target-bytes", dest="target_bytes", type=positive_size_bytes, required=True, metavar="SIZE",
                    help="the target's size (fio sizes: 64g = 64 GiB; bytes for a decimal size)")
    io.add_argument("--out", required=True, metavar="FILE", help="the iolog to write")
    io.add_argument("--filename", help="the target's path, written into every record (default: the generator's)")
    io.add_argument("--align", type=positive_size_bytes, default=4096, help="offset and length alignment (default 4k)")
    io.add_argument("--max-ios", dest="max_ios", type=positive_whole, metavar="N", help="keep at most N I/Os")
    io.add_argument("--max-time", dest="max_time", type=duration, metavar="TIME", help="keep I/Os up to this trace time")
    io.add_argument("--idle-cap", dest="idle_cap", type=duration, metavar="TIME",
                    help="cut every gap between I/Os to at most TIME (the suite's playback: 25ms)")
    io.add_argument("--trims", choices=["keep", "drop", "error"], default="keep", help="TRIM records (default keep)")
    add_seed(io, "seed of the generator (default 1)")
    io.set_defaults(func=cmd_trace_iolog)


def _add_capacity(p: argparse.ArgumentParser, capacity: str, drive: str) -> None:
    p.add_argument("--capacity", type=positive_size_bytes, help=capacity)
    add_drive(p, drive, default=None)


def _capacity(args: argparse.Namespace) -> int:
    if args.capacity:
        return int(args.capacity)
    if args.drive:
        return load_drive(args.drive).capacity_bytes
    return DEFAULT_CAPACITY_BYTES


def _trace_manifest(seed: Optional[int] = None, **extra: Any) -> Dict[str, Any]:
    return manifest(seed=seed if seed is not None else 0, drive_id="", drive_hash="", extra=extra)


def cmd_trace_stats(args: argparse.Namespace) -> int:
    if (args.file is None) == (args.generated is None):
        raise UsageError("trace stats: give a trace FILE or --generated WORKLOAD (one of them)")
    cap = _capacity(args)
    if args.generated is not None:
        for flag in ("format", "device", "device_mapping", "device_region"):
            if getattr(args, flag) is not None:
                raise UsageError(f"argument --{flag.replace('_', '-')}: applies to a trace file, not to --generated")
        res = generated_stats(args.generated, cap, args.seed)
        if args.json:
            res["manifest"] = _trace_manifest(seed=args.seed, capacity_bytes=cap)
            print_json(res)
        else:
            print(format_generated_trace_stats(res, args.seed, cap, command_line()))
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
        print_json(res)
    else:
        print(format_trace_stats(res, cap))
    return EXIT_OK


def cmd_trace_generate(args: argparse.Namespace) -> int:
    cap = _capacity(args)
    fmt = args.format
    n = write_generated_trace(args.workload, args.out, cap, args.seed, fmt)
    fmt = fmt or ("csv" if args.out.lower().endswith(".csv") else "fio-iolog")
    print(f"wrote {n:,} records of {args.workload} (seed {args.seed}, {gb(cap)} drive) to {args.out} as {fmt}")
    return EXIT_OK


def cmd_trace_workloads(args: argparse.Namespace) -> int:
    print(format_storage_bench_list(storage_bench_traces()))
    return EXIT_OK


def cmd_trace_iolog(args: argparse.Namespace) -> int:
    from ..fio.iolog import write_storage_bench_iolog

    st = write_storage_bench_iolog(args.workload, args.out, target_bytes=args.target_bytes, seed=args.seed, filename=args.filename,
                                   align_bytes=args.align, max_ios=args.max_ios,
                                   max_time_us=args.max_time.ns // 1000 if args.max_time else None, trims=args.trims,
                                   idle_cap_us=args.idle_cap.ns // 1000 if args.idle_cap else None)
    print(f"wrote {st.records:,} I/Os of {args.workload} ({st.reads:,} reads, {st.writes:,} writes, {st.trims:,} TRIMs; "
          f"{st.dropped_trims:,} TRIMs dropped) to {args.out}: {st.duration_us / 1e6:,.1f} s of trace time, highest byte "
          f"{st.max_end_bytes:,}{', cut at the bound' if st.truncated else ''}")
    return EXIT_OK
