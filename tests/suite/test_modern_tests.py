"""The tests today's reviews run (whole-drive fill, cache recovery, spans,
QD1 latency): defined once, run on a simulated drive and on a real file
through fio, and read the way reviewers read them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from conftest import attached_loop_device, cli_in_process, run_cli
from ssdlab.suite.definitions import default_test_ids, get_test
from ssdlab.suite.summary import fill_figures

MODERN = ("whole-drive-fill", "whole-drive-fill-1m-qd1", "cache-recovery", "random-read-spans", "qd1-latency")


def test_a_fill_curve_with_a_cache_step_gives_the_cache_size_and_both_speeds() -> None:
    # 1 GB intervals: 40 GB at 3,000 MB/s, then 960 GB at 1,500 MB/s with a dip to 800 for folding
    pos = np.arange(1.0, 1001.0)
    rate = np.where(pos <= 40, 3000.0, 1500.0)
    rate[100:110] = 800.0
    f = fill_figures(pos, rate, np.ones_like(pos))
    assert f["cache_gb"] == 40.0 and f["in_cache_mbps"] == 3000.0 and f["after_cache_mbps"] == 1500.0


def test_a_cache_of_a_small_share_of_the_drive_is_still_seen() -> None:
    # 250 MB intervals over 1000 GB: 12 GB (1.2%) at 3,400 MB/s, then 2,100 MB/s
    pos = np.arange(0.25, 1000.25, 0.25)
    rate = np.where(pos <= 12, 3400.0, 2100.0)
    f = fill_figures(pos, rate, np.ones_like(pos))
    assert f["cache_gb"] == 12.0 and f["in_cache_mbps"] == 3400.0 and f["after_cache_mbps"] == 2100.0


def test_a_flat_fill_curve_has_no_cache_and_one_slow_interval_is_no_step() -> None:
    pos = np.arange(1.0, 101.0)
    rate = np.full(100, 500.0)
    rate[30] = 100.0
    f = fill_figures(pos, rate, np.ones_like(pos))
    assert f["cache_gb"] == 0.0 and f["in_cache_mbps"] == f["after_cache_mbps"] == 500.0


def test_the_slowest_full_interval_leaves_out_the_pass_s_short_last_one() -> None:
    """A pass ends within an interval: its last holds a fraction of one, a phase of the drive's cycle (crucial-p1-1000's
    twin: 0.14 s of 0.25 at 48 MB/s, where every full interval after the cache holds 67 MB/s or more)."""
    from types import SimpleNamespace

    from ssdlab.suite.scale import get_scale
    from ssdlab.suite.summary import _curve

    dt = np.array([0.25] * 8 + [0.14])
    mbps = np.array([1750.0, 1750.0, 95.0, 95.0, 71.0, 67.1, 75.5, 67.1, 48.3])
    r = SimpleNamespace(series={"write_bytes": mbps * dt * 1e6, "mbps": mbps, "interval_s": dt},
                        data={"read": {"io_bytes": 0, "bw_bytes": 0.0}, "write": {"io_bytes": 1, "bw_bytes": 5e8}})
    figs, _ = _curve(get_test("whole-drive-fill"), [{"label": "fill", "result": r}], get_scale("quick"))
    slowest = next(f["value"] for f in figs if f["chart"] == "whole-drive-fill.min")
    assert slowest == 67.1
    # an interval of nine tenths of the others is full: fio's log intervals on a real drive wander a little
    r.series["interval_s"] = np.array([0.25] * 8 + [0.23])
    figs, _ = _curve(get_test("whole-drive-fill"), [{"label": "fill", "result": r}], get_scale("quick"))
    assert next(f["value"] for f in figs if f["chart"] == "whole-drive-fill.min") == 48.3


def test_the_modern_tests_are_on_request_and_named_by_their_method() -> None:
    for tid in MODERN:
        t = get_test(tid)
        assert t["on_request"] and t["group"] == "modern" and tid not in default_test_ids()
    assert "AnandTech" in get_test("whole-drive-fill")["about"] and "TechPowerUp" in get_test("whole-drive-fill-1m-qd1")["about"]


@pytest.mark.slow  # over 15 s on 2 cores: the default run stays under 8 minutes
def test_each_modern_test_runs_on_a_simulated_drive(tmp_path: Path) -> None:
    cp = cli_in_process("review", "--drive", "vertex3-120", "--quick", "--jobs", "1", "--tests", *MODERN, "--out", str(tmp_path),
                        timeout=600)
    assert cp.returncode == 0, cp.stderr
    fill = json.loads((tmp_path / "results" / "vertex3-120" / "whole-drive-fill.json").read_text())
    figs = {f["metric"]: f["value"] for f in fill["figures"]}
    assert figs["write cache size GB (0: no step)"] == 0.0  # a 2011 SATA drive writes its MLC directly
    assert 150 < figs["write MB/s (average over the pass)"] < 200
    page = (tmp_path / "index.html").read_text()
    assert "Tests of today" in page and "whole-drive-fill.curve" in page


def test_the_modern_tests_run_through_fio_on_a_file_and_on_a_block_device(tmp_path: Path) -> None:
    if shutil.which("fio") is None:
        pytest.skip("fio is not installed")
    out = tmp_path / "out"
    cp = run_cli("review", "--device", str(tmp_path / "target.dat"), "--size", "256m", "--quick", "--tests", "whole-drive-fill",
                 "qd1-latency", "--out", str(out), timeout=600)
    assert cp.returncode == 0, cp.stderr
    docs = {p.stem: json.loads(p.read_text()) for p in (out / "results").glob("*/*.json")}
    # a file cannot be made clean (no secure erase, no TRIM): the fill says so instead of measuring a used file
    assert "secure-erased" in docs["whole-drive-fill"]["skipped"]
    lat = {(f["label"], f["metric"]): f["value"] for f in docs["qd1-latency"]["figures"]}
    assert lat[("burst", "read IOPS")] > 0 and lat[("sustained", "read IOPS")] > 0
    with attached_loop_device(tmp_path, 256 << 20) as dev:
        out2 = tmp_path / "out2"
        cp = run_cli("review", "--device", dev, "--clean-by-trim", "--quick", "--tests", "whole-drive-fill", "--out", str(out2),
                     timeout=600)
        assert cp.returncode == 0, cp.stderr
        doc = json.loads(next((out2 / "results").glob("*/whole-drive-fill.json")).read_text())
        fill = {f["metric"]: f["value"] for f in doc["figures"]}
        # a loop device may write 256 MiB within one log interval: then no curve to read a cache off (null)
        assert fill["write MB/s (average over the pass)"] > 0 and "write cache size GB (0: no step)" in fill


def test_cache_recovery_idles_keep_their_length_at_every_scale() -> None:
    """The idle is what the test measures (the drive folds its cache in it): the quick scale, which cuts other
    idles to 5%, keeps these, so the labels "after 60 s idle" and "after 10 min idle" hold at every scale."""
    from ssdlab import Simulator
    from ssdlab.backends.sim_runner import SuiteRunner
    from ssdlab.suite.fio import fio_sections
    from ssdlab.suite.scale import QUICK, ScaleSizes

    test = get_test("cache-recovery")
    secs = fio_sections(test, ScaleSizes(1 << 40, QUICK))
    assert [s.options.get("startdelay") for s in secs if s.measure in ("after 60 s idle", "after 10 min idle")] == ["60s", "600s"]
    runner = SuiteRunner("generic-mlc-120", scale=QUICK)
    sim = Simulator("generic-mlc-120")
    idles = [st for st in test["runs"][0]["steps"] if st.get("action") == "idle"]
    assert [runner._step(sim, st, None)[1] for st in idles] == [{"action": "idle", "seconds": 60.0},
                                                                  {"action": "idle", "seconds": 600.0}]
    # an idle that is not the measurement still shrinks with the scale
    assert runner._step(sim, {"action": "idle", "seconds": 60}, None)[1] == {"action": "idle", "seconds": 3.0}


def test_a_sata_link_test_is_skipped_on_an_nvme_drive_with_the_reason() -> None:
    from ssdlab.backends.sim_runner import SuiteRunner
    test = get_test("corners-sata-3g")
    why, runs = SuiteRunner("samsung980-1000").plan(test)
    assert runs == [] and why is not None and "NVMe" in why and "SATA" in why
    why, runs = SuiteRunner("vertex3-120").plan(test)
    assert why is None and runs
