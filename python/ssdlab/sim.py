"""The simulator backend: a simulated drive that keeps its state between phases.

>>> from ssdlab import Simulator
>>> sim = Simulator("generic-mlc-120", seed=1)
>>> sim.precondition("filled", span="8g")            # doctest: +SKIP
>>> r = sim.run(rw="randwrite", bs="4k", iodepth=32, size="8g", runtime="10s")  # doctest: +SKIP
>>> r.iops, r.bw_mbps, r.waf                          # doctest: +SKIP

A whole phase runs inside the engine (Rust) per call; Python never loops per
I/O. Ctrl-C during :meth:`Simulator.run` stops the phase at the next interval
of simulated time; the KeyboardInterrupt then carries what finished as
``e.result`` (a :class:`PhaseResult` marked interrupted).
"""

from __future__ import annotations

import json
import os
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, Union

import numpy as np

from . import _core
from .drive import Drive, DriveSpec
from .errors import workload_error
from .results import PhaseResult, manifest

__all__ = ["Simulator", "ProgressCallback"]

ProgressCallback = Callable[[int, int, int, int], Optional[bool]]

Size = Union[int, str]


# binding: old names until the engine branch merges. Python speaks the names
# of the BRIEF (``data_pattern``; ``iodepth`` for a replay's queue depth); the
# old binding reads ``data`` and ``queue_depth``. Delete this function and the
# calls to it at the merge.
def _old_binding_names(keys: Mapping[str, Any], replay_options: bool = False) -> Dict[str, Any]:
    renames = {"data_pattern": "data", **({"iodepth": "queue_depth"} if replay_options else {})}
    return {renames.get(k, k): v for k, v in keys.items()}


def _size_bytes(value: Size, capacity_bytes: int, field: str) -> int:
    if isinstance(value, bool):
        raise workload_error(field, f"{value!r} is not a size")
    if isinstance(value, int):
        return value
    return _core.parse_size_bytes(str(value), capacity_bytes, field)


def _duration_ns(value: Union[int, float, str], field: str) -> int:
    """Seconds (int/float) or a duration string ("5s", "500ms") -> ns."""
    if isinstance(value, bool):
        raise workload_error(field, f"{value!r} is not a duration")
    if isinstance(value, (int, float)):
        if value < 0:
            raise workload_error(field, f"{value} s: must not be negative")
        return int(round(value * 1e9))
    return _core.parse_duration_ns(str(value), field)


