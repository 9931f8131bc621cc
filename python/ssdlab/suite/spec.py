"""The honest spec sheet: what a box says (rated-style peaks) beside what the
drive keeps up (steady-state figures after fill and torture, incompressible)
and the lowest one-second IOPS of the performance-consistency test.

Every figure comes from the suite's own tests (``rated``, ``steady-state``,
``consistency``) run by the suite's runner; the published rating, where the
calibration table has one for the drive, is printed beside them.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Dict, List, Optional

from ..drive import Drive, DriveSpec
from ..results import manifest as _manifest
from .calibrate import Published, load_table, suite_figure
from .definitions import get_test
from .profile import FULL
from .runner import SuiteRunner

__all__ = ["SPEC_FIGURES", "spec_sheet", "format_spec"]

#: (measure label of the rated / steady-state tests, unit, label on the sheet).
SPEC_FIGURES = [
    ("sequential read", "MB/s", "Sequential read, 128KB QD32"),
    ("sequential write", "MB/s", "Sequential write, 128KB QD32"),
    ("4KB random read", "IOPS", "4KB random read, QD32"),
    ("4KB random write", "IOPS", "4KB random write, QD32"),
]

def spec_sheet(drive: DriveSpec, seed: int = 1, progress: Optional[Callable[[str, float], None]] = None,
               command: Optional[str] = None) -> Dict[str, Any]:
    """Run the spec tests on a drive and return the sheet (JSON-ready)."""
    d = Drive.load(drive)
    t0 = time.perf_counter()
    runner = SuiteRunner(d, seed=seed, profile=FULL, progress=progress)
    rated = runner.run_test(get_test("rated"))
    steady = runner.run_test(get_test("steady-state"))
    consistency = runner.run_test(get_test("consistency"), only={"default"})
    published: List[Published] = [r for r in load_table() if r.drive_id == d.id and r.suite_test == "rated"]
    rows = []
    for label, unit, title in SPEC_FIGURES:
        peak = suite_figure(rated, "rated", label, unit)
        low = suite_figure(steady, "steady-state", label, unit)
        pub = next((p for p in published if p.measure == label), None)
        rows.append({
            "figure": title,
            "measure": label,
            "unit": unit,
            "peak": peak,
            "steady_state": low,
            "steady_over_peak": (low / peak) if peak and low is not None else None,
            "published": None if pub is None else {
                "value": pub.value, "source": pub.source, "drive": pub.published_drive, "note": pub.note,
                "error": (peak / pub.value - 1.0) if peak is not None else None,
            },
        })
    job = next(j for j in consistency["jobs"] if j["jobname"] == "default")
    iops = [float(x) for x in job["series"]["iops"]]
    cfig = {f["metric"]: f["value"] for f in consistency["figures"] if f["label"] == "default"}
    return {
        "schema": "ssdlab.spec-sheet",
        "schema_version": 1,
        "manifest": _manifest(seed=seed, drive_id=d.id, drive_hash=d.hash, command=command, drive_changes=d.changes,
                              extra={"reproduce": f"ssdlab spec {drive if isinstance(drive, str) else d.id} --seed {seed}"}),
        "drive": {"id": d.id, "name": d.name, "hash": d.hash, "capacity_bytes": d.capacity_bytes},
        "conditions": {
            "peak": get_test("rated")["about"],
            "steady_state": get_test("steady-state")["about"],
            "consistency": get_test("consistency")["about"],
        },
        "figures": rows,
        "consistency": {
            "lowest_1s_iops": min(iops) if iops else None,
            "steady_state_min_iops": cfig.get("min_iops"),
            "steady_state_mean_iops": cfig.get("mean_iops"),
            "peak_1s_iops": cfig.get("peak_iops"),
        },
        "wall_time_s": round(time.perf_counter() - t0, 3),
    }


def _fmt(v: Optional[float], unit: str) -> str:
    if v is None:
        return "-"
    return f"{v:,.0f} {unit}" if unit == "IOPS" else f"{v:,.1f} {unit}"


def format_spec(sheet: Dict[str, Any]) -> str:
    d = sheet["drive"]
    m = sheet["manifest"]
    lines = [
        f"{d['name']}  [{d['id']} {d['hash'][:16]}]  {d['capacity_bytes'] / 1e9:.0f} GB  seed {m['seed']}",
        "",
        f"{'':<30} {'box: peak':>16} {'steady state':>16} {'ratio':>6}   published rating",
    ]
    for r in sheet["figures"]:
        ratio = "-" if r["steady_over_peak"] is None else f"{r['steady_over_peak']:.2f}"
        pub = "-"
        if r["published"] is not None:
            p = r["published"]
            err = "" if p["error"] is None else f" (peak {100 * p['error']:+.1f}%)"
            pub = f"{_fmt(p['value'], r['unit'])}{err}, {p['source']}"
        lines.append(f"{r['figure']:<30} {_fmt(r['peak'], r['unit']):>16} {_fmt(r['steady_state'], r['unit']):>16} {ratio:>6}   {pub}")
    c = sheet["consistency"]
    lines += [
        f"{'4KB random write, worst second':<30} {'':>16} {_fmt(c['lowest_1s_iops'], 'IOPS'):>16}"
        f"          lowest 1-s IOPS of the 2000 s consistency test (steady-state mean {_fmt(c['steady_state_mean_iops'], 'IOPS')})",
        "",
        "peak: best case as vendors rated: clean drive, repeated data (deduplicated by a SandForce controller);",
        "  sequential reads of 8GB written that way, random reads of an 8GB span filled with incompressible data; QD32, 60 s.",
        "steady state: filled, then 20 min of 4KB random writes; incompressible data, QD32, 60 s, whole drive.",
        "units: MB/s = 1e6 B/s, GB = 1e9 B, KB = 1024 B",
        f"reproduce: {m['reproduce']}",
    ]
    return "\n".join(lines)
