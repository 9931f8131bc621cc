"""The cache stage of the probe: its jobs, the note before a fill larger than it may write, and the write
cache's features from per-second rates."""

from ssdlab.twin.features import extract
from ssdlab.twin.features.cache import CACHE_BLOCK_BYTES, cache_features
from ssdlab.twin.probe import CACHE, FULL, QUEUES, probe_jobs
from ssdlab.twin.probe.jobs import CACHE_AFTER_IDLE, CACHE_FILL, cache_span_note

TB = 1_000_000_000_000


def _log(rates_mbps):
    return {"iops_series": [r * 1e6 / CACHE_BLOCK_BYTES for r in rates_mbps], "interval_ms": 1000, "mbps": 1.0}


def test_cache_stage_runs_after_the_writes_and_within_the_capacity():
    jobs = probe_jobs(TB, 1.0)
    cache = [j for j in jobs if j.stage == CACHE]
    assert [j.name for j in cache] == ["cache-trim", CACHE_FILL, CACHE_AFTER_IDLE]
    # after every earlier stage's writes; the queue stage's reads follow it, then the full drive's stage (last: it
    # writes the whole drive again)
    after = [j for j in jobs[jobs.index(cache[-1]) + 1:] if j.stage != FULL]
    assert jobs[-len(cache) - len(after):len(jobs) - len(after)] == cache or jobs.index(cache[0]) + len(cache) + len(
        after) == jobs.index(next(j for j in jobs if j.stage == FULL))
    assert all(j.stage == QUEUES and j.direction == "read" for j in after)
    fill = next(j for j in cache if j.name == CACHE_FILL)
    after = next(j for j in cache if j.name == CACHE_AFTER_IDLE)
    assert fill.options["size"] + after.options["size"] <= TB
    assert fill.log_ms == 1000


def test_a_budget_past_the_capacity_is_said_before_the_probe():
    assert cache_span_note(TB, 1.0) is None
    note = cache_span_note(TB, 3.0)
    assert note is not None and "900.0 GB" in note and "750.0 GB" in note


def test_cache_size_and_speeds_from_the_step():
    figs = {CACHE_FILL: _log([2000.0] * 50 + [500.0] * 40), CACHE_AFTER_IDLE: _log([2000.0] * 4 + [500.0] * 20)}
    f = cache_features(figs)
    assert f["slc_cache"]["value"] is True
    assert f["slc_cache_bytes"]["value"] == 100_000_000_000
    assert f["slc_write_bytes_per_s"]["value"] == 2_000_000_000
    assert f["post_cache_write_bytes_per_s"]["value"] == 500_000_000
    assert f["slc_idle_recovered_bytes"]["value"] == 8_000_000_000


def test_a_cache_written_in_three_seconds_is_not_missed():
    # a small cache at the link's rate, then the native rate, then slower still for a while (a drive evicting its
    # cache by garbage collection): the first step is the cache, not the larger fall after it
    rates = [1500.0] + [3500.0] * 2 + [2900.0] + [2030.0] * 6 + [1350.0] * 20 + [2020.0] * 10
    f = cache_features({CACHE_FILL: _log(rates)})
    assert f["slc_cache"]["value"] is True
    assert f["slc_cache_bytes"]["value"] == 11_400_000_000
    assert f["slc_write_bytes_per_s"]["value"] == 3_500_000_000
    # right after the step, the native rate; the median past it holds the slower stretch too
    assert f["post_cache_first_bytes_per_s"]["value"] == 2_030_000_000
    assert f["post_cache_write_bytes_per_s"]["value"] == 1_350_000_000
    # a rate within the first five seconds that merely dips is no step
    assert cache_features({CACHE_FILL: _log([2000.0, 2000.0, 1300.0] + [2000.0] * 40)})["slc_cache"]["value"] is None


def test_no_step_is_a_lower_bound_not_a_cache():
    f = cache_features({CACHE_FILL: _log([500.0] * 60)})
    assert f["slc_cache"]["value"] is None
    assert f["slc_cache_at_least_bytes"]["value"] == 30_000_000_000


def test_a_probe_without_the_cache_stage_has_no_cache_features():
    assert "slc_cache" not in extract({}, TB)


def test_a_cache_fill_without_a_step_falls_back_on_the_whole_drive_fill():
    from ssdlab.twin.probe.jobs import FILL_JOB

    figs = {CACHE_FILL: _log([680.0] * 60), FILL_JOB: _log([2300.0] * 50 + [500.0] * 400)}
    f = cache_features(figs)
    assert f["slc_cache_job"]["value"] == FILL_JOB
    assert f["slc_cache_bytes"]["value"] == 115_000_000_000
    assert f["slc_idle_recovered_bytes"]["value"] is None


