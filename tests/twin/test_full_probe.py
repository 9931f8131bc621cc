"""The probe's full-drive stage (ssdlab.twin.probe.later.full_stage), its features (ssdlab.twin.features.full) and
the fit's use of them on a modern twin (ssdlab.twin.fit.full)."""

from __future__ import annotations

from typing import Any, Dict, List

import pytest

from ssdlab.twin.features.full import full_features
from ssdlab.twin.fit.full import _with_dies, _with_program_buffer, full_onset_features
from ssdlab.twin.probe import FULL, QUEUES, probe_jobs, run_probe_simulated
from ssdlab.twin.probe.jobs import full_stage_note
from ssdlab.twin.probe.names import FULL_FILL, FULL_RANDWRITE, FULL_SEQWRITE, GC_FALL_SHARE
from ssdlab.twin.probe.segments import segments_done

TB = 10**12


def test_the_full_stage_follows_the_fill_and_writes_past_the_spare_area_at_any_budget() -> None:
    from ssdlab.twin.probe import CACHE, CLEAN, FILL
    from ssdlab.twin.probe.names import FILL_JOB, TORTURE

    jobs = probe_jobs(TB, 0.25)
    names = [j.name for j in jobs]
    full = [j.name for j in jobs if j.stage == FULL]
    # right after the fill stage's whole-drive fill, while every LBA holds data, and before its torture
    assert names[names.index(FILL_JOB) + 1:names.index(TORTURE)] == full
    assert full[0] == FULL_SEQWRITE and full[-1] == FULL_RANDWRITE and FULL_FILL not in names
    rand = {b: next(j for j in probe_jobs(TB, b) if j.name == FULL_RANDWRITE).options["io_size"] for b in (0.1, 0.25, 1, 3)}
    # at most: at least 15% of the capacity (past a modern drive's 7-12% spare), 30% per unit of budget, never past it
    assert rand[0.1] == rand[0.25] and abs(rand[0.25] - 0.15 * TB) < 2**20
    assert abs(rand[1] - 0.3 * TB) < 2**20 and rand[3] <= TB
    assert next(j for j in jobs if j.name == FULL_SEQWRITE).log_ms == 1000
    note = full_stage_note(TB, 0.25)
    assert "at most 167.2 GB" in note and "1.17 x the capacity" in note and "--budget 0.25" in note
    # without the fill stage the full stage fills the whole drive first, right after the clean stage
    own = [j.name for j in probe_jobs(TB, 0.25, stages=(CLEAN, CACHE, QUEUES, FULL))]
    assert own[own.index(FULL_FILL):own.index(FULL_RANDWRITE) + 1] == [FULL_FILL] + full
    assert "1,000.0 GB to fill the drive" in full_stage_note(TB, 0.25, (CLEAN, FULL))
    assert [j.stage for j in probe_jobs(TB, 0.25, stages=(CACHE,))] == [CACHE] * 3
    # the torture after the full stage only settles in the steady state its random writes left (30 s at least)
    short = {b: next(j for j in probe_jobs(TB, b) if j.name == TORTURE).options["runtime"] for b in (0.1, 1)}
    assert short == {0.1: "30000ms", 1: "120000ms"}
    assert next(j for j in probe_jobs(TB, 1, full=False) if j.name == TORTURE).options["runtime"] == "3500000ms"
    assert [j.name for j in probe_jobs(TB, 1, stages=(CLEAN, FILL))] == [
        j.name for j in probe_jobs(TB, 1, full=False) if j.stage in (CLEAN, FILL)]


def _figs(rates_mbps: List[float]) -> Dict[str, Any]:
    iops = [r * 1e6 / 131072 for r in rates_mbps]
    return {FULL_RANDWRITE: {"mbps": sum(rates_mbps) / len(rates_mbps), "iops_series": iops, "interval_ms": 1000,
                             "io_bytes": int(sum(rates_mbps) * 1e6)},
            FULL_SEQWRITE: {"mbps": 600.0, "iops_series": [2000e6 / 131072] * 3 + [600e6 / 131072] * 7}}


