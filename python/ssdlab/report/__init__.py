"""The review report: one self-contained HTML page (inline CSS and JS, no
network fetches) with the charts as PNG and SVG files beside it in
``charts/``; built from results documents only, so ``ssdlab report`` rebuilds
it from saved results without simulating."""

from __future__ import annotations

import html
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable, Dict, List, Sequence, Set, Tuple

from ..results import write_figures_csv
from ..suite.definitions import TESTS
from . import charts as _charts

__all__ = ["build_report", "chart_values"]

_GROUPS = OrderedDict([
    ("four-corners", "The four corners (Iometer-style)"),
    ("as-ssd", "AS-SSD (incompressible data)"),
    ("atto", "ATTO transfer-size sweep"),
    ("consistency", "Performance consistency"),
    ("trim", "TRIM validation"),
    ("resiliency", "Resiliency"),
    ("file-copy", "File copies"),
    ("storage-bench", "Storage Bench (trace playback)"),
    ("power", "Power"),
])

_CSS = """
body{font-family:Georgia,serif;max-width:980px;margin:2em auto;padding:0 1em;color:#222;line-height:1.45}
h1,h2,h3{font-family:Helvetica,Arial,sans-serif} h2{border-bottom:2px solid #ccc;padding-top:.6em}
table{border-collapse:collapse;font-size:.85em;margin:.6em 0} td,th{border:1px solid #ccc;padding:.2em .5em;text-align:right}
th{background:#f2f2f2} td:first-child,th:first-child{text-align:left}
figure{margin:1em 0} figure img{max-width:100%;border:1px solid #ddd}
figcaption{font-size:.8em;color:#444} code{font-size:.85em;background:#f6f6f6;padding:.05em .3em}
.about{font-style:italic} .buttons button{margin-right:.5em;padding:.3em .8em} .buttons button.on{background:#1f77b4;color:#fff}
.note{font-size:.8em;color:#666}
"""

_JS = """
function ssdlabSpare(variant){
  document.querySelectorAll('img.consistency').forEach(function(img){
    var src = img.getAttribute('data-' + variant);
    if (src) { img.src = src; img.setAttribute('data-shown', variant); }
  });
  document.querySelectorAll('.buttons button').forEach(function(b){
    b.classList.toggle('on', b.getAttribute('data-variant') === variant);
  });
}
document.addEventListener('DOMContentLoaded', function(){ ssdlabSpare('default'); });
"""


def _esc(x: Any) -> str:
    return html.escape(str(x))


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:,.1f}" if abs(v) < 1000 else f"{v:,.0f}"
    return str(v)


def drive_label(doc: Dict[str, Any], ids_with_hashes: Dict[str, Set[str]]) -> str:
    """A drive's name in charts: its id, with the hash's first 8 digits when two drives share an id."""
    dr = doc["drive"]
    return dr["id"] if len(ids_with_hashes.get(dr["id"], ())) <= 1 else f"{dr['id']}-{dr['hash'][:8]}"


def _ids_with_hashes(docs: Sequence[Dict[str, Any]]) -> Dict[str, Set[str]]:
    out: Dict[str, Set[str]] = {}
    for d in docs:
        out.setdefault(d["drive"]["id"], set()).add(d["drive"]["hash"])
    return out


def chart_values(docs: Sequence[Dict[str, Any]], chart_id: str) -> Dict[str, Any]:
    """``{drive: chart}`` of one chart id across drives."""
    ids = _ids_with_hashes(docs)
    out: Dict[str, Any] = {}
    for d in docs:
        c = d.get("charts", {}).get(chart_id)
        if c is not None:
            out[drive_label(d, ids)] = c
    return out


