"""ssdlab twin-report: the truth of a drive's internals, the
figure-by-figure comparison of two reviews, and the command on a hand-made
probe directory (a probe.json fixture with features of our choosing and a
twin.toml copied from a preset with a value changed), quick scale, a few
tests."""

from __future__ import annotations

import csv
import json
import math
import shutil
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from conftest import make_drive
from ssdlab.cli.main import main
from ssdlab.drive import Drive
from ssdlab.results import load_results
from ssdlab.sim import Simulator
from ssdlab.suite import definitions
from ssdlab.twin.report.compare import compare_reviews, summary
from ssdlab.twin.report.truth import INTERNALS, internals_table, truth_of, twin_internals, verdict_of

PRESET_DIR = Path(__file__).resolve().parents[2] / "python" / "ssdlab" / "drives"
TESTS = ["corners-seq-write-128k", "corners-4k-random-read-qd3", "cdm", "storage-bench-heavy-2011"]  # the last: skipped when quick
RAN = [t for t in definitions.test_ids() if t in TESTS[:3]]  # in the suite's order

FEATURES = {
    "dies": {"value": 14, "unit": "", "confidence": "medium", "how": "QD sweep knee"},
    "page_size_bytes": {"value": 8192, "unit": "B", "confidence": "high", "how": "latency against transfer size"},
    "write_buffer_bytes": {"value": 4_000_000, "unit": "B", "confidence": "medium", "how": "bursts after idle"},
    "spare_fraction": {"value": 0.2, "unit": "", "confidence": "low", "how": "GC onset"},
    "data_reduction": {"value": False, "unit": "", "confidence": "high", "how": "compressible against incompressible"},
    "compressible_stored_fraction": {"value": None, "unit": "", "confidence": "none", "how": "the job did not run"},
}


# ---------------------------------------------------------------------------
# truth
# ---------------------------------------------------------------------------


def test_truth_matches_the_engine_geometry_on_every_preset() -> None:
    for pid in Drive.preset_ids():
        d = Drive.load(pid)
        t, g, n = truth_of(d), d.geometry, d.config["nand"]
        assert t["dies"] == g["dies"], pid
        assert t["dies"] == t["dies_total"] - t["reserved_dies"] - (1 if n["raise"] else 0), pid
        assert t["page_size_bytes"] == g["page_size_bytes"] == n["page_size_bytes"], pid
        assert t["raw_bytes"] == g["raw_bytes"], pid
        assert math.isclose(t["spare_fraction"], g["spare_fraction"], rel_tol=1e-12), pid
        assert t["write_buffer_bytes"] == d.config["controller"]["write_buffer_bytes"], pid
        dr = d.config.get("data_reduction") or {}
        assert t["data_reduction"] is bool(dr.get("enabled")), pid
        assert (t["compressible_stored_fraction"] < 1.0) is t["data_reduction"], pid


def test_truth_raise_and_reserved_dies() -> None:
    v3 = truth_of(Drive.load("vertex3-120"))
    assert (v3["dies_total"], v3["parity_dies"], v3["dies"]) == (16, 1, 15)
    assert v3["data_reduction"] is True and v3["compressible_stored_fraction"] == 0.25
    i320 = truth_of(Drive.load("intel320-300"))
    assert i320["dies"] == i320["dies_total"] - 1 - 1  # one reserved die and RAISE-style parity
    g = truth_of(Drive.load("generic-mlc-120"))
    assert (g["dies"], g["page_size_bytes"], g["data_reduction"], g["compressible_stored_fraction"]) == (16, 8192, False, 1.0)


@pytest.mark.parametrize("configured", [0.2, 0.5])
def test_compressible_truth_is_what_the_engine_stores_for_fio_compress_90(configured: float) -> None:
    """The truth of compressible_stored_fraction is measured, not just read:
    fio's buffer_compress_percentage=90 data on a reducing drive stores what
    truth_of says, whatever the drive file's compressible_stored_fraction."""
    d = make_drive()
    d["data_reduction"] = {"enabled": True, "metadata_bytes_per_unit": 64, "compressible_stored_fraction": configured,
                           "repeated_stored_fraction": 0.0, "zeros_stored_fraction": 0.0}
    drive = Drive.load(d)
    r = Simulator(drive).run(rw="write", bs="128k", size="4m", refill_buffers=1, buffer_compress_percentage=90)
    measured = r.data["ssdlab"]["data_reduction_ratio"]
    assert measured == pytest.approx(truth_of(drive)["compressible_stored_fraction"], rel=1e-9)
    plain = Drive.load(make_drive())
    r = Simulator(plain).run(rw="write", bs="128k", size="4m", refill_buffers=1, buffer_compress_percentage=90)
    assert r.data["ssdlab"]["data_reduction_ratio"] == pytest.approx(truth_of(plain)["compressible_stored_fraction"]) == 1.0