def test_the_onset_is_the_bytes_before_the_step_and_no_step_is_a_lower_bound() -> None:
    f = full_features(_figs([400.0] * 100 + [50.0] * 300), TB)
    assert f["full_gc_onset_bytes"]["value"] == pytest.approx(40e9, rel=0.01)
    assert f["full_spare_fraction"]["value"] == pytest.approx(0.04, rel=0.01)
    assert f["full_steady_write_bytes_per_s"]["value"] == pytest.approx(50e6, rel=0.01)
    # the second half of the sequential write: past a static cache's first seconds
    assert f["full_write_bytes_per_s"]["value"] == pytest.approx(600e6, rel=0.01)
    flat = full_features(_figs([400.0] * 100), TB)
    assert flat["full_gc_onset_bytes"]["value"] is None
    assert flat["full_gc_onset_at_least_bytes"]["value"] == pytest.approx(40e9, rel=0.01)
    short = full_features(_figs([400.0] * 10), TB)
    assert short["full_spare_fraction"]["value"] is None and short["full_spare_fraction"]["confidence"] == "none"


def test_a_mild_fall_or_a_one_second_dip_on_the_way_is_not_the_gc_onset() -> None:
    # a drive that reclaims its cache's blocks first (a quarter slower), dips once, then meets garbage collection
    rates = [96.0] * 15 + [74.0] * 10 + [50.0] + [74.0] * 1300 + [13.0] * 600
    f = full_features(_figs(rates), TB)
    assert f["full_gc_onset_bytes"]["value"] == pytest.approx((96 * 15 + 74 * 1310 + 50) * 1e6, rel=0.001)
    # writes that ended after the mild fall alone show no onset: a lower bound
    mild = full_features(_figs([96.0] * 15 + [72.0] * 60), TB)
    assert mild["full_gc_onset_bytes"]["value"] is None and mild["full_spare_fraction"]["confidence"] == "low"
    # and the probe's segments go on past such a fall
    assert segments_done([93e6, 70e6, 71e6, 71e6], [20.0] * 4, share=GC_FALL_SHARE) is None


def _feat(v: Any) -> Dict[str, Any]:
    return {"value": v, "unit": "", "confidence": "high", "how": "test"}


def test_the_full_onset_stands_for_the_torture_only_on_a_modern_drive_without_one() -> None:
    full = {"full_gc_onset_bytes": _feat(97e9), "full_spare_fraction": _feat(0.097), "capacity_bytes": _feat(TB)}
    modern = {**full, "host_interface": _feat("nvme"), "gc_onset_bytes": _feat(None), "spare_fraction": _feat(0.02)}
    out = full_onset_features(modern)
    assert out["gc_onset_bytes"]["value"] == 97e9 and out["spare_fraction"]["value"] == 0.097
    # the torture's own onset stays
    seen = {**modern, "gc_onset_bytes": _feat(80e9), "spare_fraction": _feat(0.08)}
    assert full_onset_features(seen)["gc_onset_bytes"]["value"] == 80e9
    # a SATA-era drive keeps its features as they were
    sata = {**full, "host_interface": _feat("sata"), "gc_onset_bytes": _feat(None), "spare_fraction": _feat(0.02)}
    assert full_onset_features(sata) == sata


def test_other_die_counts_keep_the_raw_nand_and_the_write_rates() -> None:
    part = {"blocks_per_plane": 2731, "tprog_ns": 983_000, "slc_tprog_ns": 100_000}
    doc = {"nand": {"channels": 8, "packages_per_channel": 1, "dies_per_package": 1, "tprog_ns": 1_306_292,
                    "slc_tprog_ns": 115_000, "blocks_per_plane": 5320}}
    two = _with_dies(doc, 2.0, part)
    assert two is not None and two["nand"]["packages_per_channel"] == 2
    assert two["nand"]["tprog_ns"] == 2_612_584 and two["nand"]["slc_tprog_ns"] == 230_000
    assert two["nand"]["blocks_per_plane"] == 2660
    assert doc["nand"]["packages_per_channel"] == 1  # the twin itself is left as it was
    assert _with_dies(doc, 0.5, part) is None  # one die per package on one package: no half
    half = _with_dies(two, 0.5, part)
    assert half is not None and half["nand"]["packages_per_channel"] == 1 and half["nand"]["tprog_ns"] == 1_306_292
    # an SLC program the flushes set (a cache written at the link's rate) stays where the dies move
    kept = _with_dies(doc, 2.0, part, keep=("nand.slc_tprog_ns",))
    assert kept is not None and kept["nand"]["slc_tprog_ns"] == 115_000 and kept["nand"]["tprog_ns"] == 2_612_584


