"""The full drive's random writes in segments (ssdlab.twin.probe.segments): the rate checked between segments, the
writes ended a bounded time after it steps down, and the segments read as one job."""

from __future__ import annotations

from typing import Dict, List

import pytest

from ssdlab.twin.probe import FULL, probe_jobs
from ssdlab.twin.probe.names import FULL_RANDWRITE, FULL_SEGMENT_S, full_segment
from ssdlab.twin.probe.run import ProbeRun, _segments
from ssdlab.twin.probe.segments import merge_segments, segment_job, segments_done
from ssdlab.twin.records import JobFigures

TB = 10**12
S = FULL_SEGMENT_S


def test_no_step_goes_on_and_a_step_ends_the_writes_half_their_time_later() -> None:
    assert segments_done([400e6] * 10, [S] * 10) is None
    # a small dip is no step (above 1/1.3 of the median before it)
    assert segments_done([400e6, 400e6, 320e6, 400e6, 400e6], [S] * 5) is None
    # the step in the 7th segment after 6 x 20 s: 60 s (and at least two segments) past it
    rates = [400e6] * 6 + [150e6] + [50e6] * 2
    assert segments_done(rates, [S] * 9) is None
    done = segments_done(rates + [50e6], [S] * 10)
    assert done is not None and "segment 7" in done and "60 s past it" in done
    # an early step still waits for two segments after it
    assert segments_done([400e6, 50e6, 50e6], [S] * 3) is None
    assert segments_done([400e6, 50e6, 50e6, 50e6], [S] * 4) is not None


def test_each_segment_is_timed_with_its_own_seed_and_the_last_ends_at_the_size() -> None:
    job = next(j for j in probe_jobs(TB, 0.25) if j.name == FULL_RANDWRITE)
    size = int(job.options["io_size"])
    a, b = segment_job(job, 0, 1, 0, None), segment_job(job, 1, 1, 10**10, 400e6)
    assert a.name == full_segment(0) and b.name == full_segment(1) and a.stage == FULL
    assert a.options["time_based"] == 1 and a.options["runtime"] == f"{int(S * 1000)}ms" and "io_size" not in a.options
    assert a.options["randseed"] != b.options["randseed"]
    assert {k: v for k, v in a.options.items() if k != "randseed"} == {k: v for k, v in b.options.items() if k != "randseed"}
    last = segment_job(job, 5, 1, size - 10**9, 400e6)
    assert last.options["io_size"] == 10**9 and "time_based" not in last.options


def test_a_sequential_write_goes_on_where_its_segment_before_ended() -> None:
    from ssdlab.twin.probe.names import CACHE_FILL

    job = next(j for j in probe_jobs(TB, 1.0) if j.name == CACHE_FILL)
    size, delay = int(job.options["size"]), job.options["startdelay"]
    a, b = segment_job(job, 0, 1, 0, None), segment_job(job, 1, 1, 40 * 10**9, 2e9)
    # each bounded by its runtime and the bytes left (fio's runtime without time_based), the first after the delay
    assert (a.options["offset"], a.options["size"], a.options["startdelay"]) == (0, size, delay)
    assert (b.options["offset"], b.options["size"]) == (40 * 10**9, size - 40 * 10**9) and "startdelay" not in b.options
    assert "time_based" not in a.options and a.options["runtime"] == f"{int(S * 1000)}ms" and "randseed" not in a.options
    # the write after idle time against the cache's rate: past it from its first segment (nothing given back)
    assert segments_done([100e6] * 2, [S] * 2, reference=2e9) is None
    assert segments_done([100e6] * 3, [S] * 3, reference=2e9) is not None
    assert segments_done([2e9] * 3, [S] * 3, reference=2e9) is None


def test_the_segments_read_as_one_job() -> None:
    parts: List[JobFigures] = [
        {"iops": 3000.0, "mbps": 393.2, "io_bytes": 7_864_320_000, "runtime_s": 20.0, "clat_mean_us": 10000.0,
         "clat_p99_us": 20000.0, "interval_ms": 1000, "iops_series": [3000.0] * 20, "avg_w": 4.0, "power_s": 20.0,
         "power_busy_s": 20.0, "nand_energy_j": 50.0},
        {"iops": 1000.0, "mbps": 131.1, "io_bytes": 1_310_720_000, "runtime_s": 10.0, "clat_mean_us": 30000.0,
         "clat_p99_us": 90000.0, "interval_ms": 1000, "iops_series": [1000.0] * 10, "avg_w": 3.0, "power_s": 10.0,
         "power_busy_s": 10.0, "nand_energy_j": 20.0}]
    m = merge_segments(parts)
    assert m["io_bytes"] == 9_175_040_000 and m["runtime_s"] == 30.0
    assert m["iops"] == pytest.approx(70000 / 30) and m["mbps"] == pytest.approx(9175.04 / 30)
    assert m["clat_mean_us"] == pytest.approx((60000 * 10000 + 10000 * 30000) / 70000)
    assert m["clat_p99_us"] == 90000.0 and m["iops_series"] == [3000.0] * 20 + [1000.0] * 10
    assert m["avg_w"] == pytest.approx((80 + 30) / 30) and m["nand_energy_j"] == 70.0