def test_verdicts() -> None:
    assert verdict_of(16, 16)["verdict"] == "exact"
    assert verdict_of(16, 15)["verdict"] == "within 10%" and verdict_of(16, 15)["error"] == pytest.approx(-1 / 16)
    assert verdict_of(16, 14)["verdict"] == "missed"
    assert verdict_of(0.145, 0.155)["verdict"] == "within 10%"
    assert verdict_of(0.145, 0.2)["verdict"] == "missed"
    assert verdict_of(True, True)["verdict"] == "exact" and verdict_of(True, False)["verdict"] == "missed"
    assert verdict_of(1.0, None)["verdict"] == "not recovered"
    assert verdict_of(None, 3)["verdict"] == "no truth"


def test_internals_table_against_truth_and_without() -> None:
    truth = truth_of(Drive.load("generic-mlc-120"))
    rows = {r["name"]: r for r in internals_table(FEATURES, truth)}
    assert list(rows) == [n for n, _, _ in INTERNALS]
    assert rows["dies"]["truth"] == 16 and rows["dies"]["recovered"] == 14 and rows["dies"]["verdict"] == "missed"
    assert rows["page_size_bytes"]["verdict"] == "exact"
    assert rows["write_buffer_bytes"]["verdict"] == "within 10%"  # 4.0e6 against 4 MiB
    assert rows["spare_fraction"]["verdict"] == "missed"  # 0.2 against 0.145
    assert rows["data_reduction"]["verdict"] == "exact"
    assert rows["compressible_stored_fraction"]["verdict"] == "not recovered"
    real = {r["name"]: r for r in internals_table(FEATURES, None)}
    assert real["dies"]["verdict"] == "no truth" and real["dies"]["confidence"] == "medium"
    assert internals_table({}, truth)[0]["verdict"] == "not recovered"


# ---------------------------------------------------------------------------
# compare_reviews on two real small reviews
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def two_reviews(reported: Tuple[Path, Path]) -> Tuple[List[Dict[str, Any]], List[Dict[str, Any]]]:
    """The results of the command's two reviews (generic-mlc-120 and its twin with 14 dies), as saved."""
    _, out = reported
    return load_results([str(out / "results" / "generic-mlc-120")]), load_results([str(out / "results" / "generic-mlc-120-twin")])


def test_compare_reviews_of_two_drives(two_reviews: Tuple[List[Dict[str, Any]], List[Dict[str, Any]]]) -> None:
    a, b = two_reviews
    df = compare_reviews(a, b)
    assert list(dict.fromkeys(df["test_id"])) == RAN
    assert df.attrs["skipped"] == [{"test_id": "storage-bench-heavy-2011", "side": "both", "why": "left out of the quick scale"}]
    fig_a = {(d["test"]["id"], f["chart"], f["label"], f["metric"]): f["value"] for d in a for f in d["figures"]}
    fig_b = {(d["test"]["id"], f["chart"], f["label"], f["metric"]): f["value"] for d in b for f in d["figures"]}
    assert len(df) == len(fig_a) == len(fig_b)
    for r in df.to_dict("records"):
        key = (r["test_id"], r["chart"], r["label"], r["metric"])
        assert r["original"] == fig_a[key] and r["twin"] == fig_b[key]
        if r["unit"] == "%":
            assert r["compared"] == "points" and r["error"] == pytest.approx((fig_b[key] - fig_a[key]) / 100)
        else:
            assert r["compared"] == "relative" and r["error"] == pytest.approx(fig_b[key] / fig_a[key] - 1)
        assert r["within_15"] == (abs(r["error"]) <= 0.15)
    assert (df["error"].abs() > 0.01).any()  # different drives
    s = summary(df)
    assert s["overall"]["figures"] == len(df) and [t["test_id"] for t in s["tests"]] == RAN
    for t in s["tests"]:
        sub = df[df["test_id"] == t["test_id"]]
        assert t["within"] == int(sub["within_15"].sum()) and t["median_abs_error"] == pytest.approx(sub["abs_error"].median())
    assert s["overall"]["worst"]["error"] == pytest.approx(df.loc[df["abs_error"].idxmax(), "error"])
    same = compare_reviews(a, a)
    assert (same["error"] == 0).all() and same["within_15"].all() and summary(same)["overall"]["share_within"] == 1.0