def test_a_native_program_the_cache_fit_left_at_its_range_s_end_is_taken_from_the_full_write_for_other_dies() -> None:
    from ssdlab.twin.fit.full import _with_native_from_full
    from ssdlab.twin.fit.slc import native_tprog_range_ns

    # a QLC twin of 16 dies and 256 KiB units: 144 MB/s needs 29 ms, past the range; the cache fit stopped there
    part = {"blocks_per_plane": 2738, "planes_per_die": 4, "page_size_bytes": 16384, "bits_per_cell": 4,
            "tprog_ns": 15_000_000, "slc_tprog_ns": 100_000}
    lo, hi = native_tprog_range_ns(part)
    assert hi < 29_000_000
    doc = {"nand": {"channels": 4, "packages_per_channel": 4, "dies_per_package": 1, "tprog_ns": hi,
                    "slc_tprog_ns": 85_000}}
    half = _with_native_from_full(_with_dies(doc, 0.5, part), doc, part, 144e6)
    assert half is not None and half["nand"]["packages_per_channel"] == 2
    # 8 dies x 256 KiB / 144 MB/s, where scaling the pinned time would give hi / 2 and write 33% fast
    assert half["nand"]["tprog_ns"] == int(8 * 262144 / 144e6 * 1e9)
    assert half["nand"]["slc_tprog_ns"] == 42_500  # the cache's rate stays
    two = _with_native_from_full(_with_dies(doc, 2.0, part), doc, part, 144e6)
    assert two is not None and two["nand"]["tprog_ns"] == hi  # 58 ms is past the range too
    # a time inside the range scales with the dies, as the cache fit's rates asked
    inside = {"nand": {**doc["nand"], "tprog_ns": 20_000_000}}
    assert _with_native_from_full(_with_dies(inside, 0.5, part), inside, part, 144e6)["nand"]["tprog_ns"] == 10_000_000
    assert _with_native_from_full(None, doc, part, 144e6) is None


def test_a_program_buffer_candidate_binds_the_native_writes_where_the_dies_could_write_faster() -> None:
    part = {"blocks_per_plane": 2731, "tprog_ns": 983_000, "slc_tprog_ns": 100_000, "planes_per_die": 2,
            "page_size_bytes": 16384, "bits_per_cell": 3}
    doc = {"nand": {"channels": 8, "packages_per_channel": 1, "dies_per_package": 1, "tprog_ns": 1_306_292,
                    "slc_tprog_ns": 115_000, "blocks_per_plane": 5320}}
    # 8 dies at 1.31 ms program 602 MB/s: they cannot write a full drive at 684, whatever the buffer
    assert _with_program_buffer(doc, 1.0, part, 684e6) is None
    two = _with_program_buffer(doc, 2.0, part, 684e6)
    assert two is not None and two["nand"]["packages_per_channel"] == 2
    # the native program time stays (the dies could write 1.2 GB/s)
    assert two["nand"]["tprog_ns"] == 1_306_292
    # a unit holds its room through its transfer (98 us at 1 GB/s) and program: 684 MB/s x 1.40 ms = 961 KB, 10
    # units of 96 KiB
    assert two["controller"]["program_buffer_bytes"] == 10 * 98304
    # 8 dies at 115 us wrote the cache at 2.28 GB/s; 10 units of 32 KiB in flight write it as fast at 111 us a
    # program (each also holding its room through its 33 us transfer)
    assert two["nand"]["slc_tprog_ns"] == 111_000


@pytest.mark.slow
def test_the_full_stage_of_a_simulated_drive_gives_its_spare_area() -> None:
    from twin_helpers import preset_truth

    run = run_probe_simulated("generic-mlc-120", None, stages=(FULL,), budget=0.25)
    f = full_features(run.figures, run.target["capacity_bytes"])
    truth = preset_truth("generic-mlc-120")["spare_fraction"]
    print(f"full-stage spare {f['full_spare_fraction']['value']} (truth {truth:.4f})")
    assert f["full_gc_onset_bytes"]["value"] is not None
    assert abs(f["full_spare_fraction"]["value"] / truth - 1) < 0.10


