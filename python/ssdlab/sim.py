"""The simulator backend: a simulated drive that keeps its state between phases.

>>> from ssdlab import Simulator
>>> sim = Simulator("generic-mlc-120", seed=1)
>>> sim.precondition("filled", span="8g")            # doctest: +SKIP
>>> r = sim.run(rw="randwrite", bs="4k", iodepth=32, size="8g", runtime="10s")  # doctest: +SKIP
>>> r.iops, r.bw_mbps, r.waf                          # doctest: +SKIP

A whole phase runs inside the engine (Rust) per call; Python never loops per
I/O, and parses nothing: jobs, replay options and trace sources cross to the
engine as plain data (dicts, integers in ns and bytes) and are parsed there,
once. Ctrl-C during :meth:`Simulator.run` stops the phase at the next interval
of simulated time; the KeyboardInterrupt then carries what finished as
``e.result`` (a :class:`PhaseResult` marked interrupted).
"""

from __future__ import annotations

import math
import os
import time
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _core
from ._args import finite, plain, whole
from .drive import Drive, DriveSpec
from .errors import typed_arguments, workload_error
from .results import PhaseResult, manifest

__all__ = ["Simulator", "Job", "ProgressCallback"]

ProgressCallback = Callable[[int, int, int, int], Optional[bool]]

Size = Union[int, str]
#: A duration: a number of seconds, or fio's text ("25ms", "10min").
Duration = Union[int, float, str]




def _size_bytes(value: Size, capacity_bytes: int, field: str) -> int:
    """Bytes (a whole number 0 .. 2^64-1) or a size string ("8g", "75%")."""
    v: Any = value
    if isinstance(v, float) and math.isfinite(v) and v.is_integer():
        v = int(v)
    if isinstance(v, int) and not isinstance(v, bool):
        return whole(v, field)
    if not isinstance(v, str):
        raise workload_error(field, f"{v!r} is not a size (give bytes as a whole number, or a string like '8g')")
    return _core.parse_size_bytes(v, capacity_bytes, field)


#: The longest duration the API takes in seconds (the engine counts ns in 64 bits).
_MAX_SECONDS = (2**63 - 1) / 1e9


def _duration_ns(value: Duration, field: str) -> int:
    """Seconds (int/float) or a duration string ("5s", "500ms") -> ns."""
    if isinstance(value, (bool, int, float)):
        v = finite(value, field)
        if v < 0:
            raise workload_error(field, f"{value} s: must not be negative")
        if v > _MAX_SECONDS:
            raise workload_error(field, f"{value} s is too long (at most {_MAX_SECONDS:.3g} s)")
        return int(round(v * 1e9))
    if not isinstance(value, str):
        raise workload_error(field, f"{value!r} is not a duration (give seconds, or a string like '5s')")
    return _core.parse_duration_ns(value, field)


def _progress(progress: Any) -> Any:
    if progress is not None and not callable(progress):
        raise workload_error("progress", f"{progress!r} is not callable: give progress(done_ns, total_ns, done_bytes, total_bytes)")
    return progress


class Job(Mapping[str, Any]):
    """A fio-style job parsed once by the engine: a read-only mapping of the
    normalised values (``size_bytes``, ``offset_bytes``, ``runtime_ns``,
    ``iodepth``, ``data_pattern``, ...; sizes in bytes, times in ns), which
    :meth:`Simulator.run` runs as it is. ``given`` is the job as written."""

    __slots__ = ("core", "given", "_values")

    def __init__(self, core: "_core.Workload", given: Mapping[str, Any]) -> None:
        self.core = core
        self.given: Dict[str, Any] = dict(given)
        self._values: Dict[str, Any] = dict(core.to_dict())

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Job({self.given!r})"