def test_compare_reviews_flags_zero_and_missing_originals(two_reviews: Tuple[List[Dict[str, Any]], List[Dict[str, Any]]]) -> None:
    a, b = two_reviews
    a = json.loads(json.dumps(a))
    doc = next(d for d in a if d["test"]["id"] == "corners-seq-write-128k")
    doc["figures"][0]["value"] = 0.0
    doc["figures"][1]["value"] = None
    df = compare_reviews(a, b)
    rows = df[df["test_id"] == "corners-seq-write-128k"].to_dict("records")
    assert rows[0]["compared"] == "absolute" and math.isnan(rows[0]["error"]) and rows[0]["abs_diff"] == rows[0]["twin"]
    assert not rows[0]["within_15"] and "compared by the absolute difference" in rows[0]["note"]
    assert rows[1]["compared"] == "missing" and not rows[1]["within_15"]
    s = summary(df)
    assert s["overall"]["absolute"] == 1 and s["overall"]["missing"] == 1


def test_compare_reviews_takes_a_share_by_its_difference_in_points(two_reviews: Tuple[List[Dict[str, Any]], List[Dict[str, Any]]]) -> None:
    a, b = two_reviews
    a, b = json.loads(json.dumps(a)), json.loads(json.dumps(b))
    da = next(d for d in a if d["test"]["id"] == "corners-seq-write-128k")
    db = next(d for d in b if d["test"]["id"] == "corners-seq-write-128k")
    for doc, flat, falls in ((da, 0.4, 10.0), (db, 0.9, 30.0)):
        doc["figures"][0].update(value=flat, unit="%")
        doc["figures"][1].update(value=falls, unit="%")
    rows = compare_reviews(a, b)
    rows = rows[rows["test_id"] == "corners-seq-write-128k"].to_dict("records")
    # 0.4% against 0.9% of the whole: a 125% relative error, half a point; 10% against 30%: 20 points
    assert rows[0]["compared"] == "points" and rows[0]["error"] == pytest.approx(0.005) and rows[0]["within_15"]
    assert rows[1]["compared"] == "points" and rows[1]["error"] == pytest.approx(0.2) and not rows[1]["within_15"]
    assert summary(compare_reviews(a, b))["overall"]["points"] == 2


def test_compare_reviews_refuses_mixed_inputs(two_reviews: Tuple[List[Dict[str, Any]], List[Dict[str, Any]]]) -> None:
    a, b = two_reviews
    with pytest.raises(ValueError, match="results of 2 drives"):
        compare_reviews(a + b, b)
    full = json.loads(json.dumps(b))
    for d in full:
        d["profile"] = "full"
    with pytest.raises(ValueError, match="quick scale and the twin's of the full"):
        compare_reviews(a, full)


def _scaled(docs: List[Dict[str, Any]], factor: float) -> List[Dict[str, Any]]:
    """A copy of one review's results with every figure that is not a share scaled by ``factor``."""
    out = json.loads(json.dumps(docs))
    for d in out:
        for f in d.get("figures", []):
            if f.get("unit") != "%" and isinstance(f.get("value"), (int, float)):
                f["value"] = f["value"] * factor
    return out


def test_repeated_runs_of_the_original_give_its_spread(two_reviews: Tuple[List[Dict[str, Any]], List[Dict[str, Any]]]) -> None:
    a, _ = two_reviews
    # three runs of a device: 0.9x, 1x and 1.1x; the median run is the original, its spread 10%
    runs = [_scaled(a, 0.9), _scaled(a, 1.1)]
    close = compare_reviews(a, _scaled(a, 1.05), repeats=runs)
    rel = close[close["compared"] == "relative"]
    assert len(rel) and (rel["runs"] == 3).all()
    assert rel["original"].tolist() == pytest.approx(compare_reviews(a, a)[close["compared"] == "relative"]["original"].tolist())
    assert rel["spread"].tolist() == pytest.approx([0.1] * len(rel)) and rel["within_spread"].all()
    verdict = summary(close)["spread"]
    assert verdict["runs"] == 3 and verdict["lands"] is True and "lands within" in verdict["statement"]
    assert summary(close)["overall"]["within_spread"] == len(rel)
    # a twin 50% off everywhere does not land, and the sentence names where
    far = summary(compare_reviews(a, _scaled(a, 1.5), repeats=runs))["spread"]
    assert far["lands"] is False and "does not land" in far["statement"] and "furthest outside: " in far["statement"]
    assert far["outside"] and far["outside"][0]["median_abs_error"] == pytest.approx(0.5)
    # one run: no spread, no verdict
    one = compare_reviews(a, _scaled(a, 1.05))
    assert one["spread"].isna().all() and one["within_spread"].isna().all() and summary(one)["spread"] is None


