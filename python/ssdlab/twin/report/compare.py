"""A drive against its twin, figure by figure: the review's summary figures
(``figures[]`` of every results document, docs/results-schema.md) of the
original drive and of the twin side by side, with the twin's error.

A figure is one ``(test, chart, label, metric)`` of a results document (e.g.
``cdm``, ``cdm.mbps``, ``SEQ1M Q8T1 read``, ``read MB/s``). Its error is
``twin / original - 1``; it is within the tolerance (15%) when
``|error| <= 0.15``. A figure whose original is 0 (a consistency run's
slowest second, a stall) has no relative error: it is compared by the
absolute difference and flagged (``compared = "absolute"``; within only when
both are equal). A figure that is a share of a whole (unit ``%``: a
consistency run's drop from its peak) is compared by its difference in
points of that whole (``compared = "points"``; ``error`` is the difference
as a share of the whole, within when at most the tolerance, 15 points): the
relative error of a share near 0 is noise (0.4% against 0.9% of the peak is
the same flat run, a 125% relative error), while 15 points of the whole is
the tolerance every rate gets. A figure without a value (a non-finite result, written as
null) is flagged ``missing``: within when neither side has one (both reached
no steady state), never when one side has one. Tests skipped on
either side (``skipped``: the quick scale, a real drive that could not run
it) are left out and listed, as are tests present on one side only.

A real drive does not give the same figure twice. Given several runs of the
original (``repeats``: more reviews of the same target at the same scale),
the original's figure is the median of its runs, and the figure's *spread*
is the device's own largest deviation from that median (relative, or in
points for a share). The twin is within the device's spread on a figure when
its error is no larger; it *lands* within the spread overall when its median
|error| is at most the device's median spread (:func:`spread_verdict`).

pandas is needed (part of the default install; the ``twin`` extra); it is imported when a
comparison is made."""

from __future__ import annotations

import importlib
import math
import statistics
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ...errors import SsdlabError
from ...extras import install_hint
from ...suite.definitions import TESTS
from ..records import ComparisonSummary, SpreadBlock, SpreadOutside, SpreadVerdict, SummaryBlock, TestSummary, WorstFigure

__all__ = ["TOLERANCE", "COLUMNS", "compare_reviews", "summary", "one_drive", "same_original", "spread_verdict"]

#: A pandas DataFrame (typed as Any, as in ssdlab.sweep: type-checking the package does not load pandas' stubs).
DataFrame = Any

#: The twin's target: every review figure within 15% of the original's.
TOLERANCE = 0.15

#: The columns of :func:`compare_reviews`'s table, in order.
COLUMNS = ["test_id", "chart", "label", "metric", "figure", "unit", "original", "twin", "error", "abs_error",
           "abs_diff", "within_15", "compared", "note", "runs", "spread", "within_spread"]


def _pandas() -> Any:
    try:
        return importlib.import_module("pandas")
    except ImportError:
        raise SsdlabError(f"the twin's comparison needs pandas: {install_hint('twin')}") from None


def finite_number(x: Any) -> Optional[float]:
    """A finite number, or None (a boolean, None, text, NaN or infinity)."""
    if x is None or isinstance(x, bool):
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def one_drive(docs: Sequence[Mapping[str, Any]], side: str) -> Dict[str, Mapping[str, Any]]:
    """``{test id: document}`` of one drive's results; ValueError (naming
    ``side``) when ``docs`` is empty, holds several drives, or mixes scales."""
    if not docs:
        raise ValueError(f"{side}: no results")
    drives = sorted({(str(d["drive"]["id"]), str(d["drive"]["hash"])) for d in docs})
    if len(drives) > 1:
        raise ValueError(f"{side}: results of {len(drives)} drives ({', '.join(f'{i} [{h[:8]}]' for i, h in drives)}); "
                         "give one drive's results")
    profiles = sorted({str(d.get("profile", "full")) for d in docs})
    if len(profiles) > 1:
        raise ValueError(f"{side}: results of several scales ({', '.join(profiles)}); give one review's results")
    return {str(d["test"]["id"]): d for d in docs}


def _figures(doc: Mapping[str, Any]) -> Dict[Tuple[str, str, str], Tuple[Optional[float], str]]:
    out: Dict[Tuple[str, str, str], Tuple[Optional[float], str]] = {}
    for f in doc.get("figures", []) or []:
        out[(str(f.get("chart", "")), str(f.get("label", "")), str(f.get("metric", "")))] = (finite_number(f.get("value")), str(f.get("unit", "")))
    return out


