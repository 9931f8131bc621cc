"""``ssdlab twin-report DIR``: the drive a probe measured and its twin, side
by side in the review report, and how well the twin predicts the drive.

``DIR`` is a probe directory (``ssdlab probe TARGET --out DIR``, then
``ssdlab fit --probe DIR``): ``probe.json`` (the target and the features the
probe extracted), ``twin.toml`` (the twin's drive file) and ``twin.json``
(where each of its values comes from: measured, fitted or assumed).

- A simulated target (``probe.json``'s ``target.kind`` = ``simulated``): the
  review runs on the original drive (``target.drive``) and on the twin, as
  ``ssdlab review --drive ORIGINAL --drive TWIN`` does (same runner, same
  results files); a drive whose complete results (same drive hash, profile
  and seed, every test asked for) are already in ``OUT/results`` is not run
  again. The internals the probe recovered are scored against the original's
  description (:mod:`.truth`).
- A real target (``block`` or ``file``): ``--original`` names the results of
  ``ssdlab review --device`` on it; only the twin is simulated, on the tests
  those results hold and with their profile. The internals are shown with
  the probe's confidence (there is no truth to score against).

Then ``OUT/index.html`` is the review report of both drives (the report of
``ssdlab report``), with a link to ``OUT/twin.html``: the per-figure table
of the original against the twin (:mod:`.compare`), the per-test summary, the
internals table and the twin's provenance; ``OUT/twin.csv`` holds the table
and ``OUT/twin-summary.json`` the summary, the internals, the provenance and
the manifest (seed, versions, command)."""

from __future__ import annotations

import csv
import html
import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, TextIO, Tuple

from ..drive import Drive
from ..errors import SsdlabError
from ..outputs import atomic_open, write_text
from ..results import load_results, manifest, write_json
from ..suite.definitions import TESTS, default_test_ids, test_ids
from ..suite.profile import get_profile
from .compare import TOLERANCE, compare_reviews, one_drive, summary
from .probe import REAL_KINDS, load_probe
from .truth import internals_table, truth_of, twin_internals

__all__ = ["TWIN_SUMMARY_SCHEMA", "TwinReportError", "TwinReport", "load_probe", "load_provenance",
           "twin_report", "REAL_KINDS"]

TWIN_SUMMARY_SCHEMA = "ssdlab.twin-report"
TWIN_SUMMARY_SCHEMA_VERSION = 1


class TwinReportError(SsdlabError):
    """Bad input to the twin report: one line, exit status 2."""


@dataclass
class TwinReport:
    """What :func:`twin_report` wrote and ran."""

    out: Path
    index: Path
    page: Path
    csv: Path
    summary_json: Path
    summary: Dict[str, Any]
    internals: List[Dict[str, Any]]
    #: drives reviewed this time, and drives whose saved results were reused (ids)
    ran: List[str] = field(default_factory=list)
    reused: List[str] = field(default_factory=list)


# ---------------------------------------------------------------------------
# inputs
# ---------------------------------------------------------------------------


def load_provenance(path: Path) -> Optional[Dict[str, Any]]:
    """``twin.json``'s ``values`` (dotted key -> ``{value, source, why,
    residual?}``), or None when the file is missing; TwinReportError when it
    is not such a document."""
    if not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise TwinReportError(f"{path}: not the provenance of a twin ({e})") from None
    values = doc.get("values") if isinstance(doc, dict) else None
    if not isinstance(values, dict):
        raise TwinReportError(f"{path}: no 'values' object (dotted key -> value, source, why), as 'ssdlab fit --probe' writes")
    return values


def _original_drive(probe: Mapping[str, Any], probe_dir: Path) -> Tuple[str, Drive]:
    """The simulated target's drive: ``target.drive`` as given, else relative to DIR."""
    spec = probe["target"].get("drive")
    if not isinstance(spec, str) or not spec.strip():
        raise TwinReportError(f"{probe_dir / 'probe.json'}: target.drive missing: a simulated target names its preset or drive file")
    try:
        return spec, Drive.load(spec)
    except SsdlabError as first:
        alt = probe_dir / spec
        if alt.is_file():
            return str(alt), Drive.load(alt)
        raise TwinReportError(f"{probe_dir / 'probe.json'}: target.drive {spec!r}: {first}") from None


