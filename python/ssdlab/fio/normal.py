"""fio's ``--output-format=normal`` text, drawn from fio's JSON.

The layout follows fio 3.33's ``show_thread_status_normal`` and
``show_run_stats`` (stat.c): per job the IOPS and bandwidth line, slat/clat/lat
with fio's unit rule, the completion-latency percentiles, bandwidth and IOPS
statistics, the latency shares, CPU, I/O depths, issued counts and the latency
target; then one "Run status group" block per reporting group. It reads any
fio JSON (fio's own too); the job header lines (``rw=..., bs=...``) need the
job options ssdlab keeps and are left out without them. Numbers are rounded as
fio's ``num2str`` does, to four significant characters.

API: :func:`render` ``(document) -> str``; :func:`num2str`.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

__all__ = ["render", "num2str"]

_DIRS = (("read", "READ"), ("write", "WRITE"), ("trim", "TRIM"))


def num2str(num: float, maxlen: int = 4, base: int = 1000, unit: str = "") -> str:
    """fio's ``num2str``: at most ``maxlen`` digits before a prefix (k, M, G,
    ... or Ki, Mi, Gi, ... for base 1024), a decimal when it fits."""
    prefixes = ["", "k", "M", "G", "T", "P"] if base == 1000 else ["", "Ki", "Mi", "Gi", "Ti", "Pi"]
    value = float(num)
    i = 0
    while len(str(int(value))) > maxlen and i < len(prefixes) - 1:
        value /= base
        i += 1
    digits = len(str(int(value)))
    decimals = maxlen - digits - 1
    if i == 0 or decimals <= 0:
        text = str(int(round(value))) if i else str(int(num))
    else:
        text = f"{value:.{decimals}f}"
    return f"{text}{prefixes[i]}{unit}"


def _bytes_pair(bps: float) -> str:
    return f"{num2str(bps, base=1024, unit='B/s')} ({num2str(bps, unit='B/s')})"


def _lat_scale(mn: float, mx: float, dev: float) -> Tuple[str, float]:
    """fio's ``nsec_to_msec`` / ``nsec_to_usec`` rule."""
    if mn > 2_000_000 and mx > 99_999_999 and dev > 1_000_000.0:
        return "msec", 1e6
    if mn > 2000 and mx > 99_999 and dev > 1000.0:
        return "usec", 1e3
    return "nsec", 1.0


def _lat_line(name: str, x: Dict[str, Any]) -> str:
    mn, mx, mean, dev = float(x["min"]), float(x["max"]), float(x["mean"]), float(x.get("stddev", 0.0))
    unit, div = _lat_scale(mn, mx, dev)
    return (f"    {name} ({unit}): min={num2str(int(mn / div), 6)}, max={num2str(int(mx / div), 6)}, "
            f"avg={mean / div:5.02f}, stdev={dev / div:5.02f}")


