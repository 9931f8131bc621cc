"""Read fio's ``--output-format=json`` and its per-interval logs into one typed
structure. The same code reads real fio 3.x output (also a run stopped with
Ctrl-C, whose file starts with "fio: terminating on signal 2") and the output of
:mod:`ssdlab.fio.simulate` (``fio version`` = ``ssdlab-...``).

Units: MB/s = 1e6 B/s; latencies in ns (``*_us`` helpers give microseconds);
series per log interval (``log_avg_msec``; 1000 ms = per second).

Logs are matched to jobs by fio's names, ``PREFIX_iops.N.log`` where N counts
job instances (clones included) in job-file order. Given the job file
(``jobfile=``) the matching is exact; without it, it is inferred from the JSON
(``numjobs`` in the job or global options; consecutive entries with one name
and group are clones reported one by one), which fails only for a
``group_reporting`` group of *different* concurrent jobs (then the job file is
needed). Clones' logs are summed per interval; an interval missing from a log
had no I/O of that direction (fio writes no line for it).

API:
- :func:`load_fio_json` ``(path) -> FioResult``, :func:`parse_fio_json_text`,
  :func:`parse_fio_document`;
- :func:`read_log` ``(path) -> LogFile``; :func:`series_from_logs`;
- :func:`attach_logs` ``(result, log_dir, jobfile=None) -> FioResult``;
- :func:`read_fio_output` ``(json_path, log_dir=None, jobfile=None) -> FioResult``;
- :func:`main` ``(argv) -> int``: a standalone form of ``ssdlab fio-parse OUTPUT.json
  [--log-dir D] [--jobfile J]``, printing :meth:`FioResult.to_dict` as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from .errors import FioOutputError, JobFileError
from .jobfile import SYNC_ENGINES, JobFile, parse_jobfile, parse_size

__all__ = [
    "Latency",
    "DirectionResult",
    "Series",
    "JobResult",
    "FioResult",
    "LogFile",
    "load_fio_json",
    "parse_fio_json_text",
    "parse_fio_document",
    "read_log",
    "series_from_logs",
    "attach_logs",
    "read_fio_output",
    "main",
]

PathLike = Union[str, "os.PathLike[str]"]
DIRECTIONS = ("read", "write", "trim")


@dataclass(frozen=True)
class Latency:
    """A latency distribution in ns; ``percentiles`` maps 99.0 -> ns;
    ``stddev`` is None when the source does not give one."""

    min_ns: int
    max_ns: int
    mean_ns: float
    stddev_ns: Optional[float]
    count: int
    percentiles: Mapping[float, int]

    def percentile_us(self, p: float) -> Optional[float]:
        v = self.percentiles.get(float(p))
        return None if v is None else v / 1e3


@dataclass(frozen=True)
class DirectionResult:
    io_bytes: int
    total_ios: int
    iops: float
    mbps: float
    runtime_ms: int
    clat: Latency
    lat: Optional[Latency]


@dataclass(frozen=True)
class Series:
    """Per-interval values: ``time_ms`` are interval ends (k * interval_ms)."""

    interval_ms: int
    time_ms: Tuple[int, ...]
    read: Tuple[float, ...]
    write: Tuple[float, ...]
    trim: Tuple[float, ...]

    @property
    def total(self) -> Tuple[float, ...]:
        return tuple(r + w + t for r, w, t in zip(self.read, self.write, self.trim))


@dataclass(frozen=True)
class JobResult:
    """One job entry (a group with ``group_reporting``). ``rw``, ``bs``,
    ``iodepth``, ``numjobs``, ``ioengine`` are as configured (fio's defaults
    when unset); ``options`` are the global options overlaid with the job's.
    ``iops_series`` (I/Os per second) and ``bw_series`` (MB/s) come from the
    logs when attached. ``ssdlab`` holds a simulated job's extra figures."""

    name: str
    groupid: int
    rw: str
    bs: str
    bs_bytes: Optional[int]
    iodepth: int
    numjobs: int
    ioengine: str
    options: Mapping[str, str]
    read: DirectionResult
    write: DirectionResult
    trim: DirectionResult
    runtime_ms: int
    error: int
    iops_series: Optional[Series] = None
    bw_series: Optional[Series] = None
    ssdlab: Optional[Mapping[str, Any]] = None
    #: The job's ``description`` (fio's ``desc``), "" when it has none.
    description: str = ""
    #: fio's ``sync`` section: the fsync/fdatasync (FLUSH CACHE) latency of a
    #: job with ``fsync=N``; None when it sent none. ``count`` is the number.
    sync: Optional[Latency] = None

    @property
    def iops(self) -> float:
        return self.read.iops + self.write.iops + self.trim.iops

    @property
    def mbps(self) -> float:
        return self.read.mbps + self.write.mbps

    @property
    def iodepth_in_flight(self) -> int:
        """I/Os the job keeps in flight: 1 for fio's synchronous engines."""
        return 1 if self.ioengine in SYNC_ENGINES else self.iodepth


