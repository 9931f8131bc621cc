"""The twin's records whose keys are fixed, typed: probe.json (its target,
jobs, power readings and features), twin.json (the fit and where each value
of the twin's drive file came from), a recovered value's verdict against the
truth, and a round trip's row with its internals. They are dicts at run time
(they go to probe.json, twin.json and roundtrip.json as they are); a drive
document (a TOML tree, its sections open to every field the engine takes)
stays a plain mapping."""

from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional, TypedDict, Union


class _ValueSource(TypedDict):
    value: Any
    source: str
    why: str


class ValueSource(_ValueSource, total=False):
    """Where one value of the twin's drive file came from: ``measured``,
    ``fitted`` (with the fit's ``residual``, None where it did not run) or
    ``assumed``, and ``why``."""

    residual: Optional[float]


#: Every value the twin's drive file sets, by dotted key (``nand.tr_ns``).
Provenance = Dict[str, ValueSource]


class Verdict(TypedDict):
    """A recovered value against the truth: ``error`` (recovered / truth - 1; None where it does not apply) and
    ``verdict`` (``exact``, ``within 10%``, ``missed``, ``not recovered`` or ``no truth``)."""

    error: Optional[float]
    verdict: str


class InternalRow(Verdict):
    """One internal in the twin report: what it is (``name``, ``unit``, ``about``), the truth (None for a real
    drive), the recovered value, its ``confidence`` and ``how`` it was found, and its verdict."""

    name: str
    unit: str
    about: str
    truth: Any
    recovered: Any
    confidence: Optional[str]
    how: str


class _Internal(Verdict):
    name: str
    truth: Any
    recovered: Any


class BufferSeen(TypedDict):
    """Whether the probe can see the write buffer at all: does the twin's probe move when it gets the preset's?"""

    probe_sees: bool
    truth_moves_probe: float
    most_moved_job: str


class _MaybeBufferSeen(TypedDict, total=False):
    probe_sees: bool
    truth_moves_probe: float
    most_moved_job: str


class Internal(_Internal, _MaybeBufferSeen):
    """One internal of a round trip: the preset's value, the twin's, its verdict and, for a missed write buffer,
    whether the probe could see it at all (:class:`BufferSeen`)."""


class GcModes(TypedDict):
    """The preset's and the twin's foreground garbage collection, and whether they agree (``exact``/``missed``)."""

    truth: str
    twin: str
    verdict: str


class ReviewTestError(TypedDict):
    """One review test of a round trip: its median |error| and its figures within the tolerance."""

    test_id: str
    median_abs_error: Optional[float]
    within: int
    figures: int


class WorstTest(TypedDict):
    test_id: str
    median_abs_error: Optional[float]


class _RoundTripRow(TypedDict):
    preset: str
    internals: List[Internal]
    internals_ok: bool
    internals_ok_where_seen: bool
    review_figures: int
    review_within_15: int
    review_share_within_15: Optional[float]
    review_median_abs_error: Optional[float]
    review_worst: Optional["WorstFigure"]
    worst_test: Optional[WorstTest]
    tests: List[ReviewTestError]
    review_ok: bool
    review_ok_without_power: Optional[bool]
    target_met: bool
    fit_objective_start: float
    fit_objective: float
    fit_trials: int
    probe_wall_s: float
    probe_simulated_s: Optional[float]
    fit_wall_s: float
    review_wall_s: float
    wall_s: float
    report: str


class RoundTripRow(_RoundTripRow, total=False):
    """One preset's round trip (roundtrip.json's ``rows``); ``gc`` missing in a run from before it was recorded."""

    gc: GcModes


class PhasePower(TypedDict):
    """A simulated phase's average watts, its duration and busy time (s) and the NAND's share of its energy (J)."""

    avg_w: float
    power_s: float
    power_busy_s: float
    nand_energy_j: float