def test_the_fold_is_what_the_full_drive_writes_beyond_the_post_cache_write() -> None:
    from ssdlab.twin.fit.slc import FOLD_MAX, full_drive_fold

    f = {"full_write_bytes_per_s": _feat(684e6), "post_cache_write_bytes_per_s": _feat(515e6)}
    assert full_drive_fold(f) == pytest.approx(684 / 515 - 1, abs=1e-3)
    # a full drive no faster than the post-cache write: nothing folded; never more than FOLD_MAX
    assert full_drive_fold({**f, "full_write_bytes_per_s": _feat(500e6)}) == 0.0
    assert full_drive_fold({**f, "full_write_bytes_per_s": _feat(5e9)}) == FOLD_MAX
    # without the full stage the profile's fold stays (None)
    assert full_drive_fold({"post_cache_write_bytes_per_s": _feat(515e6)}) is None
    # right after its step the cache fill ran at the full drive's rate: nothing folded, whatever slowed it later
    # (wd-sn570-1000: 2,082 MB/s there, 2,086 full, a 1,435 median past the step with its GC of trimmed blocks)
    g = {"full_write_bytes_per_s": _feat(2086e6), "post_cache_write_bytes_per_s": _feat(1435e6)}
    assert full_drive_fold({**g, "post_cache_first_bytes_per_s": _feat(2082e6)}) == 0.0
    assert full_drive_fold({**g, "post_cache_first_bytes_per_s": _feat(1500e6)}) == pytest.approx(2086 / 1435 - 1, abs=1e-3)


def test_a_modern_twin_starts_from_the_full_drive_s_native_program() -> None:
    from ssdlab.twin.fit.base import modern_base
    from ssdlab.twin.fit.drive_file import _native_start
    from ssdlab.twin.fit.native import native_program_ns

    doc: Dict[str, Any] = {"drive": {"nand_part": "generic-tlc"}, "nand": {"channels": 4, "packages_per_channel": 4}}
    prov: Dict[str, Any] = {}
    _native_start(doc, prov, {"full_write_bytes_per_s": _feat(2086e6)}, modern_base())
    got = doc["nand"]["tprog_ns"]
    assert prov["nand.tprog_ns"]["source"] == "measured"
    # 16 dies of the generic TLC part's 96 KiB one-shot units (2 planes x 16 KiB x 3 bits) write 2,086 MB/s at it
    assert abs(16 * 98_304 / (got / 1e9) / 2086e6 - 1) < 0.01
    assert got == int(native_program_ns({"channels": 4, "packages_per_channel": 4}, 2086e6))
    # a SATA-era twin keeps its own program time
    sata: Dict[str, Any] = {"nand": {}}
    from ssdlab.twin.fit.base import SATA_BASE

    _native_start(sata, {}, {"full_write_bytes_per_s": _feat(2086e6)}, SATA_BASE)
    assert sata == {"nand": {}}


def _small_modern() -> Dict[str, Any]:
    # 8 dies of the generic TLC part, 64 GB, about 10% spare: 350 blocks of 24 MiB per plane pair and die
    return {"drive": {"id": "small-modern", "name": "small modern", "user_capacity_bytes": 64 * 10**9,
                      "controller": "generic-nvme", "nand_part": "generic-tlc"},
            "nand": {"channels": 8, "packages_per_channel": 1, "dies_per_package": 1, "blocks_per_plane": 350}}


@pytest.mark.slow
def test_on_a_modern_drive_s_own_probe_the_full_step_keeps_its_dies_and_finds_its_spare() -> None:
    from ssdlab import Drive
    from ssdlab.cluster import Runner
    from ssdlab.twin.features import extract
    from ssdlab.twin.fit.base import _RESERVE_BLOCKS
    from ssdlab.twin.fit.full import choose_full_dies
    from ssdlab.twin.report.truth import truth_of

    doc = _small_modern()
    run = run_probe_simulated(Drive.load(doc), None, budget=0.25)
    assert any(j.stage == FULL for j in run.jobs)  # an NVMe drive with a cache: the stage runs
    features = extract(run.figures, run.target["capacity_bytes"])
    truth = truth_of(Drive.load(doc))["spare_fraction"]
    # the bytes before the step, and the free blocks the FTL keeps (the fit's raw NAND adds them back: on a small
    # drive they are a larger share, here 8 dies x 5 blocks of 24 MiB, 1.6% of the capacity)
    spare = (features["full_gc_onset_bytes"]["value"] + 8 * _RESERVE_BLOCKS * 2 * 768 * 16384) / (64 * 10**9)
    print(f"full-stage spare {features['full_spare_fraction']['value']} + reserve = {spare:.4f} (truth {truth:.4f})")
    assert abs(spare / truth - 1) < 0.10
    prov: Dict[str, Any] = {}
    kept, figs, rec = choose_full_dies(doc, prov, features, run.figures, Runner(jobs=1), 1, 0.25, None)
    assert rec is not None
    rows = {(r["dies"], r["program_buffer_bytes"]): r["error"] for r in rec["rows"]}
    print(rows)
    # the drive's own structure reproduces its probe: it is kept, and no other candidate is as close
    assert kept == doc and prov == {}
    assert rows[(8, None)] < min(e for k, e in rows.items() if k != (8, None))
    assert set(figs) >= {FULL_SEQWRITE, FULL_RANDWRITE}


