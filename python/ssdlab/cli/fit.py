"""``ssdlab fit``: fit a controller profile (or NAND part, or your drive file)
to the calibration table; ``ssdlab calibrate --cross-validate`` lives in
``suite.py`` and calls :mod:`ssdlab.fit.crossval`."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

from ..extras import require
from ..outputs import write_text
from ..results import command_line
from .flags import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    UsageError,
    add_json,
    add_runner,
    bounded_whole,
    check_output,
    fraction,
    output_file,
    print_json,
    seed,
)

__all__ = ["add_parsers", "add_fit_options", "format_fit"]


#: The most trials (and polish evaluations) one fit runs, and trials at once: each is a set of simulations.
MAX_TRIALS = 100_000
MAX_BATCH = 1024


def add_fit_options(p: argparse.ArgumentParser, trials: int) -> None:
    """The optimiser's flags (``fit`` and ``calibrate --cross-validate``)."""
    p.add_argument("--trials", type=bounded_whole(MAX_TRIALS), default=trials,
                   help=f"trials per fit (default {trials}, at most {MAX_TRIALS:,})")
    p.add_argument("--sampler", choices=["cmaes", "tpe"], default="cmaes",
                   help="Optuna's CMA-ES (default; TPE on one free parameter) or TPE")
    p.add_argument("--fit-seed", type=seed, default=1, help="the optimiser's seed (default 1); simulations use seed 1")
    p.add_argument("--batch", type=bounded_whole(MAX_BATCH), help=f"trials evaluated at once per fit (default: the workers; at most {MAX_BATCH})")
    p.add_argument("--free", metavar="FILE", help="free parameters and bounds (default: ssdlab/fit/free.toml)")


def add_parsers(sub: Any) -> None:
    f = sub.add_parser(
        "fit",
        help="fit a controller profile's free parameters to the calibration table (Optuna)",
        description="Fit the free parameters of a controller profile (ssdlab/fit/free.toml: bounds and reasons), of "
        "a NAND part (its datasheet ranges) or of your drive file jointly to every calibration row of every drive "
        "that uses them: the root mean square of row error / tolerance is minimised (rated 'up to' figures count "
        "only when exceeded). Trials run in parallel batches on the runner (--jobs, --scheduler); the study is "
        "kept in a SQLite file (--storage) so --resume continues a stopped fit. Writes the fitted values as a TOML "
        "diff with every row's residual (--out).",
    )
    what = f.add_mutually_exclusive_group(required=True)
    what.add_argument("--profile", metavar="ID", help="a controller profile ('ssdlab drive parts')")
    what.add_argument("--part", metavar="ID", help="a NAND part with a datasheet range")
    what.add_argument("--drive", metavar="FILE", help="your drive file (with --table: your measurements)")
    what.add_argument("--probe", metavar="DIR", help="a probe directory ('ssdlab probe'): fit a twin drive file to it "
                      "(--out default DIR/twin.toml; provenance in the .json beside it)")
    f.add_argument("--power-log", metavar="FILE", help="with --probe of a real target: a power meter's log of the probe "
                   "(one 'UNIX_TIME,WATTS' line per reading), from which the twin's power model is fitted (a simulated "
                   "target's probe reads its power itself)")
    f.add_argument("--polish", type=bounded_whole(MAX_TRIALS, low=0), metavar="N",
                   help="with --probe: evaluations of the pattern search that moves the twin's times after the sampler "
                        "(default 80; 0: none)")
    f.add_argument("--table", metavar="FILE", help="the calibration table (default: the built-in one; with --drive: required)")
    add_fit_options(f, trials=40)
    f.add_argument("--start", choices=["committed", "center"], default="committed",
                   help="the first trial: the committed values (default) or the middle of the bounds")
    f.add_argument("--perturb", type=_perturb, default=0.0, metavar="FRACTION",
                   help="start every free value this much off (0.3: 30%% above, -0.3: 30%% below; within the bounds)")
    f.add_argument("--storage", type=output_file, metavar="FILE", help="the Optuna study (SQLite; default fit-ID.db beside --out)")
    f.add_argument("--resume", action="store_true", help="continue the fit stored in --storage")
    f.add_argument("--out", metavar="FILE", help="the TOML diff (default fit-ID.toml)")
    add_json(f, "print the fit as JSON (parameters, objective, every row)")
    add_runner(f)
    f.set_defaults(func=cmd_fit)


