"""fio's options that shape how jobs issue, with fio's semantics on a
simulated drive: the poisson rate process, flows between jobs, the
latency-target search, block sizes per direction of a mixed job, loops of a
sequential job, and dedupe (accepted with a note: no drive deduplicates)."""

from __future__ import annotations

from typing import Any, Dict, List

import numpy as np
import pytest

from ssdlab import Simulator
from ssdlab.fio import simulate
from ssdlab.fio.errors import JobFileError
from ssdlab.fio.jobfile import parse_jobfile_text


def run(text: str, drive: Dict[str, Any], seed: int = 1) -> simulate.SimulatedRun:
    return simulate.simulate(parse_jobfile_text(text, "job.fio", env={}), simulator=Simulator(drive, seed=seed))


def plan(text: str, capacity: int = 50 << 20) -> List[simulate.PlannedJob]:
    return list(simulate.plan(parse_jobfile_text(text, "job.fio", env={}), capacity))


# -- rate_process=poisson ---------------------------------------------------

def _per_10ms(text: str, drive: Dict[str, Any], seed: int = 1) -> np.ndarray:
    r = run(text, drive, seed)
    ios = r.measured[0].series["read_ios"]
    return np.asarray(ios[5:-1], dtype=float)  # whole intervals after the start


RATE = "[p]\nrw=randread\nsize=8m\nioengine=libaio\niodepth=32\nruntime=3\ntime_based\nrate_iops=2000\nlog_avg_msec=10\n"


def test_poisson_gaps_vary_as_a_poisson_process_and_linear_ones_do_not(small_drive: Dict[str, Any]) -> None:
    # I/Os per 10 ms at 2000 IOPS: 20 on average either way; a poisson
    # process's counts have a variance equal to their mean (dispersion 1),
    # a fixed schedule's almost none
    linear = _per_10ms(RATE, small_drive)
    poisson = _per_10ms(RATE + "rate_process=poisson\n", small_drive)
    assert abs(linear.mean() - 20) < 1 and abs(poisson.mean() - 20) < 2
    assert linear.var() / linear.mean() < 0.1
    assert 0.7 < poisson.var() / poisson.mean() < 1.4
    # seeded: the same seed repeats the gaps, another seed draws others
    assert np.array_equal(poisson, _per_10ms(RATE + "rate_process=poisson\n", small_drive))
    assert not np.array_equal(poisson, _per_10ms(RATE + "rate_process=poisson\nrandseed=7\n", small_drive))


def test_poisson_needs_a_rate() -> None:
    with pytest.raises(JobFileError, match="give rate or rate_iops") as ei:
        plan("[p]\nrw=randread\nrate_process=poisson\n")
    assert ei.value.field == "rate_process"


# -- flow ---------------------------------------------------------------------

FLOW = ("[global]\nioengine=libaio\niodepth=16\nsize=8m\nbs=8k\nruntime=1\ntime_based\n{sleep}"
        "[w]\nrw=write\nflow={a}\n[r]\nrw=randread\nflow={b}\n")


@pytest.mark.parametrize("a,b,sleep", [(1, 8, "flow_sleep=1000\n"), (3, 1, ""), (1, 1, "flow_sleep=100\n")])
def test_jobs_of_a_flow_issue_in_the_ratio_of_their_weights(small_drive: Dict[str, Any], a: int, b: int, sleep: str) -> None:
    # fio's examples/flow.fio on a small drive: a writer and a reader held
    # to a:b of the flow's I/Os, whatever their own speeds
    w, r = run(FLOW.format(a=a, b=b, sleep=sleep), small_drive).document["jobs"]
    ratio = r["read"]["total_ios"] / w["write"]["total_ios"]
    assert ratio == pytest.approx(b / a, rel=0.05), (w["write"]["total_ios"], r["read"]["total_ios"])


def test_without_a_flow_the_jobs_run_at_their_own_pace(small_drive: Dict[str, Any]) -> None:
    w, r = run(FLOW.format(a=0, b=0, sleep=""), small_drive).document["jobs"]
    assert r["read"]["total_ios"] / w["write"]["total_ios"] != pytest.approx(8, rel=0.2)


def test_jobs_in_different_flows_do_not_hold_each_other_back(small_drive: Dict[str, Any]) -> None:
    text = FLOW.format(a=1, b=8, sleep="").replace("flow=8\n", "flow=8\nflow_id=2\n")
    w, r = run(text, small_drive).document["jobs"]
    assert r["read"]["total_ios"] / w["write"]["total_ios"] != pytest.approx(8, rel=0.2)


