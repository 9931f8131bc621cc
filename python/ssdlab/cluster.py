"""Many independent simulations at once: in this process, on a Dask
``LocalCluster`` sized to the machine, or on an existing Dask cluster.

A simulation is a pure function of its inputs: a drive (with its changes), a
seed, a suite scale and a test (with the measures wanted). The same inputs
give the same numbers however they run. :class:`TestRequest` names one test
on one drive; :meth:`Runner.run_tests` runs a list of them and yields each
test's results document as soon as its last run finishes.

How the work is cut (:func:`plan_tasks`): every run of every requested test
starts from a preconditioned state; the states of one drive (and seed and
scale) form a tree by their phases (secure erase, then a fill of a span
with a data pattern, then a second pass, a torture or a TRIM), and a drive's
tree is simulated in one task, each state once: a run gets a clone of its
state, the last user of a state gets the state itself, a state that builds
on another starts from a clone of it (``dirty`` from ``filled``), and the
first state is a clone of one freshly built simulator. A simulator cannot be
pickled, so it never leaves its task; tasks return measured phases. With
fewer drives than twice the workers, a drive's tree is cut into its fill
subtrees, one task each. Larger drives go first.

Where it runs (:class:`Runner`):

- ``jobs=1`` (or one task): in this process, one task after another, with
  the phase progress bar;
- default: a ``distributed.LocalCluster`` of ``jobs`` worker processes (the
  cores this process may use), one thread each;
- ``scheduler="tcp://host:8786"``: an existing cluster (``dask-scheduler``
  and ``dask-worker`` by hand, or ``dask-jobqueue`` on Slurm/PBS; see
  docs/cluster.md). Its workers need the same ssdlab installed.

Ctrl-C (or SIGTERM, :mod:`ssdlab.interrupt`) stops the run: the documents
already yielded are kept by the caller, the rest is cancelled, and the
LocalCluster's workers still simulating are stopped at once (within half a
second) rather than left to finish tasks nobody waits for. Tasks already
running on an existing cluster (``scheduler=``) are cancelled but finish on
their workers, which ssdlab does not own.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, FrozenSet, Iterable, Iterator, List, Mapping, Optional, Sequence, TextIO, Tuple, TypeVar

from . import _core
from ._args import whole
from .backends.sim_runner import PlannedRun, StepProgress, SuiteRunner
from .drive import Drive, DriveSpec
from .errors import SsdlabError, typed_arguments, workload_error
from .progress import ProgressBar
from .sim import Simulator, _duration_ns
from .suite.scale import get_scale
from .suite.states import StatePhase, phase_key, phases
from .suite.vocabulary import Measured, SuiteTest

__all__ = ["TestRequest", "Task", "Runner", "plan_tasks", "execute_task", "default_workers", "SYNC"]

#: ``scheduler=SYNC``: run in this process (as ``jobs=1``).
SYNC = "sync"

T = TypeVar("T")
R = TypeVar("R")


def default_workers() -> int:
    """The cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


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
        from .suite.definitions import get_test, test_ids
        from .suite.scale import SCALE_NAMES

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


@contextlib.contextmanager
def _sigint_ignored() -> Iterator[None]:
    """SIGINT ignored while child processes start (only from the main thread)."""
    try:
        old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


def _distributed() -> Any:
    """The ``distributed`` package (Dask's cluster runtime; untyped)."""
    import importlib

    try:
        return importlib.import_module("distributed")
    except ImportError:  # pragma: no cover - a dependency of ssdlab
        raise RuntimeError("running on Dask needs the distributed package: pip install 'dask[distributed]'") from None


#: Seconds to reach a scheduler given by address.
_CONNECT_TIMEOUT_S = 10


#: The largest first message a Dask scheduler sends (its handshake is a few hundred bytes).
_HANDSHAKE_MAX_BYTES = 1 << 20


