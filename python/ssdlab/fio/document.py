"""fio's JSON document and logs from simulated phases: per direction, per
job and clone, per group, with fio's keys (:mod:`ssdlab.fio.fiojson` holds
the latency keys)."""

from __future__ import annotations

import datetime as _dt
import math
import time
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from ..results import PhaseResult, ssdlab_version
from . import fiojson
from .jobfile import JobFile
from .plan import PlannedJob

ENGINE_FIELD_TO_OPTION = {"data": "refill_buffers", "data_pattern": "refill_buffers", "io_limit": "io_size", "write_bssplit": "bssplit",
                          "loop_bytes": "loops"}


def _interval_stats(values: np.ndarray) -> Tuple[float, float, float, float, int]:
    if len(values) == 0:
        return 0.0, 0.0, 0.0, 0.0, 0
    std = float(np.std(values, ddof=1)) if len(values) > 1 else 0.0
    return float(np.min(values)), float(np.max(values)), float(np.mean(values)), std, int(len(values))


def completion_times(r: PhaseResult) -> np.ndarray:
    """Mask of the intervals that ended within the phase."""
    t = r.series.get("time_ns")
    if t is None:
        return np.zeros(0, dtype=bool)
    return np.asarray(t <= int(r.data["duration_ns"]), dtype=bool)


def direction_entry(r: PhaseResult, d: str, p: Optional["PlannedJob"] = None) -> Dict[str, Any]:
    x = r.data[d]
    n = int(x["total_ios"])
    dur_ms = int(round(int(r.data["duration_ns"]) / 1e6))
    clat = x["clat_ns"]
    hist = r.latency_hist.get(d)
    if n:
        sd = fiojson.stddev_ns(hist)
        c: Dict[str, Any] = {"min": int(clat["min"]), "max": int(clat["max"]), "mean": float(clat["mean"]), "stddev": sd,
                             "N": n, "percentile": dict(clat["percentile"])}
        lat: Dict[str, Any] = {"min": int(clat["min"]), "max": int(clat["max"]), "mean": float(clat["mean"]), "stddev": sd,
                               "N": n}
        if p is not None and p.percentile_list is not None:
            c["percentile"] = fiojson.percentiles(hist, p.percentile_list, c["min"], c["max"])
        if p is not None and p.lat_percentiles:
            lat["percentile"] = dict(c["percentile"])
        if p is not None and not p.clat_percentiles:
            del c["percentile"]
        c["bins"] = fiojson.jsonplus_bins(hist)
    else:
        c = {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0}
        lat = dict(c)
    out: Dict[str, Any] = {
        "io_bytes": int(x["io_bytes"]),
        "io_kbytes": int(x["io_bytes"]) // 1024,
        "bw_bytes": int(round(float(x["bw_bytes"]))),
        "bw": int(float(x["bw_bytes"]) // 1024),
        "iops": float(x["iops"]),
        "runtime": dur_ms if n else 0,
        "total_ios": n,
        "short_ios": 0,
        "drop_ios": 0,
        "slat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": n},
        "clat_ns": c,
        "lat_ns": lat,
    }
    mask = completion_times(r)
    s = r.series
    if n and len(mask) and not mask.any():
        # A job shorter than one interval: its whole run is the one sample.
        secs = int(r.data["duration_ns"]) / 1e9
        iops = np.array([n / secs]) if secs > 0 else np.zeros(0)
        bw_kib = np.array([int(x["io_bytes"]) / secs / 1024.0]) if secs > 0 and d != "trim" else np.zeros(0)
    elif n and d in ("read", "write") and len(mask) and mask.any():
        dt = s["interval_s"][mask]
        iops = s[f"{d}_ios"][mask].astype(np.float64) / dt
        bw_kib = s[f"{d}_bytes"][mask].astype(np.float64) / dt / 1024.0
    elif n and d == "trim" and len(mask) and mask.any():
        dt = s["interval_s"][mask]
        iops = s["trim_ios"][mask].astype(np.float64) / dt
        bw_kib = np.zeros(0)
    else:
        iops = bw_kib = np.zeros(0)
    bmin, bmax, bmean, bdev, bn = _interval_stats(bw_kib)
    out.update({"bw_min": int(bmin), "bw_max": int(bmax), "bw_agg": 100.0 if bn else 0.0, "bw_mean": bmean, "bw_dev": bdev, "bw_samples": bn})
    imin, imax, imean, idev, inn = _interval_stats(iops)
    out.update({"iops_min": int(imin), "iops_max": int(imax), "iops_mean": imean, "iops_stddev": idev, "iops_samples": inn})
    return out


