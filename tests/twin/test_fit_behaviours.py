"""What the twin's fit chooses on the fill stage (ssdlab.twin.fit: behaviours
and buffer): garbage collection, the recycling path, idle-time GC and the
buffer the clean drive hid."""

from __future__ import annotations

from typing import Any, Dict, List

import pytest
from twin_helpers import preset_truth

from ssdlab import Drive
from ssdlab.twin.features import extract
from ssdlab.twin.probe import run_probe_simulated


def _path_rate(preset: str) -> float:
    """The preset's recycling path for the whole controller: its own rate, or a die's rate times the dies the
    controller drives at once (data and parity dies, at most its active-die limit)."""
    d = Drive.load(preset)
    f, g = d.config["ftl"], d.geometry
    if not f.get("recycle_bytes_per_s_per_die"):
        return float(f.get("recycle_bytes_per_s") or 0)
    driven = g["dies_total"] - g["reserved_dies"]
    limit = d.config["controller"].get("max_active_dies") or driven
    return float(f["recycle_bytes_per_s_per_die"] * min(driven, limit))


def _gc_mode_of_a_twin_exact_but_paced(preset: str) -> Dict[str, Any]:
    from ssdlab.cluster import Runner
    from ssdlab.twin.fit.behaviours import choose_gc_mode

    run = run_probe_simulated(preset, None, budget=0.25)
    f = extract(run.figures, run.target["capacity_bytes"])
    c = Drive.load(preset).config
    # no recycling path (0, not an absent key: the drive's profile would supply its own; both of its forms)
    doc = {**c, "ftl": {**c["ftl"], "recycle_bytes_per_s": 0, "recycle_bytes_per_s_per_die": 0, "gc_mode": "paced"}}
    with Runner(jobs=2, progress=False) as runner:
        twin, figs, prov = choose_gc_mode(doc, f, run.figures, runner, 1, 0.25)
    print(f"{preset} (truth {c['ftl'].get('gc_mode', 'paced')}, recycling path "
          f"{_path_rate(preset) / 1e6:.0f} MB/s): {prov['value']}, "
          f"{twin['ftl'].get('recycle_bytes_per_s', 0) / 1e6:.0f} MB/s: {prov['why']}")
    assert twin["ftl"]["gc_mode"] == prov["value"] and "tortured-flush" in figs
    return {**prov, "recycle_bytes_per_s": twin["ftl"].get("recycle_bytes_per_s", 0)}


@pytest.mark.slow  # over 15 s on 2 cores: the default run stays under 8 minutes
def test_the_flush_after_the_torture_gives_a_twin_the_buffer_its_clean_bursts_hid() -> None:
    from ssdlab.cluster import Runner
    from ssdlab.twin.fit.base import ASSUMED_BUFFER_BYTES
    from ssdlab.twin.fit.buffer import choose_dirty_buffer
    from ssdlab.twin.fit.evaluate import _simulate_docs

    # the Vector's NAND writes as fast as the link lets data in: no burst on the clean drive fills its 64 MiB
    # buffer; the torture leaves it full, and the flush right after waits for all of it
    run = run_probe_simulated("vector-256", None, budget=0.25)
    f = extract(run.figures, run.target["capacity_bytes"])
    truth = preset_truth("vector-256")["write_buffer_bytes"]
    assert f["write_buffer_bytes"]["value"] is None
    print(f"flush after the torture {f['dirty_flush_s']['value']:.3f} s: {f['dirty_buffer_bytes']['how']}")
    assert f["dirty_flush_s"]["value"] > 0.1
    # a twin exact but for its buffer gets the true one back
    c = Drive.load("vector-256").config
    doc = {**c, "controller": {**c["controller"], "write_buffer_bytes": ASSUMED_BUFFER_BYTES}}
    assumed = {"value": ASSUMED_BUFFER_BYTES, "source": "assumed", "why": "the probe could not see the buffer"}
    with Runner(jobs=1, progress=False) as runner:
        figs0 = _simulate_docs([doc], runner, 1, 0.25, run.figures)[0]
        twin, figs, prov = choose_dirty_buffer(doc, figs0, assumed, f, run.figures, runner, 1, 0.25)
    print(f"buffer {prov['value']:,} B (truth {truth:,}): {prov['why']}")
    assert prov["source"] == "fitted" and abs(prov["value"] / truth - 1) < 0.10
    assert twin["controller"]["write_buffer_bytes"] == prov["value"] and "tortured-flush" in figs


