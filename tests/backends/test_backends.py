"""Where a test runs (ssdlab.backends): the simulator backend's ``run(test,
target)`` gives what its runner gives, and a measured phase becomes a results
job the same way whichever backend ran it."""

from __future__ import annotations

from typing import Any, Dict

import numpy as np

from conftest import make_drive
from ssdlab.backends import SimBackend, SuiteRunner
from ssdlab.backends.jobs import KEPT_SERIES, job_doc
from ssdlab.results import PhaseResult
from ssdlab.suite import QUICK, get_test


def _without_wall_time(doc: Dict[str, Any]) -> Dict[str, Any]:
    out = {k: v for k, v in doc.items() if k != "wall_time_s"}
    out["jobs"] = [{k: v for k, v in j.items() if k != "wall_time_s"} for j in doc["jobs"]]
    return out


def test_the_simulator_backend_gives_what_its_runner_gives() -> None:
    drive = make_drive()
    test = get_test("corners-4k-random-read-qd3")
    by_backend = SimBackend(scale=QUICK).run(test, drive)
    by_runner = SuiteRunner(drive, scale=QUICK).run_test(test)
    assert _without_wall_time(by_backend) == _without_wall_time(by_runner)


def test_a_measured_phase_becomes_a_job_with_its_place_wall_time_and_kept_series() -> None:
    result = PhaseResult({"jobname": "x", "read": {}, "write": {}}, {"iops": np.array([1.0, 2.0]), "qd": np.array([3.0])}, 0.25)
    doc = job_doc({"run": 1, "step": 2, "label": "4KB read", "x": None, "line": None, "job": {"rw": "randread"},
                   "result": result}, 1.23456)
    assert (doc["jobname"], doc["run"], doc["step"], doc["job"], doc["wall_time_s"]) == ("4KB read", 1, 2, {"rw": "randread"}, 1.235)
    assert doc["series"] == {"iops": [1.0, 2.0]} and set(doc["series"]) <= set(KEPT_SERIES)
