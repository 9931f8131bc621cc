"""Figures from measured phases: one function per ``summary`` kind of a test
description. Each returns ``(figures, charts)``: ``figures`` is a flat list
(one row of the CSV each: chart, label, metric, value, unit) and ``charts``
maps a chart id to what the report draws (type, title with unit, data)."""

from __future__ import annotations

import math
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

import numpy as np

from ..results import PhaseResult, Series
from .scale import Scale
from .vocabulary import Chart, Figure, Measured, SteadyConfig, SuiteTest

__all__ = ["summarise", "steady_state", "consistency_figures"]

Figures = List[Figure]
Charts = Dict[str, Chart]
Summariser = Callable[[SuiteTest, List[Measured], Scale], Tuple[Figures, Charts]]


def _direction(r: PhaseResult) -> str:
    d = r.data
    return "read" if d["read"]["io_bytes"] >= d["write"]["io_bytes"] else "write"


def _fig(chart: str, label: str, metric: str, value: float, unit: str, window: Optional[str] = None) -> Figure:
    """A figure; ``window``: the stretch of the run it is taken over, where a
    test gives several (a steady-state window beside the whole run)."""
    f: Figure = {"chart": chart, "label": label, "metric": metric, "value": float(value), "unit": unit}
    if window is not None:
        f["window"] = window
    return f


def _bar(title: str, unit: str, higher: bool = True) -> Chart:
    return {"type": "bar", "title": f"{title} ({unit})", "unit": unit, "higher_is_better": higher, "data": {}}


def summarise(test: SuiteTest, measured: List[Measured], scale: Scale) -> Tuple[Figures, Charts]:
    kind = test["summary"]
    fn: Summariser = {
        "throughput": _throughput,
        "sweep": _sweep,
        "consistency": _consistency,
        "curve": _curve,
        "fill": _fill,
        "storage_bench": _storage_bench,
        "power": _power,
        "grid": _grid,
        "mixed": _mixed,
    }[kind]
    return fn(test, measured, scale)


def _throughput(test: SuiteTest, measured: List[Measured], scale: Scale) -> Tuple[Figures, Charts]:
    tid = test["id"]
    figs: Figures = []
    mb = _bar(test["title"], "MB/s")
    charts: Charts = {f"{tid}.mbps": mb}
    # IOPS beside MB/s for the 4KB phases (a test may mix them with large transfers)
    def small(m: Measured) -> bool:
        return m["job"].get("bs") in ("4k", 4096)

    if any(small(m) for m in measured):
        charts[f"{tid}.iops"] = _bar(test["title"], "IOPS")
    for m in measured:
        r = m["result"]
        d = _direction(r)
        mbps = r.data[d]["bw_bytes"] / 1e6
        mb["data"][m["label"]] = mbps
        figs.append(_fig(f"{tid}.mbps", m["label"], f"{d} MB/s", mbps, "MB/s"))
        if small(m):
            iops = r.data[d]["iops"]
            charts[f"{tid}.iops"]["data"][m["label"]] = iops
            figs.append(_fig(f"{tid}.iops", m["label"], f"{d} IOPS", iops, "IOPS"))
    return figs, charts


def _sweep(test: SuiteTest, measured: List[Measured], scale: Scale) -> Tuple[Figures, Charts]:
    tid = test["id"]
    x = test.get("x", {})
    chart: Dict[str, Any] = {"type": "line", "title": f"{test['title']} (MB/s)", "unit": "MB/s", "x_label": x.get("label", "x"),
             "x_log": bool(x.get("log")), "data": {}}
    figs: Figures = []
    for m in measured:
        r = m["result"]
        d = _direction(r)
        line = m["line"] or d
        mbps = r.data[d]["bw_bytes"] / 1e6
        pts = chart["data"].setdefault(line, {"x": [], "y": []})
        pts["x"].append(m["x"])
        pts["y"].append(mbps)
        figs.append(_fig(f"{tid}.mbps", m["label"], f"{d} MB/s", mbps, "MB/s"))
    return figs, {f"{tid}.mbps": chart}


