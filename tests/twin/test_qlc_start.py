"""The generic QLC start: a modern probe whose post-cache write is slower, per TB of capacity, than any TLC drive
writes selects the generic QLC part; a TLC drive's, a probe without a cache and a SATA-era probe do not."""

from ssdlab import Drive
from ssdlab.fit.params import library_values
from ssdlab.twin.features.common import feature
from ssdlab.twin.fit.base import QLC_POST_CACHE_PER_TB_BYTES_PER_S, SATA_BASE, base_of, qlc_evidence
from ssdlab.twin.fit.drive_file import build_doc
from ssdlab.twin.fit.slc import NATIVE_TPROG_RANGE_NS, native_tprog_range_ns
from ssdlab.twin.fit.start import clean_reads_native, free_parameters

TB = 1_000_000_000_000


def _cache_probe(post_bytes_per_s, cap=TB, **more):
    f = {"capacity_bytes": feature(cap, "B", "high", ""), "host_interface": feature("nvme", "", "high", "test"),
         "pcie_gen": feature(3, "", "high", "test"), "pcie_lanes": feature(4, "", "medium", "test"),
         "slc_cache": feature(True, "", "high", "test"), "slc_cache_bytes": feature(140e9, "B", "high", ""),
         "slc_write_bytes_per_s": feature(1.75e9, "B/s", "high", ""),
         "post_cache_write_bytes_per_s": feature(post_bytes_per_s, "B/s", "high", ""),
         "seq_write_bytes_per_s": feature(1.75e9, "B/s", "high", ""), "dies": feature(16, "", "medium", "")}
    f.update(more)
    return f