def _handshake_problem(sock: Any) -> Optional[str]:
    """None when the peer speaks Dask's TCP protocol, else what it did
    instead. A Dask server writes its handshake as soon as a connection
    opens: 8 bytes (little-endian) giving the length of the frames that
    follow. Anything else (an HTTP server waits for a request; a silent
    port never answers) would make Dask's client read a length out of
    foreign bytes (and try to allocate it) or wait for ever."""
    import socket
    import struct

    head = b""
    try:
        while len(head) < 8:
            chunk = sock.recv(8 - len(head))
            if not chunk:
                return "it closed the connection without a word" if not head else f"it sent {len(head)} bytes and closed"
            head += chunk
    except socket.timeout:
        return f"no handshake within {_CONNECT_TIMEOUT_S} s"
    except OSError as e:
        return f"the connection failed: {e.strerror or e}"
    (n,) = struct.unpack("<Q", head)
    if not 0 < n <= _HANDSHAKE_MAX_BYTES:
        shown = head.decode("ascii", "replace") if all(32 <= b < 127 for b in head) else head.hex()
        return f"its first bytes {shown!r} are not a Dask handshake"
    return None


def _connect(dd: Any, address: str) -> Any:
    """A client of the scheduler at ``address``, or one error saying why not
    (a malformed address, nothing listening, no answer in 10 s)."""
    import socket

    from distributed.comm.addressing import get_address_host_port

    where = f"scheduler {address}"
    try:
        host, port = get_address_host_port(address)
    except (ValueError, TypeError) as e:
        raise SsdlabError(f"{where}: not a scheduler address ({e}); give tcp://HOST:PORT (e.g. tcp://10.0.0.5:8786) "
                          "or 'sync'") from None
    try:  # fail in a moment when nothing listens (Dask would retry for its whole timeout)
        sock = socket.create_connection((host, port), timeout=_CONNECT_TIMEOUT_S)
    except OSError as e:
        raise SsdlabError(f"{where}: cannot reach the scheduler: {e.strerror or e}") from None
    with sock:
        problem = _handshake_problem(sock)
    if problem:
        raise SsdlabError(f"{where}: not a Dask scheduler ({problem}); give the address 'dask scheduler' printed "
                          "(tcp://HOST:8786 by default)")
    try:
        return dd.Client(address, timeout=_CONNECT_TIMEOUT_S)
    except (OSError, TimeoutError, ValueError) as e:
        raise SsdlabError(f"{where}: cannot connect to the scheduler: {e}") from None


#: Seconds a LocalCluster worker gets to stop when a run is interrupted, then
#: its process is killed (a task in the engine cannot be cancelled).
_STOP_GRACE_S = 0.5


def _stop_workers(cluster: Any) -> None:
    """Stop every worker process of a LocalCluster now (their tasks were
    cancelled: nobody waits for them); errors are left to ``close``."""

    async def stop() -> None:
        await asyncio.gather(*(w.close(timeout=_STOP_GRACE_S) for w in list(cluster.workers.values())),
                             return_exceptions=True)

    with contextlib.suppress(Exception):
        cluster.sync(stop)


def _quiet_shutdown() -> None:
    """In a LocalCluster's worker, before the cluster closes: nothing is left
    to report, and a heartbeat racing the scheduler's shutdown would print a
    connection traceback on the user's terminal."""
    logging.getLogger("distributed").setLevel(logging.CRITICAL)


def _execute_remote(task: Task) -> List[RunResult]:
    return execute_task(task)


# ---------------------------------------------------------------------------
# the runner
# ---------------------------------------------------------------------------


