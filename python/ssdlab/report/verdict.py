"""The verdict at the top of a review: the headline figures of every drive
(the reviewers' set), a generated text per drive that says what stands out
against the others, and a one-line take per test. Plain Python over results
documents (no matplotlib), so it is tested on its own.

"The field" is every other drive of the report: a drive's figure is compared
with the median of the others' (so one drive cannot pull the comparison
towards itself), and ranked among all of them."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

__all__ = [
    "Headline",
    "HEADLINE",
    "headline_values",
    "consistency_spread",
    "standouts",
    "drive_texts",
    "section_take",
    "fmt_value",
    "SPEC_FIGURES",
    "spec_rows",
]

#: ``by_test[test_id][drive] = results document``
ByTest = Mapping[str, Mapping[str, Mapping[str, Any]]]


@dataclass(frozen=True)
class Headline:
    """One headline figure: where it comes from (test, chart, label) and how to read it."""

    key: str
    group: str
    title: str
    test_id: str
    chart: str
    label: str
    unit: str
    higher_is_better: bool = True


_SB = (("heavy-2011", "Heavy 2011"), ("light-2011", "Light 2011"), ("typical-2010", "Typical 2010"),
       ("multitasking-2010", "Multitasking 2010"), ("gaming-2010", "Gaming 2010"))

#: The reviewers' headline set. Random reads at QD32 come from the ``rated``
#: test (4KB QD32 over 8GB written first: the corner's conditions at QD32);
#: writes are the incompressible runs (no controller can reduce them).
HEADLINE: Tuple[Headline, ...] = (
    Headline("rr3", "4KB random (MB/s)", "read QD3", "corners-4k-random-read-qd3", "mbps", "read", "MB/s"),
    Headline("rr32", "4KB random (MB/s)", "read QD32", "rated", "mbps", "4KB random read", "MB/s"),
    Headline("rw3", "4KB random (MB/s)", "write QD3", "corners-4k-random-write-qd3", "mbps", "incompressible", "MB/s"),
    Headline("rw32", "4KB random (MB/s)", "write QD32", "corners-4k-random-write-qd32", "mbps", "incompressible", "MB/s"),
    Headline("sr", "128KB sequential (MB/s)", "read", "corners-seq-read-128k", "mbps", "incompressible", "MB/s"),
    Headline("sw", "128KB sequential (MB/s)", "write", "corners-seq-write-128k", "mbps", "incompressible", "MB/s"),
    *(Headline(f"sb-{w}", "Storage Bench (MB/s)", t, f"storage-bench-{w}", "rate", "all", "MB/s") for w, t in _SB),
    Headline("ss", "Steady state, 4KB random write QD32", "IOPS", "consistency", "mean_iops", "default", "IOPS"),
    Headline("spread", "Steady state, 4KB random write QD32", "spread (sd, % of mean)", "consistency", "iops", "default", "%",
             higher_is_better=False),
    Headline("p-idle", "Power (W)", "idle", "power", "watts", "idle", "W", higher_is_better=False),
    Headline("p-seq", "Power (W)", "seq. write", "power", "watts", "128KB sequential write", "W", higher_is_better=False),
    Headline("p-rand", "Power (W)", "4KB QD32 write", "power", "watts", "4KB random write QD32", "W", higher_is_better=False),
)

#: How a headline figure is named in a sentence.
_LONG = {
    "rr3": "4KB random read at QD3", "rr32": "4KB random read at QD32", "rw3": "4KB random write at QD3",
    "rw32": "4KB random write at QD32", "sr": "128KB sequential read", "sw": "128KB sequential write",
    **{f"sb-{w}": f"Storage Bench {t}" for w, t in _SB},
    "ss": "steady-state 4KB random write IOPS", "spread": "steady-state IOPS spread",
    "p-idle": "idle power", "p-seq": "power in sequential writes", "p-rand": "power in 4KB random writes",
}


def fmt_value(v: Optional[float], unit: str = "") -> str:
    """A figure as the report prints it: IOPS whole, small values to 0.01, MB/s to 0.1."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if unit == "IOPS" or abs(v) >= 1000:
        return f"{v:,.0f}"
    if unit == "W" or abs(v) < 10:
        return f"{v:,.2f}"
    return f"{v:,.1f}"


def consistency_spread(run: Mapping[str, Any], from_s: float) -> Optional[float]:
    """The spread of the steady-state window: the standard deviation of the
    per-second IOPS as a percentage of their mean (0 = perfectly even)."""
    ys = [float(y) for t, y in zip(run.get("time_s", []), run.get("iops", [])) if t > from_s]
    if len(ys) < 2:
        return None
    mean = statistics.fmean(ys)
    return 100.0 * statistics.pstdev(ys) / mean if mean > 0 else None


