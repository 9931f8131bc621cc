"""The fio commands as a user runs them: ``ssdlab fio`` runs fio's example
jobs (the SSD steady-state job and the random-write job) on a preset and
writes JSON that the same parser reads as real fio output; ``fio-parse``,
``fio-check`` and their one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict

import pytest

from conftest import REPO, assert_one_line_error, run_cli
from ssdlab.fio import parse

FIXTURES = REPO / "tests" / "data" / "fio"

# The options of fio's examples/ssd-steadystate.fio (a sequential fill of the
# device, then 4 random 4KB writers at QD32 reported as one group, with a
# bandwidth log), with the size and runtime of a quick test given by ${SIZE}
# and ${RUNTIME}: as shipped it fills the whole device and runs one pass.
STEADY_STATE = """\
; steady state of an SSD: fill it sequentially, then overwrite it at random
[global]
ioengine=libaio
direct=1
group_reporting
filename=/dev/fioa
size=${SIZE}

[sequential-fill]
description=Sequential fill phase
rw=write
iodepth=16
bs=1M

[random-write-steady]
stonewall
description=Random write steady state phase
rw=randwrite
bs=4K
iodepth=32
numjobs=4
write_bw_log=fioa-steady-state
runtime=${RUNTIME}
time_based
"""

# The options of fio's examples/fio-rand-write.fio (4 buffered random 4KB
# writers at QD16, time based, each clone reported on its own: no
# group_reporting), with ${SIZE} and ${RUNTIME} for its 10G and 900 s.
RAND_WRITE = """\
; random 4KB writes, four jobs
[global]
name=fio-rand-write
filename=fio-rand-write
rw=randwrite
bs=4K
direct=0
numjobs=4
time_based
runtime=${RUNTIME}