@dataclass(frozen=True)
class FioResult:
    """A whole fio output. ``source`` is "fio" or "ssdlab" (simulated)."""

    path: str
    source: str
    version: str
    timestamp: int
    global_options: Mapping[str, str]
    jobs: Tuple[JobResult, ...]
    interrupted: bool = False

    def job(self, name: str) -> JobResult:
        for j in self.jobs:
            if j.name == name:
                return j
        raise KeyError(f"no job '{name}' in {self.path}; jobs: {', '.join(j.name for j in self.jobs)}")

    def summary_lines(self) -> List[str]:
        """A few lines per job: what ran, IOPS and MB/s (1e6 B/s), and each
        direction's completion latency (mean, p99, max in us)."""
        head = f"{self.path}: {self.version} ({'simulated' if self.source == 'ssdlab' else 'real'}), {len(self.jobs)} job(s)"
        out = [head + (", interrupted" if self.interrupted else "")]
        for j in self.jobs:
            out.append(f"  {j.name} (group {j.groupid}): {j.rw} {j.bs} iodepth {j.iodepth} {j.ioengine}"
                       f"{f' x{j.numjobs}' if j.numjobs > 1 else ''}: {j.iops:,.0f} IOPS, {j.mbps:,.1f} MB/s, "
                       f"{j.runtime_ms:,} ms")
            for d in DIRECTIONS:
                x: DirectionResult = getattr(j, d)
                if not x.total_ios:
                    continue
                p99 = x.clat.percentile_us(99.0)
                p99_text = f", p99 {p99:,.0f} us" if p99 is not None else ""
                out.append(f"    {d}: {x.total_ios:,} I/Os, {x.iops:,.0f} IOPS, {x.mbps:,.1f} MB/s; clat mean "
                           f"{x.clat.mean_ns / 1e3:,.0f} us{p99_text}, max {x.clat.max_ns / 1e3:,.0f} us")
            if j.sync is not None:
                out.append(f"    sync: {j.sync.count:,} flushes, mean {j.sync.mean_ns / 1e3:,.0f} us")
            for name, series in (("iops", j.iops_series), ("bw", j.bw_series)):
                if series is not None:
                    out.append(f"    {name} log: {len(series.time_ms)} intervals of {series.interval_ms} ms")
        return out

    def to_dict(self) -> Dict[str, Any]:
        """Plain data (JSON-ready): every job's figures and series."""

        def lat(x: Optional[Latency]) -> Optional[Dict[str, Any]]:
            if x is None:
                return None
            return {"min_ns": x.min_ns, "max_ns": x.max_ns, "mean_ns": x.mean_ns, "stddev_ns": x.stddev_ns, "count": x.count,
                    "percentiles_ns": {f"{k:g}": v for k, v in x.percentiles.items()}}

        def ser(s: Optional[Series]) -> Optional[Dict[str, Any]]:
            if s is None:
                return None
            return {"interval_ms": s.interval_ms, "time_ms": list(s.time_ms), "read": list(s.read), "write": list(s.write), "trim": list(s.trim)}

        return {
            "path": self.path,
            "source": self.source,
            "version": self.version,
            "timestamp": self.timestamp,
            "interrupted": self.interrupted,
            "jobs": [
                {
                    "name": j.name,
                    "groupid": j.groupid,
                    "rw": j.rw,
                    "bs": j.bs,
                    "iodepth": j.iodepth,
                    "numjobs": j.numjobs,
                    "ioengine": j.ioengine,
                    "iops": j.iops,
                    "mbps": j.mbps,
                    "runtime_ms": j.runtime_ms,
                    **{
                        d: {"io_bytes": x.io_bytes, "total_ios": x.total_ios, "iops": x.iops, "mbps": x.mbps,
                            "runtime_ms": x.runtime_ms, "clat": lat(x.clat), "lat": lat(x.lat)}
                        for d, x in (("read", j.read), ("write", j.write), ("trim", j.trim))
                    },
                    "sync": lat(j.sync),
                    "iops_series": ser(j.iops_series),
                    "bw_series_mbps": ser(j.bw_series),
                }
                for j in self.jobs
            ],
        }


