"""fio's JSON into the results schema (docs/results-schema.md): a job's
figures as a phase result, its IOPS and bandwidth logs as per-interval
series at fio's own sample times, the disk statistics of a replay, and the
results documents of a job file ``ssdlab test ID --fio`` printed and someone
ran by hand."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..errors import SsdlabError
from ..fio.parse import FioResult, JobResult, Latency
from ..fio.safety import SystemView
from ..results import PhaseResult
from ..results import manifest as _manifest
from ..results.documents import SCHEMA_VERSION, TEST_RESULT_SCHEMA
from ..suite import summary as _summary
from ..suite.definitions import get_test
from ..suite.fio import parse_measured_description
from ..suite.scale import FULL
from ..suite.vocabulary import Measured
from .fio_target import sysfs_value
from .jobs import job_doc


def _latency(x: Latency) -> Dict[str, Any]:
    return {"min": x.min_ns, "max": x.max_ns, "mean": x.mean_ns, "N": x.count,
            "percentile": {f"{k:.6f}": v for k, v in sorted(x.percentiles.items())}}


def _cumulative(entries: Sequence[Tuple[int, int, int, int, int]], scale: float) -> Tuple[Any, Any]:
    """A log's sample times (ms, unique, ascending) and, per direction, the
    cumulative amount up to each: fio's value is an average over the time
    since its previous sample (``value * spent``), a late or missed sample
    covering a longer span."""
    times = np.unique(np.asarray([e[0] for e in entries], dtype=np.int64))
    amounts = np.zeros((3, len(times)), dtype=np.float64)
    starts = np.concatenate(([0], times[:-1]))
    spent = (times - starts) / 1000.0
    index = {int(t): i for i, t in enumerate(times)}
    for ms, value, ddir, _bs, _off in entries:
        i = index[int(ms)]
        amounts[ddir, i] += value * scale * spent[i]
    return times, np.cumsum(amounts, axis=1)


def log_series(log_dir: Path, prefix: str) -> Optional[Dict[str, Any]]:
    """Per-sample series of a job from its fio logs ``PREFIX_iops[.N].log``
    and ``PREFIX_bw[.N].log`` at fio's own sample times (a late sample is a
    longer interval, not a gap): ``time_ns`` and per direction I/Os and bytes.
    None when there is no IOPS log."""
    from ..fio.parse import read_log

    def entries(kind: str) -> List[Tuple[int, int, int, int, int]]:
        files = sorted(log_dir.glob(f"{prefix}_{kind}.*.log")) or sorted(log_dir.glob(f"{prefix}_{kind}.log"))
        return [e for f in files for e in read_log(f).entries]

    io = entries("iops")
    if not io:
        return None
    t, cum_io = _cumulative(io, 1.0)
    out: Dict[str, Any] = {"time_ns": t.astype(np.uint64) * np.uint64(1_000_000)}
    for d, name in enumerate(("read", "write", "trim")):
        out[f"{name}_ios"] = np.diff(np.concatenate(([0.0], cum_io[d])))
    bw = entries("bw")
    if bw:
        tb, cum_b = _cumulative(bw, 1024.0)  # KiB/s
        for d, name in ((0, "read"), (1, "write")):
            at = np.interp(t, np.concatenate(([0], tb)), np.concatenate(([0.0], cum_b[d])))
            out[f"{name}_bytes"] = np.diff(np.concatenate(([0.0], at)))
    else:
        out["read_bytes"] = np.zeros(len(t))
        out["write_bytes"] = np.zeros(len(t))
    return out


def phase_from_fio(job: JobResult, label: str, kind: str = "workload", series: Optional[Dict[str, Any]] = None) -> PhaseResult:
    """A phase of the results from one fio job: fio's figures per direction
    (``iops``, ``bw_bytes``, ``io_bytes``, ``total_ios``, ``clat_ns``) and
    per-interval series: ``series`` as :func:`log_series` makes it, else from
    the job's attached logs (fixed intervals, :mod:`ssdlab.fio.parse`)."""
    data: Dict[str, Any] = {"jobname": label, "kind": kind, "duration_ns": int(job.runtime_ms) * 1_000_000, "interrupted": False}
    for d, x in (("read", job.read), ("write", job.write), ("trim", job.trim)):
        data[d] = {"iops": x.iops, "bw_bytes": x.mbps * 1e6, "io_bytes": x.io_bytes, "total_ios": x.total_ios,
                   "runtime": x.runtime_ms, "clat_ns": _latency(x.clat)}
    data["fio"] = {"jobname": job.name, "error": job.error, "ioengine": job.ioengine, "iodepth": job.iodepth,
                   "options": dict(job.options)}
    if series is not None:
        return PhaseResult(data, series)
    series = {}
    io, bw = job.iops_series, job.bw_series
    if io is not None:
        n = len(io.time_ms)
        iv = io.interval_ms / 1000.0

        def col(vals: Sequence[float], scale: float) -> Any:
            a = np.zeros(n, dtype=np.float64)
            m = min(n, len(vals))
            a[:m] = np.asarray(vals[:m], dtype=np.float64) * scale
            return a

        series["time_ns"] = np.asarray(io.time_ms, dtype=np.uint64) * np.uint64(1_000_000)
        series["read_ios"] = col(io.read, iv)
        series["write_ios"] = col(io.write, iv)
        series["trim_ios"] = col(io.trim, iv)
        series["read_bytes"] = col(bw.read, 1e6 * iv) if bw is not None else np.zeros(n)
        series["write_bytes"] = col(bw.write, 1e6 * iv) if bw is not None else np.zeros(n)
    return PhaseResult(data, series)


