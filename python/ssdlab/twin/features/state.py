"""Features of the fill stage: the GC onset and steady state from the
torture, the buffer the flush after it shows, and a performance mode from
the fill."""

from __future__ import annotations

import statistics
from typing import Dict, Mapping, Optional, Sequence, Tuple

from ..probe.names import (
    FILL_JOB,
    TORTURE,
    TORTURED_FLUSH,
)
from ..records import Feature, JobFigures
from .common import feature

#: A flush after the torture shorter than this says the drive acknowledges flushes at once (power-loss protection).
MIN_DIRTY_FLUSH_S = 0.005


def _dirty_buffer(figs: Mapping[str, JobFigures], steady_iops: Optional[float]
                  ) -> Tuple[Feature, Feature]:
    """The buffer seen in the steady state: the torture holds the host at the
    rate garbage collection lets the buffer drain, so it ends with the buffer
    full, and a FLUSH CACHE right after it waits for all of it to drain. Its
    latency x the steady write rate is the buffer where the drain keeps the
    torture's pace (a paced garbage collection); a controller that cleans
    whole blocks when it needs one adds their time, so this is a start for
    the twin, which simulates the flush and keeps the buffer that reproduces
    it (ssdlab.twin.fit)."""
    f = figs.get(TORTURED_FLUSH) or {}
    t_us = f.get("sync_mean_us")
    if not t_us:
        none = "the flush after the torture did not run"
        return feature(None, "s", "none", none), feature(None, "B", "none", none)
    t_s = float(t_us) / 1e6
    flush = feature(round(t_s, 6), "s", "high", "the FLUSH CACHE right after the torture: the time to drain the buffer it "
                    "left full")
    if t_s < MIN_DIRTY_FLUSH_S or not steady_iops:
        return flush, feature(None, "B", "low", f"the flush after the torture took {t_s * 1e3:.1f} ms: no buffer shows "
                              "(a drive that acknowledges flushes at once has power-loss protection)")
    b = t_s * float(steady_iops) * 4096
    return flush, feature(round(b), "B", "low", f"the flush after the torture ({t_s:.2f} s) x the steady state's write rate "
                          f"({float(steady_iops) * 4096 / 1e6:.0f} MB/s): the buffer where garbage collection drains it "
                          "at the torture's pace")


def steady_iops(series: Sequence[float]) -> float:
    """The steady state of a torture's per-second IOPS: the median of its last 20%."""
    return float(statistics.median(series[int(len(series) * 0.8):]))