# ---------------------------------------------------------------------------
# JSON
# ---------------------------------------------------------------------------


def _num(d: Mapping[str, Any], key: str, path: str, where: str, default: Optional[float] = None) -> float:
    v = d.get(key, default)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        if v is None:
            raise FioOutputError(path, f"missing in {where}", field=key)
        raise FioOutputError(path, f"{v!r} in {where} is not a number", field=key)
    return float(v)


def _latency(d: Any, path: str, where: str) -> Optional[Latency]:
    if not isinstance(d, Mapping):
        return None
    pct: Dict[float, int] = {}
    raw = d.get("percentile")
    if isinstance(raw, Mapping):
        for k, v in raw.items():
            try:
                pct[float(k)] = int(v)
            except (TypeError, ValueError):
                raise FioOutputError(path, f"percentile {k!r}: {v!r} is not a number", field=f"{where}.percentile") from None
    n = int(_num(d, "N", path, where, 0))
    sd = d.get("stddev")
    return Latency(
        min_ns=int(_num(d, "min", path, where, 0)),
        max_ns=int(_num(d, "max", path, where, 0)),
        mean_ns=_num(d, "mean", path, where, 0),
        stddev_ns=float(sd) if isinstance(sd, (int, float)) and not isinstance(sd, bool) and (n or sd) else (None if n else 0.0),
        count=n,
        percentiles=pct,
    )


def _direction(d: Any, path: str, where: str) -> DirectionResult:
    if not isinstance(d, Mapping):
        raise FioOutputError(path, f"missing or not an object in {where}", field=where.rsplit(".", 1)[-1])
    clat = _latency(d.get("clat_ns"), path, f"{where}.clat_ns") or Latency(0, 0, 0.0, None, 0, {})
    return DirectionResult(
        io_bytes=int(_num(d, "io_bytes", path, where)),
        total_ios=int(_num(d, "total_ios", path, where)),
        iops=_num(d, "iops", path, where),
        mbps=_num(d, "bw_bytes", path, where) / 1e6,
        runtime_ms=int(_num(d, "runtime", path, where, 0)),
        clat=clat,
        lat=_latency(d.get("lat_ns"), path, f"{where}.lat_ns"),
    )


def _str_map(v: Any) -> Dict[str, str]:
    if not isinstance(v, Mapping):
        return {}
    return {str(k): str(x) for k, x in v.items()}


