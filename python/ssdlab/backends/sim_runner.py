"""The simulator backend: a test description (``definitions.TESTS``) run on the simulator.

The runner only interprets the data: it brings a drive to each run's state
(preconditioning once per state, then :meth:`Simulator.clone`), goes through the
steps, and hands the measured phases to ``summary`` for the figures.
"""

from __future__ import annotations

import copy
import json
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Set, Tuple

from ..drive import Drive, DriveSpec
from ..results import PhaseResult
from ..sim import ProgressCallback, Simulator
from ..suite import summary as _summary
from ..suite.scale import FULL, Scale, ScaleSizes
from ..suite.source import paced_by_source, source_record
from ..suite.states import State, StatePhase, run_phase, state_spec, tortured_at
from ..suite.vocabulary import Measured, Size, Step, SuiteTest
from .jobs import KEPT_SERIES, job_doc

__all__ = ["SuiteRunner", "SimBackend", "PlannedRun", "KEPT_SERIES", "StepProgress"]

#: How many preconditioned states a runner keeps for cloning.
_STATE_CACHE = 3

#: Progress of a test: called with a label as each phase starts ("TEST: WHAT"),
#: returns the callback that phase reports to (``ProgressBar.phase``).
StepProgress = Callable[[str], ProgressCallback]


def _no_progress(done_ns: int, total_ns: int, done_bytes: int, total_bytes: int) -> bool:
    return True


@dataclass(frozen=True)
class PlannedRun:
    """One run of a test to execute: its index in ``test["runs"]``, its
    state, the span in bytes (None = whole drive), the last step needed and
    the run's own drive changes."""

    run: int
    state: State
    span: Optional[int]
    last_step: int
    #: The run's own drive changes (its ``drive``), if any.
    drive_changes: Optional[Dict[str, Any]] = None


