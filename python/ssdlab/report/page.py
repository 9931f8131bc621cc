"""The review page: the verdict, the CrystalDiskMark-style grids, the drive
and spec tables, then every test (method, one-line take, charts, tables,
latency, the reproduce commands). Drives are named by product name."""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ..outputs import write_text
from ..results import write_figures_csv
from ..suite.definitions import TESTS
from . import charts as _charts
from . import navigation as _nav
from . import verdict as _verdict
from .checks import Check, find_checks
from .labels import chart_values, drive_label, names_with_hashes
from .stories import stories_section
from .tables import _drive_table, _esc, _fmt, _reproduce, _scroll, _spec_table, _verdict_section

__all__ = ["build_report", "chart_values", "drive_label", "GROUPS"]

#: Report sections in order: (group id, title). The drive table and the spec
#: table come after the grid.
GROUPS = OrderedDict([
    ("cdm", "At a glance: CrystalDiskMark-style grid"),
    ("spec", "Spec sheet against measurement"),
    ("four-corners", "The four corners (Iometer-style)"),
    ("mixed", "Mixed random I/O (70/30)"),
    ("as-ssd", "AS-SSD (incompressible data)"),
    ("atto", "ATTO transfer-size sweep"),
    ("consistency", "Performance consistency"),
    ("trim", "TRIM validation (HD Tach-style)"),
    ("resiliency", "Resiliency"),
    ("file-copy", "File copies"),
    ("storage-bench", "Storage Bench (trace playback)"),
    ("power", "Power"),
    ("modern", "Tests of today's reviews: write caches, spans, QD1 latency"),
])

_CSS = """
body{font-family:Georgia,serif;max-width:1180px;margin:2em auto;padding:0 1em;color:#222;line-height:1.45}
h1,h2,h3{font-family:Helvetica,Arial,sans-serif} h2{border-bottom:2px solid #ccc;padding-top:.6em}
table{border-collapse:collapse;font-size:.85em;margin:.6em 0} td,th{border:1px solid #ccc;padding:.2em .5em;text-align:right}
th{background:#f2f2f2;font-weight:600} td:first-child,th:first-child{text-align:left}
.scroll{overflow-x:auto;max-width:100%;margin:.6em 0} .scroll table{margin:0}
table.drives th{min-width:7em;max-width:11em;white-space:normal;vertical-align:bottom}
table.drives td{max-width:14em;white-space:normal;text-align:left;overflow-wrap:anywhere}
table.headline{font-size:.8em} table.headline th{white-space:normal;text-align:center}
table.headline td.best{font-weight:bold;background:#e8f4e8}
table.headline td:first-child{max-width:16em}
figure{margin:1em 0} figure img{max-width:100%;height:auto;border:1px solid #ddd}
figcaption{font-size:.8em;color:#444} code{font-size:.85em;background:#f6f6f6;padding:.05em .3em;overflow-wrap:anywhere}
.about{font-style:italic} .take{font-weight:bold;font-family:Helvetica,Arial,sans-serif;font-size:.9em}
.buttons button{margin-right:.5em;padding:.3em .8em;border:1px solid #1f77b4;background:#fff;color:#1f77b4;border-radius:3px;cursor:pointer}
.buttons button.on{background:#1f77b4;color:#fff;font-weight:bold;box-shadow:0 0 0 2px #9cc3e6}
.note{font-size:.8em;color:#666}
details.reproduce{font-size:.8em;margin:.4em 0 1em} details.reproduce summary{cursor:pointer;color:#1f4f7f}
.drive-takes p{margin:.35em 0}
.cdm-grids{display:flex;flex-wrap:wrap;gap:.8em}
.cdm{border:1px solid #9ab;border-radius:4px;padding:.3em .4em;background:#f7fbf7;width:270px}
.cdm .name{font-family:Helvetica,Arial,sans-serif;font-size:.8em;font-weight:bold;min-height:2.4em}
table.cdm{font-family:Helvetica,Arial,sans-serif;font-size:.75em;margin:.2em 0;width:100%}
table.cdm th{background:#3a7d44;color:#fff;text-align:center;padding:.15em .3em}
table.cdm td{background:#fff;text-align:right;padding:.1em .3em;line-height:1.15}
table.cdm td b{font-size:1.25em} table.cdm td small{color:#555;display:block;font-size:.85em}
"""