def test_a_modern_twins_buffer_is_judged_on_the_twin_with_its_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fit's last step for a modern twin hands the twin it has (cache, dies and split fitted) and that twin's
    whole probe to the buffer's choice, and reports whether the buffer moved."""
    import ssdlab.twin.fit as tf

    probe = {"features": {"capacity_bytes": {"value": 10**12}}, "target": {"capacity_bytes": 10**12},
             "budget": 0.25, "jobs": {}}
    seen: Dict[str, Any] = {}

    def choose(doc: Any, figs0: Any, assumed: Any, *a: Any, gc_mode: str = "") -> Any:
        seen["doc"], seen["figs0"], seen["gc_mode"] = doc, figs0, gc_mode
        if seen.get("move"):
            return {**doc, "controller": {"write_buffer_bytes": 64 << 20}}, {"moved": {}}, {
                "value": 64 << 20, "source": "fitted", "why": "the flush"}
        return doc, figs0, {**assumed, "why": assumed["why"] + "; no"}

    monkeypatch.setattr(tf, "choose_dirty_buffer", choose)
    monkeypatch.setattr(tf, "_simulate_docs", lambda docs, *a: [{"simulated": {}} for _ in docs])
    monkeypatch.setattr(tf, "capacity_of", lambda doc: (10**12, 0.25))
    monkeypatch.setattr(tf, "figures_of", lambda doc: {})
    twin = {"slc_cache": {"dynamic_percent_of_capacity": 3.3}, "controller": {"write_buffer_bytes": 4 << 20}}
    prov: Dict[str, Any] = {"controller.write_buffer_bytes": {"value": 4 << 20, "source": "assumed", "why": "unseen"},
                            "ftl.gc_mode": {"value": "paced", "source": "fitted", "why": ""}}
    d, figs, moved = tf._modern_buffer(twin, prov, probe, {}, None, 1, None)  # type: ignore[arg-type]
    assert seen["doc"] is twin and seen["figs0"] == {"simulated": {}} and seen["gc_mode"] == "paced"
    assert d is twin and figs == {"simulated": {}} and not moved
    assert prov["controller.write_buffer_bytes"]["why"] == "unseen; no"
    seen["move"] = True
    d, figs, moved = tf._modern_buffer(twin, prov, probe, {"static": {}}, None, 1, None)  # type: ignore[arg-type]
    assert seen["figs0"] == {"static": {}} and moved and figs == {"moved": {}}
    assert d["controller"]["write_buffer_bytes"] == 64 << 20 and prov["controller.write_buffer_bytes"]["value"] == 64 << 20


@pytest.mark.slow  # over 15 s on 2 cores: the default run stays under 8 minutes
def test_a_twin_takes_lazy_garbage_collection_where_the_drive_cleans_whole_blocks_when_it_needs_one() -> None:
    # the m4 cleans a whole victim when a die needs a block: the flush after the torture waits for it (6 s on the
    # probe) and the torture's seconds vary more than a paced twin's
    assert _gc_mode_of_a_twin_exact_but_paced("crucial-m4-256")["value"] == "lazy"


@pytest.mark.slow
def test_a_twin_keeps_paced_garbage_collection_where_the_drive_paces_it() -> None:
    prov = _gc_mode_of_a_twin_exact_but_paced("samsung830-256")
    assert prov["value"] == "paced" and not prov["recycle_bytes_per_s"]