def _value(h: Headline, doc: Mapping[str, Any]) -> Optional[float]:
    chart = doc.get("charts", {}).get(f"{h.test_id}.{h.chart}")
    if chart is None:
        return None
    if h.key == "spread":
        run = chart.get("data", {}).get(h.label)
        return None if run is None else consistency_spread(run, float(chart.get("from_s", 0.0)))
    v = chart.get("data", {}).get(h.label)
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    return float(v)


def headline_values(by_test: ByTest, drives: Sequence[str]) -> Dict[str, Dict[str, float]]:
    """``{drive: {headline key: value}}`` for the figures the results hold."""
    out: Dict[str, Dict[str, float]] = {d: {} for d in drives}
    for h in HEADLINE:
        for drive, doc in by_test.get(h.test_id, {}).items():
            if drive not in out or doc.get("skipped"):
                continue
            v = _value(h, doc)
            if v is not None:
                out[drive][h.key] = v
    return out


#: In the table, not in the texts: a spread near 0 (a drive capped at a fixed
#: rate) would be "infinitely" better than the field.
_NOT_COMPARED = frozenset({"spread"})


@dataclass(frozen=True)
class Standout:
    """One drive's figure against the field."""

    key: str
    value: float
    median_others: float
    #: How much better than the others' median (>1 better, <1 worse), whatever the direction.
    ratio: float
    rank: int
    of: int


def _rank(values: Mapping[str, float], drive: str, higher: bool) -> int:
    v = values[drive]
    return 1 + sum(1 for x in values.values() if (x > v if higher else x < v))


def standouts(values: Mapping[str, Mapping[str, float]]) -> Dict[str, List[Standout]]:
    """Each drive's headline figures against the field, best first (by how far
    above the median of the other drives)."""
    heads = {h.key: h for h in HEADLINE if h.key not in _NOT_COMPARED}
    out: Dict[str, List[Standout]] = {d: [] for d in values}
    for key, h in heads.items():
        have = {d: v[key] for d, v in values.items() if key in v}
        if len(have) < 2:
            continue
        for d, v in have.items():
            med = statistics.median([x for o, x in have.items() if o != d])
            if h.higher_is_better:
                ratio = v / med if med > 0 else (math.inf if v > 0 else 1.0)
            else:
                ratio = med / v if v > 0 else (math.inf if med > 0 else 1.0)
            out[d].append(Standout(key, v, med, ratio, _rank(have, d, h.higher_is_better), len(have)))
    for d in out:
        out[d].sort(key=lambda s: (-s.ratio, s.key))
    return out


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _against(s: Standout) -> str:
    h = next(x for x in HEADLINE if x.key == s.key)
    unit = h.unit
    # against one other drive there is no median to speak of: name that drive's figure
    other = "the other drive's" if s.of == 2 else "the others' median"
    if s.median_others == 0:
        rel = f"{other} is 0"
    elif s.value == 0:
        rel = f"{other} is {fmt_value(s.median_others, unit)} {unit}"
    else:
        pct = 100.0 * (s.value / s.median_others - 1.0)
        word = "above" if pct >= 0 else "below"
        rel = f"{abs(pct):.0f}% {word} {other} {'' if s.of == 2 else 'of '}{fmt_value(s.median_others, unit)} {unit}"
    lower = "" if h.higher_is_better else "; lower is better"
    return f"{_LONG[s.key]}, {fmt_value(s.value, unit)} {unit} ({_ordinal(s.rank)} of {s.of}; {rel}{lower})"


def drive_texts(values: Mapping[str, Mapping[str, float]]) -> Dict[str, str]:
    """A sentence or two per drive: its best and its worst headline figure
    relative to the field, with the numbers."""
    outs = standouts(values)
    texts: Dict[str, str] = {}
    for d, items in outs.items():
        if not items:
            texts[d] = ("The only drive with these figures in this report: nothing to compare with."
                        if len(values) < 2 else "No headline figure of this drive is in the results.")
            continue
        best, worst = items[0], items[-1]
        if best.ratio >= 1.0 and best is not worst:
            text = f"Stands out at {_against(best)}."
        else:
            text = f"Nowhere ahead of the field; its closest figure is {_against(best)}."
        if worst is not best and worst.ratio < 1.0:
            text += f" Weakest at {_against(worst)}."
        elif worst is not best:
            text += f" Even its weakest figure is at or above the field: {_against(worst)}."
        texts[d] = text
    return texts


# ---------------------------------------------------------------------------
# one line per test
# ---------------------------------------------------------------------------


