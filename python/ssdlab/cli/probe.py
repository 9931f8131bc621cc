"""``ssdlab probe``: the diagnosis jobs of a digital twin (ssdlab.twin.probe)
on a real device or file through fio, or on a simulated drive."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Tuple

from ..results import command_line
from .flags import EXIT_INTERRUPTED, EXIT_OK, UsageError, add_json, add_progress, output_dir, positive_size_bytes, print_json, seed

__all__ = ["add_parsers", "budget", "stages"]


def budget(text: str) -> float:
    """``--budget``: quick, default, thorough, or a factor (0.05 .. 20)."""
    from ..twin.probe import BUDGETS

    if text in BUDGETS:
        return BUDGETS[text]
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}': one of {', '.join(BUDGETS)} or a factor 0.05 .. 20") from None
    if not 0.05 <= v <= 20:
        raise argparse.ArgumentTypeError(f"'{text}': a factor from 0.05 to 20 (1 = default)")
    return v


def stages(text: str) -> Tuple[str, ...]:
    """``--stages``: a comma-separated choice of the probe's stages (they run in the probe's own order)."""
    from ..twin.probe import STAGES

    names = [t.strip() for t in text.split(",")]
    bad = [n for n in names if n not in STAGES]
    if bad or not any(names):
        raise argparse.ArgumentTypeError(f"'{bad[0] if bad else text}' is not a stage; the stages: {', '.join(STAGES)} "
                                         "(comma-separated)")
    return tuple(s for s in STAGES if s in names)


def add_parsers(sub: Any) -> None:
    p = sub.add_parser(
        "probe",
        help="probe a drive with diagnosis jobs (through fio, or simulated) and extract its internals",
        description="Run a fixed list of diagnosis jobs (each names the internal it reveals: read and write "
        "parallelism, write buffer, page size, data reduction, read-ahead, unwritten-LBA reads, spare area and GC "
        "onset, steady state, idle-time recovery, TRIM response, the write (SLC) cache and what idle time gives "
        "back of it, how reads scale over queues (NVMe and its PCIe generation) and the map cache of a DRAM-less "
        "drive) on a real block device or a test file through fio, "
        "or on a simulated drive (--drive): the same job file either way. Writes DIR/probe.json (every job's "
        "figures, the features extracted with their confidence, the wall time) and fio's JSON, job file and logs "
        "under DIR/fio. Then 'ssdlab fit --probe DIR' fits a twin. The probe TRIMs and writes the whole target: "
        "a block device that holds a partition table or file system is refused unless --destroy-data names it.",
    )
    p.add_argument("target", nargs="?", metavar="DEVICE_OR_FILE",
                   help="a block device, or a directory / new file name for a test file (created and removed)")
    p.add_argument("--drive", metavar="PRESET_OR_FILE", help="probe a simulated drive instead of a real target")
    p.add_argument("--out", type=output_dir, required=True, metavar="DIR", help="where probe.json and fio's files go")
    p.add_argument("--budget", type=budget, default=1.0, metavar="B",
                   help="quick (0.25), default (1: about 35 minutes on a 256GB SATA drive), thorough (3), or a factor: "
                        "scales every runtime and the size of the state writes (longer = more precise)")
    p.add_argument("--stages", type=stages, metavar="LIST",
                   help="run only these stages, comma-separated, of clean, fill, cache, queues, full (default: all, "
                        "full only where the clean stage and the fill show an NVMe link or a write cache; on a real "
                        "target whose whole-drive write takes over an hour at 100 MB/s (above 360 GB) fill and full "
                        "only where named). The time each takes is estimated before the probe starts; the fit says "
                        "what it assumes for a stage left out")
    p.add_argument("--size", type=positive_size_bytes, metavar="SIZE",
                   help="size of the test file on a file target (fio sizes; default 1g, less when free space is short)")
    p.add_argument("--destroy-data", dest="destroy_data", metavar="DEVICE",
                   help="allow overwriting DEVICE although it holds a partition table or file system (must name the target)")
    p.add_argument("--fio", metavar="PATH", help="the fio executable (default: fio on PATH)")
    p.add_argument("--seed", type=seed, default=1, help="fio's randseed and the simulator's seed (default 1)")
    add_json(p, "print probe.json's features as JSON")
    add_progress(p)
    p.set_defaults(func=cmd_probe)


def cmd_probe(args: argparse.Namespace) -> int:
    from ..drive import Drive
    from ..progress import ProgressBar
    from ..twin.features import extract
    from ..twin.probe import probe_document, run_probe_device, run_probe_simulated, save_probe

    if args.drive and args.target:
        raise UsageError("probe: give a DEVICE_OR_FILE or --drive, not both")
    if not args.drive and not args.target:
        raise UsageError("probe: give a DEVICE_OR_FILE (a real target through fio) or --drive PRESET_OR_FILE (simulated)")
    out = Path(args.out)
    cmd = command_line()
    if args.drive:
        for flag in ("size", "destroy_data", "fio"):
            if getattr(args, flag) is not None:
                raise UsageError(f"argument --{flag.replace('_', '-')}: applies to a real target, not to --drive")
        drive = Drive.load(args.drive)
        bar = ProgressBar(f"probe {drive.id}", stream=sys.stderr, force=args.progress)
        run = run_probe_simulated(drive, out, budget=args.budget, seed=args.seed, progress=bar, stream=sys.stderr,
                                  **({"stages": args.stages} if args.stages else {}))
        bar.close()
        run.target.update({"drive": args.drive, "drive_id": drive.id})
        drive_hash = drive.hash
    else:
        run = run_probe_device(args.target, out, size_bytes=args.size, destroy_data=args.destroy_data,
                               budget=args.budget, fio=args.fio, seed=args.seed,
                               **({"stages": args.stages} if args.stages else {}))
        info = run.target.get("drive")
        drive_hash = str(info.get("hash", "")) if isinstance(info, dict) else ""
    features = extract(run.figures, int(run.target["capacity_bytes"]))
    doc = probe_document(run, features, seed=args.seed, budget=args.budget, command=cmd, drive_hash=drive_hash,
                         stages=args.stages or run.stages)
    path = save_probe(doc, out)
    if args.json:
        print_json(features)
    else:
        print(format_features(doc))
        print(f"ssdlab probe: {len(run.figures)} of {len(run.jobs)} jobs in {run.wall_time_s:.1f} s wall"
              + (f" ({run.simulated_time_s:,.0f} s simulated)" if run.simulated_time_s else "")
              + f"; {path}" + (" (INTERRUPTED: what finished is kept)" if run.interrupted else "")
              + f"; next: ssdlab fit --probe {out}")
    return EXIT_INTERRUPTED if run.interrupted else EXIT_OK


def _fmt(v: Any, unit: str) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if unit == "B" and isinstance(v, (int, float)) and v >= 1 << 20:
        return f"{v / (1 << 20):,.1f} MiB"
    if unit == "B/s":
        return f"{v / 1e6:,.1f} MB/s"
    if isinstance(v, float):
        return f"{v:,.3g}" if abs(v) < 100 else f"{v:,.0f}"
    return f"{v:,}" if isinstance(v, int) else str(v)


def format_features(doc: Any) -> str:
    t = doc["target"]
    lines = [f"probe of {t.get('drive_id') or t.get('path')} ({t['capacity_bytes']:,} B)", f"  {'feature':<30} {'value':>16}  confidence"]
    for name, f in doc["features"].items():
        if name == "probe_errors":
            continue
        lines.append(f"  {name:<30} {_fmt(f['value'], f['unit']):>16}  {f['confidence']}")
    for e in (doc["features"].get("probe_errors") or {}).get("value") or []:
        lines.append(f"  PROBE ERROR (left out, not a feature): {e}")
    for n in doc.get("notes", []):
        lines.append(f"  note: {n}")
    return "\n".join(lines)