def _job(d: Any, i: int, glob: Mapping[str, str], path: str) -> JobResult:
    where = f"jobs[{i}]"
    if not isinstance(d, Mapping):
        raise FioOutputError(path, f"{where} is not an object", field="jobs")
    name = d.get("jobname")
    if not isinstance(name, str):
        raise FioOutputError(path, f"missing in {where}", field="jobname")
    opts = dict(glob)
    opts.update(_str_map(d.get("job options")))
    rw = opts.get("rw", opts.get("readwrite", "read"))
    bs = opts.get("bs", "4k")
    try:
        bsv = parse_size(bs.split(",")[0], kb_base=int(opts.get("kb_base", "1024")))
        bs_bytes: Optional[int] = bsv if isinstance(bsv, int) and "bssplit" not in opts else None
    except ValueError:
        bs_bytes = None

    def opt_int(k: str, default: int) -> int:
        try:
            return int(opts.get(k, str(default)))
        except ValueError:
            raise FioOutputError(path, f"{opts.get(k)!r} in {where} job options is not a whole number", field=k) from None

    dirs = {k: _direction(d.get(k), path, f"{where}.{k}") for k in DIRECTIONS}
    sync = None
    raw_sync = d.get("sync")
    if isinstance(raw_sync, Mapping) and int(_num(raw_sync, "total_ios", path, f"{where}.sync", 0)):
        sync = _latency(raw_sync.get("lat_ns"), path, f"{where}.sync.lat_ns")
    extra = d.get("ssdlab")
    runtime = d.get("job_runtime")
    rt = int(runtime) if isinstance(runtime, (int, float)) else max(x.runtime_ms for x in dirs.values())
    return JobResult(
        name=name,
        groupid=int(_num(d, "groupid", path, where, 0)),
        rw=rw,
        bs=bs,
        bs_bytes=bs_bytes,
        iodepth=opt_int("iodepth", 1),
        numjobs=opt_int("numjobs", 1),
        ioengine=opts.get("ioengine", "psync"),
        options=opts,
        read=dirs["read"],
        write=dirs["write"],
        trim=dirs["trim"],
        runtime_ms=rt,
        error=int(_num(d, "error", path, where, 0)),
        ssdlab=dict(extra) if isinstance(extra, Mapping) else None,
        description=str(d.get("desc", "")),
        sync=sync,
    )


def parse_fio_document(doc: Any, path: str = "<fio json>") -> FioResult:
    """A decoded fio JSON document -> FioResult. Raises FioOutputError."""
    if not isinstance(doc, Mapping):
        raise FioOutputError(path, "not a JSON object (fio --output-format=json writes one)")
    version = doc.get("fio version")
    if not isinstance(version, str):
        raise FioOutputError(path, "missing: not fio's --output-format=json output", field="fio version")
    jobs = doc.get("jobs")
    if not isinstance(jobs, list):
        raise FioOutputError(path, "missing or not a list", field="jobs")
    glob = _str_map(doc.get("global options"))
    sl = doc.get("ssdlab")
    return FioResult(
        path=path,
        source="ssdlab" if version.startswith("ssdlab") else "fio",
        version=version,
        timestamp=int(_num(doc, "timestamp", path, "the document", 0)),
        global_options=glob,
        jobs=tuple(_job(j, i, glob, path) for i, j in enumerate(jobs)),
        interrupted=bool(sl.get("interrupted")) if isinstance(sl, Mapping) else False,
    )


def parse_fio_json_text(text: str, path: str = "<fio json>") -> FioResult:
    """fio's JSON output, tolerating the lines fio prints around it (e.g.
    "fio: terminating on signal 2" before, "bad ddir: 2" after)."""
    start = text.find("{")
    if start < 0:
        raise FioOutputError(path, "no JSON object found (was fio run with --output-format=json?)")
    try:
        doc, _ = json.JSONDecoder().raw_decode(text[start:])
    except json.JSONDecodeError as e:
        line = text.count("\n", 0, start) + e.lineno
        raise FioOutputError(path, f"invalid JSON: {e.msg}", line=line) from None
    return parse_fio_document(doc, path)


def load_fio_json(path: PathLike) -> FioResult:
    p = os.fspath(path)
    try:
        text = Path(p).read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise FioOutputError(p, f"cannot read: {e.strerror or e}") from None
    return parse_fio_json_text(text, p)


# ---------------------------------------------------------------------------
# Logs
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class LogFile:
    """One fio log: entries ``(msec, value, ddir, bs, offset)``."""

    path: str
    entries: Tuple[Tuple[int, int, int, int, int], ...] = field(default=())


