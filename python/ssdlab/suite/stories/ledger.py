"""Running the ledger: the suite tests the claims read, each (drive, test)
once with only the measures wanted, on :mod:`ssdlab.cluster` (so the
preconditioned states of a drive are shared as ``ssdlab calibrate`` shares
them); then every claim judged from the results documents.

A claim **holds** when every check holds, is **partly** held when some do,
is **wrong** when none do, and is **not run** when a figure it reads is
missing (a report holding only some of its drives or tests).
"""

from __future__ import annotations

import csv
import io
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Set, TextIO, Tuple

from ...cluster import Runner, TestRequest
from ...drive import Drive
from ...errors import SsdlabError
from .claim import PAGES, Claim
from .figures import DocKey, values_of
from .rules import judge_all
from .scenarios import drive_spec, test_of

__all__ = ["Verdict", "Judged", "StoriesError", "select", "requests_for", "judge", "judge_docs", "run_stories",
           "format_table", "format_csv", "document", "HOLDS", "PARTLY", "WRONG", "NOT_RUN"]

HOLDS, PARTLY, WRONG, NOT_RUN = "holds", "partly", "wrong", "not run"
Verdict = str


class StoriesError(SsdlabError):
    """A bad selection of claims (an unknown id)."""


@dataclass
class Judged:
    """A claim and what the simulation made of it."""

    claim: Claim
    verdict: Verdict
    simulated: str
    checks_held: int = 0
    found: List[str] = field(default_factory=list)
    missing: Optional[str] = None

    def as_dict(self) -> Dict[str, Any]:
        c = self.claim
        return {
            "id": c.id, "page": c.page, "source": PAGES[c.page], "claim": c.claim, "published": c.published,
            "rule": c.rule, "presets": c.presets, "tests": c.tests, "simulated": self.simulated, "verdict": self.verdict,
            "checks": [{"want": ch.want(), "found": f} for ch, f in zip(c.checks, self.found)],
            "checks_held": self.checks_held, "checks_total": len(c.checks), "missing": self.missing,
        }


def select(claims: Sequence[Claim], only: Optional[Iterable[str]] = None) -> List[Claim]:
    """The claims named in ``only`` (ids, in any case), or all of them."""
    if not only:
        return list(claims)
    ids = {c.id: c for c in claims}
    wanted = [w.strip().upper() for w in only if w.strip()]
    bad = [w for w in wanted if w not in ids]
    if bad:
        raise StoriesError(f"argument --only: unknown claim {', '.join(bad)}; the claims are {claims[0].id}..{claims[-1].id}")
    return [c for c in claims if c.id in wanted]


def _test_measures(test_id: str) -> List[str]:
    test = test_of(test_id)
    assert test is not None, test_id
    return [s["measure"] for run in test["runs"] for s in run["steps"] if "measure" in s]


def requests_for(claims: Sequence[Claim], seed: int = 1) -> Tuple[List[TestRequest], List[DocKey]]:
    """One request per (drive, test) the claims read, with only the measures
    they need (a figure that is not a measure, such as Storage Bench's
    ``reads``, needs the whole test)."""
    wanted: Dict[DocKey, Optional[Set[str]]] = {}
    for c in claims:
        for f in c.figures:
            key = (f.drive, f.test)
            measures = _test_measures(f.test)
            need = {f.label} if f.label in measures else None
            if key not in wanted:
                wanted[key] = need
            elif wanted[key] is not None:
                wanted[key] = None if need is None else wanted[key] | need  # type: ignore[operator]
    drives: Dict[str, Drive] = {}
    requests: List[TestRequest] = []
    keys: List[DocKey] = []
    for (drive_id, test_id), only in wanted.items():
        if drive_id not in drives:
            drives[drive_id] = Drive.load(drive_spec(drive_id))
        requests.append(TestRequest(drives[drive_id], test_of(test_id), seed=seed,
                                    only=None if only is None else frozenset(only)))
        keys.append((drive_id, test_id))
    return requests, keys


