"""What the commands print: plain-text renderings of drives, phase results,
trace statistics, suite results, calibration and the spec sheet. Each
function takes a document (or the values it holds) and returns the text,
lines joined by newlines; the ``ssdlab`` command only prints it.

Units: MB/s = 1e6 B/s, GB = 1e9 B, us = microseconds (the reviewers'
convention), as every result states.
"""

from __future__ import annotations

import json
import math
from typing import Any, Iterable, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from .drive import Drive, PresetInfo
from .results import PERCENTILE_KEYS, PhaseResult

__all__ = [
    "gb",
    "format_presets",
    "format_drive",
    "format_library",
    "format_summary",
    "format_generated_trace_stats",
    "format_trace_stats",
    "format_storage_bench_list",
    "format_tests",
    "format_test_figures",
    "format_calibration",
    "format_calibration_markdown",
    "format_spec",
]


def gb(b: float) -> str:
    """Bytes as decimal GB (1e9 B), two decimals."""
    return f"{b / 1e9:,.2f} GB"


def _fmt_int(x: float) -> str:
    return f"{x:,.0f}"


# ---------------------------------------------------------------------------
# drives
# ---------------------------------------------------------------------------


def format_presets(presets: Sequence[PresetInfo]) -> str:
    """``ssdlab drives``: one line per preset."""
    w = max((len(p.id) for p in presets), default=2)
    return "\n".join(f"{p.id:<{w}}  {p.user_capacity_bytes / 1e9:6.0f} GB  {p.dies:3d} dies  {p.description or p.name}"
                     for p in presets)


def _fmt_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return f"{v:_}" if abs(v) >= 10_000 else str(v)
    return json.dumps(v)


def format_drive(d: Drive) -> str:
    """``ssdlab drive show``: the description with each value's source, then
    the derived geometry."""
    g = d.geometry
    prov = d.provenance
    lines = [f"# {d.name}", f"# source: {d.source}   hash: {d.hash}"]
    cfg = d.config
    built = [f"controller profile {cfg['drive']['controller']}"] if "controller" in cfg["drive"] else []
    built += [f"NAND part {cfg['drive']['nand_part']}"] if "nand_part" in cfg["drive"] else []
    if built:
        lines.append("# built from: " + " + ".join(built)
                     + " (ssdlab drive parts; the comment after each value says where it comes from)")
    if d.changes:
        lines.append("# changes: " + ", ".join(f"{k}={v}" for k, v in d.changes.items()))
    for section, fields in cfg.items():
        lines += ["", f"[{section}]"]
        rows = [(f"{k} = {_fmt_value(v)}", prov.get(f"{section}.{k}", "")) for k, v in fields.items()]
        w = min(max(len(r[0]) for r in rows), 48) if rows else 0
        lines += [f"{text:<{w}}  # {src}" if src else text for text, src in rows]
    lines += ["", "# derived geometry (GB = 1e9 B, GiB = 2^30 B)"]
    block_mib = g["block_bytes"] / 2**20
    geometry: List[Tuple[str, Any]] = [
        ("dies", f"{g['dies_total']} ({g['dies']} for data, {g['reserved_dies']} reserved) on {g['channels']} channels"),
        ("planes per die", g["planes_per_die"]),
        ("block", f"{g['pages_per_block']} pages x {g['page_size_bytes']} B x {g['planes_per_die']} planes = "
                  f"{block_mib:g} MiB, {g['blocks_per_die']} per die, {g['total_blocks']:,} in all"),
        ("raw capacity", f"{gb(g['raw_bytes'])} ({g['raw_bytes'] / 2**30:,.2f} GiB)"),
        ("user capacity", f"{gb(g['user_bytes'])} ({g['user_bytes'] / 2**30:,.2f} GiB)"),
        ("spare area", f"{gb(g['spare_bytes'])} = {g['spare_fraction'] * 100:.2f}% of user capacity"),
        ("4KB mapping units", f"{g['user_units']:,} user, {g['raw_slots']:,} raw slots"),
        ("map unit", f"{g['map_unit_bytes'] // 1024} KiB" + (
            f" (ftl.max_map_entries {cfg.get('ftl', {}).get('max_map_entries', 0):,} < the user units: a 4KB write "
            "rewrites the rest of its unit)" if g["map_unit_bytes"] > 4096 else "")),
        ("memory estimate", f"{g['memory_estimate_bytes'] / 2**20:,.0f} MiB "
                            f"({g['memory_estimate_check_bytes'] / 2**20:,.0f} MiB in checking mode)"),
    ]
    lines += [f"# {k:<18} {v}" for k, v in geometry]
    return "\n".join(lines)


