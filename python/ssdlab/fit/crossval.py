"""Cross-validation of the calibration (``ssdlab calibrate --cross-validate``):
for each preset, its controller profile is fitted on the rows of the other
presets that share it, then the preset's own rows are predicted with those
values. Every row's in-sample error (the committed values, fitted by hand on
every row) beside its out-of-sample error says how far the model can be
trusted on a drive it has not seen.

A profile used by one preset has no out-of-sample figure (nothing else to fit
it on). The folds' fits start from the middle of the bounds by default
(``start="center"``): starting from the committed values would hand each fold
the held-out rows' information through the start.
"""

from __future__ import annotations

import csv
import statistics
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, TextIO

from ..cluster import Runner
from ..outputs import atomic_open
from .evaluate import evaluate_many
from .params import Target, profile_target
from .study import fit_many

__all__ = ["TARGET_MEDIAN", "TARGET_WORST", "cross_validate", "write_csv", "CSV_FIELDS", "format_cross_validation"]

#: The target for every controller profile with two or more presets: out-of-sample
#: median |error| within 10 %, no row beyond 25 %.
TARGET_MEDIAN = 0.10
TARGET_WORST = 0.25

CSV_FIELDS = ["profile", "drive_id", "line", "row", "kind", "unit", "published", "in_sample_simulated", "in_sample_error",
              "out_of_sample_simulated", "out_of_sample_error", "fold_train_objective"]


def _profiles(table: Optional[Path]) -> List[str]:
    from ..drive import Drive
    from ..suite.calibrate import load_table

    return sorted({Drive.load(r.drive_id).config["drive"]["controller"] for r in load_table(table)})


def _abs(xs: Sequence[Optional[float]]) -> List[float]:
    return [abs(x) for x in xs if x is not None]


def cross_validate(profiles: Optional[Sequence[str]] = None, table: Optional[Path] = None, trials: int = 32,
                   sampler: str = "cmaes", seed: int = 1, start: str = "center", storage: Optional[str] = None,
                   resume: bool = False, batch: Optional[int] = None, runner: Optional[Runner] = None,
                   stream: Optional[TextIO] = sys.stderr, free_path: Optional[Path] = None) -> Dict[str, Any]:
    """Every row's in-sample and out-of-sample error, and per profile the
    median and worst of each (JSON-ready)."""
    own = runner is None
    run = runner if runner is not None else Runner()
    try:
        targets: Dict[str, Target] = {p: profile_target("profile", p, table, free_path) for p in (profiles or _profiles(table))}
        folds: List[Target] = []
        held: List[str] = []
        for t in targets.values():
            if len(t.drives) >= 2:
                for d in t.drives:
                    folds.append(t.without(d))
                    held.append(d)
        # in-sample: the committed values on every row
        committed = dict(zip(targets, evaluate_many([(t, t.committed()) for t in targets.values()], run)))
        fits = fit_many(folds, trials=trials, sampler=sampler, seed=seed, storage=storage, resume=resume,
                        starts=[f.start(start) for f in folds], batch=batch, runner=run, stream=stream)
        # out-of-sample: each held-out preset's rows with its fold's values
        preds = evaluate_many([(targets[f.target.id].without_all_but(d), f.best.values) for f, d in zip(fits, held)], run)
        out_sim: Dict[int, Optional[float]] = {}
        fold_obj: Dict[int, float] = {}
        for f, ev in zip(fits, preds):
            for r, s in zip(ev.rows, ev.simulated):
                out_sim[r.line] = s
                fold_obj[r.line] = f.best.objective
        rows: List[Dict[str, Any]] = []
        summary: List[Dict[str, Any]] = []
        for pid, t in targets.items():
            ev = committed[pid]
            prow: List[Dict[str, Any]] = []
            for r, s in zip(t.rows, ev.simulated):
                o = out_sim.get(r.line)
                prow.append({
                    "profile": pid, "drive_id": r.drive_id, "line": r.line, "row": r.describe(), "kind": r.kind,
                    "unit": r.unit, "published": r.value,
                    "in_sample_simulated": s, "in_sample_error": None if s is None else s / r.value - 1.0,
                    "out_of_sample_simulated": o, "out_of_sample_error": None if o is None else o / r.value - 1.0,
                    "fold_train_objective": fold_obj.get(r.line),
                })
            rows.extend(prow)
            ins = _abs([x["in_sample_error"] for x in prow])
            outs = _abs([x["out_of_sample_error"] for x in prow])
            multi = len(t.drives) >= 2
            entry: Dict[str, Any] = {
                "profile": pid, "presets": sorted(t.drives), "rows": len(prow),
                "free_parameters": [p.key for p in t.params],
                "in_sample_median": statistics.median(ins) if ins else None, "in_sample_worst": max(ins, default=None),
                "out_of_sample_median": statistics.median(outs) if outs and multi else None,
                "out_of_sample_worst": max(outs, default=None) if multi else None,
            }
            if multi:
                entry["meets_target"] = bool(outs) and statistics.median(outs) <= TARGET_MEDIAN and max(outs) <= TARGET_WORST
            summary.append(entry)
        return {
            "about": "in-sample: the committed profile values (fitted by hand on every row); out-of-sample: the "
                     "profile fitted without the preset's rows, then the preset's rows predicted. Errors are "
                     "simulated / published - 1.",
            "target": {"out_of_sample_median": TARGET_MEDIAN, "out_of_sample_worst": TARGET_WORST,
                       "applies_to": "profiles with two or more presets"},
            "settings": {"trials": trials, "sampler": sampler, "seed": seed, "start": start, "storage": storage},
            "profiles": summary,
            "folds": [{"profile": f.target.id, "held_out": d, "trials": f.trials, "train_objective": f.best.objective,
                       "values": f.best.values, "committed": f.committed.values, "interrupted": f.interrupted}
                      for f, d in zip(fits, held)],
            "rows": rows,
        }
    finally:
        if own:
            run.close()


