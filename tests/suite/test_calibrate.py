"""Calibration (`ssdlab calibrate`) and the honest spec sheet (`ssdlab spec`).

The built-in table must hold every published figure of the domain spec
(docs/drives.md; its table is tests/data/calibration.csv), each measured
through a suite test; the comparison must pass and fail as stated; bad tables
are one clear error. The whole table runs as a slow test."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any, Dict, List

import pytest

from conftest import REPO, assert_one_line_error, make_drive, run_cli
from ssdlab import Drive
from ssdlab.backends.sim_runner import SuiteRunner
from ssdlab.suite.calibrate import TABLE_FIELDS, TABLE_PATH, CalibrationError, calibrate, load_table
from ssdlab.suite.definitions import get_test


def _table_rows() -> List[Dict[str, str]]:
    return list(csv.DictReader(TABLE_PATH.read_text(encoding="utf-8").splitlines()))


def test_every_published_figure_of_the_domain_spec_is_in_the_table() -> None:
    # tests/data/calibration.csv: the domain spec's table of every figure of
    # docs/drives.md, kept as it was published (tests/data/README.md); its
    # columns data and qd are data_pattern and iodepth here
    shared = list(csv.DictReader((REPO / "tests" / "data" / "calibration.csv").read_text(encoding="utf-8").splitlines()))
    ours = {(r["published_drive"], r["test"], r["state"], r["data_pattern"], r["iodepth"], float(r["value"]), r["kind"])
            for r in _table_rows()}
    missing = [r for r in shared
               if (r["drive"], r["test"], r["state"], r["data"], r["qd"], float(r["value"]), r["kind"]) not in ours]
    assert not missing, missing


def test_the_table_loads_and_every_row_names_a_preset_and_a_suite_measure() -> None:
    rows = load_table()
    presets = set(Drive.preset_ids())
    assert len(rows) >= 77
    assert {r.drive_id for r in rows} <= presets
    # every preset of a reviewed drive has figures to calibrate against, except
    # those the spec publishes nothing measurable for
    assert {r.drive_id for r in rows} >= {"force-f120", "vertex2-25nm-120", "vertex2-hynix-120", "vertex3pro-200",
                                          "vertex3-120", "vertex3-240", "vertex3-480", "samsung830-256"}
    for r in rows:
        assert r.kind in ("measured", "rated")
        assert r.tolerance == (0.10 if r.kind == "measured" else 0.15)


def _write_table(path: Path, rows: List[Dict[str, Any]]) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=TABLE_FIELDS)
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in TABLE_FIELDS})
    return path


def _row(drive: str, value: Any, kind: str = "measured", **kw: Any) -> Dict[str, Any]:
    row = {"drive_id": drive, "published_drive": "a test drive", "test": "rated sequential write", "state": "clean",
           "data_pattern": "repeated", "iodepth": "32", "value": value, "unit": "MB/s", "kind": kind, "source": "this test",
           "suite_test": "rated", "measure": "sequential write"}
    row.update(kw)
    return row


@pytest.mark.parametrize(
    "change, needle",
    [
        ({"unit": "GB/s"}, "line 2: unit: 'GB/s'; allowed: MB/s, IOPS"),
        ({"kind": "typical"}, "line 2: kind: 'typical'; allowed: measured, rated"),
        ({"value": "fast"}, "line 2: value: 'fast' is not a number"),
        ({"value": "-3"}, "line 2: value: -3.0 must be positive"),
        ({"suite_test": "iometer"}, "line 2: suite_test: 'iometer' is not a test of the suite"),
        ({"measure": "burst"}, "line 2: measure: 'burst' is not measured by rated"),
        ({"drive_id": "no-such-drive"}, "line 2: drive_id:"),
        ({"suite_test": "consistency", "measure": "default"}, "calibration reads throughput and fill tests"),
        ({"suite_test": "whole-drive-fill", "measure": "fill"}, "line 2: measure: 'fill': a fill test's row names a step and a figure"),
        ({"suite_test": "whole-drive-fill", "measure": "fill.cache_gb"}, "line 2: unit: 'MB/s'; cache_gb is in GB"),
    ],
)
def test_a_bad_table_row_is_one_error_naming_line_and_field(tmp_path: Path, small_drive_file: Path,
                                                           change: Dict[str, Any], needle: str) -> None:
    table = _write_table(tmp_path / "t.csv", [{**_row(str(small_drive_file), 100.0), **change}])
    with pytest.raises(CalibrationError, match="t.csv: ") as e:
        load_table(table)
    assert needle in str(e.value)
    cp = run_cli("calibrate", "--table", str(table))
    assert_one_line_error(cp, needle)


def test_a_table_without_a_column_is_refused(tmp_path: Path) -> None:
    table = tmp_path / "t.csv"
    table.write_text("drive_id,value\nforce-f120,1\n")
    assert_one_line_error(run_cli("calibrate", "--table", str(table)), "line 1: missing column(s)", "unit")


def test_calibrate_passes_a_figure_within_tolerance_and_fails_one_outside(tmp_path: Path) -> None:
    drive = tmp_path / "d.json"
    drive.write_text(json.dumps(make_drive(dies=4, blocks=160, pages=128, drive_id="cal-small")))
    # the figure the suite measures for this drive, then a published value 8% below it and one far off
    doc = SuiteRunner(Drive.load(str(drive))).run_test(get_test("rated"), only={"sequential write"})
    measured = next(f["value"] for f in doc["figures"] if f["chart"] == "rated.mbps" and f["label"] == "sequential write")
    assert measured > 0
    near = measured / 1.08
    table = _write_table(tmp_path / "t.csv", [_row(str(drive), near), _row(str(drive), near, kind="rated"),
                                              _row(str(drive), measured / 1.12, kind="rated"),
                                              _row(str(drive), measured / 1.12, kind="measured")])
    res = calibrate(load_table(table), jobs=1, stream=None)
    assert [r["ok"] for r in res] == [True, True, True, False]
    assert res[0]["simulated"] == pytest.approx(measured)
    assert res[0]["error"] == pytest.approx(0.08)
    assert res[3]["error"] == pytest.approx(0.12)

    cp = run_cli("calibrate", "--table", str(table), "--jobs", "1")
    assert cp.returncode == 1, cp.stderr
    assert "3 of 4 figures within tolerance" in cp.stdout
    assert cp.stdout.count(" ok") == 3 and "MISS" in cp.stdout

    known = _write_table(tmp_path / "known.csv", [_row(str(drive), near),
                                                  _row(str(drive), measured / 1.5, note="known miss: a rating the other capacities contradict")])
    cp = run_cli("calibrate", "--table", str(known), "--jobs", "1", "--json")
    assert cp.returncode == 0, "an accepted known miss alone does not fail: " + cp.stderr
    out = json.loads(cp.stdout)
    assert (out["passed"], out["known_misses"], out["failed"]) == (1, 1, 0)
    assert out["results"][1]["known_miss"] == "a rating the other capacities contradict"
    cp = run_cli("calibrate", "--table", str(known), "--jobs", "1")
    assert "1 of 2 figures within tolerance (measured 10%, rated 15%), 1 accepted known miss(es)" in cp.stdout
    assert "known miss: " in cp.stdout and "a rating the other capacities contradict" in cp.stdout and "MISS" not in cp.stdout

    ok_table = _write_table(tmp_path / "ok.csv", [_row(str(drive), near)])
    cp = run_cli("calibrate", "--table", str(ok_table), "--json")
    assert cp.returncode == 0, cp.stderr
    out = json.loads(cp.stdout)
    assert out["passed"] == out["figures"] == 1
    r = out["results"][0]
    assert r["reproduce"].startswith("ssdlab test rated --drive ")
    assert out["manifest"]["seed"] == 1 and "ssdlab_version" in out["manifest"]


def test_calibrate_refuses_a_drive_the_table_does_not_concern() -> None:
    assert_one_line_error(run_cli("calibrate", "--drive", "generic-mlc-120"), "no figure of the table concerns 'generic-mlc-120'")


def test_calibrate_on_one_preset_lands_its_measured_figures() -> None:
    """The SF-1200's measured figures: Iometer both patterns, AS-SSD clean / dirty / after TRIM."""
    cp = run_cli("calibrate", "--drive", "force-f120", "--kind", "measured", "--json", "--jobs", "1", timeout=600)
    out = json.loads(cp.stdout)
    assert out["figures"] == 5
    bad = [(r["describe"], r["simulated"], r["value"]) for r in out["results"] if not r["ok"]]
    assert not bad and cp.returncode == 0, bad