def _host_keys(p: PlannedJob, r: PhaseResult) -> Dict[str, Any]:
    """fio's job keys beside the directions: CPU (0: a simulation has no host
    CPU), the queue depths the closed loop ran at, the latency shares and
    fio's latency-target fields (no target: fio's defaults)."""
    total = sum(int(r.data[d]["total_ios"]) for d in ("read", "write", "trim"))
    per_clone = -(-total // p.clones) if p.clones else total
    lns, lus, lms = fiojson.latency_buckets([r.latency_hist.get(d) for d in ("read", "write", "trim")])
    one_batch = {k: (100.0 if k == "4" and total else 0.0) for k in fiojson.BATCH_KEYS}
    return {
        "usr_cpu": 0.0,
        "sys_cpu": 0.0,
        "ctx": 0,
        "majf": 0,
        "minf": 0,
        "iodepth_level": fiojson.iodepth_levels(per_clone, p.depth),
        "iodepth_submit": dict(one_batch),
        "iodepth_complete": dict(one_batch),
        "latency_ns": lns,
        "latency_us": lus,
        "latency_ms": lms,
        **_latency_target(p, r),
    }


#: fio's error number when a job misses its latency_target at depth 1 (ETIMEDOUT).
ETIMEDOUT = 110


def _latency_target(p: PlannedJob, r: PhaseResult) -> Dict[str, Any]:
    """fio's latency-target keys: the depth the search ended at, the target
    in ns and the window in us (the units fio's JSON has them in); without a
    target, the job's depth and fio's defaults."""
    found = r.data.get("latency_search")
    if not found:
        return {"latency_depth": p.depth, "latency_target": 0, "latency_percentile": 100.0, "latency_window": 0}
    e = p.engine
    return {"latency_depth": int(found["depth"]), "latency_target": int(str(e["latency_target"]).removesuffix("ns")),
            "latency_percentile": float(e.get("latency_percentile", 100.0)),
            "latency_window": int(str(e.get("latency_window", "0ns")).removesuffix("ns")) // 1000}


def _sync(r: PhaseResult) -> Dict[str, Any]:
    """fio's ``sync`` section: the job's FLUSH CACHE commands (``fsync=N``)
    and their latency (zeros when it sent none, as fio)."""
    x = r.data.get("sync")
    if not x or not int(x["total_ios"]):
        return {"total_ios": 0, "lat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0}}
    lat = x["lat_ns"]
    return {"total_ios": int(x["total_ios"]),
            "lat_ns": {"min": int(lat["min"]), "max": int(lat["max"]), "mean": float(lat["mean"]), "N": int(lat["N"]),
                       "percentile": dict(lat["percentile"])}}


def job_entry(p: PlannedJob, r: PhaseResult, ramp: Optional[PhaseResult], delay_ns: int) -> Dict[str, Any]:
    first = p.jobs[0]
    elapsed_ns = int(r.data["duration_ns"]) + (int(ramp.data["duration_ns"]) if ramp else 0) + delay_ns
    entry: Dict[str, Any] = {
        "jobname": first.name,
        "groupid": p.groupid,
        "error": ETIMEDOUT if (r.data.get("latency_search") or {}).get("failed") else 0,
        "eta": 0,
        "elapsed": int(math.ceil(elapsed_ns / 1e9)),
    }
    if first.own and first.job_options():
        entry["job options"] = first.job_options()
    desc = first.value("description")
    if desc:
        entry["desc"] = str(desc)
    for d in ("read", "write", "trim"):
        entry[d] = direction_entry(r, d, p)
    entry["sync"] = _sync(r)
    entry["job_runtime"] = int(round(int(r.data["duration_ns"]) / 1e6))
    entry.update(_host_keys(p, r))
    extra = {k: v for k, v in r.data.items() if k not in ("read", "write", "trim", "sync", "jobname")}
    extra.update(
        {
            "clones": p.clones,
            "merged_jobs": [j.name for j in p.jobs],
            "engine_job": dict(p.engine),
            "ramp_ns": int(ramp.data["duration_ns"]) if ramp else 0,
            "startdelay_ns": delay_ns,
            "notes": list(p.notes),
            "ioengine": str(first.value("ioengine", "psync")),
        }
    )
    entry["ssdlab"] = extra
    return entry


def _share(total: int, n: int, clone: int) -> int:
    """Clone ``clone``'s part of ``total`` split over ``n`` (the remainder to the first clones)."""
    return total // n + (1 if clone < total % n else 0)


def _clone_direction(x: Dict[str, Any], n: int, clone: int) -> Dict[str, Any]:
    """One clone's part of a direction of the merged queue: I/Os and bytes
    split exactly, rates and per-interval statistics in proportion."""
    ios, nbytes = int(x["total_ios"]), int(x["io_bytes"])
    mine, mine_b = _share(ios, n, clone), _share(nbytes, n, clone)
    f = mine / ios if ios else 0.0
    fb = mine_b / nbytes if nbytes else 0.0
    out = dict(x)
    out.update({"total_ios": mine, "io_bytes": mine_b, "io_kbytes": mine_b // 1024, "iops": float(x["iops"]) * f,
                "bw_bytes": int(round(float(x["bw_bytes"]) * fb))})
    out["bw"] = out["bw_bytes"] // 1024
    for k in ("bw_min", "bw_max", "iops_min", "iops_max"):
        out[k] = int(x[k] / n)
    for k in ("bw_mean", "bw_dev", "iops_mean", "iops_stddev"):
        out[k] = float(x[k]) / n
    if not mine:
        out["runtime"] = 0
    for k in ("slat_ns", "clat_ns", "lat_ns"):
        out[k] = dict(x[k], N=mine)
    return out


def job_entries(p: PlannedJob, r: PhaseResult, ramp: Optional[PhaseResult], delay_ns: int) -> List[Dict[str, Any]]:
    """The JSON entries of a planned job: one (a group, or a single job), or
    one per clone when the clones are reported one by one."""
    entry = job_entry(p, r, ramp, delay_ns)
    if not p.per_clone:
        return [entry]
    names = [j for j in p.jobs for _ in range(j.int_value("numjobs", 1))]
    out: List[Dict[str, Any]] = []
    for clone, job in enumerate(names):
        e = dict(entry, jobname=job.name)
        if job.own and job.job_options():
            e["job options"] = job.job_options()
        for d in ("read", "write", "trim"):
            e[d] = _clone_direction(entry[d], p.clones, clone)
        e["ssdlab"] = dict(entry["ssdlab"], clone=clone)
        out.append(e)
    return out


def _log_text(p: PlannedJob, r: PhaseResult, kind: str, clone: int) -> str:
    """fio's log lines ``msec, value, ddir, bs, offset`` for one clone (of
    ``p.clones``): IOPS, or KiB/s for ``kind == "bw"``; no line for an interval
    without I/O of that direction (as fio)."""
    s = r.series
    mask = completion_times(r)
    if not len(mask):
        return ""
    t_ms = (s["time_ns"][mask] // 1_000_000).astype(np.int64)
    starts = np.concatenate(([0], s["time_ns"][:-1]))[mask]
    span_ms = ((s["time_ns"][mask] - starts) // 1_000_000).astype(np.int64)
    cols: List[Tuple[int, np.ndarray]] = []
    if kind in ("lat", "clat", "slat"):
        return _lat_log_text(r, mask, t_ms, kind)
    if kind == "iops":
        for ddir, key in ((0, "read_ios"), (1, "write_ios"), (2, "trim_ios")):
            cols.append((ddir, s[key][mask].astype(np.int64)))
    else:
        for ddir, key in ((0, "read_bytes"), (1, "write_bytes")):
            cols.append((ddir, s[key][mask].astype(np.int64)))
    lines: List[str] = []
    n = p.clones
    for i in range(len(t_ms)):
        for ddir, arr in cols:
            total = int(arr[i])
            share = total // n + (1 if clone < total % n else 0)
            if share == 0 or span_ms[i] <= 0:
                continue
            value = share * 1000 // int(span_ms[i])
            if kind == "bw":
                value //= 1024
            lines.append(f"{int(t_ms[i])}, {value}, {ddir}, 0, 0")
    return "".join(line + "\n" for line in lines)


def _lat_log_text(r: PhaseResult, mask: np.ndarray, t_ms: np.ndarray, kind: str) -> str:
    """fio's averaged latency log lines (ns): each interval's mean completion
    latency on a line per direction that had I/O in it (the engine keeps one
    mean over the directions); ``slat`` is 0 (no host submission time) and
    ``lat`` equals ``clat``."""
    s = r.series
    means = r.interval_lat_mean_ns
    if means is None:
        return ""
    means = means[: len(mask)][mask]
    lines: List[str] = []
    for i in range(len(t_ms)):
        for ddir, key in ((0, "read_ios"), (1, "write_ios"), (2, "trim_ios")):
            if int(s[key][mask][i]) == 0:
                continue
            value = 0 if kind == "slat" else int(means[i])
            lines.append(f"{int(t_ms[i])}, {value}, {ddir}, 0, 0")
    return "".join(line + "\n" for line in lines)


def log_texts(p: PlannedJob, r: PhaseResult) -> Dict[str, str]:
    out: Dict[str, str] = {}
    for kind, prefix in (("iops", p.iops_log), ("bw", p.bw_log), ("lat", p.lat_log), ("clat", p.clat_log), ("slat", p.slat_log)):
        if prefix is None:
            continue
        for clone, number in enumerate(p.numbers):
            name = f"{prefix}_{kind}.{number}.log" if p.per_job_logs else f"{prefix}_{kind}.log"
            out[name] = out.get(name, "") + _log_text(p, r, kind, clone)
    return out


def fio_document(jobfile: JobFile, entries: List[Dict[str, Any]], sim: Any, notes: List[str], interrupted: bool) -> Dict[str, Any]:
    now = time.time()
    man = sim.manifest()
    doc: Dict[str, Any] = {
        "fio version": f"ssdlab-{ssdlab_version()}",
        "timestamp": int(now),
        "timestamp_ms": int(now * 1000),
        "time": _dt.datetime.fromtimestamp(now).strftime("%a %b %d %H:%M:%S %Y"),
        "global options": jobfile.global_options_shown(),
        "jobs": entries,
        "disk_util": [],
        "ssdlab": {
            "jobfile": jobfile.path,
            "drive_id": sim.drive.id,
            "seed": sim.seed,
            "capacity_bytes": sim.capacity_bytes,
            "interrupted": interrupted,
            "notes": notes,
            "manifest": man,
        },
    }
    return doc