def _load_original_results(path: str, target: Mapping[str, Any]) -> List[Dict[str, Any]]:
    try:
        docs = load_results([path])
    except (FileNotFoundError, ValueError) as e:
        raise TwinReportError(f"argument --original: {e} (give the --out DIR of 'ssdlab review --device "
                              f"{target.get('path', 'TARGET')}')") from None
    try:
        one_drive(docs, "argument --original")
    except ValueError as e:
        raise TwinReportError(str(e)) from None
    return docs


# ---------------------------------------------------------------------------
# running the reviews
# ---------------------------------------------------------------------------


def _saved_docs(out: Path) -> List[Dict[str, Any]]:
    results = out / "results"
    if not results.is_dir():
        return []
    try:
        return load_results([str(results)])
    except ValueError:
        return []


def _docs_of(saved: Sequence[Dict[str, Any]], drive: Drive, tests: Sequence[str], profile: str, seed: int) -> Dict[str, Dict[str, Any]]:
    """The saved results of this drive (hash), profile and seed, by test id."""
    out: Dict[str, Dict[str, Any]] = {}
    for d in saved:
        if (d["drive"]["hash"] == drive.hash and d.get("profile", "full") == profile
                and d["manifest"].get("seed") == seed and d["test"]["id"] in tests):
            out[d["test"]["id"]] = d
    return out


def _run_reviews(specs: Sequence[str], drives: Sequence[Drive], out: Path, tests: Sequence[str], profile: str, seed: int,
                 jobs: Optional[int], scheduler: Optional[str], progress: Optional[bool], command: str,
                 stream: TextIO) -> Tuple[List[Dict[str, Dict[str, Any]]], List[str], List[str]]:
    """Review the drives not already complete in OUT/results (as ``ssdlab
    review --drive A --drive B``); returns each drive's results by test id,
    and the ids of the drives run and reused."""
    from ..suite.review import drive_keys, review

    saved = _saved_docs(out)
    have = [_docs_of(saved, d, tests, profile, seed) for d in drives]
    need = [i for i, h in enumerate(have) if len(h) < len(tests)]
    ran = [drives[i].id for i in need]
    reused = [d.id for i, d in enumerate(drives) if i not in need]
    if need:
        # a drive's directory is its id, with its hash when the two share one: review one drive alone
        # only when it gets the same directory as in the pair, else both (the pair's layout is kept)
        keys = drive_keys(list(specs)) if len(specs) > 1 else [drives[0].id]
        if len(need) < len(specs) and any(keys[i] != drives[i].id for i in need):
            need = list(range(len(specs)))
            ran, reused = [d.id for d in drives], []
        for i in range(len(drives)):
            if i not in need and have[i]:
                stream.write(f"ssdlab twin-report: [{keys[i]}] complete results of this drive, profile and seed in "
                             f"{out / 'results'}: not run again\n")
        review([specs[i] for i in need], str(out), list(tests), jobs=jobs, seed=seed, profile=get_profile(profile),
               command=command, stream=stream, scheduler=scheduler, progress=progress)
        saved = _saved_docs(out)
        have = [_docs_of(saved, d, tests, profile, seed) for d in drives]
    else:
        stream.write(f"ssdlab twin-report: complete results of both drives in {out / 'results'}: nothing to run\n")
    stream.flush()
    return have, ran, reused


# ---------------------------------------------------------------------------
# the report
# ---------------------------------------------------------------------------