def _onset(figs: Mapping[str, JobFigures], capacity_bytes: int, map_unit_bytes: int = 4096
           ) -> Dict[str, Feature]:
    """Where garbage collection bit in the torture, and the spare area that
    gives. On a drive whose map unit is coarser than 4KB every 4KB write of
    the torture (after the fill, every unit holds data) rewrites its whole
    unit, so the spare takes map_unit / 4KB times the bytes the host wrote."""
    out: Dict[str, Feature] = {}
    scale = max(1, int(map_unit_bytes) // 4096)
    rewrites = (f"; x{scale}: each 4KB write rewrote its {map_unit_bytes // 1024}KB map unit" if scale > 1 else "")
    f = figs.get(TORTURE)
    series = list(f.get("iops_series") or []) if f else []
    if len(series) < 20:
        none = "the torture job did not run long enough (needs its per-second IOPS log)"
        return {"gc_onset_bytes": feature(None, "B", "none", none), "spare_fraction": feature(None, "", "none", none),
                "steady_write_iops": feature(None, "IOPS", "none", none)}
    interval_s = float(f.get("interval_ms") or 1000) / 1e3  # type: ignore[union-attr]
    initial = statistics.median(series[:5])
    tail = series[int(len(series) * 0.8):]
    steady = steady_iops(series)
    out["steady_write_iops"] = feature(round(steady, 1), "IOPS", "high" if len(tail) >= 20 else "medium",
                                       "median 4KB QD32 random-write IOPS of the last 20% of the torture")
    if initial < steady * 1.3:
        out["gc_onset_bytes"] = feature(None, "B", "low", f"no fall from the initial rate ({initial:,.0f} IOPS) to the "
                                        f"steady state ({steady:,.0f}): garbage collection costs little here")
        # or it never began: the spare holds at least what the torture wrote past the capacity (a firmware that
        # holds random writes below what its GC keeps up with)
        written = float(f.get("io_bytes") or sum(series) * interval_s * 4096) * scale  # type: ignore[union-attr]
        out["gc_onset_at_least_bytes"] = feature(round(written), "B", "low",
                                                 f"no GC onset while the torture wrote {written / 1e9:.1f} GB past the "
                                                 "capacity: the spare holds at least that (a lower bound)" + rewrites)
        out["spare_fraction"] = feature(round(written / capacity_bytes, 4), "", "low",
                                        "at least the bytes the torture wrote past the capacity, over the capacity "
                                        "(no GC onset seen)" + rewrites)
        return out
    cut = steady + 0.5 * (initial - steady)
    k = next((i for i, x in enumerate(series) if x < cut), len(series))
    written = sum(series[:k]) * interval_s * 4096 * scale
    conf = "high" if k >= 5 and k < len(series) * 0.8 else "medium"
    out["gc_onset_bytes"] = feature(round(written), "B", conf,
                                    f"4KB random writes after the fill ran at {initial:,.0f} IOPS for {k * interval_s:.0f} s "
                                    f"before falling below {cut:,.0f} (halfway to the steady {steady:,.0f})" + rewrites)
    out["spare_fraction"] = feature(round(written / capacity_bytes, 4), "", conf,
                                    "bytes written past the capacity before garbage collection bit, over the capacity "
                                    "(less than the spare area by the blocks the drive keeps free)" + rewrites)
    return out


#: The fill job's transfer size (probe.py: 128KB sequential writes).
FILL_BLOCK_BYTES = 128 * 1024


def _perf_mode(figs: Mapping[str, JobFigures], capacity_bytes: int) -> Dict[str, Feature]:
    """A faster write mode while the drive is partly empty (a
    "performance mode": lower pages only until half the LBAs hold data, then
    a one-time reorganisation and the standard mode), from the fill's rate per
    second: a first plateau, a sustained fall to under 60% of it (the
    reorganisation), and a recovery to a final plateau well above the fall. A
    fall that does not recover is garbage collection, not a mode. The fill
    starts at LBA 0 and every earlier job wrote below a third of the drive, so
    the bytes the fill wrote before the fall are the fill level that ends the
    mode.

    The final plateau is the standard mode's sequential write when it is below
    the first one. Where the two are alike (within 10%), both are the link's or
    the controller's rate, not the NAND's: the standard mode's NAND rate then shows only in the
    fall, where the dies program the host's data and the reorganisation's
    together (``perf_mode_dip_bytes_per_s``, turned into a program time by the
    fit)."""
    f = figs.get(FILL_JOB)
    series = [float(x) for x in (f.get("iops_series") or [])] if f else []
    keys = ("perf_mode", "perf_mode_fill_percent", "standard_write_bytes_per_s", "perf_mode_dip_bytes_per_s")
    if len(series) < 30:
        return {k: feature(None, "", "none", "the fill job did not run long enough (needs its per-second IOPS log)")
                for k in keys}
    interval_s = float(f.get("interval_ms") or 1000) / 1e3  # type: ignore[union-attr]
    rate = [x * FILL_BLOCK_BYTES for x in series]
    n = len(rate)
    fast = statistics.median(rate[2:12])
    end = statistics.median(rate[-max(5, n // 10):])
    fall = next((i for i in range(2, n - 5) if all(r < 0.6 * fast for r in rate[i:i + 5])), None)
    how = (f"the fill ran at {fast / 1e6:.0f} MB/s at first and {end / 1e6:.0f} MB/s at the end")

    def none(why: str, confidence: str = "high") -> Dict[str, Feature]:
        return {"perf_mode": feature(False, "", confidence, why),
                **{k: feature(None, "B/s" if k.endswith("_per_s") else "%", "none", "no performance mode")
                   for k in keys[1:]}}

    if fall is None or end < 1.5 * statistics.median(rate[fall:fall + 5]):
        return none(how + ": no fall to a faster mode's end and recovery")
    pct = round(100 * sum(rate[:fall]) * interval_s / capacity_bytes)
    if not 10 <= pct <= 90:
        return none(how + f"; it fell after {pct}% of the drive: not a mode's end", "medium")
    dip = statistics.median(rate[fall:fall + 5])
    hidden = end >= 0.9 * fast
    return {"perf_mode": feature(True, "", "high", how + f", falling to {dip / 1e6:.0f} MB/s after {fall * interval_s:.0f} s "
                                 "(a reorganisation) in between: a faster mode while the drive was emptier"),
            "perf_mode_fill_percent": feature(pct, "%", "high", f"the bytes the fill wrote before the fall ({pct}% of the "
                                              "capacity): the fill level that ends the faster mode"),
            "standard_write_bytes_per_s": (
                feature(None, "B/s", "none", f"the fill ended at its first rate ({end / 1e6:.0f} MB/s, the link's or "
                        "the controller's): the standard mode's NAND rate is above it, seen only in the fall")
                if hidden else
                feature(round(end), "B/s", "high", "the fill's rate over its last 10%: the sequential write in the "
                        "standard mode")),
            "perf_mode_dip_bytes_per_s": feature(round(dip), "B/s", "high", "the fill's rate during the fall: the "
                                                 "host's writes while the dies also rewrite the faster mode's blocks "
                                                 "in the standard one")}
