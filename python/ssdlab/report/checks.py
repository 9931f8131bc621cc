"""Figures a reviewer would question before printing them.

A simulation can give a figure that is right by its model and still looks
like a measuring error to a reader: a deeper queue that runs slower, a
"steady state" faster than the clean drive. The report marks such figures
with a "check" note in their section and lists them beside the verdict, so
the reader sees them explained instead of discovering them. Plain Python over
results documents.

API: :class:`Check`; :func:`find_checks` ``(by_test) -> List[Check]``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Tuple

__all__ = ["Check", "find_checks", "TOLERANCE"]

#: How far a figure may go the unexpected way before it is marked: run-to-run
#: noise of a 1-second figure is about 1%.
TOLERANCE = 0.02

_QD = re.compile(r"\bQ(?:D)?(\d+)(?:T\d+)?\b")


@dataclass(frozen=True)
class Check:
    """One questionable figure: the test and drive it belongs to and why."""

    test_id: str
    drive: str
    message: str


def _figures(doc: Mapping[str, Any]) -> List[Mapping[str, Any]]:
    return [f for f in doc.get("figures", []) if isinstance(f.get("value"), (int, float)) and f["value"] == f["value"]]


def _queue_depth_checks(test_id: str, drive: str, doc: Mapping[str, Any]) -> List[Check]:
    """Within one test, the same operation at several queue depths: a deeper
    queue slower than a shallower one by more than :data:`TOLERANCE`."""
    groups: Dict[Tuple[str, str, str], List[Tuple[int, float, str]]] = {}
    for f in _figures(doc):
        label = str(f["label"])
        m = _QD.search(label)
        if not m or f["unit"] not in ("MB/s", "IOPS"):
            continue
        op = _QD.sub("QD", label)
        groups.setdefault((op, str(f["metric"]), str(f["unit"])), []).append((int(m.group(1)), float(f["value"]), label))
    out = []
    seen = set()
    # MB/s before IOPS: one mark per operation, on its first metric that goes the wrong way
    for (op, metric, unit), pts in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][2] != "MB/s")):
        if op in seen:
            continue
        pts.sort()
        for (qa, va, la), (qb, vb, lb) in ((a, b) for i, a in enumerate(pts) for b in pts[i + 1:]):
            if qb > qa and va > 0 and vb < va * (1 - TOLERANCE):
                out.append(Check(test_id, drive, f"{la} {va:,.1f} {unit} is above {lb} {vb:,.1f} {unit}: a deeper queue "
                                                  f"ran {100 * (1 - vb / va):.0f}% slower ({metric})"))
                seen.add(op)
                break
    return out


def _steady_above_peak(drive: str, rated: Mapping[str, Any], steady: Mapping[str, Any]) -> List[Check]:
    """The steady-state test's figure above the same figure on the clean drive."""
    peak = {(str(f["label"]), str(f["metric"])): float(f["value"]) for f in _figures(rated)}
    out = []
    seen = set()
    for f in sorted(_figures(steady), key=lambda f: f["unit"] != "MB/s"):
        p = peak.get((str(f["label"]), str(f["metric"])))
        v = float(f["value"])
        if p and v > p * (1 + TOLERANCE) and f["label"] not in seen:
            seen.add(f["label"])
            out.append(Check("steady-state", drive, f"{f['label']} {v:,.1f} {f['unit']} in steady state is {100 * v / p:.0f}% of "
                                                    f"the rated-style peak {p:,.1f} {f['unit']}: a used drive faster than a "
                                                    "clean one (different spans or data; see both tests' methods)"))
    return out


def find_checks(by_test: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> List[Check]:
    """Every questionable figure of a report (``by_test``: test id -> drive
    label -> results document), in test order then drive order."""
    out: List[Check] = []
    for test_id, per in by_test.items():
        for drive, doc in per.items():
            if not doc.get("skipped"):
                out += _queue_depth_checks(test_id, drive, doc)
    rated, steady = by_test.get("rated", {}), by_test.get("steady-state", {})
    for drive in steady:
        if drive in rated and not rated[drive].get("skipped") and not steady[drive].get("skipped"):
            out += _steady_above_peak(drive, rated[drive], steady[drive])
    return out
