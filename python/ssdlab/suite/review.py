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

import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, TextIO

from ..cluster import Runner, TestRequest
from ..drive import Drive
from ..results import manifest as _manifest
from ..results import results_document, save_document, write_figures_csv
from .definitions import get_test
from .profile import FULL, Profile
from .runner import SuiteRunner

__all__ = ["run_test_document", "test_document", "reproduce_command", "drive_keys", "review"]


def reproduce_command(drive_spec: str, test_id: str, seed: int, profile: str) -> str:
    q = " --quick" if profile == "quick" else ""
    return f"ssdlab test {test_id} --drive {drive_spec} --seed {seed}{q}"


def test_document(drive: Drive, drive_spec: str, test_id: str, out: Dict[str, Any], seed: int, profile: str,
                  command: Optional[str] = None) -> Dict[str, Any]:
    """A test's output (:meth:`SuiteRunner.run_test`) as a results document (manifest, drive, test, figures, jobs)."""
    man = _manifest(
        seed=seed,
        drive_id=drive.id,
        drive_hash=drive.hash,
        command=command,
        drive_changes=drive.changes,
        extra={
            "profile": profile,
            "test_id": test_id,
            "reproduce": reproduce_command(drive_spec, test_id, seed, profile),
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
                                       runner.profile.name, command)
        raise
    return test_document(runner.drive, drive_spec, test_id, out, runner.seed, runner.profile.name, command)


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


def review(
    drive_specs: Sequence[str],
    out_dir: str,
    test_ids: Sequence[str],
    jobs: Optional[int] = None,
    seed: int = 1,
    profile: Profile = FULL,
    command: str = "",
    stream: TextIO = sys.stderr,
    scheduler: Optional[str] = None,
    progress: Optional[bool] = False,
) -> List[str]:
    """Run the tests on every drive on the runner (:mod:`ssdlab.cluster`:
    ``jobs`` worker processes, default the cores, or the Dask cluster at
    ``scheduler``); each test's results saved as soon as it finishes, with a
    line on ``stream``. Returns the saved results files (drive by drive, in
    test order). On Ctrl-C, what finished is saved and KeyboardInterrupt
    propagates."""
    keys = drive_keys(drive_specs)
    drives = [Drive.load(s) for s in drive_specs]
    requests = [TestRequest(d, tid, seed=seed, profile=profile.name) for d in drives for tid in test_ids]
    n = len(test_ids)
    total = len(requests)
    docs: Dict[int, Dict[str, Any]] = {}
    saved: Dict[int, str] = {}
    t_start = time.perf_counter()
    with Runner(jobs=jobs, scheduler=scheduler, progress=progress) as runner:
        for i, out in runner.run_tests(requests):
            di, ti = divmod(i, n)
            key, tid = keys[di], test_ids[ti]
            doc = test_document(drives[di], drive_specs[di], tid, out, seed, profile.name, command=command)
            base = Path(out_dir) / "results" / key
            path = base / f"{tid}.json"
            save_document(doc, path)
            docs[i] = doc
            saved[i] = str(path)
            write_figures_csv([docs[j] for j in sorted(docs) if j // n == di], base / "figures.csv")
            stream.write(
                f"ssdlab review: [{key}] {tid} done in {float(out.get('wall_time_s', 0.0)):.1f} s; overall {len(docs)}/{total} "
                f"({100 * len(docs) / total:.0f}%), {time.perf_counter() - t_start:.1f} s wall\n"
            )
            stream.flush()
    return [saved[i] for i in sorted(saved)]