def steady_state(iops: Series, round_n: int, window_rounds: int = 5, range_fraction: float = 0.2,
                 slope_fraction: float = 0.1) -> Dict[str, Any]:
    """SNIA PTS steady state over rounds of ``round_n`` samples: the first window
    of ``window_rounds`` consecutive round means whose max - min is within
    ``range_fraction`` of the window mean and whose least-squares line rises or
    falls by at most ``slope_fraction`` of the mean across the window, and
    whose mean is within ``range_fraction`` of the last window's mean: the level
    the run settles at. (Without that last condition a drive's fresh-out-of-box
    plateau, as flat as any window, read as "steady from round 0" although the
    drive then fell to a fraction of it.)"""
    n_rounds = len(iops) // max(round_n, 1)
    rounds = np.array([float(np.mean(iops[i * round_n:(i + 1) * round_n])) for i in range(n_rounds)])
    out: Dict[str, Any] = {"round_samples": int(round_n), "rounds": rounds.tolist(), "steady": False,
                           "first_round": None, "window_mean_iops": None}
    final = float(np.mean(rounds[-window_rounds:])) if n_rounds >= window_rounds else 0.0
    for end in range(window_rounds, n_rounds + 1):
        w = rounds[end - window_rounds:end]
        mean = float(np.mean(w))
        if mean <= 0 or abs(mean - final) > range_fraction * final:
            continue
        slope = float(np.polyfit(np.arange(window_rounds, dtype=float), w, 1)[0])
        excursion = abs(slope) * (window_rounds - 1)
        if float(np.max(w) - np.min(w)) <= range_fraction * mean and excursion <= slope_fraction * mean:
            out.update(steady=True, first_round=end - window_rounds, window_mean_iops=mean,
                       range_iops=float(np.max(w) - np.min(w)), slope_excursion_iops=excursion)
            break
    return out


#: The shortest round the SNIA steady-state figure is reported for: the PTS's one-minute rounds. A round must
#: average over the drive's garbage collection cycles for the 20% range test to judge the level, not the cycles:
#: the quick scale's 3-second rounds of a steady drive vary +-12% (Vector 256GB, steady state 5,966-7,729 IOPS
#: round to round, where its 1-minute rounds vary 3%), so the test passed or failed on chance (the twin's round
#: trip: the Samsung 830, Vector and Vertex 4 128GB and their twins, with statistically the same series, came
#: out steady from 57-72 s on one side and never on the other). Shorter rounds are still computed (the chart's
#: data), but give no figure.
SNIA_MIN_ROUND_S = 60.0


def consistency_figures(time_s: Series, iops: Series, from_s: float, round_n: int,
                        steady_cfg: Mapping[str, Any]) -> Dict[str, Any]:
    win = iops[time_s > from_s] if np.any(time_s > from_s) else iops
    peak = float(np.max(iops)) if len(iops) else 0.0
    mean = float(np.mean(win)) if len(win) else 0.0
    return {
        "mean_iops": mean,
        "p1_iops": float(np.percentile(win, 1)) if len(win) else 0.0,
        "min_iops": float(np.min(win)) if len(win) else 0.0,
        "peak_iops": peak,
        "drop_from_peak_fraction": (1.0 - mean / peak) if peak > 0 else 0.0,
        "snia": steady_state(iops, round_n, steady_cfg.get("window_rounds", 5), steady_cfg.get("range_fraction", 0.2),
                             steady_cfg.get("slope_fraction", 0.1)),
    }


