"""The review page's tables: the drives (with launch prices), the verdict
(headline figures, a take per drive and per section, the figures to check)
and the spec sheet against the measurements; the folded reproduce commands."""

from __future__ import annotations

import html
import math
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from . import verdict as _verdict
from .checks import Check
from .prices import Price, price_of, usd_per_gb

__all__: List[str] = []  # the page's own pieces, used by report.page


def _esc(x: Any) -> str:
    return html.escape(str(x))


def _fmt(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if isinstance(v, float):
        return f"{v:,.1f}" if abs(v) < 1000 else f"{v:,.0f}"
    return str(v)



def _scroll(table: str) -> str:
    """A table in a box that scrolls sideways on its own, so the page never does."""
    return f'<div class="scroll">{table}</div>'


def _queues(host: Mapping[str, Any]) -> str:
    """SATA's NCQ depth, or an NVMe drive's queue pairs x entries and its PCIe link."""
    if host.get("interface") == "nvme":
        return f"NVMe, {host['queue_count']} queues x {host['queue_depth']} (PCIe {host['pcie_gen']}.0 x{host['pcie_lanes']})"
    return str(host.get("ncq_depth", "-"))


def _price(d: Mapping[str, Any]) -> Optional[Price]:
    """A drive's launch price, by the preset id its file names."""
    return price_of(str(d.get("preset_id", d.get("id", ""))))


def _price_cell(d: Mapping[str, Any]) -> str:
    p = _price(d)
    if p is None:
        return "-"
    return f"${p.usd:,.2f} ({p.kind}); ${usd_per_gb(p, int(d['capacity_bytes'])):.2f}/GB"


def _drive_table(drives: Mapping[str, Dict[str, Any]]) -> str:
    def price(d: Mapping[str, Any]) -> str:
        p = _price(d)
        return "-" if p is None else f"${p.usd:,.2f} ({p.kind})"

    def per_gb(d: Mapping[str, Any]) -> str:
        p = _price(d)
        return "-" if p is None else f"${usd_per_gb(p, int(d['capacity_bytes'])):.2f}"

    def source(d: Mapping[str, Any]) -> str:
        p = _price(d)
        return "no sourced launch price" if p is None else p.source

    rows: List[Tuple[str, Callable[[Mapping[str, Any]], Any]]] = [
        ("drive id", lambda d: d.get("preset_id", d["id"])),
        ("kind", lambda d: "real drive (fio)" if d.get("kind") == "real" else "simulated"),
        ("launch price (USD)", price),
        ("$/GB (GB = 1e9 B)", per_gb),
        ("user capacity (GB = 1e9 B)", lambda d: f"{d['capacity_bytes'] / 1e9:,.1f}"),
        ("raw NAND (GB)", lambda d: f"{d['geometry']['raw_bytes'] / 1e9:,.1f}"),
        ("spare area", lambda d: f"{100 * d['geometry']['spare_fraction']:.1f}%"),
        ("description", lambda d: d.get("description", "")),
        ("channels / dies", lambda d: f"{d['geometry']['channels']} / {d['geometry']['dies']}"),
        ("planes per die", lambda d: d["geometry"]["planes_per_die"]),
        ("page / block (KB = 1024 B)", lambda d: f"{d['geometry']['page_size_bytes'] // 1024} / {d['geometry']['block_bytes'] // 1024}"),
        ("tR / tPROG / tBERS (us)",
         lambda d: "{:g} / {:g} / {:g}".format(*(d["config"]["nand"][k] / 1000 for k in ("tr_ns", "tprog_ns", "tbers_ns")))),
        ("NAND channel (MB/s)", lambda d: f"{d['config']['nand']['channel_bytes_per_s'] / 1e6:,.0f}"),
        ("host link (MB/s), NCQ", lambda d: f"{d['config']['host']['link_bytes_per_s'] / 1e6:,.0f}, {_queues(d['config']['host'])}"),
        ("GC policy", lambda d: d["config"].get("ftl", {}).get("gc_policy", "-")),
        ("price source", source),
        ("drive hash", lambda d: d["hash"]),
    ]
    head = "<tr><th></th>" + "".join(f"<th>{_esc(label)}</th>" for label in drives) + "</tr>"
    body = []
    for name, fn in rows:
        cells = []
        for d in drives.values():
            try:
                cells.append(_esc(fn(d)))
            except (KeyError, TypeError):
                cells.append("-")
        body.append(f"<tr><th>{_esc(name)}</th>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return _scroll('<table class="drives">' + head + "".join(body) + "</table>")


def _reproduce(docs_by_drive: Mapping[str, Mapping[str, Any]]) -> str:
    """The commands that reproduce a test, once per section, folded."""
    cmds = [f"{_esc(k)}: <code>{_esc(d['manifest'].get('reproduce', d['manifest'].get('command', '')))}</code>"
            for k, d in docs_by_drive.items()]
    n = len(cmds)
    return (f'<details class="reproduce"><summary>Reproduce ({n} command{"s" if n != 1 else ""}, same seed, same '
            f'figures)</summary>{"<br>".join(cmds)}</details>')


def _verdict_section(by_test: Mapping[str, Mapping[str, Mapping[str, Any]]], drives: Mapping[str, Dict[str, Any]],
                     group_takes: Sequence[Tuple[str, str, str]], checks: Sequence[Check] = ()) -> str:
    values = _verdict.headline_values(by_test, list(drives))
    heads = [h for h in _verdict.HEADLINE if any(h.key in v for v in values.values())]
    parts = ["<h2 id=verdict>Verdict</h2>"]
    if heads:
        groups: List[Tuple[str, int]] = []
        for h in heads:
            if groups and groups[-1][0] == h.group:
                groups[-1] = (h.group, groups[-1][1] + 1)
            else:
                groups.append((h.group, 1))
        row1 = "<tr><th rowspan=2>drive</th><th rowspan=2>launch price, $/GB</th>" + "".join(
            f"<th colspan={n}>{_esc(g)}</th>" for g, n in groups) + "</tr>"
        row2 = "<tr>" + "".join(f"<th>{_esc(h.title)}</th>" for h in heads) + "</tr>"
        best: Dict[str, float] = {}
        for h in heads:
            have = [v[h.key] for v in values.values() if h.key in v]
            if len(have) > 1:
                best[h.key] = max(have) if h.higher_is_better else min(have)
        body = ""
        for label, d in drives.items():
            cells = ""
            for h in heads:
                v = values[label].get(h.key)
                cls = ' class="best"' if v is not None and best.get(h.key) == v else ""
                cells += f"<td{cls}>{_verdict.fmt_value(v, h.unit)}</td>"
            body += f"<tr><td>{_esc(label)}</td><td>{_esc(_price_cell(d))}</td>{cells}</tr>"
        parts.append(_scroll(f'<table class="headline">{row1}{row2}{body}</table>'))
        parts.append("<p class=note>The reviewers' headline figures (best of each column in bold). 4KB random read at "
                     "QD32 is the rated-conditions run (8GB written first, QD32); random and sequential writes use "
                     "incompressible data; Storage Bench is the average data rate over busy time; steady state is "
                     "the consistency test's default spare area after the steady-state time, spread the standard "
                     "deviation of its per-second IOPS as a % of their mean (lower is more even). Prices are launch "
                     "prices with their sources in the drive table; $/GB over the user capacity.</p>")
    texts = _verdict.drive_texts(values)
    parts.append('<div class="drive-takes">' + "".join(
        f"<p><b>{_esc(label)}</b>: {_esc(texts.get(label, ''))}</p>" for label in drives) + "</div>")
    if group_takes:
        parts.append("<h3>Section by section</h3><ul class=takes>" + "".join(
            f'<li><a href="#{_esc(tid)}">{_esc(title)}</a>: {_esc(take)}</li>' for tid, title, take in group_takes if take)
            + "</ul>")
    if checks:
        parts.append("<h3 id=checks>Figures to check</h3><p class=note>Figures a reviewer would question before printing "
                     "them; each is marked in its section too.</p><ul class=checks>" + "".join(
                         f'<li class=check><a href="#{_esc(c.test_id)}">{_esc(c.test_id)}</a>, {_esc(c.drive)}: '
                         f"{_esc(c.message)}</li>" for c in checks) + "</ul>")
    return "".join(parts)


def _published_ratings() -> Dict[Tuple[str, str], Tuple[float, str]]:
    """The spec-sheet ratings of the calibration table: ``{(drive id, measure): (value, source)}``."""
    from ..suite.calibrate import load_table

    try:
        rows = load_table()
    except (OSError, ValueError):
        return {}
    return {(r.drive_id, r.measure): (r.value, r.source) for r in rows if r.suite_test == "rated" and r.kind == "rated"}


def _spec_table(by_test: Mapping[str, Mapping[str, Mapping[str, Any]]], drives: Mapping[str, Dict[str, Any]]) -> str:
    rows = _verdict.spec_rows(by_test, drives, _published_ratings())
    if not rows:
        return ""
    figs = _verdict.SPEC_FIGURES
    row1 = "<tr><th rowspan=2>drive</th>" + "".join(f"<th colspan=3>{_esc(title)} ({_esc(unit)})</th>" for _, unit, title in figs) + "</tr>"
    row2 = "<tr>" + "<th>rated (box)</th><th>peak</th><th>steady state</th>" * len(figs) + "</tr>"
    body = ""
    sources: List[str] = []
    for drive, cells in rows.items():
        tds = ""
        for c in cells:
            rated = "-" if c["rated"] is None else _verdict.fmt_value(c["rated"], c["unit"])
            if c["source"]:
                if c["source"] not in sources:
                    sources.append(c["source"])
                rated += f"<sup>{sources.index(c['source']) + 1}</sup>"
            steady = _verdict.fmt_value(c["steady"], c["unit"])
            if c["steady"] is not None and c["peak"]:
                steady += f" ({100 * c['steady'] / c['peak']:.0f}%)"
            tds += f"<td>{rated}</td><td>{_verdict.fmt_value(c['peak'], c['unit'])}</td><td>{steady}</td>"
        body += f"<tr><td>{_esc(drive)}</td>{tds}</tr>"
    notes = "".join(f"<br><sup>{i + 1}</sup> {_esc(s)}" for i, s in enumerate(sources))
    return ("<h3 id=spec-sheet>The box against the drive</h3><p class=about>As <code>ssdlab spec</code> prints it: the "
            "rating on the box where the manufacturer published one, the rated-style peak the simulated drive reaches "
            "under the vendors' conditions (test <a href=\"#rated\">rated</a>), and what it keeps up once filled and "
            "tortured, with incompressible data (test <a href=\"#steady-state\">steady-state</a>; in brackets as a "
            "% of the peak).</p>" + _scroll(f"<table>{row1}{row2}{body}</table>") + f"<p class=note>Sources:{notes or ' none'}</p>")


# ---------------------------------------------------------------------------
# the page
# ---------------------------------------------------------------------------
