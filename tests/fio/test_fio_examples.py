"""fio job files as people write them: the everyday options of fio's own
examples run on a simulated drive (files as regions of the drive, holed and
backwards sequential I/O, trim-then-write, block size ranges) or are refused
for an honest reason."""

from __future__ import annotations

from typing import Any, Dict

import pytest

from ssdlab import Simulator
from ssdlab.fio import simulate
from ssdlab.fio.errors import JobFileError
from ssdlab.fio.jobfile import parse_jobfile_text


def run(text: str, drive: Dict[str, Any], seed: int = 1) -> simulate.SimulatedRun:
    return simulate.simulate(parse_jobfile_text(text, "job.fio", env={}), simulator=Simulator(drive, seed=seed))


def test_fios_backwards_read_example_reads_every_block_once(small_drive: Dict[str, Any]) -> None:
    # examples/backwards-read.fio with a size the small drive holds
    r = run("[backwards-read]\nbs=4k\nrw=read:-8k\nfilename=128m\nsize=8m\n", small_drive)
    job = r.document["jobs"][0]
    assert job["read"]["io_bytes"] == 8 << 20 and job["read"]["total_ios"] == 2048


def test_trimwrite_trims_and_writes_every_block(small_drive: Dict[str, Any]) -> None:
    r = run("[tw]\nrw=trimwrite\nbs=64k\nsize=4m\nioengine=libaio\niodepth=4\n", small_drive)
    job = r.document["jobs"][0]
    assert job["trim"]["total_ios"] == job["write"]["total_ios"] == 32
    assert job["trim"]["io_bytes"] == job["write"]["io_bytes"] == 2 << 20


def test_files_are_consecutive_regions_of_the_drive(small_drive: Dict[str, Any]) -> None:
    text = "[f]\nrw=randwrite\nfilesize=1m\nnrfiles=4\noffset=2m\n"
    (p,) = simulate.plan(parse_jobfile_text(text, "j", env={}), 50 << 20)
    assert (p.engine["offset"], p.engine["size"], p.engine["io_size"]) == (2 << 20, 4 << 20, 4 << 20)
    assert any("consecutive regions" in n for n in p.notes)
    # a sequential job over files served one after the other is one stream
    text = "[f]\nrw=write\nfilesize=1m\nnrfiles=4\nfile_service_type=sequential\n"
    (p,) = simulate.plan(parse_jobfile_text(text, "j", env={}), 50 << 20)
    assert p.engine["size"] == 4 << 20
    r = run(text, small_drive)
    assert r.document["jobs"][0]["write"]["io_bytes"] == 4 << 20


def test_fill_device_writes_to_the_end_of_the_drive() -> None:
    (p,) = simulate.plan(parse_jobfile_text("[f]\nrw=write\nbs=1m\nsize=1m\noffset=10m\nfill_device=1\n", "j", env={}), 50 << 20)
    assert (p.engine["offset"], p.engine["size"]) == (10 << 20, 40 << 20)


def test_bsrange_runs_with_sizes_between_its_bounds(small_drive: Dict[str, Any]) -> None:
    r = run("[b]\nrw=randread\nbsrange=4k-16k\nsize=8m\nnumber_ios=500\n", small_drive)
    read = r.document["jobs"][0]["read"]
    mean_bs = read["io_bytes"] / read["total_ios"]
    assert read["total_ios"] == 500 and 8192 < mean_bs < 12288


@pytest.mark.parametrize(
    "text,field,line,needles",
    [
        ("[f]\nrw=write\nfilesize=1m\nnrfiles=4\n", "nrfiles", 4, ["interleaved streams", "file_service_type=sequential"]),
        ("[f]\nrw=read\nsize=40m\noffset_increment=20m\nnumjobs=2\n", "offset_increment", 4, ["ends past the drive"]),
        ("[f]\nrw=write\nfilesize=40m\nnrfiles=2\n", "filesize", 3, ["past the drive"]),
        ("[f]\nrw=read:-3\n", "rw", 2, ["512"]),
        ("[f]\nrw=randread\nrandom_distribution=zipf:1\n", "random_distribution", 3, ["zipf", "fio refuses 1"]),
        ("[f]\nrw=randread\nnrfiles=2\nfile_service_type=pareto\n", "file_service_type", 4, ["favours some", "zoned_abs"]),
    ],
)
def test_what_runs_differently_is_refused_with_the_reason(text: str, field: str, line: int, needles: list[str]) -> None:
    jf = parse_jobfile_text(text, "job.fio", env={})
    with pytest.raises(JobFileError) as ei:
        sim = Simulator(_drive(), seed=1)
        simulate.simulate(jf, simulator=sim)
    e = ei.value
    assert (e.field, e.line) == (field, line), str(e)
    for n in needles:
        assert n in str(e), (n, str(e))


def _drive() -> Dict[str, Any]:
    from conftest import make_drive

    return make_drive()