def format_library(entries: Sequence[Tuple[str, str, str, str]], users: Mapping[str, Sequence[str]]) -> str:
    """``ssdlab drive parts``: the controller profiles and NAND parts, with the
    presets built from each."""
    lines: List[str] = []
    for label, kind in (("controller profiles (drive.controller)", "profile"), ("NAND parts (drive.nand_part)", "part")):
        lines.append(label)
        rows = [e for e in entries if e[0] == kind]
        w = max(len(e[1]) for e in rows)
        lines += [f"  {pid:<{w}}  {name}; presets: {', '.join(users.get(pid, [])) or '-'}" for _, pid, name, _ in rows]
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# a phase: ssdlab run / replay / storage-bench
# ---------------------------------------------------------------------------


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


def _waf_line(s: Mapping[str, Any]) -> str:
    """WAF, with what the host's bytes became: data reduction proper (stored /
    what reached the encoder) apart from writes overwritten in the write
    buffer before they were programmed, which the ratio alone would mix."""
    host = int(s["host_bytes_written"])
    if host == 0:
        return f"  WAF - (the host wrote nothing), NAND programmed {gb(s['nand_bytes_programmed'])}, GC moved {gb(s['gc_bytes_moved'])}"
    line = (f"  WAF {s['waf']:.3f}: host wrote {gb(host)}, NAND programmed {gb(s['nand_bytes_programmed'])}, "
            f"GC moved {gb(s['gc_bytes_moved'])}")
    coalesced = int(s.get("host_bytes_coalesced", 0))
    reached = host - coalesced
    if reached > 0:
        reduction = float(s.get("stored_bytes_written", reached)) / reached
        if abs(reduction - 1.0) > 1e-9:
            line += f"; data reduction {reduction:.3f}"
    if coalesced:
        size = gb(coalesced) if coalesced >= 10e6 else f"{coalesced / 1e6:,.2f} MB" if coalesced >= 1e5 else f"{coalesced:,} B"
        line += f"; {size} overwritten in the write buffer before being programmed"
    return line