@pytest.mark.slow
def test_a_sandforce_twin_recycles_every_block_through_the_controller_at_its_after_trim_rate() -> None:
    # the SF-2281 120GB passes every victim through its recycling path (132 MB/s on 16 dies), below what its dies
    # program: its writes into recycled blocks show the path, and twins without it run the torture far faster. (On
    # 32 dies the path, 264 MB/s, is above the encoder, and the probe's writes do not show it.)
    prov = _gc_mode_of_a_twin_exact_but_paced("vertex3-120")
    assert prov["value"] == "lazy" and "recycling path" in prov["why"]
    assert _path_rate("vertex3-120") == 132_000_000
    assert abs(prov["recycle_bytes_per_s"] / _path_rate("vertex3-120") - 1) < 0.15


def test_the_recycling_path_is_tried_on_drives_that_reduce_data_and_taken_when_it_beats_both_modes() -> None:
    from ssdlab.twin.fit import behaviours as tf

    # a fake runner: each GC's fill-stage rates and torture seconds (the drive: 40 MB/s, varying 0.30)
    def figs(torture_mbps: float, cv: float) -> Dict[str, Dict[str, Any]]:
        series = [10_000.0 * (1 + (cv if i % 2 else -cv)) for i in range(40)]
        return {"torture": {"mbps": torture_mbps, "iops_series": series}}

    seen: list = []

    class FakeRunner:
        def __init__(self, by_mode: Dict[str, Dict[str, Dict[str, Any]]]) -> None:
            self.by_mode = by_mode

        def map(self, fn: Any, items: Any, what: str = "") -> Any:
            for i, (doc, *_rest) in enumerate(items):
                ftl = doc["ftl"]
                mode = ftl.get("gc_mode", "paced") + ("+recycle" if ftl.get("recycle_bytes_per_s") else "")
                seen.append(mode)
                yield i, self.by_mode[mode]

    measured = figs(40.0, 0.30)
    feats = {"after_trim_write_bytes_per_s": {"value": 200e6}, "capacity_bytes": {"value": 120_000_000_000}}
    tf_rate = tf._rate_jobs
    tf._rate_jobs = lambda *a: ["torture"]  # type: ignore[assignment]
    try:
        runs = {"paced": figs(80.0, 0.12), "lazy": figs(70.0, 0.12), "lazy+recycle": figs(42.0, 0.33)}
        sf = {"ftl": {"gc_mode": "paced"}, "data_reduction": {"enabled": True}}
        twin, _, prov = tf.choose_gc_mode(sf, feats, measured, FakeRunner(runs), 1, 1.0)  # type: ignore[arg-type]
        assert prov["value"] == "lazy" and twin["ftl"]["recycle_bytes_per_s"] == 200_000_000
        assert "recycling path" in prov["why"] and "200 MB/s" in prov["why"]
        # closer in rate but not in variability: not taken (a lazy twin that is right in both would be)
        runs["lazy+recycle"] = figs(42.0, 0.9)
        twin, _, prov = tf.choose_gc_mode(sf, feats, measured, FakeRunner(runs), 1, 1.0)  # type: ignore[arg-type]
        assert "recycle_bytes_per_s" not in twin["ftl"]
        # variability a little farther than the others' but within PACED_CV_EVIDENCE of the drive's says nothing
        # against it (Vertex 3 Pro: 0.087 measured, 0.098 paced, 0.091 lazy, 0.075 recycling)
        runs_pro = {"paced": figs(80.0, 0.29), "lazy": figs(70.0, 0.30), "lazy+recycle": figs(42.0, 0.25)}
        twin, _, prov = tf.choose_gc_mode(sf, feats, measured, FakeRunner(runs_pro), 1, 1.0)  # type: ignore[arg-type]
        assert twin["ftl"].get("recycle_bytes_per_s") == 200_000_000
        runs_pro["lazy+recycle"] = figs(42.0, 0.22)   # 1.36x below the drive's: against it
        twin, _, prov = tf.choose_gc_mode(sf, feats, measured, FakeRunner(runs_pro), 1, 1.0)  # type: ignore[arg-type]
        assert "recycle_bytes_per_s" not in twin["ftl"]
        # ... against it beside paced GC; beside lazy GC without a path (the same mode) it is the rate that differs,
        # which the fill error judges (Vertex 3 120GB: 1.259 measured, 0.219 paced, 1.399 lazy, 0.910 recycling)
        runs_v3 = {"paced": figs(80.0, 0.12), "lazy": figs(70.0, 0.30), "lazy+recycle": figs(42.0, 0.22)}
        twin, _, prov = tf.choose_gc_mode(sf, feats, measured, FakeRunner(runs_v3), 1, 1.0)  # type: ignore[arg-type]
        assert twin["ftl"].get("recycle_bytes_per_s") == 200_000_000 and prov["value"] == "lazy"
        # a path build_doc set already (the write after the full TRIM measured it): lazy through it is that
        # candidate, taken on the same terms, without the margin a lazy GC without a path needs
        seen.clear()
        with_path = {**sf, "ftl": {"gc_mode": "paced", "recycle_bytes_per_s": 71_000_000}}
        near = {"paced+recycle": figs(43.0, 0.28), "lazy+recycle": figs(42.5, 0.31)}  # within GC_MODE_EVIDENCE
        twin, _, prov = tf.choose_gc_mode(with_path, feats, measured, FakeRunner(near), 1, 1.0)  # type: ignore[arg-type]
        assert sorted(seen) == ["lazy+recycle", "paced+recycle"]
        assert twin["ftl"]["gc_mode"] == "lazy" and twin["ftl"]["recycle_bytes_per_s"] == 71_000_000
        assert prov["value"] == "lazy" and "the write after the full TRIM measured" in prov["why"]
        # ... and not where it is farther in variability
        near["lazy+recycle"] = figs(42.5, 0.9)
        twin, _, prov = tf.choose_gc_mode(with_path, feats, measured, FakeRunner(near), 1, 1.0)  # type: ignore[arg-type]
        assert twin["ftl"]["gc_mode"] == "paced" and prov["value"] == "paced"
        # ... nor on a drive that stores what it is given (no margin only where data reduction makes the path)
        near["lazy+recycle"] = figs(42.5, 0.31)
        plain_path = {"ftl": {"gc_mode": "paced", "recycle_bytes_per_s": 71_000_000}}
        twin, _, prov = tf.choose_gc_mode(plain_path, feats, measured, FakeRunner(near), 1, 1.0)  # type: ignore[arg-type]
        assert twin["ftl"]["gc_mode"] == "paced"
        # a drive that stores what it is given is not tried with one
        seen.clear()
        plain = {"ftl": {"gc_mode": "paced"}}
        twin, _, prov = tf.choose_gc_mode(plain, feats, measured, FakeRunner(runs), 1, 1.0)  # type: ignore[arg-type]
        assert sorted(seen) == ["lazy", "paced"] and "recycle_bytes_per_s" not in twin["ftl"]
    finally:
        tf._rate_jobs = tf_rate  # type: ignore[assignment]