def test_host_side_options_and_unset_variables_are_notes_in_the_output(small_drive: Dict[str, Any]) -> None:
    r = run("[j]\nrw=randread\nsize=1m\ncpus_allowed=0\nfilename=${NOPE}\n", small_drive)
    notes = r.document["ssdlab"]["notes"]
    assert any("'cpus_allowed'" in n and "no effect" in n for n in notes)
    assert any("${NOPE}" in n for n in notes)


def test_clones_with_offset_increment_run_side_by_side_at_their_offsets(small_drive: Dict[str, Any]) -> None:
    text = "[f]\nrw=write\nbs=64k\nsize=8m\noffset_increment=16m\nnumjobs=3\nioengine=libaio\niodepth=2\n"
    planned = simulate.plan(parse_jobfile_text(text, "j", env={}), 50 << 20)
    assert [p.engine["offset"] for p in planned] == [0, 16 << 20, 32 << 20]
    assert {p.concurrent for p in planned} == {0} and [p.numbers for p in planned] == [(1,), (2,), (3,)]
    r = run(text, small_drive)
    assert [j["write"]["io_bytes"] for j in r.document["jobs"]] == [8 << 20] * 3


def test_jobs_without_stonewall_run_side_by_side_and_group_reporting_merges_them(small_drive: Dict[str, Any]) -> None:
    text = ("[global]\nioengine=libaio\nsize=8m\nruntime=300ms\ntime_based\n[a]\nrw=randread\niodepth=4\n"
            "[b]\nrw=write\nbs=128k\niodepth=2\n")
    r = run(text, small_drive)
    a, b = r.document["jobs"]
    assert (a["jobname"], b["jobname"]) == ("a", "b") and a["groupid"] == b["groupid"] == 0
    assert a["read"]["total_ios"] > 0 and b["write"]["total_ios"] > 0 and a["latency_depth"] == 4
    # the same jobs alone: the reader is faster without the writer beside it
    alone = run("[a]\nioengine=libaio\nsize=8m\nruntime=300ms\ntime_based\nrw=randread\niodepth=4\n", small_drive)
    assert alone.document["jobs"][0]["read"]["iops"] > a["read"]["iops"]
    merged = run("[global]\ngroup_reporting\n" + text.split("\n", 1)[1], small_drive).document["jobs"]
    assert len(merged) == 1 and merged[0]["read"]["total_ios"] == a["read"]["total_ios"]
    assert merged[0]["write"]["total_ios"] == b["write"]["total_ios"]
    assert merged[0]["ssdlab"]["merged_jobs"] == ["a", "b"]


def test_rate_iops_and_thinktime_pace_a_job_as_fio(small_drive: Dict[str, Any]) -> None:
    r = run("[r]\nrw=randread\nsize=8m\nruntime=1\ntime_based\nrate_iops=500\n", small_drive)
    assert abs(r.document["jobs"][0]["read"]["total_ios"] - 500) <= 2
    # thinktime's bare number is microseconds, as in fio
    r = run("[r]\nrw=randread\nsize=8m\nruntime=1\ntime_based\nthinktime=10000\nthinktime_blocks=5\n", small_drive)
    assert 450 <= r.document["jobs"][0]["read"]["total_ios"] <= 500
    (p,) = simulate.plan(parse_jobfile_text("[w]\nrw=write\nrate=,1m\n", "j", env={}), 50 << 20)
    assert p.engine["rate"] == 1 << 20
    (p,) = simulate.plan(parse_jobfile_text("[w]\nrw=read\nrate=,1m\n", "j", env={}), 50 << 20)
    assert "rate" not in p.engine


def test_verify_runs_in_checking_mode_and_reads_the_region_back_as_fio(small_drive: Dict[str, Any]) -> None:
    # examples/basic-verify.fio on a region the small drive holds
    text = "[write-and-verify]\nrw=randwrite\nbs=4k\nsize=8m\nioengine=libaio\niodepth=16\nverify=crc32c\nverify_fatal=1\n"
    r = simulate.simulate(parse_jobfile_text(text, "v.fio", env={}), small_drive, seed=1)
    job = r.document["jobs"][0]
    assert job["write"]["io_bytes"] == 8 << 20 and job["read"]["io_bytes"] == 8 << 20
    assert job["ssdlab"]["verify"] == {"read_bytes": 8 << 20, "checking_mode": True, "errors": 0}
    assert r.document["ssdlab"]["manifest"]["checking_mode"] is True
    assert any(n.startswith("verify: the simulator runs in checking mode") for n in r.document["ssdlab"]["notes"])
    # verify=null and do_verify=0 verify nothing
    for off in ("verify=null\n", "verify=md5\ndo_verify=0\n"):
        r = simulate.simulate(parse_jobfile_text("[w]\nrw=write\nsize=1m\n" + off, "v.fio", env={}), small_drive, seed=1)
        assert r.document["jobs"][0]["read"]["total_ios"] == 0 and "verify" not in r.document["jobs"][0]["ssdlab"]