def _test_order(test_ids: Sequence[str]) -> List[str]:
    order = {t["id"]: i for i, t in enumerate(TESTS)}
    return sorted(test_ids, key=lambda t: (order.get(t, len(order)), t))


def compare_reviews(original_docs: Sequence[Mapping[str, Any]], twin_docs: Sequence[Mapping[str, Any]],
                    tolerance: float = TOLERANCE, repeats: Sequence[Sequence[Mapping[str, Any]]] = ()) -> DataFrame:
    """One row per figure of every test that ran on both drives (columns
    :data:`COLUMNS`, tests in the suite's order, figures in the original's
    order): ``original``, ``twin``, ``error`` (twin / original - 1; None when
    compared by the absolute difference or missing), ``abs_error``,
    ``abs_diff`` (|twin - original|), ``within_15`` (|error| <= ``tolerance``;
    for ``absolute`` rows: both equal; for ``missing`` ones: neither has a value),
    ``compared`` (``relative``, ``points``, ``absolute`` or ``missing``) and ``note``;
    ``runs`` (the original's runs with a value), ``spread`` (the device's own
    largest deviation from the median of its runs; NaN with one run) and
    ``within_spread`` (|error| at most ``spread``; NA without a spread).

    ``repeats``: further runs of the original (each one review's results of
    the same drive at the same scale); the original's figure is then the
    median of every run's. ValueError when a run is of another drive or scale.

    ``df.attrs``: ``skipped`` (``[{"test_id", "side", "why"}]``, tests left
    out because they did not run on a side), ``only_original`` and
    ``only_twin`` (test ids), ``original`` and ``twin`` (``{"id", "name",
    "hash", "profile"}``) and ``tolerance``. ValueError when a side holds
    several drives, or the two sides were run at different scales
    (quick against full: not comparable)."""
    pd = _pandas()
    orig = one_drive(original_docs, "original")
    twin = one_drive(twin_docs, "twin")
    p_orig = str(next(iter(orig.values())).get("profile", "full"))
    p_twin = str(next(iter(twin.values())).get("profile", "full"))
    if p_orig != p_twin:
        raise ValueError(f"the original's results are of the {p_orig} scale and the twin's of the {p_twin} scale: "
                         "run both at the same scale (--quick or not)")
    runs = [orig] + [same_original(orig, r, i + 2) for i, r in enumerate(repeats)]
    skipped: List[Dict[str, str]] = []
    rows: List[Dict[str, Any]] = []
    for tid in _test_order([t for t in orig if t in twin]):
        o, t = orig[tid], twin[tid]
        why_o, why_t = o.get("skipped"), t.get("skipped")
        if why_o or why_t:
            side = "both" if why_o and why_t else ("original" if why_o else "twin")
            skipped.append({"test_id": tid, "side": side, "why": str(why_o or why_t)})
            continue
        fo, ft = _figures(o), _figures(t)
        fruns = [_figures(r[tid]) for r in runs[1:] if tid in r and not r[tid].get("skipped")]
        for key, (vo, unit) in fo.items():
            if key not in ft:
                continue
            vt, unit_t = ft[key]
            values = [v for v in [vo] + [f.get(key, (None, unit))[0] for f in fruns] if v is not None]
            med = float(statistics.median(values)) if len(values) > 1 else vo
            row = _figure_row(tid, key, med, unit, vt, unit_t, tolerance)
            row.update(_spread(values, med, unit, row))
            rows.append(row)
    df = pd.DataFrame.from_records(rows, columns=COLUMNS)
    for c in ("original", "twin", "error", "abs_error", "abs_diff", "spread"):
        df[c] = df[c].astype("float64")
    df["within_15"] = df["within_15"].astype(bool)
    df["runs"] = df["runs"].astype("int64")
    df["within_spread"] = df["within_spread"].astype("boolean")

    def who(docs: Mapping[str, Mapping[str, Any]]) -> Dict[str, Any]:
        d = next(iter(docs.values()))
        return {"id": d["drive"]["id"], "name": d["drive"].get("name", d["drive"]["id"]), "hash": d["drive"]["hash"],
                "profile": str(d.get("profile", "full"))}

    df.attrs["skipped"] = skipped
    df.attrs["only_original"] = _test_order([t for t in orig if t not in twin])
    df.attrs["only_twin"] = _test_order([t for t in twin if t not in orig])
    df.attrs["original"] = who(orig)
    df.attrs["twin"] = who(twin)
    df.attrs["tolerance"] = tolerance
    df.attrs["runs"] = len(runs)
    return df