#: Figures of the table no shared mechanism lands yet: (drive, test). The list
#: may only shrink: a listed figure that lands fails the test too
#: (docs/presets.md, "Calibration").
KNOWN_MISSES = {
    # Rated 450 MB/s with reducible data where the 120/240GB are rated 500/520
    # and the model gives the link's 543 on all three; the override that landed
    # it was the rating put in as a write-path ceiling.
    ("vertex3-480", "rated sequential write"),
    # AnandTech's Gen4 host saw a larger cache than its Gen3 host (and than
    # TechPowerUp's QD1 writer); folding while writing SLC cannot free 56 GB
    # in 34 s on dies that program TLC at 82 MB/s.
    ("samsung980pro-1000", "whole-drive fill 128KB QD32: SLC cache size (Gen4 host)"),
    # 82 MB/s a die (ISSCC 2019) on 16 dies programs TLC at 1.31 GB/s at
    # most: below the measured 1.5 GB/s after the cache, and, with about 950
    # GB in TLC by the end of any fill, an average of at most 1.38 GB/s
    # against the measured 1.9 (docs/model.md, "Tried and not adopted").
    ("samsung980pro-1000", "whole-drive fill 1MB QD1: speed after the SLC cache"),
    ("samsung980pro-1000", "whole-drive fill 1MB QD1: average over the fill"),
    # The rating is above the measured in-cache rate that set the profile.
    ("samsung980-1000", "rated sequential write (in the SLC cache)"),
    # No source gives the Samsung 128L part independent plane reads: 16 dies
    # at a 45 us mean tR.
    ("samsung980-1000", "rated 4KB random read QD32"),
    # 12 MB/s a die (assumed; no rate is published for the IMFT QLC die) on
    # 8 dies bounds direct-to-QLC writes; the published figures of the P1
    # (150 and 60 MB/s) and the 660p (100 rated) disagree by 2.5x.
    ("crucial-p1-1000", "whole-drive fill 1MB QD1: speed after the SLC cache (direct to QLC)"),
    ("intel660p-1000", "rated sequential write after the SLC cache (whole-drive fill 128KB QD32)"),
    # The V5 TLC dies (3 x 500 us per one-shot unit) on 32 dies write faster
    # after the cache than Samsung's rating.
    ("samsung970evoplus-1000", "rated sequential write after the SLC cache (whole-drive fill 128KB QD32)"),
    # No source gives the Samsung parts independent plane reads.
    ("samsung970evoplus-1000", "rated 4KB random read QD32"),
    # 18 MB/s a die on 8 dies writes QLC faster than the 870 QVO's rating.
    ("samsung870qvo-1000", "rated sequential write after the SLC cache (whole-drive fill 128KB QD32)"),
    # The MX500's TLC on 32 dies outruns SATA: no step where TechPowerUp saw one.
    ("crucial-mx500-1000", "whole-drive fill 1MB QD1: SLC cache size"),
    ("crucial-mx500-1000", "whole-drive fill 1MB QD1: speed after the SLC cache"),
    # The link, not a DRAM-less bound, sets the SN570's in-cache speed.
    ("wd-sn570-1000", "rated sequential write in the SLC cache (whole-drive fill 128KB QD32)"),
}


