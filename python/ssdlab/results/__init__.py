"""Results: what a phase produced (fio field names, per-interval series), the
manifest that makes it reproducible, and the documents written from them.

    phase.PhaseResult -> documents (fio-shaped JSON, test results, calibration)
                      -> figures_csv (figures.csv) -> ssdlab.report

Units: MB/s = 10^6 B/s, GB = 10^9 B (reviewers' convention), KB = 1024 B for
transfer sizes (fio's convention); latencies in ns in data, us in summaries.
"""

from .documents import (
    CALIBRATION_SCHEMA,
    SCHEMA_VERSION,
    SPEC_SHEET_SCHEMA,
    TEST_RESULT_SCHEMA,
    calibration_document,
    drive_info,
    finite,
    fio_document,
    load_results,
    results_document,
    save_document,
    write_json,
)
from .figures_csv import CSV_FIELDS, figure_rows, write_figures_csv
from .manifest import command_line, manifest, ssdlab_version
from .phase import PERCENTILE_KEYS, PhaseResult, Series

__all__ = [
    "PhaseResult",
    "Series",
    "PERCENTILE_KEYS",
    "manifest",
    "command_line",
    "ssdlab_version",
    "fio_document",
    "drive_info",
    "results_document",
    "calibration_document",
    "finite",
    "write_json",
    "save_document",
    "load_results",
    "TEST_RESULT_SCHEMA",
    "CALIBRATION_SCHEMA",
    "SPEC_SHEET_SCHEMA",
    "SCHEMA_VERSION",
    "CSV_FIELDS",
    "figure_rows",
    "write_figures_csv",
]
