"""Features of the full-drive stage: the native write rate past any cache, the native reads, and the spare area
from where 128KB random writes on the full drive step down."""

from __future__ import annotations

import statistics
from typing import Dict, Mapping, Optional, Sequence

from ..probe.names import (
    CACHE_FILL,
    FULL_IDLE_SEQWRITE,
    FULL_RANDREAD,
    FULL_RANDWRITE,
    FULL_SEQREAD,
    FULL_SEQWRITE,
    GC_FALL_SHARE,
)
from ..records import Feature, JobFigures
from .common import _get, feature

#: The full stage's writes are 128KB each.
FULL_BLOCK_BYTES = 128 * 1024
#: A steady state under this share of the first rate is past garbage collection's onset (the probe's rule for
#: ending the writes); the onset is where the rate fell halfway from the first rate to the steady state and stayed
#: there for :data:`ONSET_HELD_S` (a second's dip on the way is not it).
ONSET_FALL_SHARE = GC_FALL_SHARE
ONSET_HELD_S = 5.0
#: The write after idle time on the full drive starts in a static cache only where its first second runs at least
#: this many times its native rate (a write buffer alone adds its size to the first second: 32 MiB on a 96 MB/s QLC
#: drive is a third).
STATIC_START_SHARE = 1.5


def _rates(f: Optional[JobFigures]) -> Sequence[float]:
    return [float(x) * FULL_BLOCK_BYTES for x in ((f or {}).get("iops_series") or [])]


