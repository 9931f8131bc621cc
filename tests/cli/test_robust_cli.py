"""Nothing a user types crashes or hangs it, the command-line and
API half: SIGTERM stops a command as Ctrl-C does (what finished kept, exit
143), the interrupted ``ssdlab test`` prints its finished steps and an
interrupted review stops its workers; one rule for output paths, checked
before anything runs; messages that name the real problem; the Python API's
typed errors; checking mode in the summary, and the README's examples as the
commands print them. (Bad values for every flag of every command:
test_cli_matrix.py.)"""

from __future__ import annotations

import json
import math
import os
import re
import select
import signal
import subprocess
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import pytest

from conftest import (
    REPO,
    assert_one_line_error,
    cli_in_process,
    make_drive,
    small_review_drives,
    ssdlab_command,
)
from ssdlab import Drive, Simulator, sweep
from ssdlab.errors import ConfigError, SsdlabError, WorkloadError
from ssdlab.trace import generated_stats, trace_stats, write_generated_trace

SAMPLE_TRACE = REPO / "tests/data/traces/msr_cambridge_hm0_sample/msr-cambridge1-sample.csv"


# ---------------------------------------------------------------------------
# SIGTERM, like Ctrl-C
# ---------------------------------------------------------------------------


class Running:
    """A command started as a user would; stderr is read as it comes so that
    a signal can be sent once the command has reached a given point."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen([*ssdlab_command(), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     stdin=subprocess.DEVNULL,
                                     # Ctrl-C reaches it as in a terminal (a background job ignores SIGINT)
                                     preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        self.err = b""

    def wait_for(self, marker: str, timeout: float = 120) -> None:
        """Read stderr until ``marker`` shows (the command still running)."""
        fd = self.proc.stderr.fileno()  # type: ignore[union-attr]
        end = time.monotonic() + timeout
        while marker.encode() not in self.err:
            assert time.monotonic() < end, f"no {marker!r} on stderr after {timeout} s: {self.err[-2000:]!r}"
            ready, _, _ = select.select([fd], [], [], 0.5)
            if ready:
                chunk = os.read(fd, 65536)
                assert chunk, f"the command ended before {marker!r}: {self.err[-2000:]!r}"
                self.err += chunk

    def children(self) -> List[int]:
        """The command's child processes (Dask's workers, its resource tracker)."""
        out = []
        for d in Path("/proc").iterdir():
            if d.name.isdigit():
                try:
                    stat = (d / "stat").read_text()
                except OSError:
                    continue
                if int(stat.rsplit(")", 1)[1].split()[1]) == self.proc.pid:
                    out.append(int(d.name))
        return out

    def stop(self, sig: int, timeout: float = 60) -> Tuple[int, str, str]:
        self.proc.send_signal(sig)
        return self.finish(timeout)

    def finish(self, timeout: float = 60) -> Tuple[int, str, str]:
        out, err = self.proc.communicate(timeout=timeout)
        return self.proc.returncode, out.decode(), (self.err + err).decode()


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_sigterm_stops_a_run_as_ctrl_c_does_and_exits_143(small_drive_file: Path) -> None:
    r = Running("run", "--drive", str(small_drive_file), "--rw", "randwrite", "--iodepth", "32", "--runtime", "100000s",
                "--progress")
    r.wait_for("job randwrite")
    rc, out, err = r.stop(signal.SIGTERM)
    assert rc == 143, (out, err)
    assert "Traceback" not in err
    assert "INTERRUPTED" in out and "write IOPS" in out and "reproduce: ssdlab run" in out
    assert "interrupted during the job" in err


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_an_interrupted_test_prints_the_figures_of_the_steps_that_finished(tmp_path: Path, sig: int, code: int) -> None:
    drive = tmp_path / "drive.json"
    drive.write_text(json.dumps(make_drive(dies=8, blocks=320, pages=256, drive_id="two-gb")))
    r = Running("test", "resiliency", "--drive", str(drive), "--progress", "--output", str(tmp_path / "r.json"))
    r.wait_for("resiliency: precondition tortured")  # the first step ("clean") has finished
    rc, out, err = r.stop(sig)
    assert rc == code, (out, err)
    assert "Traceback" not in err
    assert "INTERRUPTED: the figures of the 1 measured step that finished" in out
    assert re.search(r"^  clean +write MB/s +[\d.,]+ MB/s$", out, re.MULTILINE), out
    assert "tortured" not in out.split("INTERRUPTED", 1)[1]
    assert "the figures above are those of the steps that finished" in err
    doc = json.loads((tmp_path / "r.json").read_text())  # --output keeps them too, marked
    assert doc["interrupted"] is True and [j["jobname"] for j in doc["jobs"]] == ["clean"]


def test_sigterm_stops_a_review_and_its_workers_and_keeps_the_finished_tests(tmp_path: Path) -> None:
    a, b = small_review_drives(tmp_path)
    out_dir = tmp_path / "out"
    r = Running("review", "--drive", str(a), "--drive", str(b), "--tests", "corners-4k-random-read-qd3", "consistency",
                "resiliency", "--jobs", "2", "--out", str(out_dir))
    r.wait_for(" done in ")  # one test saved, the others running on the workers
    workers = r.children()
    assert workers
    t0 = time.monotonic()
    r.proc.send_signal(signal.SIGTERM)
    while any(_alive(p) for p in workers) and time.monotonic() - t0 < 30:
        time.sleep(0.05)
    # stopped, not left to finish their tasks (Dask's own close waits 4 s per worker, a test here takes 5-15 s)
    assert time.monotonic() - t0 < 3.5, [p for p in workers if _alive(p)]
    rc, out, err = r.finish()
    assert rc == 143, (out, err)
    assert "Traceback" not in err
    saved = sorted(out_dir.glob("results/*/*.json"))
    assert saved and len(saved) < 6
    assert (out_dir / "index.html").is_file()
    assert "interrupted; the report of the finished tests is" in err


# ---------------------------------------------------------------------------
# output paths: one rule, checked before anything runs
# ---------------------------------------------------------------------------


def _unwritable(tmp_path: Path) -> str:
    if os.geteuid() == 0:
        return "/sys/ssdlab-test/results.json"  # sysfs refuses even root
    ro = tmp_path / "read-only"
    ro.mkdir()
    ro.chmod(0o555)
    return str(ro / "results.json")


def test_an_output_that_cannot_be_written_is_refused_before_any_simulation(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ssdlab.sim

    def no_simulation(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("simulated before checking the output")

    monkeypatch.setattr(ssdlab.sim.Simulator, "__init__", no_simulation)
    bad = _unwritable(tmp_path)
    for argv in (["test", "consistency", "--drive", "generic-mlc-120", "--output", bad],
                 ["run", "--rw", "write", "--output", bad],
                 ["spec", "generic-mlc-120", "--output", bad],
                 ["review", "--drive", "generic-mlc-120", "--out", bad],
                 ["sweep", "--set", "nand.tprog_ns=1ms,2ms", "--out", bad],
                 ["fio", str(REPO / "tests/data/fio/seq-rand.fio"), "--output", bad],
                 ["trace", "generate", "gaming-2010", "--out", bad]):
        line = assert_one_line_error(cli_in_process(*argv), "cannot create", bad.rsplit("/", 1)[0])
        assert line.startswith(f"ssdlab: error: argument --{'out' if '--out' in argv else 'output'}: "), line


def test_every_command_creates_the_missing_directories_of_its_output(tmp_path: Path, small_drive_file: Path) -> None:
    d = str(small_drive_file)
    new = tmp_path / "new" / "deeper"
    job = tmp_path / "job.fio"
    job.write_text("[j]\nrw=write\nbs=64k\nsize=4m\n")
    for argv, made in [
        (["run", "--drive", d, "--rw", "write", "--io-size", "1m", "--output", f"{new}/run/r.json"], f"{new}/run/r.json"),
        (["test", "corners-4k-random-read-qd3", "--drive", d, "--quick", "--output", f"{new}/test/t.json"], f"{new}/test/t.json"),
        (["fio", str(job), "--drive", d, "--output", f"{new}/fio/f.json", "--log-dir", f"{new}/fio/logs"], f"{new}/fio/f.json"),
        (["trace", "generate", "gaming-2010", "--capacity", "1g", "--out", f"{new}/trace/g.iolog"], f"{new}/trace/g.iolog"),
    ]:
        cp = cli_in_process(*argv)
        assert cp.returncode == 0, (argv, cp.stderr)
        assert Path(made).is_file(), argv
    assert (new / "fio" / "logs").is_dir()


def test_a_directory_given_as_an_output_file_and_a_file_as_an_output_directory(tmp_path: Path) -> None:
    f = tmp_path / "a-file"
    f.write_text("x")
    assert_one_line_error(cli_in_process("run", "--rw", "write", "--output", str(tmp_path)), "is a directory; give a file name")
    assert_one_line_error(cli_in_process("review", "--drive", "generic-mlc-120", "--out", str(f)), "exists and is not a directory")


# ---------------------------------------------------------------------------
# messages that name the real problem
# ---------------------------------------------------------------------------


def test_a_binary_calibration_table_is_not_an_internal_error(tmp_path: Path) -> None:
    t = tmp_path / "table.csv"
    t.write_bytes(b"drive_id,value\n" + bytes(range(128, 256)))
    line = assert_one_line_error(cli_in_process("calibrate", "--table", str(t)), str(t), "not a text file")
    assert "a calibration table (CSV) is UTF-8 text" in line


def test_a_directory_given_as_a_drive_file_says_so(tmp_path: Path) -> None:
    line = assert_one_line_error(cli_in_process("run", "--drive", str(tmp_path), "--rw", "write"))
    assert line == f"ssdlab: error: {tmp_path} is a directory, not a drive file (a .toml or .json file, or a preset id)"


def test_a_link_speed_of_0_says_what_is_needed(tmp_path: Path) -> None:
    d = make_drive()
    d["host"]["link_bytes_per_s"] = 0
    f = tmp_path / "d.json"
    f.write_text(json.dumps(d))
    line = assert_one_line_error(cli_in_process("drive", "show", str(f)), "host.link_bytes_per_s")
    assert "is 0 or missing: the link speed in bytes/s is needed (1e6..1e11" in line
    assert "missing: give" not in line


def test_a_memory_limit_below_what_the_drive_needs_states_both() -> None:
    line = assert_one_line_error(cli_in_process("run", "--rw", "write", "--memory-limit", "1k"))
    assert line == ("ssdlab: error: argument --memory-limit: 1k (1,024 B) is less than the RAM this drive needs "
                    "(258,221,100 B, 246.26 MiB); give at least --memory-limit 247m")
    # the API's message gives a small limit in bytes, not "0.00 MiB"
    with pytest.raises(SsdlabError, match="more than the limit of 1024 B"):
        Simulator("generic-mlc-120", memory_limit_bytes=1024)


def test_a_negative_duration_gets_its_flags_error_not_expected_one_argument(small_drive_file: Path) -> None:
    assert_one_line_error(cli_in_process("run", "--drive", str(small_drive_file), "--rw", "write", "--runtime", "-1s"),
                          "'runtime'", "'-1s' is not a duration")
    assert_one_line_error(cli_in_process("replay", "--generated", "gaming-2010", "--idle-cap", "-5ms"),
                          "--idle-cap", "'-5ms' is not a duration")


# ---------------------------------------------------------------------------
# the Python API: typed errors naming the argument
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sim_and_result() -> Tuple[Simulator, Any]:
    sim = Simulator(make_drive(), seed=1)
    return sim, sim.run(rw="write", io_size="1m")


def _api_calls() -> List[Tuple[str, Callable[[Simulator, Any], Any], type, str]]:
    d = make_drive()
    drive = Drive.load(d)
    nan = float("nan")
    return [
        ("with_changes(list)", lambda s, r: drive.with_changes([("nand.tprog_ns", 1)]), ConfigError, "changes"),  # type: ignore[arg-type]
        ("with_changes(int key)", lambda s, r: drive.with_changes({1: 2}), ConfigError, "1"),  # type: ignore[dict-item]
        ("with_changes(inf)", lambda s, r: drive.with_changes({"nand.tprog_ns": math.inf}), ConfigError,
         "nand.tprog_ns: inf is not a finite number"),
        ("with_changes(object)", lambda s, r: drive.with_changes({"nand.tprog_ns": object()}), ConfigError, "nand.tprog_ns"),
        ("Drive.load(dict with nan)", lambda s, r: Drive.load({**d, "nand": {**d["nand"], "tprog_ns": nan}}), ConfigError,
         "nand.tprog_ns: nan is not a finite number"),
        ("Drive.load('')", lambda s, r: Drive.load(""), ConfigError, "drive: an empty drive name"),
        ("Simulator(seed=-1)", lambda s, r: Simulator(d, seed=-1), WorkloadError, "seed"),
        ("Simulator(seed=2**64)", lambda s, r: Simulator(d, seed=2**64), WorkloadError, "seed"),
        ("Simulator(seed='1')", lambda s, r: Simulator(d, seed="1"), WorkloadError, "seed"),  # type: ignore[arg-type]
        ("Simulator(check='yes')", lambda s, r: Simulator(d, check="yes"), WorkloadError, "check"),  # type: ignore[arg-type]
        ("Simulator(memory_limit_bytes=-1)", lambda s, r: Simulator(d, memory_limit_bytes=-1), WorkloadError,
         "memory_limit_bytes"),
        ("Simulator(unknown keyword)", lambda s, r: Simulator(d, sede=1), WorkloadError, "sede"),  # type: ignore[call-arg]
        ("trim(offset=-1)", lambda s, r: s.trim(offset=-1), WorkloadError, "offset"),
        ("trim(length=2**70)", lambda s, r: s.trim(0, 2**70), WorkloadError, "length"),
        ("run(runtime=nan)", lambda s, r: s.run(rw="write", runtime=nan), WorkloadError, "runtime"),
        ("run(size=inf)", lambda s, r: s.run(rw="write", size=math.inf), WorkloadError, "size"),
        ("run('randwrite')", lambda s, r: s.run("randwrite"), WorkloadError, "job"),  # type: ignore[arg-type]
        ("run(iodepth=2**70)", lambda s, r: s.run(rw="write", iodepth=2**70), WorkloadError, "iodepth"),
        ("run(progress=3)", lambda s, r: s.run(rw="write", progress=3), WorkloadError, "progress"),  # type: ignore[arg-type]
        ("run(dict + other bs)", lambda s, r: s.run({"rw": "write", "bs": "4k"}, bs="8k"), WorkloadError, "bs"),
        ("parse_job(dict + other rw)", lambda s, r: s.parse_job({"rw": "write"}, rw="read"), WorkloadError, "rw"),
        ("replay(3)", lambda s, r: s.replay(3), WorkloadError, "file"),  # type: ignore[arg-type]
        ("replay(number_ios=2**70)", lambda s, r: s.replay(generated="gaming-2010", number_ios=2**70), WorkloadError,
         "number_ios"),
        ("replay(idle_cap=nan)", lambda s, r: s.replay(generated="gaming-2010", idle_cap=nan), WorkloadError, "idle_cap"),
        ("idle(nan)", lambda s, r: s.idle(nan), WorkloadError, "idle"),
        ("idle(duration_ns=-1)", lambda s, r: s.idle(duration_ns=-1), WorkloadError, "duration_ns"),
        ("precondition(3)", lambda s, r: s.precondition(3), WorkloadError, "precondition"),  # type: ignore[arg-type]
        ("precondition(unknown key)", lambda s, r: s.precondition({"state": "filled", "spam": 1}), WorkloadError,
         "precondition"),
        ("clone(3)", lambda s, r: s.clone(3), WorkloadError, "(arguments)"),  # type: ignore[call-arg]
        ("latency_us('read') of a write-only phase", lambda s, r: r.latency_us("read", "p99"), WorkloadError, "direction"),
        ("latency_us('reed')", lambda s, r: r.latency_us("reed", "p99"), WorkloadError, "direction"),
        ("latency_us(percentile 'p42')", lambda s, r: r.latency_us("write", "p42"), WorkloadError, "percentile"),
        ("latency_us(percentile 99)", lambda s, r: r.latency_us("write", 99), WorkloadError, "percentile"),
        ("trace_stats(capacity_bytes='big')", lambda s, r: trace_stats(SAMPLE_TRACE, capacity_bytes="big"), WorkloadError,  # type: ignore[arg-type]
         "capacity_bytes"),
        ("trace_stats(capacity_bytes=nan)", lambda s, r: trace_stats(SAMPLE_TRACE, capacity_bytes=nan), WorkloadError,  # type: ignore[arg-type]
         "capacity_bytes"),
        ("generated_stats(seed=-1)", lambda s, r: generated_stats("gaming-2010", seed=-1), WorkloadError, "seed"),
        ("write_generated_trace(capacity_bytes='big')",
         lambda s, r: write_generated_trace("gaming-2010", "/nonexistent/x.iolog", capacity_bytes="big"),  # type: ignore[arg-type]
         WorkloadError, "capacity_bytes"),
        ("sweep(unknown test)", lambda s, r: sweep(drive, {"nand.tprog_ns": [900_000]}, test="bogus", jobs=1), WorkloadError,
         "test"),
        ("sweep(scale='x')", lambda s, r: sweep(drive, {"nand.tprog_ns": [900_000]}, test="cdm", scale="x", jobs=1),
         WorkloadError, "scale"),
        ("sweep(jobs=0)", lambda s, r: sweep(drive, {"nand.tprog_ns": [900_000]}, test="cdm", jobs=0), WorkloadError, "jobs"),
        ("sweep(settings=3)", lambda s, r: sweep(drive, 3, jobs=1), ConfigError, "settings"),  # type: ignore[arg-type]
        ("sweep(unknown keyword)", lambda s, r: sweep(drive, {}, jbos=2), WorkloadError, "jbos"),  # type: ignore[call-arg]
    ]


@pytest.mark.parametrize("name, call, kind, field", _api_calls(), ids=[c[0] for c in _api_calls()])
def test_bad_api_arguments_raise_the_typed_error_naming_the_argument(
        sim_and_result: Tuple[Simulator, Any], name: str, call: Callable[[Simulator, Any], Any], kind: type, field: str) -> None:
    sim, result = sim_and_result
    field, _, needle = field.partition(": ")  # "FIELD: words the message must hold"
    with pytest.raises(kind) as info:
        call(sim, result)
    assert getattr(info.value, "field", None) == field, str(info.value)
    assert field in str(info.value) and needle in str(info.value)


def test_a_job_dict_and_keywords_may_repeat_a_value_but_not_contradict_it(sim_and_result: Tuple[Simulator, Any]) -> None:
    sim, _ = sim_and_result
    job = sim.parse_job({"rw": "write", "bs": "4k"}, bs="4k", iodepth=2)  # the same value twice is no conflict
    assert job["iodepth"] == 2
    with pytest.raises(WorkloadError, match="'bs': given twice: '4k' in the job and '8k' as a keyword argument"):
        sim.parse_job({"rw": "write", "bs": "4k"}, bs="8k")


def test_latency_of_a_direction_with_io_is_still_given(sim_and_result: Tuple[Simulator, Any]) -> None:
    _, r = sim_and_result
    assert r.latency_us("write", "p99") >= r.latency_us("write", "p50") > 0
    assert r.latency_us("write", "99.900000") >= r.latency_us("write", "p99")
    with pytest.raises(WorkloadError, match="completed no read I/O"):
        r.latency_us("read", "mean")


# ---------------------------------------------------------------------------
# checking mode in the summary; the README's examples as printed
# ---------------------------------------------------------------------------


def test_the_summary_says_checking_mode_ran_and_passed(small_drive_file: Path) -> None:
    args = ["run", "--drive", str(small_drive_file), "--precondition", "filled", "--rw", "randrw", "--runtime", "2s"]
    cp = cli_in_process(*args, "--check")
    assert cp.returncode == 0, cp.stderr
    line = next(ln for ln in cp.stdout.splitlines() if ln.startswith("checking mode"))
    reads = json.loads(cli_in_process(*args, "--check", "--json").stdout)["jobs"][0]["read"]["total_ios"]
    assert line == (f"checking mode: passed: {reads:,} reads verified against the shadow model, and the whole map and "
                    "the invariants after each of the 3 phases")
    assert "checking mode" not in cli_in_process(*args).stdout


def _readme_outputs() -> Dict[str, str]:
    """The README's sample outputs: each ``` block that ends with a
    ``reproduce:`` line, by that command."""
    blocks: List[List[str]] = []
    inside = False
    for line in (REPO / "README.md").read_text().splitlines():
        if line.startswith("```"):
            inside = not inside
            if inside:
                blocks.append([])
        elif inside:
            blocks[-1].append(line)
    out = {}
    for b in blocks:
        if b and b[0].startswith("ssdlab ") and b[-1].startswith("reproduce: ssdlab "):
            out[b[-1][len("reproduce: ssdlab "):]] = "\n".join(b)
    return out


def _without_wall_times(text: str) -> str:
    return re.sub(r"[\d.,]+ s wall", "N s wall", text).strip()


@pytest.mark.parametrize("command", sorted(_readme_outputs()))
def test_the_readme_shows_what_the_commands_print(command: str) -> None:
    assert len(_readme_outputs()) >= 2  # the first command's summary and the checking-mode example
    cp = cli_in_process(*command.split(), timeout=300)
    assert cp.returncode == 0, cp.stderr
    assert _without_wall_times(cp.stdout) == _without_wall_times(_readme_outputs()[command])
