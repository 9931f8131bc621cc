"""``ssdlab twin-report DIR``: the drive a probe measured and its twin, side
by side in the review report, and how well the twin predicts the drive.

``DIR`` is a probe directory (``ssdlab probe TARGET --out DIR``, then
``ssdlab fit --probe DIR``): ``probe.json`` (the target and the features the
probe extracted), ``twin.toml`` (the twin's drive file) and ``twin.json``
(where each of its values comes from: measured, fitted or assumed).

- A simulated target (``probe.json``'s ``target.kind`` = ``simulated``): the
  review runs on the original drive (``target.drive``) and on the twin, as
  ``ssdlab review --drive ORIGINAL --drive TWIN`` does (same runner, same
  results files); a drive whose complete results (same drive hash, scale
  and seed, every test asked for) are already in ``OUT/results`` is not run
  again. The internals the probe recovered are scored against the original's
  description (:mod:`.truth`).
- A real target (``block`` or ``file``): ``--original`` names the results of
  ``ssdlab review --device`` on it; only the twin is simulated, on the tests
  those results hold and at their scale. The internals are shown with
  the probe's confidence (there is no truth to score against). Several
  ``--original`` directories (repeated reviews of the same target) give the
  device's own run-to-run spread: the original's figure is then the median
  of its runs, and the report says whether the twin lands within that spread
  (:func:`.compare.spread_verdict`) and, when it does not, where and why.

Then ``OUT/index.html`` is the review report of both drives (the report of
``ssdlab report``), with a link to ``OUT/twin.html``: the per-figure table
of the original against the twin (:mod:`.compare`), the per-test summary, the
internals table and the twin's provenance; ``OUT/twin.csv`` holds the table
and ``OUT/twin-summary.json`` the summary, the internals, the provenance and
the manifest (seed, versions, command).

The modules: :mod:`.compare` (figure by figure), :mod:`.truth` (the internals
against the drive's description), :mod:`.runs` (the reviews), :mod:`.page`
(the twin's page and CSV)."""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, TextIO, Tuple, Union, cast

from ...drive import Drive
from ...errors import SsdlabError
from ...outputs import atomic_open
from ...results import load_results, manifest, write_json
from ...suite.definitions import TESTS, default_test_ids, test_ids
from ..probe import REAL_KINDS, load_probe
from ..records import ComparisonSummary, InternalRow, ProbeDoc, Provenance, TwinSummaryDoc
from .compare import compare_reviews, one_drive, same_original, summary
from .page import _link_index, _write_csv, _write_page
from .runs import _run_reviews
from .truth import internals_table, truth_of, twin_internals

if TYPE_CHECKING:
    from ..records import Reliability

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
    summary: ComparisonSummary
    internals: List[InternalRow]
    #: drives reviewed this time, and drives whose saved results were reused (ids)
    ran: List[str] = field(default_factory=list)
    reused: List[str] = field(default_factory=list)
    #: what the fit found the twin does not reproduce (twin.json's ``reliability``; None: not judged)
    reliability: Optional[Reliability] = None


def _twin_json(path: Path) -> Optional[Dict[str, Any]]:
    """``twin.json`` as an object, or None when the file is missing."""
    if not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise TwinReportError(f"{path}: not the provenance of a twin ({e})") from None
    return doc if isinstance(doc, dict) else {}


def load_provenance(path: Path) -> Optional[Provenance]:
    """``twin.json``'s ``values`` (dotted key -> ``{value, source, why,
    residual?}``), or None when the file is missing; TwinReportError when it
    is not such a document."""
    doc = _twin_json(path)
    if doc is None:
        return None
    values = doc.get("values")
    if not isinstance(values, dict):
        raise TwinReportError(f"{path}: no 'values' object (dotted key -> value, source, why), as 'ssdlab fit --probe' writes")
    return cast(Provenance, values)


def load_reliability(path: Path) -> Optional[Reliability]:
    """``twin.json``'s ``reliability`` (``reliable``, ``objective``, ``problems``), or None (no file, or a twin
    fitted before the fit judged its own reliability)."""
    doc = _twin_json(path)
    rel = doc.get("reliability") if doc is not None else None
    return cast("Reliability", rel) if isinstance(rel, dict) else None


def _original_drive(probe: ProbeDoc, probe_dir: Path) -> Tuple[str, Drive]:
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


