"""Nothing a user types makes the lab grow without bound, run for ever or
guess: a stray timestamp, a runtime or io_size typed a thousand
times too large, number_ios 0, a bssplit that does not add up to 100, an
output file with an unknown extension, and the round trip of a generated CSV.
Each gets one clear error naming the field and what is allowed, or works."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

from conftest import assert_one_line_error, make_drive, run_cli, ssdlab_command
from ssdlab import Drive, MemoryLimitError, Simulator, TraceError, WorkloadError
from ssdlab.trace import generated_stats, trace_stats, write_generated_trace

MSR_SAMPLE = "msr_cambridge_hm0_sample/msr-cambridge1-sample.csv"

#: The address space a replay gets in the stray-timestamp test: enough for
#: the lab, far too little for a per-second series of 5e9 seconds.
ADDRESS_SPACE_BYTES = 3_000_000_000


def _run_limited(*args: str, timeout: float = 120) -> "subprocess.CompletedProcess[str]":
    """``ssdlab ARGS`` with its address space limited (``ulimit -v``)."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_BYTES, ADDRESS_SPACE_BYTES))

    return subprocess.run([*ssdlab_command(), *args], capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, preexec_fn=limit)


@pytest.fixture
def stray_timestamp_trace(tmp_path: Path, traces_dir: Path) -> Path:
    """The MSR sample with one timestamp 5.2e9 s (164 years) after the others."""
    lines = (traces_dir / MSR_SAMPLE).read_text().splitlines()
    fields = lines[4].split(",")
    fields[0] = "180000000000000000"
    lines[4] = ",".join(fields)
    p = tmp_path / "stray.csv"
    p.write_text("\n".join(lines) + "\n")
    return p


@pytest.fixture
def gb_drive_file(tmp_path: Path) -> Path:
    """A drive of about 1.07 GB: the Storage Bench traces fit on it."""
    p = tmp_path / "gb.json"
    p.write_text(json.dumps(make_drive(dies=4, blocks=320, pages=256, drive_id="gb")))
    return p


# ---------------------------------------------------------------------------
# a stray timestamp: series bounded by the memory limit
# ---------------------------------------------------------------------------


def test_a_stray_timestamp_is_one_error_naming_the_flags_not_an_abort(stray_timestamp_trace: Path, small_drive_file: Path) -> None:
    # Before: a per-second series for 5.2e9 s, killed at 24 GB (a Rust abort under a 3 GB ulimit).
    cp = _run_limited("replay", str(stray_timestamp_trace), "--drive", str(small_drive_file), "--no-progress")
    line = assert_one_line_error(cp, "record 1000 (in time order)", "5183361470.449 s after the first", "5183361471 intervals",
                                 "memory limit", "--idle-cap", "--log-avg-msec", "--runtime", "--memory-limit")
    assert "panicked" not in cp.stderr and "internal error" not in line
    # The flags it names work: with idle gaps capped the trace replays.
    cp = _run_limited("replay", str(stray_timestamp_trace), "--drive", str(small_drive_file), "--no-progress", "--idle-cap", "1s",
                      "--json")
    assert cp.returncode == 0, cp.stderr
    assert json.loads(cp.stdout)["jobs"][0]["write"]["total_ios"] + json.loads(cp.stdout)["jobs"][0]["read"]["total_ios"] == 1000
    # trace stats streams in flat memory whatever the span.
    cp = _run_limited("trace", "stats", str(stray_timestamp_trace), "--json")
    assert cp.returncode == 0, cp.stderr
    assert json.loads(cp.stdout)["stats"]["duration_ns"] == 5_183_361_470_448_533_700


def test_the_python_api_raises_memory_limit_error(stray_timestamp_trace: Path, small_drive: Dict[str, Any],
                                                  small_drive_file: Path) -> None:
    # In a process of its own, its address space limited: before, this aborted the interpreter.
    code = ("import sys\nfrom ssdlab import Simulator, MemoryLimitError\n"
            "try:\n    Simulator(sys.argv[1]).replay(sys.argv[2])\n"
            "except MemoryLimitError as e:\n    print(type(e).__name__, e.needed_bytes > e.limit_bytes > 0)\n")

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_BYTES, ADDRESS_SPACE_BYTES))

    cp = subprocess.run([sys.executable, "-c", code, str(small_drive_file), str(stray_timestamp_trace)], capture_output=True,
                        text=True, timeout=120, stdin=subprocess.DEVNULL, preexec_fn=limit)
    assert (cp.returncode, cp.stdout.strip()) == (0, "MemoryLimitError True"), cp.stderr[-2000:]
    # A job whose per-interval series cannot fit in what the limit leaves beside the drive.
    room = Drive.load(small_drive).memory_estimate_bytes + 1000 * 512
    sim = Simulator(small_drive, memory_limit_bytes=room)
    with pytest.raises(MemoryLimitError, match=r"job 'randread': its runtime of 2 s in intervals of 1 ms.*log_avg_msec"):
        sim.run(rw="randread", runtime="2s", log_avg_msec=1)
    assert sim.run(rw="randread", runtime="0.5s", log_avg_msec=1).series["time_ns"].size == 500
    # A trace import's reorder window is bounded by the limit too.
    with pytest.raises(TraceError) as t:
        trace_stats(stray_timestamp_trace, reorder_window_records=10**15)
    assert t.value.field == "reorder_window_records" and "memory limit" in str(t.value)  # type: ignore[attr-defined]
    with pytest.raises(TraceError, match="reorder_window_records"):
        trace_stats(stray_timestamp_trace, reorder_window_records=1000, memory_limit_bytes=1000)


