"""Launch prices of the presets, for the price and $/GB in the report.

The engine's drive files reject unknown keys under ``[drive]``, so the prices
live here, in ``prices.csv`` keyed by preset id, each with its kind (MSRP,
street, list) and its source (docs/drives.md "Launch prices" and the reviews).
A drive without a sourced price has none: the report leaves $/GB blank rather
than guess. (CSV rather than TOML: the standard library reads TOML only from
Python 3.11.)"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Dict, Optional

__all__ = ["Price", "prices", "price_of", "usd_per_gb"]


@dataclass(frozen=True)
class Price:
    drive_id: str
    usd: float
    kind: str
    source: str


@lru_cache(maxsize=1)
def prices() -> Dict[str, Price]:
    """Every known price by preset id."""
    text = resources.files("ssdlab.report").joinpath("prices.csv").read_text(encoding="utf-8")
    out: Dict[str, Price] = {}
    for row in csv.DictReader(io.StringIO(text)):
        out[row["drive_id"]] = Price(row["drive_id"], float(row["price_usd"]), row["kind"], row["source"])
    return out


def price_of(drive_id: str) -> Optional[Price]:
    return prices().get(drive_id)


def usd_per_gb(price: Price, capacity_bytes: int) -> float:
    """Dollars per GB of user capacity (GB = 1e9 B, as the drives were sold)."""
    return price.usd / (capacity_bytes / 1e9)