_JS = """
function ssdlabSpare(variant){
  document.querySelectorAll('img.consistency').forEach(function(img){
    var src = img.getAttribute('data-' + variant);
    if (src) { img.src = src; img.setAttribute('data-shown', variant); }
  });
  document.querySelectorAll('.buttons button').forEach(function(b){
    var on = b.getAttribute('data-variant') === variant;
    b.classList.toggle('on', on);
    b.setAttribute('aria-pressed', on ? 'true' : 'false');
  });
}
document.addEventListener('DOMContentLoaded', function(){ ssdlabSpare('v0'); });
"""


# ---------------------------------------------------------------------------
# pieces
# ---------------------------------------------------------------------------


def _figure(src: str, alt: str, caption: str, attrs: str = "", cls: str = "") -> str:
    svg = src[: -len(".png")] + ".svg"
    c = f' class="{cls}"' if cls else ""
    return (f'<figure><img{c} src="{_esc(src)}" alt="{_esc(alt)}" loading="eager" {attrs}>'
            f'<figcaption>{caption} (<a href="{_esc(svg)}">SVG</a>)</figcaption></figure>')


def _bar_section(chart_id: str, per_drive: Mapping[str, Any], out: Path,
                 same_in_iops: Optional[Mapping[str, Any]] = None) -> str:
    """A bar chart and its table. ``same_in_iops``: the IOPS of some of the
    same measures (4KB phases), shown as table rows rather than a second
    chart of the same figures."""
    first = next(iter(per_drive.values()))
    values = {drive: c["data"] for drive, c in per_drive.items()}
    fig, order = _charts.bar_chart(first["title"], values, first.get("higher_is_better", True))
    _charts.save(fig, out / "charts", chart_id)
    labels: List[str] = []
    for v in values.values():
        labels += [lab for lab in v if lab not in labels]
    iops = {drive: c["data"] for drive, c in (same_in_iops or {}).items()}
    unit = f", {_esc(first['unit'])}" if iops and first.get("unit") else ""
    table = "<table><tr><th>drive</th>" + "".join(f"<th>{_esc(lab)}</th>" for lab in labels) + "</tr>"
    for d in order:
        table += f"<tr><td>{_esc(d)}{unit}</td>" + "".join(f"<td>{_fmt(values[d].get(lab))}</td>" for lab in labels) + "</tr>"
        if d in iops:
            table += f"<tr><td>{_esc(d)}, IOPS</td>" + "".join(f"<td>{_fmt(iops[d].get(lab))}</td>" for lab in labels) + "</tr>"
    table += "</table>"
    better = "higher is better" if first.get("higher_is_better", True) else "lower is better"
    also = " The 4KB phases' IOPS are in the table (the same measures as the bars)." if iops else ""
    return _figure(f"charts/{chart_id}.png", first["title"],
                   f"{_esc(first['title'])}; {better}; best drive at the top.{also}") + _scroll(table)