def test_idle_time_gc_restores_the_blocks_per_die_that_reproduce_the_writes_after_idle_time() -> None:
    from ssdlab.twin.fit import behaviours as tf

    # a fake runner: the writes after idle time run as fast as the blocks idle GC restored last (the drive's: 40)
    def figs(blocks: int) -> Dict[str, Dict[str, Any]]:
        return {"after-idle-randwrite": {"mbps": 20.0 + min(blocks, 40)}}

    class FakeRunner:
        def map(self, fn: Any, items: Any, what: str = "") -> Any:
            for i, (doc, *_rest) in enumerate(items):
                yield i, figs(doc["ftl"]["bg_gc_threshold_blocks"])

    feats = {"capacity_bytes": {"value": 120_000_000_000}}
    tf_rate, tf_spare = tf._rate_jobs, tf._spare_blocks_per_die
    tf._rate_jobs = lambda *a: ["after-idle-randwrite"]  # type: ignore[assignment]
    try:
        tf._spare_blocks_per_die = lambda doc: 200  # type: ignore[assignment]
        # tried: the foreground's 8 free blocks plus 2, 4, 8, 16, 32 and 56
        doc = {"ftl": {"gc_threshold_blocks": 8, "bg_gc_threshold_blocks": 16}}
        twin, _, prov = tf.choose_idle_gc(doc, figs(16), {"why": "idle time cleans blocks"}, feats, figs(40),
                                          FakeRunner(), 1, 1.0)  # type: ignore[arg-type]
        # 40 and 64 reproduce it alike: the one nearer the start
        assert prov["value"] == 40 == twin["ftl"]["bg_gc_threshold_blocks"] and prov["source"] == "fitted"
        assert prov["why"].startswith("idle time cleans blocks;") and "32 beyond the 8" in prov["why"]
        assert "10: " in prov["why"] and "64: " in prov["why"]
        # no more than a die has spare
        tf._spare_blocks_per_die = lambda doc: 10  # type: ignore[assignment]
        small = {"ftl": {"gc_threshold_blocks": 4, "bg_gc_threshold_blocks": 8}}
        twin, _, prov = tf.choose_idle_gc(small, figs(8), {"why": "x"}, feats, figs(32), FakeRunner(), 1, 1.0)  # type: ignore[arg-type]
        assert prov["value"] == 10 and "at most the 10" in prov["why"]
        # where every value leaves nearly the same error (the cleaning, not the blocks, binds the writes after idle
        # time), the start stays: 40 is 3.8% closer than 16, within the 5% no value has to beat
        flat = {"after-idle-randwrite": {"mbps": 100.0}}

        class FlatRunner:
            def map(self, fn: Any, items: Any, what: str = "") -> Any:
                for i, (d, *_rest) in enumerate(items):
                    yield i, {"after-idle-randwrite": {"mbps": 69.5 + 0.04 * min(d["ftl"]["bg_gc_threshold_blocks"], 40)}}

        tf._spare_blocks_per_die = lambda doc: 200  # type: ignore[assignment]
        start = {"value": 16, "source": "assumed", "why": "the profile's"}
        twin, _, prov = tf.choose_idle_gc(doc, {"after-idle-randwrite": {"mbps": 69.5 + 0.04 * 16}}, start, feats,
                                          flat, FlatRunner(), 1, 1.0)  # type: ignore[arg-type]
        assert twin is doc and prov["value"] == 16 and prov["source"] == "assumed" and "kept" in prov["why"]
        # ... and the same values, further apart, are evidence
        steep = {"after-idle-randwrite": {"mbps": 72.0}}
        twin, _, prov = tf.choose_idle_gc(doc, {"after-idle-randwrite": {"mbps": 69.5 + 0.04 * 16}}, start, feats,
                                          steep, FlatRunner(), 1, 1.0)  # type: ignore[arg-type]
        assert prov["value"] == 40 and prov["source"] == "fitted"
        # a drive that does not recover while idle keeps none
        none = {"ftl": {"bg_gc_threshold_blocks": 0}}
        assert tf.choose_idle_gc(none, {}, {"value": 0}, feats, figs(32), FakeRunner(), 1, 1.0)[2] == {"value": 0}  # type: ignore[arg-type]
    finally:
        tf._rate_jobs, tf._spare_blocks_per_die = tf_rate, tf_spare  # type: ignore[assignment]


