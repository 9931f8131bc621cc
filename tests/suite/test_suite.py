"""The review suite: tests are data covering every METHODOLOGY test; the
``tests``/``test``/``review``/``report`` commands; results files with a
manifest; the report rebuilt from saved results; bar charts best first."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any, Dict, List

import numpy as np
import pytest

from conftest import assert_one_line_error, make_drive, run_cli, small_review_drives
from ssdlab import Drive, Simulator, _core
from ssdlab.backends import SuiteRunner
from ssdlab.report.charts import bar_order
from ssdlab.suite import QUICK, TESTS, default_test_ids, get_test
from ssdlab.suite import definitions as suite_definitions
from ssdlab.suite.definitions import ATTO_SIZES, STATES, SUMMARIES
from ssdlab.suite.scale import Scale
from ssdlab.suite.summary import steady_state

FIO_KEYS = {"rw", "bs", "iodepth", "size", "io_size", "runtime", "data_pattern", "blockalign", "log_avg_msec", "offset", "name",
            "rwmixread", "number_ios"}
ACTIONS = {"trim", "precondition", "idle", "replay"}


def _rows(path: Path) -> List[Dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _steps() -> List[Dict[str, Any]]:
    return [s for t in TESTS for r in t["runs"] for s in r["steps"]]


def test_every_test_is_plain_data_in_fio_vocabulary() -> None:
    assert json.loads(json.dumps(TESTS)) == TESTS
    for t in TESTS:
        assert {"id", "title", "group", "about", "summary", "chart", "runs"} <= set(t), t["id"]
        assert t["summary"] in SUMMARIES
        for run in t["runs"]:
            assert run["state"]["state"] in STATES
            for step in run["steps"]:
                if "action" in step:
                    assert step["action"] in ACTIONS
                else:
                    assert set(step) - {"measure", "x", "line", "source"} <= FIO_KEYS, step
                    assert set(step.get("source", {})) <= {"drive"}, step


def test_every_job_is_accepted_by_the_engine(small_drive: Dict[str, Any]) -> None:
    sim = Simulator(small_drive)
    runner = SuiteRunner(small_drive)
    jobs = [s for s in _steps() if "action" not in s]
    for step in jobs:
        norm = sim.parse_job(runner.resolve_job(step, None))
        assert norm["iodepth"] == step["iodepth"]


def test_the_suite_covers_every_methodology_test() -> None:
    ids = set(suite_definitions.test_ids())
    assert {
        "corners-4k-random-read-qd3", "corners-4k-random-write-qd3", "corners-4k-random-write-qd32",
        "corners-seq-read-128k", "corners-seq-write-128k", "corners-seq-read-qd-sweep", "as-ssd", "atto",
        "atto-qd2", "atto-qd8", "consistency", "trim-validation", "resiliency", "file-copy", "power",
        "storage-bench-heavy-2011", "storage-bench-light-2011", "storage-bench-typical-2010",
        "storage-bench-multitasking-2010", "storage-bench-gaming-2010",
    } <= ids
    # ATTO at QD2 and QD8, the 3Gbps corners, the never-written sweep, the grid and the mix are in a review
    assert {"atto-qd2", "atto-qd8", "corners-sata-3g", "seq-read-unwritten", "cdm", "mixed-70-30", "rated",
            "steady-state"} <= set(default_test_ids())
    sweep = get_test("corners-seq-read-qd-sweep")["runs"][0]["steps"]
    assert [s["iodepth"] for s in sweep] == [1, 2, 4, 8, 16, 32]
    assert ATTO_SIZES[0] == 512 and ATTO_SIZES[-1] == 8 << 20 and len(ATTO_SIZES) == 15
    for tid in ("corners-4k-random-write-qd3", "corners-4k-random-write-qd32", "corners-seq-write-128k"):
        assert sorted(s["data_pattern"] for r in get_test(tid)["runs"] for s in r["steps"]) == ["incompressible", "repeated"]
    cons = get_test("consistency")
    assert [r["steps"][0]["runtime"] for r in cons["runs"]] == ["2000s", "2000s"]
    assert [r["steps"][0].get("size") for r in cons["runs"]] == [None, "75%"]
    as_ssd = get_test("as-ssd")["runs"][0]["steps"]
    assert {s["iodepth"] for s in as_ssd} == {1, 64} and all(s["data_pattern"] == "incompressible" for s in as_ssd)
    trim = [s.get("measure") or s["action"] for s in get_test("trim-validation")["runs"][0]["steps"]]
    assert trim == ["clean", "precondition", "after torture", "after another pass", "trim", "after TRIM"]
    # HD Tach's read pass beside the write passes: the whole drive, read once after a fill
    read_pass = get_test("trim-validation")["runs"][1]
    assert read_pass["state"] == {"state": "filled"} and read_pass["steps"][0]["rw"] == "read"


def test_steady_state_detector() -> None:
    flat = np.full(600, 1000.0) + np.tile([0.0, 50.0], 300)
    s = steady_state(flat, round_n=60)
    assert s["steady"] and s["first_round"] == 0
    ramp = np.linspace(1000, 5000, 600)
    assert not steady_state(ramp, round_n=60)["steady"]


def test_a_fresh_out_of_box_plateau_is_not_the_steady_state() -> None:
    """A drive at its fresh speed for 6 rounds, then falling to a
    fifth of it once the spare area is used, was "steady from round 0"."""
    fresh = np.full(6 * 60, 40_000.0)
    settled = 8_000.0 + np.tile([0.0, 400.0], 12 * 30)
    s = steady_state(np.concatenate([fresh, np.linspace(40_000, 8_000, 60), settled]), round_n=60)
    assert s["steady"] and s["first_round"] >= 7, s["first_round"]
    assert abs(s["window_mean_iops"] - 8_200) < 300


def test_the_snia_steady_state_is_judged_on_one_minute_rounds_only() -> None:
    """A steady state whose rounds of a few seconds vary +-12% (garbage
    collection cycles) passes or fails the 20% range by chance: the quick
    profile's 3-second rounds give no SNIA figure, the full scale's
    1-minute rounds do."""
    from types import SimpleNamespace

    from ssdlab.suite.scale import FULL
    from ssdlab.suite.summary import _consistency

    rng = np.random.default_rng(1)
    test = get_test("consistency")

    def measured(interval_s: float, seconds: float) -> List[Dict[str, Any]]:
        n = int(seconds / interval_s)
        t = np.arange(1, n + 1) * interval_s
        cycle = 7_000 * (1 + 0.12 * np.sin(2 * np.pi * t / 7.0)) + rng.normal(0, 300, n)
        iops = np.where(t < 0.3 * seconds, 85_000.0, cycle)
        series = {"time_s": t.tolist(), "iops": iops.tolist(), "interval_s": [interval_s] * n}
        return [{"label": "default", "result": SimpleNamespace(series=series)}]

    figs, charts = _consistency(test, measured(0.05, 100.0), QUICK)
    assert not [f for f in figs if f["chart"].endswith(".snia")]
    snia = charts["consistency.iops"]["data"]["default"]["snia"]
    assert snia["judged"] is False and "3 s" in snia["why"] and len(snia["rounds"]) == 33
    figs, charts = _consistency(test, measured(1.0, 2000.0), FULL)
    (f,) = [f for f in figs if f["chart"].endswith(".snia")]
    assert 600 <= f["value"] <= 900, f["value"]
    assert "judged" not in charts["consistency.iops"]["data"]["default"]["snia"]


def test_bar_charts_order_drives_best_first() -> None:
    values = {"slow": {"repeated": 10.0, "incompressible": 5.0}, "fast": {"repeated": 30.0, "incompressible": 1.0},
              "mid": {"repeated": 20.0}}
    assert bar_order(values, ["repeated", "incompressible"], higher=True) == ["fast", "mid", "slow"]
    assert bar_order(values, ["repeated", "incompressible"], higher=False) == ["slow", "mid", "fast"]
    assert bar_order({"a": {"x": float("nan")}, "b": {"x": 1.0}}, ["x"], higher=True) == ["b", "a"]


def test_ssdlab_tests_lists_every_id() -> None:
    cp = run_cli("tests")
    assert cp.returncode == 0, cp.stderr
    listed = [line.split()[0] for line in cp.stdout.splitlines()]
    assert listed == suite_definitions.test_ids()


def test_ssdlab_test_prints_figures_and_json(tmp_path: Path) -> None:
    a, _ = small_review_drives(tmp_path)
    cp = run_cli("test", "as-ssd", "--drive", str(a), "--quick")
    assert cp.returncode == 0, cp.stderr
    assert "4K-64Thrd read" in cp.stdout and "MB/s" in cp.stdout
    assert f"reproduce: ssdlab test as-ssd --drive {a} --seed 1 --quick" in cp.stdout
    cp = run_cli("test", "power", "--drive", str(a), "--quick", "--json")
    assert cp.returncode == 0, cp.stderr
    doc = json.loads(cp.stdout)
    assert doc["schema"] == "ssdlab.test-result" and doc["test"]["id"] == "power"
    assert [f["label"] for f in doc["figures"]] == ["idle", "128KB sequential write", "4KB random write QD32"]


@pytest.mark.parametrize(
    "args, needle",
    [
        (["test", "no-such-test"], "unknown test 'no-such-test'"),
        (["test", "as-ssd", "--drive", "no-such-drive"], "no-such-drive"),
        (["review", "--drive", "no-such-drive", "--out", "OUT"], "no-such-drive"),
        (["review", "--drive", "generic-mlc-120", "--tests", "nope", "--out", "OUT"], "unknown test 'nope'"),
        (["report", "MISSING", "--out", "OUT"], "MISSING"),
        (["review", "--drive", "generic-mlc-120", "--drive", "generic-mlc-120", "--out", "OUT"], "given twice"),
    ],
)
def test_bad_input_is_one_line_exit_2(tmp_path: Path, args: List[str], needle: str) -> None:
    args = [str(tmp_path / a) if a in ("OUT", "MISSING") else a for a in args]
    assert_one_line_error(run_cli(*args), needle)


def test_quick_review_writes_results_json_csv_with_manifest(quick_review: Path) -> None:
    for drive in ("small-a", "small-b"):
        d = quick_review / "results" / drive
        assert sorted(p.stem for p in d.glob("*.json")) == sorted(default_test_ids())
        doc = json.loads((d / "corners-4k-random-write-qd3.json").read_text())
        m = doc["manifest"]
        assert {"ssdlab_version", "engine_version", "seed", "drive_id", "drive_hash", "command", "profile"} <= set(m)
        assert m["command"].startswith("ssdlab review") and m["drive_id"] == drive
        job = doc["jobs"][0]
        assert {"read", "write", "trim", "ssdlab", "series"} <= set(job)
        assert {"iops", "bw_bytes", "io_bytes"} <= set(job["write"]) and "percentile" in job["write"]["clat_ns"]
        assert job["ssdlab"]["waf"] > 0 and "power" in job["ssdlab"]
        assert len(job["series"]["iops"]) > 1
        rows = _rows(d / "figures.csv")
        assert {r["test"] for r in rows} <= set(default_test_ids()) and rows
    sb = json.loads((quick_review / "results" / "small-a" / "storage-bench-typical-2010.json").read_text())
    assert {f["chart"].split(".")[-1] for f in sb["figures"]} == {"rate", "busy", "iops"}
    skipped = json.loads((quick_review / "results" / "small-a" / "storage-bench-heavy-2011.json").read_text())
    assert skipped["skipped"] and not skipped["figures"]
    html = (quick_review / "index.html").read_text()
    assert "http://" not in html and "https://" not in html
    for t in default_test_ids():
        assert f"id={t}>" in html or f'id="{t}"' in html


@pytest.mark.slow  # over 15 s on 2 cores: the default run stays under 8 minutes
def test_report_rebuilds_identical_figures_and_merges_runs(quick_review: Path, tmp_path: Path) -> None:
    out = tmp_path / "rebuilt"
    cp = run_cli("report", str(quick_review / "results"), "--out", str(out))
    assert cp.returncode == 0, cp.stderr
    assert (out / "figures.csv").read_text() == (quick_review / "figures.csv").read_text()
    charts = sorted(p.name for p in (quick_review / "charts").iterdir())
    assert charts == sorted(p.name for p in (out / "charts").iterdir())
    for name in charts:
        if name.endswith(".svg"):
            assert (out / "charts" / name).read_bytes() == (quick_review / "charts" / name).read_bytes(), name
    # two runs (one drive each) merge into one report
    merged = tmp_path / "merged"
    cp = run_cli("report", str(quick_review / "results" / "small-a"), str(quick_review / "results" / "small-b" / "as-ssd.json"),
                 "--out", str(merged))
    assert cp.returncode == 0, cp.stderr
    rows = _rows(merged / "figures.csv")
    assert {r["drive"] for r in rows if r["test"] == "as-ssd"} == {"small-a", "small-b"}
    assert {r["drive"] for r in rows if r["test"] == "atto"} == {"small-a"}


def test_a_state_is_preconditioned_once_and_cloned() -> None:
    runner = SuiteRunner(make_drive(), scale=QUICK)
    a, _ = runner.state({"state": "filled"})
    b, _ = runner.state({"state": "filled"})
    assert a is not b and len(runner._states) == 1
    assert a.now_ns == b.now_ns > 0


def test_the_quick_scale_shortens_a_log_interval_only_with_its_job() -> None:
    """A full-span pass is as long in the quick scale as in the full one, so
    its log interval stays the methodology's 1 s (cut to 50 ms with the time
    scale, the slowest interval of the pass was the longest single stall:
    Vertex 2 25nm after the torture 5.2 MB/s, its twin 0); a timed job's
    interval shortens with its runtime."""
    runner = SuiteRunner(make_drive(), scale=QUICK)
    trim = get_test("trim-validation")
    seq = next(s for s in trim["runs"][0]["steps"] if s.get("measure") == "clean")
    read_pass = trim["runs"][1]["steps"][0]
    assert runner.resolve_job(seq, None)["log_avg_msec"] == 1000
    assert runner.resolve_job(read_pass, None)["log_avg_msec"] == 1000
    torture = get_test("consistency")["runs"][0]["steps"][0]
    assert runner.resolve_job(torture, None)["log_avg_msec"] == 50
    assert runner.resolve_job({"rw": "write", "bs": "128k", "io_size": "16g", "log_avg_msec": 1000}, None)[
        "log_avg_msec"] == round(1000 * QUICK.size_scale)
    assert SuiteRunner(make_drive()).resolve_job(torture, None)["log_avg_msec"] == 1000


def test_the_quick_scale_tortures_as_the_full_one_and_measures_the_tortured_drive_as_long() -> None:
    """Cut to 60 s, the torture wrote 0.14-1.00 of a preset's spare area, and
    a 3 s window after it sampled lazy GC's stalls at a random phase (the
    Samsung 840 Pro's steady-state 128KB writes 34-88 MB/s over 2044-2052
    blocks per plane): the quick scale keeps the torture's 20 minutes and
    the methodology's windows on the tortured drive, in the simulator's runner
    and in the fio job file alike, and cuts every other timed job."""
    from ssdlab.suite.fio import fio_sections
    from ssdlab.suite.scale import ScaleSizes

    drive = make_drive()
    runner = SuiteRunner(drive, scale=QUICK)
    assert runner.torture_runtime() == "1200000ms"
    assert SuiteRunner(drive, scale=Scale("cut", time_scale=0.05)).torture_runtime() == "60000ms"
    steady = get_test("steady-state")
    window = steady["runs"][1]["steps"][0]
    assert runner.resolve_job(window, None, steady=True)["runtime"] == "60000ms"
    assert runner.resolve_job(window, None)["runtime"] == "3000ms"
    sizes = ScaleSizes(runner.capacity_bytes, QUICK)
    secs = fio_sections(steady, sizes)
    assert {s.options["runtime"] for s in secs if s.kind == "job" and s.measure is None and "runtime" in s.options} == {
        "1200000ms"}
    assert [s.options["runtime"] for s in secs if s.measure] == ["60000ms"] * 4
    # the consistency test's own 4KB writes are not the tortured state: cut with the rest
    cons = fio_sections(get_test("consistency"), sizes)
    assert {s.options["runtime"] for s in cons if s.measure and "runtime" in s.options} == {"100000ms"}
    # a run that tortures in place (trim-validation: a pass after it) tortures for 20 minutes too
    trim = fio_sections(get_test("trim-validation"), sizes)
    assert "1200000ms" in {s.options.get("runtime") for s in trim if s.kind == "job" and s.measure is None}
    # the simulator runs the windows it measures on the tortured drive at their length
    done = []
    orig = runner._step

    def spy(sim: Any, step: Any, span: Any, steady: bool = False) -> Any:
        done.append((step.get("measure"), steady))
        return None, None

    runner._step = spy  # type: ignore[method-assign]
    runner.execute(None, steady, runner.plan(steady)[1][1])  # type: ignore[arg-type]
    runner._step = orig  # type: ignore[method-assign]
    assert done == [("sequential write", True)]


def test_a_pass_reports_its_first_percentile_beside_its_slowest_interval() -> None:
    """The slowest second of a pass is one garbage-collection stall at a random
    phase (the Vertex 3 120GB's pass after the torture: 10.6-18.6 MB/s at
    2047-2052 blocks per plane): the pass also reports the 1st percentile of
    its full intervals, as the consistency test does, which one stall does not
    move. The part-interval at the end of the pass counts in neither."""
    from types import SimpleNamespace

    from ssdlab.suite import summary

    rng = np.random.default_rng(7)
    mbps = 60 + rng.normal(0, 1, 400)
    mbps[123] = 3.0  # one stall
    mbps[-1] = 0.5  # the last, partial interval
    dt = np.ones(400)
    dt[-1] = 0.1
    moved = mbps * dt * 1e6
    r = SimpleNamespace(series={"write_bytes": moved.tolist(), "mbps": mbps.tolist(), "interval_s": dt.tolist()},
                        data={"write": {"io_bytes": int(moved.sum()), "bw_bytes": 60e6}, "read": {"io_bytes": 0}})
    test = {"id": "trim-validation", "title": "TRIM validation"}
    figs, _ = summary._curve(test, [{"label": "after torture", "result": r}], QUICK)  # type: ignore[arg-type, list-item]
    by = {f["chart"]: f["value"] for f in figs}
    assert by["trim-validation.min"] == 3.0
    p1 = by["trim-validation.p1"]
    assert 55 < p1 < float(np.sort(mbps[:-1])[5]) and p1 == float(np.percentile(mbps[:-1], 1))
    # a second stall moves the minimum, not the 1st percentile by much
    mbps[300] = 1.0
    r.series["mbps"] = mbps.tolist()
    figs, _ = summary._curve(test, [{"label": "after torture", "result": r}], QUICK)  # type: ignore[arg-type, list-item]
    by2 = {f["chart"]: f["value"] for f in figs}
    assert by2["trim-validation.min"] == 1.0 and abs(by2["trim-validation.p1"] - p1) / p1 < 0.05


def test_the_quick_scale_cuts_no_transfer_below_a_gibibyte() -> None:
    """A transfer cut below what the drives' caches hold measures the cache:
    AS-SSD's 1 GiB write stays 1 GiB (cut to 64 MiB, the write buffer of a
    Vertex 4, after the torture it measured the drain of that buffer), larger
    sizes are cut to no less than 1 GiB, and the full scale cuts nothing."""
    assert QUICK.scale_bytes(1 << 30) == 1 << 30
    assert QUICK.scale_bytes(256 << 20) == 256 << 20
    assert QUICK.scale_bytes(8 << 30) == 1 << 30 and QUICK.scale_bytes(32 << 30) == 2 << 30
    runner = SuiteRunner(make_drive(), scale=QUICK)
    as_ssd = next(s for s in get_test("resiliency")["runs"][0]["steps"] if s.get("measure") == "tortured")
    assert runner.resolve_job(as_ssd, None)["io_size"] == min(1 << 30, runner.capacity_bytes)


def test_trimmed_state_is_a_state_then_a_full_trim() -> None:
    runner = SuiteRunner(make_drive(), scale=QUICK)
    dirty, _ = runner.state({"state": "dirty"})
    trimmed, _ = runner.state({"state": "trimmed", "from": "dirty"})
    assert trimmed.history == [] and trimmed.now_ns > dirty.now_ns
    r = trimmed.run(rw="read", bs="4k", iodepth=1, number_ios=10)
    assert r.data["read"]["total_ios"] == 10


FIO_OPTIONS = FIO_KEYS | {"filename", "ioengine", "direct", "group_reporting", "stonewall", "write_iops_log", "time_based",
                          "refill_buffers", "scramble_buffers", "buffer_compress_percentage", "zero_buffers", "exec_prerun",
                          "startdelay", "read_iolog", "replay_redirect", "write_bw_log", "description", "rate"}


def test_every_test_renders_as_an_fio_job_file() -> None:
    from ssdlab.suite.fio import to_fio_jobfile

    for t in TESTS:
        text = to_fio_jobfile(t, device="/dev/sdz")
        keys = {line.split("=", 1)[0] for line in text.splitlines() if "=" in line and not line.startswith(";")}
        assert keys <= FIO_OPTIONS, (t["id"], keys - FIO_OPTIONS)
        measured = [s["measure"] for r in t["runs"] for s in r["steps"] if "measure" in s]
        # a Storage Bench replay is a comment naming its section (ssdlab writes the iolog for the target)
        sections = [line for line in text.splitlines() if line.startswith(("[run", "; [run"))]
        assert len(sections) >= len(measured)
        assert not keys & {"exec_prerun", "read_iolog"}  # neither is run by the job file
    cp = run_cli("test", "corners-4k-random-write-qd3", "--fio", "--filename", "/dev/sdz")
    assert cp.returncode == 0, cp.stderr
    assert "filename=/dev/sdz" in cp.stdout and "scramble_buffers=0" in cp.stdout and "refill_buffers=1" in cp.stdout


def test_the_printed_reproduce_command_gives_the_same_figures(quick_review: Path) -> None:
    doc = json.loads((quick_review / "results" / "small-b" / "consistency.json").read_text())
    cmd = doc["manifest"]["reproduce"].split()
    assert cmd[:3] == ["ssdlab", "test", "consistency"]
    cp = run_cli(*cmd[1:], "--json")
    assert cp.returncode == 0, cp.stderr
    again = json.loads(cp.stdout)
    assert [(f["label"], f["metric"], f["value"]) for f in again["figures"]] == [
        (f["label"], f["metric"], f["value"]) for f in doc["figures"]
    ]


def test_two_drives_with_one_id_are_told_apart_by_hash() -> None:
    from ssdlab.report import chart_values

    docs = [{"drive": {"id": "x", "hash": h * 16}, "charts": {"c": {"type": "bar", "data": {"a": v}}}}
            for h, v in (("1", 1.0), ("2", 2.0))]
    assert sorted(chart_values(docs, "c")) == ["x-11111111", "x-22222222"]
    assert list(chart_values(docs[:1], "c")) == ["x"]


def test_atto_rates_scale_with_transfer_size_and_every_size_moves_its_whole_span() -> None:
    """ATTO runs its file length at every transfer size; a time limit would end a write at any 4KB unit. (The
    quick scale's times and sizes without its 1 GiB floor.)"""
    runner = SuiteRunner("vertex3-120", scale=Scale("quick-unfloored", time_scale=QUICK.time_scale,
                                                        size_scale=QUICK.size_scale, skip=QUICK.skip))
    test = get_test("atto")
    doc = runner.run_test(test)
    rate = {f["label"]: f["value"] for f in doc["figures"]}
    link_mbps = runner.drive.config["host"]["link_bytes_per_s"] / 1e6
    # small transfers are slower, large ones come near the link rate
    for rw in ("write", "read"):
        small, large = rate[f"{rw} 4096"], rate[f"{rw} {8 << 20}"]
        assert small < 0.75 * large, (rw, small, large)
        assert large > 0.8 * link_mbps, (rw, large, link_mbps)
    for job in doc["jobs"]:
        assert "runtime" not in job["job"], job["jobname"]
        assert job["read"]["io_bytes"] + job["write"]["io_bytes"] == job["job"]["io_size"], job["jobname"]


def test_a_size_bound_phase_ends_at_its_last_completion_and_a_time_bound_one_at_its_runtime() -> None:
    """fio ends a job at whichever comes first, its io_size or its runtime; a phase whose transfer ended first
    once still lasted the whole runtime (every ATTO size from 4KB up read and wrote 2 GiB / 10 s)."""
    runner = SuiteRunner("vertex3-120", scale=QUICK)
    sim, span = runner.state({"state": "filled", "span": "1g", "data_pattern": "compressible"})
    for bs, runtime in (("8m", "2s"), ("4k", "50ms")):
        job = {"rw": "write", "bs": bs, "iodepth": 4, "size": span, "io_size": span, "runtime": runtime,
               "data_pattern": "compressible"}
        with_runtime = sim.clone().run(job).data
        without = sim.clone().run({k: v for k, v in job.items() if k != "runtime"}).data
        runtime_ns = _core.parse_duration_ns(runtime, "runtime")
        if with_runtime["write"]["io_bytes"] == span:
            assert bs == "8m"
            assert with_runtime["duration_ns"] == without["duration_ns"] < runtime_ns
            assert with_runtime["write"]["bw_bytes"] == without["write"]["bw_bytes"]
        else:
            assert bs == "4k"
            assert with_runtime["duration_ns"] == runtime_ns < without["duration_ns"]


def test_atto_reads_do_not_turn_on_nanoseconds_of_command_time() -> None:
    """With every size run whole, the data of each size starts on a page boundary: a time limit had left the P1's
    32KB QD2 read at 862 MB/s for 8,300 ns a command and 946 for 8,500 (and 978 for 8,400)."""
    reads = []
    for cost_ns in (8_300, 8_500):
        drive = Drive.load("crucial-p1-1000").with_changes({"controller.command_cost_ns": cost_ns})
        doc = SuiteRunner(drive, scale=QUICK).run_test(get_test("atto-qd2"))
        rate = {f["label"]: f["value"] for f in doc["figures"]}
        reads.append([rate[f"read {kb << 10}"] for kb in (8, 16, 32, 64)])
    for a, b in zip(*reads):
        assert abs(a / b - 1) < 0.03, reads


def _storage_bench_figures(doc: Dict[str, Any]) -> Dict[str, float]:
    return {f"{f['chart'].split('.')[-1]} {f['label']}": f["value"] for f in doc["figures"]}


@pytest.mark.parametrize("full", [False, True])
def test_storage_bench_command_gives_the_same_figures_as_the_suite_test(tmp_path: Path, full: bool) -> None:
    """One definition: `ssdlab storage-bench` and `ssdlab test
    storage-bench-...` ran the same trace two ways (41.6 vs 70.0 MB/s for
    vertex3-120 Heavy 2011); now the command takes the test's state and playback."""
    a, _ = small_review_drives(tmp_path)
    tid = "storage-bench-typical-2010" + ("-full" if full else "")
    cp = run_cli("test", tid, "--drive", str(a), "--seed", "7", "--json")
    assert cp.returncode == 0, cp.stderr
    suite = _storage_bench_figures(json.loads(cp.stdout))
    cp = run_cli("storage-bench", "--bench", "typical-2010", "--drive", str(a), "--seed", "7", "--json",
                 *(["--full"] if full else []))
    assert cp.returncode == 0, cp.stderr
    doc = json.loads(cp.stdout)
    assert doc["manifest"]["storage_bench_test"] == tid
    assert doc["manifest"]["precondition"] == ("filled" if full else "clean")
    assert doc["manifest"]["replay"]["idle_cap"] == "25ms"
    sb = doc["jobs"][-1]["storage_bench"]
    command = {"rate all": sb["data_rate_mb_per_s"], "rate reads": sb["read_data_rate_mb_per_s"],
               "rate writes": sb["write_data_rate_mb_per_s"], "busy all": sb["busy_time_ns"] / 1e9,
               "busy reads": sb["read_busy_time_ns"] / 1e9, "busy writes": sb["write_busy_time_ns"] / 1e9,
               "iops all": sb["iops"]}
    assert command == suite
    # the gaps can still be kept on request: a different run, not the suite test
    cp = run_cli("storage-bench", "--bench", "typical-2010", "--drive", str(a), "--seed", "7", "--json",
                 "--idle-cap", "none", *(["--full"] if full else []))
    assert cp.returncode == 0, cp.stderr
    kept = json.loads(cp.stdout)
    assert "storage_bench_test" not in kept["manifest"] and kept["manifest"]["replay"]["idle_cap"] is None
    assert kept["jobs"][-1]["duration_ns"] > doc["jobs"][-1]["duration_ns"]


def test_storage_bench_runs_on_a_secure_erased_drive_and_the_full_variant_on_a_filled_one() -> None:
    """docs/methodology.md: the 2010 and 2011 traces ran on a secure-erased drive;
    the filled drive (2015) is a separate test, on request, and on a drive
    whose GC works lazily it can only cost data rate."""
    from ssdlab.suite.definitions import STORAGE_BENCH_WORKLOADS

    for workload, _, _ in STORAGE_BENCH_WORKLOADS:
        clean, full = get_test(f"storage-bench-{workload}"), get_test(f"storage-bench-{workload}-full")
        assert clean["runs"][0]["state"] == {"state": "clean"} and not clean["on_request"]
        assert full["runs"][0]["state"] == {"state": "filled"} and full["on_request"]
        for t in (clean, full):
            step = t["runs"][0]["steps"][0]
            assert (step["mode"], step["idle_cap"], step["lay_down_reads"]) == ("as-recorded", "25ms", True)
        assert clean["id"] in default_test_ids() and full["id"] not in default_test_ids()
    drive = make_drive(dies=4, blocks=320, pages=256, drive_id="lazy-gc")
    drive["ftl"]["gc_mode"] = "lazy"
    runner = SuiteRunner(drive, scale=QUICK)
    docs = {v: runner.run_test(get_test(f"storage-bench-typical-2010{v}")) for v in ("", "-full")}
    cap = runner.capacity_bytes
    for v, doc in docs.items():
        ssd = doc["jobs"][0]["ssdlab"]
        before = ssd["smart"]["host_bytes_written"] - ssd["host_bytes_written"]  # written before the trace
        # the erased drive gets only what the trace reads before writing it (the recorded disk held it);
        # the filled one holds everything already
        assert (before == cap) if v else (0 < before < cap), (v, before)
        assert (ssd["gc_bytes_moved"] > 0) == bool(v)  # nothing to collect on the erased drive
    clean, full = (_storage_bench_figures(docs[v]) for v in ("", "-full"))
    for k in ("rate all", "rate reads", "rate writes"):
        assert full[k] <= clean[k], (k, full[k], clean[k])


@pytest.mark.slow  # over 15 s on 2 cores: the default run stays under 8 minutes
def test_the_report_flags_results_made_by_another_description_of_the_test(quick_review: Path, tmp_path: Path) -> None:
    """Results saved before Storage Bench moved to a secure-erased drive keep
    their id; the report says they do not compare instead of mixing them in."""
    from ssdlab.report import build_report
    from ssdlab.results import load_results

    docs = load_results([str(quick_review / "results")])
    sb = [d for d in docs if d["test"]["id"] == "storage-bench-typical-2010"]
    assert len(sb) == 2
    out = tmp_path / "same"
    assert "different description" not in build_report(docs, str(out)).read_text()
    sb[0]["test"]["runs"][0]["state"] = {"state": "filled"}
    page = build_report(docs, str(tmp_path / "old")).read_text()
    assert f"{sb[0]['drive']['name']}: measured with a different description of this test (from the filled state" in page


def test_a_copy_runs_no_faster_than_its_source_reads_on_both_backends() -> None:
    from ssdlab.suite.fio import fio_sections
    from ssdlab.suite.scale import ScaleSizes
    from ssdlab.suite.source import source_read_bytes_per_s

    test = get_test("file-copy")
    rate = source_read_bytes_per_s("x25m-g2-160", "1m", 1, 2**30)
    # the simulated X25-M G2 reads 1MB at QD1 well below a SATA 6Gbps drive's write rate
    assert 100e6 < rate < 250e6
    sizes = ScaleSizes(200 * 10**9, QUICK)
    writes = [s for s in fio_sections(test, sizes) if str(s.measure).startswith("write")]
    assert writes and all("source" not in s.options and s.options["rate"] > 0 for s in writes)
    runner = SuiteRunner("vertex3pro-200", scale=QUICK)
    res = runner.run_test(test, only={"write, clean"})
    job = next(j for j in res["jobs"] if j["jobname"] == "write, clean")
    assert job["job"]["source"]["drive"] == "x25m-g2-160" and job["job"]["rate"] == writes[0].options["rate"]
    mbps = next(f["value"] for f in res["figures"] if f["label"] == "write, clean" and f["unit"] == "MB/s")
    # paced by the source: within 2% of its rate (this drive's own 1MB QD1 writes run above 200 MB/s)
    assert abs(mbps * 1e6 / job["job"]["rate"] - 1) < 0.02
    unpaced = Simulator("vertex3pro-200").run(rw="write", bs="1m", iodepth=1, size="2g", data_pattern="incompressible")
    assert unpaced.bw_mbps > 200