def write_csv(doc: Dict[str, Any], path: Path) -> None:
    with atomic_open(path, newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_FIELDS, extrasaction="ignore")
        w.writeheader()
        w.writerows(doc["rows"])


def _pct(x: Optional[float]) -> str:
    return "-" if x is None else f"{x * 100:.1f}%"


def _spct(x: Optional[float]) -> str:
    return "-" if x is None else f"{x * 100:+.1f}%"


def format_cross_validation(doc: Dict[str, Any], markdown: bool = False) -> str:
    """The per-profile table (and, in text, every row)."""
    s = doc["settings"]
    lines: List[str] = []
    if markdown:
        lines += ["| profile | presets | rows | in-sample median / worst | out-of-sample median / worst | target |",
                  "|---|---|---|---|---|---|"]
        for p in doc["profiles"]:
            ok = "-" if "meets_target" not in p else ("met" if p["meets_target"] else "**missed**")
            lines.append(f"| `{p['profile']}` | {', '.join(p['presets'])} | {p['rows']} | {_pct(p['in_sample_median'])} / "
                         f"{_pct(p['in_sample_worst'])} | {_pct(p['out_of_sample_median'])} / {_pct(p['out_of_sample_worst'])} | {ok} |")
        return "\n".join(lines)
    lines.append(f"cross-validation: {s['trials']} trials per fold ({s['sampler']}, seed {s['seed']}, start {s['start']}); "
                 f"target out-of-sample median <= {TARGET_MEDIAN:.0%}, worst <= {TARGET_WORST:.0%} (profiles with 2+ presets)")
    lines.append(f"  {'profile':<24} {'presets':>7} {'rows':>4}  {'in-sample med/worst':>20}  {'out-of-sample med/worst':>24}  target")
    for p in doc["profiles"]:
        ok = "" if "meets_target" not in p else ("met" if p["meets_target"] else "MISSED")
        lines.append(f"  {p['profile']:<24} {len(p['presets']):>7} {p['rows']:>4}  "
                     f"{_pct(p['in_sample_median']):>9} / {_pct(p['in_sample_worst']):<8}  "
                     f"{_pct(p['out_of_sample_median']):>11} / {_pct(p['out_of_sample_worst']):<10}  {ok}")
    lines.append(f"  {'drive':<22} {'row':<46} {'published':>10} {'in-sample':>9} {'out-of-sample':>13}")
    for r in doc["rows"]:
        lines.append(f"  {r['drive_id']:<22} {r['row'][:46]:<46} {r['published']:>10,.1f} {_spct(r['in_sample_error']):>9} "
                     f"{_spct(r['out_of_sample_error']):>13}")
    return "\n".join(lines)
