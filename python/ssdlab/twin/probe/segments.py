"""The full drive's random writes in segments: each segment a timed fio job of its own, the rate checked between
them, so that the writes end a bounded time after the rate steps down (the GC onset they look for) rather than
writing their whole size; then the segments' figures read as one job's."""

from __future__ import annotations

import statistics
from typing import Any, Dict, List, Optional, Sequence

from ..records import JobFigures
from .names import FULL_SEGMENT_S, FULL_TAIL_SHARE, STEP_FALL_SHARE, full_segment
from .spec import ProbeJob, secs

__all__ = ["segment_job", "segments_done", "merge_segments"]


def segment_job(job: ProbeJob, i: int, seed: int, left_bytes: int, rate_bytes_per_s: Optional[float]) -> ProbeJob:
    """The ``i``-th segment of ``job`` (whose ``io_size`` is the most it writes): :data:`FULL_SEGMENT_S` seconds
    of its writes, or the ``left_bytes`` of its size where a segment at the last one's rate would pass them. Each
    segment has its own seed: with the job's, every segment would write the same offsets again."""
    opts: Dict[str, Any] = {k: v for k, v in job.options.items() if k != "io_size"}
    opts["randseed"] = seed * 1000 + i + 1
    if rate_bytes_per_s is not None and rate_bytes_per_s * FULL_SEGMENT_S >= left_bytes:
        opts["io_size"] = left_bytes
    else:
        opts.update(time_based=1, runtime=secs(FULL_SEGMENT_S))
    return ProbeJob(full_segment(i), job.stage, job.feature, job.why, opts, job.direction, job.log_ms)


def segments_done(rates: Sequence[float], seconds: Sequence[float]) -> Optional[str]:
    """Why the writes end after these segments (their mean rates, B/s, and durations, s), or None to go on: a
    segment below :data:`STEP_FALL_SHARE` of the median of those before it is past the step; the writes then go
    on for :data:`FULL_TAIL_SHARE` of the time before that segment, at least two more segments."""
    step = next((i for i in range(1, len(rates)) if rates[i] < STEP_FALL_SHARE * statistics.median(rates[:i])), None)
    if step is None:
        return None
    before, after = sum(seconds[:step]), sum(seconds[step + 1:])
    if len(rates) - step - 1 >= 2 and after >= FULL_TAIL_SHARE * before:
        return (f"the rate stepped down in segment {step + 1} ({rates[step] / 1e6:,.0f} MB/s, after "
                f"{statistics.median(rates[:step]) / 1e6:,.0f}), and the writes went on {after:,.0f} s past it")
    return None


def merge_segments(parts: Sequence[JobFigures]) -> JobFigures:
    """The segments' figures as one job's: bytes, commands and time summed, the per-interval series joined, the mean
    latency weighted by commands, the p99 the worst segment's; power averaged over the segments' time."""
    n = [float(p.get("iops") or 0.0) * float(p.get("runtime_s") or 0.0) for p in parts]
    runtime = sum(float(p.get("runtime_s") or 0.0) for p in parts)
    io_bytes = sum(int(p.get("io_bytes") or 0) for p in parts)
    out: JobFigures = {"iops": sum(n) / runtime if runtime else 0.0,
                       "mbps": io_bytes / runtime / 1e6 if runtime else 0.0, "io_bytes": io_bytes, "runtime_s": runtime}
    lat = [(k, p.get("clat_mean_us")) for k, p in zip(n, parts) if p.get("clat_mean_us") is not None]
    out["clat_mean_us"] = sum(k * float(v or 0.0) for k, v in lat) / sum(k for k, _ in lat) if lat and sum(
        k for k, _ in lat) else None
    p99 = [float(v) for v in (p.get("clat_p99_us") for p in parts) if v is not None]
    out["clat_p99_us"] = max(p99) if p99 else None
    series: List[float] = []
    for p in parts:
        series += list(p.get("iops_series") or [])
    if any("iops_series" in p for p in parts):
        out["interval_ms"] = int(parts[0].get("interval_ms") or 1000)
        out["iops_series"] = series
    if parts and all("avg_w" in p for p in parts):
        power_s = sum(float(p["power_s"]) for p in parts)
        out["avg_w"] = sum(float(p["avg_w"]) * float(p["power_s"]) for p in parts) / power_s if power_s else 0.0
        out["power_s"] = power_s
        out["power_busy_s"] = sum(float(p["power_busy_s"]) for p in parts)
        out["nand_energy_j"] = sum(float(p["nand_energy_j"]) for p in parts)
    if parts and all("wall_start_s" in p for p in parts):
        out["wall_start_s"] = float(parts[0]["wall_start_s"])
        out["wall_end_s"] = float(parts[-1]["wall_end_s"])
    return out
