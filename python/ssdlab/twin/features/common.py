"""What every feature is: a value with its unit, confidence and provenance, and
the assumptions the estimates share."""

from __future__ import annotations

from typing import Any, Mapping, Optional

from ..records import Feature, FigureKey, JobFigures

#: The typical MLC program unit of the drives the probe targets (8KB pages,
#: two planes) and its program time (IMFT 25nm L74A, docs/model.md): used only
#: for the starting estimate of the dies from the sequential write rate.
ASSUMED_PROGRAM_UNIT_BYTES = 16384
ASSUMED_TPROG_NS = 1_300_000
#: A flush that adds less than this to a write programmed nothing the host
#: waited for (no MLC/TLC part of the era programs a page in under 200 us):
#: the drive acknowledges flushes at once (power-loss protection).
MIN_FLUSH_PROGRAM_NS = 200_000


#: Every feature of a probe by name, as probe.json keeps them.
Features = Mapping[str, Feature]


def field_of(features: Features, name: str, key: str, default: Any = None) -> Any:
    """A feature's ``key`` (value, unit, confidence or how), or ``default`` where the feature is missing or empty."""
    f = features.get(name)
    return f.get(key, default) if f else default


def feature(value: Any, unit: str, confidence: str, how: str) -> Feature:
    return {"value": value, "unit": unit, "confidence": confidence, "how": how}


def _get(figs: Mapping[str, JobFigures], job: str, key: FigureKey) -> Optional[float]:
    f = figs.get(job)
    if not f:
        return None
    v = f.get(key)
    return None if v is None else float(v)


def _ratio(a: Optional[float], b: Optional[float]) -> Optional[float]:
    return None if a is None or b is None or b <= 0 else a / b