def same_original(first: Mapping[str, Mapping[str, Any]], docs: Sequence[Mapping[str, Any]], n: int
                   ) -> Dict[str, Mapping[str, Any]]:
    """Run ``n`` of the original by test id; ValueError unless it is the first run's drive at its scale."""
    run = one_drive(docs, f"original run {n}")
    a, b = next(iter(first.values())), next(iter(run.values()))
    if (a["drive"]["id"], a["drive"]["hash"]) != (b["drive"]["id"], b["drive"]["hash"]):
        raise ValueError(f"original run {n} is of {b['drive']['id']} [{str(b['drive']['hash'])[:8]}], the first of "
                         f"{a['drive']['id']} [{str(a['drive']['hash'])[:8]}]: give runs of one target")
    if str(a.get("profile", "full")) != str(b.get("profile", "full")):
        raise ValueError(f"original run {n} is of the {b.get('profile', 'full')} scale, the first of the "
                         f"{a.get('profile', 'full')} scale: give runs of one scale")
    return run


def _spread(values: Sequence[float], med: Optional[float], unit: str, row: Mapping[str, Any]) -> Dict[str, Any]:
    """The device's own spread over its runs (largest deviation from their median: relative, or in points of a
    share as the row is compared), and whether the twin's error is within it."""
    spread: Optional[float] = None
    if len(values) > 1 and med is not None:
        if row["compared"] == "points":
            spread = max(abs(v - med) for v in values) / 100
        elif row["compared"] == "relative" and med != 0:
            spread = max(abs(v / med - 1) for v in values)
    err = row["abs_error"]
    within = None if spread is None or err is None else bool(err <= spread + 1e-12)
    return {"runs": len(values), "spread": spread, "within_spread": within}


def _figure_row(tid: str, key: Tuple[str, str, str], vo: Optional[float], unit: str, vt: Optional[float], unit_t: str,
                tolerance: float) -> Dict[str, Any]:
    """One figure of both drives compared: relatively, in points of a share, absolutely (an original of 0) or
    flagged missing."""
    chart, label, metric = key
    note = "" if unit_t == unit else f"units differ: {unit} against {unit_t}"
    err: Optional[float] = None
    diff: Optional[float] = None
    if vo is None and vt is None:
        compared, within = "missing", True
        note = "; ".join(x for x in (note, "no value on either side (e.g. no steady state reached)") if x)
    elif vo is None or vt is None:
        compared, within = "missing", False
        note = "; ".join(x for x in (note, f"no value for the {'original' if vo is None else 'twin'}") if x)
    elif unit == "%" and unit_t == unit:
        compared = "points"
        diff = abs(vt - vo)
        err = (vt - vo) / 100
        within = abs(err) <= tolerance + 1e-12
        note = "a share of a whole: compared by the difference in points"
    elif vo == 0:
        compared = "absolute"
        diff = abs(vt - vo)
        within = diff == 0
        note = "; ".join(x for x in (note, "original is 0: compared by the absolute difference") if x)
    else:
        compared = "relative"
        err = vt / vo - 1
        diff = abs(vt - vo)
        within = abs(err) <= tolerance + 1e-12
    return {"test_id": tid, "chart": chart, "label": label, "metric": metric,
            "figure": f"{label}: {metric}" if label else metric, "unit": unit, "original": vo, "twin": vt,
            "error": err, "abs_error": None if err is None else abs(err), "abs_diff": diff,
            "within_15": bool(within) and not note.startswith("units differ"), "compared": compared,
            "note": note}


def _f(x: Any) -> Optional[float]:
    v = finite_number(x)
    return None if v is None else float(v)


