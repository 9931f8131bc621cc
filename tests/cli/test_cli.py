"""The ``ssdlab`` command as a user types it: summaries, fio-shaped JSON with
a manifest, one-line errors with exit 2, Ctrl-C with exit 130."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Iterator

import pytest

from conftest import assert_one_line_error, run_cli, ssdlab_command

JOB = ["--rw", "randwrite", "--bs", "4k", "--iodepth", "32", "--runtime", "1s"]


def test_run_prints_a_readable_summary(small_drive_file: Path) -> None:
    cp = run_cli("run", "--drive", str(small_drive_file), "--precondition", "filled", *JOB)
    assert cp.returncode == 0, cp.stderr
    out = cp.stdout
    for needle in ("write IOPS", "MB/s", "latency (us): p50", "p99.9", "max", "WAF", "NAND programmed",
                   "GC victims", "wear: erase count", "power: average", "busy time", "simulated 1.000 s", "wall",
                   "precondition: sequential fill 128KB QD32"):
        assert needle in out, needle
    assert f"reproduce: ssdlab run --drive {small_drive_file}" in out and "--seed 1" in out
    assert cp.stderr == ""  # no progress bar when stderr is not a terminal


def test_run_json_is_fio_shaped_with_a_manifest(small_drive_file: Path, tmp_path: Path) -> None:
    out_file = tmp_path / "r.json"
    cp = run_cli("run", "--drive", str(small_drive_file), *JOB, "--seed", "9", "--json", "--output", str(out_file))
    assert cp.returncode == 0, cp.stderr
    doc = json.loads(cp.stdout)
    assert json.loads(out_file.read_text()) == doc
    assert doc["fio_version"] is None and doc["ssdlab_version"]
    job = doc["jobs"][0]
    assert job["jobname"] == "randwrite"
    for d in ("read", "write", "trim"):
        assert {"iops", "bw_bytes", "io_bytes", "clat_ns"} <= job[d].keys()
    assert "99.900000" in job["write"]["clat_ns"]["percentile"]
    assert job["write"]["iops"] > 0 and "waf" in job["ssdlab"]
    assert len(job["series"]["iops"]) == len(job["series"]["time_ns"]) == 1
    m = doc["manifest"]
    assert m["seed"] == 9 and m["ssdlab_version"] == doc["ssdlab_version"] and m["engine_version"]
    assert m["drive_id"] == "test-small" and len(m["drive_hash"]) == 16
    assert m["command"].startswith("ssdlab run --drive ") and "--seed 9" in m["command"]
    assert m["timestamp"]


def test_the_same_command_gives_the_same_jobs(small_drive_file: Path) -> None:
    a = json.loads(run_cli("run", "--drive", str(small_drive_file), *JOB, "--json").stdout)
    b = json.loads(run_cli("run", "--drive", str(small_drive_file), *JOB, "--json", module=True).stdout)
    assert a["jobs"] == b["jobs"]
    c = json.loads(run_cli("run", "--drive", str(small_drive_file), *JOB, "--json", "--seed", "2").stdout)
    assert c["jobs"] != a["jobs"]


def test_run_on_the_builtin_preset_with_a_small_span_and_what_if_changes() -> None:
    base = ["run", "--drive", "generic-mlc-120", "--precondition", "filled", "--size", "64m",
            "--rw", "randwrite", "--bs", "4k", "--iodepth", "32", "--runtime", "0.5s", "--json"]
    fast = json.loads(run_cli(*base).stdout)
    slow_cp = run_cli(*base, "--set", "nand.tprog_ns=2600000")
    assert slow_cp.returncode == 0, slow_cp.stderr
    slow = json.loads(slow_cp.stdout)
    assert slow["manifest"]["drive_changes"] == {"nand.tprog_ns": 2600000}
    assert slow["manifest"]["drive_hash"] != fast["manifest"]["drive_hash"]
    assert slow["jobs"][0]["write"]["iops"] < fast["jobs"][0]["write"]["iops"]
    assert [p["kind"] for p in fast["phases"]] == ["secure_erase", "workload", "workload"]


def test_idle_after_and_checking_mode(small_drive_file: Path) -> None:
    cp = run_cli("run", "--drive", str(small_drive_file), "--precondition", "filled", *JOB, "--check",
                 "--idle-after", "3s", "--json")
    assert cp.returncode == 0, cp.stderr
    doc = json.loads(cp.stdout)
    assert doc["manifest"]["checking_mode"] is True
    assert doc["phases"][-1]["kind"] == "idle" and doc["phases"][-1]["jobname"] == "idle 3s"


@pytest.mark.parametrize(
    "args, needles",
    [
        (["run", "--rw", "randwrit"], ["'rw'", "randwrite"]),
        (["run", "--rw", "write", "--bs", "4q"], ["'bs'"]),
        (["run", "--rw", "write", "--iodepth", "0"], ["iodepth"]),
        (["run", "--rw", "write", "--runtime", "soon"], ["runtime"]),
        (["run", "--rw", "write", "--data-pattern", "fluffy"], ["data", "incompressible"]),
        (["run", "--rw", "write", "--seed", "x"], ["--seed"]),
        (["run", "--rw", "write", "--idle-after", "later"], ["--idle-after", "not a duration"]),
        (["run", "--rw", "write", "--memory-limit", "1m"], ["RAM", "--memory-limit"]),
        (["run", "--rw", "write", "--precondition", "shiny"], ["--precondition", "invalid choice"]),
        (["run", "--rw", "write", "--set", "nand.tprog_us=5"], ["nand.tprog_us", "tprog_ns"]),
        (["run", "--rw", "write", "--bogus", "3"], ["unrecognized arguments: --bogus"]),
        (["run"], ["--rw"]),
        (["frobnicate"], ["invalid choice"]),
        (["trace", "stats"], ["FILE", "--generated"]),
        (["trace", "stats", "--generated", "heavy-2012"], ["heavy-2011"]),
        (["trace", "stats", "/no/such/trace.csv"], ["/no/such/trace.csv"]),
        (["trace", "generate", "heavy-2011", "--out", "/dev/null/x.iolog"], ["--out", "/dev/null/x.iolog", "/dev/null is not a directory"]),
        (["drive", "show", "nope"], ["unknown drive 'nope'", "generic-mlc-120"]),
        # the shared converters name the flag
        (["replay", "--generated", "gaming-2010", "--trace-seed", "-1"], ["--trace-seed", "2^64-1"]),
        (["replay", "--generated", "gaming-2010", "--iodepth", "x"], ["--iodepth", "whole number"]),
        (["replay", "--generated", "gaming-2010", "--runtime", "soon"], ["--runtime", "not a duration"]),
        (["trace", "stats", "--capacity", "0", "x.csv"], ["--capacity", "positive size"]),
        (["trace", "stats", "--capacity", "4q", "x.csv"], ["--capacity", "not a size"]),
        (["review", "--drive", "generic-mlc-120", "--jobs", "0", "--out", "/nonexistent/out"], ["--jobs", "at least 1"]),
        # renamed flags keep no alias (no abbreviations either)
        (["run", "--rw", "write", "--data", "repeated"], ["unrecognized arguments: --data"]),
        (["replay", "--generated", "gaming-2010", "--queue-depth", "8"], ["unrecognized arguments: --queue-depth"]),
        (["storage-bench", "--workload", "typical-2010"], ["--bench"]),
    ],
)
def test_bad_input_gives_one_error_line_and_exit_2(args: list, needles: list) -> None:
    assert_one_line_error(run_cli(*args), *needles)


def test_an_unknown_preset_lists_the_presets() -> None:
    line = assert_one_line_error(run_cli("run", "--drive", "vertex-9000", "--rw", "write"), "vertex-9000")
    assert "presets: " in line and "generic-mlc-120" in line


def test_a_bad_drive_file_names_the_file_and_field(tmp_path: Path) -> None:
    f = tmp_path / "bad.toml"
    f.write_text(
        (Path(__file__).resolve().parents[2] / "python/ssdlab/drives/generic-mlc-120.toml")
        .read_text()
        .replace("dies_per_package = 1", "dies_per_package = 1\ntr_us = 50")
    )
    assert_one_line_error(run_cli("run", "--drive", str(f), "--rw", "write"), str(f), "tr_us", "tr_ns")
    f.write_text("[drive\nid=")
    assert_one_line_error(run_cli("drive", "show", str(f)), str(f))


def test_a_bad_trace_line_is_one_error_naming_the_line(tmp_path: Path) -> None:
    f = tmp_path / "bad.csv"
    f.write_text("128166385295514663,hm,0,Write,9056014336,2048,2833\n128166385295514700,hm,0,Write,nine,2048,2833\n")
    assert_one_line_error(run_cli("trace", "stats", str(f), "--format", "msr"), f"{f}:2", "Offset")
    cp = run_cli("trace", "stats", str(f), "--format", "msr", "--skip-bad-lines")
    assert cp.returncode == 0 and "1 bad lines skipped" in cp.stdout and "skipped line 2" in cp.stdout


def test_drives_lists_the_generic_preset() -> None:
    cp = run_cli("drives")
    assert cp.returncode == 0, cp.stderr
    line = next(ln for ln in cp.stdout.splitlines() if ln.startswith("generic-mlc-120"))
    assert "120 GB" in line and "16 dies" in line
    assert json.loads(run_cli("drives", "--json", module=True).stdout)[0]["id"]


def test_drive_show_prints_the_config_and_derived_geometry() -> None:
    cp = run_cli("drive", "show", "generic-mlc-120")
    assert cp.returncode == 0, cp.stderr
    for needle in ("[nand]", "tprog_ns = 1_300_000", "raw capacity", "128.00 GiB", "spare area", "14.53%", "memory estimate"):
        assert needle in cp.stdout, needle
    doc = json.loads(run_cli("drive", "show", "generic-mlc-120", "--set", "ftl.gc_policy=fifo", "--json").stdout)
    assert doc["config"]["ftl"]["gc_policy"] == "fifo" and doc["geometry"]["dies"] == 16


def test_trace_stats_on_a_sample_trace(traces_dir: Path) -> None:
    f = traces_dir / "msr_cambridge_hm0_sample/msr-cambridge1-sample.csv"
    cp = run_cli("trace", "stats", str(f))
    assert cp.returncode == 0, cp.stderr
    assert "format msr, 1,000 records" in cp.stdout and "iodepth mean" in cp.stdout
    doc = json.loads(run_cli("trace", "stats", str(f), "--device", "hm_0", "--reject", "--json").stdout)
    assert doc["stats"]["reads"] == 508 and doc["manifest"]["command"].startswith("ssdlab trace stats")


def test_trace_stats_of_a_generated_workload_side_by_side_with_published() -> None:
    cp = run_cli("trace", "stats", "--generated", "heavy-2011", "--seed", "2")
    assert cp.returncode == 0, cp.stderr
    out = cp.stdout
    assert "published" in out and "measured" in out
    assert "14 of 14 published figures matched" in out
    assert "iodepth_mean" in out and "4.625" in out


def test_trace_generate_writes_a_file_that_trace_stats_reads(tmp_path: Path) -> None:
    f = tmp_path / "typical.iolog"
    cp = run_cli("trace", "generate", "typical-2010", "--out", str(f), "--capacity", "64g")
    assert cp.returncode == 0 and "57,769 records" in cp.stdout, cp.stderr
    cp = run_cli("trace", "stats", str(f), "--capacity", "64g", "--compare-with", "typical-2010")
    assert cp.returncode == 0 and "format fio-iolog" in cp.stdout and "compared with the published" in cp.stdout


def test_ctrl_c_prints_what_finished_and_exits_130() -> None:
    # A long job on the 120GB preset; SIGINT once it has started running.
    proc = subprocess.Popen(
        [*ssdlab_command(), "run", "--drive", "generic-mlc-120", "--rw", "randwrite", "--bs", "4k",
         "--iodepth", "32", "--runtime", "100000s"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    # SIGINT once the engine is loaded and the job has run a while (a loaded machine imports slowly)
    deadline = time.monotonic() + 60
    maps = Path(f"/proc/{proc.pid}/maps")
    while time.monotonic() < deadline and proc.poll() is None:
        if maps.exists() and "_core" in maps.read_text(errors="replace"):
            break
        time.sleep(0.1)
    time.sleep(2.0)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, (out, err)
    assert "Traceback" not in err
    assert "INTERRUPTED" in out and "write IOPS" in out
    assert "interrupted during the job" in err


def test_version_and_help() -> None:
    cp = run_cli("--version")
    assert cp.returncode == 0 and cp.stdout.startswith("ssdlab ")
    cp = run_cli("run", "--help")
    assert cp.returncode == 0 and "--precondition" in cp.stdout and "1024" in cp.stdout


def test_replay_prints_storage_bench_figures(traces_dir: Path, small_drive_file: Path) -> None:
    f = traces_dir / "umass_financial1_first10k/example.ascii"
    cp = run_cli("replay", str(f), "--drive", str(small_drive_file), "--precondition", "filled", "--idle-cap", "25ms")
    assert cp.returncode == 0, cp.stderr
    assert "data rate" in cp.stdout and "over busy time" in cp.stdout and "Storage Bench" not in cp.stdout  # not a Storage Bench trace
    assert "reproduce: ssdlab replay" in cp.stdout
    doc = json.loads(run_cli("replay", "--generated", "gaming-2010", "--mode", "as-fast-as-possible", "--json").stdout)
    job = doc["jobs"][0]
    assert job["kind"] == "replay" and job["read"]["total_ios"] == 75_206
    assert job["storage_bench"]["data_rate_mb_per_s"] > 0
    assert_one_line_error(run_cli("replay"), "FILE", "--generated")
    assert_one_line_error(run_cli("replay", "--generated", "gaming-2010", "--device", "3"), "--device")
    assert_one_line_error(run_cli("replay", str(f), "--idle-cap", "a while"), "--idle-cap")


def test_link_flag_tests_one_drive_on_sata_3g_and_6g() -> None:
    rates = {}
    for link in ("sata-3g", "sata-6g"):
        cp = run_cli("run", "--drive", "generic-mlc-120", "--precondition", "filled", "--size", "1g", "--rw", "read",
                     "--bs", "128k", "--iodepth", "32", "--io-size", "512m", "--link", link, "--json")
        assert cp.returncode == 0, cp.stderr
        rates[link] = json.loads(cp.stdout)["jobs"][0]["read"]["bw_bytes"] / 1e6
    assert 250 < rates["sata-3g"] <= 280 < 450 < rates["sata-6g"] <= 550


def test_link_flag_puts_an_nvme_drive_in_a_slot_of_another_pcie_generation() -> None:
    """A Gen4 drive's reads in a Gen3 x4 slot stop at the slot's link; a
    link of the other kind is refused, naming the flag."""
    rates = {}
    for link in ("pcie3-x4", "pcie4-x4"):
        cp = run_cli("run", "--drive", "samsung980pro-1000", "--rw", "read", "--bs", "128k", "--iodepth", "32",
                     "--runtime", "1s", "--link", link, "--json")
        assert cp.returncode == 0, cp.stderr
        rates[link] = json.loads(cp.stdout)["jobs"][0]["read"]["bw_bytes"] / 1e6
    # gen 3 x4: 3.60e9 B/s per direction after encoding and TLP overhead
    assert 3300 < rates["pcie3-x4"] <= 3600 < 1.8 * rates["pcie3-x4"] < rates["pcie4-x4"]
    assert_one_line_error(run_cli("run", "--drive", "samsung980pro-1000", "--rw", "read", "--link", "sata-6g"), "--link", "NVMe")
    assert_one_line_error(run_cli("run", "--drive", "vertex3-120", "--rw", "read", "--link", "pcie4-x4"), "--link", "SATA")
    assert_one_line_error(run_cli("run", "--drive", "vertex3-120", "--rw", "read", "--link", "pcie4-x3"), "--link", "pcieG-xL")


def test_storage_bench_prints_the_metrics() -> None:
    cp = run_cli("storage-bench", "--drive", "generic-mlc-120", "--bench", "typical-2010", "--json")
    assert cp.returncode == 0, cp.stderr
    doc = json.loads(cp.stdout)
    job = doc["jobs"][0]
    sb = job["storage_bench"]
    assert job["read"]["total_ios"] == 37_501 and job["write"]["total_ios"] == 20_268
    busy = sb["busy_time_ns"] / 1e9
    assert 0 < busy < job["duration_ns"] / 1e9
    rate = (job["read"]["io_bytes"] + job["write"]["io_bytes"]) / busy / 1e6
    assert abs(sb["data_rate_mb_per_s"] / rate - 1) < 1e-9
    assert doc["manifest"]["precondition"] == "clean"  # docs/methodology.md: a secure-erased drive
    cp = run_cli("storage-bench", "--drive", "generic-mlc-120", "--bench", "heavy-2012")
    assert_one_line_error(cp, "--bench", "heavy-2011")
    cp = run_cli("storage-bench", "--bench", "typical-2010", "--full", "--precondition", "dirty")
    assert_one_line_error(cp, "--full", "--precondition")
    cp = run_cli("storage-bench", "--bench", "destroyer-2013", "--full")
    assert_one_line_error(cp, "--full", "destroyer-2013")
    cp = run_cli("storage-bench", "--bench", "typical-2010", "--idle-cap", "a while")
    assert_one_line_error(cp, "--idle-cap")


def test_every_help_text_reads_as_written() -> None:
    """argparse %-formats argument help but not descriptions: no '%%' or
    '%(' left in any command's --help."""
    import argparse

    from ssdlab.cli.main import build_parser

    def walk(p: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
        yield p
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                for sub in a.choices.values():
                    yield from walk(sub)

    seen = 0
    for p in walk(build_parser()):
        text = p.format_help()
        seen += 1
        assert "%%" not in text and "%(" not in text, (p.prog, [ln for ln in text.splitlines() if "%" in ln])
    assert seen > 20