[file1]
size=${SIZE}
ioengine=libaio
iodepth=16
"""

QUICK_ENV: Dict[str, str] = {"SIZE": "256m", "RUNTIME": "2"}


def test_fios_steady_state_example_runs_on_a_preset_and_parses_as_real_fio_output(tmp_path: Path) -> None:
    job = tmp_path / "ssd-steadystate.fio"
    job.write_text(STEADY_STATE)
    out, logs = tmp_path / "out.json", tmp_path / "logs"
    cp = run_cli("fio", str(job), "--drive", "generic-mlc-120", "--output", str(out), "--log-dir", str(logs), env=QUICK_ENV)
    assert cp.returncode == 0, cp.stderr
    assert cp.stdout == ""
    assert "4 identical random jobs run as one queue" in cp.stderr  # notes say what the simulator did
    # The very function that reads real fio's JSON reads this one (real fio: a recorded fixture).
    real = parse.read_fio_output(FIXTURES / "seq-rand.json", FIXTURES)
    sim = parse.read_fio_output(out, logs)
    assert (real.source, sim.source) == ("fio", "ssdlab")
    fill, steady = sim.jobs
    assert (fill.name, fill.groupid, fill.rw, fill.write.io_bytes) == ("sequential-fill", 0, "write", 256 << 20)
    assert (steady.name, steady.groupid, steady.numjobs, steady.iodepth) == ("random-write-steady", 1, 4, 32)
    assert steady.write.iops > 1000 and steady.runtime_ms == 2000
    assert steady.write.clat.percentiles[99.0] > 0
    # fio's log names: the bandwidth log of each of the 4 clones (jobs 2..5), summed per second.
    assert sorted(p.name for p in logs.iterdir()) == [f"fioa-steady-state_bw.{n}.log" for n in (2, 3, 4, 5)]
    assert steady.bw_series is not None and len(steady.bw_series.write) == 2
    assert sum(steady.bw_series.write) / 2 == pytest.approx(steady.write.mbps, rel=0.05)
    # fio-parse prints a summary per job, and with --json the same reading as JSON.
    cp = run_cli("fio-parse", str(out), "--log-dir", str(logs), "--jobfile", str(job), env=QUICK_ENV)
    assert cp.returncode == 0, cp.stderr
    assert "(simulated), 2 job(s)" in cp.stdout.splitlines()[0] and "  random-write-steady (group 1): randwrite" in cp.stdout
    cp = run_cli("fio-parse", str(out), "--log-dir", str(logs), "--jobfile", str(job), "--json", env=QUICK_ENV)
    assert cp.returncode == 0, cp.stderr
    doc = json.loads(cp.stdout)
    assert [j["name"] for j in doc["jobs"]] == ["sequential-fill", "random-write-steady"]


def test_fios_random_write_example_runs_on_a_preset_clone_by_clone(tmp_path: Path) -> None:
    job = tmp_path / "fio-rand-write.fio"
    job.write_text(RAND_WRITE)
    cp = run_cli("fio", str(job), "--drive", "generic-mlc-120", "--seed", "7", "--output-format", "json", env=QUICK_ENV)
    assert cp.returncode == 0, cp.stderr
    res = parse.parse_fio_json_text(cp.stdout, "stdout")
    # fio prints one entry per clone without group_reporting.
    assert [j.name for j in res.jobs] == ["file1"] * 4 and {j.groupid for j in res.jobs} == {0}
    ios = [j.write.total_ios for j in res.jobs]
    assert max(ios) - min(ios) <= 1 and sum(ios) > 4000
    doc = json.loads(cp.stdout)
    assert doc["fio version"].startswith("ssdlab-") and doc["ssdlab"]["drive_id"] == "generic-mlc-120"
    assert any("direct=0" in n for n in doc["ssdlab"]["notes"])
    # the same job file, checked without running
    cp = run_cli("fio", str(job), "--drive", "generic-mlc-120", "--parse-only", env=QUICK_ENV)
    assert cp.returncode == 0, cp.stderr
    assert cp.stdout.startswith("file1: group 0, engine job ") and '"iodepth": 64' in cp.stdout


def test_fio_command_errors_are_one_line(tmp_path: Path) -> None:
    job = tmp_path / "bad.fio"
    job.write_text("[a]\nrw=randwrite\nwrite_hist_log=h\n")
    line = assert_one_line_error(run_cli("fio", str(job)), "bad.fio:3", "write_hist_log")
    assert "Traceback" not in line
    job.write_text("[a]\nrw=randwrite\nsize=${NOT_SET_ANYWHERE}\n")
    assert_one_line_error(run_cli("fio", str(job)), "NOT_SET_ANYWHERE")
    assert_one_line_error(run_cli("fio", str(tmp_path / "missing.fio")), "missing.fio")
    assert_one_line_error(run_cli("fio", str(job), "--output-format", "xml"), "--output-format")
    assert_one_line_error(run_cli("fio-parse", str(tmp_path / "bad.fio")), "bad.fio")


def test_fio_check_says_what_it_would_write_or_why_not(tmp_path: Path) -> None:
    cp = run_cli("fio-check", str(tmp_path))
    assert cp.returncode == 0, cp.stderr
    assert "creates its own test file" in cp.stdout and "TRIM: no" in cp.stdout and "secure erase: no" in cp.stdout
    existing = tmp_path / "data.bin"
    existing.write_bytes(b"keep")
    assert_one_line_error(run_cli("fio-check", str(existing)), "refusing to write", "existing file")
    assert_one_line_error(run_cli("fio-check", str(tmp_path), "--destroy-data", str(tmp_path)), "applies to block devices")
    assert existing.read_bytes() == b"keep"


def test_trace_iolog_writes_a_bounded_iolog_fitted_to_a_target(tmp_path: Path) -> None:
    out = tmp_path / "g.iolog"
    cp = run_cli("trace", "iolog", "gaming-2010", "--target-bytes", "2g", "--filename", "/dev/sdz", "--max-time", "5s",
                 "--idle-cap", "25ms", "--out", str(out))
    assert cp.returncode == 0, cp.stderr
    assert "cut at the bound" in cp.stdout
    lines = out.read_text().splitlines()
    assert lines[:3] == ["fio version 3 iolog", "0 /dev/sdz add", "0 /dev/sdz open"] and lines[-1].endswith("/dev/sdz close")
    records = [ln.split() for ln in lines[3:-1]]
    times = [int(r[0]) for r in records]
    assert max(times) <= 5_000_000 and max(b - a for a, b in zip(times, times[1:])) <= 25_000
    assert all(int(r[3]) % 4096 == 0 and int(r[3]) + int(r[4]) <= 2 << 30 for r in records)
    assert_one_line_error(run_cli("trace", "iolog", "nope", "--target-bytes", "2g", "--out", str(out)), "nope")
