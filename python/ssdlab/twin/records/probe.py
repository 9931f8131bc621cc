"""probe.json, typed: what a probe ran on, its jobs' figures and power readings, and the features read from them."""

from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional, TypedDict, Union

__all__ = [
    "PhasePower", "JobFigures", "Figures", "FigureKey", "Feature", "ProbeTarget", "ProbePower", "ProbeManifest",
    "ProbeJobRecord", "ProbeDoc", "ProbeJobError",
]


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


class _ProbeChoice(TypedDict, total=False):
    #: The stages chosen (``ssdlab probe --stages``); absent where the probe ran them all.
    stages: List[str]


class ProbeDoc(_ProbeChoice):
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