@dataclass
class _Inputs:
    """A twin report's inputs, checked before anything runs."""

    pdir: Path
    probe: ProbeDoc
    twin_path: Path
    twin_drive: Drive
    provenance: Optional[Provenance]
    scale: str
    out_dir: Path
    truth: Optional[Dict[str, Any]] = None
    original_docs: Optional[List[Dict[str, Any]]] = None
    #: further runs of a real original (``--original`` given several times): its run-to-run spread
    original_repeats: List[List[Dict[str, Any]]] = field(default_factory=list)
    original_spec: Optional[str] = None
    original_drive: Optional[Drive] = None
    #: what the fit found the twin does not reproduce (twin.json's ``reliability``)
    reliability: Optional[Reliability] = None


def twin_report(
    probe_dir: str,
    twin: Optional[str] = None,
    original: Union[None, str, Sequence[str]] = None,
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
    bad input, before anything runs. ``original``: one results directory, or several runs of the same target
    (the first is the one the report draws)."""
    from ...report import require_matplotlib

    require_matplotlib()
    stream = stream if stream is not None else sys.stderr
    originals = [original] if isinstance(original, str) else list(original or [])
    inp = _inputs(probe_dir, twin, originals, quick, out, tests)
    first = originals[0] if originals else None
    ids, orig_by_test, twin_by_test, ran, reused = _reviews(inp, first, tests, seed, jobs, scheduler, progress,
                                                            command, stream)
    return _write_report(inp, ids, orig_by_test, twin_by_test, ran, reused, first, seed, command, originals)


def _inputs(probe_dir: str, twin: Optional[str], originals: Sequence[str], quick: bool, out: Optional[str],
            tests: Optional[Sequence[str]]) -> _Inputs:
    """Every input checked: TwinReportError (one line) on the first that is wrong."""
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
    twin_json = twin_path.with_suffix(".json") if twin else pdir / "twin.json"
    provenance = load_provenance(twin_json)
    scale = "quick" if quick else "full"
    known = set(test_ids())
    for t in tests or ():
        if t not in known:
            raise TwinReportError(f"argument --tests: unknown test '{t}' ('ssdlab tests' lists them)")
    out_dir = Path(out) if out else pdir / "twin-report"

    inp = _Inputs(pdir, probe, twin_path, twin_drive, provenance, scale, out_dir)
    inp.reliability = load_reliability(twin_json)
    if kind == "simulated":
        inp.original_spec, inp.original_drive = _original_drive(probe, pdir)
        inp.truth = truth_of(inp.original_drive)
    if originals and kind not in REAL_KINDS and len(originals) > 1:
        raise TwinReportError("argument --original: several runs are for a real target (a simulated drive gives the "
                              "same figures every run)")
    for n, original in enumerate(originals):
        docs = _load_original_results(original, target)
        o_scale = str(docs[0].get("profile", "full"))
        if o_scale != scale:
            hint = "add --quick" if o_scale == "quick" else "leave out --quick"
            raise TwinReportError(f"argument --original: {original} holds results of the {o_scale} scale: {hint} "
                                  "(the twin runs at the same scale to compare)")
        if n == 0:
            inp.original_docs = docs
        else:
            try:
                same_original(one_drive(inp.original_docs or [], "original"), docs, n + 1)
            except ValueError as e:
                raise TwinReportError(f"argument --original: {original}: {e}") from None
            inp.original_repeats.append(docs)
    if not originals and kind in REAL_KINDS:
        raise TwinReportError(f"probe.json's target is a real {kind} ({target.get('path', '?')}): give --original RESULTS_DIR, the "
                              f"--out DIR of 'ssdlab review --device {target.get('path', 'TARGET')}' (only the twin is simulated)")
    return inp


def _reviews(inp: _Inputs, original: Optional[str], tests: Optional[Sequence[str]], seed: int, jobs: Optional[int],
             scheduler: Optional[str], progress: Optional[bool], command: str, stream: TextIO
             ) -> Tuple[List[str], Dict[str, Dict[str, Any]], Dict[str, Dict[str, Any]], List[str], List[str]]:
    """The tests and both drives' results by test id (the original's given, or reviewed with the twin's), and the
    drives run and reused."""
    original_docs, original_spec, original_drive = inp.original_docs, inp.original_spec, inp.original_drive
    twin_path, twin_drive, out_dir, scale = inp.twin_path, inp.twin_drive, inp.out_dir, inp.scale
    if original_docs is not None:
        have = {d["test"]["id"] for d in original_docs}
        wanted = list(tests) if tests else default_test_ids()
        ids = [t["id"] for t in TESTS if t["id"] in have and t["id"] in wanted]
        if not ids:
            raise TwinReportError(f"argument --original: no results of the tests asked for in {original} "
                                  f"(it holds {', '.join(sorted(have))})")
        by_test = {d["test"]["id"]: d for d in original_docs if d["test"]["id"] in ids}
        have_docs, ran, reused = _run_reviews([str(twin_path)], [twin_drive], out_dir, ids, scale, seed, jobs, scheduler,
                                              progress, command, stream)
        orig_by_test, twin_by_test = by_test, have_docs[0]
    else:
        assert original_spec is not None and original_drive is not None
        ids = list(tests) if tests else default_test_ids()
        if twin_drive.hash == original_drive.hash:
            have_docs, ran, reused = _run_reviews([original_spec], [original_drive], out_dir, ids, scale, seed, jobs,
                                                  scheduler, progress, command, stream)
            orig_by_test = twin_by_test = have_docs[0]
        else:
            have_docs, ran, reused = _run_reviews([original_spec, str(twin_path)], [original_drive, twin_drive], out_dir, ids,
                                                  scale, seed, jobs, scheduler, progress, command, stream)
            orig_by_test, twin_by_test = have_docs
    return ids, orig_by_test, twin_by_test, ran, reused


def _write_report(inp: _Inputs, ids: Sequence[str], orig_by_test: Mapping[str, Dict[str, Any]],
                  twin_by_test: Mapping[str, Dict[str, Any]], ran: List[str], reused: List[str], original: Optional[str],
                  seed: int, command: str, originals: Sequence[str] = ()) -> TwinReport:
    """The comparison, the review report of both drives, twin.csv, twin-summary.json and twin.html."""
    from ...report import build_report

    probe, pdir, twin_path, twin_drive, out_dir = inp.probe, inp.pdir, inp.twin_path, inp.twin_drive, inp.out_dir
    scale, provenance, truth, original_spec, target = inp.scale, inp.provenance, inp.truth, inp.original_spec, inp.probe["target"]
    orig_list = [orig_by_test[t] for t in ids if t in orig_by_test]
    twin_list = [twin_by_test[t] for t in ids if t in twin_by_test]
    repeats = [[d for d in run if d["test"]["id"] in ids] for run in inp.original_repeats]
    try:
        df = compare_reviews(orig_list, twin_list, repeats=repeats)
    except ValueError as e:
        raise TwinReportError(str(e)) from None
    summ = summary(df)
    verdict = summ.get("spread")
    rel: Mapping[str, Any] = cast(Mapping[str, Any], inp.reliability or {})
    if verdict and verdict.get("lands") is False and rel.get("problems"):
        # the fit's own account of what the model could not represent is the why
        missed = [str(p).split(":")[0] for p in rel["problems"] if ": measured" in str(p)]
        objective = rel.get("objective")
        verdict["statement"] += ("; why: the twin's fit does not reproduce its own probe"
                                 + (f" (objective {float(objective):.2f})" if objective is not None else "")
                                 + (f" and cannot represent {', '.join(missed)}" if missed else ""))
    internals = internals_table(twin_internals(twin_drive, probe.get("features", {}) or {}, provenance), truth)

    # the review report of both drives (as 'ssdlab report' draws it); the twin named as such
    same = orig_list and twin_list and orig_list[0]["drive"]["hash"] == twin_list[0]["drive"]["hash"]
    report_docs = list(orig_list) + ([] if same else [_as_twin(d) for d in twin_list])
    index = build_report(report_docs, str(out_dir), command=command)

    man = manifest(seed=seed, drive_id=twin_drive.id, drive_hash=twin_drive.hash, command=command, extra={
        "profile": scale,
        "tests": ids,
        "probe_dir": str(pdir),
        "probe_manifest": probe.get("manifest", {}),
        "target": dict(target),
        "twin_file": str(twin_path),
        "original": (dict(summ["original"] or {}, results=original, runs=list(originals)) if original else
                     dict(summ["original"] or {}, drive=original_spec)),
        "ran": ran,
        "reused": reused,
    })
    doc: TwinSummaryDoc = {
        "schema": TWIN_SUMMARY_SCHEMA,
        "schema_version": TWIN_SUMMARY_SCHEMA_VERSION,
        "manifest": man,
        "same_drive": bool(same),
        "summary": summ,
        "internals": internals,
        "truth": truth,
        "provenance": provenance,
        "reliability": inp.reliability,
        "files": {"index": "index.html", "twin_page": "twin.html", "table": "twin.csv"},
    }
    csv_path = out_dir / "twin.csv"
    _write_csv(df, csv_path, seed, scale)
    summary_path = out_dir / "twin-summary.json"
    with atomic_open(summary_path) as f:
        write_json(_finite(doc), f)
    page = _write_page(out_dir, df, doc, probe)
    _link_index(index, summ)
    return TwinReport(out=out_dir, index=index, page=page, csv=csv_path, summary_json=summary_path, summary=summ,
                      internals=internals, ran=ran, reused=reused, reliability=inp.reliability)


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
