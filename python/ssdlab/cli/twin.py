"""``ssdlab twin-report``: a drive and its twin side by side in the review
report, and the twin's error figure by figure (:mod:`ssdlab.twin.report`)."""

from __future__ import annotations

import argparse
import sys
from itertools import chain
from typing import Any

from ..extras import require
from ..results import command_line
from ..text import share_percent
from .flags import EXIT_INTERRUPTED, EXIT_OK, add_runner, add_seed, input_dir, test_id_list

__all__ = ["add_parsers"]


def add_parsers(sub: Any) -> None:
    p = sub.add_parser(
        "twin-report",
        help="review a drive and its twin (from 'ssdlab probe' and 'ssdlab fit --probe') side by side",
        description="Show how well the twin of a probed drive predicts it. DIR is the --out DIR of 'ssdlab probe' "
        "with the twin.toml (and twin.json) of 'ssdlab fit --probe DIR'. A simulated target: the review runs on the "
        "original drive and on the twin (a drive whose complete results of the same scale and seed are in "
        "OUT/results is not run again). A real target: --original names the results of 'ssdlab review --device' on "
        "it and only the twin is simulated. Writes the review report of both (OUT/index.html) and the twin's page "
        "OUT/twin.html: every figure original against twin (error = twin / original - 1, within 15%), per-test "
        "summary, the internals the probe recovered (against the truth for a simulated original) and where each "
        "value of the twin comes from; OUT/twin.csv and OUT/twin-summary.json.",
    )
    p.add_argument("probe_dir", metavar="DIR", help="the probe directory (probe.json, twin.toml, twin.json)")
    p.add_argument("--twin", metavar="FILE", help="the twin's drive file (default DIR/twin.toml; its provenance: FILE with .json)")
    p.add_argument("--original", type=input_dir, nargs="+", metavar="RESULTS_DIR",
                   help="the original's results (required for a real target: the --out DIR of 'ssdlab review --device'); "
                   "several runs of the same target give its run-to-run spread, and the report says whether the twin "
                   "lands within it")
    p.add_argument("--quick", action="store_true", help="the quick scale: shorter runtimes, smaller spans")
    p.add_argument("--tests", nargs="+", type=test_id_list, metavar="TEST_ID",
                   help="only these tests (ids or comma-separated lists; default: the review's)")
    p.add_argument("--out", metavar="DIR", help="output directory (default DIR/twin-report)")
    add_seed(p)
    add_runner(p)
    p.set_defaults(func=cmd_twin_report)


def cmd_twin_report(args: argparse.Namespace) -> int:
    from ..twin.report import twin_report

    require("twin", "ssdlab twin-report")  # before any simulation
    tests = list(chain.from_iterable(args.tests)) if args.tests else None
    try:
        rep = twin_report(args.probe_dir, twin=args.twin, original=args.original, quick=args.quick, out=args.out,
                          tests=tests, jobs=args.jobs, scheduler=args.scheduler, progress=args.progress, seed=args.seed,
                          command=command_line())
    except KeyboardInterrupt:
        print("ssdlab: interrupted; the finished tests are saved: run the same command again to go on "
              "(complete drives are not run again)", file=sys.stderr)
        return EXIT_INTERRUPTED
    ov = rep.summary["overall"]
    share = "" if ov["share_within"] is None else f" ({share_percent(ov['share_within'])})"
    med = "" if ov["median_abs_error"] is None else f", median |error| {100 * ov['median_abs_error']:.1f}%"
    scored = [r for r in rep.internals if r["truth"] is not None]
    good = sum(1 for r in rep.internals if r["verdict"] in ("exact", "within 10%"))
    internals = f"; internals exact or within 10%: {good}/{len(scored)}" if scored else ""
    print(f"ssdlab twin-report: {ov['within']} of {ov['figures']} figures within 15%{share}{med}{internals}; "
          f"report {rep.index}, twin page {rep.page}")
    for p in rep.reliability.get("problems", []) if rep.reliability else []:
        print(f"ssdlab twin-report: UNRELIABLE TWIN: {p}")
    verdict = rep.summary.get("spread")
    if verdict:
        print(f"ssdlab twin-report: {verdict['statement']}")
    return EXIT_OK
