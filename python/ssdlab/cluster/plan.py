"""How the work is cut: requests, the state trees of each drive, tasks and
what they return (the package's docstring tells the rule)."""


from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, Tuple

from .. import _core
from .._args import whole
from ..backends.sim_runner import PlannedRun, StepProgress, SuiteRunner
from ..drive import Drive, DriveSpec
from ..errors import workload_error
from ..sim import Simulator, _duration_ns
from ..suite.scale import get_scale
from ..suite.states import StatePhase, phase_key, phases
from ..suite.vocabulary import Measured, SuiteTest


@dataclass(eq=False)
class TestRequest:
    """One test on one drive: ``test`` is a description of
    :mod:`ssdlab.suite.definitions` (or a test id), ``only`` the measure
    labels wanted (None: all), ``scale`` ``full`` or ``quick``."""

    drive: DriveSpec
    test: Any
    seed: int = 1
    scale: str = "full"
    only: Optional[FrozenSet[str]] = None

    def __post_init__(self) -> None:
        from ..suite.definitions import get_test, test_ids
        from ..suite.scale import SCALE_NAMES

        self.drive = Drive.load(self.drive)
        whole(self.seed, "seed")
        if self.scale not in SCALE_NAMES:
            raise workload_error("scale", f"{self.scale!r} is not a scale; allowed: {', '.join(SCALE_NAMES)}")
        if isinstance(self.test, str):
            if self.test not in test_ids():
                raise workload_error("test", f"unknown test {self.test!r} ('ssdlab tests' lists them)")
            self.test = get_test(self.test)
        elif not isinstance(self.test, Mapping) or "id" not in self.test:
            raise workload_error("test", f"{self.test!r:.60} is not a test: give a test id ('ssdlab tests') or a description")
        if self.only is not None:
            self.only = frozenset(self.only)

    @property
    def suite_test(self) -> SuiteTest:
        t: SuiteTest = self.test
        return t


# ---------------------------------------------------------------------------
# the plan: tasks of runs that share states
# ---------------------------------------------------------------------------


@dataclass
class _TaskRun:
    request: int
    test: SuiteTest
    planned: PlannedRun


@dataclass
class Task:
    """Runs on one drive that a worker simulates together, sharing states."""

    drive: Drive
    seed: int
    scale: str
    runs: List[_TaskRun]
    cost: float = 0.0

    # A Drive holds the engine's parsed description, which does not pickle: a
    # task travels with the description as written (composed again with its
    # profile and part on the worker) and its hash, checked there. Not the
    # composed JSON: it leaves out values equal to the engine's defaults, so a
    # file that sets a profile's value back to the default (command_slots = 1
    # over a profile's 2) would come back with the profile's value.
    def __getstate__(self) -> Dict[str, Any]:
        state = dict(self.__dict__)
        d = state.pop("drive")
        doc = d._doc
        state["_drive"] = (None if doc is None else json.dumps(doc), d.json, d.hash, d.source, dict(d.changes))
        return state

    def __setstate__(self, state: Dict[str, Any]) -> None:
        doc, text, expected, source, changes = state.pop("_drive")
        self.__dict__.update(state)
        if doc is not None:
            self.drive = Drive(_core.DriveConfig.from_json(doc), source, changes, doc=json.loads(doc))
        else:
            self.drive = Drive(_core.DriveConfig.from_json(text), source, changes)
        if self.drive.hash != expected:
            raise RuntimeError(f"drive {source} changed on its way to a worker (hash {self.drive.hash}, expected {expected})")


@dataclass
class _Node:
    phase: Optional[StatePhase]
    span: Optional[int]
    runs: List[_TaskRun] = field(default_factory=list)
    children: Dict[str, "_Node"] = field(default_factory=dict)


def _chain(planned: PlannedRun) -> List[Tuple[str, StatePhase]]:
    span = "whole" if planned.span is None else str(planned.span)
    return [(f"{span}:{phase_key(p)}", p) for p in phases(planned.state)]


def _tree(runs: Iterable[_TaskRun]) -> _Node:
    root = _Node(None, None)
    for tr in runs:
        node = root
        for key, p in _chain(tr.planned):
            node = node.children.setdefault(key, _Node(p, tr.planned.span))
        node.runs.append(tr)
    return root


def _subtree_runs(node: _Node) -> List[_TaskRun]:
    out = list(node.runs)
    for c in node.children.values():
        out.extend(_subtree_runs(c))
    return out