def test_repeated_runs_must_be_of_one_target(two_reviews: Tuple[List[Dict[str, Any]], List[Dict[str, Any]]]) -> None:
    a, b = two_reviews
    with pytest.raises(ValueError, match="original run 2 is of generic-mlc-120-twin"):
        compare_reviews(a, b, repeats=[b])
    full = json.loads(json.dumps(a))
    for d in full:
        d["profile"] = "full"
    with pytest.raises(ValueError, match="original run 2 is of the full scale"):
        compare_reviews(a, b, repeats=[full])


# ---------------------------------------------------------------------------
# the command
# ---------------------------------------------------------------------------


def _twin_toml(path: Path, changes: Dict[str, str]) -> None:
    """generic-mlc-120's file with lines ``key = ...`` replaced."""
    lines = (PRESET_DIR / "generic-mlc-120.toml").read_text(encoding="utf-8").splitlines()
    out = []
    for line in lines:
        key = line.split("=", 1)[0].strip()
        out.append(f"{key} = {changes[key]}" if key in changes and "=" in line and not line.lstrip().startswith("#") else line)
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


def _probe_dir(d: Path, kind: str = "simulated", twin: Dict[str, str] | None = None) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    target: Dict[str, Any] = {"kind": kind, "drive_id": "generic-mlc-120", "capacity_bytes": 120_000_000_000}
    if kind == "simulated":
        target["drive"] = "generic-mlc-120"
    else:
        target["path"] = "/dev/sdz"
    probe = {"schema": "ssdlab.probe", "schema_version": 1,
             "manifest": {"seed": 1, "version": "test", "command": "ssdlab probe --drive generic-mlc-120 --out DIR", "drive_hash": ""},
             "target": target, "features": FEATURES, "jobs": [], "wall_time_s": 1.0}
    (d / "probe.json").write_text(json.dumps(probe), encoding="utf-8")
    if twin is not None:
        _twin_toml(d / "twin.toml", twin)
        (d / "twin.json").write_text(json.dumps({"values": {
            "nand.channels": {"value": 7, "source": "measured", "why": "dies / packages per channel"},
            "nand.tprog_ns": {"value": 1_300_000, "source": "fitted", "why": "sequential write rate", "residual": 0.02},
            "controller.readahead_bytes": {"value": 0, "source": "assumed", "why": "the generic-2011 profile"}}}), encoding="utf-8")
    return d


FEWER_DIES = {"channels": "7", "user_capacity_bytes": "110_000_000_000", "id": '"generic-mlc-120-twin"',
              "name": '"Twin of the generic MLC 120GB"'}