class SuiteRunner:
    """Runs tests on one drive. ``progress(label)`` is called as each phase
    starts and returns that phase's progress callback."""

    def __init__(self, drive: DriveSpec, seed: int = 1, scale: Scale = FULL, progress: Optional[StepProgress] = None):
        self.drive = Drive.load(drive)
        self.seed = seed
        self.scale = scale
        self.progress = progress
        self._states: "OrderedDict[str, Simulator]" = OrderedDict()
        self._label = ""

    # -- sizes and times under the scale ---------------------------------

    @property
    def capacity_bytes(self) -> int:
        return int(self.drive.capacity_bytes)

    def size_bytes(self, value: Optional[Size], field: str) -> Optional[int]:
        """A size of the description in bytes under the scale, cut to the drive (None = whole drive)."""
        return ScaleSizes(self.capacity_bytes, self.scale).size(value, field)

    def seconds(self, value: float) -> float:
        return float(value) * self.scale.time_scale

    def torture_runtime(self) -> str:
        """The ``tortured`` state's random writes under the scale (:attr:`Scale.steady_time_scale`)."""
        return ScaleSizes(self.capacity_bytes, self.scale).torture_runtime()

    def resolve_job(self, step: Mapping[str, Any], span: Optional[int], steady: bool = False) -> Dict[str, Any]:
        """The fio job the simulator runs for a step: sizes in bytes, scaled times
        (``steady``: measured on the tortured drive, :attr:`Scale.steady_time_scale`)."""
        job = {k: v for k, v in step.items() if k not in ("measure", "x", "line")}
        for key in ("size", "io_size"):
            if key in job:
                job[key] = self.size_bytes(job[key], key)
        if "size" not in job and span is not None:
            job["size"] = span
        sizes = ScaleSizes(self.capacity_bytes, self.scale)
        if "runtime" in job:
            job["runtime"] = sizes.runtime(job["runtime"], steady)
        if "log_avg_msec" in job:
            job["log_avg_msec"] = sizes.log_avg_msec(job["log_avg_msec"], step, steady)
        if "name" not in job:
            job["name"] = step.get("measure", job.get("rw", "job"))
        if "source" in job:
            job, _ = paced_by_source(job, _copy_bytes(job))
        return job

    # -- states ---------------------------------------------------------------

    def _phase_progress(self, what: str) -> ProgressCallback:
        if self.progress is None:
            return _no_progress
        return self.progress(f"{self._label}: {what}")

    def precondition(self, sim: Simulator, state: State, span: Optional[int]) -> None:
        """Bring ``sim`` to a state (secure erase first) over ``span`` bytes from 0 (None = whole drive)."""
        cb = self._phase_progress(f"precondition {state['state']}")
        sim.precondition(state, span=span, progress=cb, torture_runtime=self.torture_runtime())

    def state(self, state: State, drive_changes: Optional[Mapping[str, Any]] = None) -> Tuple[Simulator, Optional[int]]:
        """A fresh clone of a preconditioned state (preconditioned once per
        runner), on the drive with ``drive_changes`` if given (a run's ``drive``)."""
        state = state_spec(state)
        key = json.dumps([state, dict(drive_changes)] if drive_changes else state, sort_keys=True)
        if key not in self._states:
            drive = self.drive.with_changes(drive_changes) if drive_changes else self.drive
            sim = Simulator(drive, seed=self.seed)
            self.precondition(sim, state, self.size_bytes(state.get("span"), "span"))
            self._states[key] = sim
            while len(self._states) > _STATE_CACHE:
                self._states.popitem(last=False)
        else:
            self._states.move_to_end(key)
        sim = self._states[key]
        return sim.clone(), self.size_bytes(state.get("span"), "span")

    # -- tests ----------------------------------------------------------------

    def plan(self, test: SuiteTest, only: Optional[Set[str]] = None) -> Tuple[Optional[str], List[PlannedRun]]:
        """What running ``test`` takes: why it is skipped (None if it runs) and
        the runs that hold a wanted measure (``only``: labels, None = all), each
        cut after its last wanted step. Runs are independent of each other: a
        run starts from its own copy of its state."""
        if test["id"] in self.scale.skip:
            return f"left out of the {self.scale.name} scale", []
        if self.capacity_bytes < test.get("min_capacity_bytes", 0):
            return f"needs a drive of at least {test['min_capacity_bytes']:,} B", []
        wants = test.get("interface")
        if wants is not None and wants != ("nvme" if self.drive.is_nvme else "sata"):
            return f"a test of {wants.upper()} drives and {self.drive.id} is {'an NVMe' if self.drive.is_nvme else 'a SATA'} drive", []
        planned: List[PlannedRun] = []
        for ri, run in enumerate(test["runs"]):
            wanted = [si for si, st in enumerate(run["steps"]) if "measure" in st and (only is None or st["measure"] in only)]
            if wanted:
                state = state_spec(run["state"])
                changes = dict(run["drive"]) if run.get("drive") else None
                planned.append(PlannedRun(ri, state, self.size_bytes(state.get("span"), "span"), wanted[-1], changes))
        return None, planned

    def execute(self, sim: Simulator, test: SuiteTest, planned: PlannedRun) -> List[Measured]:
        """Run one planned run's steps on ``sim`` (a drive in the run's state);
        returns its measured steps."""
        self._label = test["id"]
        measured: List[Measured] = []
        run = test["runs"][planned.run]
        steps = run["steps"][: planned.last_step + 1]
        tortured = tortured_at(planned.state, steps)  # a timed job on the tortured drive: Scale.steady_time_scale
        try:
            for si, step in enumerate(steps):
                r, job = self._step(sim, step, planned.span, tortured[si])
                if "measure" in step and r is not None and job is not None:
                    measured.append({"run": planned.run, "step": si, "label": step["measure"], "x": step.get("x"),
                                     "line": step.get("line"), "job": job, "result": r})
        except KeyboardInterrupt as e:
            e.measured = measured  # type: ignore[attr-defined]  # the steps that finished
            raise
        return measured

    def assemble(self, test: SuiteTest, measured: List[Measured], skipped: Optional[str], only: Optional[Set[str]],
                 wall_time_s: float) -> Dict[str, Any]:
        """The results document of a test from its measured steps (in run order)."""
        measured = sorted(measured, key=lambda m: (m["run"], m["step"]))
        figures, charts = _summary.summarise(test, measured, self.scale) if skipped is None else ([], {})
        return {
            "test": copy.deepcopy(test),
            "skipped": skipped,
            "profile": self.scale.name,
            "only_measures": sorted(only) if only is not None else None,
            "figures": figures,
            "charts": charts,
            "jobs": [job_doc(m, m["result"].wall_time_s) for m in measured],
            "wall_time_s": round(wall_time_s, 3),
        }

    def run_test(self, test: SuiteTest, only: Optional[Set[str]] = None) -> Dict[str, Any]:
        """Run one test description; returns its results document (see docs/results-schema.md).
        On Ctrl-C (or SIGTERM) the KeyboardInterrupt carries ``e.document``:
        the figures of the steps that finished, marked ``interrupted``.

        ``only``: measure labels wanted (None = all). Runs without one of them
        are left out, and a run stops after the last one it needs; the steps
        before it (which make its state) all run, exactly as described."""
        t0 = time.perf_counter()
        self._label = test["id"]
        skipped, planned = self.plan(test, only)
        measured: List[Measured] = []
        try:
            for p in planned:
                sim, _ = self.state(p.state, p.drive_changes)
                measured.extend(self.execute(sim, test, p))
        except KeyboardInterrupt as e:
            # Ctrl-C or SIGTERM: the figures of the steps that finished ride on the exception
            measured.extend(getattr(e, "measured", []))
            doc = self.assemble(test, measured, skipped, only, time.perf_counter() - t0)
            doc["interrupted"] = True
            e.document = doc  # type: ignore[attr-defined]
            raise
        return self.assemble(test, measured, skipped, only, time.perf_counter() - t0)

    def precondition_phase(self, sim: Simulator, phase: StatePhase, span: Optional[int]) -> None:
        """One phase of a state on ``sim`` (a clone of the state before it)."""
        run_phase(sim, phase, span_bytes=span, progress=self._phase_progress(phase.name),
                  torture_runtime=self.torture_runtime())

    def _step(self, sim: Simulator, step: Step, span: Optional[int],
              steady: bool = False) -> Tuple[Optional[PhaseResult], Optional[Dict[str, Any]]]:
        action = step.get("action")
        label = step.get("measure", action or step.get("rw", "job"))
        if action is None:
            job = self.resolve_job(step, span, steady)
            r = sim.run(job, progress=self._phase_progress(str(label)))
            if "source" in step:  # what paced the copy (resolve_job set its rate), for the record
                job = {**job, "source": source_record(step["source"], int(job["rate"]))}
            return r, job
        if action == "trim":
            r = sim.trim(0, span)
            return r, {"action": "trim", "offset": 0, "length": span}
        if action == "precondition":
            self.precondition(sim, {"state": step["state"]}, span)
            return None, None
        if action == "idle":
            s = float(step["seconds"]) if step.get("unscaled") else self.seconds(float(step["seconds"]))
            return sim.idle(s), {"action": "idle", "seconds": s}
        if action == "replay":
            opts: Dict[str, Any] = {k: v for k, v in step.items() if k in ("mode", "idle_cap", "iodepth", "lay_down_reads")}
            r = sim.replay(generated=step["generated"], progress=self._phase_progress(str(label)), **opts)
            return r, {"action": "replay", "generated": step["generated"], **opts}
        raise ValueError(f"unknown step action {action!r}")


def _copy_bytes(job: Mapping[str, Any]) -> int:
    """The bytes a copy moves: the job's resolved ``io_size``, else its ``size``."""
    return int(job.get("io_size") or job["size"])


class SimBackend:
    """The simulator: ``target`` is a drive (a :class:`ssdlab.Drive`, a preset
    id or a drive file). One runner per drive, so a drive's preconditioned
    states are shared by the tests run on it."""

    def __init__(self, seed: int = 1, scale: Scale = FULL, progress: Optional[StepProgress] = None) -> None:
        self.seed, self.scale, self.progress = seed, scale, progress
        self._runners: Dict[str, SuiteRunner] = {}

    def runner(self, target: DriveSpec) -> SuiteRunner:
        key = target if isinstance(target, str) else repr(target)
        if key not in self._runners:
            self._runners[key] = SuiteRunner(target, seed=self.seed, scale=self.scale, progress=self.progress)
        return self._runners[key]

    def run(self, test: SuiteTest, target: DriveSpec) -> Dict[str, Any]:
        return self.runner(target).run_test(test)
