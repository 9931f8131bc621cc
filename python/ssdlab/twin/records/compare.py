"""A twin against its original, typed: a recovered value's verdict against the truth, a round trip's row, the
comparison's summary with the device's run-to-run spread, and twin-summary.json."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, TypedDict

from .fit import Provenance, Reliability

__all__ = [
    "Verdict", "InternalRow", "BufferSeen", "Internal", "GcModes", "ReviewTestError", "WorstTest", "RoundTripRow",
    "WorstFigure", "SpreadBlock", "SpreadOutside", "SpreadVerdict", "SummaryBlock", "TestSummary",
    "ComparisonSummary", "TwinSummaryFiles", "TwinSummaryDoc",
]


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
