"""The review suite's commands: ``ssdlab tests``, ``test``, ``review``,
``report``, ``calibrate``, ``stories`` and ``spec``."""

from __future__ import annotations

import argparse
import os
import sys
from itertools import chain
from pathlib import Path
from typing import Any, List, Sequence

from ..errors import SsdlabError
from ..extras import require
from ..progress import ProgressBar
from ..results import calibration_document, command_line, finite, load_results, manifest, save_document
from ..suite.definitions import TESTS, default_test_ids, get_test, test_ids
from ..suite.scale import Scale, get_scale
from ..text import format_calibration, format_calibration_markdown, format_spec, format_test_figures, format_tests
from .fio import add_device_flags, cmd_review_device
from .fit import add_fit_options
from .flags import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    UsageError,
    add_drive,
    add_json,
    add_output,
    add_progress,
    add_runner,
    add_seed,
    check_output,
    emit,
    load_drive,
    output_file,
    print_json,
    test_id_list,
    write_output,
)

__all__ = ["add_parsers"]




def _add_quick(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quick", action="store_true", help="the quick scale: shorter runtimes, smaller spans")


def _add_jobs(p: argparse.ArgumentParser) -> None:
    add_runner(p)


def add_parsers(sub: Any) -> None:
    _add_tests(sub)
    _add_test(sub)
    _add_review(sub)
    _add_report(sub)
    _add_table(sub)
    _add_calibrate(sub)
    _add_stories(sub)
    _add_spec(sub)


def _add_tests(sub: Any) -> None:
    """``ssdlab tests``."""
    t = sub.add_parser("tests", help="list the review suite's tests")
    t.set_defaults(func=cmd_tests)


def _add_test(sub: Any) -> None:
    """``ssdlab test``: one test on a drive."""
    p = sub.add_parser(
        "test",
        help="run one test of the suite on a drive and print its figures",
        description="Run one test of the review suite (see 'ssdlab tests') on a simulated drive: precondition, "
        "measure, print the figures (MB/s = 1e6 B/s). --quick cuts runtimes and spans (same code path).",
    )
    p.add_argument("test_id", help="a test id from 'ssdlab tests'")
    add_drive(p)
    add_seed(p)
    _add_quick(p)
    add_json(p, "print the results document (docs/results-schema.md)")
    add_output(p, "also write the results document to FILE")
    p.add_argument("--fio", action="store_true", help="print the test as an fio job file for a real device instead of running it")
    p.add_argument("--filename", default="/dev/sdX", help="the device named in the --fio job file (default /dev/sdX)")
    add_progress(p)
    p.set_defaults(func=cmd_test)


def _add_review(sub: Any) -> None:
    """``ssdlab review``: the suite on several drives."""
    r = sub.add_parser(
        "review",
        help="run the suite on several drives (in parallel) and write results and the report",
        description="Run the review suite on every --drive (on --jobs worker processes or the Dask cluster at "
        "--scheduler; each preconditioned state of a drive once), save "
        "each test's results as it finishes (OUT/results/DRIVE/TEST.json, figures.csv), then write the report "
        "OUT/index.html with charts in OUT/charts.",
    )
    add_drive(r, "preset id or .toml/.json file (repeat for each drive)", append=True)
    r.add_argument("--out", required=True, metavar="DIR", help="output directory")
    _add_jobs(r)
    r.add_argument("--tests", nargs="+", type=test_id_list, metavar="TEST_ID", help="only these tests (ids or comma-separated lists)")
    _add_quick(r)
    add_seed(r)
    add_device_flags(r)
    r.set_defaults(func=cmd_review)


def _add_report(sub: Any) -> None:
    """``ssdlab report``: the report from saved results."""
    rep = sub.add_parser(
        "report",
        help="rebuild the report from saved results (no simulation); merges several runs",
        description="Build the HTML report from results files or directories (searched for *.json results "
        "documents); several reviews merge, a later result of the same drive and test replacing an earlier one.",
    )
    rep.add_argument("results", nargs="+", help="results files or directories")
    rep.add_argument("--out", required=True, metavar="DIR", help="output directory")
    rep.set_defaults(func=cmd_report)


def _add_table(sub: Any) -> None:
    """``ssdlab table``: measured results as a calibration table."""
    tab = sub.add_parser(
        "table",
        help="turn measured results (a real drive's) into a calibration table for calibrate/fit --table",
        description="Write every throughput figure (MB/s, IOPS) of the results given (directories are searched for "
        "*.json results documents: a real drive's from 'review --device' or 'fio-import', or any review) as rows of "
        "a calibration table whose drive is --drive. Then 'ssdlab calibrate --table FILE' compares that simulated "
        "drive with the measured one, figure by figure, and 'ssdlab fit --drive DRIVE --table FILE' fits it.",
    )
    tab.add_argument("results", nargs="+", help="results files or directories")
    add_drive(tab, "the simulated drive the rows are compared with: a preset id or a .toml/.json file", default=None,
              metavar="DRIVE")
    tab.add_argument("--out", required=True, type=output_file, metavar="FILE", help="the table to write (CSV)")
    tab.set_defaults(func=cmd_table)


def _add_calibrate(sub: Any) -> None:
    """``ssdlab calibrate``: the published figures through the suite, and cross-validation."""
    c = sub.add_parser(
        "calibrate",
        help="run every published figure of the presets through the suite and compare",
        description="Run each figure of the calibration table (built in: every measured and rated figure of the "
        "presets' published sources, ssdlab/suite/published.csv; or --table FILE with the same columns) through "
        "the suite test that measures it, on its preset, and print simulated against published with the error. "
        "Measured figures must land within 10%, rated figures within 15%. A row whose note starts 'known miss:' is "
        "an accepted miss, listed with its reason. Exit status 1 when another figure does not land.",
    )
    add_drive(c, "only the figures of this drive (repeatable)", append=True, metavar="ID")
    c.add_argument("--kind", choices=["measured", "rated"], help="only measured or only rated figures")
    c.add_argument("--table", metavar="FILE", help="a calibration table of your own (CSV with the built-in table's columns)")
    _add_jobs(c)
    add_seed(c)
    cfmt = c.add_mutually_exclusive_group()
    add_json(c, "print the results as JSON", group=cfmt)
    cfmt.add_argument("--markdown", action="store_true", help="print the comparison as a Markdown table (docs/presets.md)")
    add_output(c, "also write the JSON results to FILE (with --cross-validate: JSON to FILE, CSV beside it)")
    cv = c.add_argument_group("cross-validation")
    cv.add_argument("--cross-validate", action="store_true",
                    help="per preset, fit its controller profile without that preset's rows and predict them; print and "
                    "save every row's in-sample and out-of-sample error, median and worst per profile (default files "
                    "cross-validation.json and .csv)")
    cv.add_argument("--profile", action="append", metavar="ID", help="only these profiles (repeatable)")
    cv.add_argument("--start", choices=["center", "committed"], default="center",
                    help="where each fold's fit starts: the middle of the bounds (default) or the committed values")
    cv.add_argument("--storage", type=output_file, metavar="FILE",
                    help="the folds' Optuna studies (SQLite; default: beside --output, its name with .db)")
    cv.add_argument("--resume", action="store_true", help="continue the folds stored in --storage")
    add_fit_options(c, trials=32)
    c.set_defaults(func=cmd_calibrate)


def _add_stories(sub: Any) -> None:
    """``ssdlab stories``: the seed reviews' claims."""
    st = sub.add_parser(
        "stories",
        help="check every claim of the seed reviews on the presets and print the ledger",
        description="Run the suite tests that the seed reviews' claims read (docs/stories.md: S01..S46, each the "
        "project's wording of one thing a reviewer measured, with its published figures and a rule), on the cluster "
        "runner sharing each drive's preconditioned states, and print each claim: published, simulated, verdict "
        "(holds, partly, wrong). Exit status 1 when a claim does not hold.",
    )
    st.add_argument("--only", type=_claim_ids, metavar="IDS", help="only these claims, comma-separated (S14,S15)")
    sfmt = st.add_mutually_exclusive_group()
    add_json(st, "print the ledger as JSON (every check, what it wants and what was found)", group=sfmt)
    sfmt.add_argument("--csv", action="store_true", help="print the ledger as CSV")
    add_output(st, "also write the JSON ledger to FILE")
    _add_jobs(st)
    add_seed(st)
    st.set_defaults(func=cmd_stories)


def _add_spec(sub: Any) -> None:
    """``ssdlab spec``: the honest spec sheet."""
    sp = sub.add_parser(
        "spec",
        help="the honest spec sheet of a drive: rated-style peaks beside steady-state figures",
        description="Print what a drive's box should say: the rated-style peak figures (128KB sequential read and "
        "write, 4KB random read and write, QD32, best-case data on a clean drive) beside the steady-state figures "
        "(incompressible data after the drive is filled and tortured) and the lowest one-second IOPS of the "
        "performance-consistency test; with the published rating where one is known.",
    )
    sp.add_argument("drive", help="preset id or .toml/.json file")
    add_seed(sp)
    add_json(sp, "print the sheet as JSON")
    add_output(sp, "also write the JSON sheet to FILE")
    _add_jobs(sp)
    _add_quick(sp)
    sp.set_defaults(func=cmd_spec)

def _scale(args: argparse.Namespace) -> Scale:
    return get_scale("quick" if args.quick else "full")


def cmd_tests(args: argparse.Namespace) -> int:
    print(format_tests(TESTS))
    return EXIT_OK


def cmd_test(args: argparse.Namespace) -> int:
    from ..backends.sim_runner import SuiteRunner
    from ..suite.review import run_test_document

    if args.test_id not in test_ids():
        raise UsageError(f"unknown test '{args.test_id}' (see 'ssdlab tests')")
    if args.fio:
        from ..suite.fio import to_fio_jobfile

        sys.stdout.write(to_fio_jobfile(get_test(args.test_id), device=args.filename))
        return EXIT_OK
    drive = load_drive(args.drive)
    bar = ProgressBar("", force=args.progress)
    runner = SuiteRunner(drive, seed=args.seed, scale=_scale(args), progress=bar.phase)
    interrupted = False
    try:
        doc = run_test_document(runner, args.drive, args.test_id, command=command_line())
    except KeyboardInterrupt as e:
        partial = getattr(e, "document", None)
        if partial is None:
            raise
        doc, interrupted = partial, True
    finally:
        bar.close()
    if args.output:
        save_document(doc, Path(args.output))
    if args.json:
        print_json(finite(doc))  # NaN (e.g. no steady state) as null, as in results files
    else:
        print(format_test_figures(doc))
    if interrupted:
        sys.stdout.flush()
        print("ssdlab: interrupted; the figures above are those of the steps that finished", file=sys.stderr)
        return EXIT_INTERRUPTED
    return EXIT_OK


def cmd_review(args: argparse.Namespace) -> int:
    from ..report import require_matplotlib
    from ..suite.review import drive_keys, review

    require_matplotlib()  # one clear line before any simulation, not an error at the end

    if args.device:  # a real drive through fio (ssdlab.backends.fio_runner)
        return cmd_review_device(args, list(chain.from_iterable(args.tests)) if args.tests else default_test_ids())
    device_only = [f for f, v in (("--size", args.size), ("--destroy-data", args.destroy_data), ("--clean-by-trim", args.clean_by_trim),
                                  ("--fio", args.fio)) if v]
    if device_only:
        raise UsageError(f"review: {', '.join(device_only)} appl{'ies' if len(device_only) == 1 else 'y'} to a real drive: give "
                         "--device FILE_OR_DEV with it, or leave it out")
    if not args.drive:
        raise UsageError("review: give at least one --drive (or --device FILE_OR_DEV)")
    try:
        drive_keys(args.drive)  # fail fast on an unknown drive or one given twice
    except ValueError as e:
        if isinstance(e, SsdlabError):
            raise
        raise UsageError(f"argument --drive: {e}") from None
    ids: Sequence[str] = list(chain.from_iterable(args.tests)) if args.tests else default_test_ids()
    os.makedirs(args.out, exist_ok=True)
    cmd = command_line()
    try:
        saved = review(args.drive, args.out, ids, jobs=args.jobs, seed=args.seed, scale=_scale(args), command=cmd,
                       scheduler=args.scheduler, progress=args.progress)
    except KeyboardInterrupt as e:
        # every finished test is saved: draw what there is (a second Ctrl-C stops the drawing)
        done_files = list(getattr(e, "saved", []))
        results = os.path.join(args.out, "results")
        if not done_files:
            print(f"ssdlab: interrupted; no test had finished (nothing written in {results})", file=sys.stderr)
            return EXIT_INTERRUPTED
        return _report_stage(done_files, args.out, cmd, interrupted=True)
    return _report_stage(saved, args.out, cmd, interrupted=False)


def _report_stage(saved: Sequence[str], out: str, cmd: str, interrupted: bool) -> int:
    """Draw the report of the saved results; Ctrl-C here keeps the results
    and says how to draw the report later."""
    from ..report import build_report

    results = os.path.join(out, "results")
    try:
        page = build_report(load_results(saved), out, command=cmd)
    except KeyboardInterrupt:
        print(f"ssdlab: interrupted while drawing the report; the {len(saved)} results are kept in {results} "
              f"('ssdlab report {results} --out {out}' draws it)", file=sys.stderr)
        return EXIT_INTERRUPTED
    if interrupted:
        print(f"ssdlab: interrupted; the report of the finished tests is {page} ({len(saved)} results in {results})",
              file=sys.stderr)
        return EXIT_INTERRUPTED
    print(f"ssdlab review: {len(saved)} results files in {results}; report {page}")
    return EXIT_OK


def cmd_report(args: argparse.Namespace) -> int:
    from ..report import build_report, require_matplotlib

    require_matplotlib()

    try:
        docs = load_results(args.results)
    except (FileNotFoundError, ValueError) as e:
        raise UsageError(str(e)) from None
    page = build_report(docs, args.out, command=command_line())
    print(f"ssdlab report: {len(docs)} results from {len({d['drive']['hash'] for d in docs})} drive(s); report {page}")
    return EXIT_OK


def cmd_table(args: argparse.Namespace) -> int:
    from ..drive import Drive
    from ..suite.calibrate import table_from_results, write_table

    if not args.drive:
        raise UsageError("argument --drive: required (the simulated drive the measured figures are compared with)")
    Drive.load(args.drive)  # a bad drive is an error now, not at calibrate time
    try:
        docs = load_results(args.results)
    except (FileNotFoundError, ValueError) as e:
        raise UsageError(str(e)) from None
    rows = table_from_results(docs, args.drive)
    quick = sum(1 for d in docs if d.get("manifest", {}).get("profile", "full") != "full")
    if not rows:
        why = (f"; {quick} of the {len(docs)} results were run with --quick (shortened runtimes and spans), which "
               "calibrate does not compare with: run them without --quick") if quick else ""
        raise UsageError(f"no throughput figure of a suite test in {', '.join(args.results)} (tests such as "
                         f"corners-4k-random-read-qd3, as-ssd, atto){why}")
    if quick:
        print(f"ssdlab table: {quick} result(s) of the quick scale left out (calibrate runs the full one)", file=sys.stderr)
    write_table(rows, Path(args.out))
    drives = sorted({d["drive"]["id"] for d in docs})
    print(f"ssdlab table: {len(rows)} figure(s) of {len({r['suite_test'] for r in rows})} test(s) from "
          f"{', '.join(drives)} written to {args.out}, compared with {args.drive}; "
          f"next: ssdlab calibrate --table {args.out}")
    return EXIT_OK


def cmd_cross_validate(args: argparse.Namespace) -> int:
    from ..cluster import Runner
    from ..fit.crossval import cross_validate, format_cross_validation, write_csv

    require("fit", "ssdlab calibrate --cross-validate")  # before any simulation
    if args.drive or args.kind:
        raise UsageError("calibrate --cross-validate: --drive and --kind do not apply (use --profile)")
    out = Path(args.output or check_output("cross-validation.json", "--output"))
    storage = args.storage or check_output(str(out.with_suffix(".db")), "--storage")
    if args.resume and not Path(storage).exists():
        raise UsageError(f"--resume: no stored cross-validation in {storage}")
    out.parent.mkdir(parents=True, exist_ok=True)
    table = Path(args.table) if args.table else None
    free = Path(args.free) if args.free else None
    with Runner(jobs=args.jobs, scheduler=args.scheduler, progress=args.progress) as runner:
        doc = cross_validate(args.profile, table, trials=args.trials, sampler=args.sampler, seed=args.fit_seed,
                             start=args.start, storage=storage, resume=args.resume, batch=args.batch, runner=runner,
                             free_path=free)
    doc["command"] = command_line()
    write_output(str(out), doc)
    write_csv(doc, out.with_suffix(".csv"))
    if args.json:
        print_json(doc)
        # stdout holds the JSON alone; where the files went still goes to the user
        print(f"ssdlab calibrate: saved {out} and {out.with_suffix('.csv')}; studies in {storage}", file=sys.stderr)
    else:
        print(format_cross_validation(doc, markdown=args.markdown))
        print(f"saved {out} and {out.with_suffix('.csv')}; studies in {storage}")
    interrupted = any(f["interrupted"] for f in doc["folds"])
    return EXIT_INTERRUPTED if interrupted else EXIT_OK


def cmd_calibrate(args: argparse.Namespace) -> int:
    from ..suite.calibrate import TOLERANCE, calibrate, load_table

    if args.cross_validate:
        return cmd_cross_validate(args)

    kinds = [args.kind] if args.kind else None
    rows = load_table(args.table, drives=args.drive, kinds=kinds)
    if not rows:
        raise UsageError("calibrate: no figure of the table matches the --drive / --kind given")
    cmd = command_line()
    results = calibrate(rows, jobs=args.jobs, seed=args.seed, scheduler=args.scheduler, progress=args.progress)
    by_line = {r.line: r for r in rows}
    for x in results:
        x["describe"] = by_line[x["line"]].describe()
    # one manifest for the table; each result row names its drive and drive_hash
    man = manifest(seed=args.seed, drive_id="(calibration table)", drive_hash="", command=cmd,
                   extra={"table": str(args.table or "built-in (ssdlab/suite/published.csv)"),
                          "tolerance": dict(TOLERANCE),
                          "drives": {x["drive_id"]: x.get("drive_hash") for x in results}})
    doc = calibration_document(man, results)
    if args.output:
        write_output(args.output, doc)
    if args.json:
        print_json(doc)
    elif args.markdown:
        print(format_calibration_markdown(doc))
    else:
        print(format_calibration(doc))
    if any(x.get("interrupted") for x in results):
        print("ssdlab: interrupted; the drives that finished are above", file=sys.stderr)
        return EXIT_INTERRUPTED
    # accepted known misses (the table's note says why) do not fail the calibration
    return EXIT_OK if doc["failed"] == 0 else EXIT_FAILURE


def _claim_ids(text: str) -> List[str]:
    """``--only``: claim ids, comma-separated; checked against the ledger."""
    from ..suite.stories import CLAIMS, StoriesError, select

    ids = [t for t in text.split(",") if t.strip()]
    if not ids:
        raise argparse.ArgumentTypeError("give claim ids, e.g. S14,S15")
    try:
        select(CLAIMS, ids)
    except StoriesError as e:
        raise argparse.ArgumentTypeError(str(e).replace("argument --only: ", "")) from None
    return ids


def cmd_stories(args: argparse.Namespace) -> int:
    from ..suite.stories import CLAIMS, HOLDS, select
    from ..suite.stories.ledger import document, format_csv, format_table, run_stories

    claims = select(CLAIMS, args.only)
    judged, interrupted = run_stories(claims, jobs=args.jobs, seed=args.seed, scheduler=args.scheduler,
                                      progress=args.progress)
    doc = document(judged, manifest(seed=args.seed, drive_id="(the reviews' stories)", drive_hash="",
                                    command=command_line()))
    if args.output:
        write_output(args.output, doc)
    if args.json:
        print_json(doc)
    elif args.csv:
        sys.stdout.write(format_csv(judged))
    else:
        print(format_table(judged))
    if interrupted:
        print("ssdlab: interrupted; the claims whose figures finished are judged above", file=sys.stderr)
        return EXIT_INTERRUPTED
    return EXIT_OK if all(j.verdict == HOLDS for j in judged) else EXIT_FAILURE


def cmd_spec(args: argparse.Namespace) -> int:
    from ..suite.spec import spec_sheet

    load_drive(args.drive)  # a bad drive is one clear error before anything runs
    sheet = spec_sheet(args.drive, seed=args.seed, progress=args.progress, command=command_line(), jobs=args.jobs,
                       scheduler=args.scheduler, scale="quick" if args.quick else "full")
    emit(args, sheet, lambda: format_spec(sheet))
    return EXIT_OK
