"""Calibration: every published figure of the presets, run through the suite.

The table (``published.csv`` beside this file; ``--table`` for another one) has
one row per published figure: the preset it concerns, the figure as published
(test, state, data_pattern, iodepth, value, unit, measured or rated, source) and
where the suite measures it (``suite_test``: a test id of
:mod:`ssdlab.suite.definitions`; ``measure``: the label of its measured step).
Calibration runs those tests on the preset with the suite's own runner (only
the runs that hold a wanted step) and compares: a measured figure must land
within 10 %, a rated one (best case) within 15 %, either way. A row whose
note starts ``known miss:`` is an accepted miss (the note gives why): it is
listed as such and does not fail the calibration.

Rows are checked before anything runs; a bad row is one error naming its line
and field. The tests run on :mod:`ssdlab.cluster` (in parallel worker
processes, or on a Dask cluster), each preconditioned state of a drive once.
"""

from __future__ import annotations

import csv
import math
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, TextIO, Tuple

from ..cluster import Runner, TestRequest
from ..drive import Drive
from ..errors import SsdlabError
from ..outputs import atomic_open
from ..textfile import read_text
from .definitions import find_test

__all__ = [
    "TABLE_PATH",
    "TOLERANCE",
    "TABLE_FIELDS",
    "KNOWN_MISS_PREFIX",
    "Published",
    "CalibrationError",
    "load_table",
    "table_from_results",
    "write_table",
    "suite_figure",
    "figure_value",
    "calibrate_drive",
    "requests_for",
    "row_result",
    "calibrate",
]

#: The table shipped with ssdlab: every figure of docs/drives.md
#: (and of its table, tests/data/calibration.csv) that concerns a preset.
TABLE_PATH = Path(__file__).with_name("published.csv")

#: Allowed relative error by kind of figure (measured 10 %, rated 15 %).
TOLERANCE = {"measured": 0.10, "rated": 0.15}

#: A note that starts so marks an accepted known miss; the rest is its reason.
#: A known miss that misses does not fail the calibration; one that lands is
#: simply ok.
KNOWN_MISS_PREFIX = "known miss:"

#: The figure of a suite test that each unit reads.
_UNIT_CHART = {"MB/s": "mbps", "IOPS": "iops"}

#: The figures a whole-drive fill test gives (``summary.fill_figures`` and the pass's average) and their
#: units; a row names one as its measure, after the step's label: ``fill.cache_gb``.
FILL_FIGURES = {"in_cache_mbps": "MB/s", "after_cache_mbps": "MB/s", "cache_gb": "GB", "avg": "MB/s"}


def step_label(measure: str, test: Optional[Mapping[str, Any]]) -> str:
    """The measured step a row's ``measure`` names (a fill figure's row names the figure after it)."""
    if test is not None and test.get("summary") == "fill":
        return measure.split(".", 1)[0]
    return measure

TABLE_FIELDS = [
    "drive_id", "published_drive", "test", "state", "data_pattern", "iodepth", "value", "unit", "kind", "source",
    "suite_test", "measure", "note",
]


class CalibrationError(SsdlabError):
    """A bad calibration table: names the file, line and field."""


@dataclass(frozen=True)
class Published:
    """One published figure and where the suite measures it."""

    line: int
    drive_id: str
    published_drive: str
    test: str
    state: str
    data_pattern: str
    iodepth: str
    value: float
    unit: str
    kind: str
    source: str
    suite_test: str
    measure: str
    note: str

    @property
    def tolerance(self) -> float:
        return TOLERANCE[self.kind]

    @property
    def known_miss(self) -> Optional[str]:
        """The reason this figure is an accepted miss, or None."""
        if self.note.lower().startswith(KNOWN_MISS_PREFIX):
            return self.note[len(KNOWN_MISS_PREFIX):].strip() or "no reason given"
        return None

    def describe(self) -> str:
        data = "" if self.data_pattern in ("", "-") else f", {self.data_pattern}"
        name = self.test.split(" (")[0]
        return f"{name}, QD{self.iodepth}, {self.state}{data}"


