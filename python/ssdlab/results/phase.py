"""One phase's figures (fio field names) and its per-interval series.

Units: MB/s = 10^6 B/s, GB = 10^9 B (reviewers' convention), KB = 1024 B for
transfer sizes (fio's convention); latencies in ns in data, us in summaries.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Mapping, Optional, Tuple

import numpy as np
import numpy.typing as npt

__all__ = ["PhaseResult", "PERCENTILE_KEYS", "Series"]

#: fio's percentile keys for p50, p99, p99.9.
PERCENTILE_KEYS = {"p50": "50.000000", "p99": "99.000000", "p99.9": "99.900000"}

#: One per-interval array of a phase (uint64 from the engine, float64 derived).
Series = npt.NDArray[Any]


class PhaseResult:
    """What one phase produced.

    ``data``: the phase as a dict with fio's field names
    (``read/write/trim.{iops, bw_bytes, io_bytes, total_ios, clat_ns.{min, max,
    mean, percentile}}``) plus ``ssdlab`` (WAF, NAND bytes, GC, erases, SMART)
    and busy times. ``series``: numpy arrays per interval (``log_avg_msec``,
    1 s by default): ``time_ns`` (interval end), ``read_ios``, ``write_ios``,
    ``trim_ios``, ``read_bytes``, ``write_bytes``, ``lat_p50_ns``,
    ``lat_p99_ns``, ``lat_p999_ns``, ``lat_max_ns`` (uint64), and derived
    ``time_s``, ``interval_s``, ``iops``, ``read_iops``, ``write_iops``,
    ``mbps`` (float64; MB/s = 1e6 B/s).
    """

    def __init__(
        self,
        data: Dict[str, Any],
        series: Mapping[str, Series],
        wall_time_s: float = 0.0,
        manifest: Optional[Dict[str, Any]] = None,
        job: Optional[Dict[str, Any]] = None,
    ) -> None:
        self.data: Dict[str, Any] = data
        # Side arrays of the engine kept out of the series (and so out of saved
        # documents): the latency histograms and the intervals' mean latency.
        self.series: Dict[str, Series] = {k: v for k, v in series.items() if "_hist_" not in k and k != "lat_mean_ns"}
        self.interval_lat_mean_ns: Optional[Series] = series.get("lat_mean_ns")
        self.latency_hist: Dict[str, Tuple[Series, Series, Series]] = {}
        for d in ("read", "write", "trim", "sync"):
            if f"{d}_hist_count" in series:
                self.latency_hist[d] = (series[f"{d}_hist_lo_ns"], series[f"{d}_hist_width_ns"], series[f"{d}_hist_count"])
        self.wall_time_s = wall_time_s
        self.manifest: Dict[str, Any] = dict(manifest or {})
        #: The fio-style keys the phase was run with (None for idle/trim/erase).
        self.job = job
        self._derive_series()

    def _derive_series(self) -> None:
        s = self.series
        if "time_ns" not in s:
            return
        t = s["time_ns"].astype(np.float64)
        dur = float(self.data.get("duration_ns", 0))
        ends = np.minimum(t, dur) if dur > 0 else t
        starts = np.concatenate(([0.0], t[:-1])) if len(t) else t
        dt = (ends - starts) / 1e9
        dt = np.where(dt > 0, dt, np.nan)
        ios = sum(s[k].astype(np.float64) for k in ("read_ios", "write_ios", "trim_ios") if k in s)
        by = sum(s[k].astype(np.float64) for k in ("read_bytes", "write_bytes") if k in s)
        with np.errstate(invalid="ignore", divide="ignore"):
            s["time_s"] = t / 1e9
            s["interval_s"] = np.nan_to_num(dt)
            s["iops"] = np.nan_to_num(ios / dt)
            s["read_iops"] = np.nan_to_num(s["read_ios"].astype(np.float64) / dt)
            s["write_iops"] = np.nan_to_num(s["write_ios"].astype(np.float64) / dt)
            s["mbps"] = np.nan_to_num(by / dt / 1e6)

    # -- convenience -------------------------------------------------------

    @property
    def name(self) -> str:
        return str(self.data.get("jobname", ""))

    @property
    def kind(self) -> str:
        return str(self.data.get("kind", ""))

    @property
    def iops(self) -> float:
        """Reads + writes + trims per second over the phase."""
        return float(sum(self.data[d]["iops"] for d in ("read", "write", "trim")))

    @property
    def bw_mbps(self) -> float:
        """Read + write bandwidth in MB/s (1e6 B/s)."""
        return float(self.data["read"]["bw_bytes"] + self.data["write"]["bw_bytes"]) / 1e6

    @property
    def waf(self) -> float:
        """NAND bytes programmed / host bytes written in this phase."""
        return float(self.data["ssdlab"]["waf"])

    @property
    def duration_s(self) -> float:
        """Simulated length of the phase."""
        return float(self.data["duration_ns"]) / 1e9

    @property
    def interrupted(self) -> bool:
        return bool(self.data.get("interrupted", False))

    @property
    def smart(self) -> Dict[str, Any]:
        return dict(self.data["ssdlab"]["smart"])

    def latency_us(self, direction: str, percentile: str) -> float:
        """A completion-latency percentile in microseconds: ``direction`` is
        "read", "write" or "trim"; ``percentile`` "p50", "p99", "p99.9",
        "max", "min", "mean" or a fio key like "99.990000". WorkloadError
        (``.field`` "direction" or "percentile") for anything else, and for a
        direction the phase did no I/O in (no latency to report)."""
        from ..errors import workload_error

        if direction not in ("read", "write", "trim"):
            raise workload_error("direction", f"{direction!r}: give 'read', 'write' or 'trim'")
        if not isinstance(percentile, str):
            raise workload_error("percentile", f"{percentile!r}: give 'p50', 'p99', 'p99.9', 'min', 'max', 'mean' "
                                               "or a fio key such as '99.990000'")
        d = self.data.get(direction, {})
        if not d.get("total_ios"):
            done = [x for x in ("read", "write", "trim") if self.data.get(x, {}).get("total_ios")]
            raise workload_error("direction", f"phase '{self.name}' completed no {direction} I/O, so it has no {direction} "
                                              f"latency; it did: {', '.join(done) or 'no I/O'}")
        clat = d["clat_ns"]
        if percentile in ("max", "min", "mean"):
            return float(clat[percentile]) / 1e3
        key = PERCENTILE_KEYS.get(percentile, percentile)
        if key not in clat["percentile"]:
            raise workload_error("percentile", f"{percentile!r}: give 'p50', 'p99', 'p99.9', 'min', 'max', 'mean' or one of "
                                               f"fio's keys: {', '.join(clat['percentile'])}")
        return float(clat["percentile"][key]) / 1e3

    def to_dict(self, series: bool = True) -> Dict[str, Any]:
        """A JSON-ready dict: the phase data, plus ``series`` (arrays as lists)."""
        d = dict(self.data)
        if series:
            d["series"] = {k: v.tolist() for k, v in self.series.items()}
        return d

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(self.to_dict(), **kwargs)

    def __repr__(self) -> str:
        flag = ", interrupted" if self.interrupted else ""
        return (
            f"PhaseResult({self.name!r}, kind={self.kind!r}, iops={self.iops:.0f}, "
            f"bw_mbps={self.bw_mbps:.1f}, waf={self.waf:.2f}, duration_s={self.duration_s:.3f}{flag})"
        )