# ---------------------------------------------------------------------------
# runtime / io_size / number_ios: documented maxima, --force
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "flags, needles",
    [
        (["--runtime", "1000000000000"], ["'runtime'", "'1000000000000'", "maximum of 7 days (604800 s)", "--force"]),
        (["--io-size", "1000t"], ["'io_size'", "'1000t' (1099511627776000 B)", "maximum of 100 x the drive's capacity",
                                  "(12000000000000 B)", "--force"]),
        (["--number-ios", "10000000000000"], ["'number_ios'", "maximum of 2929687500", "4096 B", "--force"]),
    ],
)
def test_a_job_beyond_the_maxima_is_refused_at_once(flags: List[str], needles: List[str]) -> None:
    # Before: these ran effectively for ever without a word.
    cp = run_cli("run", "--rw", "randwrite", *flags, "--no-progress", timeout=60)
    assert_one_line_error(cp, *needles)


def test_force_runs_a_job_beyond_the_maxima(small_drive_file: Path, small_drive: Dict[str, Any]) -> None:
    sim = Simulator(small_drive)
    with pytest.raises(WorkloadError) as e:
        sim.parse_job(rw="randwrite", runtime="720h")
    assert e.value.field == "runtime"  # type: ignore[attr-defined]
    assert sim.parse_job(rw="randwrite", runtime="720h", force=True)["runtime_ns"] == 720 * 3600 * 10**9
    cap = sim.capacity_bytes
    args = ["run", "--drive", str(small_drive_file), "--rw", "write", "--bs", "1m", "--iodepth", "4", "--io-size",
            str(101 * cap), "--no-progress", "--json"]
    assert_one_line_error(run_cli(*args), "'io_size'", "--force")
    cp = run_cli(*args, "--force")
    assert cp.returncode == 0, cp.stderr
    assert json.loads(cp.stdout)["jobs"][0]["write"]["io_bytes"] == 101 * cap


# ---------------------------------------------------------------------------
# number_ios 0 = no limit (fio)
# ---------------------------------------------------------------------------


def test_number_ios_zero_means_no_limit_as_in_fio(small_drive_file: Path, small_drive: Dict[str, Any], traces_dir: Path) -> None:
    # Before: the job ran no I/O at all ("no I/O completed").
    cp = run_cli("run", "--drive", str(small_drive_file), "--rw", "write", "--bs", "128k", "--number-ios", "0", "--json")
    assert cp.returncode == 0, cp.stderr
    job = json.loads(cp.stdout)["jobs"][0]
    assert job["write"]["io_bytes"] == small_drive["drive"]["user_capacity_bytes"], "one pass, as without number_ios"
    # Before: "argument --number-ios: 0: must be at least 1".
    trace = traces_dir / MSR_SAMPLE
    cp = run_cli("replay", str(trace), "--drive", str(small_drive_file), "--number-ios", "0", "--json")
    assert cp.returncode == 0, cp.stderr
    job = json.loads(cp.stdout)["jobs"][0]
    assert job["read"]["total_ios"] + job["write"]["total_ios"] == 1000
    r = Simulator(small_drive).replay(trace, number_ios=0)
    assert r.data["import"]["records"] == 1000
    assert Simulator(small_drive).parse_job(rw="randread", number_ios=0, runtime="1s")["number_ios"] is None


# ---------------------------------------------------------------------------
# bssplit adds up to 100 (fio's rule)
# ---------------------------------------------------------------------------