def test_a_late_fall_or_a_recovery_in_the_fill_is_no_cache():
    from ssdlab.twin.probe.jobs import FILL_JOB

    late = {CACHE_FILL: _log([680.0] * 60), FILL_JOB: _log([500.0] * 300 + [300.0] * 100)}
    assert cache_features(late)["slc_cache"]["value"] is None
    mode = {CACHE_FILL: _log([680.0] * 60), FILL_JOB: _log([500.0] * 100 + [200.0] * 20 + [480.0] * 100)}
    assert cache_features(mode)["slc_cache"]["value"] is None


def test_a_twins_cache_found_in_the_whole_drive_fill_is_a_feature_of_the_twin():
    from ssdlab.twin.fit.reliability import assess
    from ssdlab.twin.probe.jobs import FILL_JOB

    # the cache fit of a twin whose probe found the cache in the whole-drive fill simulates that job alone
    twin_figs = {FILL_JOB: _log([2300.0] * 50 + [500.0] * 400)}
    assert "slc_cache" not in extract(twin_figs, TB)
    twin = extract(twin_figs, TB, cache=True)
    assert twin["slc_cache"]["value"] is True and twin["slc_cache_bytes"]["value"] == 115_000_000_000
    measured = cache_features({CACHE_FILL: _log([680.0] * 60), FILL_JOB: _log([2300.0] * 52 + [500.0] * 400)})
    assert assess(1.0, [], measured, twin)["problems"] == []
    assert any("slc_cache" in p for p in assess(1.0, [], measured, extract(twin_figs, TB))["problems"])


def test_the_fold_ratio_is_where_the_fill_s_rate_rises_and_a_fall_back_is_a_refill():
    from ssdlab.twin.fit.slc import full_drive_fold
    from ssdlab.twin.probe.jobs import FILL_JOB

    # 100 GB of cache, then 200 GB at the folding rate until the cache is empty, then the native rate (samsung980:
    # 159.1 GB, then 639.5 GB at 515 MB/s, then 687: 0.249 for the Pablo's 0.25)
    figs = {CACHE_FILL: _log([680.0] * 60), FILL_JOB: _log([2000.0] * 50 + [500.0] * 400 + [700.0] * 100 + [350.0])}
    f = cache_features(figs)
    assert f["slc_fold_ratio"]["value"] == 0.5 and "200.0 GB" in f["slc_fold_ratio"]["how"]
    assert f["slc_refill"]["value"] is False
    full = {"value": 700e6, "unit": "B/s", "confidence": "high", "how": ""}
    assert full_drive_fold({**f, "full_write_bytes_per_s": full}) == 0.5  # the rates alone would give 0.4
    # the rise falls back to the folding rate: the cache took writes again (samsung980pro: 111.4 GB, 456.4 GB at
    # 999 MB/s, then 63.5 GB at 1,754 and back: 0.244 and a refill, the Elpis's 0.25 and refill)
    g = cache_features({CACHE_FILL: _log([680.0] * 60),
                        FILL_JOB: _log([2000.0] * 50 + [500.0] * 200 + [1500.0] * 20 + [500.0] * 200)})
    assert g["slc_fold_ratio"]["value"] == 1.0 and g["slc_refill"]["value"] is True
    assert "30.0 GB" in g["slc_refill"]["how"]
    # a fall (a QLC drive's GC) measures neither: the rates' estimate stands
    h = cache_features({CACHE_FILL: _log([680.0] * 60), FILL_JOB: _log([2000.0] * 50 + [500.0] * 300 + [350.0] * 100)})
    assert h["slc_fold_ratio"]["value"] is None and h["slc_refill"]["value"] is None
    assert full_drive_fold({**h, "full_write_bytes_per_s": full}) == 0.4


def test_a_measured_refill_and_fold_go_into_the_twin():
    from ssdlab.twin.fit.slc import _with_cache

    doc = {"drive": {"controller": "generic-nvme", "nand_part": "generic-tlc"}, "nand": {}}
    d = _with_cache(doc, 10.0, 1_000_000, 100_000, 0.25, True)
    assert d["slc_cache"]["fold_units_per_host_unit"] == 0.25 and d["slc_cache"]["refill_while_writing"] is True
    d = _with_cache(doc, 10.0, 1_000_000, 100_000)
    assert d["slc_cache"]["refill_while_writing"] is False  # the generic profile's