def test_the_recycling_path_is_fitted_above_the_write_after_the_full_trim() -> None:
    """The write after a full TRIM waits for every victim to pass the
    controller's recycling path, and for the dies or the encoder where they
    bind too: its rate is the path's lower bound (SF-2281, path 213 MB/s:
    the 240GB wrote 201 after TRIM). Where the twin's own write after the
    TRIM falls short, faster paths are tried on the whole probe and the
    slowest that brings it within the tolerance is kept."""
    from ssdlab.twin.fit import behaviours as tf

    seen: List[int] = []

    # a fake runner: the write after the TRIM runs at 94% of the path, and at most at the dies' 205 MB/s
    def figs(path: float, dirty: float = 70.0) -> Dict[str, Dict[str, Any]]:
        return {"after-trim-seqwrite": {"mbps": min(0.94 * path / 1e6, 205.0)}, "dirty-seqwrite": {"mbps": dirty}}

    class FakeRunner:
        def map(self, fn: Any, items: Any, what: str = "") -> Any:
            for i, (doc, *_rest) in enumerate(items):
                seen.append(doc["ftl"]["recycle_bytes_per_s"])
                yield i, figs(doc["ftl"]["recycle_bytes_per_s"])

    feats: Dict[str, Any] = {}
    measured = {"after-trim-seqwrite": {"mbps": 201.0}, "dirty-seqwrite": {"mbps": 70.0}}
    why = {"value": 201_000_000, "source": "measured", "why": "after TRIM"}
    tf_rate = tf._rate_jobs
    tf._rate_jobs = lambda *a: ["after-trim-seqwrite", "dirty-seqwrite"]  # type: ignore[assignment]
    try:
        doc = {"ftl": {"gc_mode": "lazy", "recycle_bytes_per_s": 201_000_000}}
        twin, _, prov = tf.choose_recycle_path(doc, figs(201e6), why, feats, measured, FakeRunner(), 1, 1.0)  # type: ignore[arg-type]
        assert seen == [round(201_000_000 * k) for k in tf.RECYCLE_PATH_STEPS]  # only faster ones
        # 201 x 1.06 = 213 MB/s writes 200.3 after the TRIM: the slowest within 2%
        assert twin["ftl"]["recycle_bytes_per_s"] == prov["value"] == 213_060_000 and prov["source"] == "fitted"
        assert prov["why"].startswith("after TRIM, a lower bound") and "201 MB/s: -6.0%" in prov["why"]
        assert doc["ftl"]["recycle_bytes_per_s"] == 201_000_000  # the drive given is not changed
        # a twin whose write after the TRIM already comes within it keeps the measured rate (nothing simulated)
        seen.clear()
        twin, _, prov = tf.choose_recycle_path(doc, figs(214e6), why, feats, measured, FakeRunner(), 1, 1.0)  # type: ignore[arg-type]
        assert twin is doc and prov["source"] == "measured" and "short of it by no more than 2%" in prov["why"] and seen == []
        # where the dies bind below the drive's rate no path gets there: the measured rate stays
        slow = {"after-trim-seqwrite": {"mbps": 230.0}, "dirty-seqwrite": {"mbps": 70.0}}
        twin, _, prov = tf.choose_recycle_path(doc, figs(201e6), why, feats, slow, FakeRunner(), 1, 1.0)  # type: ignore[arg-type]
        assert twin is doc and prov["source"] == "measured" and "no faster path" in prov["why"]
        # nor one that reaches it with a worse fill stage
        seen.clear()
        worse = {**measured, "dirty-seqwrite": {"mbps": 60.0}}

        class WorseRunner(FakeRunner):
            def map(self, fn: Any, items: Any, what: str = "") -> Any:
                for i, (d, *_rest) in enumerate(items):
                    yield i, figs(d["ftl"]["recycle_bytes_per_s"], dirty=90.0)

        twin, _, prov = tf.choose_recycle_path(doc, figs(201e6, dirty=60.0), why, feats, worse, WorseRunner(), 1, 1.0)  # type: ignore[arg-type]
        assert twin is doc and prov["source"] == "measured"
        # a twin without a path, or with paced GC, is left alone
        for other in ({"ftl": {"gc_mode": "lazy"}}, {"ftl": {"gc_mode": "paced", "recycle_bytes_per_s": 71_000_000}}):
            assert tf.choose_recycle_path(other, {}, {}, feats, measured, FakeRunner(), 1, 1.0)[0] is other  # type: ignore[arg-type]
        assert seen == []
    finally:
        tf._rate_jobs = tf_rate  # type: ignore[assignment]


