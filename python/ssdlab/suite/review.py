"""A review: the suite on several drives (one process per drive), each test's
results saved as soon as it finishes, then the report.

Layout of a review directory (docs/results-schema.md)::

    OUT/results/<drive>/<test-id>.json   one results document per test
    OUT/results/<drive>/figures.csv      that drive's figures so far
    OUT/figures.csv                      every drive's figures (written with the report)
    OUT/index.html, OUT/charts/          the report
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, TextIO

from ..drive import Drive
from ..results import manifest as _manifest
from ..results import results_document, save_document, write_figures_csv
from .definitions import get_test
from .profile import FULL, Profile, get_profile
from .runner import SuiteRunner

__all__ = ["run_test_document", "reproduce_command", "drive_keys", "review"]


def reproduce_command(drive_spec: str, test_id: str, seed: int, profile: str) -> str:
    q = " --quick" if profile == "quick" else ""
    return f"ssdlab test {test_id} --drive {drive_spec} --seed {seed}{q}"


def run_test_document(runner: SuiteRunner, drive_spec: str, test_id: str, command: Optional[str] = None) -> Dict[str, Any]:
    """Run one test and wrap it as a results document (manifest, drive, test, figures, jobs)."""
    test = get_test(test_id)
    out = runner.run_test(test)
    man = _manifest(
        seed=runner.seed,
        drive_id=runner.drive.id,
        drive_hash=runner.drive.hash,
        command=command,
        drive_changes=runner.drive.changes,
        extra={
            "profile": runner.profile.name,
            "test_id": test_id,
            "reproduce": reproduce_command(drive_spec, test_id, runner.seed, runner.profile.name),
        },
    )
    return results_document(man, runner.drive, out)


# ---------------------------------------------------------------------------
# the review driver
# ---------------------------------------------------------------------------


def _drive_worker(drive_spec: str, key: str, test_ids: List[str], out_dir: str, seed: int, profile_name: str,
                  command: str, queue: Any) -> List[str]:
    """One drive, every test in order; each test saved when it finishes."""
    profile = get_profile(profile_name)
    drive = Drive.load(drive_spec)
    runner = SuiteRunner(drive, seed=seed, profile=profile)
    base = Path(out_dir) / "results" / key
    docs: List[Dict[str, Any]] = []
    saved: List[str] = []
    for i, tid in enumerate(test_ids):
        queue.put(("start", key, tid, i, len(test_ids), 0.0))
        t0 = time.perf_counter()
        doc = run_test_document(runner, drive_spec, tid, command=command)
        path = base / f"{tid}.json"
        save_document(doc, path)
        docs.append(doc)
        write_figures_csv(docs, base / "figures.csv")
        saved.append(str(path))
        queue.put(("done", key, tid, i, len(test_ids), time.perf_counter() - t0))
    return saved


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
) -> List[str]:
    """Run the tests on every drive, drives in parallel processes; progress on
    ``stream``; returns the saved results files."""
    keys = drive_keys(drive_specs)
    n_jobs = max(1, min(jobs or os.cpu_count() or 1, len(drive_specs)))
    total = len(drive_specs) * len(test_ids)
    done = 0
    t_start = time.perf_counter()
    ctx = multiprocessing.get_context("spawn")
    saved: List[str] = []
    with ctx.Manager() as mgr:
        queue = mgr.Queue()
        with ProcessPoolExecutor(max_workers=n_jobs, mp_context=ctx) as pool:
            futures = [
                pool.submit(_drive_worker, spec, key, list(test_ids), out_dir, seed, profile.name, command, queue)
                for spec, key in zip(drive_specs, keys)
            ]
            pending = set(futures)
            while pending:
                try:
                    msg = queue.get(timeout=0.2)
                except Exception:
                    msg = None
                if msg is not None:
                    kind, key, tid, i, n, secs = msg
                    if kind == "done":
                        done += 1
                        stream.write(
                            f"ssdlab review: [{key}] {i + 1}/{n} {tid} done in {secs:.1f} s; overall {done}/{total} "
                            f"({100 * done / total:.0f}%), {time.perf_counter() - t_start:.1f} s wall\n"
                        )
                    else:
                        stream.write(f"ssdlab review: [{key}] {i + 1}/{n} {tid} ...\n")
                    stream.flush()
                pending = {f for f in pending if not f.done()}
            while True:  # drain the last messages
                try:
                    kind, key, tid, i, n, secs = queue.get_nowait()
                except Exception:
                    break
                if kind == "done":
                    done += 1
                    stream.write(f"ssdlab review: [{key}] {i + 1}/{n} {tid} done in {secs:.1f} s; overall {done}/{total}\n")
            for f in futures:
                saved.extend(f.result())
    return saved
