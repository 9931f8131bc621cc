"""The twin's page (``OUT/twin.html``): the headline, the per-test summary,
the internals against the truth, the provenance of the twin's values and
every figure; its table as CSV; and the link to it from the review page."""

from __future__ import annotations

import csv
import html
import math
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional

from ...outputs import atomic_open, write_text
from ...text import share_percent
from ..records import ComparisonSummary, ProbeDoc, TwinSummaryDoc
from .compare import TOLERANCE


def _write_csv(df: Any, path: Path, seed: int, scale: str) -> None:
    cols = list(df.columns) + ["profile", "seed"]
    with atomic_open(path, newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for rec in df.to_dict("records"):
            row = []
            for c in df.columns:
                v = rec[c]
                if isinstance(v, float):
                    row.append("" if not math.isfinite(v) else repr(v))
                elif v is None or type(v).__name__ == "NAType":
                    row.append("")
                else:
                    row.append(str(v))
            w.writerow(row + [scale, seed])


_TWIN_CSS = """
td.ok{background:#e8f4e8} td.bad{background:#fbe3e3} td.flag{background:#fff4d6}
.big{font-size:1.15em;font-family:Helvetica,Arial,sans-serif} table.figs td{white-space:nowrap}
table.figs td.note{white-space:normal;max-width:22em;text-align:left;color:#555}
td.text{text-align:left;white-space:normal;max-width:30em} table.figs td.fig{text-align:left}
"""


def _esc(x: Any) -> str:
    return html.escape(str(x))


def _num(v: Any, unit: str = "") -> str:
    if v is None or isinstance(v, bool):
        return "-" if v is None else ("yes" if v else "no")
    try:
        x = float(v)
    except (TypeError, ValueError):
        return _esc(v)
    if not math.isfinite(x):
        return "-"
    if unit == "B" and abs(x) >= 1024 and x == int(x):
        for div, name in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
            if abs(x) >= div:
                return f"{int(x):,} B ({x / div:g} {name})"
    if x == int(x) and abs(x) < 1e15:
        return f"{int(x):,}"
    if abs(x) >= 100:
        return f"{x:,.1f}"
    return f"{x:.4g}"


def _pct(e: Any) -> str:
    if e is None or (isinstance(e, float) and not math.isfinite(e)):
        return "-"
    return f"{100 * float(e):+.1f}%"


def _pct_abs(e: Any) -> str:
    return "-" if e is None else f"{100 * float(e):.1f}%"


def _errors_chart(df: Any, out: Path) -> Optional[str]:
    """Every relatively compared figure's error (a share's: its difference in points), one row of dots per
    test, the ±15% band shaded."""
    rel = df[df["compared"].isin(["relative", "points"])]
    if not len(rel):
        return None
    import matplotlib.pyplot as plt

    from ...report import charts as _charts  # sets the Agg backend first
    tests = list(dict.fromkeys(rel["test_id"]))
    fig, ax = plt.subplots(figsize=(8.0, 0.32 * len(tests) + 1.4), dpi=100)
    lim = 1.0
    ax.axvspan(-100 * TOLERANCE, 100 * TOLERANCE, color="#e8f4e8", zorder=0)
    ax.axvline(0, color="#888", lw=0.8, zorder=1)
    for i, t in enumerate(tests):
        errs = [float(e) for e in rel[rel["test_id"] == t]["error"]]
        xs = [100 * max(-lim, min(lim, e)) for e in errs]
        colors = ["#2a7d2a" if abs(e) <= TOLERANCE else "#c0392b" for e in errs]
        ax.scatter(xs, [i] * len(xs), s=14, c=colors, zorder=2, alpha=0.8, linewidths=0)
    ax.set_yticks(range(len(tests)))
    ax.set_yticklabels(tests, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(-100 * lim - 5, 100 * lim + 5)
    ax.set_xlabel("twin / original - 1 (%); beyond ±100% drawn at the edge; shaded: within ±15%")
    ax.set_title("The twin's error per figure")
    _charts.save(fig, out / "charts", "twin-errors")
    return "charts/twin-errors.png"


def _write_page(out: Path, df: Any, doc: TwinSummaryDoc, probe: ProbeDoc) -> Path:
    parts: List[str] = []
    for section in (_page_top, _page_headline, _page_tests, _page_internals, _page_provenance, _page_figures,
                    _page_about):
        parts += section(out, df, doc, probe)
    parts.append("</body></html>\n")
    page = out / "twin.html"
    write_text(page, "\n".join(parts))
    return page


def _page_top(out: Path, df: Any, doc: TwinSummaryDoc, probe: ProbeDoc) -> List[str]:
    from ...report.page import _CSS

    summ = doc["summary"]
    o, t = summ["original"] or {}, summ["twin"] or {}
    man = doc["manifest"]
    target = man["target"]
    parts = [f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8><meta name=viewport content=\"width=device-width\">"
             f"<title>ssdlab twin report: {_esc(o.get('name', ''))}</title><style>{_CSS}{_TWIN_CSS}</style></head><body>",
             f"<h1>The twin of {_esc(o.get('name', '?'))}</h1>",
             f"<p>How well the twin <b>{_esc(t.get('name', '?'))}</b> (drive file <code>{_esc(man['twin_file'])}</code>, fitted "
             f"from the probe in <code>{_esc(man['probe_dir'])}</code>) predicts the "
             + ("simulated drive" if target.get("kind") == "simulated" else f"real {_esc(target.get('kind'))}")
             + f" <b>{_esc(o.get('name', '?'))}</b>: the review on both, figure by figure. Both drives side by side in every "
             f"chart: <a href=\"index.html\">the review report</a>. Scale: {_esc(man['profile'])}"
             + (" (the quick scale cuts runtimes and spans: not comparable with published reviews)" if man["profile"] != "full" else "")
             + ".</p>",
             "<nav><b>Contents:</b> <a href=\"#headline\">Headline</a> &middot; <a href=\"#tests\">Per test</a> &middot; "
             "<a href=\"#internals\">Internals</a> &middot; <a href=\"#provenance\">Provenance</a> &middot; "
             "<a href=\"#figures\">Every figure</a> &middot; <a href=\"#about\">About</a> &middot; "
             "<a href=\"index.html\">Review report</a></nav>"]
    if doc.get("same_drive"):
        parts.append("<p class=note>The twin's description is the original's (same drive hash): the review ran once and "
                     "every figure is the same on both sides.</p>")
    return parts


def _page_headline(out: Path, df: Any, doc: TwinSummaryDoc, probe: ProbeDoc) -> List[str]:
    summ = doc["summary"]
    ov = summ["overall"]
    tol = 100 * float(summ["tolerance"])
    irows = doc["internals"]
    parts: List[str] = []
    worst = ov.get("worst")
    scored = [r for r in irows if r["truth"] is not None]
    good = sum(1 for r in irows if r["verdict"] in ("exact", "within 10%"))
    parts.append("<h2 id=headline>Headline</h2>")
    rel = doc.get("reliability")
    if rel and rel.get("problems"):
        # before any figure: a twin that misses its own probe answers other questions no better
        parts.append(f"<p class=note><b>Unreliable twin</b> (fit objective {float(rel['objective']):.2f}): it does not "
                     "reproduce these of its own probe:</p><ul>"
                     + "".join(f"<li>{_esc(p)}</li>" for p in rel["problems"]) + "</ul>")
    share, med = ov.get("share_within"), ov.get("median_abs_error")
    parts.append(
        f"<p class=big><b>{ov['within']}</b> of <b>{ov['figures']}</b> figures of the twin within {tol:g}% of the original's"
        + (f" ({share_percent(share)})" if share is not None else "")
        + (f"; median |error| {100 * med:.1f}%" if med is not None else "")
        + (f"; worst: {_esc(worst['test_id'])}, {_esc(worst['figure'])} {_pct(worst['error'])}" if worst else "")
        + ".</p>")
    verdict = summ.get("spread")
    if verdict:
        cls = "big" if verdict.get("lands") else "note"
        parts.append(f"<p class={cls}>{_esc(verdict['statement'][:1].upper() + verdict['statement'][1:])}.</p>")
    if doc.get("truth") is not None:
        parts.append(f"<p class=big><b>{good}</b> of <b>{len(scored)}</b> internals recovered exactly or within 10% of the "
                     "original's description.</p>")
    else:
        parts.append("<p class=big>A real drive: the internals the probe recovered are shown with its confidence "
                     "(no description to score them against).</p>")
    flagged = ov["absolute"] + ov["missing"]
    if flagged:
        parts.append(f"<p class=note>{flagged} figure(s) flagged: an original of 0 (compared by the absolute difference; "
                     "within only when equal) or a figure without a value (within only when neither side has one).</p>")
    chart = _errors_chart(df, out)
    if chart:
        parts.append(f'<figure><img src="{_esc(chart)}" alt="the twin\'s error per figure" loading="eager">'
                     f'<figcaption>Each dot is one figure of a test: green within ±{tol:g}%, red beyond. '
                     '(<a href="charts/twin-errors.svg">SVG</a>)</figcaption></figure>')
    return parts


def _page_tests(out: Path, df: Any, doc: TwinSummaryDoc, probe: ProbeDoc) -> List[str]:
    summ = doc["summary"]
    tol = 100 * float(summ["tolerance"])
    parts: List[str] = []
    parts.append("<h2 id=tests>Per test</h2><div class=scroll><table><tr><th>test</th><th>figures</th><th>within "
                 f"{tol:g}%</th><th>median |error|</th><th>worst figure</th><th>original</th><th>twin</th><th>error</th>"
                 "<th>flagged</th></tr>")
    for r in summ["tests"]:
        w: Mapping[str, Any] = r.get("worst") or {}
        cls = "ok" if r["within"] == r["figures"] else "bad"
        parts.append(f"<tr><td><a href=\"index.html#{_esc(r['test_id'])}\">{_esc(r['test_id'])}</a></td><td>{r['figures']}</td>"
                     f"<td class={cls}>{r['within']}</td>"
                     f"<td>{_pct_abs(r['median_abs_error'])}</td>"
                     f"<td class=text>{_esc(w.get('figure', '-'))}</td><td>{_num(w.get('original'))} {_esc(w.get('unit', ''))}</td>"
                     f"<td>{_num(w.get('twin'))} {_esc(w.get('unit', ''))}</td><td>{_pct(w.get('error'))}</td>"
                     f"<td>{r['absolute'] + r['missing'] or ''}</td></tr>")
    parts.append("</table></div>")
    left = []
    for s in summ["skipped"]:
        left.append(f"{_esc(s['test_id'])} (not run on {'either drive' if s['side'] == 'both' else 'the ' + _esc(s['side'])}: "
                    f"{_esc(s['why'])})")
    for tids, side in ((summ["only_original"], "original"), (summ["only_twin"], "twin")):
        for tid in tids:
            left.append(f"{_esc(tid)} (results of the {side} only)")
    if left:
        parts.append("<p class=note>Left out: " + "; ".join(left) + ".</p>")
    return parts


def _page_internals(out: Path, df: Any, doc: TwinSummaryDoc, probe: ProbeDoc) -> List[str]:
    irows = doc["internals"]
    parts: List[str] = []
    parts.append("<h2 id=internals>Internals</h2><p class=about>What the twin recovered: its own drive file's values "
                 "(measured by the probe, fitted to it or assumed: the confidence column; the probe's own estimate in "
                 "'how')"
                 + (", against the original's description (truth; definitions in <code>ssdlab.twin.report.truth</code>): exact, "
                    "within 10% or missed." if doc.get("truth") is not None else "; a real drive has no truth to score against.")
                 + "</p><div class=scroll><table><tr><th>internal</th><th>truth</th><th>recovered</th><th>error</th>"
                 "<th>verdict</th><th>source</th><th>how</th></tr>")
    for r in irows:
        cls = {"exact": "ok", "within 10%": "ok", "missed": "bad", "not recovered": "flag"}.get(r["verdict"], "")
        parts.append(f"<tr><td title=\"{_esc(r['about'])}\">{_esc(r['name'])}</td><td>{_num(r['truth'], r['unit'])}</td>"
                     f"<td>{_num(r['recovered'], r['unit'])}</td><td>{_pct(r['error'])}</td>"
                     f"<td class=\"{cls}\">{_esc(r['verdict'])}</td><td>{_esc(r['confidence'] or '-')}</td>"
                     f"<td class=text>{_esc(r['how'] or '')}</td></tr>")
    parts.append("</table></div>")
    tr = doc.get("truth")
    if tr is not None:
        parts.append(f"<p class=note>The original: {tr['dies_total']} dies in all, {tr['reserved_dies']} reserved, "
                     f"{tr['parity_dies']} RAISE parity; raw NAND of the data dies {tr['raw_bytes'] / 1e9:,.2f} GB; "
                     + ("" if tr.get("compressible_stored_fraction_config") is None else
                        f"its drive file's compressible_stored_fraction (the suite's compressible pattern) is "
                        f"{tr['compressible_stored_fraction_config']:g}, while fio's buffer_compress_percentage=90 data is "
                        "the pattern ratio:0.1, stored in whole 1KB granules with the unit's metadata. ")
                     + "</p>")
    return parts


def _page_provenance(out: Path, df: Any, doc: TwinSummaryDoc, probe: ProbeDoc) -> List[str]:
    parts: List[str] = []
    prov = doc.get("provenance")
    parts.append("<h2 id=provenance>Provenance of the twin's values</h2>")
    if prov is None:
        parts.append("<p class=note>No twin.json beside the twin's drive file: where its values come from is not recorded "
                     "(<code>ssdlab fit --probe DIR</code> writes it).</p>")
    else:
        counts: Dict[str, int] = {}
        for v in prov.values():
            src = str(v.get("source", "?")) if isinstance(v, dict) else "?"
            counts[src] = counts.get(src, 0) + 1
        parts.append("<p>" + ", ".join(f"<b>{n}</b> {_esc(s)}" for s, n in sorted(counts.items())) + " (from "
                     "<code>twin.json</code>: measured = taken from a probe feature, fitted = chosen so that the simulated "
                     "probe reproduces the measured one, with its residual; assumed = the generic profile's value).</p>")
        parts.append("<div class=scroll><table><tr><th>value</th><th>twin</th><th>source</th><th>residual</th><th>why</th></tr>")
        for k, v in sorted(prov.items(), key=lambda kv: (str(kv[1].get("source", "")) if isinstance(kv[1], dict) else "", kv[0])):
            v = v if isinstance(v, dict) else {"value": v}
            src = str(v.get("source", "?"))
            cls = {"measured": "ok", "fitted": "flag"}.get(src, "")
            parts.append(f"<tr><td><code>{_esc(k)}</code></td><td>{_num(v.get('value'))}</td><td class=\"{cls}\">{_esc(src)}</td>"
                         f"<td>{_num(v.get('residual'))}</td><td class=text>{_esc(v.get('why', ''))}</td></tr>")
        parts.append("</table></div>")
    return parts


def _page_figures(out: Path, df: Any, doc: TwinSummaryDoc, probe: ProbeDoc) -> List[str]:
    summ = doc["summary"]
    tol = 100 * float(summ["tolerance"])
    parts: List[str] = []
    runs = int(summ.get("runs", 1) or 1)
    spread_note = (f" The original is the median of its {runs} runs; its spread is the largest deviation of a run from "
                   "that median, and the twin's error is marked within it or not." if runs > 1 else "")
    parts.append(f"<h2 id=figures>Every figure</h2><p class=about>error = twin / original - 1; green within ±{tol:g}%."
                 f"{spread_note} As CSV: <a href=\"twin.csv\">twin.csv</a>; the summary as JSON: "
                 "<a href=\"twin-summary.json\">twin-summary.json</a>.</p>"
                 "<div class=scroll><table class=figs><tr><th>test</th><th>figure</th><th>unit</th><th>original</th><th>twin</th>"
                 "<th>error</th>" + ("<th>device spread</th>" if runs > 1 else "") + "<th>note</th></tr>")
    for rec in df.to_dict("records"):
        if rec["compared"] == "relative":
            cls = "ok" if rec["within_15"] else "bad"
            err = _pct(rec["error"])
        elif rec["compared"] == "points":
            cls = "ok" if rec["within_15"] else "bad"
            err = f"{100 * float(rec['error']):+.1f} points"
        else:
            cls = "flag"
            err = "equal" if rec["within_15"] else ("-" if rec["compared"] == "missing" else f"|diff| {_num(rec['abs_diff'])}")
        spread = ""
        if runs > 1:
            sp, within = rec.get("spread"), rec.get("within_spread")
            has = isinstance(sp, float) and math.isfinite(sp)
            scls = "flag" if not has else ("ok" if within is True else "bad")
            spread = f"<td class={scls}>{'±' + format(100 * sp, '.1f') + '%' if has else '-'}</td>"
        parts.append(f"<tr><td>{_esc(rec['test_id'])}</td><td class=fig>{_esc(rec['figure'])}</td><td>{_esc(rec['unit'])}</td>"
                     f"<td>{_num(rec['original'])}</td><td>{_num(rec['twin'])}</td><td class={cls}>{err}</td>{spread}"
                     f"<td class=note>{_esc(rec['note'])}</td></tr>")
    parts.append("</table></div>")
    return parts


def _page_about(out: Path, df: Any, doc: TwinSummaryDoc, probe: ProbeDoc) -> List[str]:
    summ = doc["summary"]
    o, t = summ["original"] or {}, summ["twin"] or {}
    man = doc["manifest"]
    parts: List[str] = []
    pm = probe.get("manifest", {}) or {}
    parts.append("<h2 id=about>About these results</h2><p class=note>"
                 f"ssdlab {_esc(man['ssdlab_version'])} (engine {_esc(man['engine_version'])}); seed {_esc(man['seed'])}; "
                 f"built with <code>{_esc(man['command'])}</code>. Original: {_esc(o.get('id'))} [{_esc(o.get('hash'))}]; "
                 f"twin: {_esc(t.get('id'))} [{_esc(t.get('hash'))}]. "
                 + (f"Reviewed this time: {_esc(', '.join(man['ran']))}. " if man["ran"] else "")
                 + (f"Saved results reused: {_esc(', '.join(man['reused']))}. " if man["reused"] else "")
                 + f"Probe: <code>{_esc(pm.get('command', '?'))}</code> (seed {_esc(pm.get('seed', '?'))}, ssdlab "
                 f"{_esc(pm.get('version', pm.get('ssdlab_version', '?')))}), {_num(probe.get('wall_time_s'))} s.</p>")
    return parts


def _link_index(index: Path, summ: ComparisonSummary) -> None:
    """Put a link to twin.html in the review page's contents and a line under its title."""
    text = index.read_text(encoding="utf-8")
    ov = summ["overall"]
    share = ov.get("share_within")
    line = (f"<p class=take>The twin: {ov['within']} of {ov['figures']} figures within {100 * float(summ['tolerance']):g}% of "
            f"the original's" + (f" ({share_percent(share)})" if share is not None else "")
            + " &mdash; <a href=\"twin.html\">the twin report</a> (figure by figure, internals, provenance).</p>")
    nav = "<nav><b>Contents:</b> "
    if nav in text:
        text = text.replace(nav, nav + '<a href="twin.html">Twin report</a> &middot; ', 1)
    marker = "</h1>"
    text = text.replace(marker, marker + "\n" + line, 1) if marker in text else text.replace("<body>", "<body>" + line, 1)
    write_text(index, text)