def _line_section(chart_id: str, per_drive: Mapping[str, Any], out: Path) -> str:
    first = next(iter(per_drive.values()))
    series = {k: c["data"] for k, c in per_drive.items()}
    fig = _charts.line_chart(first["title"], series, first.get("x_label", "x"), first["unit"], first.get("x_log", False))
    _charts.save(fig, out / "charts", chart_id)
    same = _charts.coinciding(series)
    note = ""
    if same:
        note = " Lines that coincide (drawn one over another: the wider line underneath): " + "; ".join(
            f"{_esc(line)}: {_esc(' = '.join(ds))}" for line, ds in same) + "."
    # the figures as a table: a column per x, a row per drive and line
    xs = sorted({x for s in series.values() for pts in s.values() for x in pts["x"]})
    size = "bytes" in str(first.get("x_label", ""))
    head = "".join(f"<th>{_esc(_charts._size_label(x) if size else f'{x:g}')}</th>" for x in xs)
    rows = ""
    for drive, lines in series.items():
        for line, pts in lines.items():
            at = dict(zip(pts["x"], pts["y"]))
            rows += f"<tr><td>{_esc(drive)}, {_esc(line)}</td>" + "".join(f"<td>{_fmt(at.get(x))}</td>" for x in xs) + "</tr>"
    table = f"<table><tr><th>{_esc(first['unit'])}</th>{head}</tr>{rows}</table>"
    return _figure(f"charts/{chart_id}.png", first["title"], _esc(first["title"]) + "." + note) + _scroll(table)


def _curve_section(chart_id: str, per_drive: Mapping[str, Any], out: Path) -> str:
    first = next(iter(per_drive.values()))
    fig = _charts.curve_chart(first["title"], {k: c["data"] for k, c in per_drive.items()})
    _charts.save(fig, out / "charts", chart_id)
    return _figure(f"charts/{chart_id}.png", first["title"],
                   _esc(first["title"]) + "; one panel per drive, same axes; write passes solid, the read pass dashed.")


def _grid_section(per_drive: Mapping[str, Any]) -> str:
    """CrystalDiskMark's window per drive: MB/s, with IOPS and mean latency under it."""
    rows = ("SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1")
    tiles = []
    for drive, c in per_drive.items():
        data = c["data"]
        body = "<tr><th></th><th>Read (MB/s)</th><th>Write (MB/s)</th></tr>"
        for r in rows:
            cells = ""
            for direction in ("read", "write"):
                cell = data.get(f"{r} {direction}")
                if cell is None:
                    cells += "<td>-</td>"
                    continue
                cells += (f"<td><b>{cell['mbps']:,.2f}</b><small>{cell['iops']:,.0f} IOPS</small>"
                          f"<small>{cell['lat_mean_us']:,.0f} us</small></td>")
            body += f"<tr><th>{'<br>'.join(_esc(w) for w in r.split())}</th>{cells}</tr>"
        tiles.append(f'<div class="cdm"><div class="name">{_esc(drive)}</div><table class="cdm">{body}</table></div>')
    return ('<div class="cdm-grids">' + "".join(tiles) + "</div><p class=note>Each cell: MB/s (10<sup>6</sup> B/s), "
            "IOPS and mean completion latency (us). SEQ1M = 1MB sequential, RND4K = 4KB random; Q = outstanding "
            "commands, T = threads.</p>")


def _mixed_section(per_drive: Mapping[str, Any]) -> str:
    labels: List[str] = []
    for c in per_drive.values():
        labels += [lab for lab in c["data"] if lab not in labels]
    head = "<tr><th>drive</th>" + "".join(f"<th>{_esc(lab)}: reads / writes IOPS</th><th>{_esc(lab)}: read / write mean "
                                          "latency (us)</th>" for lab in labels) + "</tr>"
    rows = ""
    for drive, c in per_drive.items():
        cells = ""
        for lab in labels:
            x = c["data"].get(lab)
            if x is None:
                cells += "<td>-</td><td>-</td>"
                continue
            cells += (f"<td>{x['read_iops']:,.0f} / {x['write_iops']:,.0f}</td>"
                      f"<td>{x['read_lat_mean_us']:,.0f} / {x['write_lat_mean_us']:,.0f}</td>")
        rows += f"<tr><td>{_esc(drive)}</td>{cells}</tr>"
    return _scroll(f"<table>{head}{rows}</table>")


def _zero_seconds(run: Mapping[str, Any]) -> int:
    return sum(1 for y in run.get("iops", []) if y <= 0)