class JobFigures(TypedDict, total=False):
    """One probe job's figures in its measured direction (:func:`ssdlab.twin.probe.run.job_figures`): rates,
    completion latencies (us), the FLUSH CACHE latencies of a job with fsync, the per-interval IOPS where logged,
    a simulated job's power (:func:`ssdlab.twin.probe.run.phase_power`) and a real job's wall clock."""

    iops: float
    mbps: float
    io_bytes: int
    runtime_s: float
    clat_mean_us: Optional[float]
    clat_p50_us: Optional[float]
    clat_p99_us: Optional[float]
    syncs: int
    sync_mean_us: float
    sync_p50_us: float
    sync_p99_us: float
    interval_ms: int
    iops_series: List[float]
    avg_w: float
    power_s: float
    power_busy_s: float
    nand_energy_j: float
    wall_start_s: float
    wall_end_s: float


#: Every job's figures, by job name.
Figures = Dict[str, JobFigures]
#: A figure's name (the keys of :class:`JobFigures`), where one is read by name.
FigureKey = Literal["iops", "mbps", "io_bytes", "runtime_s", "clat_mean_us", "clat_p50_us", "clat_p99_us", "syncs",
                    "sync_mean_us", "sync_p50_us", "sync_p99_us", "interval_ms", "avg_w", "power_s", "power_busy_s",
                    "nand_energy_j", "wall_start_s", "wall_end_s"]


class _StructureRecord(TypedDict):
    fitted: str
    objective: float
    kept: Optional[str]
    others: Dict[str, float]


class StructureRecord(_StructureRecord, total=False):
    """The structures weighed against the fitted twin at its fitted times (:func:`ssdlab.twin.fit.recheck_structure`):
    ``fitted`` the twin's, with its ``objective``; ``others`` each one's; ``contest`` those polished a little;
    ``kept`` the one taken (None: the twin's), the values it ``changed`` and its objective once ``polished``."""

    contest: Dict[str, float]
    changed: List[str]
    polished: float


class SlcFit(TypedDict):
    """The fit of a twin's write cache (:func:`ssdlab.twin.fit.slc.choose_slc_cache`): what the probe measured, each
    round's values and the twin's cache features, and the kept round's residual."""

    measured: Dict[str, Any]
    rounds: List[Dict[str, Any]]
    residual: float


class WorstFigure(TypedDict):
    """The review figure with the largest relative error: its test, name, unit, both values and the signed error."""

    test_id: str
    figure: str
    unit: str
    original: Optional[float]
    twin: Optional[float]
    error: Optional[float]


class SpreadBlock(TypedDict):
    """The figures of a set that have the device's own run-to-run spread (several runs of a real original): how many,
    how many the twin is within, the median spread and the twin's median |error| over those figures (None: no
    spread)."""

    spread_figures: int
    within_spread: Optional[int]
    median_spread: Optional[float]
    median_abs_error_spread: Optional[float]


class SpreadOutside(TypedDict):
    """A test whose figures the twin misses by more than the device's own spread."""

    test_id: str
    median_abs_error: float
    median_spread: float


class SpreadVerdict(SpreadBlock):
    """Whether the twin lands within the device's run-to-run spread, and a sentence saying so (and why not)."""

    runs: int
    lands: Optional[bool]
    outside: List[SpreadOutside]
    statement: str


class SummaryBlock(SpreadBlock):
    """The comparison of a set of review figures (one test's, or all): how many were compared and how, how many are
    within the tolerance (and their share), the median |error| and the worst figure; the spread's figures with
    several runs of the original."""

    figures: int
    relative: int
    points: int
    absolute: int
    missing: int
    within: int
    share_within: Optional[float]
    median_abs_error: Optional[float]
    worst: Optional[WorstFigure]


class TestSummary(SummaryBlock):
    test_id: str


class ComparisonSummary(TypedDict):
    """The twin report's comparison in a few numbers (twin-summary.json's ``summary``)."""

    tolerance: float
    overall: SummaryBlock
    tests: List[TestSummary]
    skipped: List[Any]
    only_original: List[Any]
    only_twin: List[Any]
    original: Any
    twin: Any
    runs: int
    spread: Optional[SpreadVerdict]


class Feature(TypedDict):
    """One feature as probe.json keeps it: its ``value`` (None when the jobs
    that measure it did not run), ``unit``, ``confidence`` (``high``,
    ``medium``, ``low`` or ``none``) and ``how`` it was derived (its
    provenance: the jobs and the reasoning)."""

    value: Any
    unit: str
    confidence: str
    how: str