def judge(claim: Claim, docs: Mapping[DocKey, Mapping[str, Any]]) -> Judged:
    """A claim's verdict from the results documents at hand."""
    values = values_of(docs, claim.figures)
    held, found, missing = judge_all(claim.checks, values)
    if missing is not None:
        return Judged(claim, NOT_RUN, f"no figure {missing}", missing=missing)
    verdict = HOLDS if held == len(claim.checks) else (WRONG if held == 0 else PARTLY)
    return Judged(claim, verdict, "; ".join(found), held, list(found))


def judge_docs(claims: Sequence[Claim], docs: Iterable[Mapping[str, Any]]) -> List[Judged]:
    """Every claim against saved results documents (a review's): the full
    profile's only, keyed by the drive and test they name."""
    by_key: Dict[DocKey, Mapping[str, Any]] = {}
    for d in docs:
        if d.get("manifest", {}).get("profile", "full") == "full" and "drive" in d:
            by_key[(d["drive"]["id"], d["test"]["id"])] = d
    return [judge(c, by_key) for c in claims]


def run_stories(claims: Sequence[Claim], jobs: Optional[int] = None, seed: int = 1, scheduler: Optional[str] = None,
                progress: Optional[bool] = None, stream: Optional[TextIO] = sys.stderr,
                runner: Optional[Runner] = None) -> Tuple[List[Judged], bool]:
    """Run what the claims read and judge them. Returns the judged claims (in
    the given order) and whether the run was interrupted (Ctrl-C: the claims
    whose figures finished are judged, the others are ``not run``)."""
    requests, keys = requests_for(claims, seed)
    docs: Dict[DocKey, Mapping[str, Any]] = {}
    t0 = time.perf_counter()
    interrupted = False
    own = runner is None
    run = runner if runner is not None else Runner(jobs=jobs, scheduler=scheduler, progress=progress)
    try:
        for i, doc in run.run_tests(requests):
            docs[keys[i]] = doc
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if own:
            run.close()
    if stream is not None:
        stream.write(f"ssdlab stories: {len(requests)} test(s) on {len({k[0] for k in keys})} drive(s), "
                     f"{time.perf_counter() - t0:.1f} s wall\n")
        stream.flush()
    return [judge(c, docs) for c in claims], interrupted


def count(judged: Sequence[Judged]) -> Dict[str, int]:
    out = {HOLDS: 0, PARTLY: 0, WRONG: 0, NOT_RUN: 0}
    for j in judged:
        out[j.verdict] += 1
    return out


def summary_line(judged: Sequence[Judged]) -> str:
    n = count(judged)
    tail = f", {n[NOT_RUN]} not run" if n[NOT_RUN] else ""
    return f"{n[HOLDS]} of {len(judged)} claims hold, {n[PARTLY]} partly, {n[WRONG]} wrong{tail}"


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def format_table(judged: Sequence[Judged], width_claim: int = 60, width_sim: int = 60) -> str:
    """The ledger as text: id, claim, published, simulated, verdict; a count at the end."""
    lines = [f"{'id':<4} {'claim':<{width_claim}} {'published':<28} {'simulated':<{width_sim}} verdict"]
    for j in judged:
        c = j.claim
        lines.append(f"{c.id:<4} {_clip(c.claim, width_claim):<{width_claim}} {_clip(c.published, 28):<28} "
                     f"{_clip(j.simulated, width_sim):<{width_sim}} {j.verdict}")
    lines.append(summary_line(judged) + " (rules: docs/stories.md; --json gives every check)")
    return "\n".join(lines)


CSV_FIELDS = ["id", "page", "claim", "published", "simulated", "verdict", "checks_held", "checks_total", "presets",
              "tests", "rule"]


def format_csv(judged: Sequence[Judged]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_FIELDS, lineterminator="\n", extrasaction="ignore")
    w.writeheader()
    for j in judged:
        row = j.as_dict()
        row["presets"] = " ".join(row["presets"])
        row["tests"] = " ".join(row["tests"])
        w.writerow(row)
    return buf.getvalue()


def document(judged: Sequence[Judged], manifest: Mapping[str, Any]) -> Dict[str, Any]:
    """The ledger as a JSON document."""
    return {"schema": "ssdlab-stories", "schema_version": 1, "manifest": dict(manifest), "counts": count(judged),
            "summary": summary_line(judged), "claims": [j.as_dict() for j in judged]}