def test_fios_butterfly_example_alternates_its_two_streams(small_drive: Dict[str, Any]) -> None:
    # examples/butterfly.fio on 2 MiB: each I/O of one direction is
    # followed by one of the other
    text = "[global]\nbs=4k\nsize=2m\n[forward]\nrw=read\nflow=2\n[backward]\nrw=read:-8k\nflow=2\n"
    f, b = run(text, small_drive).document["jobs"]
    assert f["read"]["total_ios"] == b["read"]["total_ios"] == 512


# -- latency_target -------------------------------------------------------------

def _depth_for(target_us: int, drive: Dict[str, Any], pct: str = "99") -> Dict[str, Any]:
    text = ("[fill]\nrw=write\nbs=128k\nsize=8m\nioengine=libaio\niodepth=4\n"
            "[search]\nstonewall\nrw=randread\nsize=8m\nioengine=libaio\niodepth=32\nruntime=20\ntime_based\n"
            f"latency_target={target_us}\nlatency_window=100000\nlatency_percentile={pct}\n")
    job: Dict[str, Any] = run(text, drive).document["jobs"][1]
    return job


def test_the_latency_search_finds_a_shallower_queue_for_a_tighter_target(small_drive: Dict[str, Any]) -> None:
    loose = _depth_for(100_000, small_drive)
    tight = _depth_for(300, small_drive)
    tighter = _depth_for(150, small_drive)
    assert loose["latency_depth"] == 32
    assert 1 <= tighter["latency_depth"] < tight["latency_depth"] < 32
    # fio's keys and units: the target in ns, the window in us
    assert (tight["latency_target"], tight["latency_window"], tight["latency_percentile"]) == (300_000, 100_000, 99.0)
    # the search stops after a final window at the depth it found, and the
    # report holds only that window (fio resets the statistics for it)
    assert tight["read"]["runtime"] == pytest.approx(100, abs=2)
    assert tight["read"]["clat_ns"]["percentile"]["99.000000"] <= 300_000
    assert tight["error"] == 0


def test_latency_run_keeps_searching_for_the_whole_runtime(small_drive: Dict[str, Any]) -> None:
    text = ("[search]\nrw=randread\nsize=8m\nioengine=libaio\niodepth=32\nruntime=2\ntime_based\n"
            "latency_target=100000\nlatency_window=100000\nlatency_run=1\n")
    job = run(text, small_drive).document["jobs"][0]
    assert job["read"]["runtime"] == pytest.approx(2000, abs=2) and job["latency_depth"] == 32


def test_a_target_missed_at_depth_one_fails_the_job_as_fio(small_drive: Dict[str, Any]) -> None:
    text = "[search]\nrw=randread\nsize=8m\nioengine=libaio\niodepth=8\nruntime=1\ntime_based\nlatency_target=1\n"
    r = run(text, small_drive)
    job = r.document["jobs"][0]
    assert job["error"] == 110 and job["latency_depth"] == 1 and job["read"]["total_ios"] < 100
    assert any("ETIMEDOUT" in n for n in r.document["ssdlab"]["notes"])


# -- bs/bssplit per direction ---------------------------------------------------

def test_a_mixed_job_draws_each_directions_sizes_from_its_own_split(small_drive: Dict[str, Any]) -> None:
    # examples/cmdprio-bssplit.fio: reads 40% 64k and 60% 1M, writes all 1M
    text = "[m]\nrw=randrw\nbssplit=64k/40:1024k/60,1024k/100\nsize=16m\nruntime=3\ntime_based\nioengine=libaio\niodepth=4\n"
    (p,) = plan(text)
    assert (p.engine["bssplit"], p.engine["write_bssplit"]) == ("65536/40:1048576/60", "1048576/100")
    job = run(text, small_drive).document["jobs"][0]
    rd, wr = job["read"], job["write"]
    assert wr["io_bytes"] == wr["total_ios"] << 20
    assert rd["io_bytes"] / rd["total_ios"] == pytest.approx(0.4 * 65536 + 0.6 * 1048576, rel=0.08)
    # bs=R,W: one size each
    job = run("[m]\nrw=randrw\nbs=4k,64k\nsize=16m\nruntime=1\ntime_based\n", small_drive).document["jobs"][0]
    assert job["read"]["io_bytes"] == job["read"]["total_ios"] * 4096
    assert job["write"]["io_bytes"] == job["write"]["total_ios"] * 65536


# -- loops of a sequential job ---------------------------------------------------