def load_table(path: Optional[Path] = None, drives: Optional[Sequence[str]] = None,
               kinds: Optional[Sequence[str]] = None) -> List[Published]:
    """The rows of a table, checked (drives load, tests and measures exist).
    ``drives`` / ``kinds`` keep only those rows (a drive named that no row
    concerns is an error)."""
    path = Path(path) if path is not None else TABLE_PATH
    text = read_text(path, "calibration table (CSV)", lambda f, why: CalibrationError(f"{f}: {why}"))
    reader = csv.DictReader(text.splitlines())
    try:
        records = list(reader)
    except csv.Error as e:
        raise CalibrationError(f"{path}: line {reader.line_num}: not CSV: {e}") from None
    missing = [f for f in TABLE_FIELDS if f not in (reader.fieldnames or [])]
    if missing:
        raise CalibrationError(f"{path}: line 1: missing column(s) {', '.join(missing)}; the columns are {','.join(TABLE_FIELDS)}")
    rows: List[Published] = []
    loaded: Dict[str, bool] = {}
    for i, raw in enumerate(records, start=2):
        def bad(field: str, msg: str, where: str = f"{path}: line {i}") -> CalibrationError:
            return CalibrationError(f"{where}: {field}: {msg}")

        r = {k: (raw.get(k) or "").strip() for k in TABLE_FIELDS}
        if not r["drive_id"]:
            raise bad("drive_id", "empty; give a preset id (see 'ssdlab drives') or a drive file")
        if r["drive_id"] not in loaded:
            try:
                Drive.load(r["drive_id"])
            except SsdlabError as e:
                raise bad("drive_id", str(e)) from None
            loaded[r["drive_id"]] = True
        try:
            value = float(r["value"])
        except ValueError:
            raise bad("value", f"'{r['value']}' is not a number") from None
        if not math.isfinite(value):
            raise bad("value", f"'{r['value']}' is not a finite number")
        if not value > 0:
            raise bad("value", f"{value} must be positive")
        if r["kind"] not in TOLERANCE:
            raise bad("kind", f"'{r['kind']}'; allowed: {', '.join(TOLERANCE)}")
        test = find_test(r["suite_test"])
        if test is None:
            raise bad("suite_test", f"'{r['suite_test']}' is not a test of the suite (see 'ssdlab tests')")
        labels = [s["measure"] for run in test["runs"] for s in run["steps"] if "measure" in s]
        if test["summary"] == "fill":
            label, _, figure = r["measure"].partition(".")
            if label not in labels or figure not in FILL_FIGURES:
                raise bad("measure", f"'{r['measure']}': a fill test's row names a step and a figure, "
                                     f"{labels[0]}.FIGURE with FIGURE one of {', '.join(FILL_FIGURES)}")
            if r["unit"] != FILL_FIGURES[figure]:
                raise bad("unit", f"'{r['unit']}'; {figure} is in {FILL_FIGURES[figure]}")
            rows.append(Published(line=i, value=value, **{k: r[k] for k in TABLE_FIELDS if k != "value"}))
            continue
        if r["unit"] not in _UNIT_CHART:
            raise bad("unit", f"'{r['unit']}'; allowed: {', '.join(_UNIT_CHART)}")
        if r["measure"] not in labels:
            raise bad("measure", f"'{r['measure']}' is not measured by {r['suite_test']}; its measures: {', '.join(labels)}")
        if test["summary"] != "throughput":
            raise bad("suite_test", f"{r['suite_test']} reports {test['summary']} figures; calibration reads throughput and fill tests")
        rows.append(Published(line=i, value=value, **{k: r[k] for k in TABLE_FIELDS if k != "value"}))
    if drives:
        known = {r.drive_id for r in rows}
        for d in drives:
            if d not in known:
                raise CalibrationError(f"argument --drive: no figure of the table concerns '{d}'; drives in it: {', '.join(sorted(known))}")
        rows = [r for r in rows if r.drive_id in drives]
    if kinds:
        rows = [r for r in rows if r.kind in kinds]
    return rows