def twin_report(
    probe_dir: str,
    twin: Optional[str] = None,
    original: Optional[str] = None,
    quick: bool = False,
    out: Optional[str] = None,
    tests: Optional[Sequence[str]] = None,
    jobs: Optional[int] = None,
    scheduler: Optional[str] = None,
    progress: Optional[bool] = None,
    seed: int = 1,
    command: str = "",
    stream: Optional[TextIO] = None,
) -> TwinReport:
    """Review the original drive and its twin (module docstring) and write
    the report with the twin's page. ``tests``: test ids (default: the
    review's, :func:`ssdlab.suite.definitions.default_test_ids`; for a real
    target, those of ``original`` among them). TwinReportError (one line) on
    bad input, before anything runs."""
    from ..report import build_report, require_matplotlib

    require_matplotlib()
    stream = stream if stream is not None else sys.stderr
    pdir = Path(probe_dir)
    probe = load_probe(probe_dir)
    target = probe["target"]
    kind = str(target["kind"])
    twin_path = Path(twin) if twin else pdir / "twin.toml"
    if not twin_path.is_file():
        if twin:
            raise TwinReportError(f"argument --twin: {twin}: no such file (a drive file, .toml or .json)")
        raise TwinReportError(f"{probe_dir} has no twin.toml: run 'ssdlab fit --probe {probe_dir}' first (or give --twin FILE)")
    twin_drive = Drive.load(str(twin_path))
    provenance = load_provenance(twin_path.with_suffix(".json") if twin else pdir / "twin.json")
    profile = "quick" if quick else "full"
    known = set(test_ids())
    for t in tests or ():
        if t not in known:
            raise TwinReportError(f"argument --tests: unknown test '{t}' ('ssdlab tests' lists them)")
    out_dir = Path(out) if out else pdir / "twin-report"

    truth: Optional[Dict[str, Any]] = None
    original_docs: Optional[List[Dict[str, Any]]] = None
    original_spec: Optional[str] = None
    original_drive: Optional[Drive] = None
    if kind == "simulated":
        original_spec, original_drive = _original_drive(probe, pdir)
        truth = truth_of(original_drive)
    if original is not None:
        original_docs = _load_original_results(original, target)
        o_profile = str(original_docs[0].get("profile", "full"))
        if o_profile != profile:
            hint = "add --quick" if o_profile == "quick" else "leave out --quick"
            raise TwinReportError(f"argument --original: {original} holds results of the {o_profile} profile: {hint} "
                                  "(the twin runs the same profile to compare)")
    elif kind in REAL_KINDS:
        raise TwinReportError(f"probe.json's target is a real {kind} ({target.get('path', '?')}): give --original RESULTS_DIR, the "
                              f"--out DIR of 'ssdlab review --device {target.get('path', 'TARGET')}' (only the twin is simulated)")

    if original_docs is not None:
        have = {d["test"]["id"] for d in original_docs}
        wanted = list(tests) if tests else default_test_ids()
        ids = [t["id"] for t in TESTS if t["id"] in have and t["id"] in wanted]
        if not ids:
            raise TwinReportError(f"argument --original: no results of the tests asked for in {original} "
                                  f"(it holds {', '.join(sorted(have))})")
        by_test = {d["test"]["id"]: d for d in original_docs if d["test"]["id"] in ids}
        have_docs, ran, reused = _run_reviews([str(twin_path)], [twin_drive], out_dir, ids, profile, seed, jobs, scheduler,
                                              progress, command, stream)
        orig_by_test, twin_by_test = by_test, have_docs[0]
    else:
        assert original_spec is not None and original_drive is not None
        ids = list(tests) if tests else default_test_ids()
        if twin_drive.hash == original_drive.hash:
            have_docs, ran, reused = _run_reviews([original_spec], [original_drive], out_dir, ids, profile, seed, jobs,
                                                  scheduler, progress, command, stream)
            orig_by_test = twin_by_test = have_docs[0]
        else:
            have_docs, ran, reused = _run_reviews([original_spec, str(twin_path)], [original_drive, twin_drive], out_dir, ids,
                                                  profile, seed, jobs, scheduler, progress, command, stream)
            orig_by_test, twin_by_test = have_docs
    orig_list = [orig_by_test[t] for t in ids if t in orig_by_test]
    twin_list = [twin_by_test[t] for t in ids if t in twin_by_test]
    try:
        df = compare_reviews(orig_list, twin_list)
    except ValueError as e:
        raise TwinReportError(str(e)) from None
    summ = summary(df)
    internals = internals_table(twin_internals(twin_drive, probe.get("features", {}) or {}, provenance), truth)

    # the review report of both drives (as 'ssdlab report' draws it); the twin named as such
    same = orig_list and twin_list and orig_list[0]["drive"]["hash"] == twin_list[0]["drive"]["hash"]
    report_docs = list(orig_list) + ([] if same else [_as_twin(d) for d in twin_list])
    index = build_report(report_docs, str(out_dir), command=command)

    man = manifest(seed=seed, drive_id=twin_drive.id, drive_hash=twin_drive.hash, command=command, extra={
        "profile": profile,
        "tests": ids,
        "probe_dir": str(pdir),
        "probe_manifest": probe.get("manifest", {}),
        "target": dict(target),
        "twin_file": str(twin_path),
        "original": (dict(summ["original"] or {}, results=original) if original else
                     dict(summ["original"] or {}, drive=original_spec)),
        "ran": ran,
        "reused": reused,
    })
    doc = {
        "schema": TWIN_SUMMARY_SCHEMA,
        "schema_version": TWIN_SUMMARY_SCHEMA_VERSION,
        "manifest": man,
        "same_drive": bool(same),
        "summary": summ,
        "internals": internals,
        "truth": truth,
        "provenance": provenance,
        "files": {"index": "index.html", "twin_page": "twin.html", "table": "twin.csv"},
    }
    csv_path = out_dir / "twin.csv"
    _write_csv(df, csv_path, seed, profile)
    summary_path = out_dir / "twin-summary.json"
    with atomic_open(summary_path) as f:
        write_json(_finite(doc), f)
    page = _write_page(out_dir, df, doc, probe)
    _link_index(index, summ)
    return TwinReport(out=out_dir, index=index, page=page, csv=csv_path, summary_json=summary_path, summary=summ,
                      internals=internals, ran=ran, reused=reused)


