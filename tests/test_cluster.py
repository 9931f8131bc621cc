"""The runner of many simulations (ssdlab.cluster): the same documents in this
process, on a LocalCluster and on a Dask scheduler started here; each
preconditioned state of a drive simulated once; results streamed as they
finish; Ctrl-C keeps what finished."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any, Dict, List

import pytest

from conftest import make_drive
from ssdlab import Drive
from ssdlab import cluster as cl
from ssdlab.backends import sim_runner as suite_runner
from ssdlab.backends.sim_runner import SuiteRunner
from ssdlab.suite.calibrate import TABLE_FIELDS, calibrate, load_table
from ssdlab.suite.definitions import get_test
from ssdlab.suite.scale import QUICK

TESTS = ["rated", "file-copy", "corners-seq-write-128k", "corners-seq-read-128k"]


def _drive(drive_id: str = "cl-a", dies: int = 4) -> Drive:
    return Drive.load(make_drive(dies=dies, blocks=128, pages=64, drive_id=drive_id))


def _strip(x: Any) -> Any:
    """A document without wall times (the only thing allowed to differ)."""
    if isinstance(x, dict):
        return {k: _strip(v) for k, v in x.items() if k not in ("wall_time_s", "manifest")}
    if isinstance(x, list):
        return [_strip(v) for v in x]
    return x


def _composed_drive() -> Drive:
    """A drive of a profile and a part that sets one of the profile's values
    back to the engine's default (command_slots = 1 over generic-2011's 2),
    small enough to run fast."""
    return Drive.load("generic-mlc-120").with_changes({
        "drive.id": "cl-c", "controller.command_slots": 1, "nand.blocks_per_plane": 96,
        "drive.user_capacity_bytes": 5_000_000_000})


def _requests() -> List[cl.TestRequest]:
    # the tortured state (20 simulated minutes of torture even in the quick scale) on the smallest drive only
    return [cl.TestRequest(d, t, scale="quick") for d in (_drive("cl-a", 4), _drive("cl-b", 8), _composed_drive())
            for t in TESTS + (["resiliency"] if d.id == "cl-a" else [])]


def test_a_task_reaches_a_worker_with_its_drive_as_written() -> None:
    import pickle

    d = _composed_drive()
    assert "command_slots" not in d.config["controller"]  # the default, 1, is left out of the JSON
    task = cl.Task(d, 1, "quick", [])
    back = pickle.loads(pickle.dumps(task)).drive
    assert back.hash == d.hash and "command_slots" not in back.config["controller"]
    # the drive's canonical JSON leaves out values equal to the engine's defaults, so it is not
    # enough to rebuild a drive that names a profile: composed again, the profile's value returns
    from ssdlab import _core
    assert Drive(_core.DriveConfig.from_json(d.json)).config["controller"]["command_slots"] == 2


def test_the_same_documents_in_process_on_a_local_cluster_and_on_a_scheduler(scheduler_address: str) -> None:
    reqs = _requests()
    # the reference: each test alone, the suite runner's own way (a state per runner, clones)
    alone = [_strip(SuiteRunner(r.drive, scale=QUICK).run_test(r.suite_test)) for r in reqs]
    sync = [_strip(d) for d in cl.run_tests(reqs, jobs=1)]
    local = [_strip(d) for d in cl.run_tests(reqs, jobs=2)]
    remote = [_strip(d) for d in cl.run_tests(reqs, scheduler=scheduler_address)]
    assert sync == alone
    assert local == alone
    assert remote == alone
    assert all(d["figures"] for d in alone)


def test_each_state_of_a_drive_is_preconditioned_once(monkeypatch: pytest.MonkeyPatch) -> None:
    phases: List[str] = []
    real = suite_runner.run_phase

    def counting(sim: Any, p: Any, **kw: Any) -> Any:
        phases.append(f"{p.name} span={kw.get('span_bytes')}")
        return real(sim, p, **kw)

    monkeypatch.setattr(suite_runner, "run_phase", counting)
    d = _drive()
    # every test of these starting from a filled or dirty drive shares one fill of the whole drive
    reqs = [cl.TestRequest(d, t, scale="quick") for t in ("corners-seq-write-128k", "resiliency", "corners-seq-read-128k")]
    docs = cl.run_tests(reqs, jobs=1)
    assert all(doc["figures"] for doc in docs)
    whole_fills = [p for p in phases if p.startswith("precondition: sequential fill 128KB QD32 span=None")]
    assert len(whole_fills) == 1, phases
    # dirty builds on that fill: one second pass; a repeated-pattern fill is another state
    assert sum(p.startswith("precondition: second sequential pass") for p in phases) == 1
    assert sum("(repeated)" in p for p in phases) == 1


def test_a_drive_is_one_task_and_a_few_drives_are_cut_into_their_fill_subtrees() -> None:
    reqs = _requests()
    tasks, empty = cl.plan_tasks(reqs, workers=1)
    assert len(tasks) == 3 and not empty
    # the costlier task first: the small drive that alone is tortured for 20 minutes, then the larger drive
    assert [t.drive.id for t in tasks] == ["cl-a", "cl-c", "cl-b"]
    assert [t.cost for t in tasks] == sorted((t.cost for t in tasks), reverse=True)
    assert sum(len(t.runs) for t in tasks) == sum(len(SuiteRunner(r.drive, scale=QUICK).plan(r.suite_test)[1]) for r in reqs)
    split, _ = cl.plan_tasks(reqs, workers=8)
    assert len(split) > 3
    assert sorted((tr.request, tr.planned.run) for t in split for tr in t.runs) == \
        sorted((tr.request, tr.planned.run) for t in tasks for tr in t.runs)
    # a state never crosses tasks: each fill of a drive is in one task only
    seen: Dict[str, int] = {}
    for k, t in enumerate(split):
        for tr in t.runs:
            key = f"{t.drive.id}:{json.dumps(tr.planned.state, sort_keys=True)}:{tr.planned.span}"
            assert seen.setdefault(key, k) == k


def test_a_skipped_test_needs_no_simulation() -> None:
    d = _drive()
    docs = cl.run_tests([cl.TestRequest(d, "storage-bench-heavy-2011", scale="quick")], jobs=1)
    assert docs[0]["skipped"] and docs[0]["figures"] == []


def _table(tmp_path: Path, drives: List[Path]) -> Path:
    path = tmp_path / "t.csv"
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=TABLE_FIELDS)
        w.writeheader()
        for p in drives:
            w.writerow({"drive_id": str(p), "published_drive": "x", "test": "rated sequential write", "state": "clean",
                        "data_pattern": "repeated", "iodepth": "32", "value": "100", "unit": "MB/s", "kind": "rated",
                        "source": "test", "suite_test": "rated", "measure": "sequential write", "note": ""})
    return path


def test_ctrl_c_keeps_the_rows_that_finished(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = []
    for name, dies in (("cc-a", 4), ("cc-b", 8)):
        p = tmp_path / f"{name}.json"
        p.write_text(json.dumps(make_drive(dies=dies, blocks=64, pages=64, drive_id=name)))
        files.append(p)
    rows = load_table(_table(tmp_path, files))
    real = cl.execute_task
    calls: List[int] = []

    def interrupted_second(task: cl.Task, progress: Any = None) -> List[cl.RunResult]:
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(task, progress)

    monkeypatch.setattr(cl.runner, "execute_task", interrupted_second)
    res = calibrate(rows, jobs=1, stream=None)
    assert [r.get("interrupted", False) for r in res].count(True) == 1
    done = next(r for r in res if not r.get("interrupted"))
    assert done["simulated"] and done["simulated"] > 0


def test_results_stream_back_with_a_progress_bar() -> None:
    out = io.StringIO()
    with cl.Runner(jobs=1, progress=True, stream=out) as runner:
        got = [i for i, _ in runner.map(abs, [-3, 1, -2], sizes=[1, 3, 2])]
    assert got == [1, 2, 0]  # largest first
    assert "3 of 3 tasks done" in out.getvalue()


def test_the_command_line_takes_a_scheduler(scheduler_address: str, tmp_path: Path) -> None:
    from conftest import run_cli

    p = tmp_path / "d.json"
    p.write_text(json.dumps(make_drive(dies=4, blocks=64, pages=64, drive_id="cli-sched")))
    table = _table(tmp_path, [p])
    a = run_cli("calibrate", "--table", str(table), "--json", "--scheduler", scheduler_address, timeout=300)
    b = run_cli("calibrate", "--table", str(table), "--json", "--jobs", "1", timeout=300)
    ra, rb = json.loads(a.stdout)["results"], json.loads(b.stdout)["results"]
    assert [r["simulated"] for r in ra] == [r["simulated"] for r in rb]
    assert ra[0]["simulated"] > 0


def test_get_test_and_test_request_accept_ids() -> None:
    r = cl.TestRequest("generic-mlc-120", "rated", only={"sequential write"})
    assert r.suite_test == get_test("rated") and r.only == frozenset({"sequential write"})