def _consistency_section(chart_id: str, per_drive: Mapping[str, Any], out: Path) -> str:
    first = next(iter(per_drive.values()))
    from_s = float(first.get("from_s", 1400))
    variants: List[str] = []
    for c in per_drive.values():
        variants += [v for v in c["data"] if v not in variants]
    html_parts = ['<div class="buttons" role="group" aria-label="spare area">' + "".join(
        f'<button type="button" data-variant="v{i}" aria-pressed="{"true" if i == 0 else "false"}"'
        f'{" class=on" if i == 0 else ""} onclick="ssdlabSpare(\'v{i}\')">{_esc(v)}</button>'
        for i, v in enumerate(variants)) + "</div>"]
    t_max = max((max(r["time_s"]) for c in per_drive.values() for r in c["data"].values() if r["time_s"]), default=1.0)
    zeros = {v: {drive: _zero_seconds(c["data"][v]) for drive, c in per_drive.items() if v in c["data"]} for v in variants}
    dt = _charts.interval_s(next(iter(first["data"].values())))
    zero_note = "; ".join(
        f"{_esc(v)}: " + (", ".join(f"{_esc(d)} {n}" for d, n in z.items() if n) or "none") for v, z in zeros.items())
    unit = "Seconds" if abs(dt - 1.0) < 1e-9 else f"Intervals of {dt:g} s"
    for view in _charts.CONSISTENCY_VIEWS:
        srcs = {}
        # one y axis for every spare-area variant of a view, so switching compares like with like
        ys = [y for c in per_drive.values() for r in c["data"].values() for t, y in zip(r["time_s"], r["iops"])
              if (not view[2] or t > from_s)]
        y_max = max(ys, default=1.0) or 1.0
        for i, v in enumerate(variants):
            runs = {drive: c["data"][v] for drive, c in per_drive.items() if v in c["data"]}
            fig = _charts.consistency_chart(f"{first['title']}, {v}", runs, view, from_s, y_max, t_max)
            name = f"{chart_id}.{view[0]}.v{i}"
            _charts.save(fig, out / "charts", name)
            srcs[f"v{i}"] = f"charts/{name}.png"
        attrs = " ".join(f'data-{k}="{_esc(s)}"' for k, s in srcs.items())
        alt = f"{first['title']} {view[1].format(t=from_s)}"
        caption = (f"{_esc(alt)}; the same y axis for every spare-area variant. {unit} with 0 IOPS (red markers on "
                   f"the bottom edge), whole run: {zero_note}.")
        html_parts.append(_figure(srcs["v0"], alt, caption, attrs=attrs + ' data-view="' + view[0] + '"', cls="consistency"))
    zero_head = "seconds" if unit == "Seconds" else unit.lower()
    win = f"t &gt; {from_s:g} s"
    rows = (f"<tr><th>drive, spare area</th><th>mean IOPS, {win}</th><th>1st pct IOPS, {win}</th><th>min IOPS, {win}</th>"
            "<th>peak IOPS, whole run</th>"
            f"<th>drop from peak</th><th>spread (sd, % of mean)</th><th>{zero_head} at 0 IOPS</th><th>SNIA steady state</th></tr>")
    for drive, c in per_drive.items():
        for v, r in c["data"].items():
            snia = r.get("snia", {})
            if snia.get("judged") is False:
                steady = "not judged: " + str(snia.get("why", ""))
            elif snia.get("steady"):
                t0 = snia["first_round"] * float(first.get("round_s", 0))
                steady = f"from round {snia['first_round']} (t = {t0:g} s; window mean {_fmt(snia['window_mean_iops'])})"
            else:
                steady = "not reached"
            spread = _verdict.consistency_spread(r, from_s)
            rows += (f"<tr><td>{_esc(drive)}, {_esc(v)}</td><td>{_fmt(r['mean_iops'])}</td><td>{_fmt(r['p1_iops'])}</td>"
                     f"<td>{_fmt(r['min_iops'])}</td><td>{_fmt(r['peak_iops'])}</td>"
                     f"<td>{100 * r['drop_from_peak_fraction']:.0f}%</td><td>{_fmt(spread)}</td>"
                     f"<td>{_zero_seconds(r)}</td><td>{_esc(steady)}</td></tr>")
    html_parts.append(f"<p class=note>Steady-state window: t &gt; {from_s:g} s. SNIA PTS detector: rounds of "
                      f"{_esc(first.get('round_s', ''))} s averaged, 5-round window, max-min within 20% of the mean, "
                      "least-squares slope excursion within 10%, and the window's mean within 20% of the last "
                      "window's (where the run settles), so a fresh-out-of-box plateau does not count.</p>"
                      + _scroll("<table>" + rows + "</table>"))
    return "".join(html_parts)


