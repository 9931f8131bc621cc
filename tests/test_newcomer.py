"""What a newcomer reads: each figure says what it is, each message says
what to do. Short runs through the command line, as a first user types them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import TRACES_DIR, assert_one_line_error, cli_in_process
from ssdlab.sweep import figure_column

MSR = str(TRACES_DIR / "msr_cambridge_hm0_sample" / "msr-cambridge1-sample.csv")


def test_set_names_every_section_a_drive_has() -> None:
    line = assert_one_line_error(cli_in_process("run", "--set", "foo.bar=1", "--rw", "read", "--runtime", "1s"), "foo")
    for section in ("drive", "host", "controller", "nand", "ftl", "power", "data_reduction"):
        assert section in line, line
    assert_one_line_error(cli_in_process("run", "--set", "nand.foo.bar=1", "--rw", "read", "--runtime", "1s"),
                          "'nand' has fields, not sections")


@pytest.mark.slow  # over 12 s on 2 cores: the default run stays under 8 minutes
def test_the_consistency_minimum_names_its_window_and_a_quick_run_says_it_is_not_the_full_test() -> None:
    cp = cli_in_process("test", "consistency", "--quick", timeout=120)
    assert cp.returncode == 0, cp.stderr
    mins = [ln for ln in cp.stdout.splitlines() if " min_iops " in ln]
    assert mins and all(re.search(r"\[0\.05-s intervals, steady state t > 70 s of 100 s\]", ln) for ln in mins), mins
    peaks = [ln for ln in cp.stdout.splitlines() if " peak_iops " in ln]
    assert peaks and all("whole run 0-100 s" in ln for ln in peaks), peaks
    assert "not comparable with the full scale" in cp.stdout


def test_a_quick_review_logs_left_out_tests_as_left_out(tmp_path: Path) -> None:
    cp = cli_in_process("review", "--drive", "generic-mlc-120", "--quick", "--tests", "as-ssd", "storage-bench-heavy-2011",
                        "--jobs", "1", "--out", str(tmp_path / "r"), timeout=120)
    assert cp.returncode == 0, cp.stderr
    assert "storage-bench-heavy-2011 left out of the quick scale" in cp.stderr
    assert "done in 0.0 s" not in cp.stderr


def test_a_replay_says_storage_bench_only_for_storage_bench_traces_and_data_reduction_only_where_there_is_some() -> None:
    cp = cli_in_process("replay", MSR, "--drive", "generic-mlc-120", timeout=60)
    assert cp.returncode == 0, cp.stderr
    assert "Storage Bench" not in cp.stdout and "data rate" in cp.stdout
    waf = next(ln for ln in cp.stdout.splitlines() if "WAF" in ln)
    assert "data reduction" not in waf and "overwritten in the write buffer" in waf, waf
    sb = cli_in_process("replay", "--generated", "light-2011", "--number-ios", "2000", "--drive", "generic-mlc-120", timeout=60)
    assert "Storage Bench: data rate" in sb.stdout


def test_a_read_only_run_has_no_write_amplification_figure() -> None:
    cp = cli_in_process("run", "--rw", "randread", "--runtime", "100ms", timeout=60)
    waf = next(ln for ln in cp.stdout.splitlines() if "WAF" in ln)
    assert waf.strip().startswith("WAF - (the host wrote nothing)"), waf


def test_trace_stats_size_mix_is_shares_in_every_column() -> None:
    cp = cli_in_process("trace", "stats", MSR, timeout=60)
    assert cp.returncode == 0, cp.stderr
    rows = cp.stdout.split("size mix")[1].splitlines()[1:11]
    for row in rows:
        assert row.count("%") == 3, row


def test_a_sweep_column_names_its_unit_once() -> None:
    assert figure_column({"label": "x", "metric": "write MB/s", "unit": "MB/s"}, 1) == "write MB/s"
    assert figure_column({"label": "default", "metric": "mean_iops", "unit": "IOPS"}, 2) == "default: mean_iops (IOPS)"


def test_jobs_help_says_the_default_and_the_most_apart() -> None:
    cp = cli_in_process("calibrate", "--help")
    text = " ".join(cp.stdout.split())
    assert "default one per core; the most allowed is 4 x the cores" in text


def test_a_share_never_rounds_a_miss_up_to_all() -> None:
    from ssdlab.text import share_percent

    assert share_percent(247 / 248) == "99.5%" and share_percent(1.0) == "100%" and share_percent(1 / 1000) == "0.1%"


def test_calibrate_prints_every_label_whole() -> None:
    from ssdlab.text import format_calibration

    long = "AS-SSD sequential write, QD1, dirty then full TRIM, incompressible, after the second pass"
    row = {"drive_id": "my-drive.toml", "describe": long, "kind": "measured", "value": 71.0, "simulated": 71.0, "unit": "MB/s",
           "error": 0.0, "tolerance": 0.1, "ok": True}
    text = format_calibration({"results": [row], "passed": 1, "figures": 1, "manifest": {"seed": 1}})
    assert f"{long} [measured]" in text