def test_fios_zoned_distribution_example_runs(small_drive: Dict[str, Any]) -> None:
    # examples/rand-zones.fio: half the accesses to the first 5% of the region
    r = run("[r]\nrw=randread\nsize=32m\nnumber_ios=1000\nrandom_distribution=zoned:50/5:30/15:20/\n", small_drive)
    assert r.document["jobs"][0]["read"]["total_ios"] == 1000


def test_steady_state_stops_the_job_where_fio_would_and_reports_fios_section(small_drive: Dict[str, Any]) -> None:
    # examples/steadystate.fio's reader on the small drive, with a runtime fio would cut short
    text = "[ss-read]\nrw=randread\nbs=4k\nsize=8m\nruntime=60\ntime_based\nss=iops_slope:1%\nss_dur=5s\nss_ramp=2s\n"
    r = run(text, small_drive)
    job = r.document["jobs"][0]
    ss = job["steadystate"]
    assert ss["attained"] == 1 and ss["duration"] == 5 and ss["ss"] == "iops_slope:1.000000%"
    assert job["job_runtime"] == 7000 and len(ss["data"]["iops"]) == 5 and ss["data"]["iops_mean"] > 0
    # never attained: the job runs its runtime and says so
    r = run(text.replace("iops_slope:1%", "iops:0"), small_drive)
    assert r.document["jobs"][0]["steadystate"]["attained"] == 0 and r.document["jobs"][0]["job_runtime"] == 60000


MIXED = """\
[global]
ioengine=libaio
runtime=2
time_based
[reader]
rw=randread
bs=4k
iodepth=1
[writer]
rw=write
bs=128k
iodepth=4
"""


def test_a_qd1_reader_beside_a_sequential_writer_sees_the_writers_gc_in_its_latency_tail(small_drive: Dict[str, Any]) -> None:
    """The same job file on a sequentially filled drive (the writer finds
    whole blocks invalid: no GC) and on a randomly overwritten one (GC moves
    data): the reader's tail rises with the writer's GC. On the small test
    drive the writer's programs already hold most reads (p50 ~530 us), so the
    rise is a few percent; tests/jobs.rs shows it on a 25nm-class drive."""

    def run_mixed(dirty: bool) -> Dict[str, Any]:
        sim = Simulator(small_drive, seed=1)
        sim.run(rw="write", bs="128k", iodepth=32)
        if dirty:
            sim.run(rw="randwrite", bs="4k", iodepth=32, io_size=sim.capacity_bytes)
        jobs = simulate.simulate(parse_jobfile_text(MIXED, "mixed.fio", env={}), simulator=sim).document["jobs"]
        assert [j["jobname"] for j in jobs] == ["reader", "writer"] and jobs[1]["write"]["total_ios"] > 0
        return {"p99": jobs[0]["read"]["clat_ns"]["percentile"]["99.000000"], "max": jobs[0]["read"]["clat_ns"]["max"],
                "gc": jobs[1]["ssdlab"]["ssdlab"]["gc_bytes_moved"]}

    quiet, busy = run_mixed(False), run_mixed(True)
    assert quiet["gc"] == 0 and busy["gc"] > 0
    assert busy["p99"] > quiet["p99"] and busy["max"] > quiet["max"], (quiet, busy)


def test_a_reading_job_with_verify_is_checked_as_it_reads_without_a_second_pass(small_drive: Dict[str, Any]) -> None:
    # examples/surface-scan.fio's verify phase
    text = "[w]\nrw=write\nbs=64k\nsize=4m\ndo_verify=0\nverify=meta\n[v]\nstonewall\nrw=read\nbs=64k\nsize=4m\nverify=meta\n"
    r = simulate.simulate(parse_jobfile_text(text, "s.fio", env={}), small_drive, seed=1)
    w, v = r.document["jobs"]
    assert w["read"]["total_ios"] == 0 and v["read"]["io_bytes"] == 4 << 20
    assert r.document["ssdlab"]["manifest"]["checking_mode"] is True


def test_buffer_pattern_writes_the_engines_most_compressible_data() -> None:
    (p,) = simulate.plan(parse_jobfile_text("[w]\nrw=write\nbuffer_pattern=0xdeadbeef\nrefill_buffers\n", "j", env={}), 50 << 20)
    assert p.engine["data_pattern"] == "zeros" and "refill_buffers" not in p.engine
    assert any("buffer_pattern" in n for n in p.notes)


def test_clones_too_deep_for_one_queue_run_as_submitters_of_their_own() -> None:
    # one queue holds at most the engine's 65536 I/Os (an NVMe queue's entries)
    text = "[a]\nioengine=libaio\nrw=randread\niodepth=32768\nnumjobs=4\ngroup_reporting\nruntime=1\ntime_based\n"
    planned = simulate.plan(parse_jobfile_text(text, "j", env={}), 50 << 20)
    assert [p.engine["iodepth"] for p in planned] == [32768] * 4 and {p.concurrent for p in planned} == {0}