# ---------------------------------------------------------------------------
# latency
# ---------------------------------------------------------------------------

_RANDOM = ("randread", "randwrite", "randrw")
_PCT = (("p50", "50.000000"), ("p99", "99.000000"), ("p99.9", "99.900000"))


def _random_4k(job: Mapping[str, Any]) -> List[str]:
    spec = job.get("job", {})
    if spec.get("rw") not in _RANDOM or spec.get("bs") not in ("4k", 4096):
        return []
    return ["read", "write"] if spec["rw"] == "randrw" else [str(spec["rw"])[4:]]


def latency_panels(docs_by_drive: Mapping[str, Mapping[str, Any]]) -> Dict[str, Dict[str, Dict[str, float]]]:
    """``{measured step: {drive: {"p50", "p99", "p99.9", "max": us}}}`` of a
    test's 4KB random steps (a mixed step gives a panel for its reads and one
    for its writes), from the fio completion-latency percentiles of its jobs."""
    panels: Dict[str, Dict[str, Dict[str, float]]] = {}
    for drive, doc in docs_by_drive.items():
        for job in doc.get("jobs", []):
            dirs = _random_4k(job)
            for d in dirs:
                side = job.get(d, {})
                clat = side.get("clat_ns", {})
                pct = clat.get("percentile", {})
                if not side.get("total_ios") or not pct:
                    continue
                name = str(job.get("jobname", "")) + (f", {d}s" if len(dirs) > 1 else "")
                row = {k: float(pct[p]) / 1e3 for k, p in _PCT if p in pct}
                row["max"] = float(clat.get("max", 0)) / 1e3
                panels.setdefault(name, {})[drive] = row
    return panels


def latency_exceedance(job: Mapping[str, Any], direction: str) -> List[Tuple[float, float]]:
    """``[(latency us, fraction of I/Os slower)]`` from a job's fio percentiles and its maximum."""
    side = job.get(direction, {})
    clat = side.get("clat_ns", {})
    pct = clat.get("percentile", {})
    pts = sorted((float(p), float(v) / 1e3) for p, v in pct.items())
    out = [(v, 1.0 - p / 100.0) for p, v in pts if p < 100]
    n = int(side.get("total_ios", 0))
    if n and clat.get("max"):
        out.append((float(clat["max"]) / 1e3, 1.0 / n))
    return out


def _latency_section(test_id: str, title: str, docs: Mapping[str, Mapping[str, Any]], out: Path) -> str:
    panels = latency_panels(docs)
    if not panels:
        return ""
    cid = f"{test_id}.latency"
    fig = _charts.latency_chart(f"{title}: completion latency percentiles (us)", panels)
    _charts.save(fig, out / "charts", cid)
    return _figure(f"charts/{cid}.png", f"{title} latency percentiles",
                   "Completion latency of the 4KB random steps: median, p99, p99.9 and maximum, per drive (lowest p99 "
                   "at the top of each panel), log scale.")


