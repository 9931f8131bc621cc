"""fio, both ways, as commands:

- ``ssdlab fio JOBFILE --drive X``: an fio job file run unchanged on a
  simulated drive, written as fio's ``--output-format=json`` and its logs
  (:mod:`ssdlab.fio.simulate`);
- ``ssdlab fio-run JOBFILE --target PATH``: the same job file run by fio itself
  on a file or block device, safely (:mod:`ssdlab.fio.run`);
- ``ssdlab fio-check TARGET``: whether ssdlab may write a target, and what a
  review there can run (:mod:`ssdlab.fio.safety`);
- ``ssdlab fio-parse OUTPUT.json``: fio's JSON and logs (real or simulated) as
  ssdlab reads them (:mod:`ssdlab.fio.parse`);
- ``ssdlab fio-import OUTPUT.json --name NAME --out DIR``: fio's JSON of an
  ``ssdlab test ID --fio`` job file run by hand, as results ``ssdlab report``
  draws (:func:`ssdlab.backends.fio_results.results_from_fio`);
- the ``--device`` flags of ``ssdlab review`` and the device review itself
  (:func:`cmd_review_device`, running :mod:`ssdlab.backends.fio_runner`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path
from typing import Any, Optional, Sequence

from ..outputs import OutputError, write_text
from ..progress import ProgressBar
from ..results import command_line, load_results
from ..textfile import read_text
from .flags import (
    DEFAULT_DRIVE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    UsageError,
    add_drive,
    add_output,
    add_progress,
    add_seed,
    add_settings,
    input_dir,
    input_file,
    load_drive,
    output_dir,
    positive_size_bytes,
)

__all__ = ["add_parsers", "add_device_flags", "cmd_review_device"]


def _add_fio_exe(p: argparse.ArgumentParser) -> None:
    p.add_argument("--fio", metavar="PATH", help="the fio executable (default: fio on PATH)")


def _add_destroy_data(p: argparse.ArgumentParser) -> None:
    p.add_argument("--destroy-data", dest="destroy_data", metavar="DEVICE",
                   help="allow ssdlab to overwrite DEVICE although it holds a partition table or filesystem "
                        "(must name the same device as the target; a mounted or busy device is never written)")


def add_parsers(sub: Any) -> None:
    f = sub.add_parser(
        "fio",
        help="run an fio job file on a simulated drive; write fio's JSON and logs",
        description="Run an fio job file unchanged on a simulated drive and write what fio would: "
        "its normal report, --output-format=json or json+ (to --output or stdout) and the logs its write_iops_log/write_bw_log options ask "
        "for (in --log-dir). Options the simulator cannot honour are an error naming the file, line and option. "
        "${VAR} in the job file is taken from the environment.",
    )
    f.add_argument("jobfile", type=input_file, help="an fio job file")
    add_drive(f)
    add_settings(f, "change a drive field, e.g. nand.tprog_ns=1800000 (repeatable)")
    add_seed(f)
    f.add_argument("--output-format", dest="output_format", choices=["normal", "json", "json+"],
                   help="as fio: normal (the default; json when --output is named *.json), json, or json+ (json with "
                        "the completion-latency histogram bins)")
    add_output(f, "write the report to FILE (default stdout)")
    f.add_argument("--log-dir", dest="log_dir", type=output_dir, metavar="DIR",
                   help="where the logs go (default: the current directory, as fio)")
    f.add_argument("--parse-only", dest="parse_only", action="store_true",
                   help="check the job file against the drive and print what would run, without running it")
    add_progress(f)
    f.set_defaults(func=cmd_fio)

    r = sub.add_parser(
        "fio-run",
        help="run an fio job file with fio on a file or block device, safely",
        description="Run an fio job file with fio itself on a target: a block device (checked first: never one "
        "that is mounted or in use; one holding a partition table or filesystem only with --destroy-data naming "
        "it) or a test file ssdlab creates (a directory or a new file name; removed afterwards). The job file "
        "must not name its own filename or run commands. fio's JSON goes to --output (default stdout).",
    )
    r.add_argument("jobfile", type=input_file, help="an fio job file (without filename=)")
    r.add_argument("--target", required=True, metavar="PATH", help="a block device, a directory or a new file name")
    r.add_argument("--size", type=positive_size_bytes, default=1 << 30, help="test file size for a file target (default 1g)")
    _add_destroy_data(r)
    add_output(r, "write fio's JSON to FILE (default stdout)")
    r.add_argument("--log-dir", dest="log_dir", type=output_dir, default=".", metavar="DIR", help="where fio's logs go (default .)")
    _add_fio_exe(r)
    r.set_defaults(func=cmd_fio_run)

    c = sub.add_parser(
        "fio-check",
        help="may ssdlab write this target? (nothing is written)",
        description="Check a target as 'ssdlab review --device' and 'ssdlab fio-run' do before writing anything, "
        "and say what it can do (TRIM, secure erase). Exit 2 with the reason and the flag that would allow it "
        "when ssdlab refuses it.",
    )
    c.add_argument("target", help="a block device, a directory or a new file name")
    _add_destroy_data(c)
    c.set_defaults(func=cmd_fio_check)

    p = sub.add_parser(
        "fio-parse",
        help="read fio's JSON output and logs (real or simulated) as ssdlab does",
        description="Read fio's --output-format=json (from fio or from 'ssdlab fio') and, with --log-dir, its "
        "per-interval logs; print a summary per job (--json: everything read, as JSON).",
    )
    p.add_argument("output", type=input_file, help="fio's JSON output")
    p.add_argument("--log-dir", dest="log_dir", type=input_dir, metavar="DIR", help="where the run's logs are")
    p.add_argument("--jobfile", type=input_file, metavar="FILE", help="the job file (matches logs to jobs exactly; with --log-dir)")
    p.add_argument("--json", action="store_true", help="print everything read as JSON (MB/s = 1e6 B/s, latencies in ns)")
    p.set_defaults(func=cmd_fio_parse)

    i = sub.add_parser(
        "fio-import",
        help="turn fio's JSON of an 'ssdlab test ID --fio' job file run by hand into results for 'ssdlab report'",
        description="Read fio's JSON (and, with --log-dir, its logs) of a job file printed by 'ssdlab test ID --fio' and "
        "run by hand, and write the suite's results documents (OUT/results/real-NAME/TEST.json), so that 'ssdlab report' "
        "shows that drive beside simulated ones. The job file's measured sections name their test and step "
        "(description=ssdlab:TEST:RUN:STEP).",
    )
    i.add_argument("output", type=input_file, help="fio's JSON output (--output-format=json)")
    i.add_argument("--log-dir", dest="log_dir", type=input_dir, metavar="DIR", help="where the run's logs are (per-second series)")
    i.add_argument("--name", required=True, help="the drive's name in the report (its id is real-NAME)")
    i.add_argument("--out", required=True, metavar="DIR", help="output directory (results/ is written in it)")
    i.set_defaults(func=cmd_fio_import)


# ---------------------------------------------------------------------------
# ssdlab fio
# ---------------------------------------------------------------------------


def cmd_fio(args: argparse.Namespace) -> int:
    from ..fio.jobfile import parse_jobfile
    from ..fio.simulate import SimulatedRun, output_format_for, plan, simulate, write_outputs

    jf = parse_jobfile(args.jobfile)
    args.output_format = output_format_for(args.output_format, args.output)
    drive = load_drive(args.drive or DEFAULT_DRIVE, args.set)
    if args.parse_only:
        for pj in plan(jf, int(drive.capacity_bytes), queue_per_job=drive.is_nvme):
            print(f"{pj.name}: group {pj.groupid}, engine job {json.dumps(pj.engine)}")
            for n in pj.notes:
                print(f"  note: {n}")
        return EXIT_OK
    bar = ProgressBar("fio", force=args.progress)
    try:
        run = simulate(jf, drive, seed=args.seed, progress=bar)
    except KeyboardInterrupt as e:
        bar.close()
        partial = getattr(e, "run", None)
        if isinstance(partial, SimulatedRun):
            _write_sim(partial, args, write_outputs)
        print("ssdlab: interrupted; the finished jobs were written", file=sys.stderr)
        return EXIT_INTERRUPTED
    bar.close()
    for n in run.document["ssdlab"]["notes"]:
        print(f"ssdlab: note: {n}", file=sys.stderr)
    _write_sim(run, args, write_outputs)
    return EXIT_OK


def _write_sim(run: Any, args: argparse.Namespace, write_outputs: Any) -> None:
    try:
        write_outputs(run, args.output, args.log_dir or ".", args.output_format)
    except OSError as e:
        raise UsageError(f"cannot write the results: {e.strerror or e} ({e.filename or args.output})") from None


# ---------------------------------------------------------------------------
# fio-run, fio-check, fio-parse
# ---------------------------------------------------------------------------


def cmd_fio_run(args: argparse.Namespace) -> int:
    from ..fio.run import FioRun, run_on_target

    text = read_text(args.jobfile, "fio job file", lambda f, why: UsageError(f"{f}: {why}"))
    sections = re.findall(r"^\s*\[([^\]]*)\]", text, flags=re.MULTILINE)
    if not [s for s in sections if s.strip().lower() != "global"]:
        raise UsageError(f"{args.jobfile}: no job sections: add a [name] section with rw=...")
    os.makedirs(args.log_dir, exist_ok=True)
    try:
        run = run_on_target(text, args.target, size_bytes=args.size, destroy_data=args.destroy_data,
                            workdir=args.log_dir, fio=args.fio, jobfile_name=args.jobfile)
    except KeyboardInterrupt as e:
        fr = getattr(e, "fio_run", None)
        if isinstance(fr, FioRun) and fr.json_path.exists():
            _emit_fio_json(fr, args.output)
        print("ssdlab: interrupted; fio stopped and the finished jobs' results were kept", file=sys.stderr)
        return EXIT_INTERRUPTED
    _emit_fio_json(run, args.output)
    if run.interrupted:
        print(f"ssdlab: interrupted; finished: {', '.join(run.finished) or 'none'}; cut short: "
              f"{', '.join(run.interrupted_jobs) or 'none'}", file=sys.stderr)
        return EXIT_INTERRUPTED
    return EXIT_OK


def _emit_fio_json(run: Any, output: Optional[str]) -> None:
    text = run.json_path.read_text(errors="replace")
    if output is None:
        sys.stdout.write(text)
    elif os.path.abspath(output) != os.path.abspath(run.json_path):
        try:
            write_text(output, text)
        except OutputError as e:
            raise UsageError(f"argument --output: {e}") from None


def cmd_fio_check(args: argparse.Namespace) -> int:
    from ..fio.safety import capabilities, check_target

    c = check_target(args.target, args.destroy_data)
    if c.kind == "block":
        extra = f"; its data will be destroyed ({'; '.join(c.signatures)})" if c.signatures else ""
        print(f"{c.path}: block device {c.name}, {c.size_bytes or 0:,} B; may be written{extra}")
    elif c.kind == "directory":
        print(f"{c.path}: a directory; ssdlab creates its own test file in it and removes it afterwards")
    else:
        print(f"{c.path}: ssdlab creates this file and removes it afterwards")
    caps = capabilities(c)
    print(f"  TRIM: {'yes' if caps.trim is None else 'no: ' + caps.trim}")
    print(f"  secure erase: {'yes' if caps.secure_erase is None else 'no: ' + caps.secure_erase}")
    return EXIT_OK


def cmd_fio_parse(args: argparse.Namespace) -> int:
    from ..fio.parse import read_fio_output

    if args.jobfile and not args.log_dir:
        raise UsageError("argument --jobfile: matches logs to jobs; give it with --log-dir")
    r = read_fio_output(args.output, args.log_dir, args.jobfile)
    if args.json:
        print(json.dumps(r.to_dict(), indent=2))
    else:
        print("\n".join(r.summary_lines()))
    return EXIT_OK


def cmd_fio_import(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..backends.fio_results import results_from_fio
    from ..fio.parse import read_fio_output
    from ..results import save_document, write_figures_csv

    docs = results_from_fio(read_fio_output(args.output, args.log_dir), args.name, command=command_line())
    base = Path(args.out) / "results" / docs[0]["drive"]["id"]
    for d in docs:
        save_document(d, base / f"{d['test']['id']}.json")
    write_figures_csv(docs, base / "figures.csv")
    print(f"ssdlab fio-import: {len(docs)} test(s) ({', '.join(d['test']['id'] for d in docs)}) of {docs[0]['drive']['id']} "
          f"in {base}; 'ssdlab report {args.out} ... --out DIR' draws them")
    return EXIT_OK


# ---------------------------------------------------------------------------
# ssdlab review --device
# ---------------------------------------------------------------------------


def add_device_flags(p: argparse.ArgumentParser) -> None:
    """``ssdlab review``'s flags for a real target (instead of --drive)."""
    g = p.add_argument_group("a real drive through fio (instead of --drive)")
    g.add_argument("--device", metavar="FILE_OR_DEV",
                   help="run the suite with fio on a block device, or on a test file ssdlab creates (a new file "
                        "name or a directory; removed afterwards)")
    g.add_argument("--destroy-data", dest="destroy_data", metavar="DEVICE",
                   help="allow overwriting DEVICE although it holds a partition table or filesystem (must name the "
                        "--device; a mounted or busy device is never written)")
    g.add_argument("--size", type=positive_size_bytes, metavar="SIZE",
                   help="size of the test file on a file target (fio sizes; default 1g, less when free space is short)")
    g.add_argument("--clean-by-trim", dest="clean_by_trim", action="store_true",
                   help="on a block device that accepts TRIM, reach the 'clean' state by a TRIM of the span instead of "
                        "a secure erase (noted in the results); without it, tests that start from a clean drive are skipped")
    g.add_argument("--fio", metavar="PATH", help="the fio executable (default: fio on PATH)")