def test_each_loop_of_a_sequential_job_restarts_at_its_offset(small_drive: Dict[str, Any]) -> None:
    # io_size 3 MiB of an 8 MiB region, twice: fio writes 0-3 MiB twice,
    # not 0-6 MiB
    text = "[l]\nrw=write\nbs=1m\nsize=8m\noffset=4m\nio_size=3m\nloops=2\n"
    (p,) = plan(text)
    assert (p.engine["io_size"], p.engine["loop_bytes"]) == (6 << 20, 3 << 20)
    sim = Simulator(small_drive, seed=1)
    simulate.simulate(parse_jobfile_text(text, "j", env={}), simulator=sim)
    # what the loops wrote reads from the NAND (or the write buffer); past it
    # the drive has nothing mapped, which it answers without a NAND read
    written = sim.run({"rw": "read", "bs": "1m", "offset": "4m", "size": "3m", "io_size": "3m"})
    past = sim.run({"rw": "read", "bs": "1m", "offset": "7m", "size": "3m", "io_size": "3m"})
    assert written.data["ssdlab"]["nand_bytes_read"] >= 2 << 20
    assert past.data["ssdlab"]["nand_bytes_read"] == 0


def test_a_time_based_sequential_job_restarts_at_its_offset_every_io_size() -> None:
    (p,) = plan("[a]\nrw=write\nsize=4m\nio_size=3m\nruntime=1\ntime_based\n")
    assert p.engine["loop_bytes"] == 3 << 20 and "io_size" not in p.engine


# -- dedupe and the refusals that are fio's own --------------------------------

def test_dedupe_options_are_a_note_and_the_data_is_what_fio_writes_without_them(small_drive: Dict[str, Any]) -> None:
    base = "[global]\nsize=4m\nbs=4k\nrw=write\nbuffer_compress_percentage=50\n"
    dedupe = "dedupe_mode=working_set\ndedupe_global=1\ndedupe_percentage=50\ndedupe_working_set_percentage=50\n"
    with_d = plan(base + dedupe + "[a]\n")[0]
    without = plan(base + "[a]\n")[0]
    assert with_d.engine == without.engine
    r = run(base + dedupe + "[a]\n", small_drive)
    notes = [n for n in r.document["ssdlab"]["notes"] if "dedupe" in n]
    assert len(notes) == 4 and "deduplicates" in notes[0] and all("no effect" in n for n in notes)
    with pytest.raises(JobFileError, match="working_set"):
        plan(base + "dedupe_mode=sometimes\n[a]\n")


@pytest.mark.parametrize(
    "text,field,needle",
    [
        ("[f]\nrw=randwrite\nfilesize=60m\n", "filesize", "written for a larger drive"),
        ("[f]\nrw=write\nsize=40m\noffset_increment=60m\nnumjobs=2\n", "offset_increment", "written for a larger drive"),
        ("[f]\nrw=${FIO_RW}\n", "rw", "refuses the empty value too"),
    ],
)
def test_what_fio_would_not_run_as_written_is_refused_as_fio_would(text: str, field: str, needle: str) -> None:
    with pytest.raises(JobFileError) as ei:
        plan(text)
    assert ei.value.field == field and needle in str(ei.value)


# -- random_distribution=zipf|pareto|normal ---------------------------------

def test_skewed_random_writes_amplify_less_than_uniform_ones_on_a_full_drive(small_drive: Dict[str, Any]) -> None:
    """Hot blocks rewritten often leave whole NAND blocks invalid for GC and
    get rewritten in the write buffer: fio's zipf and pareto writes to a
    full drive move less data than uniform ones."""
    from ssdlab import Drive
    waf = {}
    for dist in ("random", "zipf:1.2", "pareto:0.9", "normal:10"):
        sim = Simulator(Drive.load(small_drive), seed=1)
        sim.precondition("filled")
        waf[dist] = sim.run(rw="randwrite", bs="4k", iodepth=8, io_size="128m", random_distribution=dist).waf
    assert all(waf[d] < 0.6 * waf["random"] for d in ("zipf:1.2", "pareto:0.9", "normal:10")), waf
    # a job file says the same, and fio's limits stay errors naming the line
    text = "[z]\nrw=randwrite\nbs=4k\nsize=16m\nnumber_ios=500\nrandom_distribution=zipf:1.2:0.25\n"
    assert run(text, small_drive).document["jobs"][0]["write"]["total_ios"] == 500
    with pytest.raises(JobFileError, match=r"job.fio:6.*random_distribution.*zipf"):
        run(text.replace("zipf:1.2:0.25", "zipf:1"), small_drive)


def test_a_skewed_choice_among_files_is_refused_naming_the_option(small_drive: Dict[str, Any]) -> None:
    text = "[f]\nrw=randread\nbs=4k\nsize=16m\nnrfiles=4\nnumber_ios=100\nfile_service_type=zipf:1.1\n"
    with pytest.raises(JobFileError, match=r"job.fio:7.*file_service_type.*zoned_abs"):
        run(text, small_drive)
    # a uniform choice of equal files is the engine's uniform draw over their span
    assert run(text.replace("zipf:1.1", "random"), small_drive).document["jobs"][0]["read"]["total_ios"] == 100
