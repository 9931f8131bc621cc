"""Writes in segments: each segment a timed fio job of its own, the rate checked between them, so that the writes
end a bounded time after the rate steps down (the full drive's GC onset, a write cache's end) rather than writing
their whole size; then the segments' figures read as one job's. The full drive's random writes always run so; the
cache stage's two sequential writes where the drive is modern (:func:`ssdlab.twin.probe.run.full_stage_wanted`)."""

from __future__ import annotations

import statistics
from typing import Any, Dict, List, Optional, Sequence

from ..records import JobFigures
from .names import FULL_SEGMENT_S, FULL_TAIL_SHARE, STEP_FALL_SHARE, segment_name
from .spec import ProbeJob, secs

__all__ = ["segment_job", "segments_done", "merge_segments", "rate_before_step", "total_bytes"]


def segment_job(job: ProbeJob, i: int, seed: int, done_bytes: int, rate_bytes_per_s: Optional[float]) -> ProbeJob:
    """The ``i``-th segment of ``job`` after ``done_bytes`` of it: :data:`FULL_SEGMENT_S` seconds of its writes.
    Random writes (``io_size``: the most they write) get a seed of their own, since with the job's every segment
    would write the same offsets again, and the last segment only the bytes left where one at the last one's rate
    would pass them. A sequential write (``offset``, ``size``) goes on from where the segment before ended, each
    segment bounded by its runtime and the bytes left; only the first waits the job's ``startdelay``."""
    opts: Dict[str, Any] = {k: v for k, v in job.options.items() if k != "io_size" and (k != "startdelay" or i == 0)}
    if "io_size" in job.options:
        left = int(job.options["io_size"]) - done_bytes
        opts["randseed"] = seed * 1000 + i + 1
        if rate_bytes_per_s is not None and rate_bytes_per_s * FULL_SEGMENT_S >= left:
            opts["io_size"] = left
        else:
            opts.update(time_based=1, runtime=secs(FULL_SEGMENT_S))
    else:
        opts.update(offset=int(job.options.get("offset", 0)) + done_bytes, size=int(job.options["size"]) - done_bytes,
                    runtime=secs(FULL_SEGMENT_S))
    return ProbeJob(segment_name(job.name, i), job.stage, job.feature, job.why, opts, job.direction, job.log_ms)


def total_bytes(job: ProbeJob) -> int:
    """The most a segmented job writes."""
    return int(job.options["io_size"] if "io_size" in job.options else job.options["size"])


def _step(rates: Sequence[float], reference: Optional[float], share: float = STEP_FALL_SHARE) -> Optional[int]:
    if reference is not None:
        return next((i for i, r in enumerate(rates) if r < share * reference), None)
    return next((i for i in range(1, len(rates)) if rates[i] < share * statistics.median(rates[:i])), None)


def rate_before_step(rates: Sequence[float], share: float = STEP_FALL_SHARE) -> Optional[float]:
    """The median rate of the segments before the step (None: no step)."""
    k = _step(rates, None, share)
    return None if k is None else float(statistics.median(rates[:k]))


def segments_done(rates: Sequence[float], seconds: Sequence[float], reference: Optional[float] = None,
                  share: float = STEP_FALL_SHARE) -> Optional[str]:
    """Why the writes end after these segments (their mean rates, B/s, and durations, s), or None to go on: a
    segment below ``share`` of the median of those before it (of ``reference`` where given: the cache's rate, for
    the write after idle time, which may start past the step) is past the step; the writes then go on for
    :data:`FULL_TAIL_SHARE` of the time before that segment, at least two more segments."""
    step = _step(rates, reference, share)
    if step is None:
        return None
    before, after = sum(seconds[:step]), sum(seconds[step + 1:])
    ref = reference if reference is not None else statistics.median(rates[:step])
    if len(rates) - step - 1 >= 2 and after >= FULL_TAIL_SHARE * before:
        return (f"the rate stepped down in segment {step + 1} ({rates[step] / 1e6:,.0f} MB/s, after "
                f"{ref / 1e6:,.0f}), and the writes went on {after:,.0f} s past it")
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