def cmd_review_device(args: argparse.Namespace, test_ids: Sequence[str]) -> int:
    """``ssdlab review --device TARGET --out DIR``: the suite through fio on a
    real target, then the report. Ctrl-C or SIGTERM stop fio; the finished
    tests are kept and drawn."""
    from ..backends.fio_runner import DeviceReviewInterrupted, review_device
    from ..report import build_report
    from ..suite.scale import get_scale

    if args.drive:
        raise UsageError("review: give --drive or --device, not both (merge the two reviews with 'ssdlab report OUT1 OUT2 --out DIR')")
    os.makedirs(args.out, exist_ok=True)
    cmd = command_line()
    results = os.path.join(args.out, "results")
    earlier = sorted(Path(results).rglob("*.json")) if os.path.isdir(results) else []
    if earlier:
        # a real drive has changed since: its earlier results cannot be kept as this run's
        raise UsageError(f"{args.out} holds {len(earlier)} results of an earlier run ({earlier[0]}, ...); a review of a real "
                         "drive does not resume: give another --out, or remove them")
    try:
        done = review_device(args.device, args.out, list(test_ids), scale=get_scale("quick" if args.quick else "full"),
                             size_bytes=args.size, destroy_data=args.destroy_data, clean_by_trim=args.clean_by_trim,
                             fio=args.fio, seed=args.seed, command=cmd)
    except DeviceReviewInterrupted as e:
        if e.saved:
            page = build_report(load_results(e.saved), args.out, command=cmd)
            what = f"the report of the {len(e.saved)} finished or skipped tests is {page}"
        else:
            what = "no test had finished"
        print(f"ssdlab: interrupted; fio stopped; {what} (results in {results})", file=sys.stderr)
        return EXIT_INTERRUPTED
    page = build_report(load_results(done.saved), args.out, command=cmd)
    print(f"ssdlab review: {done.ran} tests run and {done.skipped} skipped on {done.target} "
          f"({done.wall_time_s:.0f} s); results in {results}; report {page}")
    return EXIT_OK