def _as_twin(doc: Mapping[str, Any]) -> Dict[str, Any]:
    """A twin's results document as the report names it: its product name
    marked "(twin)" unless it says so already (in memory only)."""
    d = dict(doc)
    drive = dict(d["drive"])
    name = str(drive.get("name") or drive["id"])
    if "twin" not in name.lower():
        drive["name"] = f"{name} (twin)"
    d["drive"] = drive
    return d


def _finite(o: Any) -> Any:
    if isinstance(o, float) and not math.isfinite(o):
        return None
    if isinstance(o, dict):
        return {k: _finite(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_finite(v) for v in o]
    return o


def _write_csv(df: Any, path: Path, seed: int, profile: str) -> None:
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
                else:
                    row.append(str(v))
            w.writerow(row + [profile, seed])


# ---------------------------------------------------------------------------
# the twin page
# ---------------------------------------------------------------------------

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

    from ..report import charts as _charts  # sets the Agg backend first
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


def _write_page(out: Path, df: Any, doc: Mapping[str, Any], probe: Mapping[str, Any]) -> Path:
    from ..report.page import _CSS

    summ = doc["summary"]
    ov = summ["overall"]
    o, t = summ["original"] or {}, summ["twin"] or {}
    man = doc["manifest"]
    target = man["target"]
    tol = 100 * float(summ["tolerance"])
    parts = [f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8><meta name=viewport content=\"width=device-width\">"
             f"<title>ssdlab twin report: {_esc(o.get('name', ''))}</title><style>{_CSS}{_TWIN_CSS}</style></head><body>",
             f"<h1>The twin of {_esc(o.get('name', '?'))}</h1>",
             f"<p>How well the twin <b>{_esc(t.get('name', '?'))}</b> (drive file <code>{_esc(man['twin_file'])}</code>, fitted "
             f"from the probe in <code>{_esc(man['probe_dir'])}</code>) predicts the "
             + ("simulated drive" if target.get("kind") == "simulated" else f"real {_esc(target.get('kind'))}")
             + f" <b>{_esc(o.get('name', '?'))}</b>: the review on both, figure by figure. Both drives side by side in every "
             f"chart: <a href=\"index.html\">the review report</a>. Profile: {_esc(man['profile'])}"
             + (" (the quick profile cuts runtimes and spans: not comparable with published reviews)" if man["profile"] != "full" else "")
             + ".</p>",
             "<nav><b>Contents:</b> <a href=\"#headline\">Headline</a> &middot; <a href=\"#tests\">Per test</a> &middot; "
             "<a href=\"#internals\">Internals</a> &middot; <a href=\"#provenance\">Provenance</a> &middot; "
             "<a href=\"#figures\">Every figure</a> &middot; <a href=\"#about\">About</a> &middot; "
             "<a href=\"index.html\">Review report</a></nav>"]
    if doc.get("same_drive"):
        parts.append("<p class=note>The twin's description is the original's (same drive hash): the review ran once and "
                     "every figure is the same on both sides.</p>")
    # headline
    worst = ov.get("worst")
    irows = doc["internals"]
    scored = [r for r in irows if r["truth"] is not None]
    good = sum(1 for r in irows if r["verdict"] in ("exact", "within 10%"))
    parts.append("<h2 id=headline>Headline</h2>")
    share = ov.get("share_within")
    parts.append(
        f"<p class=big><b>{ov['within']}</b> of <b>{ov['figures']}</b> figures of the twin within {tol:g}% of the original's"
        + (f" ({100 * share:.0f}%)" if share is not None else "")
        + (f"; median |error| {100 * ov['median_abs_error']:.1f}%" if ov.get("median_abs_error") is not None else "")
        + (f"; worst: {_esc(worst['test_id'])}, {_esc(worst['figure'])} {_pct(worst['error'])}" if worst else "")
        + ".</p>")
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
    # per test
    parts.append("<h2 id=tests>Per test</h2><div class=scroll><table><tr><th>test</th><th>figures</th><th>within "
                 f"{tol:g}%</th><th>median |error|</th><th>worst figure</th><th>original</th><th>twin</th><th>error</th>"
                 "<th>flagged</th></tr>")
    for r in summ["tests"]:
        w = r.get("worst") or {}
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
    for k, side in (("only_original", "original"), ("only_twin", "twin")):
        for tid in summ[k]:
            left.append(f"{_esc(tid)} (results of the {side} only)")
    if left:
        parts.append("<p class=note>Left out: " + "; ".join(left) + ".</p>")
    # internals
    parts.append("<h2 id=internals>Internals</h2><p class=about>What the twin recovered: its own drive file's values "
                 "(measured by the probe, fitted to it or assumed: the confidence column; the probe's own estimate in "
                 "'how')"
                 + (", against the original's description (truth; definitions in <code>ssdlab.twin.truth</code>): exact, "
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
    # provenance
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
    # every figure
    parts.append(f"<h2 id=figures>Every figure</h2><p class=about>error = twin / original - 1; green within ±{tol:g}%. "
                 "As CSV: <a href=\"twin.csv\">twin.csv</a>; the summary as JSON: "
                 "<a href=\"twin-summary.json\">twin-summary.json</a>.</p>"
                 "<div class=scroll><table class=figs><tr><th>test</th><th>figure</th><th>unit</th><th>original</th><th>twin</th>"
                 "<th>error</th><th>note</th></tr>")
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
        parts.append(f"<tr><td>{_esc(rec['test_id'])}</td><td class=fig>{_esc(rec['figure'])}</td><td>{_esc(rec['unit'])}</td>"
                     f"<td>{_num(rec['original'])}</td><td>{_num(rec['twin'])}</td><td class={cls}>{err}</td>"
                     f"<td class=note>{_esc(rec['note'])}</td></tr>")
    parts.append("</table></div>")
    # about
    pm = probe.get("manifest", {}) or {}
    parts.append("<h2 id=about>About these results</h2><p class=note>"
                 f"ssdlab {_esc(man['ssdlab_version'])} (engine {_esc(man['engine_version'])}); seed {_esc(man['seed'])}; "
                 f"built with <code>{_esc(man['command'])}</code>. Original: {_esc(o.get('id'))} [{_esc(o.get('hash'))}]; "
                 f"twin: {_esc(t.get('id'))} [{_esc(t.get('hash'))}]. "
                 + (f"Reviewed this time: {_esc(', '.join(man['ran']))}. " if man["ran"] else "")
                 + (f"Saved results reused: {_esc(', '.join(man['reused']))}. " if man["reused"] else "")
                 + f"Probe: <code>{_esc(pm.get('command', '?'))}</code> (seed {_esc(pm.get('seed', '?'))}, ssdlab "
                 f"{_esc(pm.get('version', pm.get('ssdlab_version', '?')))}), {_num(probe.get('wall_time_s'))} s.</p>")
    parts.append("</body></html>\n")
    page = out / "twin.html"
    write_text(page, "\n".join(parts))
    return page


def _link_index(index: Path, summ: Mapping[str, Any]) -> None:
    """Put a link to twin.html in the review page's contents and a line under its title."""
    text = index.read_text(encoding="utf-8")
    ov = summ["overall"]
    share = ov.get("share_within")
    line = (f"<p class=take>The twin: {ov['within']} of {ov['figures']} figures within {100 * float(summ['tolerance']):g}% of "
            f"the original's" + (f" ({100 * share:.0f}%)" if share is not None else "")
            + " &mdash; <a href=\"twin.html\">the twin report</a> (figure by figure, internals, provenance).</p>")
    nav = "<nav><b>Contents:</b> "
    if nav in text:
        text = text.replace(nav, nav + '<a href="twin.html">Twin report</a> &middot; ', 1)
    marker = "</h1>"
    text = text.replace(marker, marker + "\n" + line, 1) if marker in text else text.replace("<body>", "<body>" + line, 1)
    write_text(index, text)
