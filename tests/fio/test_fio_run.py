"""fio itself on small files in a temporary directory: found and versioned,
run with its JSON parsed, stopped (Ctrl-C, SIGTERM, a stop request) with the
finished jobs kept, and only ssdlab's own test file ever created and removed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ssdlab.fio import run as fio_run
from ssdlab.fio.errors import FioNotFoundError, FioRunError, JobFileError, UnsafeTargetError
from ssdlab.fio.run import FioVersion, iolog_trim_problem, iolog_v3_problem, parse_version, run_on_target

needs_fio = pytest.mark.skipif(fio_run.shutil.which("fio") is None, reason="fio is not installed (.ci/run installs Debian's fio)")

SMALL = """\
[seq-write]
ioengine=psync
rw=write
bs=64k

[rand-read]
stonewall
ioengine=libaio
rw=randread
bs=4k
iodepth=4
runtime=1
time_based
write_iops_log=rr
log_avg_msec=500
"""

THREE = """\
[global]
ioengine=psync
time_based
[first]
rw=randread
runtime=1
[second]
stonewall
rw=randread
runtime=30
[third]
stonewall
rw=randread
runtime=30
"""


def test_a_missing_fio_says_how_to_install_it() -> None:
    with pytest.raises(FioNotFoundError) as ei:
        fio_run.find_fio("no-such-fio-binary")
    assert "apt-get install fio" in str(ei.value)


def test_versions_and_what_an_old_fio_cannot_replay() -> None:
    v = parse_version("fio-3.33\n")
    assert (v.major, v.minor, str(v)) == (3, 33, "fio-3.33")
    problem = iolog_trim_problem(v)
    assert problem is not None and "3.34" in problem and "TRIM" in problem
    assert iolog_trim_problem(parse_version("fio-3.36-12-gabcdef")) is None
    assert iolog_v3_problem(v) is None and "3.31" in str(iolog_v3_problem(FioVersion(3, 28)))
    with pytest.raises(FioRunError):
        parse_version("not fio")


@needs_fio
def test_the_installed_fio_reports_its_version() -> None:
    assert fio_run.fio_version().major >= 3


@needs_fio
def test_a_job_file_runs_on_a_test_file_that_is_removed_afterwards(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    work = tmp_path / "work"
    r = run_on_target(SMALL, target, size_bytes=8 << 20, workdir=work)
    assert not r.interrupted and r.finished == ("seq-write", "rand-read")
    assert r.target is not None and r.target.kind == "directory"
    assert r.result is not None
    seq, rnd = r.result.jobs
    assert seq.write.io_bytes == 8 << 20 and seq.ioengine == "psync"
    assert rnd.read.total_ios > 0 and rnd.read.clat.percentile_us(99) is not None
    assert rnd.iops_series is not None and rnd.iops_series.interval_ms == 500 and len(rnd.iops_series.read) >= 1
    assert list(target.iterdir()) == [], "the test file is gone"
    assert (work / "rr_iops.2.log").exists()


@needs_fio
def test_an_existing_file_is_never_a_target(tmp_path: Path) -> None:
    precious = tmp_path / "precious.dat"
    precious.write_bytes(b"keep me")
    with pytest.raises(UnsafeTargetError, match="existing file"):
        run_on_target(SMALL, precious, size_bytes=8 << 20)
    assert precious.read_bytes() == b"keep me"


@pytest.mark.parametrize("line,field", [("filename=/dev/sda", "filename"), ("exec_prerun=hdparm --security-erase p /dev/sdX", "exec_prerun")])
def test_job_files_may_not_pick_their_own_target_or_run_commands(tmp_path: Path, line: str, field: str) -> None:
    with pytest.raises(JobFileError) as ei:
        run_on_target(f"[j]\nrw=read\n{line}\n", tmp_path)
    assert (ei.value.field, ei.value.line) == (field, 3)


@needs_fio
def test_a_failing_fio_is_an_error_with_its_message(tmp_path: Path) -> None:
    with pytest.raises(FioRunError) as ei:
        fio_run.run_fio("[j]\nrw=read\nbs=banana\nfilename=/nonexistent/x\n", tmp_path)
    assert "wrote no results" in str(ei.value) and "bs=banana" in str(ei.value) and ei.value.returncode != 0


@needs_fio
def test_a_stop_request_keeps_the_finished_job_and_removes_the_test_file(tmp_path: Path) -> None:
    target = tmp_path / "t"
    target.mkdir()
    t0 = time.monotonic()
    r = run_on_target(THREE, target, size_bytes=8 << 20, workdir=tmp_path / "w", should_stop=lambda: time.monotonic() - t0 > 2.5)
    assert r.interrupted and time.monotonic() - t0 < 20
    assert (r.finished, r.interrupted_jobs, r.not_run) == (("first",), ("second",), ("third",))
    assert r.result is not None and r.result.job("first").read.runtime_ms >= 990
    assert list(target.iterdir()) == []


@needs_fio
def test_sigterm_stops_fio_writes_the_results_and_cleans_up(tmp_path: Path) -> None:
    target = tmp_path / "t"
    target.mkdir()
    job = tmp_path / "three.fio"
    job.write_text(THREE)
    out = tmp_path / "out.json"
    code = "import sys; from ssdlab.fio.run import main; sys.exit(main(sys.argv[1:]))"
    p = subprocess.Popen(
        [sys.executable, "-c", code, str(job), "--target", str(target), "--size", "8m", "--output", str(out), "--log-dir", str(tmp_path / "w")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    time.sleep(3.0)
    p.send_signal(signal.SIGTERM)
    stdout, stderr = p.communicate(timeout=60)
    assert p.returncode == 130, stderr
    assert "finished first" in stderr and "Traceback" not in stderr
    doc = json.loads(out.read_text()[out.read_text().index("{"):])
    assert doc["jobs"][0]["read"]["total_ios"] > 0 and doc["jobs"][2]["read"]["total_ios"] == 0
    assert list(target.iterdir()) == []
    # fio is gone too: no process still has the job file open.
    assert not any("three.fio" in x or "ssdlab.fio" in x for x in _fio_cmdlines())


def _fio_cmdlines() -> list[str]:
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if cmd.startswith("fio ") or "/fio " in cmd:
                out.append(cmd)
    return out


def test_the_test_file_is_removed_even_when_fio_re_created_it(tmp_path: Path) -> None:
    # fio unlinks and re-writes a file it lays out: the path ssdlab created is
    # still removed (the inode changed); a symlink put there is not followed.
    with fio_run.FileTarget(tmp_path, 1 << 20) as p:
        assert os.path.getsize(p) == 1 << 20
        os.unlink(p)
        Path(p).write_bytes(b"re-created by fio")
    assert list(tmp_path.iterdir()) == []
    keep = tmp_path / "keep.dat"
    keep.write_bytes(b"keep")
    with fio_run.FileTarget(tmp_path / "t.dat") as p:
        os.unlink(p)
        os.symlink(keep, p)
    assert keep.read_bytes() == b"keep" and (tmp_path / "t.dat").is_symlink()
