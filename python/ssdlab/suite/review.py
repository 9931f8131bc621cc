"""A review: the suite on several drives (on :mod:`ssdlab.cluster`: worker
processes or a Dask cluster), each test's results saved as soon as it
finishes, then the report.

Layout of a review directory (docs/results-schema.md)::

    OUT/results/<drive>/<test-id>.json   one results document per test
    OUT/results/<drive>/figures.csv      that drive's figures so far
    OUT/figures.csv                      every drive's figures (written with the report)
    OUT/index.html, OUT/charts/          the report
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, TextIO, Tuple

from ..backends.sim_runner import SuiteRunner
from ..cluster import Runner, TestRequest
from ..drive import Drive
from ..errors import SsdlabError
from ..results import manifest as _manifest
from ..results import results_document, save_document, ssdlab_version, write_figures_csv
from .definitions import get_test
from .scale import FULL, Scale

__all__ = ["run_test_document", "test_document", "reproduce_command", "drive_keys", "review", "earlier_results",
           "ReviewDirectoryError"]


def reproduce_command(drive_spec: str, test_id: str, seed: int, scale: str) -> str:
    q = " --quick" if scale == "quick" else ""
    return f"ssdlab test {test_id} --drive {drive_spec} --seed {seed}{q}"


def test_document(drive: Drive, drive_spec: str, test_id: str, out: Dict[str, Any], seed: int, scale: str,
                  command: Optional[str] = None) -> Dict[str, Any]:
    """A test's output (:meth:`SuiteRunner.run_test`) as a results document (manifest, drive, test, figures, jobs)."""
    man = _manifest(
        seed=seed,
        drive_id=drive.id,
        drive_hash=drive.hash,
        command=command,
        drive_changes=drive.changes,
        extra={
            "profile": scale,
            "test_id": test_id,
            "reproduce": reproduce_command(drive_spec, test_id, seed, scale),
        },
    )
    return results_document(man, drive, out)


def run_test_document(runner: SuiteRunner, drive_spec: str, test_id: str, command: Optional[str] = None) -> Dict[str, Any]:
    """Run one test and wrap it as a results document (manifest, drive, test, figures, jobs). On Ctrl-C
    (or SIGTERM) the KeyboardInterrupt carries ``e.document``: the finished steps' document, marked
    ``interrupted``."""
    try:
        out = runner.run_test(get_test(test_id))
    except KeyboardInterrupt as e:
        partial = getattr(e, "document", None)
        if partial is not None:
            e.document = test_document(runner.drive, drive_spec, test_id, partial, runner.seed,  # type: ignore[attr-defined]
                                       runner.scale.name, command)
        raise
    return test_document(runner.drive, drive_spec, test_id, out, runner.seed, runner.scale.name, command)


# ---------------------------------------------------------------------------
# the review driver
# ---------------------------------------------------------------------------


def drive_keys(specs: Sequence[str]) -> List[str]:
    """A directory name per drive: its id, with the hash when two share an id."""
    drives = [Drive.load(s) for s in specs]
    ids = [d.id for d in drives]
    keys = [d.id if ids.count(d.id) == 1 else f"{d.id}-{d.hash[:8]}" for d in drives]
    for i, k in enumerate(keys):
        if k in keys[:i]:
            raise ValueError(f"drive {specs[i]} is given twice (same description as {specs[keys.index(k)]})")
    return keys


class ReviewDirectoryError(SsdlabError):
    """An output directory holding results of another run (naming them)."""