def disk_util(json_path: Path, device: Optional[str]) -> Optional[Dict[str, Any]]:
    try:
        text = json_path.read_text(errors="replace")
        doc, _ = json.JSONDecoder().raw_decode(text[text.index("{"):])
    except (OSError, ValueError):
        return None
    utils = [u for u in doc.get("disk_util", []) if isinstance(u, dict)]
    if not utils:
        return None
    return next((u for u in utils if u.get("name") == device), utils[0])


def disk_stat(name: Optional[str], view: Optional[SystemView] = None) -> Optional[Tuple[int, int, int]]:
    """(read ticks, write ticks, io ticks) in ms from ``/sys/class/block/NAME/stat``
    (io ticks: the time the disk had at least one I/O in flight), or None."""
    if not name:
        return None
    fields = sysfs_value(view or SystemView(), name, "stat").split()
    if len(fields) < 10 or not all(f.isdigit() for f in fields[:10]):
        return None
    return int(fields[3]), int(fields[7]), int(fields[9])


def results_from_fio(result: FioResult, name: str, command: str = "") -> List[Dict[str, Any]]:
    """Results documents (one per test) from fio's JSON of a job file that
    ``ssdlab test ID --fio`` printed and someone ran by hand: its measured
    sections carry ``description=ssdlab:TEST:RUN:STEP``; with the logs attached
    (:func:`ssdlab.fio.parse.read_fio_output` with the log directory) they
    have their per-second series. ``name`` names the drive (``real-NAME``).
    Raises SsdlabError when no job of the JSON is one of ssdlab's."""
    found: Dict[str, List[Tuple[int, int, JobResult]]] = {}
    for j in result.jobs:
        key = parse_measured_description(j.description)
        if key is not None:
            found.setdefault(key[0], []).append((key[1], key[2], j))
    if not found:
        raise SsdlabError(f"{result.path}: no measured step of an ssdlab test (the job files 'ssdlab test ID --fio' prints "
                          "name them: description=ssdlab:TEST:RUN:STEP)")
    slug = "".join(c if c.isalnum() or c in "-_." else "-" for c in name).strip("-") or "drive"
    digest = hashlib.sha256(json.dumps({"kind": "fio-import", "name": name}).encode()).hexdigest()[:16]
    drive_id = f"real-{slug}"
    drive: Dict[str, Any] = {"id": drive_id, "name": f"{name} (real, fio)",
             "description": f"A real drive measured by hand with {result.version}; imported from {result.path}.",
             "hash": digest, "capacity_bytes": None, "config": {}, "geometry": {}, "changes": {}, "kind": "real",
             "target": {"kind": "imported", "fio_json": result.path, "filename": result.global_options.get("filename")},
             "fio_version": result.version}
    docs: List[Dict[str, Any]] = []
    for tid, jobs in found.items():
        try:
            test = get_test(tid)
        except KeyError:
            raise SsdlabError(f"{result.path}: '{tid}' is not a test of this ssdlab ('ssdlab tests' lists them)") from None
        measured: List[Measured] = []
        job_docs: List[Dict[str, Any]] = []
        for run, si, j in sorted(jobs, key=lambda x: (x[0], x[1])):
            try:
                step = test["runs"][run]["steps"][si]
            except IndexError:
                raise SsdlabError(f"{result.path}: job '{j.name}' names run {run}, step {si} of {tid}, which has no such step") from None
            label = str(step.get("measure", j.name))
            m: Measured = {"run": run, "step": si, "label": label, "x": step.get("x"), "line": step.get("line"),
                           "job": dict(j.options), "result": phase_from_fio(j, label)}
            measured.append(m)
            job_docs.append(job_doc(m, 0.0))
        wanted = [s["measure"] for r in test["runs"] for s in r["steps"] if "measure" in s]
        missing = [w for w in wanted if w not in {m["label"] for m in measured}]
        figures, charts = _summary.summarise(test, measured, FULL)
        notes = [f"imported from {result.path} (fio run by hand from 'ssdlab test {tid} --fio')"]
        if missing:
            notes.append(f"not in the fio output: {', '.join(missing)}")
        rs = result.global_options.get("randseed", "0")
        seed = int(rs) if rs.isdigit() else 0
        man = _manifest(seed=seed, drive_id=drive_id, drive_hash=digest, command=command,
                        extra={"profile": FULL.name, "test_id": tid, "fio_version": result.version,
                               "reproduce": f"fio job file from 'ssdlab test {tid} --fio', run by hand; 'ssdlab fio-import' read it"})
        docs.append({"schema": TEST_RESULT_SCHEMA, "schema_version": SCHEMA_VERSION, "manifest": man, "drive": drive,
                     "test": test, "skipped": None, "profile": FULL.name, "only_measures": None, "figures": figures,
                     "charts": charts, "jobs": job_docs, "wall_time_s": 0.0, "notes": notes})
    return docs