@pytest.mark.slow
def test_every_figure_of_the_table_lands_within_tolerance() -> None:
    cp = run_cli("calibrate", "--json", timeout=3600)
    out = json.loads(cp.stdout)
    missed = {(r["drive_id"], r["test"]): (r["simulated"], r["value"], r["error"]) for r in out["results"] if not r["ok"]}
    assert set(missed) == KNOWN_MISSES, "\n".join(f"{k}: {v}" for k, v in missed.items())
    accepted = {(r["drive_id"], r["test"]) for r in out["results"] if r["known_miss"]}
    assert accepted == KNOWN_MISSES, "each known miss is listed in the table with its reason"
    assert out["figures"] == len(load_table()) and cp.returncode == 0, "accepted known misses alone exit 0"


def test_spec_sheet_puts_peaks_beside_steady_state(tmp_path: Path) -> None:
    drive = tmp_path / "d.json"
    drive.write_text(json.dumps(make_drive(dies=4, blocks=160, pages=128, overprovision=1.08, drive_id="spec-small")))
    cp = run_cli("spec", str(drive), "--json", timeout=600)
    assert cp.returncode == 0, cp.stderr
    sheet = json.loads(cp.stdout)
    figs = {f["measure"]: f for f in sheet["figures"]}
    assert set(figs) == {"sequential read", "sequential write", "4KB random read", "4KB random write"}
    for f in figs.values():
        assert f["peak"] > 0 and f["steady_state"] > 0
        assert f["published"] is None
    # a filled, tortured drive writes randomly far slower than a clean one; reads do not suffer that way
    assert figs["4KB random write"]["steady_state"] < 0.7 * figs["4KB random write"]["peak"]
    c = sheet["consistency"]
    assert 0 < c["lowest_1s_iops"] <= c["steady_state_min_iops"] <= c["steady_state_mean_iops"] <= c["peak_1s_iops"]
    assert sheet["manifest"]["seed"] == 1 and sheet["manifest"]["reproduce"].startswith("ssdlab spec ")
    text = run_cli("spec", str(drive), timeout=600)
    assert text.returncode == 0
    assert "box: peak" in text.stdout and "worst second" in text.stdout and "quick scale" not in text.stdout
    assert sheet["manifest"]["profile"] == "full"
    # --quick: the same tests shortened, labelled as a preview wherever the sheet goes
    quick = run_cli("spec", str(drive), "--quick", "--json", timeout=600)
    assert quick.returncode == 0, quick.stderr
    qs = json.loads(quick.stdout)
    assert qs["manifest"]["profile"] == "quick" and qs["manifest"]["reproduce"].endswith(" --quick")
    assert [f["measure"] for f in qs["figures"]] == [f["measure"] for f in sheet["figures"]]
    assert qs["consistency"]["whole_run"] != c["whole_run"]
    from ssdlab.text import format_spec

    assert "quick scale (--quick)" in format_spec(qs)


