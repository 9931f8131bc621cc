"""The static part of a modern drive's write cache: the full drive's write after idle time
(ssdlab.twin.probe.later.full_stage), its feature (ssdlab.twin.features.full.full_static_cache) and the fit's
choice of the split between the static and the dynamic part (ssdlab.twin.fit.slc.choose_static_share)."""

from __future__ import annotations

from typing import Any, Dict, List

import pytest

from ssdlab.twin.features.full import full_static_cache
from ssdlab.twin.probe import FULL, probe_jobs
from ssdlab.twin.probe.names import CACHE_FILL, FULL_IDLE_SEQWRITE, FULL_RANDREAD, FULL_RANDWRITE

TB = 10**12
UNIT = 131072


def _series(mbps: List[float]) -> Dict[str, Any]:
    return {"iops_series": [r * 1e6 / UNIT for r in mbps], "interval_ms": 1000, "mbps": sum(mbps) / len(mbps)}


def test_the_write_after_idle_on_the_full_drive_comes_before_its_random_writes_and_waits_for_any_budget() -> None:
    for cap in (TB, 2 * TB):
        jobs = [j for j in probe_jobs(cap, 0.25) if j.stage == FULL]
        names = [j.name for j in jobs]
        assert names.index(FULL_IDLE_SEQWRITE) == names.index(FULL_RANDREAD) + 1 == names.index(FULL_RANDWRITE) - 1
        opts = {b: next(j for j in probe_jobs(cap, b) if j.name == FULL_IDLE_SEQWRITE).options for b in (0.25, 1, 3)}
        # the idle time folds 2.5% of the capacity at 80 MB/s, and the write passes it at 500 MB/s, at any budget
        assert all({k: v for k, v in o.items() if k != "offset"} == {k: v for k, v in opts[1].items() if k != "offset"}
                   for o in opts.values())
        assert opts[1]["startdelay"] == f"{round(0.025 * cap / 80e6 * 1000)}ms"
        assert opts[1]["runtime"] == f"{round(0.025 * cap / 500e6 * 1000)}ms" and not opts[1].get("time_based")
    small = next(j for j in probe_jobs(64 * 2**30, 1) if j.name == FULL_IDLE_SEQWRITE).options
    assert small["startdelay"] == "30000ms" and small["runtime"] == "10000ms"


def test_the_static_part_is_what_the_full_drive_writes_at_the_cache_rate_after_idle_time() -> None:
    # 2 s at the cache's 5,000 MB/s, then a second with 0.25 s of it (1,250 MB in the cache, the rest at 1,000)
    figs = {FULL_IDLE_SEQWRITE: _series([5000, 5000, 2000] + [1000] * 10)}
    f = full_static_cache(figs, TB)
    assert f["static_cache_bytes"]["value"] == pytest.approx(10e9 + 1.25e9, rel=0.01)
    assert f["static_cache_fraction"]["value"] == pytest.approx(0.01125, rel=0.01)
    assert f["static_cache_bytes"]["confidence"] == "high"
    # a part written within the first second: the cache's rate is the cache fill's
    figs = {FULL_IDLE_SEQWRITE: _series([3000] + [1000] * 10), CACHE_FILL: _series([5000] * 5 + [1000] * 5)}
    assert full_static_cache(figs, TB)["static_cache_bytes"]["value"] == pytest.approx(2.5e9, rel=0.01)
    # a write buffer alone (32 MiB into the first second of a 96 MB/s QLC drive) is no static part
    figs = {FULL_IDLE_SEQWRITE: _series([96 + 33.5] + [96] * 10), CACHE_FILL: _series([1780] * 5)}
    assert full_static_cache(figs, TB)["static_cache_bytes"]["value"] == 0
    # never stepping down: at least what it wrote, said with low confidence
    figs = {FULL_IDLE_SEQWRITE: _series([5000] * 6 + [1000] * 4)}
    assert full_static_cache(figs, TB)["static_cache_bytes"]["confidence"] == "low"
    assert full_static_cache({FULL_IDLE_SEQWRITE: _series([5000])}, TB)["static_cache_bytes"]["value"] is None


def test_the_fit_takes_the_share_whose_twin_gives_back_as_much_in_the_same_idle_time(monkeypatch) -> None:
    from ssdlab.twin.fit import evaluate, slc

    # a twin that folds only 80% of its static part in the probe's idle time: the measured 8 GB is a 1% share
    def simulate(docs, runner, seed, budget, measured):
        out = []
        for d in docs:
            got = 0.8 * d["slc_cache"]["static_percent_of_capacity"] / 100 * TB
            whole, part = divmod(got, 5e9)
            out.append({FULL_IDLE_SEQWRITE: _series([5000] * int(whole) + [1000 + part / 1e6 * 4000 / 5000] + [1000] * 10)})
        return out

    monkeypatch.setattr(evaluate, "_simulate_docs", simulate)
    doc = {"slc_cache": {"static_percent_of_capacity": 1.0, "dynamic_percent_of_capacity": 12.0,
                         "fold_units_per_host_unit": 0.0, "refill_while_writing": False},
           "nand": {"bits_per_cell": 3}}
    monkeypatch.setattr(slc, "_modern_cache", lambda d: d["slc_cache"])
    feats = {"capacity_bytes": {"value": TB}, "static_cache_bytes": {"value": 9.6e9}}
    prov: Dict[str, Any] = {"slc_cache.dynamic_percent_of_capacity": {"value": 12.0, "source": "fitted",
                                                                      "why": "the cache less the static part"}}
    out, figs, said = slc.choose_static_share(doc, prov, feats, {}, None, 1, 0.25)
    share = out["slc_cache"]["static_percent_of_capacity"]
    assert share == pytest.approx(1.2, abs=0.05) and prov["slc_cache.static_percent_of_capacity"]["source"] == "fitted"
    # the sum the fill measured is kept
    assert share + out["slc_cache"]["dynamic_percent_of_capacity"] == pytest.approx(13.0)
    assert "9.60 GB measured" in said and FULL_IDLE_SEQWRITE in figs
