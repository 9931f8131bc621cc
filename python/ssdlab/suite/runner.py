"""Run a test description (``definitions.TESTS``) on the simulator backend.

The runner only interprets the data: it brings a drive to each run's state
(preconditioning once per state, then :meth:`Simulator.clone`), goes through the
steps, and hands the measured phases to ``summary`` for the figures.
"""

from __future__ import annotations

import copy
import json
import time
from collections import OrderedDict
from typing import Any, Callable, Dict, List, Optional, Set

from .. import _core
from ..drive import Drive, DriveSpec
from ..results import PhaseResult
from ..sim import Simulator
from . import summary as _summary
from .profile import FULL, Profile

__all__ = ["SuiteRunner", "KEPT_SERIES"]

#: Per-interval series kept in results files.
KEPT_SERIES = ("time_s", "iops", "mbps", "read_bytes", "write_bytes", "lat_p99_ns")

#: How many preconditioned states a runner keeps for cloning.
_STATE_CACHE = 3

_FILL_BS = 128 * 1024
_TORTURE_RUNTIME_S = 20 * 60

#: A callback for progress: (label, done fraction of the current phase or -1).
StepProgress = Callable[[str, float], None]


class SuiteRunner:
    """Runs tests on one drive. ``progress(text, fraction)`` is called as phases advance."""

    def __init__(self, drive: DriveSpec, seed: int = 1, profile: Profile = FULL, progress: Optional[StepProgress] = None):
        self.drive = Drive.load(drive)
        self.seed = seed
        self.profile = profile
        self.progress = progress
        self._states: "OrderedDict[str, Simulator]" = OrderedDict()
        self._label = ""

    # -- sizes and times under the profile ---------------------------------

    @property
    def capacity_bytes(self) -> int:
        return int(self.drive.capacity_bytes)

    def size_bytes(self, value: Any, field: str) -> Optional[int]:
        """A size of the description in bytes under the profile, cut to the drive (None = whole drive)."""
        if value is None:
            return None
        cap = self.capacity_bytes
        text = str(value)
        if text.endswith("%"):
            b = _core.parse_size_bytes(text, cap, field)
        else:
            b = value if isinstance(value, int) else _core.parse_size_bytes(text, cap, field)
            b = int(b * self.profile.size_scale)
        b = min(int(b), cap)
        return max(b - b % 4096, 4096)

    def seconds(self, value: float) -> float:
        return float(value) * self.profile.time_scale

    def _duration_s(self, text: Any) -> float:
        if isinstance(text, (int, float)):
            return float(text)
        return _core.parse_duration_ns(str(text), "runtime") / 1e9

    def resolve_job(self, step: Dict[str, Any], span: Optional[int]) -> Dict[str, Any]:
        """The fio job the simulator runs for a step: sizes in bytes, scaled times."""
        job = {("data_pattern" if k == "data" else k): v for k, v in step.items() if k not in ("measure", "x", "line")}
        for key in ("size", "io_size"):
            if key in job:
                job[key] = self.size_bytes(job[key], key)
        if "size" not in job and span is not None:
            job["size"] = span
        if "runtime" in job:
            s = self.seconds(self._duration_s(job["runtime"]))
            job["runtime"] = f"{max(int(round(s * 1000)), 10)}ms"
        if "log_avg_msec" in job:
            job["log_avg_msec"] = max(int(round(job["log_avg_msec"] * self.profile.time_scale)), 10)
        if "name" not in job:
            job["name"] = step.get("measure", job.get("rw", "job"))
        return job

    # -- states ---------------------------------------------------------------

    def _phase_progress(self, what: str) -> Callable[[int, int, int, int], bool]:
        def cb(done_ns: int, total_ns: int, done_bytes: int, total_bytes: int) -> bool:
            if self.progress is not None:
                if total_ns > 0:
                    frac = done_ns / total_ns
                elif total_bytes > 0:
                    frac = done_bytes / total_bytes
                else:
                    frac = -1.0
                self.progress(f"{self._label}: {what}", min(frac, 1.0))
            return True

        return cb

    def precondition(self, sim: Simulator, state: Dict[str, Any], span: Optional[int]) -> None:
        """Bring ``sim`` to a state (secure erase first) over ``span`` bytes from 0 (None = whole drive)."""
        name = state["state"]
        data = state.get("data", "incompressible")
        torture = f"{max(self.seconds(_TORTURE_RUNTIME_S), 0.01):.3f}s"
        # trimmed = another state (``from``, dirty by default), then TRIM of the span
        base = state.get("from", "dirty") if name == "trimmed" else name
        cb = self._phase_progress(f"precondition {name}")
        if data == "incompressible" or base == "clean":
            sim.precondition(base, span=span, progress=cb, torture_runtime=torture)
        else:
            if base != "filled":
                raise ValueError(f"state {name} with data {data}: only 'filled' takes a data pattern")
            sim.secure_erase()
            size = span if span is not None else self.capacity_bytes
            sim.run(rw="write", bs=_FILL_BS, iodepth=32, size=size, io_size=size, data_pattern=data,
                    name=f"precondition: sequential fill 128KB QD32 ({data})", progress=cb)
        if name == "trimmed":
            sim.trim(0, span)

    def state(self, state: Dict[str, Any]) -> "tuple[Simulator, Optional[int]]":
        """A fresh clone of a preconditioned state (preconditioned once per runner)."""
        key = json.dumps(state, sort_keys=True)
        if key not in self._states:
            sim = Simulator(self.drive, seed=self.seed)
            self.precondition(sim, state, self.size_bytes(state.get("span"), "span"))
            self._states[key] = sim
            while len(self._states) > _STATE_CACHE:
                self._states.popitem(last=False)
        else:
            self._states.move_to_end(key)
        sim = self._states[key]
        return sim.clone(), self.size_bytes(state.get("span"), "span")

    # -- tests ----------------------------------------------------------------

    def run_test(self, test: Dict[str, Any], only: Optional[Set[str]] = None) -> Dict[str, Any]:
        """Run one test description; returns its results document (see docs/results-schema.md).

        ``only``: measure labels wanted (None = all). Runs without one of them
        are left out, and a run stops after the last one it needs; the steps
        before it (which make its state) all run, exactly as described."""
        t0 = time.perf_counter()
        self._label = test["id"]
        measured: List[Dict[str, Any]] = []
        skipped = None
        if test["id"] in self.profile.skip:
            skipped = f"left out of the {self.profile.name} profile"
        elif self.capacity_bytes < test.get("min_capacity_bytes", 0):
            skipped = f"needs a drive of at least {test['min_capacity_bytes']:,} B"
        if skipped is None:
            for ri, run in enumerate(test["runs"]):
                wanted = [si for si, st in enumerate(run["steps"]) if "measure" in st and (only is None or st["measure"] in only)]
                if not wanted:
                    continue
                sim, span = self.state(run["state"])
                for si, step in enumerate(run["steps"][: wanted[-1] + 1]):
                    r, job = self._step(sim, step, span)
                    if "measure" in step and r is not None:
                        measured.append({"run": ri, "step": si, "label": step["measure"], "x": step.get("x"),
                                         "line": step.get("line"), "job": job, "result": r})
        figures, charts = _summary.summarise(test, measured, self.profile) if skipped is None else ([], {})
        return {
            "test": copy.deepcopy(test),
            "skipped": skipped,
            "profile": self.profile.name,
            "only_measures": sorted(only) if only is not None else None,
            "figures": figures,
            "charts": charts,
            "jobs": [_job_doc(m) for m in measured],
            "wall_time_s": round(time.perf_counter() - t0, 3),
        }

    def _step(self, sim: Simulator, step: Dict[str, Any], span: Optional[int]) -> "tuple[Optional[PhaseResult], Optional[Dict[str, Any]]]":
        action = step.get("action")
        label = step.get("measure", action or step.get("rw", "job"))
        if action is None:
            job = self.resolve_job(step, span)
            return sim.run(job, progress=self._phase_progress(str(label))), job
        if action == "trim":
            r = sim.trim(0, span)
            return r, {"action": "trim", "offset": 0, "length": span}
        if action == "precondition":
            self.precondition(sim, {"state": step["state"]}, span)
            return None, None
        if action == "idle":
            s = self.seconds(float(step["seconds"]))
            return sim.idle(s), {"action": "idle", "seconds": s}
        if action == "replay":
            opts: Dict[str, Any] = {k: step[k] for k in ("mode", "idle_cap", "iodepth") if k in step}
            r = sim.replay(generated=step["generated"], progress=self._phase_progress(str(label)), **opts)
            return r, {"action": "replay", "generated": step["generated"], **opts}
        raise ValueError(f"unknown step action {action!r}")


def _job_doc(m: Dict[str, Any]) -> Dict[str, Any]:
    """A measured phase as a fio-shaped job (read/write/trim, ssdlab, kept series)."""
    r: PhaseResult = m["result"]
    d = r.to_dict(series=False)
    d["jobname"] = m["label"]
    d["run"] = m["run"]
    d["step"] = m["step"]
    d["job"] = m["job"]
    d["wall_time_s"] = round(r.wall_time_s, 3)
    d["series"] = {k: r.series[k].tolist() for k in KEPT_SERIES if k in r.series}
    return d