def _drive_table(drives: List[Dict[str, Any]]) -> str:
    rows: List[Tuple[str, Callable[[Dict[str, Any]], Any]]] = [
        ("name", lambda d: d["name"]),
        ("kind", lambda d: "real drive (fio)" if d.get("kind") == "real" else "simulated"),
        ("user capacity (GB = 1e9 B)", lambda d: f"{d['capacity_bytes'] / 1e9:,.1f}"),
        ("raw NAND (GB)", lambda d: f"{d['geometry']['raw_bytes'] / 1e9:,.1f}"),
        ("spare area", lambda d: f"{100 * d['geometry']['spare_fraction']:.1f}%"),
        ("description", lambda d: d.get("description", "")),
        ("channels / dies", lambda d: f"{d['geometry']['channels']} / {d['geometry']['dies']}"),
        ("planes per die", lambda d: d["geometry"]["planes_per_die"]),
        ("page / block (KB = 1024 B)", lambda d: f"{d['geometry']['page_size_bytes'] // 1024} / {d['geometry']['block_bytes'] // 1024}"),
        ("tR / tPROG / tBERS (us)", lambda d: "{} / {} / {}".format(*(d["config"]["nand"][k] / 1000 for k in ("tr_ns", "tprog_ns", "tbers_ns")))),
        ("NAND channel (MB/s)", lambda d: f"{d['config']['nand']['channel_bytes_per_s'] / 1e6:,.0f}"),
        ("host link (MB/s), NCQ", lambda d: f"{d['config']['host']['link_bytes_per_s'] / 1e6:,.0f}, {d['config']['host'].get('ncq_depth', '-')}"),
        ("GC policy", lambda d: d["config"].get("ftl", {}).get("gc_policy", "-")),
        ("drive hash", lambda d: d["hash"]),
    ]
    head = "<tr><th></th>" + "".join(f"<th>{_esc(d['id'])}</th>" for d in drives) + "</tr>"
    body = []
    for name, fn in rows:
        cells = []
        for d in drives:
            try:
                cells.append(_esc(fn(d)))
            except (KeyError, TypeError):
                cells.append("-")
        body.append(f"<tr><td>{_esc(name)}</td>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return "<table>" + head + "".join(body) + "</table>"


def _reproduce(docs_by_drive: Dict[str, Dict[str, Any]]) -> str:
    cmds = [f"<code>{_esc(d['manifest'].get('reproduce', d['manifest'].get('command', '')))}</code>" for d in docs_by_drive.values()]
    return "Reproduce: " + "<br>".join(cmds)


def _figure(src: str, alt: str, caption: str, attrs: str = "", cls: str = "") -> str:
    svg = src[: -len(".png")] + ".svg"
    c = f' class="{cls}"' if cls else ""
    return (f'<figure><img{c} src="{_esc(src)}" alt="{_esc(alt)}" {attrs}>'
            f'<figcaption>{caption} (<a href="{_esc(svg)}">SVG</a>)</figcaption></figure>')


def _bar_section(chart_id: str, per_drive: Dict[str, Any], out: Path, caption: str) -> str:
    first = next(iter(per_drive.values()))
    values = {drive: c["data"] for drive, c in per_drive.items()}
    fig, order = _charts.bar_chart(first["title"], values, first.get("higher_is_better", True))
    _charts.save(fig, out / "charts", chart_id)
    labels: List[str] = []
    for v in values.values():
        labels += [lab for lab in v if lab not in labels]
    table = "<table><tr><th>drive</th>" + "".join(f"<th>{_esc(lab)}</th>" for lab in labels) + "</tr>"
    for d in order:
        table += f"<tr><td>{_esc(d)}</td>" + "".join(f"<td>{_fmt(values[d].get(lab))}</td>" for lab in labels) + "</tr>"
    table += "</table>"
    return _figure(f"charts/{chart_id}.png", first["title"], caption) + table


def _consistency_section(chart_id: str, per_drive: Dict[str, Any], out: Path, caption: str) -> str:
    first = next(iter(per_drive.values()))
    from_s = float(first.get("from_s", 1400))
    variants = []
    for c in per_drive.values():
        variants += [v for v in c["data"] if v not in variants]
    html_parts = ['<div class="buttons">' + "".join(
        f'<button type="button" data-variant="v{i}" onclick="ssdlabSpare(\'v{i}\')">{_esc(v)}</button>'
        for i, v in enumerate(variants)) + "</div>"]
    t_max = max((max(r["time_s"]) for c in per_drive.values() for r in c["data"].values() if r["time_s"]), default=1.0)
    for view in _charts.CONSISTENCY_VIEWS:
        srcs = {}
        for i, v in enumerate(variants):
            runs = {drive: c["data"][v] for drive, c in per_drive.items() if v in c["data"]}
            ys = [y for r in runs.values() for t, y in zip(r["time_s"], r["iops"]) if (not view[2] or t > from_s)]
            y_max = max(ys, default=1.0) or 1.0
            fig = _charts.consistency_chart(f"{first['title']}, {v}", runs, view, from_s, y_max, t_max)
            name = f"{chart_id}.{view[0]}.v{i}"
            _charts.save(fig, out / "charts", name)
            srcs[f"v{i}"] = f"charts/{name}.png"
        attrs = " ".join(f'data-{k}="{_esc(s)}"' for k, s in srcs.items())
        alt = f"{first['title']} {view[1].format(t=from_s)}"
        html_parts.append(_figure(srcs["v0"], alt, caption, attrs=attrs + ' data-view="' + view[0] + '"', cls="consistency"))
    # summary table
    rows = ("<tr><th>drive, spare area</th><th>mean IOPS</th><th>1st pct IOPS</th><th>min IOPS</th><th>peak IOPS</th>"
            "<th>drop from peak</th><th>SNIA steady state</th></tr>")
    for drive, c in per_drive.items():
        for v, r in c["data"].items():
            snia = r.get("snia", {})
            steady = (f"yes, from round {snia['first_round']} (window mean {_fmt(snia['window_mean_iops'])})"
                      if snia.get("steady") else "not reached")
            rows += (f"<tr><td>{_esc(drive)}, {_esc(v)}</td><td>{_fmt(r['mean_iops'])}</td><td>{_fmt(r['p1_iops'])}</td>"
                     f"<td>{_fmt(r['min_iops'])}</td><td>{_fmt(r['peak_iops'])}</td>"
                     f"<td>{100 * r['drop_from_peak_fraction']:.0f}%</td><td>{_esc(steady)}</td></tr>")
    html_parts.append(f"<p class=note>Steady-state window: t &gt; {from_s:g} s. SNIA PTS detector: rounds of "
                      f"{_esc(first.get('round_s', ''))} averaged samples, 5-round window, max-min within 20% of the mean, "
                      "least-squares slope excursion within 10%.</p><table>" + rows + "</table>")
    return "".join(html_parts)


def build_report(docs: Sequence[Dict[str, Any]], out_dir: str, command: str = "") -> Path:
    """Write OUT/index.html, OUT/charts/*.png|svg and OUT/figures.csv from results documents."""
    out = Path(out_dir)
    (out / "charts").mkdir(parents=True, exist_ok=True)
    order = {t["id"]: i for i, t in enumerate(TESTS)}
    docs = sorted(docs, key=lambda d: (d["drive"]["id"], d["drive"]["hash"], order.get(d["test"]["id"], len(order)), d["test"]["id"]))
    ids = _ids_with_hashes(docs)
    drives: "OrderedDict[str, Dict[str, Any]]" = OrderedDict()
    by_test: Dict[str, Dict[str, Dict[str, Any]]] = {}
    for d in docs:
        label = drive_label(d, ids)
        drives.setdefault(label, dict(d["drive"], id=label))
        by_test.setdefault(d["test"]["id"], {})[label] = d
    write_figures_csv(docs, out / "figures.csv")
    parts = [f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>ssdlab review: {_esc(', '.join(drives))}</title>",
             f"<style>{_CSS}</style><script>{_JS}</script></head><body>",
             f"<h1>SSD review: {_esc(', '.join(drives))}</h1>",
             "<p>Simulated drives put through the review suite of 2010-2013 client-SSD reviews (ssdlab METHODOLOGY). "
             "Units: MB/s = 10<sup>6</sup> B/s, GB = 10<sup>9</sup> B, KB = 1024 B for transfer sizes. "
             "Every bar chart shows all drives, the best at the top.</p>",
             *(["<p class=note>Drives named <code>real-...</code> are real drives measured with fio (<code>ssdlab review "
                "--device</code>), in the same charts as the simulated ones.</p>"] if any(d.get("kind") == "real" for d in drives.values()) else []),
             "<nav><b>Contents:</b> <a href=\"#drives\">The drives</a>"
             + "".join(f" &middot; <a href=\"#{_esc(g)}\">{_esc(t)}</a>" for g, t in _GROUPS.items()
                       if any(d["test"].get("group") == g for d in docs))
             + "</nav>",
             "<h2 id=drives>The drives</h2>", _drive_table(list(drives.values()))]
    profiles = sorted({d.get("profile", "full") for d in docs})
    if profiles != ["full"]:
        parts.append(f"<p class=note>Profile: {_esc(', '.join(profiles))}. The quick profile cuts runtimes and spans; "
                     "its figures are not comparable with published reviews.</p>")
    known = [t for t in TESTS if t["id"] in by_test] + [
        next(iter(v.values()))["test"] for k, v in by_test.items() if k not in {t["id"] for t in TESTS}]
    for gid, gtitle in list(_GROUPS.items()) + [("other", "Other tests")]:
        tests = [t for t in known if t.get("group", "other") == gid or (gid == "other" and t.get("group") not in _GROUPS)]
        if not tests:
            continue
        parts.append(f"<h2 id={_esc(gid)}>{_esc(gtitle)}</h2>")
        for t in tests:
            per = by_test[t["id"]]
            parts.append(f"<h3 id={_esc(t['id'])}>{_esc(t['title'])}</h3><p class=about>{_esc(t['about'])}</p>")
            # results saved under this id by a different description (e.g. Storage Bench on a filled drive before issue 15)
            current = next((c for c in TESTS if c["id"] == t["id"]), None)
            for k, d in per.items():
                if current is not None and d["test"].get("runs") != current["runs"]:
                    states = ", ".join(sorted({r["state"]["state"] for r in d["test"].get("runs", [])}))
                    parts.append(f"<p class=note>{_esc(k)}: measured with a different description of this test "
                                 f"(from the {_esc(states)} state; an earlier ssdlab?); its figures do not compare "
                                 "with the others.</p>")
            skipped = {k: d["skipped"] for k, d in per.items() if d.get("skipped")}
            for k, why in skipped.items():
                parts.append(f"<p class=note>{_esc(k)}: not run ({_esc(why)}).</p>")
            ran = {k: d for k, d in per.items() if not d.get("skipped")}
            if not ran:
                continue
            caption = _reproduce(ran)
            chart_ids: List[str] = []
            for d in ran.values():
                chart_ids += [c for c in d.get("charts", {}) if c not in chart_ids]
            for cid in chart_ids:
                pd = chart_values(list(ran.values()), cid)
                kind = next(iter(pd.values()))["type"]
                if kind == "bar":
                    parts.append(_bar_section(cid, pd, out, caption))
                elif kind == "line":
                    first = next(iter(pd.values()))
                    fig = _charts.line_chart(first["title"], {k: c["data"] for k, c in pd.items()}, first.get("x_label", "x"),
                                             first["unit"], first.get("x_log", False))
                    _charts.save(fig, out / "charts", cid)
                    parts.append(_figure(f"charts/{cid}.png", first["title"], caption))
                elif kind == "curve":
                    first = next(iter(pd.values()))
                    fig = _charts.curve_chart(first["title"], {k: c["data"] for k, c in pd.items()})
                    _charts.save(fig, out / "charts", cid)
                    parts.append(_figure(f"charts/{cid}.png", first["title"], caption))
                elif kind == "consistency":
                    parts.append(_consistency_section(cid, pd, out, caption))
    mans = [d["manifest"] for d in docs]
    versions = sorted({f"ssdlab {m.get('ssdlab_version')} (engine {m.get('engine_version')})" for m in mans})
    seeds = sorted({str(m.get("seed")) for m in mans})
    parts.append("<h2 id=about-results>About these results</h2><p class=note>"
                 f"{_esc('; '.join(versions))}; seed(s) {_esc(', '.join(seeds))}. Figures as CSV: "
                 "<a href=\"figures.csv\">figures.csv</a>. "
                 + (f"Report built with <code>{_esc(command)}</code>." if command else "") + "</p>")
    parts.append("</body></html>\n")
    page = out / "index.html"
    page.write_text("\n".join(parts), encoding="utf-8")
    return page