def _rows(path: Path) -> List[Dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def _run(argv: List[str], capsys: pytest.CaptureFixture[str]) -> Tuple[int, str, str]:
    rc = main(argv)
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


@pytest.fixture(scope="module")
def reported(tmp_path_factory: pytest.TempPathFactory) -> Tuple[Path, Path]:
    base = tmp_path_factory.mktemp("twin")
    pdir = _probe_dir(base / "probe", twin=FEWER_DIES)
    out = base / "report"
    rc = main(["twin-report", str(pdir), "--quick", "--tests", ",".join(TESTS), "--out", str(out), "--jobs", "1"])
    assert rc == 0
    return pdir, out


def test_twin_report_writes_the_table_and_the_pages(reported: Tuple[Path, Path]) -> None:
    pdir, out = reported
    rows = _rows(out / "twin.csv")
    assert {r["test_id"] for r in rows} == set(RAN)
    assert all(r["profile"] == "quick" and r["seed"] == "1" for r in rows)
    errors = [float(r["error"]) for r in rows if r["error"]]
    # 14 dies against 16: the sequential write (NAND-bound) is slower on the twin
    seq = [float(r["error"]) for r in rows if r["test_id"] == "corners-seq-write-128k"]
    assert seq and all(e < -0.05 for e in seq)
    assert any(abs(e) > 0 for e in errors)
    # the figures are those of the two drives' results documents
    orig = load_results([str(out / "results" / "generic-mlc-120")])
    twin = load_results([str(out / "results" / "generic-mlc-120-twin")])
    assert Drive.load(str(pdir / "twin.toml")).hash == twin[0]["drive"]["hash"]
    ref = compare_reviews(orig, twin)
    assert [float(r["error"]) for r in rows] == pytest.approx([float(e) for e in ref["error"]])
    doc = json.loads((out / "twin-summary.json").read_text(encoding="utf-8"))
    man = doc["manifest"]
    assert man["seed"] == 1 and man["ssdlab_version"] and man["command"]
    assert {d["manifest"]["command"] for d in orig + twin} == {man["command"]}
    assert man["profile"] == "quick" and man["tests"] == TESTS and sorted(man["ran"]) == ["generic-mlc-120", "generic-mlc-120-twin"]
    # the internals recovered are the twin's own values (its drive file), scored against the original's
    twin_drive = Drive.load(str(pdir / "twin.toml"))
    assert doc["internals"] == internals_table(twin_internals(twin_drive, FEATURES, doc["provenance"]),
                                               truth_of(Drive.load("generic-mlc-120")))
    assert {r["name"]: r["recovered"] for r in doc["internals"]} == {n: truth_of(twin_drive)[n] for n, _u, _a in INTERNALS}
    assert doc["provenance"]["nand.tprog_ns"]["source"] == "fitted"
    assert doc["summary"]["overall"]["figures"] == len(rows)
    assert [x["test_id"] for x in doc["summary"]["skipped"]] == ["storage-bench-heavy-2011"]
    page = (out / "twin.html").read_text(encoding="utf-8")
    assert "index.html" in page and "Internals" in page and "fitted" in page and "spare_fraction" in page
    index = (out / "index.html").read_text(encoding="utf-8")
    assert 'href="twin.html"' in index and "Twin of the generic MLC 120GB" in index
    assert (out / "charts" / "twin-errors.png").is_file()


def test_twin_report_again_runs_nothing(reported: Tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    pdir, out = reported
    before = (out / "twin.csv").read_text(encoding="utf-8")
    rc, _, err = _run(["twin-report", str(pdir), "--quick", "--tests", ",".join(TESTS), "--out", str(out), "--jobs", "1"], capsys)
    assert rc == 0 and "nothing to run" in err and "done in" not in err
    assert (out / "twin.csv").read_text(encoding="utf-8") == before


def test_twin_equal_to_the_original_has_no_error(reported: Tuple[Path, Path], tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    # the preset itself as the twin (same hash): its saved results are reused, every error is 0
    _, out = reported
    pdir = _probe_dir(tmp_path / "probe")
    shutil.copy(PRESET_DIR / "generic-mlc-120.toml", pdir / "twin.toml")
    out2 = tmp_path / "report"
    shutil.copytree(out / "results" / "generic-mlc-120", out2 / "results" / "generic-mlc-120")
    rc, stdout, err = _run(["twin-report", str(pdir), "--quick", "--tests", ",".join(TESTS), "--out", str(out2)], capsys)
    assert rc == 0, err
    assert "nothing to run" in err
    rows = _rows(out2 / "twin.csv")
    assert rows and all(float(r["error"]) == 0.0 and r["within_15"] == "True" for r in rows)
    assert f"{len(rows)} of {len(rows)} figures within 15%" in stdout
    assert json.loads((out2 / "twin-summary.json").read_text(encoding="utf-8"))["same_drive"] is True


def test_twin_report_of_a_real_target_simulates_the_twin_only(reported: Tuple[Path, Path], tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    # the original's results stand in for 'review --device' results (same schema); one test
    _, out = reported
    pdir = _probe_dir(tmp_path / "probe", kind="block", twin=FEWER_DIES)
    out2 = tmp_path / "report"
    rc, _, err = _run(["twin-report", str(pdir), "--quick", "--tests", "corners-seq-write-128k", "--original",
                       str(out / "results" / "generic-mlc-120"), "--out", str(out2), "--jobs", "1"], capsys)
    assert rc == 0, err
    assert sorted(p.name for p in (out2 / "results").iterdir()) == ["generic-mlc-120-twin"]
    doc = json.loads((out2 / "twin-summary.json").read_text(encoding="utf-8"))
    assert doc["truth"] is None and {r["verdict"] for r in doc["internals"]} <= {"no truth", "not recovered"}
    assert {r["test_id"] for r in doc["summary"]["tests"]} == {"corners-seq-write-128k"}


def test_twin_report_of_several_runs_of_a_real_target_says_if_the_twin_lands(
        reported: Tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # three "runs" of the device: the original's results and two copies 8% slower and faster
    _, out = reported
    src = out / "results" / "generic-mlc-120"
    runs = []
    for n, factor in ((1, 1.0), (2, 0.92), (3, 1.08)):
        d = tmp_path / f"run{n}" / "generic-mlc-120"
        shutil.copytree(src, d)
        for f in d.rglob("*.json"):
            doc = json.loads(f.read_text(encoding="utf-8"))
            if isinstance(doc, dict) and "figures" in doc:
                for fig in doc["figures"]:
                    if fig.get("unit") != "%" and isinstance(fig.get("value"), (int, float)):
                        fig["value"] *= factor
                f.write_text(json.dumps(doc), encoding="utf-8")
        runs.append(str(d))
    pdir = _probe_dir(tmp_path / "probe", kind="file", twin=FEWER_DIES)
    out2 = tmp_path / "report"
    rc, stdout, err = _run(["twin-report", str(pdir), "--quick", "--tests", "corners-seq-write-128k", "--original", *runs,
                            "--out", str(out2), "--jobs", "1"], capsys)
    assert rc == 0, err
    doc = json.loads((out2 / "twin-summary.json").read_text(encoding="utf-8"))
    verdict = doc["summary"]["spread"]
    assert verdict["runs"] == 3 and verdict["median_spread"] == pytest.approx(0.08)
    assert verdict["lands"] is (verdict["median_abs_error_spread"] <= 0.08)
    assert verdict["statement"] in stdout and doc["manifest"]["original"]["runs"] == runs
    assert "device spread" in (out2 / "twin.html").read_text(encoding="utf-8")
    rows = _rows(out2 / "twin.csv")
    assert rows and all(r["runs"] == "3" and r["within_spread"] in ("True", "False") for r in rows if r["unit"] != "%")
    # runs of two targets are refused before anything runs
    other = tmp_path / "other" / "x"
    shutil.copytree(out / "results" / "generic-mlc-120-twin", other)
    rc, _, err = _run(["twin-report", str(pdir), "--quick", "--original", runs[0], str(other), "--out",
                       str(tmp_path / "r2")], capsys)
    assert rc == 2 and "give runs of one target" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("case, needle", [
    ("no-dir", "no such directory"),
    ("no-probe", "has no probe.json"),
    ("other-schema", "schema 'ssdlab.test-result', not 'ssdlab.probe'"),
    ("no-twin", "run 'ssdlab fit --probe"),
    ("missing-twin-flag", "argument --twin"),
    ("real-no-original", "give --original RESULTS_DIR"),
    ("bad-original", "argument --original"),
    ("empty-original", "argument --original: no results files"),
    ("profile-original", "holds results of the quick scale: add --quick"),
])
def test_twin_report_errors_are_one_line(case: str, needle: str, tmp_path: Path, reported: Tuple[Path, Path],
                                         capsys: pytest.CaptureFixture[str]) -> None:
    _, out = reported
    pdir = tmp_path / "probe"
    extra: List[str] = []
    if case == "no-dir":
        pdir = tmp_path / "nope"
    elif case == "no-probe":
        pdir.mkdir()
    elif case == "other-schema":
        pdir.mkdir()
        (pdir / "probe.json").write_text(json.dumps({"schema": "ssdlab.test-result", "schema_version": 1}), encoding="utf-8")
    elif case == "no-twin":
        _probe_dir(pdir)
    elif case == "missing-twin-flag":
        _probe_dir(pdir)
        extra = ["--twin", str(tmp_path / "none.toml")]
    elif case == "real-no-original":
        _probe_dir(pdir, kind="file", twin=FEWER_DIES)
    elif case == "bad-original":
        _probe_dir(pdir, kind="file", twin=FEWER_DIES)
        extra = ["--original", str(tmp_path / "no-results")]
    elif case == "empty-original":
        _probe_dir(pdir, kind="file", twin=FEWER_DIES)
        (tmp_path / "empty").mkdir()
        extra = ["--original", str(tmp_path / "empty")]
    elif case == "profile-original":
        _probe_dir(pdir, kind="file", twin=FEWER_DIES)
        extra = ["--original", str(out / "results" / "generic-mlc-120")]
    argv = ["twin-report", str(pdir), "--out", str(tmp_path / "out"), *extra]
    rc, stdout, err = _run(argv, capsys)
    assert rc == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], err
    assert not (tmp_path / "out" / "results").exists()