def _consistency_latency(test_id: str, title: str, docs: Mapping[str, Mapping[str, Any]], out: Path) -> str:
    panels: Dict[str, Dict[str, List[Tuple[float, float]]]] = {}
    for drive, doc in docs.items():
        for job in doc.get("jobs", []):
            if job.get("write", {}).get("total_ios"):
                panels.setdefault(str(job.get("jobname", "")), {})[drive] = latency_exceedance(job, "write")
    if not panels:
        return ""
    cid = f"{test_id}.latency-cdf"
    fig = _charts.latency_cdf_chart(f"{title}: latency distribution of every write", panels)
    _charts.save(fig, out / "charts", cid)
    return _figure(f"charts/{cid}.png", f"{title} latency distribution",
                   "Fraction of the writes slower than a given completion latency (the whole run, from fio's "
                   "percentiles 1 to 99.99 and the maximum), log-log: the further right a line reaches, the longer "
                   "the worst stalls.")


# ---------------------------------------------------------------------------
# verdict and spec sheet
# ---------------------------------------------------------------------------


def _test_section(t: Mapping[str, Any], per: Mapping[str, Mapping[str, Any]], out: Path,
                  checks: Sequence[str] = ()) -> Tuple[str, str]:
    """One test, folding: the method, a one-line take, what to check, its
    charts and tables, latency, the reproduce commands. Returns (html, take)."""
    body, take = _test_body(t, per, out, checks)
    return _nav.fold(str(t["id"]), str(t["title"]), body), take


def _test_body(t: Mapping[str, Any], per: Mapping[str, Mapping[str, Any]], out: Path,
               checks: Sequence[str]) -> Tuple[str, str]:
    parts = [f"<p class=about>{_esc(t['about'])}</p>"]
    # results saved under this id by a different description (e.g. an older version of Storage Bench)
    current = next((c for c in TESTS if c["id"] == t["id"]), None)
    for k, d in per.items():
        if current is not None and d["test"].get("runs") != current["runs"]:
            states = ", ".join(sorted({r["state"]["state"] for r in d["test"].get("runs", [])}))
            parts.append(f"<p class=note>{_esc(k)}: measured with a different description of this test "
                         f"(from the {_esc(states)} state; an earlier ssdlab?); its figures do not compare "
                         "with the others.</p>")
    for k, d in per.items():
        if d.get("skipped"):
            parts.append(f"<p class=note>{_esc(k)}: not run ({_esc(d['skipped'])}).</p>")
    ran = {k: d for k, d in per.items() if not d.get("skipped")}
    if not ran:
        return "".join(parts), ""
    take = _verdict.section_take(ran)
    if take:
        parts.append(f"<p class=take>{_esc(take)}</p>")
    parts.append(_nav.check_note(checks))
    chart_ids: List[str] = []
    for d in ran.values():
        chart_ids += [c for c in d.get("charts", {}) if c not in chart_ids]
    # one chart per figure: a throughput test's IOPS chart repeats its 4KB
    # bars in another unit, so those numbers join the MB/s chart's table
    folded = {cid[:-len(".iops")] + ".mbps": cid for cid in chart_ids
              if cid.endswith(".iops") and _same_measures(list(ran.values()), cid[:-len(".iops")] + ".mbps", cid)}
    for cid in chart_ids:
        if cid in folded.values():
            continue
        pd = chart_values(list(ran.values()), cid)
        kind = next(iter(pd.values()))["type"]
        if kind == "bar":
            same = chart_values(list(ran.values()), folded[cid]) if cid in folded else None
            parts.append(_bar_section(cid, pd, out, same))
        elif kind == "line":
            parts.append(_line_section(cid, pd, out))
        elif kind == "curve":
            parts.append(_curve_section(cid, pd, out))
        elif kind == "consistency":
            parts.append(_consistency_section(cid, pd, out))
        elif kind == "grid":
            parts.append(_grid_section(pd))
        elif kind == "mixed":
            parts.append(_mixed_section(pd))
    if t.get("group") == "consistency":
        parts.append(_consistency_latency(str(t["id"]), str(t["title"]), ran, out))
    elif t.get("group") != "power":
        parts.append(_latency_section(str(t["id"]), str(t["title"]), ran, out))
    parts.append(_reproduce(ran))
    return "".join(parts), take