def full_write_rate(figs: Mapping[str, JobFigures]) -> Optional[float]:
    """The sequential write on the full drive over its second half (B/s): its first seconds may go to a static
    cache."""
    rate = _rates(figs.get(FULL_SEQWRITE))
    if len(rate) >= 4:
        return float(statistics.median(rate[len(rate) // 2:]))
    mbps = _get(figs, FULL_SEQWRITE, "mbps")
    return None if not mbps else mbps * 1e6


def full_features(figs: Mapping[str, JobFigures], capacity_bytes: int) -> Dict[str, Feature]:
    out: Dict[str, Feature] = {}
    w = full_write_rate(figs)
    out["full_write_bytes_per_s"] = feature(
        None if w is None else round(w), "B/s", "high" if w else "none",
        "128KB QD32 sequential write on the full drive, its second half: the native NAND's write rate (dies x native "
        "program unit / native program time), with no dynamic cache to fill or fold")
    r = _get(figs, FULL_SEQREAD, "mbps")
    out["full_seq_read_bytes_per_s"] = feature(None if r is None else round(r * 1e6), "B/s", "high" if r else "none",
                                               "128KB QD32 sequential read of native blocks on the full drive: the "
                                               "link's rate, or below it the dies' native reads")
    i = _get(figs, FULL_RANDREAD, "iops")
    out["full_read_iops_4k_qd32"] = feature(None if i is None else round(i, 1), "IOPS", "high" if i else "none",
                                            "4KB QD32 random read over the full drive: native page reads on every die")
    out.update(full_onset(figs, capacity_bytes))
    if FULL_IDLE_SEQWRITE in figs:
        out.update(full_static_cache(figs, capacity_bytes))
    return out


def full_static_cache(figs: Mapping[str, JobFigures], capacity_bytes: int) -> Dict[str, Feature]:
    """The static part of the write cache: what the full drive wrote at the cache's rate after idle time. Up to the
    second the rate fell below halfway to the native rate (the median of the write's second half), each second's
    bytes above the native rate are in the cache at the cache's share (a second wholly in it counts whole). The
    cache's rate: the first second's, or the cache fill's where that ran faster (a static part written in less
    than a second)."""
    f = figs.get(FULL_IDLE_SEQWRITE)
    rate = _rates(f)
    keys = ("static_cache_bytes", "static_cache_fraction")
    if len(rate) < 4:
        none = "the write after idle time on the full drive did not run long enough (needs its per-second log)"
        return {k: feature(None, "", "none", none) for k in keys}
    dt = float((f or {}).get("interval_ms") or 1000) / 1e3
    native = float(statistics.median(rate[len(rate) // 2:]))
    fill = _rates(figs.get(CACHE_FILL))
    cache = max(rate[0], float(statistics.median(fill[:3])) if len(fill) >= 3 else 0.0)
    if rate[0] < STATIC_START_SHARE * native or cache <= native:
        why = (f"the full drive's write after idle time started at {rate[0] / 1e6:,.0f} MB/s, near its native "
               f"{native / 1e6:,.0f}: no static cache came back")
        return {"static_cache_bytes": feature(0, "B", "medium", why),
                "static_cache_fraction": feature(0.0, "", "medium", why)}
    cut = native + 0.5 * (cache - native)
    k = next((i for i, r in enumerate(rate) if r < cut), len(rate))
    got = sum(max(0.0, r - native) for r in rate[:k + 1]) * dt * cache / (cache - native)
    conf = "high" if k < len(rate) // 2 else "low"
    why = (f"the full drive's write after idle time ran at the cache's rate ({cache / 1e6:,.0f} MB/s) for "
           f"{got / 1e9:,.2f} GB, then at the native {native / 1e6:,.0f} MB/s: the static part of the cache (on a full "
           "drive the dynamic part is gone)" + ("" if conf == "high" else " (it never stepped down: at least that)"))
    return {"static_cache_bytes": feature(round(got), "B", conf, why),
            "static_cache_fraction": feature(round(got / capacity_bytes, 5), "", conf, why + ", over the capacity")}


def full_onset(figs: Mapping[str, JobFigures], capacity_bytes: int) -> Dict[str, Feature]:
    """Where garbage collection bit in the full drive's 128KB random writes: the bytes written before the rate fell
    halfway to its steady state (the median of the last 20%). Every LBA held data, so each write frees its old copy
    and takes a free page: the bytes before the fall are the free space, the spare area less the blocks the drive
    keeps free."""
    f = figs.get(FULL_RANDWRITE)
    rate = _rates(f)
    keys = ("full_gc_onset_bytes", "full_spare_fraction", "full_steady_write_bytes_per_s")
    if len(rate) < 20:
        none = "the full drive's random writes did not run long enough (needs their per-second log)"
        return {k: feature(None, "", "none", none) for k in keys}
    interval_s = float((f or {}).get("interval_ms") or 1000) / 1e3
    first = statistics.median(rate[:5])
    steady = statistics.median(rate[int(len(rate) * 0.8):])
    out = {"full_steady_write_bytes_per_s": feature(round(steady), "B/s", "high", "the median rate of the last 20% of "
                                                   "the full drive's 128KB random writes")}
    written = float((f or {}).get("io_bytes") or sum(rate) * interval_s)
    if steady > ONSET_FALL_SHARE * first:
        why = (f"no fall from the first rate ({first / 1e6:,.0f} MB/s) to the steady state ({steady / 1e6:,.0f}) while "
               f"the full drive took {written / 1e9:,.1f} GB: the spare holds at least that")
        out["full_gc_onset_bytes"] = feature(None, "B", "low", why)
        out["full_gc_onset_at_least_bytes"] = feature(round(written), "B", "low", why)
        out["full_spare_fraction"] = feature(round(written / capacity_bytes, 4), "", "low", why + " (a lower bound)")
        return out
    cut = steady + 0.5 * (first - steady)
    held = max(1, int(round(ONSET_HELD_S / interval_s)))
    k = next((i for i in range(len(rate)) if all(x < cut for x in rate[i:i + held])), len(rate))
    before = sum(rate[:k]) * interval_s
    conf = "high" if 5 <= k < len(rate) * 0.8 else "medium"
    how = (f"128KB random writes on the full drive ran at {first / 1e6:,.0f} MB/s for {k * interval_s:.0f} s before "
           f"falling below {cut / 1e6:,.0f} (halfway to the steady {steady / 1e6:,.0f})")
    out["full_gc_onset_bytes"] = feature(round(before), "B", conf, how)
    out["full_spare_fraction"] = feature(round(before / capacity_bytes, 4), "", conf,
                                         "bytes written on the full drive before garbage collection bit, over the "
                                         "capacity (less than the spare area by the blocks the drive keeps free)")
    return out
