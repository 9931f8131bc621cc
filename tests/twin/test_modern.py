"""The twin of a modern drive: the probe's map-cache and queue jobs and what they reveal (the map cache, queue
scaling, the NVMe link's generation), and the generic modern start a probe with an NVMe link or a write cache
selects."""

from typing import Any, Dict

import pytest

from ssdlab import Drive
from ssdlab.twin.features import _nvme
from ssdlab.twin.features.common import feature
from ssdlab.twin.features.queues import (
    map_cache_features,
    nvme_link,
    pcie_usable_bytes_per_s,
    queue_features,
)
from ssdlab.twin.fit.base import SATA_BASE, base_of, modern_base
from ssdlab.twin.fit.drive_file import build_doc
from ssdlab.twin.fit.start import free_parameters, raw_nand_dies, start_candidates
from ssdlab.twin.probe import FILL, FULL, QUEUES, jobfile_text, probe_jobs
from ssdlab.twin.probe.jobs import LINK_SEQREAD, QUEUE_GRID, map_span, map_spans, queue_read
from ssdlab.twin.probe.names import MAP_TAIL, randread_4k
from ssdlab.twin.roundtrip import MODERN_REVIEW_TESTS, review_tests

TB = 1_000_000_000_000
GiB = 1 << 30


def test_map_and_queue_jobs_are_in_the_probe():
    jobs = probe_jobs(TB, 1.0)
    spans = map_spans(TB)
    assert spans[0] == GiB and spans[-1] == TB and all(b == 2 * a for a, b in zip(spans, spans[1:-1]))
    # the queue stage runs after every earlier stage (reads: their figures stay as they were), the map-cache reads at
    # its end (over spans of the whole drive, growing): the last jobs of the probe
    q = [j for j in jobs if j.stage == QUEUES]
    assert jobs[-len(q):] == q
    assert [j.name for j in q] == ([queue_read(n, d) for n, d in QUEUE_GRID] + [LINK_SEQREAD]
                                   + [map_span(s, TB) for s in spans] + [MAP_TAIL])
    assert all(j.options["iodepth"] == 1 and j.options["offset"] == 0 for j in q[-len(spans) - 1:-1])
    # the tail: the drive's last GiB, past what the cache stage wrote
    assert q[-1].options["offset"] + q[-1].options["size"] <= TB and q[-1].options["offset"] > TB - 2 * GiB
    assert {(j.options["numjobs"], j.options["iodepth"]) for j in q[:len(QUEUE_GRID)]} == set(QUEUE_GRID)
    assert min(n * d for n, d in QUEUE_GRID) == 1 and max(n * d for n, d in QUEUE_GRID) == 256
    text = jobfile_text(q[:len(QUEUE_GRID) + 1])
    assert "numjobs=8" in text and "offset_increment=" in text


def _spans(latency):
    return {map_span(s, TB): {"clat_mean_us": latency(s), "mbps": 1.0} for s in map_spans(TB)}