def _perturb(text: str) -> float:
    v = fraction(text)
    if not -1 < v <= 100:
        raise argparse.ArgumentTypeError(f"{text}: a fraction above -1 (-0.3: 30% below) and at most 100")
    return v


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", Path(text).stem if text.endswith((".toml", ".json")) else text)


def format_fit(summary: Any) -> str:
    t = summary["target"]
    o = summary["objective"]
    lines = [f"fit of {t['kind']} {t['id']}: {summary['trials']} trials ({summary['sampler']}, seed {summary['seed']})"
             + (" INTERRUPTED" if summary["interrupted"] else ""),
             f"  objective (RMS of error / tolerance): committed {o['committed']:.4f} -> fitted {o['fitted']:.4f}; "
             f"worst row {o['committed_worst']:.3f} -> {o['fitted_worst']:.3f} tolerances",
             f"  {'parameter':<36} {'committed':>14} {'start':>14} {'fitted':>14}"]
    for p in summary["parameters"]:
        lines.append(f"  {p['key']:<36} {p['committed']:>14,} {p['start']:>14,} {p['fitted']:>14,}")
    lines.append(f"  {'drive':<22} {'row':<48} {'published':>10} {'fitted':>10} {'error':>7} {'committed':>9}")
    for r in summary["rows"]:
        e = "-" if r["error"] is None else f"{r['error'] * 100:+.1f}%"
        c = "-" if r["committed_error"] is None else f"{r['committed_error'] * 100:+.1f}%"
        sim = "-" if r["simulated"] is None else f"{r['simulated']:,.1f}"
        lines.append(f"  {r['drive_id']:<22} {r['row'][:48]:<48} {r['published']:>10,.1f} {sim:>10} {e:>7} {c:>9}"
                     + ("  (up to)" if r["one_sided"] else ""))
    return "\n".join(lines)


def _fit_probe(args: argparse.Namespace) -> int:
    from ..cluster import Runner
    from ..twin.fit import POLISH_EVALUATIONS, fit_twin
    from ..twin.probe import apply_power_log, load_probe

    for flag in ("table", "free"):
        if getattr(args, flag):
            raise UsageError(f"argument --{flag}: does not apply to --probe (the probe's jobs are the rows; the twin's "
                             "free parameters are fixed in ssdlab.twin.fit)")
    if args.start != "committed" or args.perturb:
        raise UsageError("--start/--perturb: a twin starts where the probe's features point")
    probe = load_probe(Path(args.probe))  # one clear error for a directory without a probe
    if args.power_log is not None:
        apply_power_log(probe, args.power_log)  # one clear error for a log that does not fit the probe
    out = Path(args.out if args.out else check_output(str(Path(args.probe) / "twin.toml"), "--out"))
    storage = args.storage or check_output(str(out.with_name(f"{out.stem}-fit.db")), "--storage")
    if args.resume and not Path(storage).exists():
        raise UsageError(f"--resume: no stored fit in {storage}")
    if Path(storage).exists() and not args.resume:
        Path(storage).unlink()  # a new fit of the twin replaces the last one's study
    with Runner(jobs=args.jobs, scheduler=args.scheduler, progress=args.progress) as runner:
        rec = fit_twin(Path(args.probe), out, trials=args.trials, sampler=args.sampler, seed=args.fit_seed,
                       runner=runner, storage=storage, resume=args.resume, command=command_line(),
                       power_log=None if args.power_log is None else Path(args.power_log),
                       polish_evaluations=POLISH_EVALUATIONS if args.polish is None else args.polish)
    if args.json:
        print_json(rec)
    else:
        print(format_twin(rec))
        print(f"twin: {out} (provenance {out.with_suffix('.json')}); next: ssdlab twin-report {args.probe}")
    return EXIT_INTERRUPTED if rec["fit"]["interrupted"] else EXIT_OK