def _earlier_result(path: Path, drive: Drive, test_id: str, seed: int, scale: str) -> Tuple[Optional[Dict[str, Any]], str]:
    """(the document, "") when ``path`` holds this very run's result (same
    drive description, test, seed, scale and ssdlab version, finished);
    (None, why not) otherwise."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        man = doc["manifest"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        return None, f"not a results file ({type(e).__name__})"
    wanted = {"drive": drive.hash, "test": test_id, "seed": seed, "profile": scale, "ssdlab": ssdlab_version()}
    found = {"drive": doc.get("drive", {}).get("hash"), "test": doc.get("test", {}).get("id"), "seed": man.get("seed"),
             "profile": man.get("profile"), "ssdlab": man.get("ssdlab_version")}
    diff = [f"{k} {found[k]} (this run: {wanted[k]})" for k in wanted if found[k] != wanted[k]]
    if doc.get("interrupted"):
        diff.append("it was interrupted")
    return (None, ", ".join(diff)) if diff else (doc, "")


def earlier_results(out_dir: str, keys: Sequence[str], drives: Sequence[Drive], test_ids: Sequence[str], seed: int,
                    scale: str) -> Dict[int, Tuple[str, Dict[str, Any]]]:
    """The results an earlier run of this same review left in ``out_dir``
    (request index -> (path, document)): a resumed review keeps them. A
    result there from another run (another seed, drive description, scale
    or version, or interrupted) is a ReviewDirectoryError naming it: the
    report would mix two runs."""
    kept: Dict[int, Tuple[str, Dict[str, Any]]] = {}
    for di, (key, drive) in enumerate(zip(keys, drives)):
        for ti, tid in enumerate(test_ids):
            path = Path(out_dir) / "results" / key / f"{tid}.json"
            if not path.exists():
                continue
            doc, why = _earlier_result(path, drive, tid, seed, scale)
            if doc is None:
                raise ReviewDirectoryError(f"{path} is from another run ({why}): give another --out, or remove it to run "
                                           "that test again")
            kept[di * len(test_ids) + ti] = (str(path), doc)
    return kept


def review(
    drive_specs: Sequence[str],
    out_dir: str,
    test_ids: Sequence[str],
    jobs: Optional[int] = None,
    seed: int = 1,
    scale: Scale = FULL,
    command: str = "",
    stream: Optional[TextIO] = None,
    scheduler: Optional[str] = None,
    progress: Optional[bool] = False,
) -> List[str]:
    """Run the tests on every drive on the runner (:mod:`ssdlab.cluster`:
    ``jobs`` worker processes, default the cores, or the Dask cluster at
    ``scheduler``); each test's results saved as soon as it finishes, with a
    line on ``stream``. Returns the saved results files (drive by drive, in
    test order). On Ctrl-C, what finished is saved and KeyboardInterrupt
    propagates."""
    stream = stream if stream is not None else sys.stderr
    keys = drive_keys(drive_specs)
    drives = [Drive.load(s) for s in drive_specs]
    requests = [TestRequest(d, tid, seed=seed, scale=scale.name) for d in drives for tid in test_ids]
    n = len(test_ids)
    total = len(requests)
    kept = earlier_results(out_dir, keys, drives, test_ids, seed, scale.name)
    docs: Dict[int, Dict[str, Any]] = {i: doc for i, (_, doc) in kept.items()}
    saved: Dict[int, str] = {i: path for i, (path, _) in kept.items()}
    if kept:
        stream.write(f"ssdlab review: resuming in {out_dir}: {len(kept)} of {total} results kept from an earlier run of the "
                     f"same review; {total - len(kept)} to run\n")
    todo = [i for i in range(total) if i not in kept]
    t_start = time.perf_counter()
    try:
        if todo:
            with Runner(jobs=jobs, scheduler=scheduler, progress=progress) as runner:
                _ = runner.workers  # reach the scheduler first: a bad address is the only line printed
                stream.write(f"ssdlab review: {len(todo)} test(s) on {len(drives)} drive(s), {scale.name} scale; tests that "
                             "share a preconditioned drive run together, so results arrive in groups\n")
                for j, out in runner.run_tests([requests[i] for i in todo]):
                    i = todo[j]
                    di, ti = divmod(i, n)
                    key, tid = keys[di], test_ids[ti]
                    doc = test_document(drives[di], drive_specs[di], tid, out, seed, scale.name, command=command)
                    base = Path(out_dir) / "results" / key
                    path = base / f"{tid}.json"
                    save_document(doc, path)
                    docs[i] = doc
                    saved[i] = str(path)
                    write_figures_csv([docs[k] for k in sorted(docs) if k // n == di], base / "figures.csv")
                    skipped = str(out.get("skipped") or "")
                    what = (skipped if skipped.startswith("left out") else f"not run: {skipped}") if skipped else \
                        f"done in {float(out.get('wall_time_s', 0.0)):.1f} s"
                    stream.write(
                        f"ssdlab review: [{key}] {tid} {what}; overall {len(docs)}/{total} ({100 * len(docs) / total:.0f}%), "
                        f"{time.perf_counter() - t_start:.1f} s wall\n")
                    stream.flush()
    except KeyboardInterrupt as e:
        e.saved = [saved[i] for i in sorted(saved)]  # type: ignore[attr-defined]
        raise
    return [saved[i] for i in sorted(saved)]
