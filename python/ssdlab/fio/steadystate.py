"""fio's steady-state detection (``ss=``, ``ss_dur=``, ``ss_ramp=``) on a
simulated job's per-second series.

fio (steadystate.c) samples a job's IOPS and bandwidth once a second after
``ss_ramp``, keeps the last ``ss_dur`` seconds, and stops the job as soon as
the window meets the criterion: ``iops``/``bw``, every sample within the
limit of the window's mean (the largest deviation; ``N%``: relative to the
mean); ``iops_slope``/``bw_slope``, the least-squares slope within the limit
(``N%``: relative to the mean). The simulator runs the job for its runtime,
finds the first second at which the window meets the criterion here, and
(the run being deterministic) runs it again from the same state for exactly
that long, so the job ends where fio's would.

API: :class:`Criterion` and :func:`parse` (the option's text),
:func:`detect` (per-second IOPS and bytes -> :class:`Detection`),
:func:`json_section` (fio's ``steadystate`` object of a job).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence

__all__ = ["Criterion", "Detection", "parse", "detect", "json_section"]


@dataclass(frozen=True)
class Criterion:
    metric: str  # "iops" or "bw"
    slope: bool
    limit: float
    percent: bool


@dataclass(frozen=True)
class Detection:
    """The window that met the criterion (or the last one): ``attained_s``
    is the second the job stops at (None: never attained)."""

    attained_s: Optional[int]
    criterion: float
    max_deviation: float
    slope: float
    iops: List[int]
    bw: List[int]


def parse(text: str) -> Criterion:
    """``iops:10%``, ``iops_slope:0.1%``, ``bw:2000``, ``bw_slope:1%``.
    Raises ValueError with the reason."""
    kind, sep, limit = text.strip().partition(":")
    if kind not in ("iops", "iops_slope", "bw", "bw_slope") or not sep:
        raise ValueError(f"'{text}': give iops, iops_slope, bw or bw_slope and a limit, e.g. iops_slope:0.1%")
    pct = limit.endswith("%")
    try:
        value = float(limit[:-1] if pct else limit)
    except ValueError:
        raise ValueError(f"'{limit}' is not a number (or a percentage)") from None
    if value < 0:
        raise ValueError(f"'{limit}': the limit is 0 or more")
    return Criterion(kind.split("_")[0], kind.endswith("_slope"), value, pct)


def _window(c: Criterion, ys: Sequence[int]) -> Dict[str, float]:
    n = len(ys)
    mean = sum(ys) / n
    sum_x = n * (n - 1) / 2
    sum_x2 = (n - 1) * n * (2 * n - 1) / 6
    sum_xy = sum(i * y for i, y in enumerate(ys))
    slope = (sum_xy - sum_x * sum(ys) / n) / (sum_x2 - sum_x * sum_x / n) if n > 1 else 0.0
    dev = max(abs(y - mean) for y in ys)
    raw = slope if c.slope else dev
    crit = 100.0 * raw / mean if c.percent and mean else raw
    return {"criterion": crit, "slope": slope, "deviation": dev}


def detect(c: Criterion, iops: Sequence[int], bw: Sequence[int], dur_s: int, ramp_s: int) -> Detection:
    """The first second (counted from the job's start) at which the last
    ``dur_s`` samples after ``ramp_s`` meet ``c``, as fio checks it."""
    data = list(iops) if c.metric == "iops" else list(bw)
    last: Dict[str, float] = {"criterion": 0.0, "slope": 0.0, "deviation": 0.0}
    start = ramp_s
    for end in range(start + dur_s, len(data) + 1):
        w = _window(c, data[end - dur_s:end])
        last = w
        if abs(w["criterion"]) < c.limit:
            return Detection(end, w["criterion"], w["deviation"], w["slope"], list(iops[end - dur_s:end]), list(bw[end - dur_s:end]))
    tail = max(len(data) - dur_s, start)
    return Detection(None, last["criterion"], last["deviation"], last["slope"], list(iops[tail:tail + dur_s]), list(bw[tail:tail + dur_s]))


def json_section(c: Criterion, d: Detection, dur_s: int) -> Dict[str, Any]:
    """fio's ``steadystate`` object (stat.c ``show_thread_status_json``)."""
    pct = "%" if c.percent else ""
    return {
        "ss": f"{c.metric}{'_slope' if c.slope else ''}:{c.limit:f}{pct}",
        "duration": dur_s,
        "attained": 1 if d.attained_s is not None else 0,
        "criterion": f"{d.criterion:f}{pct}",
        "max_deviation": d.max_deviation,
        "slope": d.slope,
        "data": {
            "bw_mean": int(sum(d.bw) / len(d.bw)) if d.bw else 0,
            "iops_mean": int(sum(d.iops) / len(d.iops)) if d.iops else 0,
            "iops": d.iops,
            "bw": d.bw,
        },
    }
