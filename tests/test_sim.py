"""The simulator API: state kept between phases, clones, determinism,
preconditioning, results with fio's field names, typed errors."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from ssdlab import MemoryLimitError, PhaseResult, Simulator, WorkloadError
from ssdlab.results import fio_document

RANDWRITE = {"rw": "randwrite", "bs": "4k", "iodepth": 32, "runtime": "1s"}


def _same(a: PhaseResult, b: PhaseResult) -> None:
    assert json.dumps(a.data, sort_keys=True) == json.dumps(b.data, sort_keys=True)
    assert a.series.keys() == b.series.keys()
    for k in a.series:
        np.testing.assert_array_equal(a.series[k], b.series[k])


def test_state_is_kept_between_phases(small_drive: dict) -> None:
    sim = Simulator(small_drive)
    assert sim.smart()["mapped_bytes"] == 0
    fill = sim.precondition("filled")
    assert [p.kind for p in fill] == ["secure_erase", "workload"]  # one 128KB pass; its last I/O covers the tail
    assert sim.capacity_bytes % (128 * 1024) != 0
    assert sim.smart()["mapped_bytes"] == sim.capacity_bytes  # every LBA holds data
    assert sum(p.data["write"]["io_bytes"] for p in fill) == sim.capacity_bytes  # each written once
    t = sim.now_ns
    r = sim.run(RANDWRITE)
    assert sim.now_ns == t + r.data["duration_ns"]
    # A full drive must garbage-collect: the same job on a clean drive does not.
    assert r.waf > 1.0 and r.data["ssdlab"]["gc_victims"] > 0
    clean = Simulator(small_drive).run(dict(RANDWRITE, runtime="0.05s"))
    assert clean.data["ssdlab"]["gc_victims"] == 0
    sim.trim()
    assert sim.smart()["mapped_bytes"] == 0
    assert len(sim.history) == 4


def test_a_clone_is_independent_and_measures_like_the_original(small_drive: dict) -> None:
    sim = Simulator(small_drive, seed=7)
    sim.precondition("filled")
    before = (sim.now_ns, sim.smart())
    twin = sim.clone()
    on_clone = twin.run(RANDWRITE)
    assert (sim.now_ns, sim.smart()) == before  # the clone's run left the original alone
    on_original = sim.run(RANDWRITE)
    _same(on_clone, on_original)
    assert copy.copy(sim).now_ns == sim.now_ns == copy.deepcopy(sim).now_ns


def test_the_same_seed_gives_identical_results_and_another_seed_does_not(small_drive: dict) -> None:
    def measure(seed: int) -> PhaseResult:
        sim = Simulator(small_drive, seed=seed)
        sim.precondition("filled")
        return sim.run(RANDWRITE)

    a, b, c = measure(3), measure(3), measure(4)
    _same(a, b)
    assert json.dumps(a.data, sort_keys=True) != json.dumps(c.data, sort_keys=True)


def test_phase_result_has_fio_field_names_and_consistent_series(small_drive: dict) -> None:
    sim = Simulator(small_drive)
    sim.precondition("filled")
    r = sim.run(rw="randrw", bs="4k", iodepth=8, runtime=2, rwmixread=70, log_avg_msec=100)
    for direction in ("read", "write", "trim"):
        for key in ("iops", "bw_bytes", "io_bytes", "total_ios", "clat_ns"):
            assert key in r.data[direction]
    assert "50.000000" in r.data["read"]["clat_ns"]["percentile"]
    assert r.duration_s == pytest.approx(2.0)
    s = r.series
    assert len(s["time_ns"]) == 20 and s["time_ns"].dtype == np.uint64
    assert int(s["read_ios"].sum()) == r.data["read"]["total_ios"]
    assert int(s["write_ios"].sum()) == r.data["write"]["total_ios"]
    np.testing.assert_allclose(s["iops"], (s["read_ios"] + s["write_ios"]) / 0.1)
    assert float(np.mean(s["iops"])) == pytest.approx(r.iops, rel=1e-6)
    assert r.bw_mbps == pytest.approx((r.data["read"]["io_bytes"] + r.data["write"]["io_bytes"]) / 2.0 / 1e6)
    assert 0.6 < r.data["read"]["total_ios"] / (r.data["read"]["total_ios"] + r.data["write"]["total_ios"]) < 0.8
    d = r.to_dict()
    assert isinstance(d["series"]["iops"], list)
    json.dumps(fio_document([r], sim.manifest()), allow_nan=False)
    assert r.latency_us("read", "p99") >= r.latency_us("read", "p50") > 0
    assert r.manifest["seed"] == 1 and r.manifest["drive_hash"] == sim.drive.hash


def test_fill_is_one_sequential_128KB_pass_over_the_span(small_drive: dict) -> None:
    sim = Simulator(small_drive)
    phases = sim.precondition("filled", span="16m", offset="8m")
    assert sim.smart()["mapped_bytes"] == 16 * 2**20
    w = phases[1].data["write"]
    assert w["io_bytes"] == 16 * 2**20 and w["total_ios"] == 128
    assert phases[1].data["iodepth"] == 32 and phases[1].data["data_pattern"] == "incompressible"
    sim.precondition("clean")
    assert sim.smart()["mapped_bytes"] == 0


def test_idle_time_lets_background_gc_refill_the_free_pool(small_drive: dict) -> None:
    sim = Simulator(small_drive)
    sim.precondition("filled")
    sim.run(RANDWRITE)
    r = sim.idle("5s")
    assert r.kind == "idle" and r.duration_s == pytest.approx(5.0)
    assert r.data["ssdlab"]["bg_gc_victims"] > 0
    assert sim.idle(0.5).duration_s == pytest.approx(0.5)


def test_a_progress_callback_can_stop_a_phase(small_drive: dict) -> None:
    sim = Simulator(small_drive)
    calls = []

    def progress(done_ns: int, total_ns: int, done_bytes: int, total_bytes: int) -> bool:
        calls.append((done_ns, total_ns))
        return done_ns < 300_000_000

    r = sim.run(dict(RANDWRITE, runtime="10s", log_avg_msec=100), progress=progress)
    assert r.interrupted
    assert 0.3 <= r.duration_s < 0.5
    assert calls[0][1] == 10_000_000_000
    # The drive carries on from where the phase stopped.
    assert sim.run(RANDWRITE).duration_s == pytest.approx(1.0)


def test_an_exception_in_progress_stops_the_phase_and_keeps_what_finished(small_drive: dict) -> None:
    sim = Simulator(small_drive)

    def progress(done_ns: int, *_: int) -> None:
        if done_ns > 200_000_000:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt) as e:
        sim.run(dict(RANDWRITE, runtime="10s", log_avg_msec=100), progress=progress)
    partial = e.value.result  # type: ignore[attr-defined]
    assert isinstance(partial, PhaseResult) and partial.interrupted
    assert partial.data["write"]["total_ios"] > 0
    assert sim.history[-1] is partial
    assert sim.now_ns == partial.data["start_ns"] + partial.data["duration_ns"]


def test_bad_workloads_raise_workload_error_naming_the_field(small_drive: dict) -> None:
    sim = Simulator(small_drive)
    cases = {
        "rw": {"rw": "randwrit"},
        "bs": {"rw": "write", "bs": "4q"},
        "iodepth": {"rw": "write", "iodepth": 0},
        "depth": {"rw": "write", "depth": 3},
        "size": {"rw": "write", "size": "200g"},
        "runtime": {"rw": "write", "runtime": "5 parsecs"},
        "data_pattern": {"rw": "write", "data_pattern": "ratio:2"},
        "data": {"rw": "write", "data": "zeros"},  # the old name: refused, naming the new one
    }
    for field, job in cases.items():
        with pytest.raises(WorkloadError) as e:
            sim.run(job)
        assert e.value.field == field, (field, str(e.value))  # type: ignore[attr-defined]
        assert f"'{field}'" in str(e.value)
    with pytest.raises(WorkloadError, match="idle"):
        sim.idle("soon")
    with pytest.raises(WorkloadError, match="trim"):
        sim.trim(offset=3)
    with pytest.raises(WorkloadError, match="precondition"):
        sim.precondition("shiny")
    assert sim.history == []  # nothing ran


def test_parse_job_normalises_fio_keys(small_drive: dict) -> None:
    sim = Simulator(small_drive)
    j = sim.parse_job({"rw": "randwrite", "bs": "4k"}, size="50%", runtime="2m")
    assert j["size_bytes"] == sim.capacity_bytes // 2 // 512 * 512
    assert j["runtime_ns"] == 120 * 10**9
    assert j["sizes"] == [{"bytes": 4096, "weight": 1}]
    assert j["iodepth"] == 1 and j["data_pattern"] == "incompressible"
    r = sim.run(j)  # the parsed job runs as it is
    assert r.job == {"rw": "randwrite", "bs": "4k", "size": "50%", "runtime": "2m"}


def test_the_memory_limit_is_enforced_before_allocation() -> None:
    with pytest.raises(MemoryLimitError) as e:
        Simulator("generic-mlc-120", memory_limit_bytes="64m")
    assert e.value.needed_bytes > e.value.limit_bytes == 64 * 2**20  # type: ignore[attr-defined]


def test_replay_of_a_generated_trace_reports_data_rates_over_busy_time() -> None:
    sim = Simulator("generic-mlc-120")
    sim.precondition("filled", span="2g")
    r = sim.replay(generated="typical-2010", idle_cap="25ms")
    assert r.kind == "replay"
    assert (r.data["read"]["total_ios"], r.data["write"]["total_ios"]) == (37_501, 20_268)
    sb = r.data["storage_bench"]
    busy_s = sb["busy_time_ns"] / 1e9
    moved = r.data["read"]["io_bytes"] + r.data["write"]["io_bytes"]
    assert sb["data_rate_mb_per_s"] == pytest.approx(moved / busy_s / 1e6)
    assert 0 < busy_s < r.duration_s
    again = Simulator("generic-mlc-120")
    again.precondition("filled", span="2g")
    _same(r, again.replay(generated="typical-2010", idle_cap="25ms"))


def test_a_replay_can_lay_down_first_the_data_its_trace_reads() -> None:
    """The Vertex 4 answers reads of never-written LBAs slowly: with the data
    the trace reads written first (as the recorded disk held it), its reads
    are real reads; the trace's own I/Os are the same either way."""
    def reads_mbps(lay_down: bool) -> "tuple[float, int]":
        r = Simulator("vertex4-64-fw15").replay(generated="light-2011", idle_cap="25ms", runtime="60s",
                                                 lay_down_reads=lay_down)
        return float(r.data["storage_bench"]["read_data_rate_mb_per_s"]), int(r.data["read"]["total_ios"])

    (bare, n_bare), (laid, n_laid) = reads_mbps(False), reads_mbps(True)
    print(f"vertex4-64-fw15, Light 2011's first minute: reads {bare:.1f} MB/s on an erased drive, {laid:.1f} with the data laid down")
    assert n_bare == n_laid
    assert laid > 1.5 * bare
    with pytest.raises(WorkloadError, match="lay_down_reads"):
        Simulator("generic-mlc-120").replay(generated="light-2011", lay_down_reads="yes")  # type: ignore[arg-type]


