"""Reading a claim's figures out of results documents (the documents a
review saves, or that ``ssdlab stories`` gets back from the runner).

A figure's ``metric`` is one of the test's figure kinds (the suffix of its
chart id: ``mbps``, ``iops``, ``rate``, ``avg``, ``mean_iops``...; empty: the
main one of the test's summary), or one computed from its series:

- ``iops_per_sd``: the consistency test's steady-state window (from its
  ``from_s``), mean IOPS over their standard deviation: the higher, the
  steadier (the reviewers' "consistency");
- ``first_60s_iops``: the mean IOPS of the first 60 s of a consistency run;
- ``waf``: the write amplification of the measured step (NAND programmed
  over host bytes).
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Tuple

import numpy as np

from .rules import Fig

__all__ = ["DEFAULT_METRIC", "figure_of", "DocKey"]

#: The main figure of a test, by the test's summary.
DEFAULT_METRIC = {"throughput": "mbps", "sweep": "mbps", "storage_bench": "rate", "consistency": "mean_iops",
                  "curve": "avg", "grid": "mbps", "mixed": "iops", "power": "watts"}

#: A results document's place: (drive id, test id).
DocKey = Tuple[str, str]


def _series(doc: Mapping[str, Any], label: str) -> Optional[Tuple[np.ndarray, np.ndarray, float]]:
    chart = doc.get("charts", {}).get(f"{doc['test']['id']}.iops", {})
    data = chart.get("data", {}).get(label)
    if not data or "time_s" not in data:
        return None
    return np.asarray(data["time_s"], dtype=float), np.asarray(data["iops"], dtype=float), float(chart.get("from_s", 0.0))


def _computed(doc: Mapping[str, Any], label: str, metric: str) -> Optional[float]:
    if metric == "waf":
        for job in doc.get("jobs", []):
            if job.get("jobname") == label:
                return float(job["ssdlab"]["waf"])
        return None
    s = _series(doc, label)
    if s is None:
        return None
    t, iops, from_s = s
    if metric == "iops_per_sd":
        win = iops[t > from_s]
        sd = float(np.std(win)) if len(win) else 0.0
        return float(np.mean(win)) / sd if sd > 0 else float("inf")
    if metric == "first_60s_iops":
        first = iops[t <= 60.0]
        return float(np.mean(first)) if len(first) else None
    return None


def figure_of(doc: Mapping[str, Any], fig: Fig) -> Optional[float]:
    """The value of ``fig`` in its test's results document, or None when the
    document does not hold it (a step not run, a figure of another kind)."""
    tid = doc["test"]["id"]
    metric = fig.metric or DEFAULT_METRIC.get(doc["test"].get("summary", ""), "mbps")
    if metric in ("iops_per_sd", "first_60s_iops", "waf"):
        return _computed(doc, fig.label, metric)
    chart = f"{tid}.{metric}"
    for f in doc.get("figures", []):
        if f.get("chart") == chart and f.get("label") == fig.label:
            return float(f["value"])
    return None


def values_of(docs: Mapping[DocKey, Mapping[str, Any]], figs: Any) -> Dict[Fig, float]:
    """The values of every figure of ``figs`` found in ``docs``."""
    out: Dict[Fig, float] = {}
    for f in figs:
        doc = docs.get((f.drive, f.test))
        if doc is None:
            continue
        x = figure_of(doc, f)
        if x is not None and np.isfinite(x):
            out[f] = x
    return out