#: Rough CPU seconds, to start the longest tasks first (measured on the
#: 2-core machine over the calibration: a preconditioning write costs about
#: 2e-11 s per byte, 4 s for a 256GB fill; a measured run about a second; a
#: timed preconditioning phase (the torture) about 0.04 s per simulated second).
_COST_S_PER_BYTE = 2e-11
_COST_S_PER_RUN = 1.0
_COST_S_PER_SIMULATED_S = 0.04


def _cost(drive: Drive, runs: Sequence[_TaskRun]) -> float:
    """Estimated CPU seconds of a task: its preconditioning writes (each
    state once) and its runs. Clones cost next to nothing (the engine's
    tables are shared until written)."""
    def phase_s(node: _Node) -> float:
        total = 0.0
        for c in node.children.values():
            job = c.phase.job if c.phase is not None else {}
            if c.phase is not None and c.phase.kind == "write":
                if "runtime" in job:
                    total += _duration_ns(job["runtime"], "runtime") / 1e9 * _COST_S_PER_SIMULATED_S
                else:
                    total += float(c.span if c.span is not None else drive.capacity_bytes) * _COST_S_PER_BYTE
            total += phase_s(c)
        return total

    return phase_s(_tree(runs)) + _COST_S_PER_RUN * len(runs)


def plan_tasks(requests: Sequence[TestRequest], workers: int = 1) -> Tuple[List[Task], Dict[int, Optional[str]]]:
    """The tasks that run ``requests``, largest first, and the requests that
    need no simulation (index -> why skipped, None when no run holds a wanted
    measure). A drive's runs are one task; with fewer drives than twice
    ``workers``, one task per fill subtree of a drive."""
    groups: Dict[Tuple[str, int, str], List[_TaskRun]] = {}
    drives: Dict[Tuple[str, int, str], Drive] = {}
    empty: Dict[int, Optional[str]] = {}
    runners: Dict[Tuple[str, str], SuiteRunner] = {}
    for i, req in enumerate(requests):
        drive = Drive.load(req.drive)
        rkey = (drive.json, req.scale)
        if rkey not in runners:
            runners[rkey] = SuiteRunner(drive, seed=req.seed, scale=get_scale(req.scale))
        skipped, planned = runners[rkey].plan(req.suite_test, None if req.only is None else set(req.only))
        if not planned:
            empty[i] = skipped
            continue
        for p in planned:
            # a run with its own drive changes (e.g. a slower link) runs on that drive: its states are its own
            run_drive = drive.with_changes(p.drive_changes) if p.drive_changes else drive
            key = (run_drive.json, req.seed, req.scale)
            drives[key] = run_drive
            groups.setdefault(key, []).append(_TaskRun(i, req.suite_test, p))
    tasks: List[Task] = []
    split = len(groups) < 2 * max(workers, 1) and workers > 1
    for key, runs in groups.items():
        drive = drives[key]
        parts: List[List[_TaskRun]] = [runs]
        if split:
            root = _tree(runs)
            parts = []
            for erase in root.children.values():
                clean_runs = list(erase.runs)
                if clean_runs:
                    parts.append(clean_runs)
                parts.extend(_subtree_runs(c) for c in erase.children.values())
        for part in parts:
            tasks.append(Task(drive, key[1], key[2], part, _cost(drive, part)))
    tasks.sort(key=lambda t: -t.cost)
    return tasks, empty


# ---------------------------------------------------------------------------
# a task, on a worker (or here)
# ---------------------------------------------------------------------------


@dataclass
class RunResult:
    """What one run produced: its request, its measured steps, wall time."""

    request: int
    run: int
    measured: List[Measured]
    wall_time_s: float


def execute_task(task: Task, progress: Optional[StepProgress] = None) -> List[RunResult]:
    """Simulate a task's runs, each state once (see the module's docstring)."""
    runner = SuiteRunner(task.drive, seed=task.seed, scale=get_scale(task.scale), progress=progress)
    out: List[RunResult] = []

    def visit(node: _Node, sim: Simulator) -> None:
        consumers: List[Any] = [*node.runs, *node.children.values()]
        for i, c in enumerate(consumers):
            s = sim if i == len(consumers) - 1 else sim.clone()
            t0 = time.perf_counter()
            if isinstance(c, _TaskRun):
                measured = runner.execute(s, c.test, c.planned)
                out.append(RunResult(c.request, c.planned.run, measured, time.perf_counter() - t0))
            else:
                assert c.phase is not None
                runner._label = "precondition"
                runner.precondition_phase(s, c.phase, c.span)
                visit(c, s)
            del s

    # one new simulator per task (building one costs more than cloning one: the
    # engine fills its tables when it builds them); every state is a clone of another
    visit(_tree(task.runs), Simulator(task.drive, seed=task.seed))
    return out