class Runner:
    """Runs tasks in this process, on a LocalCluster or on a scheduler.

    ``jobs``: worker processes of a LocalCluster (default: the cores); 1
    runs here. ``scheduler``: a Dask scheduler's address (``tcp://host:8786``)
    or ``"sync"``. ``progress``: a bar on ``stream`` (None: when it is a
    terminal). Use as a context manager, or call :meth:`close`."""

    @typed_arguments()
    def __init__(self, jobs: Optional[int] = None, scheduler: Optional[str] = None,
                 progress: Optional[bool] = None, stream: Optional[TextIO] = None) -> None:
        if jobs is not None:
            whole(jobs, "jobs", low=1, high=4096)
        if scheduler is not None and not isinstance(scheduler, str):
            raise workload_error("scheduler", f"{scheduler!r} is not a scheduler address (tcp://host:8786) nor 'sync'")
        self.scheduler = scheduler
        self.jobs = jobs
        self.stream: TextIO = stream if stream is not None else sys.stderr
        self.progress = progress
        self._client: Any = None
        self._cluster: Any = None
        #: The futures of the last :meth:`map`: any still running on close was
        #: given up (an interrupted map), and the LocalCluster's workers are
        #: then stopped at once.
        self._futures: List[Any] = []
        self._abandoned = False

    # -- where ------------------------------------------------------------------

    @property
    def local(self) -> bool:
        """True when tasks run in this process."""
        return self.scheduler == SYNC or (self.scheduler is None and self.jobs == 1)

    @property
    def workers(self) -> int:
        """How many tasks run at once."""
        if self.local:
            return 1
        if self.scheduler is not None:
            n = len(self.client().scheduler_info().get("workers", {}))
            return max(n, 1)
        return self.jobs or default_workers()

    def client(self) -> Any:
        """The Dask client (starting the LocalCluster on first use)."""
        if self._client is None:
            dd = _distributed()
            if self.scheduler is not None:
                self._client = _connect(dd, self.scheduler)
            else:
                # The workers ignore Ctrl-C (they inherit the ignored signal): the command stops them, keeping
                # what finished, instead of each printing its own traceback.
                with _sigint_ignored():
                    self._cluster = dd.LocalCluster(n_workers=self.jobs or default_workers(), threads_per_worker=1,
                                                    processes=True, memory_limit=0, silence_logs=logging.ERROR,
                                                    # the scheduler's HTTP server on a free port; no memory limit (big drives)
                                                    dashboard_address=":0")
                self._client = dd.Client(self._cluster)
        return self._client

    def close(self) -> None:
        """Close the client and the LocalCluster (if ours). After an
        interrupted :meth:`map`, workers still simulating are stopped
        within half a second instead of finishing their tasks."""
        cluster, self._cluster = self._cluster, None
        abandoned = self._abandoned or any(not f.done() for f in self._futures)
        self._futures, self._abandoned = [], False
        if cluster is not None and abandoned:
            _stop_workers(cluster)
        elif cluster is not None and self._client is not None:
            with contextlib.suppress(Exception):
                self._client.run(_quiet_shutdown)
        if self._client is not None:
            self._client.close()
            self._client = None
        if cluster is not None:
            cluster.close()

    def __enter__(self) -> "Runner":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- generic ----------------------------------------------------------------

    def map(self, fn: Callable[[T], R], items: Sequence[T], sizes: Optional[Sequence[float]] = None,
            what: str = "tasks", units: Optional[Callable[[R], int]] = None, total: Optional[int] = None) -> Iterator[Tuple[int, R]]:
        """``fn(item)`` for every item (largest ``sizes`` first), yielded as
        ``(index, result)`` as each finishes. ``fn`` must be importable by
        the workers (a module-level function). The progress bar counts
        ``units(result)`` of ``total`` (default: one per item), drawn at 0 at
        once so that a long first task does not leave the terminal blank."""
        order = sorted(range(len(items)), key=lambda i: -(sizes[i] if sizes is not None else 0.0))
        bar = ProgressBar("", stream=self.stream, force=self.progress)
        t0 = time.perf_counter()
        done = 0
        n = len(items) if total is None else total
        bar.count(0, n, what, 0.0)

        def tick(res: R) -> None:
            nonlocal done
            done += 1 if units is None else units(res)
            bar.count(done, n, what, time.perf_counter() - t0)

        try:
            if self.local or len(items) <= 1 and self.scheduler is None:
                for i in order:
                    res = fn(items[i])
                    tick(res)
                    yield i, res
                return
            as_completed = _distributed().as_completed
            client = self.client()
            futures = {}
            for rank, i in enumerate(order):
                f = client.submit(fn, items[i], pure=False, priority=len(order) - rank)
                futures[f] = i
            self._futures = list(futures)
            try:
                for f in as_completed(list(futures)):
                    res = f.result()
                    tick(res)
                    yield futures[f], res
            finally:
                pending = [f for f in futures if not f.done()]
                if pending:
                    self._abandoned = True
                    client.cancel(pending)
        finally:
            bar.close()

    # -- tests ------------------------------------------------------------------

    def run_tests(self, requests: Sequence[TestRequest]) -> Iterator[Tuple[int, Dict[str, Any]]]:
        """Run every request; yields ``(index, results document)`` as each
        test's last run finishes (the document of
        :meth:`SuiteRunner.run_test`)."""
        runners: Dict[int, SuiteRunner] = {}

        def runner_of(i: int) -> SuiteRunner:
            if i not in runners:
                r = requests[i]
                runners[i] = SuiteRunner(r.drive, seed=r.seed, scale=get_scale(r.scale))
            return runners[i]

        def document(i: int, measured: List[Measured], skipped: Optional[str], wall: float) -> Dict[str, Any]:
            r = requests[i]
            only = None if r.only is None else set(r.only)
            return runner_of(i).assemble(r.suite_test, measured, skipped, only, wall)

        tasks, empty = plan_tasks(requests, self.workers)
        for i, why in sorted(empty.items()):
            yield i, document(i, [], why, 0.0)
        remaining: Dict[int, int] = {}
        for t in tasks:
            for tr in t.runs:
                remaining[tr.request] = remaining.get(tr.request, 0) + 1
        measured: Dict[int, List[Measured]] = {i: [] for i in remaining}
        walls: Dict[int, float] = {i: 0.0 for i in remaining}
        n_runs = sum(remaining.values())

        def finished(results: List[RunResult]) -> Iterator[Tuple[int, Dict[str, Any]]]:
            for rr in results:
                measured[rr.request].extend(rr.measured)
                walls[rr.request] += rr.wall_time_s
                remaining[rr.request] -= 1
                if remaining[rr.request] == 0:
                    yield rr.request, document(rr.request, measured.pop(rr.request), None, walls[rr.request])

        if self.local or (len(tasks) == 1 and self.scheduler is None):
            bar = ProgressBar("", stream=self.stream, force=self.progress)
            done_runs = 0
            try:
                for t in tasks:
                    prefix = f"[{done_runs}/{n_runs} runs] {t.drive.id}"
                    results = execute_task(t, progress=lambda label, p=prefix: bar.phase(f"{p} {label}"))  # type: ignore[misc]
                    done_runs += len(results)
                    yield from finished(results)
            finally:
                bar.close()
            return
        def tests_done(results: List[RunResult]) -> int:
            # the requests this task's runs complete (each test's runs may span several tasks)
            left = dict(remaining)
            for rr in results:
                left[rr.request] -= 1
            return sum(1 for i in {rr.request for rr in results} if left[i] == 0)

        for _, results in self.map(_execute_remote, tasks, [t.cost for t in tasks], what="tests",
                                   units=tests_done, total=len(remaining)):
            yield from finished(results)


@typed_arguments()
def run_tests(requests: Sequence[TestRequest], jobs: Optional[int] = None, scheduler: Optional[str] = None,
              progress: Optional[bool] = None) -> List[Dict[str, Any]]:
    """Every request's results document, in request order (a convenience
    around :class:`Runner`)."""
    out: Dict[int, Dict[str, Any]] = {}
    with Runner(jobs=jobs, scheduler=scheduler, progress=progress) as runner:
        for i, doc in runner.run_tests(requests):
            out[i] = doc
    return [out[i] for i in range(len(requests))]