def test_a_flush_that_waits_for_garbage_collection_the_twin_does_not_do_leaves_the_buffer_assumed() -> None:
    from ssdlab.twin.fit import buffer as tf
    from ssdlab.twin.fit.base import ASSUMED_BUFFER_BYTES

    # a fake runner: the twin's probe figures by buffer, the torture's per-second log steady or in stalls
    def figs(flush_s: float, series: list) -> Dict[str, Dict[str, Any]]:
        return {"torture": {"mbps": 40.0, "iops_series": series},
                "tortured-flush": {"mbps": 8192 / flush_s / 1e6, "sync_mean_us": flush_s * 1e6}}

    steady = [10_000.0 + (100.0 if i % 2 else -100.0) for i in range(40)]
    stalls = [10_000.0 + (3_000.0 if i % 2 else -3_000.0) for i in range(40)]

    class FakeRunner:
        def map(self, fn: Any, items: Any, what: str = "") -> Any:
            for i, (doc, *_rest) in enumerate(items):
                b = doc["controller"]["write_buffer_bytes"]
                yield i, figs(b / 40e6, steady)   # a paced twin drains its buffer at the torture's pace

    base = {"controller": {"write_buffer_bytes": ASSUMED_BUFFER_BYTES}}
    assumed = {"value": ASSUMED_BUFFER_BYTES, "source": "assumed", "why": "unseen"}
    feats = {"dirty_buffer_bytes": {"value": 50e6}, "capacity_bytes": {"value": 120_000_000_000}}
    figs0 = figs(ASSUMED_BUFFER_BYTES / 40e6, steady)
    # the drive drains steadily: the buffer is the one whose flush the twin reproduces (2.5 s x 40 MB/s)
    _, _, prov = tf.choose_dirty_buffer(base, figs0, assumed, feats, figs(2.5, steady), FakeRunner(), 1, 1.0)  # type: ignore[arg-type]
    assert prov["source"] == "fitted" and abs(prov["value"] - 100e6) < 8192 and "powers of two" not in prov["why"]
    # ... taken as the power of two it lies within BUFFER_POW2_SHARE of (1.7 s x 40 MB/s = 68 MB: 64 MiB)
    twin, figs_b, prov = tf.choose_dirty_buffer(base, figs0, assumed, feats, figs(1.7, steady), FakeRunner(), 1, 1.0)  # type: ignore[arg-type]
    assert prov["value"] == 64 << 20 == twin["controller"]["write_buffer_bytes"] and "buffers are powers of two" in prov["why"]
    assert figs_b["tortured-flush"]["sync_mean_us"] == pytest.approx((64 << 20) / 40.0)   # the figures of that twin
    # the drive's torture comes in stalls the paced twin does not have: its flush says nothing of the buffer
    _, _, prov = tf.choose_dirty_buffer(base, figs0, assumed, feats, figs(2.0, stalls), FakeRunner(), 1, 1.0)  # type: ignore[arg-type]
    assert prov["source"] == "assumed" and prov["value"] == ASSUMED_BUFFER_BYTES
    assert "does not drain at the drive's pace" in prov["why"]
    # or at another pace: the twin's garbage collection is not the drive's
    slow = [x * 0.7 for x in steady]
    _, _, prov = tf.choose_dirty_buffer(base, figs0, assumed, feats, figs(2.0, slow), FakeRunner(), 1, 1.0)  # type: ignore[arg-type]
    assert prov["source"] == "assumed"
    # a twin whose garbage collection cleans whole blocks when it needs one: the flush waits for that cleaning, on
    # the twin as on the drive where the twin's torture runs at the drive's pace and variability; the buffers of
    # LAZY_BUFFER_GRID_BYTES are tried on the whole probe and the closest kept (64 MiB: 1.68 s for the drive's 2)
    _, _, prov = tf.choose_dirty_buffer(base, figs0, assumed, feats, figs(2.0, steady), FakeRunner(), 1, 1.0,  # type: ignore[arg-type]
                                        gc_mode="lazy")
    assert prov["source"] == "fitted" and prov["value"] == 64 << 20 and "128 MiB: " in prov["why"]
    assert "the largest" not in prov["why"]
    # where two buffers reproduce the probe alike, the largest the flush's estimate allows (it drains the buffer
    # and waits for the cleaning: the most the buffer can be)

    class TieRunner(FakeRunner):
        def map(self, fn: Any, items: Any, what: str = "") -> Any:
            for i, (doc, *_rest) in enumerate(items):
                b = doc["controller"]["write_buffer_bytes"]
                yield i, figs(2.0 if b in (16 << 20, 32 << 20) else 1.0, steady)

    for flush_estimate, kept in ((50e6, 32 << 20), (20e6, 16 << 20), (10e6, 16 << 20)):
        f_tie = {**feats, "dirty_buffer_bytes": {"value": flush_estimate}}
        _, _, prov = tf.choose_dirty_buffer(base, figs0, assumed, f_tie, figs(2.0, steady), TieRunner(), 1, 1.0,  # type: ignore[arg-type]
                                            gc_mode="lazy")
        assert prov["value"] == kept, (flush_estimate, prov)
    # ... and where it does not (the drive's torture stalls), the flush says nothing of the buffer
    _, _, prov = tf.choose_dirty_buffer(base, figs0, assumed, feats, figs(2.0, stalls), FakeRunner(), 1, 1.0,  # type: ignore[arg-type]
                                        gc_mode="lazy")
    assert prov["source"] == "assumed" and "waits for that cleaning" in prov["why"]
    # ... nor where no buffer reproduces the probe clearly better than the assumed one
    _, _, prov = tf.choose_dirty_buffer(base, figs0, assumed, feats, figs0, FakeRunner(), 1, 1.0,  # type: ignore[arg-type]
                                        gc_mode="lazy")
    assert prov["source"] == "assumed" and "below 0.7 of the assumed's" in prov["why"]
    # bursts that saw a buffer well short of the flush's (a shallow step: the NAND nearly keeps up with the link)
    bursts = {"value": 20_000_000, "source": "measured", "why": "the bursts' step"}
    _, _, prov = tf.choose_dirty_buffer(base, figs0, bursts, feats, figs(2.5, steady), FakeRunner(), 1, 1.0)  # type: ignore[arg-type]
    assert prov["source"] == "fitted" and abs(prov["value"] - 100e6) < 8192 and "shallow step" in prov["why"]
    # ... but within BURST_DOUBT of it the bursts stand
    close = {**bursts, "value": int(50e6 / tf.BURST_DOUBT) + 1}
    _, _, prov = tf.choose_dirty_buffer(base, figs0, close, feats, figs(2.0, steady), FakeRunner(), 1, 1.0)  # type: ignore[arg-type]
    assert prov == close
    # ... judged against the bursts' own estimate, not the power of two the twin took it as (the Vertex 4 128GB fw1.5:
    # 28.3 MB from its bursts, taken as 32 MiB, 64.4 MB from the flush, 64 MiB the truth)
    snapped = {**bursts, "value": 2**25}
    f_raw = {**feats, "write_buffer_bytes": {"value": 24e6}}
    _, _, prov = tf.choose_dirty_buffer(base, figs0, snapped, f_raw, figs(2.5, steady), FakeRunner(), 1, 1.0)  # type: ignore[arg-type]
    assert prov["source"] == "fitted" and "gave 24,000,000 B, a shallow step" in prov["why"]
    _, _, prov = tf.choose_dirty_buffer(base, figs0, snapped, {**feats, "write_buffer_bytes": {"value": 26e6}},
                                        figs(2.5, steady), FakeRunner(), 1, 1.0)  # type: ignore[arg-type]
    assert prov == snapped