def test_a_slow_post_cache_write_per_tb_selects_the_qlc_part():
    # the Crucial P1's probe: 96 MB/s past its cache on 1 TB
    b = base_of(_cache_probe(96e6))
    assert b.modern and b.profile == "generic-nvme" and b.part == "generic-qlc"
    assert "QLC" in b.why and "96 MB/s" in b.why
    # the 980's 516 and the 980 PRO's 1,000 MB/s: TLC
    assert base_of(_cache_probe(516e6)).part == "generic-tlc"
    assert base_of(_cache_probe(998e6)).part == "generic-tlc"
    # per TB: 150 MB/s on a 250 GB drive is 600 MB/s per TB (TLC); 169 MB/s on 4 TB (the 870 QVO 4TB) is QLC
    assert base_of(_cache_probe(150e6, cap=TB // 4)).part == "generic-tlc"
    assert base_of(_cache_probe(169e6, cap=4 * TB)).part == "generic-qlc"
    edge = QLC_POST_CACHE_PER_TB_BYTES_PER_S
    assert qlc_evidence(_cache_probe(edge)) is None and qlc_evidence(_cache_probe(edge - 1e6)) is not None
    # no cache, or no post-cache rate: nothing tells, the TLC part; no NVMe link and no cache: the SATA era's
    no_step = _cache_probe(None, slc_cache=feature(None, "", "low", ""))
    assert qlc_evidence(no_step) is None and base_of(no_step).part == "generic-tlc"
    assert base_of({"host_interface": feature("sata-6g", "", "high", ""),
                    "post_cache_write_bytes_per_s": feature(50e6, "B/s", "high", "")}) is SATA_BASE


def test_the_qlc_part_is_the_middle_of_the_librarys_qlc_parts():
    q, parts = library_values("part", "generic-qlc")["nand"], [
        library_values("part", p)["nand"] for p in ("imft-64l-qlc", "samsung-9xl-qlc")]
    assert q["bits_per_cell"] == 4 and q["page_size_bytes"] == 16384 and q["pages_per_block"] == 768
    for k in ("tprog_ns", "slc_tprog_ns", "slc_tr_ns"):
        lo, hi = sorted(p[k] for p in parts)
        assert lo <= q[k] <= hi, k
    # 1 Tbit a die, as every QLC die of MODERN.md
    bits = q["planes_per_die"] * q["blocks_per_plane"] * q["pages_per_block"] * q["page_size_bytes"] * 8
    assert 1.0 <= bits / 2**40 <= 1.01
    # a drive on it composes (the engine checks every value)
    d = Drive.load({"drive": {"id": "q", "name": "q", "user_capacity_bytes": TB, "controller": "generic-nvme",
                              "nand_part": "generic-qlc"},
                    "nand": {"channels": 4, "packages_per_channel": 1, "dies_per_package": 2}})
    assert d.config["nand"]["bits_per_cell"] == 4


def test_a_qlc_twin_starts_on_the_qlc_part_and_its_native_program_range():
    f = _cache_probe(96e6)
    b = base_of(f)
    params = {p.key: p for p in free_parameters(f, [8, 16, 32])}
    # the SLC program starts at the dies' units (a page on each of the part's 4 planes) over the clean write
    unit = b.planes * 16384
    assert b.planes == 4 and abs(params["nand.slc_tprog_ns"].value - 16 * unit / 1.75e9 * 1e9) < 1_000
    doc, prov = build_doc(f, {p.key: p.value for p in params.values()}, "twin-q")
    assert doc["drive"]["nand_part"] == "generic-qlc" and "QLC" in prov["drive.nand_part"]["why"]
    assert Drive.load(doc).config["nand"]["bits_per_cell"] == 4
    # the native program's range follows the one-shot unit: 96 KiB on the TLC part, 256 KiB on the QLC one
    assert native_tprog_range_ns(library_values("part", "generic-tlc")["nand"]) == NATIVE_TPROG_RANGE_NS
    lo, hi = native_tprog_range_ns(library_values("part", "generic-qlc")["nand"])
    assert lo == NATIVE_TPROG_RANGE_NS[0] * 256 // 96 and 21_000_000 < hi < 22_000_000


def test_a_modern_twins_page_read_starts_where_its_slc_read_is_the_measured_die_read():
    # the clean stage's QD1 reads read the cache's SLC pages: the fitted mean page read scales the part's SLC read
    from ssdlab.twin.fit.start import _modern_tr_start

    qf, tf = _cache_probe(96e6), _cache_probe(516e6)
    qlc, tlc = base_of(qf), base_of(tf)
    assert abs(_modern_tr_start(40_000, qlc, qf) - 40_000 * 121_700 / 35_000) < 1
    assert abs(_modern_tr_start(30_000, tlc, tf) - 50_000) < 1
    assert _modern_tr_start(None, qlc, qf) == 121_700
    # with the SLC data's read measured apart by the map spans (40 us, a trimmed LBA 5): where the clean stage's
    # reads are well slower than the SLC data's (they read native pages) the fitted value is the native pages'
    # mean and starts at the die read itself; where they are not (they read SLC pages) it stays the SLC read's scale
    spans = {"slc_data_read_qd1_us": feature(40.0, "us", "medium", ""), "trimmed_read_qd1_us": feature(5.0, "us", "high", "")}
    slow = {**tf, **spans, "read_latency_4k_us": feature(70.0, "us", "high", "")}
    fast = {**tf, **spans, "read_latency_4k_us": feature(43.0, "us", "high", "")}
    assert _modern_tr_start(60_000, tlc, slow) == 60_000
    assert abs(_modern_tr_start(33_000, tlc, fast) - 55_000) < 1
    # without the clean stage's read latency nothing tells: the SLC read's scale, as before
    assert abs(_modern_tr_start(30_000, tlc, {**tf, **spans}) - 50_000) < 1
    # the QLC part's range reaches twice its own mean (an SLC read of 45 us is a mean of 157 us)
    assert qlc.tr_range_ns == (25_000, 243_400) and tlc.tr_range_ns == (25_000, 150_000)


def test_a_modern_twins_slc_program_starts_at_its_flush_where_the_clean_write_was_native():
    # the WD SN570's probe: its clean sequential write (2,103 MB/s) ran past its 12 GB cache, in native blocks,
    # not at the link's 3,586; its flushes (463 us over the write) ran in the cache, still empty
    link = {"link_bytes_per_s": feature(3.586e9, "B/s", "medium", ""),
            "seq_write_bytes_per_s": feature(2.103e9, "B/s", "high", "")}
    native = {p.key: p for p in free_parameters(_cache_probe(2.08e9, **link), [8, 16, 32])}
    f = _cache_probe(2.08e9, **link, tprog_ns=feature(462_702, "ns", "high", ""))
    b = base_of(f)
    params = {p.key: p for p in free_parameters(f, [8, 16, 32])}
    ch = params["nand.channel_bytes_per_s"].value
    unit = b.planes * 16384
    by_flush = (462_702 - 3 * unit / ch * 1e9 + 4096 / 3.586e9 * 1e9) / 3
    assert abs(params["nand.slc_tprog_ns"].value - by_flush) < 1_000
    # the rate alone starts it at 16 dies x unit / 2,103 MB/s, twice the flush's
    assert native["nand.slc_tprog_ns"].value > 2 * params["nand.slc_tprog_ns"].value
    # a flush slower than the rate's bound (a cache already full at the flushes) leaves the rate's start
    slow = _cache_probe(2.08e9, **link, tprog_ns=feature(1_651_702, "ns", "high", ""))
    assert {p.key: p for p in free_parameters(slow, [8, 16, 32])}["nand.slc_tprog_ns"].value == \
        native["nand.slc_tprog_ns"].value


def test_a_measured_slc_read_is_kept_and_the_fitted_read_scales_the_native_pages():
    # the WD SN570's probe at budget 0.25: its map spans read SLC data in 55.6 us and a trimmed LBA in 17.9
    spans = {"slc_data_read_qd1_us": feature(55.6, "us", "medium", ""),
             "trimmed_read_qd1_us": feature(17.9, "us", "high", "")}
    # its clean stage's 4KB reads at QD1 took 77 us: native pages, its static cache full by then
    f = _cache_probe(516e6, **spans, read_latency_4k_us=feature(77.0, "us", "high", ""))
    assert clean_reads_native(f) is True
    values = {p.key: p.value for p in free_parameters(f, [8, 16, 32])}
    values["nand.tr_ns"] = 100_000
    doc, prov = build_doc(f, values, "twin-t")
    part = library_values("part", "generic-tlc")["nand"]
    ch = doc["nand"].get("channel_bytes_per_s") or base_of(f).channel_bytes_per_s
    assert prov["nand.slc_tr_ns"]["source"] == "measured"
    assert abs(doc["nand"]["slc_tr_ns"] - ((55.6 - 17.9) * 1e3 - 4096 / ch * 1e9)) <= 50
    scale = 100_000 / part["tr_ns"]
    assert doc["nand"]["tr_page_types_ns"] == [int(round(t * scale, -2)) for t in part["tr_page_types_ns"]]
    assert prov["nand.tr_page_types_ns"]["source"] == "fitted"
    # clean reads no slower than the SLC data's (a cache with room, as the 980's): they read SLC pages and set the
    # SLC read under the fit's whole read path (the spans' reads, after the cache stage's writes, may wait behind
    # the folding of them: crucial-p1-1000 77.0 us over the spans, 65.6 in the clean stage); the native pages stay
    # the part's
    fast = _cache_probe(516e6, **spans, read_latency_4k_us=feature(56.0, "us", "high", ""))
    assert clean_reads_native(fast) is False
    doc, prov = build_doc(fast, values, "twin-t")
    assert prov["nand.slc_tr_ns"]["source"] == "fitted"
    assert doc["nand"]["slc_tr_ns"] == int(round(part["slc_tr_ns"] * scale, -2))
    assert doc["nand"]["tr_page_types_ns"] == [int(t) for t in part["tr_page_types_ns"]]
    assert prov["nand.tr_page_types_ns"]["source"] == "assumed"
    # the spans read its native data too (75.3 us): the die's read under it is the page types' mean, measured,
    # whatever the clean stage's reads fitted
    both = _cache_probe(516e6, **spans, native_data_read_qd1_us=feature(75.3, "us", "medium", ""),
                        read_latency_4k_us=feature(77.0, "us", "high", ""))
    doc, prov = build_doc(both, values, "twin-t")
    mean = (75.3 - 17.9) * 1e3 - 4096 / ch * 1e9
    got = doc["nand"]["tr_page_types_ns"]
    assert prov["nand.tr_page_types_ns"]["source"] == "measured" and abs(sum(got) / len(got) / mean - 1) < 0.005
    assert abs(got[2] / got[0] - part["tr_page_types_ns"][2] / part["tr_page_types_ns"][0]) < 0.01
    assert prov["nand.slc_tr_ns"]["source"] == "measured"
    # a native read past the range's end is held at it
    slow = _cache_probe(516e6, **spans, native_data_read_qd1_us=feature(900.0, "us", "medium", ""))
    doc, _ = build_doc(slow, values, "twin-t")
    assert abs(sum(doc["nand"]["tr_page_types_ns"]) / 3 - base_of(f).tr_range_ns[1]) < 300
    # without the trimmed reads the clean stage's reads set the SLC read, and the native pages are the part's
    doc, prov = build_doc(_cache_probe(516e6, slc_data_read_qd1_us=spans["slc_data_read_qd1_us"]), values, "twin-t")
    assert prov["nand.slc_tr_ns"]["source"] == "fitted"
    assert doc["nand"]["slc_tr_ns"] == int(round(part["slc_tr_ns"] * scale, -2))
    assert doc["nand"]["tr_page_types_ns"] == [int(t) for t in part["tr_page_types_ns"]]