def storage_bench_busy(job: JobResult, util: Optional[Dict[str, Any]], ticks: Optional[Tuple[int, int, int]] = None,
                       disk: Optional[str] = None) -> Tuple[Dict[str, Any], Optional[str]]:
    """The Storage Bench figures of a replay: bytes over the time the disk was
    busy: the kernel's io_ticks over the replay (``ticks``: read, write and io
    ticks in ms), else fio's ``disk_util``; without either, over the replay's
    run time (a note says so)."""
    run_ns = int(job.runtime_ms) * 1_000_000
    note = None
    source = "run time"
    if ticks is not None and ticks[2] > 0:
        source = "io_ticks"
        busy = min(ticks[2] * 1_000_000, run_ns) if run_ns else ticks[2] * 1_000_000
        rt, wt = float(ticks[0]), float(ticks[1])
        rshare = rt / (rt + wt) if rt + wt > 0 else (1.0 if job.read.total_ios else 0.0)
        rbusy, wbusy = int(busy * rshare), int(busy * (1 - rshare))
        util = {"name": disk}
    elif util is not None and isinstance(util.get("util"), (int, float)):
        source = "disk_util"
        busy = int(run_ns * float(util["util"]) / 100.0)
        rt, wt = float(util.get("read_ticks", 0)), float(util.get("write_ticks", 0))
        rshare = rt / (rt + wt) if rt + wt > 0 else (1.0 if job.read.total_ios else 0.0)
        rbusy, wbusy = int(busy * rshare), int(busy * (1 - rshare))
    else:
        busy = rbusy = wbusy = run_ns
        note = "fio reported no disk statistics: busy time is the replay's run time"

    def rate(b: int, ns: int) -> float:
        return b / (ns / 1e9) / 1e6 if ns > 0 else 0.0

    ios = job.read.total_ios + job.write.total_ios + job.trim.total_ios
    return {
        "data_rate_mb_per_s": rate(job.read.io_bytes + job.write.io_bytes, busy),
        "read_data_rate_mb_per_s": rate(job.read.io_bytes, rbusy),
        "write_data_rate_mb_per_s": rate(job.write.io_bytes, wbusy),
        "busy_time_ns": busy,
        "read_busy_time_ns": rbusy,
        "write_busy_time_ns": wbusy,
        "iops": ios / (busy / 1e9) if busy > 0 else 0.0,
        "busy_time_from": source,
        "disk": util.get("name") if util else None,
    }, note