def _same_measures(docs: Sequence[Mapping[str, Any]], mbps_id: str, iops_id: str) -> bool:
    """Whether every bar of the IOPS chart is also a bar of the MB/s chart
    (the same measure in another unit), for every drive."""
    mbps, iops = chart_values(docs, mbps_id), chart_values(docs, iops_id)
    return bool(mbps) and all(c["type"] == "bar" for c in (*mbps.values(), *iops.values())) and all(
        d in mbps and set(c["data"]) <= set(mbps[d]["data"]) for d, c in iops.items())


def _group_anchor(gid: str, tests: Sequence[Mapping[str, Any]]) -> str:
    """A group's anchor: its id, unless a test of the same id takes it (ids are unique in a page)."""
    return f"{gid}-group" if any(str(t["id"]) == gid for t in tests) else gid


_Toc = List[Tuple[str, str, List[Tuple[str, str]]]]


def _group_sections(known: Sequence[Mapping[str, Any]], by_test: Mapping[str, Mapping[str, Dict[str, Any]]],
                    drives: Mapping[str, Dict[str, Any]], out: Path, found: Sequence[Check]
                    ) -> Tuple[List[Tuple[str, str, str]], List[Tuple[str, str, str]], _Toc]:
    """Each group's section (group, title, html) with its tests, the first take of each group for the verdict,
    and the contents entries."""
    sections: List[Tuple[str, str, str]] = []  # (group, title, html)
    group_takes: List[Tuple[str, str, str]] = []
    toc: _Toc = []
    for gid, gtitle in list(GROUPS.items()) + [("other", "Other tests")]:
        tests = [t for t in known if t.get("group", "other") == gid or (gid == "other" and t.get("group") not in GROUPS)]
        if not tests:
            continue
        body = [_spec_table(by_test, drives)] if gid == "spec" else []
        first_take = None
        for t in tests:
            section, take = _test_section(t, by_test[t["id"]], out,
                                          [f"{c.drive}: {c.message}" for c in found if c.test_id == t["id"]])
            body.append(section)
            if first_take is None and take:
                first_take = (str(t["id"]), gtitle, take)
        if first_take:
            group_takes.append(first_take)
        sections.append((gid, gtitle, "".join(body)))
        toc.append((_group_anchor(gid, known), gtitle, [(str(t["id"]), str(t["title"])) for t in tests]))
    return sections, group_takes, toc


def _side_entries(toc: _Toc, has_cdm: bool, stories: bool) -> _Toc:
    """The sidebar's contents: the verdict, the drives (after CrystalDiskMark's group when there is one), the
    groups, the stories and the notes."""
    side: _Toc = [("verdict", "Verdict", [])]
    if not has_cdm:
        side.append(("drives", "The drives", []))
    for entry in toc:
        side.append(entry)
        if entry[0].startswith("cdm"):
            side.append(("drives", "The drives", []))
    if stories:
        side.append(("stories", "The reviews' stories", []))
    side.append(("about-results", "About these results", []))
    return side


