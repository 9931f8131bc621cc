"""What ``ssdlab fio`` writes is what fio writes: every key of fio's own JSON
for the same job (compared with a real fio run on a small file), json+'s
latency bins that fio's own tool reads, fio's normal text report, the
percentile and latency-log options."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any, Dict, Set

import pytest

from ssdlab import Simulator
from ssdlab.fio import simulate
from ssdlab.fio.fiojson import iodepth_levels, jsonplus_bins, percentiles
from ssdlab.fio.jobfile import parse_jobfile_text
from ssdlab.fio.normal import num2str

JOB = """\
[global]
ioengine=libaio
size=4m
[rr]
rw=randread
bs=4k
iodepth=4
[sw]
stonewall
rw=write
bs=64k
"""


def run(text: str, drive: Dict[str, Any]) -> simulate.SimulatedRun:
    return simulate.simulate(parse_jobfile_text(text, "job.fio", env={}), simulator=Simulator(drive, seed=1))


def _paths(x: Any, p: str = "") -> Set[str]:
    """Key paths of a fio document (the first job stands for every job; the
    contents of maps keyed by values are left out)."""
    out: Set[str] = set()
    if isinstance(x, dict):
        for k, v in x.items():
            out.add(f"{p}/{k}")
            if k not in ("bins", "job options", "global options", "percentile", "ssdlab", "disk_util"):
                out |= _paths(v, f"{p}/{k}")
    elif isinstance(x, list) and x and p.endswith("/jobs"):
        out |= _paths(x[0], p + "[]")
    return out


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed (apt-get install fio)")
def test_the_json_has_every_key_of_fios_own_json_for_the_same_job(small_drive: Dict[str, Any], tmp_path: Path) -> None:
    job = tmp_path / "j.fio"
    job.write_text(JOB.replace("[rr]", f"filename={tmp_path / 'data'}\n[rr]"))
    cp = subprocess.run(["fio", str(job), "--output-format=json+"], capture_output=True, text=True, timeout=120)
    assert cp.returncode == 0, cp.stderr
    real = json.loads(cp.stdout[cp.stdout.index("{"):])
    ours = json.loads(run(job.read_text(), small_drive).to_json("json+"))
    assert _paths(real) - _paths(ours) == set()
    assert [j["jobname"] for j in ours["jobs"]] == [j["jobname"] for j in real["jobs"]]


@pytest.mark.skipif(shutil.which("fio_jsonplus_clat2csv") is None, reason="fio's tools are not installed")
def test_fios_jsonplus_tool_reads_and_validates_ssdlabs_json_plus(small_drive: Dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "plus.json"
    out.write_text(run(JOB, small_drive).to_json("json+"))
    tool = shutil.which("fio_jsonplus_clat2csv")
    assert tool is not None
    # the tool needs six, which the system's python3 has beside Debian's fio
    python = "/usr/bin/python3"
    if subprocess.run([python, "-c", "import six"], capture_output=True).returncode != 0:
        pytest.skip("fio_jsonplus_clat2csv needs python3-six")
    for extra in ([], ["--validate"]):
        cp = subprocess.run([python, tool, str(out), str(tmp_path / "clat"), *extra], capture_output=True, text=True, timeout=60)
        assert cp.returncode == 0, cp.stderr
    rows = (tmp_path / "clat_job0").read_text().splitlines()
    assert len(rows) > 1 and rows[0].startswith("nsec, read_slat_ns_count")


def test_json_plus_bins_hold_every_io_and_plain_json_has_none(small_drive: Dict[str, Any]) -> None:
    r = run(JOB, small_drive)
    plus = json.loads(r.to_json("json+"))["jobs"][0]["read"]["clat_ns"]
    assert sum(plus["bins"].values()) == plus["N"] == 1024
    assert "bins" not in json.loads(r.to_json("json"))["jobs"][0]["read"]["clat_ns"]


def test_latency_shares_stddev_and_depths_come_from_the_simulation(small_drive: Dict[str, Any]) -> None:
    j = json.loads(run(JOB, small_drive).to_json())["jobs"][0]
    total = sum(j["latency_ns"].values()) + sum(j["latency_us"].values()) + sum(j["latency_ms"].values())
    assert abs(total - 100.0) < 1e-3
    assert j["read"]["clat_ns"]["stddev"] >= 0 and j["read"]["lat_ns"]["stddev"] == j["read"]["clat_ns"]["stddev"]
    assert j["iodepth_level"]["4"] > 99 and j["latency_depth"] == 4
    assert (j["usr_cpu"], j["sys_cpu"], j["ctx"]) == (0.0, 0.0, 0)


def test_a_short_job_has_one_bandwidth_sample_not_zeros(small_drive: Dict[str, Any]) -> None:
    j = json.loads(run(JOB, small_drive).to_json())["jobs"][0]["read"]
    assert j["bw_samples"] == j["iops_samples"] == 1 and j["bw_min"] > 0 and j["iops_min"] > 0


def test_percentile_list_and_lat_percentiles_as_fio(small_drive: Dict[str, Any]) -> None:
    j = json.loads(run("[r]\nrw=randread\nsize=4m\npercentile_list=50:99.5\nlat_percentiles=1\n", small_drive).to_json())
    read = j["jobs"][0]["read"]
    assert list(read["clat_ns"]["percentile"]) == ["50.000000", "99.500000"]
    assert read["lat_ns"]["percentile"] == read["clat_ns"]["percentile"]
    j = json.loads(run("[r]\nrw=randread\nsize=4m\nclat_percentiles=0\n", small_drive).to_json())
    assert "percentile" not in j["jobs"][0]["read"]["clat_ns"]


def test_the_default_percentiles_recomputed_from_the_histogram_are_the_engines(small_drive: Dict[str, Any]) -> None:
    r = simulate.simulate(parse_jobfile_text("[r]\nrw=randrw\nsize=8m\n", "j", env={}), simulator=Simulator(small_drive, seed=1))
    ph = r.measured[0]
    for d in ("read", "write"):
        c = ph.data[d]["clat_ns"]
        points = [float(k) for k in c["percentile"]]
        assert percentiles(ph.latency_hist[d], points, int(c["min"]), int(c["max"])) == c["percentile"]


def test_write_lat_log_writes_fios_three_latency_logs(small_drive: Dict[str, Any]) -> None:
    r = run("[w]\nrw=randwrite\nsize=4m\nruntime=2\ntime_based\nwrite_lat_log=w\nlog_avg_msec=500\n", small_drive)
    assert {"w_lat.1.log", "w_clat.1.log", "w_slat.1.log"} <= set(r.logs)
    lat = [line.split(", ") for line in r.logs["w_lat.1.log"].splitlines()]
    assert len(lat) == 4 and all(int(v) > 0 and d == "1" for _, v, d, _, _ in lat)
    assert r.logs["w_clat.1.log"] == r.logs["w_lat.1.log"]
    assert all(line.split(", ")[1] == "0" for line in r.logs["w_slat.1.log"].splitlines())


def test_normal_output_is_laid_out_as_fios(small_drive: Dict[str, Any]) -> None:
    text = run(JOB, small_drive).render("normal")
    lines = text.splitlines()
    assert lines[0].startswith("rr: (g=0): rw=randread, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=libaio, iodepth=4")
    assert any(line.startswith("rr: (groupid=0, jobs=1): err= 0: pid=0: ") for line in lines)
    assert any(line.startswith("  read: IOPS=") and "BW=" in line and "(4096KiB/" in line for line in lines)
    assert any(line.startswith("  write: IOPS=") and line.endswith("; 0 zone resets") for line in lines)
    assert "    clat percentiles (" in text and "     |  1.00th=[" in text and "     | 99.99th=[" in text
    assert "  IO depths    : 1=" in text and "     issued rwts: total=1024,0,0,0" in text
    assert "Run status group 0 (all jobs):\n   READ: bw=" in text and "Run status group 1 (all jobs):\n  WRITE: bw=" in text


@pytest.mark.parametrize("num,base,unit,text", [(171234, 1000, "", "171k"), (32000, 1000, "", "32.0k"), (2048, 1000, "", "2048"),
                                                (699_000_000, 1000, "B/s", "699MB/s"), (8 << 20, 1024, "B", "8192KiB"),
                                                (103_600_000, 1024, "B/s", "98.8MiB/s")])
def test_numbers_are_rounded_as_fios_num2str(num: int, base: int, unit: str, text: str) -> None:
    assert num2str(num, base=base, unit=unit) == text


def test_fios_histogram_bins_and_depth_levels() -> None:
    import numpy as np

    h = (np.array([1000, 100_000], dtype=np.uint64), np.array([32, 2048], dtype=np.uint64), np.array([3, 5], dtype=np.uint64))
    # fio bins [1016, 1024) and [100352, 101376): keyed by their middles
    assert jsonplus_bins(h) == {"1020": 3, "100864": 5}
    assert iodepth_levels(100, 4) == {"1": 1.0, "2": 2.0, "4": 97.0, "8": 0.0, "16": 0.0, "32": 0.0, ">=64": 0.0}


def test_the_cli_prints_the_normal_report_by_default_and_json_for_a_json_file(small_drive_file: Path, tmp_path: Path) -> None:
    from conftest import run_cli

    job = tmp_path / "j.fio"
    job.write_text("[r]\nrw=randread\nsize=1m\n")
    cp = run_cli("fio", str(job), "--drive", str(small_drive_file))
    assert cp.returncode == 0, cp.stderr
    assert "Run status group 0 (all jobs):" in cp.stdout
    out = tmp_path / "o.json"
    cp = run_cli("fio", str(job), "--drive", str(small_drive_file), "--output", str(out))
    assert cp.returncode == 0 and json.loads(out.read_text())["jobs"][0]["read"]["total_ios"] == 256
    cp = run_cli("fio", str(job), "--drive", str(small_drive_file), "--output-format", "json+")
    assert "bins" in json.loads(cp.stdout)["jobs"][0]["read"]["clat_ns"]