def _direction_lines(d: Mapping[str, Any]) -> List[str]:
    """Per direction with I/O: IOPS, MB/s, bytes and completion-latency percentiles."""
    lines: List[str] = []
    for direction in ("read", "write", "trim"):
        x = d[direction]
        if not x["total_ios"]:
            continue
        lines.append(
            f"  {direction:<5} IOPS {_fmt_int(x['iops']):>10}   {x['bw_bytes'] / 1e6:10,.1f} MB/s   "
            f"{gb(x['io_bytes'])} in {_fmt_int(x['total_ios'])} I/Os"
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
    return lines


def _drive_lines(s: Mapping[str, Any]) -> List[str]:
    """What the drive did: WAF, GC, wear and power."""
    smart = s["smart"]
    lines: List[str] = []
    lines.append(_waf_line(s))
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
    return lines


def format_summary(
    result: PhaseResult,
    man: Mapping[str, Any],
    preconditioning: Sequence[PhaseResult] = (),
    after: Sequence[PhaseResult] = (),
    drive_name: str = "",
    reproduce: Optional[str] = None,
) -> str:
    """A phase's figures: per direction IOPS, MB/s and latency percentiles,
    WAF, GC, wear, power and busy time; the phases before and after; the
    command that reproduces it."""
    d = result.data
    s = d["ssdlab"]
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
            + (f", {gb(wrote)} at {p.bw_mbps:,.1f} MB/s" if wrote else "")
        )
    status = "  (INTERRUPTED: figures cover what finished)" if result.interrupted else ""
    keys = ", ".join(f"{k}={v}" for k, v in (result.job or {}).items() if k != "name")
    if d.get("kind") == "workload":
        lines.append(f"job {result.name} ({keys}): QD{d.get('iodepth')}, data {d.get('data_pattern')}{status}")
    else:
        kind = str(d.get("kind"))
        label = result.name if result.name.startswith(kind + " ") else f"{kind} {result.name}"
        lines.append(f"{label} ({keys}){status}")
    lines += _direction_lines(d)
    sb = d.get("storage_bench")
    if sb and d.get("kind") == "replay":
        # the busy-time rates are the Storage Bench method; only a Storage Bench trace gives a Storage Bench figure
        what = "Storage Bench: data rate" if (result.job or {}).get("generated") else "data rate"
        lines.append(
            f"  {what} {sb['data_rate_mb_per_s']:,.1f} MB/s (reads {sb['read_data_rate_mb_per_s']:,.1f}, "
            f"writes {sb['write_data_rate_mb_per_s']:,.1f}) over busy time; {sb['iops']:,.0f} IOPS over busy time"
        )
    steady = _steady_line(result)
    if steady:
        lines.append(steady)
    lines += _drive_lines(s)
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
    if man.get("checking_mode"):
        # a failed check raises IntegrityError: every phase printed here passed
        phases = [*preconditioning, result, *after]
        reads = sum(int(p.data.get("read", {}).get("total_ios", 0)) for p in phases)
        lines.append(f"checking mode: passed: {_fmt_int(reads)} reads verified against the shadow model, and the whole map "
                     f"and the invariants after each of the {len(phases)} phases")
    lines.append("units: MB/s = 1e6 B/s, GB = 1e9 B, us = microseconds")
    lines.append(f"reproduce: {reproduce or man.get('command')}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# traces
# ---------------------------------------------------------------------------

_COUNTS = ("reads", "writes", "read_bytes", "write_bytes")
#: Trace figures printed to four significant digits: the mean outstanding I/Os,
#: under its old engine name and the iodepth names of the engine branch (keep
#: the one it settles on at the merge).
_FOUR_DIGITS = ("iodepth_mean",)


def _fmt_measured(figure: str, v: Optional[float]) -> str:
    if v is None:
        return "unknown"
    if figure in _COUNTS:
        return f"{v:,.0f}"
    return f"{v:,.4g}" if figure in _FOUR_DIGITS else f"{v:,.2f}"


def _comparison_table(comparison: Iterable[Mapping[str, Any]]) -> str:
    lines = [f"{'figure':<30} {'published':>16} {'measured':>16}  match"]
    for c in comparison:
        pub = c["published"]
        if c["figure"] in _COUNTS:
            try:
                pub = f"{int(pub):,}"
            except ValueError:
                pass
        lines.append(f"{c['figure']:<30} {pub:>16} {_fmt_measured(c['figure'], c['measured']):>16}  {'yes' if c['ok'] else 'NO'}")
    return "\n".join(lines)


def format_generated_trace_stats(res: Mapping[str, Any], seed: int, capacity_bytes: int, reproduce: str) -> str:
    """``ssdlab trace stats --generated``: the published figures beside the
    generated trace's, then its statistics."""
    ok = sum(1 for c in res["comparison"] if c["ok"])
    return "\n".join([
        f"{res['name']} ({res['bench']}): generated with seed {seed} on a {gb(capacity_bytes)} drive",
        _comparison_table(res["comparison"]),
        f"{ok} of {len(res['comparison'])} published figures matched (tolerances of docs/storage-bench.md)",
        "",
        res["stats"]["summary_text"].rstrip(),
        f"reproduce: {reproduce}",
    ])


def format_trace_stats(res: Mapping[str, Any], capacity_bytes: int) -> str:
    """``ssdlab trace stats FILE``: the import report, the statistics and the
    comparison with a workload's published figures when asked for."""
    imp = res["import"]
    devs = ", ".join(imp["device_names"][:8]) + (" ..." if imp["devices_seen"] > 8 else "")
    lines = [
        f"{res['file']}: format {imp['format']}, {imp['records']:,} records from {imp['lines']:,} lines",
        f"  {imp['non_io_lines']:,} non-I/O lines, {imp['filtered_other_devices']:,} of other devices, "
        f"{imp['skipped_lines']:,} bad lines skipped, {imp['folded']:,} folded into {gb(capacity_bytes)}, "
        f"{imp['reordered_records']:,} reordered; {imp['devices_seen']:,} device(s): {devs}",
    ]
    lines += [f"  skipped line {ex['line']}: {ex['reason']}" for ex in imp["skipped_examples"][:5]]
    lines += ["", res["stats"]["summary_text"].rstrip()]
    if "comparison" in res:
        lines += ["", f"compared with the published figures of {res['published']['name']}:",
                  _comparison_table(res["comparison"])]
    return "\n".join(lines)


def format_storage_bench_list(benches: Iterable[Mapping[str, Any]]) -> str:
    """``ssdlab trace workloads``: one line per Storage Bench generator."""
    return "\n".join(f"{w['id']:<18} {w['records']:>12,} records  {w['duration_s']:>7,} s  {w['name']}" for w in benches)


# ---------------------------------------------------------------------------
# the suite
# ---------------------------------------------------------------------------


def format_tests(tests: Sequence[Mapping[str, Any]]) -> str:
    """``ssdlab tests``: id and title, marking the tests run only on request."""
    w = max(len(t["id"]) for t in tests)
    return "\n".join(f"{t['id']:<{w}} {t['title']}{'  (on request)' if t['on_request'] else ''}" for t in tests)


def format_test_figures(doc: Mapping[str, Any]) -> str:
    """``ssdlab test``: a results document's figures."""
    t = doc["test"]
    m = doc["manifest"]
    lines = [f"{t['title']}  [{t['id']}]  drive {m['drive_id']} [{m['drive_hash']}]  seed {m['seed']}  scale {doc['profile']}"]
    if doc["skipped"]:
        lines.append(f"  not run: {doc['skipped']}")
    if doc.get("interrupted"):
        steps = len(doc.get("jobs", []))
        lines.append(f"  INTERRUPTED: the figures of the {steps} measured step{'' if steps == 1 else 's'} that finished"
                     if steps else "  INTERRUPTED before any measured step finished")
    if doc.get("profile") == "quick":
        lines.append("  quick scale: runtimes and spans cut (see 'ssdlab tests'); not comparable with the full scale's figures")
    for f in doc["figures"]:
        v = f["value"]
        val = "-" if v is None or v != v else (f"{v:,.1f}" if abs(v) < 1000 else f"{v:,.0f}")
        window = f"  [{f['window']}]" if f.get("window") else ""
        lines.append(f"  {f['label']:<36} {f['metric']:<36} {val:>12} {f['unit']}{window}")
    lines += [f"  simulated in {doc['wall_time_s']:.1f} s wall", "units: MB/s = 1e6 B/s, GB = 1e9 B, KB = 1024 B",
              f"reproduce: {m['reproduce']}"]
    return "\n".join(lines)


def _fmt_figure(v: Optional[float], unit: str, with_unit: bool) -> str:
    """A published or simulated figure: IOPS whole, MB/s to 0.1."""
    if v is None:
        return "-"
    text = f"{v:,.0f}" if unit == "IOPS" else f"{v:,.1f}"
    return f"{text} {unit}" if with_unit else text


def share_percent(share: float) -> str:
    """A share as a percentage that never rounds a miss up to 100% (247 of
    248 is 99.5%, not 100%) nor a hit down to 0%."""
    p = 100.0 * float(share)
    if 99.5 <= p < 100.0:
        return f"{math.floor(p * 10) / 10:.1f}%"
    if 0.0 < p < 0.5:
        return f"{math.ceil(p * 10) / 10:.1f}%"
    return f"{p:.0f}%"


def _error(r: Mapping[str, Any]) -> str:
    return "-" if r["error"] is None else f"{100 * r['error']:+.1f}%"


def format_calibration(doc: Mapping[str, Any]) -> str:
    """``ssdlab calibrate``: published against simulated, one row per figure."""
    results: Sequence[Mapping[str, Any]] = doc["results"]
    # the columns as wide as their longest entry: a label is never cut
    dw = max([20, *(len(str(r["drive_id"])) for r in results)])
    fw = max([21, *(len(f"{r['describe']} [{r['kind']}]") for r in results)])
    lines = [f"{'drive':<{dw}} {'figure (as published)':<{fw}} {'published':>12} {'simulated':>12} {'error':>8} {'tol':>5}  "]
    for r in results:
        pub, sim = (_fmt_figure(v, r["unit"], with_unit=False) for v in (r["value"], r["simulated"]))
        verdict = "interrupted" if r.get("interrupted") else ("ok" if r["ok"] else
                                                             "known miss" if r.get("known_miss") else "MISS")
        fig = f"{r['describe']} [{r['kind']}]"
        lines.append(f"{r['drive_id']:<{dw}} {fig:<{fw}} {pub:>12} {sim:>12} {_error(r):>8} "
                     f"{100 * r['tolerance']:>4.0f}%  {verdict}")
    known = [r for r in results if not r["ok"] and r.get("known_miss")]
    accepted = f", {len(known)} accepted known miss(es)" if known else ""
    lines.append(f"{doc['passed']} of {doc['figures']} figures within tolerance (measured 10%, rated 15%){accepted}; "
                 f"seed {doc['manifest']['seed']}; MB/s = 1e6 B/s; reproduce a row with the 'reproduce' command in --json output")
    lines += [f"known miss: {r['drive_id']} {r['describe']}: {r['known_miss']}" for r in known]
    return "\n".join(lines)


def format_calibration_markdown(doc: Mapping[str, Any]) -> str:
    """``ssdlab calibrate --markdown``: the table of docs/presets.md."""
    lines = ["| preset | figure | published | simulated | error | tolerance | |", "|---|---|---|---|---|---|---|"]
    for r in doc["results"]:
        pub, sim = (_fmt_figure(v, r["unit"], with_unit=True) for v in (r["value"], r["simulated"]))
        verdict = "ok" if r["ok"] else (f"known miss: {r['known_miss']}" if r.get("known_miss") else "**miss**")
        lines.append(f"| {r['drive_id']} | {r['describe']} ({r['kind']}; {r['source']}) | {pub} | "
                     f"{sim} | {_error(r)} | {100 * r['tolerance']:.0f}% | {verdict} |")
    return "\n".join(lines)


def _fmt_rate(v: Optional[float], unit: str) -> str:
    if v is None:
        return "-"
    return f"{v:,.0f} {unit}" if unit == "IOPS" else f"{v:,.1f} {unit}"


def format_spec(sheet: Mapping[str, Any]) -> str:
    """``ssdlab spec``: the peaks a box prints beside the steady-state figures."""
    d = sheet["drive"]
    m = sheet["manifest"]
    lines = [
        f"{d['name']}  [{d['id']} {d['hash'][:16]}]  {d['capacity_bytes'] / 1e9:.0f} GB  seed {m['seed']}",
        "",
        f"{'':<30} {'box: peak':>16} {'steady state':>16} {'ratio':>6}   published rating",
    ]
    for r in sheet["figures"]:
        ratio = "-" if r["steady_over_peak"] is None else f"{r['steady_over_peak']:.2f}"
        pub = "-"
        if r["published"] is not None:
            p = r["published"]
            err = "" if p["error"] is None else f" (peak {100 * p['error']:+.1f}%)"
            pub = f"{_fmt_rate(p['value'], r['unit'])}{err}, {p['source']}"
        lines.append(f"{r['figure']:<30} {_fmt_rate(r['peak'], r['unit']):>16} "
                     f"{_fmt_rate(r['steady_state'], r['unit']):>16} {ratio:>6}   {pub}")
    c = sheet["consistency"]
    lines += [
        f"{'4KB random write, worst second':<30} {'':>16} {_fmt_rate(c['lowest_1s_iops'], 'IOPS'):>16}"
        f"          lowest 1-s IOPS over the whole consistency test ({c.get('whole_run', '2000 s')}); in its steady-state "
        f"window ({c.get('steady_state_window', 't > 1400 s')}): min {_fmt_rate(c['steady_state_min_iops'], 'IOPS')}, "
        f"mean {_fmt_rate(c['steady_state_mean_iops'], 'IOPS')}",
        "",
        "peak: best case as vendors rated: clean drive, repeated data (deduplicated by a SandForce controller);",
        "  sequential reads of 8GB written that way, random reads of an 8GB span filled with incompressible data; QD32, 60 s.",
        "steady state: filled, then 20 min of 4KB random writes; incompressible data, QD32, 60 s, whole drive.",
        *(["quick scale (--quick): every test's runtimes and spans shortened, so these are a preview of the sheet,",
           "  not its figures; run without --quick for them."] if m.get("profile", "full") != "full" else []),
        "units: MB/s = 1e6 B/s, GB = 1e9 B, KB = 1024 B",
        f"reproduce: {m['reproduce']}",
    ]
    return "\n".join(lines)