def build_report(docs: Sequence[Dict[str, Any]], out_dir: str, command: str = "") -> Path:
    """Write OUT/index.html, OUT/charts/*.png|svg and OUT/figures.csv from results documents."""
    out = Path(out_dir)
    (out / "charts").mkdir(parents=True, exist_ok=True)
    order = {t["id"]: i for i, t in enumerate(TESTS)}
    names = names_with_hashes(docs)
    docs = sorted(docs, key=lambda d: (drive_label(d, names).lower(), d["drive"]["hash"],
                                       order.get(d["test"]["id"], len(order)), d["test"]["id"]))
    drives: "OrderedDict[str, Dict[str, Any]]" = OrderedDict()
    by_test: Dict[str, Dict[str, Dict[str, Any]]] = {}
    for d in docs:
        label = drive_label(d, names)
        drives.setdefault(label, dict(d["drive"], preset_id=d["drive"]["id"], id=label))
        by_test.setdefault(d["test"]["id"], {})[label] = d
    write_figures_csv(docs, out / "figures.csv")
    title = ", ".join(drives) if len(drives) <= 3 else f"{len(drives)} drives"
    known = [t for t in TESTS if t["id"] in by_test] + [
        next(iter(v.values()))["test"] for k, v in by_test.items() if k not in {t["id"] for t in TESTS}]
    found = find_checks(by_test)
    sections, group_takes, toc = _group_sections(known, by_test, drives, out, found)
    has_cdm = any(gid == "cdm" for gid, _, _ in sections)
    nav = ['<a href="#verdict">Verdict</a>'] + ([] if has_cdm else ['<a href="#drives">The drives</a>'])
    for gid, gtitle, _ in sections:
        nav.append(f'<a href="#{_esc(_group_anchor(gid, known))}">{_esc(gtitle)}</a>')
        if gid == "cdm":
            nav.append('<a href="#drives">The drives</a>')
    stories = stories_section(docs)
    if stories:
        nav.append('<a href="#stories">The reviews\' stories</a>')
    parts = [f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8><meta name=viewport content=\"width=device-width\">"
             f"<title>ssdlab review: {_esc(title)}</title>",
             f"<style>{_CSS}{_nav.NAV_CSS}</style><script>{_JS}{_nav.NAV_JS}</script></head><body class=with-toc>",
             f"<h1>SSD review: {_esc(title)}</h1>",
             "<p>Simulated drives put through the review suite of 2010-2013 client-SSD reviews (ssdlab's "
             "docs/methodology.md). Units: MB/s = 10<sup>6</sup> B/s, GB = 10<sup>9</sup> B, KB = 1024 B for transfer "
             "sizes. Every bar chart shows all drives, the best at the top.</p>",
             "<nav><b>Contents:</b> " + " &middot; ".join(nav) + "</nav>"]
    profiles = sorted({d.get("profile", "full") for d in docs})
    if any(d.get("kind") == "real" for d in drives.values()):
        parts.append("<p class=note>Drives marked <i>(real, fio)</i> are real drives measured with fio (<code>ssdlab review "
                     "--device</code>), in the same charts as the simulated ones.</p>")
    if profiles != ["full"]:
        parts.append(f"<p class=note>Scale: {_esc(', '.join(profiles))}. The quick scale cuts runtimes and spans; "
                     "its figures are not comparable with published reviews.</p>")
    parts.append('<div class="layout">' + _nav.sidebar(_side_entries(toc, has_cdm, bool(stories))) + "<main>")
    parts.append(_verdict_section(by_test, drives, group_takes, found))
    drive_table = "<h2 id=drives>The drives</h2>" + _drive_table(drives)
    if not has_cdm:
        parts.append(drive_table)
    for gid, gtitle, section_html in sections:
        parts.append(f"<h2 id={_esc(_group_anchor(gid, known))}>{_esc(gtitle)}</h2>{section_html}")
        if gid == "cdm":
            parts.append(drive_table)
    parts.append(stories)
    mans = [d["manifest"] for d in docs]
    versions = sorted({f"ssdlab {m.get('ssdlab_version')} (engine {m.get('engine_version')})" for m in mans})
    seeds = sorted({str(m.get("seed")) for m in mans})
    parts.append("<h2 id=about-results>About these results</h2><p class=note>"
                 f"{_esc('; '.join(versions))}; seed(s) {_esc(', '.join(seeds))}. Figures as CSV: "
                 "<a href=\"figures.csv\">figures.csv</a>. "
                 + (f"Report built with <code>{_esc(command)}</code>." if command else "") + "</p>")
    parts.append("</main></div></body></html>\n")
    page = out / "index.html"
    write_text(page, "\n".join(parts))
    return page