def test_replay_of_a_trace_file_as_fast_as_possible(traces_dir, small_drive: dict) -> None:  # type: ignore[no-untyped-def]
    sim = Simulator(small_drive, check=True)
    f = traces_dir / "msr_cambridge_hm0_sample/msr-cambridge1-sample.csv"
    r = sim.replay(f, mode="as-fast-as-possible", iodepth=8)
    assert r.data["import"]["records"] == 1000 and r.data["import"]["folded"] > 0  # a 54 MB drive
    assert (r.data["read"]["total_ios"], r.data["write"]["total_ios"]) == (508, 492)
    with pytest.raises(WorkloadError, match="mode"):
        sim.replay(f, mode="slowly")
    with pytest.raises(WorkloadError, match="exactly one of"):
        sim.replay()
    with pytest.raises(WorkloadError, match="'iodepth'"):
        sim.replay(f, queue_depth=8)  # the old name: refused, naming the new one


def test_a_replay_can_be_cut_by_record_count_or_trace_time(traces_dir, small_drive: dict) -> None:  # type: ignore[no-untyped-def]
    f = traces_dir / "msr_cambridge_hm0_sample/msr-cambridge1-sample.csv"
    r = Simulator(small_drive).replay(f, number_ios=100)
    assert r.data["read"]["total_ios"] + r.data["write"]["total_ios"] == 100
    whole = Simulator(small_drive).replay(f)
    part = Simulator(small_drive).replay(f, runtime=30)
    n = part.data["read"]["total_ios"] + part.data["write"]["total_ios"]
    assert 0 < n < whole.data["read"]["total_ios"] + whole.data["write"]["total_ios"]
    assert part.data["import"]["records"] <= n + 1  # reading stopped at the first record past 30 s
    same = Simulator(small_drive).replay(f, runtime_ns=30 * 10**9)
    _same(part, same)
    for bad in ({"number_ios": -1}, {"runtime": "0s"}, {"runtime": "soon"}, {"idle_cap_ns": -1}):
        with pytest.raises(WorkloadError, match=next(iter(bad))):
            Simulator(small_drive).replay(f, **bad)


def test_a_small_map_cache_slows_qd1_random_reads_over_a_span_it_does_not_cover(small_drive: dict) -> None:
    # 4KB pages: one translation page maps 4 MiB; a one-page cache covers
    # the 2 MiB span and not the 40 MiB one.
    dramless = copy.deepcopy(small_drive)
    dramless["controller"]["map_cache_bytes"] = 4096
    rates = {}
    for name, d in (("dram", small_drive), ("dramless", dramless)):
        sim = Simulator(d, seed=1)
        sim.run(rw="write", bs="128k", iodepth=32, size="40m")
        sim.idle("1s")
        near = sim.clone().run(rw="randread", bs="4k", iodepth=1, size="2m", number_ios=2000)
        far = sim.clone().run(rw="randread", bs="4k", iodepth=1, size="40m", number_ios=2000)
        rates[name] = (near.iops, far.iops, far.data["ssdlab"].get("map_page_reads", 0))
    assert rates["dramless"][0] == pytest.approx(rates["dram"][0], rel=0.02)
    assert rates["dramless"][1] < 0.8 * rates["dram"][1] and rates["dramless"][2] > 1000, rates