def _percentile_lines(name: str, pct: Dict[str, Any]) -> List[str]:
    if not pct:
        return []
    items = sorted(((float(k), int(v)) for k, v in pct.items()), key=lambda t: t[0])
    values = [v for _, v in items]
    mn, mx = min(values), max(values)
    unit, div = ("msec", 1e6) if mn > 2_000_000 and mx > 99_999_999 else ("usec", 1e3) if mn > 2000 and mx > 99_999 else ("nsec", 1)
    scaled = [(p, int(v // div)) for p, v in items]
    width = max(5, max(len(str(v)) for _, v in scaled))
    cells = [f"{p:5.2f}th=[{v:{width}d}]" for p, v in scaled]
    lines = [f"    {name} percentiles ({unit}):"]
    for i in range(0, len(cells), 4):
        row = ", ".join(cells[i:i + 4])
        lines.append(f"     | {row}{',' if i + 4 < len(cells) else ''}")
    return lines


def _direction(label: str, x: Dict[str, Any]) -> List[str]:
    runtime = int(x.get("runtime", 0))
    zone = "; 0 zone resets" if label == "write" else ""
    out = [f"  {label}: IOPS={num2str(float(x['iops']))}, BW={_bytes_pair(float(x['bw_bytes']))}"
           f"({num2str(int(x['io_bytes']), base=1024, unit='B')}/{runtime}msec){zone}"]
    out.append(_lat_line("slat", x["slat_ns"]))
    out.append(_lat_line("clat", x["clat_ns"]))
    out.append(_lat_line(" lat", x["lat_ns"]))
    out += _percentile_lines("clat", x["clat_ns"].get("percentile", {}))
    out += _percentile_lines(" lat", x["lat_ns"].get("percentile", {}))
    if int(x.get("bw_samples", 0)):
        out.append(f"   bw (  KiB/s): min={int(x['bw_min'])}, max={int(x['bw_max'])}, per={float(x.get('bw_agg', 100.0)):3.2f}%, "
                   f"avg={float(x['bw_mean']):5.02f}, stdev={float(x['bw_dev']):5.02f}, samples={int(x['bw_samples'])}")
    if int(x.get("iops_samples", 0)):
        out.append(f"   iops        : min={int(x['iops_min'])}, max={int(x['iops_max'])}, avg={float(x['iops_mean']):5.02f}, "
                   f"stdev={float(x['iops_stddev']):5.02f}, samples={int(x['iops_samples'])}")
    return out


def _shares(label: str, table: Dict[str, Any]) -> List[str]:
    cells = [f"{k}={max(float(v), 0.01):.2f}%" for k, v in table.items() if float(v) > 0]
    return [f"  lat ({label})   : " + ", ".join(cells[i:i + 5]) for i in range(0, len(cells), 5)]


def _levels(table: Dict[str, Any]) -> str:
    return ", ".join(f"{k}={float(v):.1f}%" for k, v in table.items())


def _job(job: Dict[str, Any], jobs_in_entry: int, when: str) -> List[str]:
    out = [f"{job['jobname']}: (groupid={job.get('groupid', 0)}, jobs={jobs_in_entry}): err= {job.get('error', 0)}: pid=0: {when}"]
    if job.get("desc"):
        out.append(f"  Description  : [{job['desc']}]")
    for d, _ in _DIRS:
        x = job.get(d)
        if x and int(x.get("total_ios", 0)):
            out += _direction(d, x)
    for key, label in (("latency_ns", "nsec"), ("latency_us", "usec"), ("latency_ms", "msec")):
        if key in job:
            out += _shares(label, job[key])
    if "usr_cpu" in job:
        out.append(f"  cpu          : usr={float(job['usr_cpu']):.2f}%, sys={float(job['sys_cpu']):.2f}%, ctx={job['ctx']}, "
                   f"majf={job['majf']}, minf={job['minf']}")
    if "iodepth_level" in job:
        out.append(f"  IO depths    : {_levels(job['iodepth_level'])}")
        out.append(f"     submit    : {_levels(job['iodepth_submit'])}")
        out.append(f"     complete  : {_levels(job['iodepth_complete'])}")
    totals = ",".join(str(int(job.get(d, {}).get("total_ios", 0))) for d, _ in _DIRS) + ",0"
    shorts = ",".join(str(int(job.get(d, {}).get("short_ios", 0))) for d, _ in _DIRS) + ",0"
    drops = ",".join(str(int(job.get(d, {}).get("drop_ios", 0))) for d, _ in _DIRS) + ",0"
    out.append(f"     issued rwts: total={totals} short={shorts} dropped={drops}")
    if "latency_target" in job:
        out.append(f"     latency   : target={job['latency_target']}, window={job['latency_window']}, "
                   f"percentile={float(job['latency_percentile']):.2f}%, depth={job['latency_depth']}")
    return out


def _group(gid: int, jobs: Sequence[Dict[str, Any]]) -> List[str]:
    out = [f"Run status group {gid} (all jobs):"]
    for d, label in _DIRS:
        xs = [j[d] for j in jobs if d in j and int(j[d].get("total_ios", 0))]
        if not xs:
            continue
        io = sum(int(x["io_bytes"]) for x in xs)
        runs = [int(x["runtime"]) for x in xs]
        bws = [float(x["bw_bytes"]) for x in xs]
        agg = io / (max(runs) / 1000.0) if max(runs) else 0.0
        out.append(f"{label:>7}: bw={_bytes_pair(agg)}, {num2str(min(bws), base=1024, unit='B/s')}-"
                   f"{num2str(max(bws), base=1024, unit='B/s')} ({num2str(min(bws), unit='B/s')}-{num2str(max(bws), unit='B/s')}), "
                   f"io={num2str(io, base=1024, unit='B')} ({num2str(io, unit='B')}), run={min(runs)}-{max(runs)}msec")
    return out


def _header(job: Dict[str, Any]) -> Optional[str]:
    """fio's line before the run (``NAME: (g=0): rw=..., bs=...``), from what
    ssdlab keeps of the job; None for another program's JSON."""
    e = job.get("ssdlab", {}).get("engine_job")
    if not e:
        return None
    bs = int(e.get("bs", 0)) or 0
    if "bsrange" in e:
        lo, hi = (int(v) for v in str(e["bsrange"]).split("-"))
    elif "bssplit" in e:
        sizes = [int(p.split("/")[0]) for p in str(e["bssplit"]).split(":")]
        lo, hi = min(sizes), max(sizes)
    else:
        lo = hi = bs
    span = f"{num2str(lo, base=1024, unit='B')}-{num2str(hi, base=1024, unit='B')}"
    return (f"{job['jobname']}: (g={job.get('groupid', 0)}): rw={e.get('rw')}, bs=(R) {span}, (W) {span}, (T) {span}, "
            f"ioengine={job['ssdlab'].get('ioengine', 'psync')}, iodepth={job.get('latency_depth', 1)}")


def render(doc: Dict[str, Any]) -> str:
    """fio's normal output of a run from its JSON document."""
    jobs: List[Dict[str, Any]] = list(doc.get("jobs", []))
    lines: List[str] = []
    heads = [h for h in (_header(j) for j in jobs) if h]
    lines += heads
    lines.append(str(doc.get("fio version", "fio")))
    if heads:
        lines.append(f"Starting {len(jobs)} process{'es' if len(jobs) != 1 else ''}")
    lines.append("")
    when = str(doc.get("time", ""))
    for j in jobs:
        own = j.get("ssdlab", {})
        lines += _job(j, 1 if "clone" in own else int(own.get("clones", 1)), when)
    groups: Dict[int, List[Dict[str, Any]]] = {}
    for j in jobs:
        groups.setdefault(int(j.get("groupid", 0)), []).append(j)
    for gid in sorted(groups):
        lines.append("")
        lines += _group(gid, groups[gid])
    return "\n".join(lines) + "\n"