def format_twin(rec: Any) -> str:
    f = rec["fit"]
    pol = f.get("polish") or {}
    lines = [f"twin {rec['twin_id']} of {rec['source']}: {f['trials']} trials and {pol.get('evaluations', 0)} of pattern "
             f"search; objective (RMS of probe-job rate error / 10%) {f['objective_start']:.3f} at the start -> "
             f"{f.get('objective_sampler', f['objective']):.3f} sampled -> {f['objective']:.3f} polished; worst job "
             f"{f['worst']:.2f} tolerances",
             f"  {'value':<36} {'':>14}  source"]
    for k, v in rec["values"].items():
        val = v["value"]
        shown = f"{val:,}" if isinstance(val, int) and not isinstance(val, bool) else str(val)
        lines.append(f"  {k:<36} {shown:>14}  {v['source']}")
    lines.append(f"  {'probe job':<28} {'measured MB/s':>14} {'twin MB/s':>10} {'error':>7}")
    for j in rec["probe_jobs"]:
        lines.append(f"  {j['job']:<28} {j['measured_mbps']:>14,.1f} {j['twin_mbps']:>10,.1f} {j['error'] * 100:>+6.1f}%")
    rel = rec.get("reliability") or {}
    if rel.get("problems"):
        lines.append(f"UNRELIABLE TWIN: what it does not reproduce of its own probe ({len(rel['problems'])}):")
        lines += [f"  - {p}" for p in rel["problems"]]
    elif rel:
        lines.append(f"reliable twin: objective {rel['objective']:.3f}, every checked job and feature within reach")
    return "\n".join(lines)


def cmd_fit(args: argparse.Namespace) -> int:
    from ..cluster import Runner
    from ..fit import drive_target, fit, profile_target
    from ..fit.output import diff_toml

    require("twin" if args.probe else "fit", "ssdlab fit")  # before any simulation
    if args.probe:
        return _fit_probe(args)
    if args.power_log is not None:
        raise UsageError("argument --power-log: applies to --probe only (a meter's log of a real target's probe)")
    if args.polish is not None:
        raise UsageError("argument --polish: applies to --probe only (a twin's fit)")
    free = Path(args.free) if args.free else None
    if args.drive:
        if not args.table:
            raise UsageError("fit --drive: give --table FILE with your measurements (the calibration table's columns)")
        target = drive_target(args.drive, Path(args.table), free)
    elif args.profile:
        target = profile_target("profile", args.profile, Path(args.table) if args.table else None, free)
    else:
        target = profile_target("part", args.part, Path(args.table) if args.table else None, free)
    slug = _slug(target.id)
    out = Path(args.out if args.out else check_output(f"fit-{slug}.toml", "--out"))
    storage = args.storage or check_output(str(out.with_name(f"fit-{slug}.db")), "--storage")
    if args.resume and not Path(storage).exists():
        raise UsageError(f"--resume: no stored fit in {storage}")
    out.parent.mkdir(parents=True, exist_ok=True)
    Path(storage).parent.mkdir(parents=True, exist_ok=True)
    start = target.start(args.start, args.perturb)
    with Runner(jobs=args.jobs, scheduler=args.scheduler, progress=args.progress) as runner:
        result = fit(target, start=start, trials=args.trials, sampler=args.sampler, seed=args.fit_seed, storage=storage,
                     resume=args.resume, batch=args.batch, runner=runner)
    summary = result.summary()
    summary["command"] = command_line()
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text(out, diff_toml(result, command_line()))
    if args.json:
        print_json(summary)
    else:
        print(format_fit(summary))
        print(f"fitted values: {out}; study: {storage} (--resume continues it)")
    return EXIT_INTERRUPTED if result.interrupted else EXIT_OK