def _consistency(test: SuiteTest, measured: List[Measured], scale: Scale) -> Tuple[Figures, Charts]:
    tid = test["id"]
    cfg: SteadyConfig = test.get("steady", {})
    from_s = cfg.get("from_s", 1400) * scale.time_scale
    round_s = cfg.get("round_s", 60) * scale.time_scale
    chart: Chart = {"type": "consistency", "title": f"{test['title']} (IOPS)", "unit": "IOPS", "from_s": from_s,
                    "round_s": round_s, "data": {}}
    charts: Charts = {f"{tid}.iops": chart}
    figs: Figures = []
    for key, title in (("mean_iops", "mean IOPS, steady state"), ("min_iops", "minimum IOPS, steady state"),
                       ("p1_iops", "1st percentile IOPS, steady state")):
        charts[f"{tid}.{key}"] = _bar(f"Performance consistency, {title}", "IOPS")
    for m in measured:
        r = m["result"]
        t = np.asarray(r.series["time_s"], dtype=float)
        t = t - (t[0] - float(r.series["interval_s"][0])) if len(t) else t
        iops = np.asarray(r.series["iops"], dtype=float)
        interval = float(np.median(r.series["interval_s"])) if len(t) else 1.0
        round_n = max(int(round(round_s / interval)), 1)
        f = consistency_figures(t, iops, from_s, round_n, cfg)
        chart["data"][m["label"]] = {"time_s": t.tolist(), "iops": iops.tolist(), **{k: v for k, v in f.items()}}
        end_s = float(t[-1]) if len(t) else 0.0
        steady_window = f"{interval:g}-s intervals, steady state t > {from_s:g} s of {end_s:g} s"
        whole = f"{interval:g}-s intervals, whole run 0-{end_s:g} s"
        for key in ("mean_iops", "p1_iops", "min_iops", "peak_iops"):
            figs.append(_fig(f"{tid}.{key}", m["label"], key, f[key], "IOPS", whole if key == "peak_iops" else steady_window))
            if f"{tid}.{key}" in charts:
                charts[f"{tid}.{key}"]["data"][m["label"]] = f[key]
        figs.append(_fig(f"{tid}.drop", m["label"], "drop from peak", 100 * f["drop_from_peak_fraction"], "%"))
        snia = f["snia"]
        if round_s >= SNIA_MIN_ROUND_S:
            figs.append(_fig(f"{tid}.snia", m["label"], "SNIA steady state from (s)",
                             snia["first_round"] * round_n * interval if snia["steady"] else float("nan"), "s"))
        else:
            snia["judged"] = False
            snia["why"] = (f"rounds of {round_s:g} s: shorter than the PTS's {SNIA_MIN_ROUND_S:g} s, they do not "
                           "average the drive's garbage collection cycles (run the full scale)")
    ends = [float(d["time_s"][-1]) for d in chart["data"].values() if d["time_s"]]
    if scale.name != "full" and ends:
        # the title names the methodology's length; say what this scale ran
        chart["title"] = f"{test['title']} (IOPS); {scale.name} run: {max(ends):g} s, not comparable with the full test"
    return figs, charts


def _pass_series(r: Any, d: str) -> Tuple[Series, Series, Series]:
    """(position GB, MB/s, interval s) of a pass; empty when fio logged no
    interval (a real target that finished within one log interval)."""
    if f"{d}_bytes" not in r.series or not len(r.series[f"{d}_bytes"]):
        empty = np.zeros(0)
        return empty, empty, empty
    pos = np.cumsum(np.asarray(r.series[f"{d}_bytes"], dtype=float)) / 1e9
    return pos, np.asarray(r.series["mbps"], dtype=float), np.asarray(r.series["interval_s"], dtype=float)


#: An interval of a pass counts as full at this share of the log interval or more: a pass's last interval ends with
#: the pass, often a fraction of the others long, and its few completions are one phase of the drive's cycle (a
#: QLC drive's programs of 22 ms, its GC), not a rate held for an interval.
FULL_INTERVAL_SHARE = 0.9


def _curve(test: SuiteTest, measured: List[Measured], scale: Scale) -> Tuple[Figures, Charts]:
    tid = test["id"]
    chart: Dict[str, Any] = {"type": "curve", "title": f"{test['title']} (MB/s vs position, GB)", "unit": "MB/s", "data": {}}
    avg = _bar(f"{test['title']}, average", "MB/s")
    figs: Figures = []
    for m in measured:
        r = m["result"]
        d = _direction(r)
        pos, mbps, dt = _pass_series(r, d)
        chart["data"][m["label"]] = {"position_gb": pos.tolist(), "mbps": mbps.tolist(), **({"direction": d} if d == "read" else {})}
        mean = r.data[d]["bw_bytes"] / 1e6
        avg["data"][m["label"]] = mean
        figs.append(_fig(f"{tid}.avg", m["label"], f"{d} MB/s (average over the pass)", mean, "MB/s"))
        full = mbps[dt >= FULL_INTERVAL_SHARE * float(np.median(dt))] if len(dt) else mbps
        figs.append(_fig(f"{tid}.min", m["label"], f"{d} MB/s (slowest full interval)", float(np.min(full)) if len(full) else 0.0, "MB/s"))
        # the robust low, as the consistency test's: the slowest interval alone is one stall at a random phase
        # (the Vertex 3 120GB's pass after the torture: slowest 10.6-18.6 MB/s at 2047-2052 blocks per plane, 1st
        # percentile 28.7-31.4, average 63.6-64.4)
        figs.append(_fig(f"{tid}.p1", m["label"], f"{d} MB/s (1st percentile of full intervals)",
                         float(np.percentile(full, 1)) if len(full) else 0.0, "MB/s"))
    return figs, {f"{tid}.curve": chart, f"{tid}.avg": avg}


