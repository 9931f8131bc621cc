"""The twin's records whose keys are fixed, typed: probe.json (its target,
jobs, power readings and features), twin.json (the fit and where each value
of the twin's drive file came from), a recovered value's verdict against the
truth, and a round trip's row with its internals. They are dicts at run time
(they go to probe.json, twin.json and roundtrip.json as they are); a drive
document (a TOML tree, its sections open to every field the engine takes)
stays a plain mapping."""

from __future__ import annotations

from .compare import (
    BufferSeen,
    ComparisonSummary,
    GcModes,
    Internal,
    InternalRow,
    ReviewTestError,
    RoundTripRow,
    SpreadBlock,
    SpreadOutside,
    SpreadVerdict,
    SummaryBlock,
    TestSummary,
    TwinSummaryDoc,
    TwinSummaryFiles,
    Verdict,
    WorstFigure,
    WorstTest,
)
from .fit import (
    PowerFit,
    Provenance,
    Reliability,
    SlcFit,
    StructureRecord,
    TwinFitRecord,
    TwinManifest,
    TwinRecord,
    ValueSource,
)
from .probe import (
    Feature,
    FigureKey,
    Figures,
    JobFigures,
    PhasePower,
    ProbeDoc,
    ProbeJobError,
    ProbeJobRecord,
    ProbeManifest,
    ProbePower,
    ProbeTarget,
)

__all__ = [
    "BufferSeen", "ComparisonSummary", "Feature", "FigureKey", "Figures", "GcModes", "Internal", "InternalRow",
    "JobFigures", "PhasePower", "PowerFit", "ProbeDoc", "ProbeJobError", "ProbeJobRecord", "ProbeManifest",
    "ProbePower", "ProbeTarget", "Provenance", "Reliability", "ReviewTestError", "RoundTripRow", "SlcFit",
    "SpreadBlock", "SpreadOutside", "SpreadVerdict", "StructureRecord", "SummaryBlock", "TestSummary",
    "TwinFitRecord", "TwinManifest", "TwinRecord", "TwinSummaryDoc", "TwinSummaryFiles", "ValueSource", "Verdict",
    "WorstFigure", "WorstTest",
]
