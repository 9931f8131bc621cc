"""Results documents (docs/results-schema.md): their schemas, how they are
built from phases and tests, written (atomically, NaN as null) and read back.

- ``ssdlab run`` / ``replay`` / ``storage-bench``: fio-shaped JSON
  (:func:`fio_document`);
- a suite test: ``ssdlab.test-result`` (:func:`results_document`), one
  file per drive and test in a review, read back by :func:`load_results`;
- ``ssdlab calibrate``: ``ssdlab.calibration`` (:func:`calibration_document`);
- ``ssdlab spec``: ``ssdlab.spec-sheet`` (built by ``ssdlab.suite.spec``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import IO, Any, Dict, List, Mapping, Sequence

from ..drive import Drive
from ..outputs import write_text
from .manifest import ssdlab_version
from .phase import PhaseResult

__all__ = [
    "TEST_RESULT_SCHEMA",
    "CALIBRATION_SCHEMA",
    "SPEC_SHEET_SCHEMA",
    "SCHEMA_VERSION",
    "fio_document",
    "drive_info",
    "results_document",
    "calibration_document",
    "finite",
    "write_json",
    "save_document",
    "load_results",
]

TEST_RESULT_SCHEMA = "ssdlab.test-result"
CALIBRATION_SCHEMA = "ssdlab.calibration"
SPEC_SHEET_SCHEMA = "ssdlab.spec-sheet"
#: Every schema is at version 1 (incremented on incompatible changes).
SCHEMA_VERSION = 1


def fio_document(
    jobs: Sequence[PhaseResult],
    man: Dict[str, Any],
    phases: Sequence[PhaseResult] = (),
    series: bool = True,
) -> Dict[str, Any]:
    """fio-shaped JSON: ``{"fio_version": null, "ssdlab_version", "manifest",
    "jobs": [...], "phases": [...]}``; ``phases`` lists every phase in order
    (preconditioning, the job, idle) without series."""
    return {
        "fio_version": None,
        "ssdlab_version": man.get("ssdlab_version", ssdlab_version()),
        "manifest": man,
        "jobs": [j.to_dict(series=series) for j in jobs],
        "phases": [
            {
                "jobname": p.name,
                "kind": p.kind,
                "duration_ns": p.data["duration_ns"],
                "interrupted": p.interrupted,
                "wall_time_s": round(p.wall_time_s, 3),
                "iops": p.iops,
                "bw_bytes": p.data["read"]["bw_bytes"] + p.data["write"]["bw_bytes"],
                "waf": p.waf,
            }
            for p in phases
        ],
    }


def drive_info(drive: Drive) -> Dict[str, Any]:
    """The drive as the report describes it: identity, configuration and geometry."""
    return {
        "id": drive.id,
        "name": drive.name,
        "description": drive.description,
        "hash": drive.hash,
        "capacity_bytes": drive.capacity_bytes,
        "config": drive.config,
        "geometry": drive.geometry,
        "changes": dict(drive.changes or {}),
    }


def results_document(man: Dict[str, Any], drive: Drive, test_output: Mapping[str, Any]) -> Dict[str, Any]:
    """A suite test's results document: the schema, the manifest, the drive,
    then what the runner produced (test, skipped, figures, charts, jobs...)."""
    return {"schema": TEST_RESULT_SCHEMA, "schema_version": SCHEMA_VERSION, "manifest": man,
            "drive": drive_info(drive), **test_output}


def calibration_document(man: Dict[str, Any], results: Sequence[Dict[str, Any]]) -> Dict[str, Any]:
    """``ssdlab calibrate``'s results: one manifest for the table, one row per figure."""
    return {
        "schema": CALIBRATION_SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "manifest": man,
        "passed": sum(1 for x in results if x["ok"]),
        "known_misses": sum(1 for x in results if not x["ok"] and x.get("known_miss")),
        "failed": sum(1 for x in results if not x["ok"] and not x.get("known_miss")),
        "figures": len(results),
        "results": list(results),
    }


def finite(o: Any) -> Any:
    """NaN and infinities as None (JSON null), recursively."""
    if isinstance(o, float) and not math.isfinite(o):
        return None
    if isinstance(o, dict):
        return {k: finite(v) for k, v in o.items()}
    if isinstance(o, list):
        return [finite(v) for v in o]
    return o


def _json_default(o: Any) -> Any:
    if hasattr(o, "tolist"):
        return o.tolist()
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def write_json(doc: Any, out: IO[str]) -> None:
    """A document as indented JSON (numpy arrays as lists; NaN refused)."""
    out.write(json.dumps(doc, indent=2, allow_nan=False, default=_json_default))
    out.write("\n")
    out.flush()


def save_document(doc: Dict[str, Any], path: Path) -> None:
    """Write atomically (a finished test is never left half-written)."""
    write_text(path, json.dumps(finite(doc), allow_nan=False))


def load_results(paths: Sequence[str]) -> List[Dict[str, Any]]:
    """Test results documents from files and directories (searched recursively
    for ``*.json`` of this schema). Later documents of the same drive (hash) and
    test replace earlier ones, so several runs merge."""
    files: List[Path] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            files.extend(sorted(path.rglob("*.json")))
        elif path.is_file():
            files.append(path)
        else:
            raise FileNotFoundError(f"{p}: no such results file or directory")
    docs: Dict[Any, Dict[str, Any]] = {}
    for f in files:
        try:
            doc = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise ValueError(f"{f}: not a results file ({e})") from None
        if not isinstance(doc, dict) or doc.get("schema") != TEST_RESULT_SCHEMA:
            continue
        if doc.get("schema_version") != SCHEMA_VERSION:
            raise ValueError(f"{f}: schema_version {doc.get('schema_version')} (this ssdlab reads {SCHEMA_VERSION})")
        docs[(doc["drive"]["hash"], doc["drive"]["id"], doc["test"]["id"])] = doc
    if not docs:
        raise ValueError(f"no results files (schema {TEST_RESULT_SCHEMA}) in {', '.join(paths)}")
    return list(docs.values())