@pytest.mark.slow  # over 12 s on 2 cores: the default run stays under 8 minutes
def test_spec_of_a_preset_shows_its_published_rating() -> None:
    from ssdlab.suite.spec import spec_sheet

    sheet = spec_sheet("vertex4-64-fw15")
    rated = {f["measure"]: f["published"] for f in sheet["figures"]}
    assert rated["sequential write"]["value"] == 220.0
    assert rated["4KB random read"]["value"] == 70000.0


def test_spec_refuses_an_unknown_drive() -> None:
    assert_one_line_error(run_cli("spec", "no-such-drive"), "no-such-drive")


@pytest.mark.slow
def test_spec_works_for_every_preset() -> None:
    from ssdlab.suite.spec import spec_sheets

    # at the quick scale: the full one's steady state fills every 1 TB modern preset (most of CI's time)
    ids = Drive.preset_ids()
    sheets = dict(zip(ids, spec_sheets(ids, scale="quick")))
    for drive_id, sheet in sheets.items():
        figs = {f["measure"]: f for f in sheet["figures"]}
        for f in figs.values():
            assert f["peak"] > 0 and f["steady_state"] > 0, (drive_id, f)
        # a filled and tortured drive never writes faster than a clean one
        for m in ("sequential write", "4KB random write"):
            assert figs[m]["steady_state"] <= 1.02 * figs[m]["peak"], (drive_id, figs[m])
        # the worst second may be a stall with no completion (lazy GC cleaning whole victims on every die)
        assert 0 <= sheet["consistency"]["lowest_1s_iops"] <= figs["4KB random write"]["peak"], drive_id
        c = sheet["consistency"]
        assert c["lowest_1s_iops"] <= c["steady_state_min_iops"] <= c["steady_state_mean_iops"] <= c["peak_1s_iops"], drive_id


def test_measured_results_become_a_table_that_calibrate_and_fit_read(tmp_path: Path) -> None:
    """Results measured elsewhere (here a simulated 'real' drive's, as
    fio-import or review --device write them) become a calibration table of
    another drive file; calibrate compares figure by figure; --quick results are left out."""
    real = tmp_path / "real.json"
    real.write_text(json.dumps(make_drive(dies=4, blocks=160, pages=128, drive_id="real-lab")))
    twin_cfg = make_drive(dies=4, blocks=160, pages=128, drive_id="twin")
    twin_cfg["nand"]["tprog_ns"] *= 2  # a twin with programs twice as slow
    twin = tmp_path / "twin.json"
    twin.write_text(json.dumps(twin_cfg))
    res = tmp_path / "res"
    for test in ("corners-4k-random-read-qd3", "rated"):
        cp = run_cli("test", test, "--drive", str(real), "--output", str(res / f"{test}.json"))
        assert cp.returncode == 0, cp.stderr
    cp = run_cli("test", "corners-seq-write-128k", "--drive", str(real), "--quick", "--output", str(res / "quick.json"))
    assert cp.returncode == 0, cp.stderr

    cp = run_cli("table", str(res), "--drive", str(twin), "--out", str(tmp_path / "t.csv"))
    assert cp.returncode == 0, cp.stderr
    assert "1 result(s) of the quick scale left out" in cp.stderr
    rows = load_table(tmp_path / "t.csv")
    assert {r.suite_test for r in rows} == {"corners-4k-random-read-qd3", "rated"}
    assert all(r.drive_id == str(twin) and r.kind == "measured" for r in rows)
    # the same drive reproduces its own figures exactly; the slower twin misses the write figures only
    same = calibrate([r.__class__(**{**r.__dict__, "drive_id": str(real)}) for r in rows], jobs=1, stream=None)
    assert all(abs(r["error"]) < 1e-9 for r in same)
    out = calibrate(rows, jobs=1, stream=None)
    writes = [r for r in out if "write" in r["measure"]]
    reads = [r for r in out if "read" in r["measure"]]
    assert writes and all(r["error"] < -0.10 for r in writes), [(r["measure"], r["error"]) for r in writes]
    assert reads and all(abs(r["error"]) < 0.10 for r in reads), [(r["measure"], r["error"]) for r in reads]

    only_quick = tmp_path / "q"
    only_quick.mkdir()
    (only_quick / "quick.json").write_text((res / "quick.json").read_text())
    cp = run_cli("table", str(only_quick), "--drive", str(twin), "--out", str(tmp_path / "q.csv"))
    assert_one_line_error(cp, "--quick")