def test_the_map_cache_is_the_span_where_qd1_reads_step_up():
    covered = 64 * GiB
    f = map_cache_features(_spans(lambda s: 60.0 + 45.0 * max(0.0, 1 - covered / s)), TB)
    assert f["map_cache_limited"]["value"] is True
    assert abs(f["map_cache_span_bytes"]["value"] / covered - 1) < 0.03
    assert abs(f["map_cache_bytes"]["value"] / (64 << 20) - 1) < 0.03  # 4 B per 4KB unit
    assert abs(f["map_miss_us"]["value"] - 45.0) < 3.0
    # a slow first span (behind the programs the write before it left) is not a map
    flat = map_cache_features(_spans(lambda s: 90.0 if s == GiB else 60.0), TB)
    assert flat["map_cache_limited"]["value"] is False and flat["map_cache_bytes"]["value"] is None
    # nor is a rise at the whole drive alone (the Vertex 4 256GB, its whole map in DRAM: 145 us to 137 GB, 169 over
    # the whole drive)
    one = map_cache_features(_spans(lambda s: 169.0 if s == TB else 145.0), TB)
    assert one["map_cache_limited"]["value"] is False and one["map_cache_bytes"]["value"] is None
    assert "largest span alone" in one["map_cache_limited"]["how"]
    # two spans past the step are a curve
    two = map_cache_features(_spans(lambda s: 169.0 if s >= TB // 2 else 145.0), TB)
    assert two["map_cache_limited"]["value"] is True
    assert map_cache_features({}, TB)["map_cache_bytes"]["confidence"] == "none"


def _cache_stage(latency, fill=75e9, after=37.5e9):
    """The map spans read after the cache stage: its TRIM, its fill and its write after idle time from LBA 0."""
    figs = _spans(latency)
    figs.update({"cache-trim": {"io_bytes": TB}, "cache-fill": {"io_bytes": fill}, "cache-after-idle": {"io_bytes": after}})
    return figs


def test_the_map_cache_is_told_apart_from_what_the_spans_read():
    covered, slc, written = 64 * GiB, 12e9, 112.5e9

    def dramless(s):  # SLC data 57 us, native 74, a trimmed LBA 16 (its map only); a miss 71 more
        in_slc = min(s, slc) / s
        data = min(s, written) / s
        return 57 * in_slc + 74 * (data - in_slc) + 16 * (1 - data) + 71 * max(0.0, 1 - covered / s)

    figs = _cache_stage(dramless)
    # without the tail's reads a trimmed LBA's latency is free, and past the written span it and the map's step
    # are the same curve (a + b / span): the step is seen, its place is not pinned
    f = map_cache_features(figs, TB, slc, 0)
    assert f["map_cache_limited"]["value"] is True
    assert "data in SLC" in f["map_cache_span_bytes"]["how"] and "trimmed LBAs" in f["map_cache_span_bytes"]["how"]
    assert f["trimmed_read_qd1_us"]["value"] is None
    # each kind's read where its map is held (with the tail's reads: what the die's read adds to a map lookup)
    figs["map-tail-1g"] = {"clat_mean_us": 16.0}
    t = map_cache_features(figs, TB, slc, 0)
    assert abs(t["slc_data_read_qd1_us"]["value"] - 57) < 2 and abs(t["native_data_read_qd1_us"]["value"] - 74) < 2
    assert "41.0 us more than a read of a trimmed LBA" in t["slc_data_read_qd1_us"]["how"]
    assert t["trimmed_read_qd1_us"]["value"] == 16.0
    assert abs(t["map_cache_span_bytes"]["value"] / covered - 1) < 0.03
    assert abs(t["map_miss_us"]["value"] - 71) < 5
    # the faster SLC start read as if it were the whole drive's: the step lands far from the map
    blind = map_cache_features({k: v for k, v in figs.items() if k.startswith("map-span")}, TB)
    assert abs(blind["map_cache_span_bytes"]["value"] / covered - 1) > 0.1

    def dram(s):  # the whole map held: each kind at its own latency, trimmed LBAs answered from the map at once
        in_slc = min(s, 42.8e9) / s
        data = min(s, written) / s
        return 70 * in_slc + 58 * (data - in_slc) + 18 * (1 - data)

    d = map_cache_features(_cache_stage(dram), TB, 42.8e9, 0)
    assert d["map_cache_limited"]["value"] is False and d["map_cache_bytes"]["value"] is None
    assert abs(d["slc_data_read_qd1_us"]["value"] - 70) < 1 and abs(d["native_data_read_qd1_us"]["value"] - 58) < 1
    # without the cache stage, where the spans' data lies is not known
    assert blind["slc_data_read_qd1_us"]["value"] is None


def test_reads_past_32_outstanding_show_nvme_queues():
    def figs(iops):
        return {queue_read(n, d): {"iops": iops(n * d), "mbps": 1.0} for n, d in QUEUE_GRID}

    nvme = queue_features(figs(lambda qd: min(qd, 200) * 1000.0))
    assert nvme["queue_scaling"]["value"] > 1.1 and nvme["read_iops_4k_max"]["value"] == 200_000
    assert nvme["read_depth_90_percent"]["value"] == 256
    sata = queue_features(figs(lambda qd: min(qd, 32) * 3000.0))  # NCQ's 32 tags
    assert sata["queue_scaling"]["value"] == 1.0 and sata["read_depth_90_percent"]["value"] == 32
    # a SATA QLC drive still folding when the queue jobs start: their shallow reads run slow and the deep ones
    # merely reach what the clean stage read at 16-32 (samsung870qvo-1000's probe: 56K at 32, 92K past it, the
    # clean stage 96K): no NVMe queue, and the twin keeps its SATA link
    busy = figs(lambda qd: 56_324.0 if qd <= 32 else 92_148.0)
    busy.update({randread_4k(qd): {"iops": v, "mbps": 1.0} for qd, v in ((16, 95_616.0), (32, 95_672.0))})
    q = queue_features(busy)
    assert q["queue_scaling"]["value"] > 1.1 and q["queue_scaling"]["confidence"] == "low"
    F = {"link_bytes_per_s": {"value": 543_108_678.0}, **q}
    _nvme(F, busy)
    assert "host_interface" not in F
    # the same rise above the clean stage's reads is a deeper queue
    busy.update({randread_4k(32): {"iops": 80_000.0, "mbps": 1.0}, randread_4k(16): {"iops": 79_000.0, "mbps": 1.0}})
    F = {"link_bytes_per_s": {"value": 543_108_678.0}, **queue_features(busy)}
    _nvme(F, busy)
    assert F["host_interface"]["value"] == "nvme"


def test_the_pcie_generation_is_the_slowest_that_carries_the_fastest_transfer():
    assert pcie_usable_bytes_per_s(3) == Drive.load("samsung980-1000").config["host"]["link_bytes_per_s"]
    assert pcie_usable_bytes_per_s(4) == Drive.load("samsung980pro-1000").config["host"]["link_bytes_per_s"]
    assert nvme_link(3.5e9)[0] == 3 and nvme_link(3.61e9)[0] == 3  # a little above: the transfer's timing
    assert nvme_link(5.0e9)[0] == 4 and nvme_link(7.1e9)[0] == 4
    assert nvme_link(1e12) is None and nvme_link(None) is None


def n_close(a, b):
    return abs(a / b - 1) < 0.01


def _modern_features(**more):
    f = {"capacity_bytes": feature(TB, "B", "high", ""), "host_interface": feature("nvme", "", "high", "test"),
         "pcie_gen": feature(4, "", "high", "test"), "pcie_lanes": feature(4, "", "medium", "test"),
         "dies": feature(16, "", "medium", ""), "read_latency_4k_us": feature(70.0, "us", "high", ""),
         "read_command_iops": feature(500_000, "IOPS", "high", ""), "write_command_iops": feature(400_000, "IOPS", "high", ""),
         "map_cache_limited": feature(True, "", "high", "test"), "map_cache_bytes": feature(64 << 20, "B", "high", "test"),
         "map_cache_span_bytes": feature(64 * GiB, "B", "high", "test")}
    f.update(more)
    return f


def test_an_nvme_link_or_a_write_cache_selects_the_modern_start():
    assert base_of({}) is SATA_BASE
    assert base_of({"host_interface": feature("sata-6g", "", "high", "")}) is SATA_BASE
    assert base_of({"host_interface": feature("nvme", "", "high", "")}).profile == "generic-nvme"
    cache = base_of({"slc_cache": feature(True, "", "high", "")})
    assert cache.modern and cache.part == "generic-tlc" and "write cache" in cache.why
    # the modern start's values are the library files' (a drive file composes them)
    lib = Drive.load({"drive": {"id": "g", "name": "g", "user_capacity_bytes": TB, "controller": "generic-nvme",
                                "nand_part": "generic-tlc"},
                      "nand": {"channels": 8, "packages_per_channel": 2, "dies_per_package": 1}})
    assert lib.is_nvme and lib.config["slc_cache"]["dynamic_percent_of_capacity"] == 13.0
    assert modern_base().channel_bytes_per_s == lib.config["nand"]["channel_bytes_per_s"]


def test_a_modern_start_splits_the_command_ceiling_by_the_qd1_write():
    # the QD1 write, acknowledged from the buffer, is the command latency (the profile's 10 us), the firmware time
    # and the 4KB on the link: 19.38 us at a 500K-command ceiling gives about 8 us on 4 slots (samsung980-1000's
    # probe; 2e9 / ceiling would fix every such twin at 2 slots)
    f = _modern_features(read_command_iops=feature(499_704, "IOPS", "high", ""),
                         write_command_iops=feature(499_968, "IOPS", "high", ""),
                         write_latency_4k_us=feature(19.38, "us", "high", ""),
                         link_bytes_per_s=feature(3.587e9, "B/s", "high", ""))
    params = {p.key: p.value for p in free_parameters(f)}
    assert params["controller.command_slots"] == 4
    assert params["controller.command_cost_read_ns"] == params["controller.command_cost_write_ns"] == 8_000
    # a slower QD1 write at a lower ceiling: 2 slots (crucial-p1-1000: 19.5 us at 240K, the SM2263's 2 x 8.3 us)
    g = {**f, "read_command_iops": feature(238_184, "IOPS", "high", ""),
         "write_command_iops": feature(240_952, "IOPS", "high", ""), "write_latency_4k_us": feature(19.5, "us", "high", "")}
    assert {p.key: p.value for p in free_parameters(g)}["controller.command_slots"] == 2
    # without the QD1 write, the ceiling alone (2 slots)
    h = {k: v for k, v in f.items() if k != "write_latency_4k_us"}
    assert {p.key: p.value for p in free_parameters(h)}["controller.command_slots"] == 2
    # the QD1 write is read at its median: the 980's first writes wait for the buffer the 8 GiB burst before them
    # left full (mean 19.38 us, median 17.2, the drive's own 17.2), and the median gives the Pablo's 3 slots of 6 us
    from ssdlab.twin.features import extract

    figs = {"randwrite-4k-qd1": {"iops": 51_608.0, "mbps": 211.4, "clat_mean_us": 19.38, "clat_p50_us": 17.2,
                                 "clat_p99_us": 17.2}}
    w1 = extract(figs, TB)["write_latency_4k_us"]
    assert w1["value"] == 17.2
    params = {p.key: p.value for p in free_parameters({**f, "write_latency_4k_us": w1})}
    assert params["controller.command_slots"] == 3 and params["controller.command_cost_write_ns"] == 6_000
    # a probe taken before the median was recorded gives the mean
    del figs["randwrite-4k-qd1"]["clat_p50_us"]
    assert extract(figs, TB)["write_latency_4k_us"]["value"] == 19.38


def test_the_modern_start_fits_within_the_modern_parts_ranges():
    f = _modern_features()
    b = base_of(f)
    params = {p.key: p for p in free_parameters(f)}
    page = params["nand.page_size_log2"]
    assert page.low == page.high == page.value == 14  # the part's 16 KiB
    assert (params["nand.tr_ns"].low, params["nand.tr_ns"].high) == b.tr_range_ns
    slc = params["nand.slc_tprog_ns"]  # the clean stage writes into the cache: the SLC mode's program
    assert (slc.low, slc.high) == b.program_range_ns and "nand.tprog_ns" not in params
    assert params["nand.channel_bytes_per_s"].value == b.channel_bytes_per_s
    # the SLC program starts where the dies' units give the clean sequential write where the dies bind it,
    # whatever the flushes say; no SATA-era stripe chunk or die cap
    f2 = _modern_features(seq_write_bytes_per_s=feature(1_755_000_000, "B/s", "high", ""),
                          tprog_ns=feature(1_590_000, "ns", "high", ""),
                          link_bytes_per_s=feature(3_586_000_000, "B/s", "medium", ""),
                          random_layout_seqread_ratio=feature(0.4, "", "high", ""),
                          read_iops_4k_qd32=feature(150_000, "IOPS", "high", ""))
    p2 = {p.key: p for p in free_parameters(f2, [8, 16, 32])}
    assert abs(p2["nand.slc_tprog_ns"].value - 16 * 32768 / 1.755e9 * 1e9) < 1_000
    assert not {"controller.die_stripe_bytes", "controller.seq_read_max_dies"} & set(p2)
    # a write at the link's rate bounds the SLC program only from above: the flush's one-shot unit (three SLC
    # programs after the unit's transfer at the start's channel rate) gives it (samsung970evoplus-1000: 100 us)
    f3 = {**f2, "seq_write_bytes_per_s": feature(3_586_000_000, "B/s", "high", ""),
          "tprog_ns": feature(369_080, "ns", "high", "")}
    p3 = {p.key: p for p in free_parameters(f3, [8, 16, 32])}
    ch = p3["nand.channel_bytes_per_s"].value
    assert abs(p3["nand.slc_tprog_ns"].value - (369_080 - 3 * 32768 / ch * 1e9 + 4096 / 3.586e9 * 1e9) / 3) < 1_000
    assert p3["nand.slc_tprog_ns"].value < 0.7 * 16 * 32768 / 3.586e9 * 1e9
    assert {c["nand.packages_per_channel"] for c in start_candidates(f2, [8, 16, 32])} == {1, 2, 4}
    assert params["controller.max_write_bytes_per_s"].high >= 7_000_000_000
    assert all(c["nand.page_size_log2"] == 14 for c in start_candidates(f))
    # no GC onset (a modern drive's torture rarely reaches it): the raw NAND's dies of 256/512/1024 Gbit
    assert raw_nand_dies({"features": f, "target": {"kind": "simulated"}}) == [8, 16, 32]
    assert raw_nand_dies({"features": _modern_features(host_interface=feature("sata-6g", "", "high", "")),
                          "target": {"kind": "simulated"}}) == []


def test_the_modern_twin_records_where_each_value_came_from():
    # unwritten reads slower than written ones: the map cache's misses, not a fixed answer time on top of them
    f = _modern_features(unwritten_reads_from_map=feature(False, "", "high", ""),
                         unwritten_read_latency_us=feature(375.0, "us", "high", ""))
    values = {p.key: p.value for p in free_parameters(f)}
    doc, prov = build_doc(f, values, "twin-x")
    d = Drive.load(doc)
    assert doc["drive"]["controller"] == "generic-nvme" and doc["drive"]["nand_part"] == "generic-tlc"
    assert d.is_nvme and d.config["host"]["link_bytes_per_s"] == pcie_usable_bytes_per_s(4)
    assert d.config["controller"]["map_cache_bytes"] == 64 << 20
    assert prov["controller.map_cache_bytes"]["source"] == "measured"
    assert "unmapped_read_ns" not in doc["controller"]
    # the fitted page read moves the part's SLC read alone (the clean stage reads the cache); the native page types
    # keep the part's times until the full stage's reads set them
    scale = values["nand.tr_ns"] / 50_000
    # the drive file's TOML holds the page types as a list (the twin.toml loads)
    import tomllib

    from ssdlab.twin.fit.drive_file import _toml_text

    assert Drive.load(tomllib.loads(_toml_text(doc, prov, ["t"]))).config["nand"]["tr_page_types_ns"] == doc["nand"]["tr_page_types_ns"]
    assert n_close(doc["nand"]["slc_tr_ns"], 30_000 * scale) and doc["nand"]["tr_page_types_ns"][2] == 66_300
    assert prov["nand.slc_tr_ns"]["source"] == "fitted" and prov["nand.tr_page_types_ns"]["source"] == "assumed"
    assert prov["host.pcie_gen"]["source"] == "measured" and prov["host.pcie_lanes"]["source"] == "assumed"
    assert prov["drive.controller"]["source"] == "assumed" and "NVMe" in prov["drive.controller"]["why"]
    assert prov["nand.slc_tprog_ns"]["source"] == "fitted" and prov["nand.tr_ns"]["source"] == "fitted"
    # the raw NAND in the part's blocks (768 pages on 2 planes), at least the capacity
    n = d.config["nand"]
    raw = n["channels"] * n["packages_per_channel"] * n["planes_per_die"] * n["blocks_per_plane"] * n["pages_per_block"]
    assert n["pages_per_block"] == 768 and raw * n["page_size_bytes"] > TB


def test_modern_round_trips_review_the_whole_drive_fill():
    assert review_tests(Drive.load("vertex3-120")) is None
    tests = review_tests(Drive.load("samsung980-1000"))
    assert tests is not None and all(t in tests for t in MODERN_REVIEW_TESTS)
    assert "corners-sata-3g" not in tests and "corners-4k-random-write-qd32" in tests  # no SATA port on NVMe


@pytest.mark.slow
def test_a_simulated_probe_finds_a_dramless_drives_map_cache_and_nvme_link():
    from ssdlab.twin.features import extract
    from ssdlab.twin.probe import run_probe_simulated

    # the Samsung 980 (HMB, 64 MiB of map: 64 GiB of LBAs) on PCIe 3.0 x4
    names = ["fill", "trim-all"] + [j.name for j in probe_jobs(TB, 0.25) if j.stage == QUEUES]
    run = run_probe_simulated("samsung980-1000", None, budget=0.25, stages=(FILL, QUEUES), names=names)
    f = extract(run.figures, TB)
    assert f["map_cache_limited"]["value"] is True
    assert abs(f["map_cache_bytes"]["value"] / (64 << 20) - 1) < 0.1
    # (past 32 outstanding the reads still gain, less than on the whole probe's cache-stage span: 1.10 here, 3.25
    # there, where the data sits in the SLC cache); the link beyond SATA's makes it NVMe, PCIe 3.0
    assert f["queue_scaling"]["value"] > 1.05
    assert f["host_interface"]["value"] == "nvme" and f["pcie_gen"]["value"] == 3


def test_a_modern_scan_weighs_four_channels_and_a_sata_one_does_not():
    from ssdlab.twin.fit.base import CHANNEL_CHOICES, CHANNELS_KEY
    from ssdlab.twin.fit.candidates import refine_candidates

    f = _modern_features(seq_write_bytes_per_s=feature(1_755_000_000, "B/s", "high", ""))
    assert base_of(f).channel_choices == (8, 4) and SATA_BASE.channel_choices == CHANNEL_CHOICES == (8, 10)
    params = free_parameters(f, [8, 16, 32])
    start = {p.key: p.value for p in params}
    cands = refine_candidates(start, params, [8, 16, 32], f)
    four = [c for c in cands if c.get(CHANNELS_KEY) == 4]
    # every count of the raw NAND on 4 channels, each with the start's total rate and at the start's own channel rate
    assert {c["nand.packages_per_channel"] * 4 for c in four} == {8, 16, 32}
    ch = start["nand.channel_bytes_per_s"]
    rates = {c["nand.channel_bytes_per_s"] for c in four}
    assert ch in rates and min(2 * ch, params[[p.key for p in params].index("nand.channel_bytes_per_s")].high) in rates
    assert all(Drive.load(build_doc(f, c, "t")[0]).config["nand"]["channels"] == 4 for c in four[:3])
    # no other channel count on the modern scan; a SATA-era feature set never gets 4 channels
    assert {c.get(CHANNELS_KEY, 8) for c in cands} <= {4, 8}
    sata = {k: v for k, v in f.items() if k != "host_interface"}
    assert base_of(sata) is SATA_BASE
    sparams = free_parameters(sata, [8, 16, 40])
    scands = refine_candidates({p.key: p.value for p in sparams}, sparams, [8, 16, 40], sata)
    assert {c.get(CHANNELS_KEY, 8) for c in scands} == {8, 10}


class _RateRunner:
    """A runner whose 'simulation' reads the full drive at rates that follow the native page read by given responses
    (1: die-bound, the rate inverse to the read; 0: bound elsewhere), so the native read step's rounds can be checked
    without the engine."""

    def __init__(self, mean_ns, rates=(400.0, 170.0), responses=(1.0, 1.0)):
        self.mean_ns, self.calls, self.rates, self.responses = mean_ns, 0, rates, responses

    def map(self, fn, items, what=""):
        self.calls += 1
        out = []
        for i, (doc, *_rest) in enumerate(items):
            t = doc["nand"]["tr_page_types_ns"]
            k = self.mean_ns / (sum(t) / len(t))
            out.append((i, {n: {"mbps": r * k ** e} for n, r, e in zip(
                ("full-seqread-128k-qd32", "full-randread-4k-qd32"), self.rates, self.responses)}))
        return out


def test_the_native_page_reads_come_from_the_full_stage_reads():
    from ssdlab.twin.fit.full import choose_native_reads

    f = _modern_features(slc_cache=feature(True, "", "high", ""),
                         post_cache_write_bytes_per_s=feature(95e6, "B/s", "high", ""))
    b = base_of(f)
    assert b.part == "generic-qlc"
    values = {p.key: p.value for p in free_parameters(f, [8, 16, 32])}
    doc, prov = build_doc(f, values, "twin-x")
    part_types = [47_900, 76_200, 134_600, 228_100]
    assert doc["nand"]["tr_page_types_ns"] == part_types
    mean = sum(part_types) / 4
    # the drive reads its native pages 1.25x as fast as the part's times give
    measured = {"full-seqread-128k-qd32": {"mbps": 500.0}, "full-randread-4k-qd32": {"mbps": 212.5}}
    run = _RateRunner(mean)
    figs = {n: f2 for _, d in run.map(None, [(doc,)]) for n, f2 in d.items()}
    run.calls = 0
    kept, new_figs, rec = choose_native_reads(doc, prov, f, measured, figs, run, 1, 0.25, None)  # type: ignore[arg-type]
    assert rec is not None and [r.get("kept") for r in rec["rounds"]][-1]
    assert abs(rec["rounds"][-1]["factor"] - 0.8) < 0.002 and run.calls == 1  # one step lands a die-bound read
    assert kept["nand"]["tr_page_types_ns"][0] == round(47_900 * 0.8, -2)
    assert kept["nand"]["tr_ns"] == round(sum(kept["nand"]["tr_page_types_ns"]) / 4, -2)
    assert prov["nand.tr_page_types_ns"]["source"] == "fitted" and "x 0.800" in prov["nand.tr_page_types_ns"]["why"]
    # the SLC read stays the clean stage's
    assert kept["nand"]["slc_tr_ns"] == doc["nand"]["slc_tr_ns"]
    # no full stage: the part's, assumed
    kept2, figs2, rec2 = choose_native_reads(doc, prov, f, {}, {}, run, 1, 0.25, None)  # type: ignore[arg-type]
    assert rec2 is None and not figs2 and kept2["nand"]["tr_page_types_ns"] == part_types
    assert prov["nand.tr_page_types_ns"]["source"] == "assumed"
    # a SATA-era twin is left as it was
    sata = {k: v for k, v in f.items() if k not in ("host_interface", "slc_cache")}
    d3, p3 = build_doc(sata, {p.key: p.value for p in free_parameters(sata)}, "t")
    assert choose_native_reads(d3, p3, sata, measured, figs, run, 1, 0.25, None)[0] is d3  # type: ignore[arg-type]


def test_the_native_read_step_starts_from_the_factor_the_clean_stage_set():
    from ssdlab.twin.fit.full import choose_native_reads

    f = _modern_features(slc_cache=feature(True, "", "high", ""),
                         post_cache_write_bytes_per_s=feature(95e6, "B/s", "high", ""))
    values = {p.key: p.value for p in free_parameters(f, [8, 16, 32])}
    doc, prov = build_doc(f, values, "twin-x")
    part_types = list(doc["nand"]["tr_page_types_ns"])
    mean = sum(part_types) / 4
    # a measured SLC read left the native types at 0.9 x the part's: the full stage's reads are at that factor
    doc["nand"]["tr_page_types_ns"] = [int(round(t * 0.9, -2)) for t in part_types]
    measured = {"full-seqread-128k-qd32": {"mbps": 500.0}, "full-randread-4k-qd32": {"mbps": 212.5}}
    run = _RateRunner(mean)
    figs = {n: f2 for _, d in run.map(None, [(doc,)]) for n, f2 in d.items()}
    run.calls = 0
    kept, _, rec = choose_native_reads(doc, prov, f, measured, figs, run, 1, 0.25, None)  # type: ignore[arg-type]
    assert rec is not None and abs(rec["rounds"][0]["factor"] - 0.9) < 0.002
    # one die-bound step from there lands 0.8, as from the part's own times
    assert abs(rec["rounds"][-1]["factor"] - 0.8) < 0.003 and run.calls == 1
    assert kept["nand"]["tr_page_types_ns"][0] == round(part_types[0] * rec["rounds"][-1]["factor"], -2)
    # already right: kept as they are, not put back to the part's
    right = {n: {"mbps": v["mbps"]} for n, v in figs.items()}
    same, new_figs, rec2 = choose_native_reads(doc, prov, f, right, figs, run, 1, 0.25, None)  # type: ignore[arg-type]
    assert rec2 is not None and len(rec2["rounds"]) == 1 and not new_figs
    assert abs(sum(same["nand"]["tr_page_types_ns"]) / 4 / mean - 0.9) < 0.002
    # no full stage: the clean stage's factor stays
    kept3, _, rec3 = choose_native_reads(doc, prov, f, {}, {}, run, 1, 0.25, None)  # type: ignore[arg-type]
    assert rec3 is None and abs(sum(kept3["nand"]["tr_page_types_ns"]) / 4 / mean - 0.9) < 0.002


def _native_read_case(seq_response, rand_response, measured):
    from ssdlab.twin.fit.full import choose_native_reads

    f = _modern_features(slc_cache=feature(True, "", "high", ""),
                         post_cache_write_bytes_per_s=feature(95e6, "B/s", "high", ""))
    values = {p.key: p.value for p in free_parameters(f, [8, 16, 32])}
    doc, prov = build_doc(f, values, "twin-x")
    part_types = list(doc["nand"]["tr_page_types_ns"])
    run = _RateRunner(sum(part_types) / len(part_types), (3580.0, 55.0), (seq_response, rand_response))
    figs = {n: f2 for _, d in run.map(None, [(doc,)]) for n, f2 in d.items()}
    run.calls = 0
    kept, new_figs, rec = choose_native_reads(doc, prov, f, measured, figs, run, 1, 0.25, None)  # type: ignore[arg-type]
    return part_types, kept, new_figs, rec, prov, run


def test_reads_that_do_not_follow_the_page_read_leave_the_part_s_times_assumed():
    # a map-bound drive: its 4KB reads at depth answer the page read at a fifth, its sequential ones not at all
    part_types, kept, new_figs, rec, prov, run = _native_read_case(
        0.0, 0.2, {"full-seqread-128k-qd32": {"mbps": 3564.0}, "full-randread-4k-qd32": {"mbps": 51.1}})
    assert run.calls == 1 and rec is not None and rec["moving"] == []
    assert 0.15 < rec["rounds"][1]["response"]["full-randread-4k-qd32"] < 0.25
    assert rec["rounds"][0].get("kept") and not rec["rounds"][1].get("kept")
    assert kept["nand"]["tr_page_types_ns"] == part_types and not new_figs
    assert prov["nand.tr_page_types_ns"]["source"] == "assumed"
    assert "do not measure the page read" in prov["nand.tr_page_types_ns"]["why"]


def test_the_native_read_factor_is_set_by_the_reads_that_follow_it():
    # link-bound sequential reads (already right) beside die-bound random ones 20% slow: the first step, on both,
    # goes half way; the second, on the random reads alone, lands the factor
    part_types, kept, new_figs, rec, prov, run = _native_read_case(
        0.0, 1.0, {"full-seqread-128k-qd32": {"mbps": 3580.0}, "full-randread-4k-qd32": {"mbps": 55.0 / 1.2}})
    assert run.calls == 2 and rec is not None and rec["moving"] == ["full-randread-4k-qd32"]
    factors = [r["factor"] for r in rec["rounds"]]
    assert abs(factors[1] - 1.2 ** 0.5) < 0.002 and abs(factors[2] - 1.2) < 0.003
    assert rec["rounds"][2].get("kept") and prov["nand.tr_page_types_ns"]["source"] == "fitted"
    assert "set by full-randread-4k-qd32" in prov["nand.tr_page_types_ns"]["why"]
    assert kept["nand"]["tr_page_types_ns"][0] == round(part_types[0] * factors[2], -2)


def test_the_modern_read_ahead_window_is_a_fixed_choice_of_the_scan():
    from ssdlab.fit.params import Target
    from ssdlab.twin.fit.base import READAHEAD_CHOICES, READAHEAD_KEY
    from ssdlab.twin.fit.candidates import _target_for

    assert 1 << 20 in READAHEAD_CHOICES and all(w & (w - 1) == 0 for w in READAHEAD_CHOICES)
    f = _modern_features(readahead=feature(True, "", "high", ""), readahead_min_qd=feature(1, "", "medium", ""))
    params = free_parameters(f, [8, 16, 32])
    values = {p.key: p.value for p in params}
    t = _target_for(Target("twin", "x", params, [], {}, {}), {**values, READAHEAD_KEY: 512 << 10})
    p = next(q for q in t.params if q.key == READAHEAD_KEY)
    assert p.low == p.high == p.value == 512 << 10 and "powers of two" in p.why
    doc, prov = build_doc(f, {**values, READAHEAD_KEY: 512 << 10}, "t")
    assert doc["controller"]["readahead_bytes"] == 512 << 10 and prov[READAHEAD_KEY]["source"] == "fitted"
    # without the scan's choice the window stays the assumed one
    doc2, prov2 = build_doc(f, values, "t")
    assert doc2["controller"]["readahead_bytes"] == 1 << 20 and prov2[READAHEAD_KEY]["source"] == "assumed"


def test_a_modern_twin_takes_the_static_cache_share_its_fill_stage_shows(monkeypatch: pytest.MonkeyPatch) -> None:
    """The static share of the cache, the sum kept, is taken from the fill stage where one halves its error
    (samsung980pro-1000's rt54 twin: 0.340 at the generic 1.0%, 0.089 at 0.6%, the Elpis's), and stays assumed where
    the shares score alike (crucial-p1-1000's twin folds nothing while writing: 0.0151 at every share)."""
    import ssdlab.twin.fit.evaluate as ev
    from ssdlab.twin.fit.slc import STATIC_SHARES_PERCENT, choose_static_share

    doc = {"drive": {"controller": modern_base().profile},
           "slc_cache": {"static_percent_of_capacity": 1.0, "dynamic_percent_of_capacity": 10.17,
                         "fold_units_per_host_unit": 0.244, "refill_while_writing": True}}
    seen: Dict[str, Any] = {}

    def run(err_of: Any) -> Any:
        def simulate(docs: Any, runner: Any, seed: int, budget: float, measured: Any) -> Any:
            seen["shares"] = [d["slc_cache"]["static_percent_of_capacity"] for d in docs]
            seen["sums"] = {round(d["slc_cache"]["static_percent_of_capacity"]
                                  + d["slc_cache"]["dynamic_percent_of_capacity"], 3) for d in docs}
            return [{"share": d["slc_cache"]["static_percent_of_capacity"]} for d in docs]

        monkeypatch.setattr(ev, "_simulate_docs", simulate)
        monkeypatch.setattr(ev, "_rate_jobs", lambda *a: seen.update(stages=tuple(a[3])) or ["torture"])
        monkeypatch.setattr(ev, "_fill_error", lambda measured, f, jobs: err_of(f["share"]))
        prov = {"slc_cache.static_percent_of_capacity": {"value": 1.0, "source": "assumed", "why": "generic"},
                "slc_cache.dynamic_percent_of_capacity": {"value": 10.17, "source": "fitted",
                                                          "why": "the fill's 111.7 GB, less the static part (2 rounds)"}}
        out = choose_static_share(doc, prov, {}, {}, None, 1, 0.25)
        return out, prov

    elpis = {1.0: 0.340, 0.6: 0.089, 0.3: 0.172, 1.5: 0.164, 2.0: 0.3}
    (d, figs, said), prov = run(lambda s: elpis[s])
    assert seen["shares"][0] == 1.0 and sorted(seen["shares"][1:]) == [s for s in STATIC_SHARES_PERCENT if s != 1.0]
    assert seen["sums"] == {11.17}
    # judged on the full stage too: on the full drive only the static part is left (980 PRO rt60: its sequential
    # write 1,365 MB/s, the twin's 1,360 with 0.6% and 2,578 with 1.5%, which the fill stage alone preferred)
    assert seen["stages"] == (FILL, FULL)
    assert d["slc_cache"]["static_percent_of_capacity"] == 0.6 and d["slc_cache"]["dynamic_percent_of_capacity"] == 10.57
    assert figs == {"share": 0.6} and said is not None and said.startswith("static share 0.6%")
    assert prov["slc_cache.static_percent_of_capacity"]["source"] == "fitted"
    assert prov["slc_cache.dynamic_percent_of_capacity"]["value"] == 10.57
    # alike at every share: the assumed share stays, the errors said in its provenance
    (d, figs, said), prov = run(lambda s: 0.0151)
    assert d is doc and figs == {} and prov["slc_cache.static_percent_of_capacity"]["source"] == "assumed"
    assert "0.6%: 0.0151" in prov["slc_cache.static_percent_of_capacity"]["why"]
    # better, but not by half: stays
    (d, _, _), _ = run(lambda s: 0.2 if s == 0.6 else 0.34)
    assert d is doc
    # a SATA-era twin (no modern profile) has no split to weigh
    sata = {**doc, "drive": {"controller": "generic-2011"}}
    assert choose_static_share(sata, {}, {}, {}, None, 1, 0.25) == (sata, {}, None)


class _CleanReadRunner:
    """A runner whose 'simulation' of the clean stage reads at rates set by the SLC read and the read-ahead window:
    QD1 reads bound by the read's latency, QD32 reads by the dies' throughput, an 8KB QD8 stream by the window."""

    def __init__(self):
        self.stages = []

    def map(self, fn, items, what=""):
        out = []
        for i, (doc, _seed, _budget, stages) in enumerate(items):
            self.stages.append(stages)
            tr_us = doc["nand"]["slc_tr_ns"] / 1e3
            w = doc["controller"]["readahead_bytes"]
            out.append((i, {"randread-4k-qd1": {"mbps": 80.0 * 46 / (16 + tr_us)},
                            "randread-4k-qd32": {"mbps": 1400.0 * 30 / tr_us},
                            "seqread-8k-qd8": {"mbps": {1 << 20: 2780.0, 2 << 20: 3500.0}.get(w, 1500.0)}}))
        return out


def test_the_clean_stage_reads_are_weighed_again_where_the_full_drive_doubled_the_dies():
    from ssdlab.twin.fit.cache_reads import choose_cache_reads

    f = _modern_features(slc_cache=feature(True, "", "high", ""))
    doc, prov = build_doc(f, {p.key: p.value for p in free_parameters(f, [8, 16, 32])}, "twin-x")
    # the sampler's read at 8 dies, 24 us, and its window, 2 MiB; the drive reads at 30 us with a 1 MiB window
    doc["nand"]["slc_tr_ns"] = 24_000
    doc.setdefault("controller", {})["readahead_bytes"] = 2 << 20
    measured = {"randread-4k-qd1": {"mbps": 80.0}, "randread-4k-qd32": {"mbps": 1400.0},
                "seqread-8k-qd8": {"mbps": 2780.0}}
    doubled = {"rows": [{"dies": 8, "factor": 1.0, "program_buffer_bytes": None},
                        {"dies": 16, "factor": 2.0, "program_buffer_bytes": 884736, "kept": True}]}
    run = _CleanReadRunner()
    kept, figs, rec = choose_cache_reads(doc, prov, f, measured, doubled, run, 1, 0.25, None)  # type: ignore[arg-type]
    assert rec is not None and rec["die_factor"] == 2.0
    assert kept["controller"]["readahead_bytes"] == 1 << 20
    assert abs(kept["nand"]["slc_tr_ns"] / 30_000 - 1) < 0.03
    assert prov["nand.slc_tr_ns"]["source"] == "fitted" and prov["controller.readahead_bytes"]["source"] == "fitted"
    # the choices on the clean stage alone; the twin kept then on every stage the later steps read
    assert set(run.stages[:-1]) == {("clean",)} and run.stages[-1] == ("clean", "cache", "full")
    assert set(figs) == set(measured) and doc["nand"]["slc_tr_ns"] == 24_000  # the input is not changed
    # an SLC read the map spans measured is the die's own: it stays, and only the window is weighed again
    prov["nand.slc_tr_ns"] = {"value": 24_000, "source": "measured", "why": "the map spans"}
    kept, _, rec = choose_cache_reads(doc, prov, f, measured, doubled, run, 1, 0.25, None)  # type: ignore[arg-type]
    assert kept["nand"]["slc_tr_ns"] == 24_000 and {r["slc_tr_ns"] for r in rec["rows"]} == {24_000}
    assert prov["nand.slc_tr_ns"]["source"] == "measured"
    # the dies kept, or a SATA-era twin: nothing to weigh again
    same = {"rows": [{"dies": 8, "factor": 1.0, "program_buffer_bytes": None, "kept": True}]}
    assert choose_cache_reads(doc, {}, f, measured, same, run, 1, 0.25, None) == (doc, {}, None)  # type: ignore[arg-type]
    sata = {k: v for k, v in f.items() if k not in ("host_interface", "slc_cache")}
    assert choose_cache_reads(doc, {}, sata, measured, doubled, run, 1, 0.25, None)[2] is None  # type: ignore[arg-type]


def test_a_sata_drive_with_a_cache_has_no_pcie_generation_to_miss():
    from ssdlab.twin.roundtrip import _internal

    # the MX500's twin rightly has no PCIe link: exact, not "not recovered"
    assert _internal("pcie_gen", None, None)["verdict"] == "exact"
    assert _internal("pcie_gen", None, 3)["verdict"] == "missed"
    assert _internal("pcie_gen", 4, None)["verdict"] == "not recovered"
    assert _internal("pcie_gen", 4, 4)["verdict"] == "exact"


def test_a_sata_drive_with_a_cache_gets_a_sata_link_on_the_modern_profile():
    from ssdlab.drive import Drive
    from ssdlab.twin.fit.drive_file import _host

    sata = {"host_interface": feature("sata-6g", "", "high", "fills sata-6g"),
            "slc_cache": feature(True, "", "high", ""), "link_bytes_per_s": feature(543_108_678, "B/s", "medium", "")}
    doc: dict = {}
    _host(doc, {}, sata)
    assert doc["host"]["interface"] == "sata-6g" and doc["host"]["ncq_depth"] == 32
    # the modern profile is an NVMe one: the twin's host overrides it, and the engine takes the pair
    twin = {"drive": {"id": "t", "name": "t", "user_capacity_bytes": TB, "controller": "generic-nvme",
                      "nand_part": "generic-qlc"},
            "nand": {"channels": 4, "packages_per_channel": 2, "dies_per_package": 1}, **doc}
    assert Drive.load(twin).name == "t"
    # without a cache the SATA-era profile is SATA already: only the link's rate and FIS time are set
    doc = {}
    _host(doc, {}, {k: v for k, v in sata.items() if k != "slc_cache"})
    assert "interface" not in doc["host"] and doc["host"]["link_bytes_per_s"] == 550_000_000


def test_a_cache_written_at_the_link_bounds_the_dies_only_from_below():
    from ssdlab.twin.fit.base import link_bound_cache_write
    from ssdlab.twin.fit.full import _with_program_buffer
    from ssdlab.twin.fit.slc import native_program_ns

    link = feature(3_586_000_000, "B/s", "medium", "")
    at_link = {"link_bytes_per_s": link, "slc_write_bytes_per_s": feature(3_585_900_000, "B/s", "high", "")}
    below = {"link_bytes_per_s": link, "slc_write_bytes_per_s": feature(2_318_000_000, "B/s", "high", "")}
    assert link_bound_cache_write(at_link) == 3_585_900_000 and link_bound_cache_write(below) is None
    # the full drive's write (native, nothing to fold) gives the native program: samsung970evoplus-1000's 32 dies
    # of 96 KiB units at 2,097 MB/s program in 1.50 ms, its part's
    nand = {"channels": 4, "packages_per_channel": 8, "dies_per_package": 1, "planes_per_die": 2,
            "page_size_bytes": 16384, "bits_per_cell": 3}
    assert abs(native_program_ns(nand, 2.097e9) - 1_500_000) < 1_000
    # the program-buffer candidate holds the cache at the link's rate, not at the dies' (32 x 32 KiB / 91 us =
    # 11.5 GB/s), so its SLC program stays near the flush's 91 us instead of the range's floor
    doc = {"drive": {"id": "t", "name": "t", "user_capacity_bytes": TB, "controller": "generic-nvme",
                     "nand_part": "generic-tlc"},
           "nand": {**{k: v for k, v in nand.items() if k != "bits_per_cell"}, "tprog_ns": 530_000,
                    "slc_tprog_ns": 91_000, "channel_bytes_per_s": 1_311_000_000}}
    part = {"planes_per_die": 2, "page_size_bytes": 16384, "bits_per_cell": 3}
    held = _with_program_buffer(doc, 1.0, part, 2.097e9, 3_585_900_000)
    free = _with_program_buffer(doc, 1.0, part, 2.097e9)
    assert held is not None and free is not None
    units = held["controller"]["program_buffer_bytes"] // (3 * 32768)
    slc = units * 32768 / 3.5859e9 - 32768 / 1.311e9
    assert abs(held["nand"]["slc_tprog_ns"] - slc * 1e9) <= 1_000 and held["nand"]["slc_tprog_ns"] > 60_000
    assert free["nand"]["slc_tprog_ns"] == 30_000