class Simulator:
    """A simulated drive. ``drive`` is a preset id, a file, a dict or a
    :class:`Drive`; ``memory_limit_bytes`` may be a size string ("16g")."""

    def __init__(
        self,
        drive: DriveSpec,
        seed: int = 1,
        check: bool = False,
        memory_limit_bytes: Optional[Size] = None,
    ) -> None:
        self.drive = Drive.load(drive)
        limit = None if memory_limit_bytes is None else _size_bytes(memory_limit_bytes, 0, "memory_limit_bytes")
        self._core = _core.Simulator(self.drive.json, seed=seed, check=check, memory_limit_bytes=limit)
        #: Every phase run on this simulator, in order (shared history is not
        #: copied by :meth:`clone`: a clone starts its own list).
        self.history: List[PhaseResult] = []

    @classmethod
    def _wrap(cls, drive: Drive, core: "_core.Simulator") -> "Simulator":
        obj = cls.__new__(cls)
        obj.drive = drive
        obj._core = core
        obj.history = []
        return obj

    # -- properties ----------------------------------------------------------

    @property
    def seed(self) -> int:
        return self._core.seed

    @property
    def check_mode(self) -> bool:
        return self._core.checking

    @property
    def now_ns(self) -> int:
        """Simulated time: the next phase starts here."""
        return self._core.now_ns

    @property
    def capacity_bytes(self) -> int:
        return self._core.capacity_bytes

    @property
    def memory_in_use_bytes(self) -> int:
        """RAM the drive's tables use now: the forward map, the block table
        and the reverse map, which grows with the units stored (at most
        ``Drive.memory_estimate_bytes``)."""
        return self._core.memory_in_use_bytes

    @property
    def geometry(self) -> Dict[str, Any]:
        return self._core.geometry

    def manifest(self, command: Optional[str] = None) -> Dict[str, Any]:
        return manifest(
            seed=self.seed,
            drive_id=self.drive.id,
            drive_hash=self.drive.hash,
            command=command,
            check=self.check_mode,
            drive_changes=self.drive.changes,
        )

    # -- phases --------------------------------------------------------------

    def _result(self, out: Tuple[str, Dict[str, np.ndarray]], wall: float, job: Optional[Dict[str, Any]]) -> PhaseResult:
        data = json.loads(out[0])
        r = PhaseResult(data, out[1], wall_time_s=wall, manifest=self.manifest(), job=job)
        self.history.append(r)
        return r

    def parse_job(self, job: Optional[Mapping[str, Any]] = None, **keys: Any) -> Dict[str, Any]:
        """Validate fio-style keys without running; returns the normalised job
        (sizes in bytes, times in ns). Raises WorkloadError naming the key."""
        merged = _old_binding_names(self._merge(job, keys))
        return dict(json.loads(_core.parse_workload(json.dumps(merged), self.capacity_bytes)))

    @staticmethod
    def _merge(job: Optional[Mapping[str, Any]], keys: Mapping[str, Any]) -> Dict[str, Any]:
        merged: Dict[str, Any] = dict(job or {})
        merged.update(keys)
        return {k: v for k, v in merged.items() if v is not None}

    def run(
        self,
        job: Optional[Mapping[str, Any]] = None,
        /,
        *,
        progress: Optional[ProgressCallback] = None,
        **keys: Any,
    ) -> PhaseResult:
        """Run one closed-loop workload given as fio keys (``rw``, ``bs``,
        ``bssplit``, ``iodepth``, ``size``, ``offset``, ``io_size``,
        ``number_ios``, ``runtime``, ``time_based``, ``rwmixread``, ``data_pattern``,
        ``log_avg_msec``, ``randseed``, ``name``, ...), as a dict and/or keyword
        arguments. ``progress(done_ns, total_ns, done_bytes, total_bytes)`` is
        called about once per interval of simulated time; returning False stops
        the phase (the result is marked interrupted)."""
        merged = self._merge(job, keys)
        t0 = time.perf_counter()
        try:
            out = self._core.run(json.dumps(_old_binding_names(merged)), progress)
        except BaseException as e:
            partial = getattr(e, "partial_result", None)
            if partial is not None:
                e.result = self._result(partial, time.perf_counter() - t0, merged)  # type: ignore[attr-defined]
            raise
        return self._result(out, time.perf_counter() - t0, merged)

    def replay(
        self,
        trace: Optional[Union[str, "os.PathLike[str]"]] = None,
        /,
        *,
        generated: Optional[str] = None,
        seed: Optional[int] = None,
        mode: str = "as-recorded",
        iodepth: Optional[int] = None,
        idle_cap: Optional[Union[int, float, str]] = None,
        log_avg_msec: Optional[int] = None,
        number_ios: Optional[int] = None,
        runtime: Optional[Union[int, float, str]] = None,
        name: Optional[str] = None,
        progress: Optional[ProgressCallback] = None,
        **trace_options: Any,
    ) -> PhaseResult:
        """Replay a trace file, or a generated Storage Bench trace
        (``generated="heavy-2011"``, ``seed`` defaults to the simulator's).

        ``mode``: ``as-recorded`` issues each I/O at its timestamp (or later
        when the trace's queue depth or the NCQ is full; ``iodepth`` is the queue
        depth of records that carry none), so idle gaps happen;
        ``as-fast-as-possible`` ignores timestamps. ``idle_cap`` shortens every
        gap to at most that long (seconds or "25ms"). ``number_ios`` replays
        only the first that many records, ``runtime`` only the records of the
        first that much trace time (seconds or "10min"), as fio's options of
        those names cut a replayed iolog. ``trace_options`` are
        those of :func:`ssdlab.traces.trace_stats` (``format``, ``device``,
        ``out_of_range``, ``skip_bad_lines``, ...; the capacity defaults to the
        drive's). The result's ``data["storage_bench"]`` has the data rates over
        busy time; ``data["import"]`` the import report of a file."""
        if (trace is None) == (generated is None):
            raise workload_error("trace", "give a trace file or generated=WORKLOAD (one of them)")
        source: Dict[str, Any]
        if trace is not None:
            if seed is not None:
                raise workload_error("seed", "only a generated trace takes a seed")
            source = {"file": os.fspath(trace), **{k: v for k, v in trace_options.items() if v is not None}}
        else:
            if trace_options:
                raise workload_error(next(iter(trace_options)), "trace options apply to a trace file, not to a generated trace")
            source = {"generated": generated}
            if seed is not None:
                source["seed"] = seed
        opts: Dict[str, Any] = {"mode": mode}
        if name is not None:
            opts["name"] = name
        elif generated is not None:
            opts["name"] = f"replay {generated}"
        else:
            opts["name"] = f"replay {os.path.basename(os.fspath(trace))}"  # type: ignore[arg-type]
        if iodepth is not None:
            opts["iodepth"] = iodepth
        if idle_cap is not None:
            opts["idle_cap"] = f"{idle_cap}s" if isinstance(idle_cap, (int, float)) and not isinstance(idle_cap, bool) else idle_cap
        if log_avg_msec is not None:
            opts["log_avg_msec"] = log_avg_msec
        if number_ios is not None:
            opts["number_ios"] = number_ios
        if runtime is not None:
            opts["runtime"] = f"{runtime}s" if isinstance(runtime, (int, float)) and not isinstance(runtime, bool) else runtime
        job = {**source, **opts}
        t0 = time.perf_counter()
        try:
            out = self._core.replay(json.dumps(_old_binding_names(source)),
                                    json.dumps(_old_binding_names(opts, replay_options=True)), progress)
        except BaseException as e:
            partial = getattr(e, "partial_result", None)
            if partial is not None:
                e.result = self._result(partial, time.perf_counter() - t0, job)  # type: ignore[attr-defined]
            raise
        return self._result(out, time.perf_counter() - t0, job)

    def idle(self, duration: Union[int, float, str]) -> PhaseResult:
        """The drive sits idle (seconds, or "5s", "500ms"); background GC may run."""
        ns = _duration_ns(duration, "idle")
        t0 = time.perf_counter()
        out = self._core.idle(ns)
        return self._result(out, time.perf_counter() - t0, None)

    def trim(self, offset: Size = 0, length: Optional[Size] = None) -> PhaseResult:
        """TRIM a byte range (to the end of the drive when ``length`` is None);
        sizes may be strings like "8g"."""
        off = _size_bytes(offset, self.capacity_bytes, "offset")
        ln = None if length is None else _size_bytes(length, self.capacity_bytes, "length")
        t0 = time.perf_counter()
        out = self._core.trim(off, ln)
        return self._result(out, time.perf_counter() - t0, None)

    def secure_erase(self) -> PhaseResult:
        """ATA secure erase: every block erased, mapping empty."""
        t0 = time.perf_counter()
        out = self._core.secure_erase()
        return self._result(out, time.perf_counter() - t0, None)

    def flush(self) -> None:
        """Program partly filled units now (FLUSH CACHE)."""
        self._core.flush()

    def check(self) -> None:
        """Verify the FTL: in checking mode against the shadow model
        (``lba -> newest data``), always the structural invariants. Raises
        IntegrityError."""
        self._core.check()

    def smart(self) -> Dict[str, Any]:
        """SMART-like figures: wear and lifetime writes."""
        return dict(json.loads(self._core.smart()))

    def clone(self) -> "Simulator":
        """An independent copy in the current state: measure many times from
        one preconditioned state."""
        return Simulator._wrap(self.drive, self._core.clone())

    __copy__ = clone

    def __deepcopy__(self, memo: Dict[int, Any]) -> "Simulator":
        return self.clone()

    # -- preconditioning -----------------------------------------------------

    def precondition(
        self,
        state: Union[str, Mapping[str, Any]],
        span: Optional[Size] = None,
        offset: Size = 0,
        progress: Optional[ProgressCallback] = None,
        torture_runtime: Union[int, float, str, None] = None,
    ) -> List[PhaseResult]:
        """Bring the drive to a preconditioning state over a span (default the
        whole drive from ``offset``): ``clean``, ``filled``, ``dirty``,
        ``tortured`` or ``trimmed``, a name or a dict such as ``{"state":
        "filled", "data_pattern": "repeated"}`` (:mod:`ssdlab.suite.states`
        defines them). ``torture_runtime`` replaces the 20 minutes of
        ``tortured`` (seconds or "60s"). Returns the phases run."""
        from .suite.states import precondition

        off = _size_bytes(offset, self.capacity_bytes, "offset")
        size = None if span is None else _size_bytes(span, self.capacity_bytes, "span")
        return precondition(self, state, span_bytes=size, offset_bytes=off, progress=progress,
                            torture_runtime=torture_runtime)

    def __repr__(self) -> str:
        return f"Simulator({self.drive.id!r}, seed={self.seed}, check={self.check_mode}, now_ns={self.now_ns})"
