"""``ssdlab sweep``: one suite test on every combination of drive settings."""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..extras import require
from ..results import command_line
from ..suite.definitions import test_ids
from .flags import EXIT_INTERRUPTED, EXIT_OK, UsageError, add_drive, add_json, add_runner, add_seed, load_drive

__all__ = ["add_parsers"]


def add_parsers(sub: Any) -> None:
    s = sub.add_parser(
        "sweep",
        help="run one suite test on every combination of drive settings; tidy table (Parquet, CSV) and charts",
        description="Run a suite test on the cross product of --set values (a dotted drive key, or spare: the spare "
        "area as a share of the user capacity), on the runner (--jobs, --scheduler). Writes OUT/sweep.parquet and "
        "OUT/sweep.csv (one row per run: the settings as columns, then every figure of the test) and OUT/index.html "
        "(one chart per figure against the settings). Values: a list a,b,c or a range LOW..HIGH:N "
        "(nand.tprog_ns=900us..2ms:5); times on *_ns keys, sizes on *_bytes keys, percentages on spare.",
    )
    add_drive(s)
    s.add_argument("--set", action="append", default=[], metavar="KEY=VALUES", dest="settings",
                   help="a swept setting (repeatable), e.g. ftl.gc_policy=greedy,cost-benefit or spare=7%%,12%%,25%%")
    s.add_argument("--test", default="consistency", help="the suite test (default consistency; 'ssdlab tests')")
    s.add_argument("--quick", action="store_true", help="the quick scale: shorter runtimes, smaller spans")
    s.add_argument("--out", required=True, metavar="DIR", help="output directory")
    add_seed(s)
    add_json(s, "print the table as JSON records")
    add_runner(s)
    s.set_defaults(func=cmd_sweep)


def cmd_sweep(args: argparse.Namespace) -> int:
    from ..cluster import Runner
    from ..sweep import MAX_RUNS, apply_settings, format_sweep, parse_setting, sweep, write_sweep

    require("sweep", "ssdlab sweep")  # before any simulation
    if args.test not in test_ids():
        raise UsageError(f"argument --test: unknown test '{args.test}' ('ssdlab tests' lists them)")
    drive = load_drive(args.drive)
    settings = {}
    for text in args.settings:
        key, values = parse_setting(text)
        if key in settings:
            raise UsageError(f"argument --set: {key} is set twice")
        settings[key] = values
    n = math.prod(len(v) for v in settings.values())
    if n > MAX_RUNS:
        sizes = " x ".join(f"{len(v)} ({k})" for k, v in settings.items())
        raise UsageError(f"argument --set: {sizes} = {n:,} runs; a sweep makes at most {MAX_RUNS:,}")
    # every combination must make a valid drive before anything runs
    for combo in itertools.product(*settings.values()):
        try:
            apply_settings(drive, dict(zip(settings, combo)))
        except ConfigError as e:
            raise UsageError(f"argument --set: {dict(zip(settings, combo))}: {e}") from None
    with Runner(jobs=args.jobs, scheduler=args.scheduler, progress=args.progress) as runner:
        _ = runner.workers  # reach the scheduler now: one error line before anything is announced
        print(f"ssdlab sweep: {n} runs of {args.test} on {drive.id}", file=sys.stderr)
        df = sweep(drive, settings, test=args.test, seed=args.seed, scale="quick" if args.quick else "full",
                   runner=runner)
    written = write_sweep(df, Path(args.out), command=command_line())
    if args.json:
        print(json.dumps(json.loads(df.to_json(orient="records")), indent=1))
    else:
        print(format_sweep(df))
        print(f"ssdlab sweep: {', '.join(str(p) for p in written)}")
    if len(df) < n:
        print(f"ssdlab: interrupted; {len(df)} of {n} runs finished (written)", file=sys.stderr)
        return EXIT_INTERRUPTED
    return EXIT_OK