class Simulator:
    """A simulated drive. ``drive`` is a preset id, a file, a dict or a
    :class:`Drive`; ``memory_limit_bytes`` may be a size string ("16g")."""

    @typed_arguments()
    def __init__(
        self,
        drive: DriveSpec,
        seed: int = 1,
        check: bool = False,
        memory_limit_bytes: Optional[Size] = None,
    ) -> None:
        self.drive = Drive.load(drive)
        whole(seed, "seed")
        if not isinstance(check, bool):
            raise workload_error("check", f"{check!r} is not True or False")
        limit = None if memory_limit_bytes is None else _size_bytes(memory_limit_bytes, 0, "memory_limit_bytes")
        self._core = _core.Simulator(self.drive.core, seed=seed, check=check, memory_limit_bytes=limit)
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

    def _result(self, out: Tuple[Dict[str, Any], Dict[str, np.ndarray]], wall: float, job: Optional[Dict[str, Any]]) -> PhaseResult:
        r = PhaseResult(out[0], out[1], wall_time_s=wall, manifest=self.manifest(), job=job)
        self.history.append(r)
        return r

    @typed_arguments()
    def parse_job(self, job: Optional[Mapping[str, Any]] = None, **keys: Any) -> Job:
        """Parse fio-style keys once, without running: the :class:`Job` that
        :meth:`run` takes as it is (``job["size_bytes"]``, ...). Raises
        WorkloadError naming the key (also for a key the dict and the keyword
        arguments give different values)."""
        merged = self._merge(job, keys)
        return Job(_core.parse_workload(merged, self.capacity_bytes), merged)

    @staticmethod
    def _merge(job: Any, keys: Mapping[str, Any]) -> Dict[str, Any]:
        if job is not None and not isinstance(job, Mapping):
            raise workload_error("job", f"give the job as a dict or as keyword arguments (rw='randwrite', bs='4k'), "
                                        f"not {type(job).__name__} {job!r:.60}")
        merged: Dict[str, Any] = dict(job or {})
        for k, v in keys.items():
            if k in merged and merged[k] is not None and v is not None and merged[k] != v:
                raise workload_error(k, f"given twice: {merged[k]!r} in the job and {v!r} as a keyword argument")
            merged[k] = v
        out = {k: v for k, v in merged.items() if v is not None}
        for k, v in out.items():
            if not isinstance(k, str):
                raise workload_error(str(k), f"job key {k!r} is not a string")
            plain(v, k)
        return out

    @typed_arguments()
    def run(
        self,
        job: Union[Job, Mapping[str, Any], None] = None,
        /,
        *,
        progress: Optional[ProgressCallback] = None,
        **keys: Any,
    ) -> PhaseResult:
        """Run one closed-loop workload given as fio keys (``rw``, ``bs``,
        ``bssplit``, ``iodepth``, ``size``, ``offset``, ``io_size``,
        ``number_ios``, ``runtime``, ``time_based``, ``rwmixread``,
        ``data_pattern``, ``log_avg_msec``, ``randseed``, ``name``, ...), as a
        dict and/or keyword arguments, or a :class:`Job` from
        :meth:`parse_job` (not parsed again). ``progress(done_ns, total_ns,
        done_bytes, total_bytes)`` is called about once per interval of
        simulated time; returning False stops the phase (the result is marked
        interrupted)."""
        _progress(progress)
        if isinstance(job, Job):
            w = job if not keys else self.parse_job(job.given, **keys)
        else:
            w = self.parse_job(job, **keys)
        return self._phase(lambda: self._core.run(w.core, progress), w.given)

    def run_jobs(self, jobs: Sequence[Union[Job, Mapping[str, Any]]], *, progress: Optional[ProgressCallback] = None) -> List[PhaseResult]:
        """Run workloads at the same time on this drive, one submitter each
        (fio's jobs without ``stonewall``): each keeps its own ``iodepth``,
        bounds, ``rate``/``rate_iops`` (``rate_process``), ``thinktime``
        (``thinktime_blocks``), ``startdelay``, ``flow`` (with ``flow_id``,
        ``flow_sleep``: fio's balancing between jobs of one flow) and
        ``latency_target`` (fio's search for a depth); all share the drive and its NCQ tags (first come
        first served). One result per job, in order: its own I/O figures and
        series, and the group's FTL, NAND and SMART figures."""
        _progress(progress)
        ws = [j if isinstance(j, Job) else self.parse_job(j) for j in jobs]
        t0 = time.perf_counter()
        outs = self._core.run_jobs([w.core for w in ws], progress)
        wall = time.perf_counter() - t0
        return [self._result(o, wall, w.given) for o, w in zip(outs, ws)]

    def _phase(self, call: Callable[[], Tuple[Dict[str, Any], Dict[str, np.ndarray]]], job: Optional[Dict[str, Any]]) -> PhaseResult:
        """Run one engine call; a KeyboardInterrupt (or an exception of the
        progress callback) carries what finished as ``e.result``."""
        t0 = time.perf_counter()
        try:
            out = call()
        except BaseException as e:
            partial = getattr(e, "partial_result", None)
            if partial is not None:
                e.result = self._result(partial, time.perf_counter() - t0, job)  # type: ignore[attr-defined]
            raise
        return self._result(out, time.perf_counter() - t0, job)

    @typed_arguments()
    def replay(
        self,
        trace: Optional[Union[str, "os.PathLike[str]"]] = None,
        /,
        *,
        generated: Optional[str] = None,
        seed: Optional[int] = None,
        mode: str = "as-recorded",
        iodepth: Optional[int] = None,
        idle_cap: Optional[Duration] = None,
        idle_cap_ns: Optional[int] = None,
        log_avg_msec: Optional[int] = None,
        number_ios: Optional[int] = None,
        runtime: Optional[Duration] = None,
        runtime_ns: Optional[int] = None,
        lay_down_reads: Optional[bool] = None,
        name: Optional[str] = None,
        progress: Optional[ProgressCallback] = None,
        **trace_options: Any,
    ) -> PhaseResult:
        """Replay a trace file, or a generated Storage Bench trace
        (``generated="heavy-2011"``, ``seed`` defaults to the simulator's).

        ``mode``: ``as-recorded`` issues each I/O at its timestamp (or later
        when the trace's iodepth or the NCQ is full), so idle gaps happen;
        ``as-fast-as-possible`` ignores timestamps (``iodepth`` for records
        that carry none). ``idle_cap`` shortens every gap to at most that long
        (seconds or "25ms"; or ``idle_cap_ns``). ``number_ios`` replays only
        the first that many records, ``runtime`` only the records of the first
        that much trace time (seconds or "10min"; or ``runtime_ns``), as fio's
        options of those names cut a replayed iolog. ``lay_down_reads=True``
        first writes (unmeasured, 1 MiB at QD32) every LBA the trace reads
        before it writes it, as the recorded disk held that data, in the mix of
        data patterns the trace writes (each for its share of the bytes). ``trace_options`` are
        those of :func:`ssdlab.trace.trace_stats` (``format``, ``device``,
        ``out_of_range``, ``skip_bad_lines``, ``data_pattern``, ...; the
        capacity defaults to the drive's). The engine parses and checks all of
        them. The result's ``data["storage_bench"]`` has the data rates over
        busy time; ``data["import"]`` the import report of a file."""
        source: Dict[str, Any] = {}
        _progress(progress)
        if trace is not None and not isinstance(trace, (str, os.PathLike)):
            raise workload_error("file", f"{trace!r} is not a trace file path (give a str or a Path; or generated=ID)")
        if generated is not None and not isinstance(generated, str):
            raise workload_error("generated", f"{generated!r} is not a Storage Bench id, e.g. 'heavy-2011'")
        if trace is not None:
            source["file"] = os.fspath(trace)
        if generated is not None:
            source["generated"] = generated
        source.update({k: v for k, v in trace_options.items() if v is not None})
        if seed is not None:
            source["seed"] = seed
        if name is None:
            name = f"replay {generated}" if generated is not None or trace is None else f"replay {os.path.basename(os.fspath(trace))}"
        given = {"mode": mode, "name": name, "iodepth": iodepth, "idle_cap": idle_cap, "idle_cap_ns": idle_cap_ns,
                 "log_avg_msec": log_avg_msec, "number_ios": number_ios, "runtime": runtime, "runtime_ns": runtime_ns,
                 "lay_down_reads": lay_down_reads}
        opts = {k: v for k, v in given.items() if v is not None}
        plain(source, "")
        plain(opts, "")
        return self._phase(lambda: self._core.replay(source, opts, progress), {**source, **opts})

    @typed_arguments()
    def idle(self, duration: Optional[Duration] = None, *, duration_ns: Optional[int] = None) -> PhaseResult:
        """The drive sits idle (seconds, or "5s", "500ms"; or ``duration_ns``);
        background GC may run."""
        if (duration is None) == (duration_ns is None):
            raise workload_error("idle", "give a duration or duration_ns (one of them)")
        ns = _duration_ns(duration, "idle") if duration is not None else whole(duration_ns, "duration_ns", high=2**63 - 1)
        t0 = time.perf_counter()
        out = self._core.idle(ns)
        return self._result(out, time.perf_counter() - t0, None)

    @typed_arguments()
    def trim(self, offset: Size = 0, length: Optional[Size] = None) -> PhaseResult:
        """TRIM a byte range (to the end of the drive when ``length`` is None);
        sizes may be strings like "8g"."""
        off = _size_bytes(offset, self.capacity_bytes, "offset")
        ln = None if length is None else _size_bytes(length, self.capacity_bytes, "length")
        t0 = time.perf_counter()
        out = self._core.trim(off, ln)
        return self._result(out, time.perf_counter() - t0, None)

    @typed_arguments()
    def secure_erase(self) -> PhaseResult:
        """ATA secure erase: every block erased, mapping empty."""
        t0 = time.perf_counter()
        out = self._core.secure_erase()
        return self._result(out, time.perf_counter() - t0, None)

    @typed_arguments()
    def flush(self) -> None:
        """Program partly filled units now (FLUSH CACHE)."""
        self._core.flush()

    @typed_arguments()
    def check(self) -> None:
        """Verify the FTL: in checking mode against the shadow model
        (``lba -> newest data``), always the structural invariants. Raises
        IntegrityError."""
        self._core.check()

    @typed_arguments()
    def smart(self) -> Dict[str, Any]:
        """SMART-like figures: wear and lifetime writes."""
        return dict(self._core.smart())

    @typed_arguments()
    def clone(self) -> "Simulator":
        """An independent copy in the current state: measure many times from
        one preconditioned state."""
        return Simulator._wrap(self.drive, self._core.clone())

    __copy__ = clone

    def __deepcopy__(self, memo: Dict[int, Any]) -> "Simulator":
        return self.clone()

    # -- preconditioning -----------------------------------------------------

    @typed_arguments()
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

        if not isinstance(state, (str, Mapping)):
            raise workload_error("precondition", f"{state!r} is not a state: give its name ('filled') or a dict "
                                                 "({'state': 'filled', 'data_pattern': 'repeated'})")
        off = _size_bytes(offset, self.capacity_bytes, "offset")
        size = None if span is None else _size_bytes(span, self.capacity_bytes, "span")
        return precondition(self, state, span_bytes=size, offset_bytes=off, progress=progress,
                            torture_runtime=torture_runtime)

    def __repr__(self) -> str:
        return f"Simulator({self.drive.id!r}, seed={self.seed}, check={self.check_mode}, now_ns={self.now_ns})"
