"""The review suite on a real target through fio (``ssdlab review --device``):
on a test file in a temporary directory (created and removed by ssdlab only),
on fake devices (files standing in for block devices, described by a /sys of
our own) and, where the container allows, on a loop device; never on the
machine's own disks. Results in the simulated drives' schema, skipped tests
with their reasons, the report with real and simulated drives side by side,
Ctrl-C/SIGTERM keeping the finished tests."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List

import numpy as np
import pytest

from conftest import REPO, assert_one_line_error, attached_loop_device, make_drive, run_cli, ssdlab_command
from fake_system import FakeSystem
from ssdlab.backends import fio_results, fio_runner, fio_target
from ssdlab.backends.sim_runner import SuiteRunner
from ssdlab.fio import run as fio_run
from ssdlab.fio.errors import UnsafeTargetError
from ssdlab.fio.iolog import rewrite_iolog
from ssdlab.fio.safety import Capabilities
from ssdlab.report import chart_values
from ssdlab.results import PhaseResult
from ssdlab.suite.definitions import get_test
from ssdlab.suite.fio import ScaleSizes, fio_sections
from ssdlab.suite.scale import FULL, QUICK

if fio_run.shutil.which("fio") is None and os.environ.get("CI"):
    pytest.fail("fio is not installed (.ci/run installs Debian's fio)", pytrace=False)
needs_fio = pytest.mark.skipif(fio_run.shutil.which("fio") is None, reason="fio is not installed (.ci/run installs Debian's fio)")

REPO_FIO = REPO / "tests" / "data" / "fio"
FILE_CAPS = Capabilities(trim="a file target has no TRIM", secure_erase="a file has no ATA SECURITY ERASE")
BLOCK_CAPS = Capabilities(trim=None, secure_erase="ssdlab issues no ATA SECURITY ERASE")

#: A quick device review's tests: two that run on a file, three it skips (a
#: clean start, TRIM, power).
QUICK_TESTS = ["corners-seq-read-128k", "corners-4k-random-read-qd3", "corners-4k-random-write-qd3", "trim-validation", "power"]


def results(out: Path) -> Dict[str, Dict[str, Any]]:
    (drive_dir,) = (out / "results").iterdir()
    return {p.stem: json.loads(p.read_text()) for p in drive_dir.glob("*.json")}


# ---------------------------------------------------------------------------
# what runs where
# ---------------------------------------------------------------------------


def test_what_each_test_needs_and_why_it_is_skipped() -> None:
    assert fio_target.needs_of(get_test("corners-seq-read-128k")) == ()
    assert fio_target.needs_of(get_test("corners-4k-random-write-qd3")) == ("secure_erase",)
    assert fio_target.needs_of(get_test("trim-validation")) == ("secure_erase", "trim")
    assert fio_target.needs_of(get_test("power")) == ("secure_erase", "power")
    assert fio_target.needs_of(get_test("storage-bench-gaming-2010-full")) == ("iolog",)
    assert "drive_changes" in fio_target.needs_of(get_test("corners-sata-3g"))  # a 3Gbps link: not something fio can set

    def why(tid: str, caps: Capabilities, **kw: Any) -> Any:
        return fio_target.skip_reason(get_test(tid), scale=kw.pop("scale", FULL), capacity_bytes=kw.pop("cap", 64 << 30), caps=caps, **kw)

    assert why("consistency", FILE_CAPS) is None
    assert "secure-erased" in why("corners-4k-random-write-qd3", FILE_CAPS) and "nor a TRIM" in why("corners-4k-random-write-qd3", FILE_CAPS)
    assert "needs TRIM" in why("trim-validation", FILE_CAPS)
    # A block device with TRIM: a clean start by TRIM only when asked for.
    assert "--clean-by-trim" in why("corners-4k-random-write-qd3", BLOCK_CAPS)
    assert why("corners-4k-random-write-qd3", BLOCK_CAPS, clean_by_trim=True) is None
    assert why("trim-validation", BLOCK_CAPS, clean_by_trim=True) is None
    assert why("power", BLOCK_CAPS, clean_by_trim=True) == "fio measures no power (a power meter on the drive's supply would)"
    assert why("corners-sata-3g", BLOCK_CAPS, clean_by_trim=True).startswith("it changes the drive (host.command_overhead_ns=5000")
    assert why("storage-bench-heavy-2011-full", FILE_CAPS, scale=QUICK) == "left out of the quick scale"
    assert "at least 1,000,000,000 B" in why("storage-bench-gaming-2010-full", FILE_CAPS, cap=512 << 20)
    assert "3.31" in why("storage-bench-gaming-2010-full", FILE_CAPS, version=fio_run.FioVersion(3, 28))


def test_sizes_and_times_on_a_target_follow_the_simulator_runner() -> None:
    runner = SuiteRunner(make_drive(), scale=QUICK)
    sizes = ScaleSizes(runner.capacity_bytes, QUICK)
    for v in ("8g", "75%", "1g", 123_456_789, None):
        assert sizes.size(v, "size") == runner.size_bytes(v, "size")
    step = {"rw": "randwrite", "bs": "4k", "iodepth": 32, "runtime": "2000s", "log_avg_msec": 1000, "size": "75%"}
    job = runner.resolve_job(step, None)
    (sec,) = [s for s in fio_sections({"id": "t", "title": "t", "runs": [{"state": {"state": "clean"},  # type: ignore[typeddict-item]
                                                                          "steps": [dict(step, measure="m")]}]}, sizes)
              if s.measure]
    assert {k: sec.options[k] for k in ("size", "runtime", "log_avg_msec")} == {k: job[k] for k in ("size", "runtime", "log_avg_msec")}
    assert sec.options["time_based"] == 1 and sec.options["refill_buffers"] == 1


def test_series_follow_fios_own_sample_times(tmp_path: Path) -> None:
    # A late sample covers a longer span: fio averages over the time since its
    # previous sample, so the I/Os of the late interval are value x its length.
    (tmp_path / "m_iops.3.log").write_text("1000, 100, 1, 0, 0\n2001, 200, 1, 0, 0\n4000, 300, 1, 0, 0\n4000, 10, 0, 0, 0\n")
    (tmp_path / "m_bw.3.log").write_text("1000, 400, 1, 0, 0\n2000, 800, 1, 0, 0\n4001, 1200, 1, 0, 0\n")
    s = fio_results.log_series(tmp_path, "m")
    assert s is not None
    assert s["time_ns"].tolist() == [10**9, 2_001_000_000, 4 * 10**9]
    assert s["write_ios"] == pytest.approx([100, 200 * 1.001, 300 * 1.999])
    assert s["read_ios"] == pytest.approx([0, 0, 10 * 1.999])
    assert float(np.sum(s["write_bytes"])) == pytest.approx((400 + 800 + 1200 * 2.001) * 1024 * (1 - 1e-4), rel=1e-3)
    r = PhaseResult({"duration_ns": 4 * 10**9, "read": {}, "write": {}, "trim": {}}, s)
    assert r.series["write_iops"] == pytest.approx([100, 200, 300])
    assert fio_results.log_series(tmp_path, "none") is None


def test_a_storage_bench_iolog_has_its_idle_gaps_cut(tmp_path: Path) -> None:
    src = tmp_path / "in.iolog"
    src.write_text("fio version 3 iolog\n0 /dev/x add\n0 /dev/x open\n0 /dev/x write 0 4096\n10000 /dev/x read 0 4096\n"
                   "500000 /dev/x read 4096 4096\n500010 /dev/x write 8192 4096\n")
    st = rewrite_iolog(src, tmp_path / "out.iolog", target_bytes=1 << 20, idle_cap_us=25_000)
    times = [int(line.split()[0]) for line in (tmp_path / "out.iolog").read_text().splitlines()[3:] if len(line.split()) == 5]
    assert times == [0, 10000, 35000, 35010] and st.duration_us == 35010


# ---------------------------------------------------------------------------
# on a file: the done-when check
# ---------------------------------------------------------------------------


@pytest.mark.slow  # over 15 s on 2 cores: the default run stays under 8 minutes
@needs_fio
def test_a_quick_device_review_on_a_file_makes_a_report_beside_a_simulated_drive(tmp_path: Path) -> None:
    x = tmp_path / "x"
    x.mkdir()
    target, out = x / "file", x / "rev"
    t0 = time.monotonic()
    cp = run_cli("review", "--device", str(target), "--quick", "--size", "48m", "--out", str(out), "--tests", *QUICK_TESTS, timeout=300)
    assert cp.returncode == 0, cp.stderr
    assert time.monotonic() - t0 < 120
    assert "2 tests run and 3 skipped" in cp.stdout
    # ssdlab created the test file and removed it: nothing but the review is left.
    assert not target.exists() and sorted(p.name for p in x.iterdir()) == ["rev"]
    docs = results(out)
    assert sorted(docs) == sorted(QUICK_TESTS)
    for d in docs.values():
        assert d["schema"] == "ssdlab.test-result" and d["drive"]["kind"] == "real" and d["drive"]["id"].startswith("real-file")
        assert d["drive"]["capacity_bytes"] == 48 << 20 and d["profile"] == "quick"
        assert d["manifest"]["reproduce"].startswith(f"ssdlab review --device {target} --tests {d['test']['id']}")
        assert d["test"] == get_test(d["test"]["id"])  # the same description the simulator runs
    assert "secure-erased" in docs["corners-4k-random-write-qd3"]["skipped"]
    assert "needs TRIM" in docs["trim-validation"]["skipped"] and "no power" in docs["power"]["skipped"]
    seq = docs["corners-seq-read-128k"]
    assert seq["skipped"] is None and [f["label"] for f in seq["figures"]] == ["repeated", "incompressible"]
    assert all(f["value"] > 0 and f["unit"] == "MB/s" for f in seq["figures"])
    assert any("secure erase left out" in n for n in seq["notes"])
    rr = docs["corners-4k-random-read-qd3"]
    (job,) = rr["jobs"]
    assert job["job"]["bs"] == "4k" and job["job"]["size"] == 48 << 20  # an 8g span, cut to the file
    assert len(job["series"]["iops"]) >= 8 and min(job["series"]["iops"]) > 0  # per-second IOPS from fio's log
    assert job["read"]["iops"] == pytest.approx(np.mean(job["series"]["iops"]), rel=0.2)
    # fio's own job files, JSON and logs are kept
    (fio_dir,) = (out / "fio").iterdir()
    parts = sorted(p.name for p in (fio_dir / "corners-4k-random-read-qd3").iterdir())
    assert parts == ["00-run0-precondition-fill", "01-run0-read"]  # one fio run per phase or step
    assert (fio_dir / "corners-4k-random-read-qd3" / "01-run0-read" / "fio-output.json").is_file()
    page = (out / "index.html").read_text()
    assert "real drive (fio)" in page and "not run (" in page and "charts/corners-seq-read-128k.mbps.png" in page
    # one chart per figure: the 4KB IOPS are the MB/s chart's table rows, not a second chart
    assert (out / "charts" / "corners-4k-random-read-qd3.mbps.png").is_file()
    assert not (out / "charts" / "corners-4k-random-read-qd3.iops.png").exists() and ", IOPS</td>" in page

    # The same test on a simulated drive, merged with the real one by 'ssdlab report'.
    drive = tmp_path / "small.json"
    drive.write_text(json.dumps(make_drive(dies=4, blocks=160, pages=64, drive_id="small-sim")))
    sim = tmp_path / "sim.json"
    cp = run_cli("test", "corners-seq-read-128k", "--drive", str(drive), "--quick", "--output", str(sim), "--json")
    assert cp.returncode == 0, cp.stderr
    merged = tmp_path / "merged"
    cp = run_cli("report", str(sim), str(out / "results"), "--out", str(merged))
    assert cp.returncode == 0, cp.stderr
    assert "from 2 drive(s)" in cp.stdout
    sim_doc = json.loads(sim.read_text())
    both = chart_values([sim_doc, seq], "corners-seq-read-128k.mbps")
    assert sorted(both) == sorted([sim_doc["drive"]["name"], seq["drive"]["name"]])  # the report labels drives by name
    assert seq["drive"]["name"].endswith("(real, fio)")
    page = (merged / "index.html").read_text()
    assert "small-sim" in page and seq["drive"]["id"] in page and "simulated" in page and "real drive (fio)" in page


@needs_fio
def test_sigterm_stops_fio_and_keeps_the_finished_tests(tmp_path: Path) -> None:
    target, out = tmp_path / "t.dat", tmp_path / "rev"
    proc = subprocess.Popen([*ssdlab_command(), "review", "--device", str(target), "--quick", "--size", "32m", "--out", str(out),
                             "--tests", "corners-seq-read-128k", "consistency"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    try:
        first = out / "results"
        deadline = time.monotonic() + 90
        while not list(first.glob("*/corners-seq-read-128k.json")):
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.2)
        time.sleep(1.5)  # consistency's fio is running
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143, stderr  # 128 + SIGTERM (Ctrl-C: 130)
    assert "interrupted; fio stopped" in stderr and "Traceback" not in stderr
    docs = results(out)
    assert sorted(docs) == ["corners-seq-read-128k"]  # consistency was cut short: not saved
    assert (out / "index.html").is_file() and not target.exists()


@needs_fio
def test_refusals_are_one_line_with_the_flag_that_allows_it(tmp_path: Path) -> None:
    existing = tmp_path / "data.bin"
    existing.write_bytes(b"keep")
    out = str(tmp_path / "rev")
    assert_one_line_error(run_cli("review", "--device", str(existing), "--out", out), "refusing to write", "existing file", "no flag allows")
    assert_one_line_error(run_cli("review", "--device", str(tmp_path / "new"), "--destroy-data", "/dev/sdz", "--out", out),
                          "applies to block devices")
    assert_one_line_error(run_cli("review", "--device", str(tmp_path / "new"), "--drive", "generic-mlc-120", "--out", out),
                          "--drive or --device")
    assert_one_line_error(run_cli("review", "--device", str(tmp_path / "new"), "--size", "1m", "--out", out), "--size")
    assert_one_line_error(run_cli("review", "--device", str(tmp_path / "new"), "--size", "100t", "--out", out), "does not fit")
    assert existing.read_bytes() == b"keep" and not (tmp_path / "new").exists()


# ---------------------------------------------------------------------------
# fake block devices (files described by a /sys of our own)
# ---------------------------------------------------------------------------


def fake_review(fake: FakeSystem, dev: Path, out: Path, tests: List[str], **kw: Any) -> fio_runner.DeviceReview:
    return fio_runner.review_device(str(dev), str(out), tests, scale=QUICK, view=fake.view(), stream=io.StringIO(), **kw)


@needs_fio
def test_a_block_device_with_data_needs_destroy_data_naming_it(tmp_path: Path) -> None:
    fake = FakeSystem(tmp_path / "sys")
    dev = fake.add_disk("sdz", "8:240", size=32 << 20)
    with open(dev, "r+b") as f:
        f.write(b"\0" * 510 + b"\x55\xaa")  # an MBR
    with pytest.raises(UnsafeTargetError) as ei:
        fake_review(fake, dev, tmp_path / "rev", ["corners-seq-read-128k"])
    assert f"--destroy-data={dev}" in str(ei.value) and "partition table" in str(ei.value).lower()
    assert not (tmp_path / "rev").exists()
    with pytest.raises(Exception, match="applies to a file target"):
        fake_review(fake, dev, tmp_path / "rev", ["corners-seq-read-128k"], destroy_data=str(dev), size_bytes=16 << 20)
    # Named, it is written (the fake device is a file: fio writes it as it would a disk).
    done = fake_review(fake, dev, tmp_path / "rev", ["corners-seq-read-128k"], destroy_data=str(dev))
    assert done.ran == 1 and dev.exists()
    doc = results(tmp_path / "rev")["corners-seq-read-128k"]
    assert doc["drive"]["id"] == "real-sdz" and doc["drive"]["capacity_bytes"] == 32 << 20
    assert any("secure erase left out" in n for n in doc["notes"])  # no discard in its /sys


@needs_fio
def test_a_fio_failure_is_recorded_as_not_run_and_the_review_goes_on(tmp_path: Path) -> None:
    fake = FakeSystem(tmp_path / "sys")
    dev = fake.add_disk("sdy", "8:224", size=32 << 20)
    # It claims discard: the secure erase becomes a TRIM, which fio cannot do on the file behind it.
    (fake.sysdir("sdy") / "queue" / "discard_max_bytes").write_text("2147450880\n")
    done = fake_review(fake, dev, tmp_path / "rev", ["corners-seq-read-128k", "power"])
    assert (done.ran, done.skipped) == (0, 2)
    docs = results(tmp_path / "rev")
    why = docs["corners-seq-read-128k"]["skipped"]
    assert why.startswith("fio failed in run0-secure-erase") and "error 25 (Inappropriate ioctl for device)" in why, why


# ---------------------------------------------------------------------------
# a loop device: real TRIM
# ---------------------------------------------------------------------------


@pytest.fixture
def loop_device(tmp_path: Path) -> Iterator[str]:
    with attached_loop_device(tmp_path, 64 << 20) as dev:
        yield dev


@needs_fio
def test_on_a_loop_device_trim_runs_and_cleans_by_trim(loop_device: str, tmp_path: Path) -> None:
    out = tmp_path / "rev"
    cp = run_cli("review", "--device", loop_device, "--quick", "--clean-by-trim", "--out", str(out), "--tests", "file-copy", timeout=300)
    assert cp.returncode == 0, cp.stderr
    doc = results(out)["file-copy"]
    assert doc["skipped"] is None and doc["drive"]["id"] == f"real-{os.path.basename(loop_device)}"
    assert [f["label"] for f in doc["figures"]] == ["write, clean", "read, clean", "write, dirty", "read, dirty",
                                                    "write, after TRIM", "read, after TRIM"]
    assert any("replaced by a TRIM" in n for n in doc["notes"])
    jobfiles = [p.read_text() for p in sorted((out / "fio" / doc["drive"]["id"] / "file-copy").glob("*/ssdlab.fio"))]
    assert sum(j.count("rw=trim") for j in jobfiles) == 3 and all(f"filename={loop_device}" in j for j in jobfiles)


# ---------------------------------------------------------------------------
# a fio run made by hand joins a review
# ---------------------------------------------------------------------------


@needs_fio
def test_fio_output_of_a_printed_job_file_run_by_hand_joins_a_report(tmp_path: Path) -> None:
    cp = run_cli("test", "corners-seq-read-128k", "--fio", "--filename", str(tmp_path / "disk.img"))
    assert cp.returncode == 0, cp.stderr
    # as someone would run it by hand, on a 32 MiB file, each read 2.5 s instead of 60 s
    job = cp.stdout.replace("runtime=60s", "runtime=2500ms").replace("[global]\n", "[global]\nsize=32m\n", 1)
    assert job.count("description=ssdlab:corners-seq-read-128k:") == 2
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "job.fio").write_text(job)
    fio = subprocess.run(["fio", "--output-format=json", "--output=out.json", "job.fio"], cwd=logs, capture_output=True, text=True)
    assert fio.returncode == 0, fio.stdout + fio.stderr
    cp = run_cli("fio-import", str(logs / "out.json"), "--log-dir", str(logs), "--name", "my disk", "--out", str(tmp_path / "imp"))
    assert cp.returncode == 0, cp.stderr
    doc = results(tmp_path / "imp")["corners-seq-read-128k"]
    assert doc["drive"]["id"] == "real-my-disk" and doc["drive"]["kind"] == "real"
    assert [f["label"] for f in doc["figures"]] == ["repeated", "incompressible"] and all(f["value"] > 0 for f in doc["figures"])
    assert all(len(j["series"]["mbps"]) >= 1 for j in doc["jobs"])
    cp = run_cli("report", str(tmp_path / "imp"), "--out", str(tmp_path / "rep"))
    assert cp.returncode == 0, cp.stderr
    assert "real-my-disk" in (tmp_path / "rep" / "index.html").read_text()
    # a JSON with no step of the suite is one clear error
    assert_one_line_error(run_cli("fio-import", str(REPO_FIO / "seq-rand.json"), "--name", "x", "--out", str(tmp_path / "none")),
                          "no measured step of an ssdlab test")