#: A write cache shows as a step: the rate in the first part of a fill this many times the rate after it.
FILL_STEP_RATIO = 1.25


def fill_figures(position_gb: Series, mbps: Series, interval_s: Series) -> Dict[str, float]:
    """What reviewers read off a whole-drive fill curve: the speed while the
    write cache lasts (median of the first 1% of the data: a fixed cache of a
    share of a percent or two, as WD's, is over before 5%), the speed after it
    (median of the second half), and the cache size: the data written before
    the rate first falls below the midpoint of the two and stays there (three
    intervals), when the first is :data:`FILL_STEP_RATIO` times the second or
    more (else no step: 0). Intervals shorter than a full one
    (:data:`FULL_INTERVAL_SHARE` of the median: the pass's last) are left out
    of the medians."""
    pos = np.asarray(position_gb, dtype=float)
    rate = np.asarray(mbps, dtype=float)
    dt = np.asarray(interval_s, dtype=float)
    if not len(pos) or pos[-1] <= 0:  # no interval logged: nothing to read off
        return {"in_cache_mbps": math.nan, "after_cache_mbps": math.nan, "cache_gb": math.nan}
    full = dt >= FULL_INTERVAL_SHARE * float(np.median(dt))
    total = float(pos[-1])
    first = rate[full & (pos <= max(0.01 * total, float(pos[0])))]
    second = rate[full & (pos > 0.5 * total)]
    in_cache = float(np.median(first)) if len(first) else float(rate[0])
    after = float(np.median(second)) if len(second) else in_cache
    cache = 0.0
    if after > 0 and in_cache >= FILL_STEP_RATIO * after:
        mid = 0.5 * (in_cache + after)
        below = rate < mid
        for i in range(len(rate)):
            if below[i:i + 3].all() and len(below[i:i + 3]) == 3:
                cache = float(pos[i - 1]) if i > 0 else 0.0
                break
    return {"in_cache_mbps": in_cache, "after_cache_mbps": after, "cache_gb": cache}


def _fill(test: SuiteTest, measured: List[Measured], scale: Scale) -> Tuple[Figures, Charts]:
    figs, charts = _curve(test, measured, scale)
    tid = test["id"]
    for key, title, unit in (("in_cache_mbps", "speed in the write cache", "MB/s"),
                             ("after_cache_mbps", "speed after the write cache", "MB/s"),
                             ("cache_gb", "write cache size (data written before the step down)", "GB")):
        charts[f"{tid}.{key}"] = _bar(f"{test['title']}, {title}", unit)
    for m in measured:
        r = m["result"]
        d = _direction(r)
        f = fill_figures(*_pass_series(r, d))
        for key, metric, unit in (("in_cache_mbps", f"{d} MB/s in the write cache", "MB/s"),
                                  ("after_cache_mbps", f"{d} MB/s after the write cache", "MB/s"),
                                  ("cache_gb", "write cache size GB (0: no step)", "GB")):
            figs.append(_fig(f"{tid}.{key}", m["label"], metric, f[key], unit))
            charts[f"{tid}.{key}"]["data"][m["label"]] = f[key]
    return figs, charts


def _storage_bench(test: SuiteTest, measured: List[Measured], scale: Scale) -> Tuple[Figures, Charts]:
    tid = test["id"]
    title = test["title"]
    charts: Charts = {
        f"{tid}.rate": _bar(f"{title}, average data rate", "MB/s"),
        f"{tid}.busy": _bar(f"{title}, disk busy time", "s", higher=False),
    }
    figs: Figures = []
    # the 2010 suite also reported average IOPS
    with_iops = any(str(m["job"].get("generated", "")).endswith("-2010") for m in measured)
    if with_iops:
        charts[f"{tid}.iops"] = _bar(f"{title}, average IOPS", "IOPS")
    for m in measured:
        sb = m["result"].data["storage_bench"]
        for key, label in (("data_rate_mb_per_s", "all"), ("read_data_rate_mb_per_s", "reads"), ("write_data_rate_mb_per_s", "writes")):
            charts[f"{tid}.rate"]["data"][label] = sb[key]
            figs.append(_fig(f"{tid}.rate", label, "data rate MB/s", sb[key], "MB/s"))
        for key, label in (("busy_time_ns", "all"), ("read_busy_time_ns", "reads"), ("write_busy_time_ns", "writes")):
            charts[f"{tid}.busy"]["data"][label] = sb[key] / 1e9
            figs.append(_fig(f"{tid}.busy", label, "busy time s", sb[key] / 1e9, "s"))
        if with_iops:
            charts[f"{tid}.iops"]["data"]["all"] = sb["iops"]
            figs.append(_fig(f"{tid}.iops", "all", "IOPS", sb["iops"], "IOPS"))
    return figs, charts


