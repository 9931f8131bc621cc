"""Results: one phase's figures (fio field names), its per-interval series, and
the manifest that makes every result reproducible.

Units: MB/s = 10^6 B/s, GB = 10^9 B (reviewers' convention), KB = 1024 B for
transfer sizes (fio's convention); latencies in ns in data, us in summaries.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import shlex
import sys
from typing import Any, Dict, List, Mapping, Optional, Sequence

import numpy as np

from . import _core

__all__ = [
    "PhaseResult",
    "manifest",
    "command_line",
    "fio_document",
    "format_summary",
    "ssdlab_version",
    "PERCENTILE_KEYS",
]

#: fio's percentile keys for p50, p99, p99.9.
PERCENTILE_KEYS = {"p50": "50.000000", "p99": "99.000000", "p99.9": "99.900000"}


def ssdlab_version() -> str:
    """The installed package's version (falls back to the engine's)."""
    try:
        from importlib.metadata import version

        return version("ssdlab")
    except Exception:  # not installed as a distribution (e.g. in-tree use)
        return _core.version()


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
        series: Mapping[str, np.ndarray],
        wall_time_s: float = 0.0,
        manifest: Optional[Dict[str, Any]] = None,
        job: Optional[Dict[str, Any]] = None,
    ) -> None:
        self.data: Dict[str, Any] = data
        self.series: Dict[str, np.ndarray] = dict(series)
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
        """A completion-latency percentile in microseconds: ``percentile`` is
        "p50", "p99", "p99.9", "max", "min", "mean" or a fio key like "99.990000"."""
        clat = self.data[direction]["clat_ns"]
        if percentile in ("max", "min", "mean"):
            return float(clat[percentile]) / 1e3
        key = PERCENTILE_KEYS.get(percentile, percentile)
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


# ---------------------------------------------------------------------------
# Manifest
# ---------------------------------------------------------------------------


def command_line(argv: Optional[Sequence[str]] = None) -> str:
    """The command that produced this process, shell-quoted: ``ssdlab ...``
    when run through the ``ssdlab`` entry point or ``python -m ssdlab``, else
    ``python ARGV...``."""
    args = list(sys.argv if argv is None else argv)
    if not args:
        return "python"
    prog = os.path.basename(args[0])
    if prog in ("ssdlab", "__main__.py", "-m") or prog.startswith("ssdlab"):
        return shlex.join(["ssdlab", *args[1:]])
    return shlex.join([os.path.basename(sys.executable) or "python", *args])


def manifest(
    *,
    seed: int,
    drive_id: str,
    drive_hash: str,
    command: Optional[str] = None,
    check: bool = False,
    drive_changes: Optional[Mapping[str, Any]] = None,
    extra: Optional[Mapping[str, Any]] = None,
) -> Dict[str, Any]:
    """What a result needs to be reproduced and traced back."""
    m: Dict[str, Any] = {
        "ssdlab_version": ssdlab_version(),
        "engine_version": _core.version(),
        "seed": seed,
        "drive_id": drive_id,
        "drive_hash": drive_hash,
        "drive_changes": dict(drive_changes or {}),
        "checking_mode": check,
        "command": command if command is not None else command_line(),
        "timestamp": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "units": "MB/s = 1e6 B/s; GB = 1e9 B; sizes in jobs: k/m/g = 1024-based (fio); times in ns",
    }
    if extra:
        m.update(extra)
    return m


def fio_document(
    jobs: Sequence[PhaseResult],
    man: Dict[str, Any],
    phases: Sequence[PhaseResult] = (),
    series: bool = True,
) -> Dict[str, Any]:
    """fio-shaped JSON: ``{"fio_version": null, "ssdlab_version", "manifest",
    "jobs": [...], "phases": [...]}``; ``phases`` lists every phase in order
    (preconditioning, the job, idle) without series."""
    return {
        "fio_version": None,
        "ssdlab_version": man.get("ssdlab_version", ssdlab_version()),
        "manifest": man,
        "jobs": [j.to_dict(series=series) for j in jobs],
        "phases": [
            {
                "jobname": p.name,
                "kind": p.kind,
                "duration_ns": p.data["duration_ns"],
                "interrupted": p.interrupted,
                "wall_time_s": round(p.wall_time_s, 3),
                "iops": p.iops,
                "bw_bytes": p.data["read"]["bw_bytes"] + p.data["write"]["bw_bytes"],
                "waf": p.waf,
            }
            for p in phases
        ],
    }


# ---------------------------------------------------------------------------
# Readable summary
# ---------------------------------------------------------------------------


def _fmt_int(x: float) -> str:
    return f"{x:,.0f}"


def _gb(b: float) -> str:
    return f"{b / 1e9:,.2f} GB"


def _steady_line(r: PhaseResult) -> Optional[str]:
    iops = r.series.get("iops")
    if iops is None or len(iops) < 4:
        return None
    n = len(iops)
    tail = iops[n - max(1, n // 5):]
    return (
        f"  per {r.data.get('interval_ns', 1e9) / 1e6:g} ms interval: IOPS first {_fmt_int(iops[0])}, "
        f"min {_fmt_int(float(np.min(iops)))}, max {_fmt_int(float(np.max(iops)))}; "
        f"last 20% of the run: mean {_fmt_int(float(np.mean(tail)))}, min {_fmt_int(float(np.min(tail)))}"
    )


def format_summary(
    result: PhaseResult,
    man: Mapping[str, Any],
    preconditioning: Sequence[PhaseResult] = (),
    after: Sequence[PhaseResult] = (),
    drive_name: str = "",
    reproduce: Optional[str] = None,
) -> str:
    d = result.data
    s = d["ssdlab"]
    smart = s["smart"]
    lines: List[str] = []
    head = f"ssdlab {man.get('ssdlab_version', '?')} (engine {man.get('engine_version', '?')})"
    lines.append(f"{head}  drive {man.get('drive_id')} [{man.get('drive_hash')}]  seed {man.get('seed')}")
    if drive_name:
        lines.append(f"  {drive_name}")
    if man.get("drive_changes"):
        lines.append("  drive changes: " + ", ".join(f"{k}={v}" for k, v in man["drive_changes"].items()))
    for p in preconditioning:
        wrote = p.data["write"]["io_bytes"]
        lines.append(
            f"{p.name}: {p.duration_s:,.1f} s simulated, {p.wall_time_s:.1f} s wall"
            + (f", {_gb(wrote)} at {p.bw_mbps:,.1f} MB/s" if wrote else "")
        )
    status = "  (INTERRUPTED: figures cover what finished)" if result.interrupted else ""
    keys = ", ".join(f"{k}={v}" for k, v in (result.job or {}).items() if k != "name")
    if d.get("kind") == "workload":
        lines.append(f"job {result.name} ({keys}): QD{d.get('iodepth')}, data {d.get('data_pattern')}{status}")
    else:
        kind = str(d.get("kind"))
        label = result.name if result.name.startswith(kind + " ") else f"{kind} {result.name}"
        lines.append(f"{label} ({keys}){status}")
    for direction in ("read", "write", "trim"):
        x = d[direction]
        if not x["total_ios"]:
            continue
        lines.append(
            f"  {direction:<5} IOPS {_fmt_int(x['iops']):>10}   {x['bw_bytes'] / 1e6:10,.1f} MB/s   "
            f"{_gb(x['io_bytes'])} in {_fmt_int(x['total_ios'])} I/Os"
        )
        c = x["clat_ns"]
        pct = c["percentile"]
        lines.append(
            "        latency (us): "
            f"p50 {pct[PERCENTILE_KEYS['p50']] / 1e3:,.1f}  p99 {pct[PERCENTILE_KEYS['p99']] / 1e3:,.1f}  "
            f"p99.9 {pct[PERCENTILE_KEYS['p99.9']] / 1e3:,.1f}  max {c['max'] / 1e3:,.1f}  mean {c['mean'] / 1e3:,.1f}"
        )
    if not any(d[k]["total_ios"] for k in ("read", "write", "trim")):
        lines.append("  no I/O completed")
    sb = d.get("storage_bench")
    if sb and d.get("kind") == "replay":
        lines.append(
            f"  Storage Bench: data rate {sb['data_rate_mb_per_s']:,.1f} MB/s (reads {sb['read_data_rate_mb_per_s']:,.1f}, "
            f"writes {sb['write_data_rate_mb_per_s']:,.1f}) over busy time; {sb['iops']:,.0f} IOPS over busy time"
        )
    steady = _steady_line(result)
    if steady:
        lines.append(steady)
    lines.append(
        f"  WAF {s['waf']:.3f}: host wrote {_gb(s['host_bytes_written'])}, NAND programmed {_gb(s['nand_bytes_programmed'])}"
        f", GC moved {_gb(s['gc_bytes_moved'])}"
        + (f"; data reduction {s['data_reduction_ratio']:.3f}" if s.get("data_reduction_ratio", 1.0) != 1.0 else "")
    )
    lines.append(
        f"  GC victims {_fmt_int(s['gc_victims'])} (foreground {_fmt_int(s['fg_gc_victims'])}, "
        f"background {_fmt_int(s['bg_gc_victims'])}); block erases {_fmt_int(s['block_erases'])}"
    )
    lines.append(
        f"  wear: erase count avg {smart['erase_count_avg']:.3f} (min {smart['erase_count_min']}, "
        f"max {smart['erase_count_max']}) of {smart['pe_cycles_rated']} rated; "
        f"life remaining {smart['life_remaining_percent']:.3f}%"
    )
    power = s.get("power")
    if isinstance(power, dict) and "avg_w" in power:
        lines.append(f"  power: average {power['avg_w']:.2f} W, energy {power.get('energy_j', 0.0):,.1f} J")
    lines.append(
        f"  busy time {d['busy_time_ns'] / 1e9:,.3f} s (read {d['read_busy_time_ns'] / 1e9:,.3f} s, "
        f"write {d['write_busy_time_ns'] / 1e9:,.3f} s)"
    )
    lines.append(f"  simulated {result.duration_s:,.3f} s in {result.wall_time_s:,.2f} s wall")
    for p in after:
        lines.append(
            f"then {p.name}: background GC victims {_fmt_int(p.data['ssdlab']['bg_gc_victims'])}, "
            f"erases {_fmt_int(p.data['ssdlab']['block_erases'])}"
        )
    lines.append("units: MB/s = 1e6 B/s, GB = 1e9 B, us = microseconds")
    lines.append(f"reproduce: {reproduce or man.get('command')}")
    return "\n".join(lines)