def _main_chart(docs: Mapping[str, Mapping[str, Any]]) -> Optional[Tuple[str, Dict[str, Any]]]:
    """The chart a test's take is about: its first bar chart, else its first line chart."""
    first = next(iter(docs.values()))
    ids = list(first.get("charts", {}))
    for kind in ("bar", "line"):
        for cid in ids:
            if first["charts"][cid].get("type") == kind:
                return cid, first["charts"][cid]
    return None


def _main_label(per_drive: Mapping[str, Mapping[str, Any]]) -> Optional[str]:
    labels: List[str] = []
    for v in per_drive.values():
        labels += [lab for lab in v if lab not in labels]
    if not labels:
        return None
    return "incompressible" if "incompressible" in labels else labels[0]


def section_take(docs: Mapping[str, Mapping[str, Any]]) -> str:
    """One line on a test across drives: who leads and who trails on its main
    figure, and how far apart they are. ``docs``: ``{drive: results document}``
    of the drives that ran it."""
    if not docs:
        return ""
    main = _main_chart(docs)
    if main is None:
        return ""
    cid, chart = main
    unit = str(chart.get("unit", ""))
    higher = bool(chart.get("higher_is_better", True))
    what = ""
    values: Dict[str, float] = {}
    if chart.get("type") == "bar":
        per = {d: doc["charts"][cid]["data"] for d, doc in docs.items() if cid in doc.get("charts", {})}
        label = _main_label(per)
        if label is None:
            return ""
        values = {d: float(v[label]) for d, v in per.items()
                  if v.get(label) is not None and not math.isnan(float(v[label]))}
        several = len({lab for v in per.values() for lab in v}) > 1
        what = label if several else ""
    else:  # a sweep: the best point of the first line
        line = None
        for d, doc in docs.items():
            data = doc["charts"].get(cid, {}).get("data", {})
            if not data:
                continue
            line = line if line is not None else next(iter(data))
            ys = data.get(line, {}).get("y", [])
            if ys:
                values[d] = max(float(y) for y in ys)
        what = f"peak {line}" if line else "peak"
    if not values:
        return ""
    order = sorted(values, key=lambda d: (-values[d] if higher else values[d], d))
    lead, last = order[0], order[-1]
    head = f"{what}: " if what else ""
    if len(order) == 1:
        return f"{head}{fmt_value(values[lead], unit)} {unit}."
    lo, hi = min(values.values()), max(values.values())
    if hi == lo:
        return f"{head}every drive alike at {fmt_value(hi, unit)} {unit}."
    apart = f"{hi / lo:.1f}x apart" if lo > 0 else "the last at 0"
    word = "lowest" if not higher else "best"
    text = (f"{word} {lead} ({fmt_value(values[lead], unit)} {unit}), last {last} "
            f"({fmt_value(values[last], unit)} {unit}); {apart}.")
    return head + text if head else text[0].upper() + text[1:]


# ---------------------------------------------------------------------------
# the spec sheet beside the measurements (as `ssdlab spec`)
# ---------------------------------------------------------------------------

#: (measure label of the rated / steady-state tests, unit, column title), as ``ssdlab.suite.spec``.
SPEC_FIGURES = (
    ("sequential read", "MB/s", "Sequential read, 128KB QD32"),
    ("sequential write", "MB/s", "Sequential write, 128KB QD32"),
    ("4KB random read", "IOPS", "4KB random read, QD32"),
    ("4KB random write", "IOPS", "4KB random write, QD32"),
)


def _throughput(doc: Optional[Mapping[str, Any]], test_id: str, label: str, unit: str) -> Optional[float]:
    if doc is None or doc.get("skipped"):
        return None
    chart = doc.get("charts", {}).get(f"{test_id}.{'iops' if unit == 'IOPS' else 'mbps'}", {})
    v = chart.get("data", {}).get(label)
    return None if v is None else float(v)


def spec_rows(by_test: ByTest, drives: Mapping[str, Mapping[str, Any]],
              published: Mapping[Tuple[str, str], Tuple[float, str]]) -> Dict[str, List[Dict[str, Any]]]:
    """Per drive, per spec figure: the published rating (``published[(drive
    id, measure label)] = (value, source)``), the simulated rated-style peak
    and the steady-state figure."""
    out: Dict[str, List[Dict[str, Any]]] = {}
    for d, info in drives.items():
        rows = []
        for label, unit, title in SPEC_FIGURES:
            peak = _throughput(by_test.get("rated", {}).get(d), "rated", label, unit)
            steady = _throughput(by_test.get("steady-state", {}).get(d), "steady-state", label, unit)
            pub = published.get((str(info.get("preset_id", info.get("id"))), label))
            rows.append({"title": title, "label": label, "unit": unit, "peak": peak, "steady": steady,
                         "rated": None if pub is None else pub[0], "source": None if pub is None else pub[1]})
        if any(r["peak"] is not None or r["steady"] is not None for r in rows):
            out[d] = rows
    return out