def _power(test: SuiteTest, measured: List[Measured], scale: Scale) -> Tuple[Figures, Charts]:
    tid = test["id"]
    chart = _bar("Average power", "W", higher=False)
    figs: Figures = []
    for m in measured:
        w = float(m["result"].data["ssdlab"]["power"]["avg_w"])
        chart["data"][m["label"]] = w
        figs.append(_fig(f"{tid}.watts", m["label"], "average power W", w, "W"))
    return figs, {f"{tid}.watts": chart}


def _mean_latency_us(r: PhaseResult, direction: str) -> float:
    return float(r.data[direction]["clat_ns"]["mean"]) / 1e3


def _grid(test: SuiteTest, measured: List[Measured], scale: Scale) -> Tuple[Figures, Charts]:
    """CrystalDiskMark's grid: MB/s, IOPS and mean latency of each cell."""
    tid = test["id"]
    grid: Chart = {"type": "grid", "title": f"{test['title']} (MB/s, IOPS, mean latency us)", "unit": "MB/s", "data": {}}
    mb = _bar(test["title"], "MB/s")
    figs: Figures = []
    for m in measured:
        r = m["result"]
        d = _direction(r)
        cell = {"mbps": r.data[d]["bw_bytes"] / 1e6, "iops": float(r.data[d]["iops"]), "lat_mean_us": _mean_latency_us(r, d)}
        grid["data"][m["label"]] = cell
        mb["data"][m["label"]] = cell["mbps"]
        figs.append(_fig(f"{tid}.mbps", m["label"], f"{d} MB/s", cell["mbps"], "MB/s"))
        figs.append(_fig(f"{tid}.iops", m["label"], f"{d} IOPS", cell["iops"], "IOPS"))
        figs.append(_fig(f"{tid}.latency", m["label"], f"{d} mean latency us", cell["lat_mean_us"], "us"))
    return figs, {f"{tid}.grid": grid, f"{tid}.mbps": mb}


def _mixed(test: SuiteTest, measured: List[Measured], scale: Scale) -> Tuple[Figures, Charts]:
    """A read/write mix: total IOPS with its read and write parts, MB/s and
    the mean latency of reads and of writes."""
    tid = test["id"]
    total = _bar(f"{test['title']}, total", "IOPS")
    charts: Charts = {f"{tid}.iops": total, f"{tid}.parts": {"type": "mixed", "title": test["title"], "data": {}}}
    figs: Figures = []
    for m in measured:
        r = m["result"]
        rd, wr = float(r.data["read"]["iops"]), float(r.data["write"]["iops"])
        mbps = (r.data["read"]["bw_bytes"] + r.data["write"]["bw_bytes"]) / 1e6
        total["data"][m["label"]] = rd + wr
        charts[f"{tid}.parts"]["data"][m["label"]] = {
            "read_iops": rd, "write_iops": wr, "mbps": mbps,
            "read_lat_mean_us": _mean_latency_us(r, "read"), "write_lat_mean_us": _mean_latency_us(r, "write"),
        }
        figs += [
            _fig(f"{tid}.iops", m["label"], "total IOPS", rd + wr, "IOPS"),
            _fig(f"{tid}.read_iops", m["label"], "read IOPS", rd, "IOPS"),
            _fig(f"{tid}.write_iops", m["label"], "write IOPS", wr, "IOPS"),
            _fig(f"{tid}.mbps", m["label"], "read + write MB/s", mbps, "MB/s"),
            _fig(f"{tid}.read_latency", m["label"], "read mean latency us", _mean_latency_us(r, "read"), "us"),
            _fig(f"{tid}.write_latency", m["label"], "write mean latency us", _mean_latency_us(r, "write"), "us"),
        ]
    return figs, charts
