"""``ssdlab trace stats | generate | workloads``: statistics of a trace file
or a generated Storage Bench trace, writing a generated trace, and the list
of Storage Bench generators."""

from __future__ import annotations

import argparse
from typing import Any, Dict, Optional

from .. import _core
from ..results import command_line, manifest
from ..text import format_generated_trace_stats, format_storage_bench_list, format_trace_stats, gb
from ..traces import DEFAULT_CAPACITY_BYTES, generated_stats, storage_bench_workloads, trace_stats, write_generated_trace
from .flags import EXIT_OK, UsageError, add_drive, add_json, add_seed, load_drive, positive_size_bytes, print_json
from .run import add_import_flags

__all__ = ["add_parsers"]


def add_parsers(sub: Any) -> None:
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
        "(time_ns,op,offset_bytes,length_bytes,queue_depth,recorded_latency_ns,data_pattern).",
    )
    g.add_argument("workload", help="heavy-2011, light-2011, typical-2010, multitasking-2010, gaming-2010, destroyer-2013")
    g.add_argument("--out", required=True, metavar="FILE", help="output file (.csv selects csv)")
    g.add_argument("--format", choices=["fio-iolog", "csv"], help="default: csv for a .csv file, else fio-iolog")
    _add_capacity(g, "drive capacity (fio size; default: --drive's, 120e9 B)", "take the capacity from this drive")
    add_seed(g, "seed (default 1)")
    g.set_defaults(func=cmd_trace_generate)

    w = tsub.add_parser("workloads", help="list the Storage Bench workloads")
    w.set_defaults(func=cmd_trace_workloads)


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
    print(format_storage_bench_list(storage_bench_workloads()))
    return EXIT_OK
