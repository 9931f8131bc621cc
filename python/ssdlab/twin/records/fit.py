"""twin.json, typed: where each value of the twin's drive file came from, the fit's record, the write cache's and
the power model's fits, and whether the twin can be trusted."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, TypedDict

from .probe import Feature, ProbeJobError

__all__ = [
    "ValueSource", "Provenance", "StructureRecord", "SlcFit", "PowerFit", "TwinManifest", "TwinFitRecord",
    "Reliability", "TwinRecord",
]


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


class _StructureRecord(TypedDict):
    fitted: str
    objective: float
    kept: Optional[str]
    others: Dict[str, float]


class StructureRecord(_StructureRecord, total=False):
    """The read-ahead windows (:func:`ssdlab.twin.fit.recheck_window`) and the structures
    (:func:`ssdlab.twin.fit.recheck_structure`) weighed against the fitted twin at its fitted times:
    ``fitted`` the twin's, with its ``objective``; ``others`` each one's; ``contest`` those polished a little;
    ``kept`` the one taken (None: the twin's), the values it ``changed`` and its objective once ``polished``;
    ``flush`` where the flush after the torture chose the buffer among near ties (its ``buffer_bytes``, and the
    candidate the objective alone would have kept: ``instead_of``)."""

    contest: Dict[str, float]
    flush: Dict[str, Any]
    changed: List[str]
    polished: float


class SlcFit(TypedDict):
    """The fit of a twin's write cache (:func:`ssdlab.twin.fit.slc.choose_slc_cache`): what the probe measured, each
    round's values and the twin's cache features, and the kept round's residual."""

    measured: Dict[str, Any]
    rounds: List[Dict[str, Any]]
    residual: float


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


class _TwinChoice(TypedDict, total=False):
    #: The probe's stages left out by choice (``ssdlab probe --stages``), each with what its jobs would have shown:
    #: the twin's values they set stay assumed. Absent where the probe ran every stage.
    stages_left_out: Dict[str, List[str]]


class TwinRecord(_TwinChoice):
    """twin.json, beside the twin's drive file (:func:`ssdlab.twin.fit_twin`)."""

    schema: str
    schema_version: int
    twin_id: str
    source: str
    manifest: TwinManifest
    fit: TwinFitRecord
    reliability: Reliability
    slc_cache_fit: Optional[SlcFit]
    #: The die count weighed on the full drive (:func:`ssdlab.twin.fit.full.choose_full_dies`; None: not modern or
    #: no full stage).
    full_drive_fit: Optional[Dict[str, Any]]
    values: Provenance
    probe_jobs: List[ProbeJobError]
    twin_features: Dict[str, Feature]
    power_fit: Optional[PowerFit]
