"""Features outside physical ranges are errors of the probe, not features: a
negative time or rate, or a spare area above 100% of the capacity (a real
device's artefacts: reads the file system answers, a GC onset never seen),
is replaced by no value, and named in ``probe_errors``."""

from __future__ import annotations

from typing import Any, Dict, List

from ..records import Feature
from .common import feature

#: Units whose values cannot be negative: times, sizes and rates.
NON_NEGATIVE_UNITS = ("us", "ns", "ms", "s", "B", "B/s", "IOPS", "%")
#: Fractions of the capacity that cannot exceed 1 (a spare area above 100%: the torture never reached the GC).
AT_MOST_ONE = ("spare_fraction", "full_spare_fraction")
#: The features measured with one that is out of range, left out with it (the same bytes gave them).
WITH = {"spare_fraction": ("gc_onset_bytes", "gc_onset_at_least_bytes"),
        "full_spare_fraction": ("full_gc_onset_bytes", "full_gc_onset_at_least_bytes")}


def _bad(name: str, f: Feature) -> str:
    v: Any = f["value"]
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return ""
    if f["unit"] in NON_NEGATIVE_UNITS and v < 0:
        return f"{name} = {v:,} {f['unit']}: negative"
    if name in AT_MOST_ONE and v > 1:
        return f"{name} = {v:.0%} of the capacity: above 100%"
    return ""


def physical(F: Dict[str, Feature]) -> Dict[str, Feature]:
    """``F`` with every feature outside physical ranges set to no value (confidence ``none``), and
    ``probe_errors`` listing them (an empty list when there are none)."""
    errors: List[str] = []
    for name, f in list(F.items()):
        why = _bad(name, f)
        if why:
            errors.append(why)
            F[name] = feature(None, f["unit"], "none", f"an error of the probe, not a feature: {why} ({f['how']})")
            for other in WITH.get(name, ()):
                if other in F:
                    F[other] = feature(None, F[other]["unit"], "none", f"left out with {name}: {why}")
    F["probe_errors"] = feature(errors, "", "high", "features outside physical ranges (negative times or rates, a spare "
                                "area above 100%): errors of the probe, left out")
    return F
