"""fio job files run unchanged on a simulated drive: fio's semantics (bounds,
groups, clones, ramp, sync engines) or a clear error, fio's JSON and logs, the
same result for the same seed."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Dict

import pytest

from ssdlab import Simulator
from ssdlab.fio import parse, simulate
from ssdlab.fio.errors import JobFileError
from ssdlab.fio.jobfile import parse_jobfile, parse_jobfile_text

# fio's examples/ssd-steadystate.fio with a runtime (and a size the small test
# drive holds); numjobs=4 random writers reported as one group.
STEADY = """\
[global]
ioengine=libaio
direct=1
group_reporting
filename=/dev/fioa
size=16m

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
iodepth=8
numjobs=4
write_iops_log=steady
write_bw_log=steady
log_avg_msec=100
runtime=1
time_based
"""


def run(text: str, drive: Dict[str, Any], seed: int = 1) -> simulate.SimulatedRun:
    return simulate.simulate(parse_jobfile_text(text, "job.fio", env={}), drive, seed=seed)


def plan_err(text: str, capacity: int = 50 << 20) -> JobFileError:
    with pytest.raises(JobFileError) as ei:
        simulate.plan(parse_jobfile_text(text, "job.fio", env={}), capacity)
    return ei.value


def test_steady_state_example_runs_and_reads_back_like_real_fio_output(small_drive: Dict[str, Any], tmp_path: Path) -> None:
    r = run(STEADY, small_drive)
    doc = r.document
    assert doc["fio version"].startswith("ssdlab-")
    fill, steady = doc["jobs"]
    assert (fill["jobname"], fill["groupid"], steady["jobname"], steady["groupid"]) == ("sequential-fill", 0, "random-write-steady", 1)
    # One pass over size without time_based: exactly 16 MiB written.
    assert fill["write"]["io_bytes"] == 16 << 20 and fill["write"]["total_ios"] == 16
    assert steady["write"]["runtime"] == 1000
    # The four clones are one queue of 4 x 8.
    assert steady["ssdlab"]["iodepth"] == 32 and steady["ssdlab"]["clones"] == 4
    assert steady["desc"] == "Random write steady state phase"
    w = steady["write"]
    assert w["io_kbytes"] == w["io_bytes"] // 1024 and w["bw"] == w["bw_bytes"] // 1024
    assert w["clat_ns"]["N"] == w["total_ios"] and "99.000000" in w["clat_ns"]["percentile"]
    assert w["iops_samples"] == 10
    # Logs named as fio names them: clones are fio jobs 2..5.
    assert sorted(r.logs) == [f"steady_{k}.{n}.log" for k in ("bw", "iops") for n in (2, 3, 4, 5)]
    simulate.write_outputs(r, tmp_path / "out.json", tmp_path)
    # The same parser reads it (and the job file maps the logs exactly).
    res = parse.read_fio_output(tmp_path / "out.json", tmp_path, parse_jobfile_text(STEADY, "j", env={}))
    assert res.source == "ssdlab"
    sj = res.job("random-write-steady")
    assert (sj.rw, sj.bs_bytes, sj.iodepth, sj.numjobs) == ("randwrite", 4096, 8, 4)
    assert sj.iops == pytest.approx(w["iops"])
    assert sj.iops_series is not None and len(sj.iops_series.write) == 10
    # Clones' logs sum to the group's I/Os per interval.
    m = r.measured[1]
    per_interval = m.series["write_ios"] * 1000 // 100
    assert [int(x) for x in sj.iops_series.write] == pytest.approx([int(x) for x in per_interval], abs=4)
    assert sj.bw_series is not None and sj.bw_series.write[0] == pytest.approx(sj.iops_series.write[0] * 4096 / 1e6, rel=0.01)


def test_same_seed_same_json_but_timestamps(small_drive: Dict[str, Any]) -> None:
    def strip(doc: Dict[str, Any]) -> Dict[str, Any]:
        d = copy.deepcopy(doc)
        for k in ("timestamp", "timestamp_ms", "time"):
            d.pop(k)
        d["ssdlab"]["manifest"].pop("timestamp")
        return d

    a, b, c = run(STEADY, small_drive, 3), run(STEADY, small_drive, 3), run(STEADY, small_drive, 4)
    assert json.dumps(strip(a.document), sort_keys=True) == json.dumps(strip(b.document), sort_keys=True)
    assert a.logs == b.logs
    assert strip(a.document)["jobs"] != strip(c.document)["jobs"]


def test_runtime_without_time_based_stops_after_one_pass(small_drive: Dict[str, Any]) -> None:
    # fio: runtime caps a job; it does not make it time based.
    r = run("[w]\nioengine=libaio\nrw=write\nbs=128k\niodepth=4\nsize=8m\nruntime=60\n", small_drive)
    job = r.document["jobs"][0]
    assert job["write"]["io_bytes"] == 8 << 20
    assert job["ssdlab"]["duration_ns"] < 10**9


def test_number_ios_does_not_extend_a_pass(small_drive: Dict[str, Any]) -> None:
    # fio: number_ios "will not extend the amount of I/O" beyond size.
    r = run("[r]\nrw=randread\nsize=1m\nnumber_ios=1000\n", small_drive)
    assert r.document["jobs"][0]["read"]["total_ios"] == 256
    r = run("[r]\nrw=randread\nsize=1m\nnumber_ios=100\n", small_drive)
    assert r.document["jobs"][0]["read"]["total_ios"] == 100


def test_time_based_runs_for_the_runtime_and_loops_multiply_a_pass(small_drive: Dict[str, Any]) -> None:
    r = run("[t]\nioengine=libaio\nrw=randwrite\niodepth=4\nsize=4m\nruntime=300ms\ntime_based\n", small_drive)
    assert r.document["jobs"][0]["ssdlab"]["duration_ns"] >= 300_000_000
    assert r.document["jobs"][0]["write"]["runtime"] == 300
    r = run("[l]\nrw=write\nbs=64k\nsize=2m\nloops=3\n", small_drive)
    assert r.document["jobs"][0]["write"]["io_bytes"] == 6 << 20


def test_fios_default_psync_engine_keeps_one_io_in_flight(small_drive: Dict[str, Any]) -> None:
    fill = ("[fill]\nioengine=libaio\nrw=write\nbs=128k\niodepth=8\nsize=4m\n"
            "[q]\nstonewall\nrw=randread\niodepth=32\nsize=4m\nruntime=100ms\ntime_based\n")
    r = run(fill, small_drive)
    job = r.document["jobs"][1]
    assert job["ssdlab"]["iodepth"] == 1
    assert any("psync" in n and "iodepth=32" in n for n in job["ssdlab"]["notes"])
    r2 = run(fill.replace("[q]\n", "[q]\nioengine=io_uring\n"), small_drive)
    assert r2.document["jobs"][1]["ssdlab"]["iodepth"] == 32
    assert r2.document["jobs"][1]["read"]["iops"] > 2 * job["read"]["iops"]


def test_ramp_time_is_run_but_not_reported(small_drive: Dict[str, Any]) -> None:
    r = run("[g]\nioengine=libaio\nrw=randwrite\niodepth=8\nsize=8m\nramp_time=500ms\nruntime=200ms\ntime_based\n", small_drive)
    assert [p.name for p in r.phases] == ["g (ramp)", "g"]
    job = r.document["jobs"][0]
    assert job["write"]["runtime"] == 200 and job["ssdlab"]["ramp_ns"] >= 500_000_000
    assert job["elapsed"] == 1
    assert job["write"]["io_bytes"] < r.phases[0].data["write"]["io_bytes"]


def test_startdelay_idles_and_end_fsync_flushes(small_drive: Dict[str, Any]) -> None:
    r = run("[d]\nrw=randwrite\nsize=1m\nnumber_ios=10\nstartdelay=2\nend_fsync=1\n", small_drive)
    assert r.phases[0].kind == "idle" and r.phases[0].duration_s == pytest.approx(2.0)
    assert r.document["jobs"][0]["write"]["total_ios"] == 10


def test_iops_log_has_fios_format_and_no_line_without_io(small_drive: Dict[str, Any]) -> None:
    r = run("[m]\nioengine=libaio\nrw=randrw\nrwmixread=50\niodepth=4\nsize=4m\nruntime=3\ntime_based\n"
            "write_iops_log=mix\nlog_avg_msec=1000\n", small_drive)
    lines = r.logs["mix_iops.1.log"].splitlines()
    assert len(lines) == 6  # 3 intervals x (read, write)
    ms, value, ddir, bs, off = (int(x) for x in lines[1].split(", "))
    assert (ms, ddir, bs, off) == (1000, 1, 0, 0)
    assert value == int(r.measured[0].series["write_ios"][0])
    reads_only = run("[r]\nrw=randread\nsize=1m\nruntime=1\ntime_based\nwrite_iops_log=r\nlog_avg_msec=500\n", small_drive)
    assert {line.split(", ")[2] for line in reads_only.logs["r_iops.1.log"].splitlines()} == {"0"}


@pytest.mark.parametrize(
    "text,field,line,needles",
    [
        ("[a]\nrw=write\nramp_time=5\nruntime=10\ntime_based\n", "ramp_time", 3, ["random jobs only"]),
        ("[a]\nrw=randwrite\nramp_time=5\nsize=1m\n", "ramp_time", 3, ["time_based"]),
        ("[a]\nrw=write\ntime_based\n", "time_based", 3, ["needs a runtime"]),
        ("[a]\nrw=trim\nwrite_bw_log=t\n", "write_bw_log", 3, ["trim"]),
    ],
)
def test_what_fio_would_run_differently_is_refused_with_the_reason(text: str, field: str, line: int, needles: list[str]) -> None:
    e = plan_err(text)
    assert (e.field, e.line) == (field, line), str(e)
    for n in needles:
        assert n in str(e), (n, str(e))


def test_identical_concurrent_random_jobs_merge_into_one_queue() -> None:
    text = "[global]\nioengine=libaio\ngroup_reporting\nrw=randread\niodepth=4\nsize=4m\nruntime=1\ntime_based\n[a]\n[b]\nname=other\n"
    (p,) = simulate.plan(parse_jobfile_text(text, "j", env={}), 50 << 20)
    assert p.clones == 2 and p.engine["iodepth"] == 8 and p.numbers == (1, 2)
    # Bounds add up over clones: each clone does its own pass / number_ios.
    text = "[a]\nioengine=libaio\ngroup_reporting\nrw=randwrite\niodepth=4\nsize=4m\nnumber_ios=100\nnumjobs=3\n"
    (p,) = simulate.plan(parse_jobfile_text(text, "j", env={}), 50 << 20)
    assert (p.engine["iodepth"], p.engine["number_ios"], p.engine["io_size"], p.numbers) == (12, 300, 12 << 20, (1, 2, 3))


def test_the_engines_own_checks_name_the_line(small_drive: Dict[str, Any]) -> None:
    with pytest.raises(JobFileError) as ei:
        run("[a]\nrw=write\noffset=10g\n", small_drive)
    assert ei.value.line == 3 and ei.value.field == "offset"


def test_ctrl_c_keeps_the_finished_jobs(small_drive: Dict[str, Any]) -> None:
    calls = [0]

    def progress(*_: int) -> bool:
        calls[0] += 1
        if calls[0] == 5:
            raise KeyboardInterrupt
        return True

    jf = parse_jobfile_text("[a]\nrw=randwrite\nsize=4m\nruntime=2\ntime_based\n[b]\nstonewall\nrw=randread\nsize=4m\nruntime=20\n"
                            "time_based\n", "j", env={})
    with pytest.raises(KeyboardInterrupt) as ei:
        simulate.simulate(jf, small_drive, progress=progress)
    partial = ei.value.run  # type: ignore[attr-defined]
    assert partial.interrupted and partial.document["ssdlab"]["interrupted"]
    a, b = partial.document["jobs"]
    assert a["write"]["runtime"] == 2000 and not a["ssdlab"]["interrupted"]
    assert b["ssdlab"]["interrupted"] and 0 < b["read"]["runtime"] < 20000


def test_a_preconditioned_simulator_can_be_passed_in(small_drive: Dict[str, Any]) -> None:
    sim = Simulator(small_drive, seed=2)
    sim.run({"rw": "write", "bs": "128k", "iodepth": 8})
    jf = parse_jobfile_text("[r]\nrw=read\nbs=128k\nsize=8m\n", "j", env={})
    r = simulate.simulate(jf, simulator=sim)
    assert r.document["jobs"][0]["read"]["io_bytes"] == 8 << 20 and len(sim.history) == 2


def test_main_writes_json_and_logs_or_one_error_line(small_drive: Dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    drive = tmp_path / "d.json"
    drive.write_text(json.dumps(small_drive))
    job = tmp_path / "j.fio"
    job.write_text("[w]\nrw=randwrite\nsize=4m\nruntime=2\ntime_based\nwrite_iops_log=w\nlog_avg_msec=1000\n")
    out = tmp_path / "o.json"
    assert simulate.main([str(job), "--drive", str(drive), "--output", str(out), "--log-dir", str(tmp_path / "logs")]) == 0
    assert parse.load_fio_json(out).jobs[0].write.total_ios > 0
    assert (tmp_path / "logs" / "w_iops.1.log").read_text().count("\n") == 2
    assert "norandommap" in capsys.readouterr().err
    job.write_text("[a]\nrw=randread\n[b]\nrw=randwrite\nwrite_hist_log=h\n")
    assert simulate.main([str(job), "--drive", str(drive)]) == 2
    e = capsys.readouterr().err
    assert e.count("\n") == 1 and "j.fio:5" in e and "Traceback" not in e
    job.write_text("[w]\nrw=randread\nsize=1m\nnumber_ios=10\n")
    assert simulate.main([str(job), "--drive", "no-such-preset"]) == 2
    assert "no-such-preset" in capsys.readouterr().err
    job.write_text("[w]\nrw=randread\nsize=1m\nnumber_ios=10\n")
    # a missing directory is made, as every output's is; a directory where the file should go is an error
    assert simulate.main([str(job), "--drive", str(drive), "--output", str(tmp_path / "missing-dir" / "o.json")]) == 0
    (tmp_path / "a-dir").mkdir()
    assert simulate.main([str(job), "--drive", str(drive), "--output", str(tmp_path / "a-dir")]) == 2
    assert "is a directory" in capsys.readouterr().err


def test_parse_only_plans_against_a_preset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    job = tmp_path / "j.fio"
    job.write_text("[w]\nrw=randwrite\nsize=50%\niodepth=32\n")
    assert simulate.main([str(job), "--drive", "generic-mlc-120", "--parse-only"]) == 0
    out = capsys.readouterr().out
    assert '"size": 60000000000' in out and '"iodepth": 1' in out and "psync" in out
    assert parse_jobfile(job).jobs[0].name == "w"


def test_clones_without_group_reporting_are_reported_one_by_one(small_drive: Dict[str, Any], tmp_path: Path) -> None:
    # fio prints one entry per clone without group_reporting; the merged queue
    # is split exactly (I/Os and bytes add up to the queue's).
    text = "[a]\nioengine=libaio\nrw=randwrite\nbs=4k\niodepth=4\nsize=8m\nnumjobs=3\nruntime=300ms\ntime_based\nwrite_iops_log=a\nlog_avg_msec=100\n"
    r = run(text, small_drive)
    entries = r.document["jobs"]
    assert [e["jobname"] for e in entries] == ["a"] * 3 and {e["groupid"] for e in entries} == {0}
    total = r.measured[0].data["write"]
    assert sum(e["write"]["total_ios"] for e in entries) == total["total_ios"]
    assert sum(e["write"]["io_bytes"] for e in entries) == total["io_bytes"]
    assert max(e["write"]["total_ios"] for e in entries) - min(e["write"]["total_ios"] for e in entries) <= 1
    assert any("reported one by one" in n for n in r.document["ssdlab"]["notes"])
    simulate.write_outputs(r, tmp_path / "out.json", tmp_path)
    res = parse.read_fio_output(tmp_path / "out.json", tmp_path)
    assert [j.name for j in res.jobs] == ["a"] * 3
    assert all(j.iops_series is not None for j in res.jobs)


def nvme_drive(small: Dict[str, Any], queue_depth: int = 1024) -> Dict[str, Any]:
    d = copy.deepcopy(small)
    d["host"] = {"interface": "nvme", "pcie_gen": 3, "pcie_lanes": 4, "queue_count": 8, "queue_depth": queue_depth}
    return d


def test_numjobs_clones_on_an_nvme_drive_each_get_their_own_queue(small_drive: Dict[str, Any]) -> None:
    # On SATA identical random clones share the one NCQ as one merged queue;
    # on NVMe each clone submits through its own queue pair, side by side.
    text = "[a]\nioengine=libaio\nrw=randread\nbs=4k\niodepth=32\nsize=8m\nnumjobs=4\nruntime=100ms\ntime_based\ngroup_reporting\n"
    jf = parse_jobfile_text(text, "job.fio", env={})
    assert len(simulate.plan(jf, 50 << 20)) == 1
    planned = simulate.plan(jf, 50 << 20, queue_per_job=True)
    assert len(planned) == 4 and all(p.engine["iodepth"] == 32 for p in planned)
    r = run(text, nvme_drive(small_drive))
    assert r.document["jobs"][0]["read"]["total_ios"] > 0


def test_one_job_on_nvme_keeps_more_than_sata_s_32_commands_in_flight(small_drive: Dict[str, Any]) -> None:
    sim = Simulator(nvme_drive(small_drive), seed=1)
    r = sim.run(rw="randread", bs="4k", iodepth=1000, size="8m", runtime="50ms")
    assert r.iops > 0