def read_log(path: PathLike) -> LogFile:
    """Read a fio log (iops, bw, lat: ``msec, value, ddir, bs, offset[, prio]``).
    Raises FioOutputError naming the line."""
    p = os.fspath(path)
    try:
        lines = Path(p).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise FioOutputError(p, f"cannot read: {e}") from None
    out: List[Tuple[int, int, int, int, int]] = []
    for ln, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        parts = [x.strip() for x in line.split(",")]
        if len(parts) < 3:
            raise FioOutputError(p, f"'{line}' is not 'msec, value, ddir, bs, offset'", line=ln)
        try:
            nums = [int(x) for x in parts[:5]]
        except ValueError:
            raise FioOutputError(p, f"'{line}': fields must be whole numbers", line=ln) from None
        while len(nums) < 5:
            nums.append(0)
        if nums[2] not in (0, 1, 2):
            raise FioOutputError(p, f"ddir {nums[2]} is not 0 (read), 1 (write) or 2 (trim)", line=ln, field="ddir")
        out.append((nums[0], nums[1], nums[2], nums[3], nums[4]))
    return LogFile(p, tuple(out))


def series_from_logs(logs: Sequence[LogFile], interval_ms: Optional[int], scale: float = 1.0) -> Optional[Series]:
    """Sum clones' logs per interval (entry k at about k * interval_ms; fio's
    times jitter by a few ms). With ``interval_ms`` None (fio logged every I/O,
    ``log_avg_msec`` unset) entries are counted per second for an iops log.
    ``scale`` multiplies values (e.g. KiB/s -> MB/s)."""
    entries = [e for lf in logs for e in lf.entries]
    if not entries:
        return None
    per_io = interval_ms is None
    iv = 1000 if interval_ms is None else int(interval_ms)
    buckets: Dict[int, List[float]] = {}
    for ms, value, ddir, _bs, _off in entries:
        k = (ms // iv + 1) if per_io else max(1, int(round(ms / iv)))
        b = buckets.setdefault(k, [0.0, 0.0, 0.0])
        b[ddir] += 1.0 if per_io else value * scale
    last = max(buckets)
    ks = range(1, last + 1)
    zero = [0.0, 0.0, 0.0]
    return Series(
        interval_ms=iv,
        time_ms=tuple(k * iv for k in ks),
        read=tuple(buckets.get(k, zero)[0] for k in ks),
        write=tuple(buckets.get(k, zero)[1] for k in ks),
        trim=tuple(buckets.get(k, zero)[2] for k in ks),
    )


def _instances_from_json(result: FioResult) -> List[List[int]]:
    """Job numbers (1-based) each JSON entry covers, inferred from the JSON."""
    out: List[List[int]] = []
    n = 1
    prev: Optional[JobResult] = None
    for j in result.jobs:
        clones_reported_singly = prev is not None and prev.name == j.name and prev.groupid == j.groupid and j.numjobs > 1
        if clones_reported_singly:
            out.append([n])
            n += 1
        else:
            # A new job: a group entry covers numjobs clones unless the next
            # entries repeat its name (clones reported one by one).
            idx = result.jobs.index(j)
            repeats = sum(1 for k in result.jobs[idx + 1 : idx + j.numjobs] if k.name == j.name and k.groupid == j.groupid)
            if j.numjobs > 1 and repeats == j.numjobs - 1:
                out.append([n])
                n += 1
            else:
                out.append(list(range(n, n + j.numjobs)))
                n += j.numjobs
        prev = j
    return out


def _instances_from_jobfile(result: FioResult, jobfile: JobFile) -> Optional[List[List[int]]]:
    """Job numbers per JSON entry, exact from the job file: fio prints one
    entry per reporting group with group_reporting, else one per clone.
    None when the JSON does not have that many entries."""
    groups: Dict[int, List[Any]] = {}
    gid = 0
    prev_group_jobs = 0
    for j in jobfile.jobs:
        if (j.flag("stonewall") or j.flag("new_group")) and prev_group_jobs:
            gid += 1
            prev_group_jobs = 0
        groups.setdefault(gid, []).append(j)
        prev_group_jobs += j.int_value("numjobs", 1)
    out: List[List[int]] = []
    for jobs in groups.values():
        nums = [j.number + i for j in jobs for i in range(j.int_value("numjobs", 1))]
        if jobs[0].flag("group_reporting"):
            out.append(nums)
        else:
            out += [[n] for n in nums]
    return out if len(out) == len(result.jobs) else None


_LOG_RE = re.compile(r"^(?P<prefix>.+)_(?P<kind>iops|bw)(?:\.(?P<n>\d+))?\.log$")


def attach_logs(result: FioResult, log_dir: PathLike, jobfile: Optional[JobFile] = None) -> FioResult:
    """Attach per-interval series from the logs in ``log_dir`` (fio's names)."""
    base = Path(log_dir)
    instances = (_instances_from_jobfile(result, jobfile) if jobfile is not None else None) or _instances_from_json(result)
    by_number = {j.number: j for j in jobfile.jobs} if jobfile is not None else {}
    jobs: List[JobResult] = []
    for j, nums in zip(result.jobs, instances):
        series: Dict[str, Optional[Series]] = {"iops": None, "bw": None}
        for kind, opt in (("iops", "write_iops_log"), ("bw", "write_bw_log")):
            prefix = j.options.get(opt)
            jf_job = next((by_number[n] for n in nums if n in by_number), None)
            if prefix is None and jf_job is not None:
                if jf_job.has(opt):
                    prefix = str(jf_job.value(opt)) or jf_job.name
            if not prefix:
                continue
            files = [base / f"{prefix}_{kind}.{n}.log" for n in nums]
            present = [f for f in files if f.is_file()]
            if not present and (base / f"{prefix}_{kind}.log").is_file():
                present = [base / f"{prefix}_{kind}.log"]
            if not present:
                continue
            interval: Optional[int]
            try:
                interval = int(j.options["log_avg_msec"]) if "log_avg_msec" in j.options else None
            except ValueError:
                interval = None
            if interval is None and j.ssdlab is not None and isinstance(j.ssdlab.get("interval_ns"), int):
                interval = int(j.ssdlab["interval_ns"]) // 1_000_000  # a simulated run's log interval
            if interval == 0:
                interval = None
            scale = 1.0 if kind == "iops" else 1024 / 1e6  # bw logs are KiB/s
            series[kind] = series_from_logs([read_log(f) for f in present], interval, scale)
        jobs.append(replace(j, iops_series=series["iops"], bw_series=series["bw"]))
    return replace(result, jobs=tuple(jobs))


def read_fio_output(json_path: PathLike, log_dir: Optional[PathLike] = None, jobfile: Optional[Union[JobFile, PathLike]] = None) -> FioResult:
    """Read fio's JSON and, when ``log_dir`` is given, its logs."""
    r = load_fio_json(json_path)
    if log_dir is None:
        return r
    jf = parse_jobfile(jobfile) if jobfile is not None and not isinstance(jobfile, JobFile) else jobfile
    assert jf is None or isinstance(jf, JobFile)
    return attach_logs(r, log_dir, jf)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``ssdlab fio-parse OUTPUT.json [--log-dir D] [--jobfile J]``: print the
    parsed result as JSON; 2 with one error line when it cannot be read."""
    ap = argparse.ArgumentParser(prog="ssdlab fio-parse", description="Read fio's JSON output (real or simulated) and its logs.")
    ap.add_argument("output")
    ap.add_argument("--log-dir")
    ap.add_argument("--jobfile")
    args = ap.parse_args(argv)
    try:
        r = read_fio_output(args.output, args.log_dir, args.jobfile)
    except (FioOutputError, JobFileError) as e:
        sys.stderr.write(f"ssdlab: error: {e}\n")
        return 2
    sys.stdout.write(json.dumps(r.to_dict(), indent=2) + "\n")
    return 0