def test_a_bssplit_that_does_not_add_up_to_100_is_an_error(small_drive: Dict[str, Any]) -> None:
    # Before: 4k/50:64k/40 ran as weights 50:40 without a word.
    cp = run_cli("run", "--rw", "randread", "--bssplit", "4k/50:64k/40", "--runtime", "1s", timeout=60)
    assert_one_line_error(cp, "'bssplit'", "add up to 90, not 100")
    sim = Simulator(small_drive)
    with pytest.raises(WorkloadError, match="add up to 110, more than 100") as e:
        sim.parse_job(rw="randread", bssplit="4k/50:64k/60")
    assert e.value.field == "bssplit"  # type: ignore[attr-defined]
    # fio: a size without a percentage shares the rest evenly.
    sizes = sim.parse_job(rw="randread", bssplit="4k/50:1k/:32k/")["sizes"]
    assert sizes == [{"bytes": 4096, "weight": 50}, {"bytes": 1024, "weight": 25}, {"bytes": 32768, "weight": 25}]


# ---------------------------------------------------------------------------
# trace generate: the extension names the format, or it is an error
# ---------------------------------------------------------------------------


def test_trace_generate_refuses_an_unknown_extension(tmp_path: Path) -> None:
    # Before: t.xyz was silently written as an fio iolog.
    out = tmp_path / "t.xyz"
    cp = run_cli("trace", "generate", "typical-2010", "--out", str(out))
    assert_one_line_error(cp, str(out), "'.xyz'", ".csv (csv)", ".iolog or .log (fio-iolog)", "--format")
    assert not out.exists()
    with pytest.raises(TraceError) as e:
        write_generated_trace("typical-2010", tmp_path / "noext", 120_000_000_000)
    assert e.value.field == "format" and "no extension" in str(e.value)  # type: ignore[attr-defined]
    # An explicit format writes any name; .log is an iolog.
    assert run_cli("trace", "generate", "typical-2010", "--out", str(out), "--format", "csv").returncode == 0
    assert out.read_text().startswith("time_ns,op,")
    cp = run_cli("trace", "generate", "typical-2010", "--out", str(tmp_path / "t.log"))
    assert cp.returncode == 0 and "as fio-iolog" in cp.stdout, cp.stderr


# ---------------------------------------------------------------------------
# a generated CSV reads back
# ---------------------------------------------------------------------------


def test_a_generated_csv_reads_back_with_trace_stats_and_replay(tmp_path: Path, gb_drive_file: Path) -> None:
    # Before: "cannot detect the trace format ... no format fits", and no --format to give.
    cap = Drive.load(str(gb_drive_file)).capacity_bytes
    csv = tmp_path / "typical.csv"
    cp = run_cli("trace", "generate", "typical-2010", "--out", str(csv), "--drive", str(gb_drive_file), "--seed", "3")
    assert cp.returncode == 0, cp.stderr
    cp = run_cli("trace", "stats", str(csv), "--drive", str(gb_drive_file))
    assert cp.returncode == 0 and "format csv" in cp.stdout, cp.stderr
    back = trace_stats(csv, cap, format="csv")
    gen = generated_stats("typical-2010", cap, seed=3)["stats"]
    assert back["import"]["records"] == gen["records"] and back["import"]["skipped_lines"] == 0
    for k in ("reads", "writes", "trims", "flushes", "read_bytes", "write_bytes", "size_mix_percent", "sequential_share_percent",
              "iodepth_source", "iodepth_mean", "iodepth_max", "duration_ns", "busy_time_ns", "write_bytes_share_percent_by_pattern"):
        assert back["stats"][k] == gen[k], k
    # Replayed, the CSV is the generated trace: the same figures, I/O for I/O.
    base = ["--drive", str(gb_drive_file), "--no-progress", "--json", "--idle-cap", "25ms"]
    from_csv = run_cli("replay", str(csv), "--format", "csv", *base)
    generated = run_cli("replay", "--generated", "typical-2010", "--trace-seed", "3", *base)
    assert from_csv.returncode == 0 and generated.returncode == 0, (from_csv.stderr, generated.stderr)
    a, b = json.loads(from_csv.stdout)["jobs"][0], json.loads(generated.stdout)["jobs"][0]
    for k in ("read", "write", "trim", "storage_bench", "duration_ns", "busy_time_ns"):
        assert a[k] == b[k], k
    assert a["import"]["format"] == "csv"


def test_the_csv_format_reports_its_bad_lines(tmp_path: Path) -> None:
    p = tmp_path / "bad.csv"
    p.write_text("time_ns,op,offset_bytes,length_bytes,iodepth,recorded_latency_ns,data_pattern\n0,read,0,4096,1,0,zeros\n"
                 "5,erase,0,4096,1,0,zeros\n")
    with pytest.raises(TraceError) as e:
        trace_stats(p, format="csv")
    assert (e.value.line, e.value.field) == (3, "op")  # type: ignore[attr-defined]
