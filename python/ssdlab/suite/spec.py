"""The honest spec sheet: what a box says (rated-style peaks) beside what the
drive keeps up (steady-state figures after fill and torture, incompressible)
and the lowest one-second IOPS of the performance-consistency test.

Every figure comes from the suite's own tests (``rated``, ``steady-state``,
``consistency``) run by the suite's runner on :mod:`ssdlab.cluster`; the published rating, where the
calibration table has one for the drive, is printed beside them.
"""

from __future__ import annotations

import time
from typing import Any, Dict, List, Optional, Sequence

from ..cluster import Runner, TestRequest
from ..drive import Drive, DriveSpec
from ..results import SCHEMA_VERSION, SPEC_SHEET_SCHEMA
from ..results import manifest as _manifest
from .calibrate import Published, load_table, suite_figure
from .definitions import get_test

__all__ = ["SPEC_FIGURES", "spec_sheet", "spec_sheets"]

#: (measure label of the rated / steady-state tests, unit, label on the sheet).
SPEC_FIGURES = [
    ("sequential read", "MB/s", "Sequential read, 128KB QD32"),
    ("sequential write", "MB/s", "Sequential write, 128KB QD32"),
    ("4KB random read", "IOPS", "4KB random read, QD32"),
    ("4KB random write", "IOPS", "4KB random write, QD32"),
]


def _requests(d: Drive, seed: int, scale: str) -> List[TestRequest]:
    return [TestRequest(d, "rated", seed=seed, scale=scale), TestRequest(d, "steady-state", seed=seed, scale=scale),
            TestRequest(d, "consistency", seed=seed, only=frozenset({"default"}), scale=scale)]


def spec_sheet(drive: DriveSpec, seed: int = 1, progress: Optional[bool] = None,
               command: Optional[str] = None, jobs: Optional[int] = None, scheduler: Optional[str] = None,
               scale: str = "full") -> Dict[str, Any]:
    """Run the spec tests on a drive and return the sheet (JSON-ready). The
    tests run on :mod:`ssdlab.cluster` (``jobs`` worker processes, default the
    cores, or the Dask cluster at ``scheduler``), at ``scale`` (``quick``: the
    suite's shortened runtimes and spans, a preview rather than the sheet)."""
    return spec_sheets([drive], seed=seed, progress=progress, command=command, jobs=jobs, scheduler=scheduler,
                       scale=scale)[0]


def spec_sheets(drives: Sequence[DriveSpec], seed: int = 1, progress: Optional[bool] = None,
                command: Optional[str] = None, jobs: Optional[int] = None, scheduler: Optional[str] = None,
                scale: str = "full") -> List[Dict[str, Any]]:
    """The sheets of several drives, simulated together on one runner."""
    loaded = [Drive.load(d) for d in drives]
    t0 = time.perf_counter()
    requests = [r for d in loaded for r in _requests(d, seed, scale)]
    docs: Dict[int, Dict[str, Any]] = {}
    with Runner(jobs=jobs, scheduler=scheduler, progress=progress) as runner:
        for i, doc in runner.run_tests(requests):
            docs[i] = doc
    wall = time.perf_counter() - t0
    return [_sheet(d, spec, docs[3 * k], docs[3 * k + 1], docs[3 * k + 2], seed, command, wall, scale)
            for k, (d, spec) in enumerate(zip(loaded, drives))]


def _sheet(d: Drive, drive: DriveSpec, rated: Dict[str, Any], steady: Dict[str, Any], consistency: Dict[str, Any],
           seed: int, command: Optional[str], wall: float, scale: str = "full") -> Dict[str, Any]:
    published: List[Published] = [r for r in load_table() if r.drive_id == d.id and r.suite_test == "rated"]
    rows = []
    for label, unit, title in SPEC_FIGURES:
        peak = suite_figure(rated, "rated", label, unit)
        low = suite_figure(steady, "steady-state", label, unit)
        pub = next((p for p in published if p.measure == label), None)
        rows.append({
            "figure": title,
            "measure": label,
            "unit": unit,
            "peak": peak,
            "steady_state": low,
            "steady_over_peak": (low / peak) if peak and low is not None else None,
            "published": None if pub is None else {
                "value": pub.value, "source": pub.source, "drive": pub.published_drive, "note": pub.note,
                "error": (peak / pub.value - 1.0) if peak is not None else None,
            },
        })
    job = next(j for j in consistency["jobs"] if j["jobname"] == "default")
    iops = [float(x) for x in job["series"]["iops"]]
    cfig = {f["metric"]: f["value"] for f in consistency["figures"] if f["label"] == "default"}
    windows = {f["metric"]: f.get("window") for f in consistency["figures"] if f["label"] == "default"}
    return {
        "schema": SPEC_SHEET_SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "manifest": _manifest(seed=seed, drive_id=d.id, drive_hash=d.hash, command=command, drive_changes=d.changes,
                              extra={"profile": scale, "reproduce": f"ssdlab spec {drive if isinstance(drive, str) else d.id}"
                                                                    f" --seed {seed}" + (" --quick" if scale != "full" else "")}),
        "drive": {"id": d.id, "name": d.name, "hash": d.hash, "capacity_bytes": d.capacity_bytes},
        "conditions": {
            "peak": get_test("rated")["about"],
            "steady_state": get_test("steady-state")["about"],
            "consistency": get_test("consistency")["about"],
        },
        "figures": rows,
        "consistency": {
            "lowest_1s_iops": min(iops) if iops else None,
            "steady_state_min_iops": cfig.get("min_iops"),
            "steady_state_mean_iops": cfig.get("mean_iops"),
            "peak_1s_iops": cfig.get("peak_iops"),
            "whole_run": windows.get("peak_iops"),
            "steady_state_window": windows.get("min_iops"),
        },
        "wall_time_s": round(wall, 3),
    }
