"""The runner: tasks in this process, on a LocalCluster or on a scheduler."""


from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, TextIO, Tuple, TypeVar

from .._args import whole
from ..backends.sim_runner import SuiteRunner
from ..errors import typed_arguments, workload_error
from ..progress import ProgressBar
from ..suite.scale import get_scale
from ..suite.vocabulary import Measured
from .plan import RunResult, TestRequest, execute_task, plan_tasks
from .workers import _connect, _distributed, _execute_remote, _quiet_shutdown, _sigint_ignored, _stop_workers

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
