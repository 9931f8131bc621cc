"""The probe's time estimate (ssdlab.twin.probe.estimate), ``ssdlab probe --stages``, and the fit's account of the
stages a probe left out."""

from __future__ import annotations

import argparse

import pytest

from ssdlab.cli.probe import stages as parse_stages
from ssdlab.twin.fit import stages_left_out
from ssdlab.twin.probe import CACHE, CLEAN, FILL, FULL, QUEUES, STAGES, probe_jobs, run_probe_simulated
from ssdlab.twin.probe.estimate import (
    ASSUMED_WRITE_BYTES_PER_S,
    Rates,
    assumed_rates,
    estimate,
    estimate_text,
    job_seconds,
    job_write_bytes,
    measured_seconds,
    rates_from,
)
from ssdlab.twin.probe.names import FILL_JOB, FULL_FILL, FULL_RANDWRITE, SEQWRITE_128K_QD32, TORTURE
from ssdlab.twin.probe.spec import ProbeJob

TB = 10**12


def _job(stage: str, direction: str, **opts: object) -> ProbeJob:
    return ProbeJob("j", stage, "f", "w", dict(opts), direction)


def test_a_job_takes_its_runtime_or_its_bytes_at_the_rate_plus_its_delays() -> None:
    r = Rates(500e6, 1000e6, "test", clean_write_bytes_per_s=2000e6)
    assert job_seconds(_job(FILL, "write", time_based=1, runtime="90000ms", startdelay="15000ms"), TB, r) == 105.0
    assert job_seconds(_job(FILL, "write", size=10**9), TB, r) == 2.0
    assert job_seconds(_job(CLEAN, "write", size=10**9), TB, r) == 0.5  # an empty drive's writes at their own rate
    assert job_seconds(_job(FILL, "read", size=10**9, ramp_time="2s"), TB, r) == 3.0
    # no size: from the offset to the end of the target
    assert job_seconds(_job(FILL, "write", offset=TB // 2), TB, r) == 1000.0
    # random writes on the full drive: at most their size, past the spare area never faster than the assumed rate;
    # expected to step down past 12% of the capacity at the write rate, and to end half that time after the step
    rand = ProbeJob(FULL_RANDWRITE, FULL, "f", "w", {"rw": "randwrite", "io_size": 3 * 10**11}, "write")
    assert job_seconds(rand, TB, r, most=True) == 3 * 10**11 / ASSUMED_WRITE_BYTES_PER_S
    assert job_seconds(rand, TB, r) == pytest.approx(1.5 * 0.12 * TB / 500e6)
    assert job_write_bytes(rand, TB, r) == pytest.approx(0.12 * TB + 0.5 * 0.12 * TB / 5)


def test_the_rates_are_the_fill_s_once_measured_and_the_clean_stage_s_only_where_slower() -> None:
    fast_clean = {SEQWRITE_128K_QD32: {"mbps": 2300.0}}
    assert rates_from(fast_clean).write_bytes_per_s == ASSUMED_WRITE_BYTES_PER_S
    assert rates_from(fast_clean).clean_write_bytes_per_s == 2300e6
    assert rates_from({SEQWRITE_128K_QD32: {"mbps": 60.0}}).write_bytes_per_s == 60e6
    assert rates_from({**fast_clean, FILL_JOB: {"mbps": 633.0}}).write_bytes_per_s == 633e6
    assert rates_from({}) == assumed_rates()


def test_the_estimate_says_each_stage_and_which_write_more_than_the_capacity() -> None:
    jobs = probe_jobs(TB, 0.25)
    r = Rates(600e6, 3000e6, "test")
    st = estimate(jobs, TB, r)
    # the full stage right after the fill stage's fill (its jobs counted with the fill stage's)
    assert [s.stage for s in st] == [CLEAN, FILL, FULL, CACHE, QUEUES] and set(STAGES) == {s.stage for s in st}
    fill = next(s for s in st if s.stage == FILL)
    # the whole-drive fill at the rate, and the torture's runtime
    torture = next(j for j in jobs if j.name == TORTURE)
    assert fill.seconds > TB / 600e6 + job_seconds(torture, TB, r) - 1
    without = estimate(probe_jobs(TB, 0.25, full=False), TB, r)
    text = estimate_text(st, TB, r, 15.0, maybe=(FULL,), without=without)
    lines = text.splitlines()
    assert "MORE THAN THE CAPACITY" in lines[2] and "with the full stage" in lines[0]
    # without the full stage the torture is the long one: the totals and the fill stage's line say so
    bare = sum(s.seconds for s in without) + 15.0
    assert lines[0].startswith(f"the probe should take about {bare / 60:,.1f} min") or bare >= 5400
    assert any(line.startswith("  (fill without the full stage") for line in lines)
    # the full stage fills the drive itself only where the fill stage does not run
    assert FULL_FILL not in [j.name for j in jobs]
    full_fill = next(j for j in probe_jobs(TB, 0.25, stages=(CLEAN, CACHE, FULL)) if j.name == FULL_FILL)
    assert full_fill.options["offset"] == 0 and full_fill.options["size"] == TB
    assert job_seconds(full_fill, TB, r) == pytest.approx(TB / 600e6)


def test_stages_are_checked_and_kept_in_the_probe_s_order() -> None:
    assert parse_stages("full,clean") == (CLEAN, FULL)
    assert parse_stages(" cache , queues") == (CACHE, QUEUES)
    with pytest.raises(argparse.ArgumentTypeError, match="'clen' is not a stage; the stages: clean, fill"):
        parse_stages("clen,fill")
    with pytest.raises(argparse.ArgumentTypeError, match="is not a stage"):
        parse_stages(",")


def test_the_fit_names_what_a_left_out_stage_would_have_shown() -> None:
    doc = {"target": {"capacity_bytes": 120 * 10**9}, "budget": 0.25}
    assert stages_left_out(doc) == {}  # type: ignore[arg-type]
    left = stages_left_out({**doc, "stages": [CLEAN, CACHE, QUEUES]})  # type: ignore[arg-type]
    assert list(left) == [FILL, FULL]
    assert "spare area, GC onset and steady state" in left[FILL]


@pytest.mark.slow
def test_the_estimate_at_the_measured_rates_matches_the_simulated_drive_s_time() -> None:
    """On a simulated drive the estimate, given the rates the probe measured, comes within 10% of each stage's
    simulated time (the clean stage, whose bursts outrun its sequential write, within 15%); before the start
    (assumed rates) it errs long on a SATA-era drive."""
    run = run_probe_simulated("vertex3-120", None, budget=0.1)
    ran = [j for j in run.jobs if j.name in run.figures]
    took = measured_seconds(ran, run.figures)
    for s in estimate(ran, run.target["capacity_bytes"], rates_from(run.figures)):
        if took[s.stage] > 60:
            assert s.seconds == pytest.approx(took[s.stage], rel=0.15 if s.stage == CLEAN else 0.1), s.stage
    before = sum(s.seconds for s in estimate(ran, run.target["capacity_bytes"], assumed_rates()))
    assert before > sum(took.values())


def test_a_probe_of_chosen_stages_runs_only_them_and_says_so_in_probe_json(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    import json

    from ssdlab.cli.main import main

    assert main(["probe", "--drive", "generic-mlc-120", "--stages", "queues,clean", "--budget", "0.05", "--out",
                 str(tmp_path / "p"), "--no-progress"]) == 0
    doc = json.loads((tmp_path / "p" / "probe.json").read_text())
    assert doc["stages"] == [CLEAN, QUEUES] and {j["stage"] for j in doc["jobs"]} == {CLEAN, QUEUES}
    err = capsys.readouterr().err
    assert "the probe should take about" in err and "simulated device time" in err
    assert main(["probe", "--drive", "generic-mlc-120", "--stages", "clean,warm", "--out", str(tmp_path / "q")]) != 0
    err = capsys.readouterr().err
    assert "argument --stages: 'warm' is not a stage" in err and len(err.strip().splitlines()) == 1


def test_a_large_real_target_leaves_the_whole_drive_stages_out_by_default_and_says_so() -> None:
    from ssdlab.twin.probe import default_stages

    # 256 GB: a whole-drive write at the stated 100 MB/s takes 43 min, every stage runs
    assert default_stages(256 * 10**9, ASSUMED_WRITE_BYTES_PER_S) == (STAGES, None)
    chosen, note = default_stages(TB, ASSUMED_WRITE_BYTES_PER_S)
    assert chosen == (CLEAN, CACHE, QUEUES)
    assert note is not None and "2.8 h at 100 MB/s" in note and "--stages clean,fill,cache,queues,full" in note
    # the fit then names what the stages left out would have shown
    left = stages_left_out({"target": {"capacity_bytes": TB}, "budget": 1.0, "stages": list(chosen)})  # type: ignore[typeddict-item]
    assert list(left) == [FILL, FULL] and "spare area (GC onset on the full drive) and the steady state" in left[FULL]