class _ProbeTarget(TypedDict):
    kind: str
    capacity_bytes: int


class ProbeTarget(_ProbeTarget, total=False):
    """What a probe ran on: ``kind`` (``simulated``, ``block`` or ``file``) and the capacity it used; a real
    target's ``path``, ``drive_id``, ``fio_version`` and ``drive`` (the results' drive object); a simulated one's
    ``drive`` (its preset or drive file)."""

    path: str
    drive_id: str
    fio_version: str
    drive: Union[str, Dict[str, Any]]


class ProbePower(TypedDict, total=False):
    """The probe's power readings: their ``source`` and the idle draw (``idle_w`` over ``idle_s``), or a real
    target's idle window (``idle_window_s``, Unix time) until a meter's log is applied."""

    source: str
    idle_w: float
    idle_s: float
    idle_window_s: List[float]


class ProbeManifest(TypedDict):
    seed: int
    version: str
    drive_hash: str
    command: str
    budget: float


class ProbeJobRecord(TypedDict):
    """One probe job in probe.json: the job (:class:`ssdlab.twin.probe.ProbeJob`) and its ``figures`` (None where
    it did not run)."""

    name: str
    stage: str
    feature: str
    why: str
    options: Dict[str, Any]
    direction: str
    log_ms: int
    figures: Optional[JobFigures]


class ProbeDoc(TypedDict):
    """probe.json (:func:`ssdlab.twin.probe.probe_document`)."""

    schema: str
    schema_version: int
    manifest: ProbeManifest
    target: ProbeTarget
    budget: float
    interrupted: bool
    notes: List[str]
    wall_time_s: float
    simulated_time_s: Optional[float]
    power: ProbePower
    features: Dict[str, Feature]
    jobs: List[ProbeJobRecord]


class ProbeJobError(TypedDict):
    """A probe job's rate, measured and the twin's, and the twin's relative error."""

    job: str
    measured_mbps: float
    twin_mbps: float
    error: float


class PowerFit(TypedDict):
    """The twin's power model fit: the jobs it used, its RMS relative error, the controller's active watts and the
    one scale on the NAND part's energies."""

    jobs: int
    rms_relative_error: float
    active_w: float
    nand_scale: float


class TwinManifest(TypedDict):
    seed: int
    version: str
    command: str
    probe: str
    power_log: Optional[str]
    drive_hash: str


class TwinFitRecord(TypedDict):
    """The fit in twin.json: the sampler's trials and objectives, the pattern search's summary, the structures
    weighed, the fitted objective and worst row, and the calibration rows."""

    trials: int
    sampler: str
    objective_start: float
    objective_sampler: float
    polish: Dict[str, Any]
    structure_recheck: List[StructureRecord]
    objective: float
    worst: float
    interrupted: bool
    rows: List[Dict[str, Any]]


class Reliability(TypedDict):
    """``reliable``: no problem found; ``objective``: the fit's; ``problems``: each one sentence, naming the
    job or feature and by how much the twin misses it."""

    reliable: bool
    objective: float
    problems: List[str]


class TwinSummaryFiles(TypedDict):
    index: str
    twin_page: str
    table: str


class TwinSummaryDoc(TypedDict):
    """twin-summary.json (:func:`ssdlab.twin.report.twin_report`): the run's manifest, whether both sides are one
    drive, the comparison in a few numbers, the internals against the truth, the twin's provenance and reliability,
    and the files beside it."""

    schema: str
    schema_version: int
    manifest: Dict[str, Any]
    same_drive: bool
    summary: ComparisonSummary
    internals: List[InternalRow]
    truth: Optional[Dict[str, Any]]
    provenance: Optional[Provenance]
    reliability: Optional[Reliability]
    files: TwinSummaryFiles


class TwinRecord(TypedDict):
    """twin.json, beside the twin's drive file (:func:`ssdlab.twin.fit_twin`)."""

    schema: str
    schema_version: int
    twin_id: str
    source: str
    manifest: TwinManifest
    fit: TwinFitRecord
    reliability: Reliability
    slc_cache_fit: Optional[SlcFit]
    values: Provenance
    probe_jobs: List[ProbeJobError]
    twin_features: Dict[str, Feature]
    power_fit: Optional[PowerFit]