def summary(df: DataFrame) -> ComparisonSummary:
    """The comparison in a few numbers (JSON-ready): per test (in the
    table's order) the figures compared, the median |error| and the worst
    figure (signed error) of the relatively compared ones (and the shares
    compared in points, whose error is the difference as a share of the whole), how many are
    within the tolerance, and the flagged ones; overall the same, with the
    share of figures within the tolerance (over every figure: a flagged
    one counts as within only when both sides are equal). The table's
    ``attrs`` (skipped tests, one-sided tests, drives) are carried over."""
    tol = float(df.attrs.get("tolerance", TOLERANCE))

    def block(sub: DataFrame) -> SummaryBlock:
        rel = sub[sub["compared"].isin(["relative", "points"])]
        n = int(len(sub))
        within = int(sub["within_15"].sum())
        worst: Optional[WorstFigure] = None
        sp = _spread_block(sub)
        if len(rel):
            i = rel["abs_error"].idxmax()
            r = rel.loc[i]
            worst = {"test_id": str(r["test_id"]), "figure": str(r["figure"]), "unit": str(r["unit"]),
                     "original": _f(r["original"]), "twin": _f(r["twin"]), "error": _f(r["error"])}
        return {
            "figures": n,
            "relative": int((sub["compared"] == "relative").sum()),
            "points": int((sub["compared"] == "points").sum()),
            "absolute": int((sub["compared"] == "absolute").sum()),
            "missing": int((sub["compared"] == "missing").sum()),
            "within": within,
            "share_within": (within / n) if n else None,
            "median_abs_error": float(statistics.median(rel["abs_error"])) if len(rel) else None,
            "worst": worst,
            "spread_figures": sp["spread_figures"],
            "within_spread": sp["within_spread"],
            "median_spread": sp["median_spread"],
            "median_abs_error_spread": sp["median_abs_error_spread"],
        }

    tests: List[TestSummary] = []
    for tid in dict.fromkeys(df["test_id"]):
        tests.append({"test_id": str(tid), **block(df[df["test_id"] == tid])})
    return {
        "tolerance": tol,
        "overall": block(df),
        "tests": tests,
        "skipped": list(df.attrs.get("skipped", [])),
        "only_original": list(df.attrs.get("only_original", [])),
        "only_twin": list(df.attrs.get("only_twin", [])),
        "original": df.attrs.get("original"),
        "twin": df.attrs.get("twin"),
        "runs": int(df.attrs.get("runs", 1)),
        "spread": spread_verdict(df),
    }


def _spread_block(sub: DataFrame) -> SpreadBlock:
    """The figures with a device spread: how many, how many the twin is within, the median spread and the twin's
    median |error| over those same figures."""
    sp = sub[sub["spread"].notna() & sub["abs_error"].notna()]
    if not len(sp):
        return {"spread_figures": 0, "within_spread": None, "median_spread": None, "median_abs_error_spread": None}
    return {"spread_figures": int(len(sp)), "within_spread": int(sp["within_spread"].astype(bool).sum()),
            "median_spread": float(statistics.median(sp["spread"])),
            "median_abs_error_spread": float(statistics.median(sp["abs_error"]))}


def spread_verdict(df: DataFrame) -> Optional[SpreadVerdict]:
    """Whether the twin lands within the device's own run-to-run spread (None with one run of the original):
    ``lands`` when the twin's median |error| is at most the device's median spread, over the figures that have a
    spread; ``statement``, a plain sentence; ``outside``, the tests furthest outside (their median |error| over
    their median spread, worst first)."""
    runs = int(df.attrs.get("runs", 1))
    if runs < 2:
        return None
    b = _spread_block(df)
    err, spread = b["median_abs_error_spread"], b["median_spread"]
    outside: List[SpreadOutside] = []
    if err is None or spread is None:
        return _verdict(runs, None, outside, b, f"{runs} runs of the original, but no figure has a spread to compare with")
    for tid in dict.fromkeys(df["test_id"]):
        t = _spread_block(df[df["test_id"] == tid])
        t_err, t_spread = t["median_abs_error_spread"], t["median_spread"]
        if t_err is not None and t_spread is not None and t_err > t_spread:
            outside.append({"test_id": str(tid), "median_abs_error": t_err, "median_spread": t_spread})
    outside.sort(key=lambda o: o["median_abs_error"] - o["median_spread"], reverse=True)
    lands = err <= spread + 1e-12
    head = (f"median |error| {100 * err:.1f}% against the device's own median spread {100 * spread:.1f}% over {runs} "
            f"runs; {b['within_spread']} of {b['spread_figures']} figures within their own spread")
    if lands:
        statement = f"the twin lands within the device's run-to-run spread: {head}"
    else:
        worst = ", ".join(f"{o['test_id']} ({100 * o['median_abs_error']:.0f}% against {100 * o['median_spread']:.0f}%)"
                          for o in outside[:3])
        statement = f"the twin does not land within the device's run-to-run spread: {head}; furthest outside: {worst}"
    return _verdict(runs, bool(lands), outside, b, statement)


def _verdict(runs: int, lands: Optional[bool], outside: List[SpreadOutside], b: SpreadBlock, statement: str
             ) -> SpreadVerdict:
    return {"runs": runs, "lands": lands, "outside": outside, "spread_figures": b["spread_figures"],
            "within_spread": b["within_spread"], "median_spread": b["median_spread"],
            "median_abs_error_spread": b["median_abs_error_spread"], "statement": statement}
