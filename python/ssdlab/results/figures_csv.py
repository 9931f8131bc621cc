"""The figures as CSV (``figures.csv``): one row per figure of every results
document, ``value`` with full precision (docs/results-schema.md)."""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any, Dict, Iterable, List

from ..outputs import atomic_open

__all__ = ["CSV_FIELDS", "figure_rows", "write_figures_csv"]

CSV_FIELDS = ["drive", "drive_hash", "test", "chart", "label", "metric", "value", "unit", "profile", "seed"]


def figure_rows(docs: Iterable[Dict[str, Any]]) -> List[Dict[str, Any]]:
    rows = []
    for d in docs:
        for f in d.get("figures", []):
            rows.append({
                "drive": d["drive"]["id"], "drive_hash": d["drive"]["hash"], "test": d["test"]["id"],
                "chart": f["chart"], "label": f["label"], "metric": f["metric"],
                "value": "" if f["value"] is None or not math.isfinite(f["value"]) else repr(float(f["value"])), "unit": f["unit"],
                "profile": d.get("profile", ""), "seed": d["manifest"].get("seed", ""),
            })
    return rows


def write_figures_csv(docs: Iterable[Dict[str, Any]], path: Path) -> None:
    """Write atomically."""
    with atomic_open(path, newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_FIELDS)
        w.writeheader()
        w.writerows(figure_rows(docs))