def table_from_results(docs: Sequence[Mapping[str, Any]], drive_id: str) -> List[Dict[str, str]]:
    """Calibration-table rows (``TABLE_FIELDS``) from measured results
    documents: every throughput figure (MB/s, IOPS) of every suite test in
    ``docs`` (a real drive's results from ``review --device`` or
    ``fio-import``, or any review), to be compared with the simulated
    ``drive_id`` (a preset id or drive file) by ``calibrate --table`` or
    fitted by ``fit --table``. Tests that are not throughput tests of this
    suite are left out, and so are results at the ``quick`` scale (its
    runtimes and spans are shortened; calibrate runs the full one)."""
    rows: List[Dict[str, str]] = []
    for doc in sorted(docs, key=lambda d: (d["drive"]["id"], d["test"]["id"])):
        if doc.get("manifest", {}).get("profile", "full") != "full":
            continue
        test = find_test(doc["test"]["id"])
        if test is None or test["summary"] != "throughput":
            continue
        where = {s["measure"]: (run, s) for run in test["runs"] for s in run["steps"] if "measure" in s}
        for f in doc.get("figures", []):
            unit = f.get("unit")
            if unit not in _UNIT_CHART or f.get("chart") != f"{test['id']}.{_UNIT_CHART[unit]}":
                continue
            value = f.get("value")
            if f.get("label") not in where or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
                continue
            run, step = where[f["label"]]
            m = doc.get("manifest", {})
            rows.append({
                "drive_id": drive_id,
                "published_drive": doc["drive"].get("name") or doc["drive"]["id"],
                "test": f"{test['title']}: {f['label']}",
                "state": str(run.get("state", {}).get("state", "")),
                "data_pattern": str(step.get("data_pattern", "")),
                "iodepth": str(step.get("iodepth", "")),
                "value": repr(float(value)),
                "unit": unit,
                "kind": "measured",
                "source": f"results of {doc['drive']['id']} ({m.get('timestamp', 'no date')}; {m.get('command', 'no command')})",
                "suite_test": test["id"],
                "measure": f["label"],
                "note": "",
            })
    return rows