def _fake(rate_of_segment: Dict[int, float], run: ProbeRun) -> List[str]:
    ran: List[str] = []

    def one(seg, i):  # type: ignore[no-untyped-def]
        ran.append(seg.name)
        rate = rate_of_segment.get(i, rate_of_segment[-1])
        t = S if seg.options.get("time_based") else int(seg.options["io_size"]) / rate
        run.figures[seg.name] = {"iops": rate / 131072, "mbps": rate / 1e6, "io_bytes": int(rate * t),
                                 "runtime_s": t, "interval_ms": 1000, "iops_series": [rate / 131072] * int(t)}
        return True

    job = next(j for j in probe_jobs(TB, 0.25) if j.name == FULL_RANDWRITE)
    _segments(run, job, 1, None, one)
    return ran


def test_the_writes_stop_after_the_step_or_at_their_size() -> None:
    run = ProbeRun({"kind": "simulated", "capacity_bytes": TB}, [])
    # 400 MB/s for 12 segments (96 GB), then 50: 6 segments past the step (half of 240 s, at least two)
    ran = _fake({**{i: 400e6 for i in range(12)}, -1: 50e6}, run)
    assert len(ran) == 12 + 1 + 6 and not any(n.startswith(FULL_RANDWRITE + "-s") for n in run.figures)
    f = run.figures[FULL_RANDWRITE]
    assert f["runtime_s"] == pytest.approx(19 * S) and len(f["iops_series"]) == 19 * S
    assert "stepped down in segment 13" in run.notes[-1]
    # no step: they write their whole size (150 GB at budget 0.25), the last segment only what is left
    run = ProbeRun({"kind": "simulated", "capacity_bytes": TB}, [])
    _fake({-1: 400e6}, run)
    size = next(j for j in probe_jobs(TB, 0.25) if j.name == FULL_RANDWRITE).options["io_size"]
    assert run.figures[FULL_RANDWRITE]["io_bytes"] == pytest.approx(size, abs=1000)
    assert "without a step down" in run.notes[-1]


def test_a_cache_fill_past_its_step_ends_and_the_jobs_after_it_follow_what_it_wrote() -> None:
    from typing import Any, Sequence

    from ssdlab.twin.probe import CACHE, QUEUES
    from ssdlab.twin.probe.names import CACHE_AFTER_IDLE, CACHE_FILL, MiB, queue_read
    from ssdlab.twin.probe.run import _Backend, _run_rest
    from ssdlab.twin.probe.spec import ProbeJob

    def rate_of(name: str) -> float:
        # the cache at 2 GB/s for four segments (160 GB), then 100 MB/s; nothing given back after idle time
        if not name.startswith(CACHE_FILL + "-s"):
            return 100e6
        return 2e9 if int(name.rsplit("-s", 1)[1]) < 4 else 100e6

    def plain(js: Sequence[ProbeJob], name: str) -> bool:
        for j in js:
            r = rate_of(j.name)
            t = min(S, int(j.options["size"]) / r) if "size" in j.options and j.direction == "write" else 1.0
            run.figures[j.name] = {"iops": r / 131072, "mbps": r / 1e6, "io_bytes": int(r * t), "runtime_s": t,
                                   "interval_ms": 1000, "iops_series": [r / 131072] * int(t)}
        return True

    stages = (CACHE, QUEUES)
    rest = probe_jobs(TB, 1.0, stages=stages)
    run = ProbeRun({"kind": "simulated", "capacity_bytes": TB}, list(rest))

    def rebuild(full: bool, w: Any) -> Any:
        return probe_jobs(TB, 1.0, stages=stages, full=full, cache_written=w)

    backend = _Backend(plain, lambda job, seg, i: plain([seg], seg.name), rebuild)
    assert _run_rest(run, rest, True, 1, None, backend)
    # four segments in the cache, the step, two more (half the 80 s before it, at least two): 166 GB of 300
    written = run.figures[CACHE_FILL]["io_bytes"]
    assert written == 4 * 40 * 10**9 + 3 * 2 * 10**9 and "stepped down in segment 5" in run.notes[0]
    jobs = {j.name: j for j in run.jobs}
    assert jobs[CACHE_AFTER_IDLE].options["offset"] == written // MiB * MiB
    assert jobs[queue_read(1, 32)].options["size"] == written // MiB * MiB
    # the write after idle time starts below the cache's rate: three segments, then done
    assert run.figures[CACHE_AFTER_IDLE]["runtime_s"] == 3 * S
    # a SATA-era drive's (not segmented) runs every job as listed
    run = ProbeRun({"kind": "simulated", "capacity_bytes": TB}, list(rest))
    assert _run_rest(run, rest, False, 1, None, backend)
    assert [j.name for j in run.jobs] == [j.name for j in rest] and not run.notes
    assert set(run.figures) == {j.name for j in rest}