def test_a_program_buffer_with_room_on_every_die_is_no_candidate() -> None:
    part = {"blocks_per_plane": 2731, "tprog_ns": 983_000, "slc_tprog_ns": 100_000, "planes_per_die": 2,
            "page_size_bytes": 16384, "bits_per_cell": 3}
    doc = {"nand": {"channels": 8, "packages_per_channel": 1, "dies_per_package": 1, "tprog_ns": 983_000,
                    "slc_tprog_ns": 100_000, "blocks_per_plane": 350}}
    # 8 dies at 0.98 ms write 800 MB/s: a full drive at 790 needs 8 units in flight, one on every die
    assert _with_program_buffer(doc, 1.0, part, 790e6) is None


def test_a_buffer_bound_candidate_keeps_the_dies_at_half_the_program_time() -> None:
    from ssdlab.fit.params import library_values
    from ssdlab.twin.fit.full import _shorter_programs
    from ssdlab.twin.fit.native import native_tprog_range_ns

    part = library_values("part", "generic-tlc")["nand"]
    # samsung980-1000's fit: 16 dies at 2.36 ms write its full drive's 687 MB/s with no buffer; the drive has 16
    # dies at 1.2 ms behind a buffer of 9 units, which only its reads behind programs tell apart
    doc = {"nand": {"channels": 8, "packages_per_channel": 2, "dies_per_package": 1, "tprog_ns": 2_362_827,
                    "slc_tprog_ns": 79_000, "blocks_per_plane": 1365, "channel_bytes_per_s": 1_237_000_000}}
    half = _shorter_programs(doc, part, ())
    assert half is not None and half["nand"]["packages_per_channel"] == 1 and half["nand"]["tprog_ns"] == 1_181_414
    d = _with_program_buffer(half, 2.0, part, 686.6e6)
    assert d is not None and d["nand"]["packages_per_channel"] == 2 and d["nand"]["tprog_ns"] == 1_181_414
    # a unit holds its room through its 79 us transfer and its program: 686.6 MB/s x 1.26 ms in 96 KiB units
    assert d["controller"]["program_buffer_bytes"] == 9 * 98_304
    # its dies could write the cache at 6.6 GB/s, its fill ran at 2.25: 9 units in flight give that at 105 us an
    # SLC program (each also holding its room through its 26 us transfer; the Pablo's 100), not at the 30 us floor
    assert d["nand"]["slc_tprog_ns"] == 30_000
    assert _with_program_buffer(half, 2.0, part, 686.6e6, 2.249e9)["nand"]["slc_tprog_ns"] == 105_000
    # no candidate where half the program time leaves the part's range
    lo, _ = native_tprog_range_ns(part)
    assert _shorter_programs({"nand": {**doc["nand"], "tprog_ns": int(1.5 * lo)}}, part, ()) is None


def test_a_program_buffer_candidate_is_tried_again_with_the_write_path_open() -> None:
    """The clean fit caps the write path where the programs in flight bound the writes (samsung980-1000's twin:
    2.35 GB/s, its 128KB QD1 writes 1,823 MB/s for 2,276); once the full-drive step gives the twin its program
    buffer, the cap stands in for nothing and the path is tried open (the modern range's top)."""
    from ssdlab.twin.fit.full import _write_path_opened
    from ssdlab.twin.fit.start import MODERN_WRITE_PATH_MAX

    capped = {"controller": {"max_write_bytes_per_s": 2_350_000_000, "program_buffer_bytes": 884_736},
              "nand": {"channels": 8}}
    opened = _write_path_opened(capped)
    assert opened is not None and opened["controller"]["max_write_bytes_per_s"] == MODERN_WRITE_PATH_MAX
    assert capped["controller"]["max_write_bytes_per_s"] == 2_350_000_000  # the candidate is a copy
    assert opened["controller"]["program_buffer_bytes"] == 884_736 and opened["nand"] == capped["nand"]
    # without a program buffer the cap is what binds the writes; an open path has nothing to open
    assert _write_path_opened({"controller": {"max_write_bytes_per_s": 2_350_000_000}}) is None
    assert _write_path_opened({"controller": {"max_write_bytes_per_s": MODERN_WRITE_PATH_MAX,
                                              "program_buffer_bytes": 884_736}}) is None
    assert _write_path_opened({"controller": {"program_buffer_bytes": 884_736}}) is None