def write_table(rows: Sequence[Mapping[str, str]], path: Path) -> None:
    """Write calibration-table rows as CSV with the table's columns."""
    with atomic_open(path, newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=TABLE_FIELDS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def suite_figure(doc: Dict[str, Any], test_id: str, label: str, unit: str) -> Optional[float]:
    """A throughput figure (MB/s or IOPS) of a measured step in a test's results."""
    chart = f"{test_id}.{_UNIT_CHART[unit]}"
    for f in doc["figures"]:
        if f["chart"] == chart and f["label"] == label:
            return float(f["value"])
    return None


def figure_value(doc: Dict[str, Any], row: Published) -> Optional[float]:
    """The simulated figure a row compares with, from a test's results."""
    test = find_test(row.suite_test)
    if test is not None and test["summary"] == "fill":
        label, _, figure = row.measure.partition(".")
        for f in doc["figures"]:
            if f["chart"] == f"{row.suite_test}.{figure}" and f["label"] == label:
                return float(f["value"])
        return None
    return suite_figure(doc, row.suite_test, row.measure, row.unit)


def row_result(r: Published, doc: Dict[str, Any], drive_hash: str, seed: int) -> Dict[str, Any]:
    """A row compared with its test's results document."""
    sim = figure_value(doc, r)
    err = None if sim is None else sim / r.value - 1.0
    ok = err is not None and abs(err) <= r.tolerance
    return {
        **asdict(r),
        "simulated": sim,
        "error": err,
        "tolerance": r.tolerance,
        "ok": ok,
        "known_miss": None if ok else r.known_miss,
        "drive_hash": drive_hash,
        "reproduce": f"ssdlab test {r.suite_test} --drive {r.drive_id} --seed {seed}",
        "test_wall_time_s": round(float(doc.get("wall_time_s", 0.0)), 3),
    }


def requests_for(rows: Sequence[Published], seed: int = 1, drives: Optional[Mapping[str, Drive]] = None
                 ) -> Tuple[List[TestRequest], List[List[Published]]]:
    """One suite test request per (drive, test) of the rows (only the measures
    they need) and the rows each answers. ``drives``: the drive to run for a
    drive_id (default: ``Drive.load(drive_id)``; a fit passes changed ones)."""
    groups: Dict[Tuple[str, str], List[Published]] = {}
    for r in rows:
        groups.setdefault((r.drive_id, r.suite_test), []).append(r)
    requests: List[TestRequest] = []
    answered: List[List[Published]] = []
    loaded: Dict[str, Drive] = dict(drives or {})
    for (drive_id, tid), trows in groups.items():
        if drive_id not in loaded:
            loaded[drive_id] = Drive.load(drive_id)
        test = find_test(tid)
        requests.append(TestRequest(loaded[drive_id], tid, seed=seed, only=frozenset(step_label(r.measure, test) for r in trows)))
        answered.append(trows)
    return requests, answered


def calibrate_drive(drive_id: str, rows: Sequence[Published], seed: int = 1) -> List[Dict[str, Any]]:
    """Run, on one drive in this process, the suite tests its rows need (each
    test once, only the wanted runs) and compare. Returns one result dict per row."""
    return calibrate([r for r in rows if r.drive_id == drive_id], jobs=1, seed=seed, stream=None)


def calibrate(rows: Sequence[Published], jobs: Optional[int] = None, seed: int = 1,
              stream: Optional[TextIO] = sys.stderr, scheduler: Optional[str] = None,
              runner: Optional[Runner] = None, drives: Optional[Mapping[str, Drive]] = None,
              progress: Optional[bool] = False) -> List[Dict[str, Any]]:
    """Every row, on the runner (``ssdlab.cluster``: ``jobs`` worker processes,
    default the cores; ``scheduler`` a Dask scheduler's address; or a
    ``runner`` already started); a line on ``stream`` as each drive
    finishes. Results come back in table order. On Ctrl-C the rows whose test
    finished are returned with the others marked ``interrupted`` (``ok``
    False). ``drives``: the drive to run for a drive_id (see :func:`requests_for`)."""
    requests, answered = requests_for(rows, seed, drives)
    tests_left: Dict[str, int] = {}
    for trows in answered:
        tests_left[trows[0].drive_id] = tests_left.get(trows[0].drive_id, 0) + 1
    n_drives = len(tests_left)
    results: Dict[int, Dict[str, Any]] = {}
    t_start = time.perf_counter()
    own = runner is None
    run = runner if runner is not None else Runner(jobs=jobs, scheduler=scheduler, progress=progress)
    try:
        for i, doc in run.run_tests(requests):
            drive = Drive.load(requests[i].drive)
            for r in answered[i]:
                results[r.line] = row_result(r, doc, drive.hash, seed)
            drive_id = answered[i][0].drive_id
            tests_left[drive_id] -= 1
            if stream is not None and tests_left[drive_id] == 0:
                res = [x for x in results.values() if x["drive_id"] == drive_id]
                bad = sum(1 for x in res if not x["ok"])
                done = sum(1 for v in tests_left.values() if v == 0)
                stream.write(f"ssdlab calibrate: {drive_id}: {len(res)} figure(s), {bad} outside tolerance; "
                             f"{done}/{n_drives} drives, {time.perf_counter() - t_start:.1f} s wall\n")
                stream.flush()
    except KeyboardInterrupt:
        for r in rows:
            results.setdefault(r.line, {**asdict(r), "simulated": None, "error": None, "tolerance": r.tolerance,
                                        "ok": False, "known_miss": None, "interrupted": True})
    finally:
        if own:
            run.close()
    return [results[r.line] for r in rows]
