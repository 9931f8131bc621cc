"""fio's JSON keys drawn from the engine's latency histograms.

The engine keeps each direction's completion latencies in a log-linear
histogram (32 buckets per power of two; see ``crates/ssdlab-sim/src/stats.rs``)
whose non-empty buckets reach Python as ``PhaseResult.latency_hist``. From them:

- :func:`stddev_ns`: the standard deviation fio prints beside the mean (each
  sample taken at its bucket's middle: within 1.6% of the exact value);
- :func:`percentiles`: any ``percentile_list``, by the engine's own rule (so the
  default list gives the engine's figures exactly);
- :func:`latency_buckets`: fio's ``latency_ns``/``latency_us``/``latency_ms``
  shares (percent of the job's I/Os, fio's bucket edges);
- :func:`jsonplus_bins`: fio's ``--output-format=json+`` ``bins`` (fio's own
  histogram: 64 bins per power of two, keyed by the bin's middle value in ns);
- :func:`iodepth_levels`: fio's ``iodepth_level`` of a closed-loop job that
  fills its queue at the start and keeps it full.
"""

from __future__ import annotations

from typing import Dict, Optional, Sequence, Tuple

import numpy as np
import numpy.typing as npt

__all__ = ["Hist", "stddev_ns", "percentiles", "percentile_key", "latency_buckets", "jsonplus_bins", "iodepth_levels",
           "IODEPTH_KEYS", "BATCH_KEYS"]

#: One direction's histogram: bucket lower bounds, widths and counts (ns).
Hist = Tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64], npt.NDArray[np.uint64]]

#: fio's ``iodepth_level`` keys, and ``iodepth_submit``/``iodepth_complete``'s.
IODEPTH_KEYS = ("1", "2", "4", "8", "16", "32", ">=64")
BATCH_KEYS = ("0", "4", "8", "16", "32", "64", ">=64")

_EDGES = (2, 4, 10, 20, 50, 100, 250, 500, 750, 1000)


def _mid(h: Hist) -> npt.NDArray[np.float64]:
    lo, width, _ = h
    return lo.astype(np.float64) + (width.astype(np.float64) // 2)


def stddev_ns(h: Optional[Hist]) -> float:
    """Sample standard deviation over the histogram (0 below two samples)."""
    if h is None or len(h[2]) == 0:
        return 0.0
    c = h[2].astype(np.float64)
    n = float(c.sum())
    if n < 2:
        return 0.0
    x = _mid(h)
    mean = float((x * c).sum() / n)
    var = float((c * (x - mean) ** 2).sum() / (n - 1))
    return float(np.sqrt(max(var, 0.0)))


def percentile_key(p: float) -> str:
    """fio's key of a percentile: ``99.500000``."""
    return f"{p:.6f}"


def percentiles(h: Optional[Hist], points: Sequence[float], min_ns: int, max_ns: int) -> Dict[str, int]:
    """The engine's rule: the middle of the bucket where the rank ``ceil(p% of N)``
    falls, clamped to the observed min and max; 0 without samples."""
    out: Dict[str, int] = {}
    if h is None or len(h[2]) == 0:
        return {percentile_key(p): 0 for p in points}
    cum = np.cumsum(h[2].astype(np.int64))
    n = int(cum[-1])
    mids = h[0] + h[1] // 2
    for p in points:
        rank = max(int(np.ceil(p / 100.0 * n)), 1)
        i = int(np.searchsorted(cum, rank))
        i = min(i, len(cum) - 1)
        out[percentile_key(p)] = int(min(max(int(mids[i]), min_ns), max_ns))
    return out


def latency_buckets(hists: Sequence[Optional[Hist]]) -> Tuple[Dict[str, float], Dict[str, float], Dict[str, float]]:
    """fio's ``latency_ns``, ``latency_us`` and ``latency_ms``: the percentage of
    the I/Os (all directions) whose latency falls below each edge and at or
    above the one before (``>=2000`` ms last), as fio's ``io_u_lat`` tables."""
    ns = {str(e): 0.0 for e in _EDGES}
    us = {str(e): 0.0 for e in _EDGES}
    ms: Dict[str, float] = {str(e): 0.0 for e in _EDGES}
    ms["2000"] = 0.0
    ms[">=2000"] = 0.0
    total = 0
    for h in hists:
        if h is None:
            continue
        for v, c in zip(_mid(h), h[2]):
            total += int(c)
            table, val = (ns, v) if v < 1000 else (us, v / 1e3) if v < 1e6 else (ms, v / 1e6)
            key = next((str(e) for e in _EDGES if val < e), None)
            if key is None:  # 1000 ms and over
                key = "2000" if val < 2000 else ">=2000"
            table[key] += int(c)
    if total:
        for table in (ns, us, ms):
            for k in table:
                table[k] = round(table[k] * 100.0 / total, 6)
    return ns, us, ms


_PLAT_BITS = 6
_PLAT_VAL = 1 << _PLAT_BITS
_PLAT_NR = 29 * _PLAT_VAL


def _plat_idx(val: int) -> int:
    """fio's ``plat_val_to_idx`` (stat.c)."""
    msb = val.bit_length() - 1 if val else 0
    if msb <= _PLAT_BITS:
        return val
    error_bits = msb - _PLAT_BITS
    base = (error_bits + 1) << _PLAT_BITS
    offset = (_PLAT_VAL - 1) & (val >> error_bits)
    return min(base + offset, _PLAT_NR - 1)


def _plat_val(idx: int) -> int:
    """fio's ``plat_idx_to_val``: the middle of bin ``idx`` in ns."""
    if idx < (_PLAT_VAL << 1):
        return idx
    error_bits = (idx >> _PLAT_BITS) - 1
    base = 1 << (error_bits + _PLAT_BITS)
    k = idx % _PLAT_VAL
    return int(base + (k + 0.5) * (1 << error_bits))


def jsonplus_bins(h: Optional[Hist]) -> Dict[str, int]:
    """fio's json+ ``bins``: each engine bucket's count in the fio bin of its
    middle value (an engine bucket is never wider than two fio bins)."""
    out: Dict[int, int] = {}
    if h is None:
        return {}
    for v, c in zip(_mid(h), h[2]):
        key = _plat_val(_plat_idx(int(v)))
        out[key] = out.get(key, 0) + int(c)
    return {str(k): out[k] for k in sorted(out)}


def iodepth_levels(total_ios: int, depth: int) -> Dict[str, float]:
    """fio's ``iodepth_level`` for a job that submits its first I/Os at depths
    1, 2, ... up to ``depth`` and then keeps the queue full (the closed loop
    the engine runs): the percentage of submissions at each level."""
    out = {k: 0.0 for k in IODEPTH_KEYS}
    if total_ios <= 0:
        return out
    first = min(depth - 1, total_ios)
    counts: Dict[str, int] = {}
    for d in range(1, first + 1):
        counts[_depth_key(d)] = counts.get(_depth_key(d), 0) + 1
    if total_ios > first:
        counts[_depth_key(depth)] = counts.get(_depth_key(depth), 0) + total_ios - first
    for k, n in counts.items():
        out[k] = round(n * 100.0 / total_ios, 6)
    return out


def _depth_key(d: int) -> str:
    """fio's level of a depth: the largest of 1, 2, 4, ..., 32 not above it; >=64."""
    if d >= 64:
        return ">=64"
    return str(1 << (d.bit_length() - 1))
