"""The suite's vocabulary as types: a test description is plain data (JSON-ready
dicts, so it can run on the simulator or through fio), and these TypedDicts
say which keys each part has.

    SuiteTest -> runs: [Run] -> Run = {state: State, steps: [Step]}
    Step = an fio job (Job keys) or an action, optionally measured
    Measured: a measured step with its phase, handed to the summaries
    Figure: one figure of a test's results (one row of figures.csv)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Literal, Optional, TypedDict, Union

from .states import State, StateName

if TYPE_CHECKING:
    from ..results import PhaseResult

__all__ = [
    "Size",
    "Job",
    "Action",
    "Step",
    "CopySource",
    "Run",
    "XAxis",
    "SteadyConfig",
    "SuiteTest",
    "Measured",
    "Figure",
    "Chart",
    "StorageBenchMethod",
    "StorageBenchPlayback",
    "Summary",
    "State",
    "StateName",
]

#: Bytes, or an fio size ("8g", "75%").
Size = Union[int, str]

Action = Literal["trim", "precondition", "idle", "replay"]
Summary = Literal["throughput", "sweep", "consistency", "curve", "fill", "storage_bench", "power", "grid", "mixed"]


class Job(TypedDict, total=False):
    """fio's keys, as the engine takes them (sizes k/m/g = 1024-based)."""

    name: str
    rw: str
    bs: Size
    bssplit: str
    blockalign: Size
    iodepth: int
    size: Size
    offset: Size
    io_size: Size
    number_ios: int
    runtime: Union[str, int, float]
    time_based: int
    rwmixread: int
    data_pattern: str
    log_avg_msec: int
    randseed: int


class StorageBenchPlayback(TypedDict, total=False):
    """How a Storage Bench trace is played back (docs/methodology.md)."""

    mode: str
    idle_cap: str
    lay_down_reads: bool


class CopySource(TypedDict):
    """The drive a copy reads its file from (a preset or drive file): the
    writes go no faster than it reads (:mod:`ssdlab.suite.source`)."""

    drive: str


class Step(Job, StorageBenchPlayback, total=False):
    """One step of a run: an fio job, or an ``action``:

    - ``trim``: TRIM of the whole span;
    - ``precondition``: bring the drive to ``state`` in place;
    - ``idle``: ``seconds`` of idle time (cut by a scale's time factor, unless
      ``unscaled``: an idle whose length is what the test measures, the drive's
      background work in it, which a shorter idle would not show);
    - ``replay``: the ``generated`` Storage Bench trace (``mode``, ``idle_cap``,
      ``iodepth`` for records without one).

    A job with ``source`` copies a file from that drive: its writes are paced
    by the source's read rate. ``measure`` (a label) makes it a measured step;
    ``x`` and ``line`` place it in a line chart."""

    action: Action
    state: StateName
    seconds: float
    unscaled: bool
    generated: str
    measure: str
    x: Union[int, float]
    line: str
    source: CopySource


class _RunOptions(TypedDict, total=False):
    #: Drive changes for this run (``Drive.with_changes`` keys), e.g. the
    #: host link: ``{"host.interface": "sata-3g", ...}``.
    drive: Dict[str, Any]


class Run(_RunOptions):
    """Steps in order on one drive, starting from a preconditioned state
    (on the drive as described, or with the run's ``drive`` changes)."""

    state: State
    steps: List[Step]


class XAxis(TypedDict, total=False):
    key: str
    label: str
    log: bool


class SteadyConfig(TypedDict, total=False):
    """The steady-state window of the consistency test (SNIA rounds)."""

    from_s: float
    round_s: float
    window_rounds: int
    range_fraction: float
    slope_fraction: float


class _SuiteTestOptions(TypedDict, total=False):
    x: XAxis
    steady: SteadyConfig
    min_capacity_bytes: int
    #: The host interface a test is about ("sata" or "nvme"): a drive on the
    #: other one skips it (a SATA link of an NVMe drive does not exist).
    interface: str
    #: Left out of a review unless asked for (set to False by ``definitions``
    #: when a description does not say).
    on_request: bool


class SuiteTest(_SuiteTestOptions):
    """One test of the suite (``ssdlab tests``)."""

    id: str
    title: str
    group: str
    about: str
    summary: Summary
    chart: str
    runs: List[Run]


class Measured(TypedDict):
    """A measured step: where it is, its label and the phase it produced."""

    run: int
    step: int
    label: str
    x: Optional[Union[int, float]]
    line: Optional[str]
    job: Dict[str, Any]
    result: "PhaseResult"


class _FigureBase(TypedDict):
    chart: str
    label: str
    metric: str
    value: float
    unit: str


class Figure(_FigureBase, total=False):
    """One figure: the chart it belongs to, the measured step's label, the
    metric in words with its unit, the value and the unit alone; ``window``
    where a test takes figures over different stretches of one run (the
    consistency test's steady-state window and its whole run)."""

    window: str


#: A chart as the report draws it: type, title (with unit), unit, data, ...
Chart = Dict[str, Any]


class StorageBenchMethod(TypedDict):
    """How the suite runs a Storage Bench workload: its test (None for a
    workload that is not a suite test), the starting state and the playback."""

    test_id: Optional[str]
    state: StateName
    replay: StorageBenchPlayback
