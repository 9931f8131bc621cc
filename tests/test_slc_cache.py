"""Drives of today: TLC and QLC parts behind an SLC cache, the presets built
from them, and whole-drive-fill figures as calibration rows."""
from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any, Dict

from conftest import make_drive
from ssdlab import Drive
from ssdlab.suite.calibrate import TABLE_FIELDS, calibrate, load_table


def slc_drive(blocks: int = 96, pages: int = 48, page_size_bytes: int = 4096) -> Dict[str, Any]:
    """4 dies x ``blocks`` blocks x ``pages`` pages (TLC wordlines of three,
    programmed one-shot in 1.5 ms), SLC mode 100 us a page; an SLC cache of
    2% static + 20% dynamic."""
    d = make_drive(dies=4, blocks=blocks, pages=pages, overprovision=1.12, drive_id="test-slc")
    d["drive"]["user_capacity_bytes"] = d["drive"]["user_capacity_bytes"] * page_size_bytes // 4096 // 512 * 512
    d["host"]["link_bytes_per_s"] = 4_000_000_000
    d["nand"].update({"bits_per_cell": 3, "one_shot_program": True, "tprog_ns": 1_500_000, "page_size_bytes": page_size_bytes,
                      "slc_tprog_ns": 100_000, "slc_tr_ns": 30_000, "channel_bytes_per_s": 1_000_000_000})
    d["slc_cache"] = {"static_percent_of_capacity": 2.0, "dynamic_percent_of_capacity": 20.0}
    return d


def test_the_modern_presets_are_tlc_and_qlc_parts_behind_an_slc_cache_from_their_profiles() -> None:
    for pid, bits, dies, profile, host in (
            ("samsung980pro-1000", 3, 16, "samsung-elpis", "nvme"), ("samsung980-1000", 3, 16, "samsung-pablo", "nvme"),
            ("crucial-p1-1000", 4, 8, "sm2263", "nvme"), ("intel660p-1000", 4, 8, "sm2263", "nvme"),
            ("samsung970evoplus-1000", 3, 32, "samsung-phoenix", "nvme"), ("samsung870qvo-1000", 4, 8, "samsung-mkx", "sata-6g"),
            ("crucial-mx500-1000", 3, 32, "sm2258", "sata-6g"), ("wd-sn570-1000", 3, 16, "wd-mp16", "nvme")):
        d = Drive.load(pid)
        assert d.config["nand"]["bits_per_cell"] == bits and d.config["nand"]["one_shot_program"], pid
        assert d.geometry["dies"] == dies, pid
        assert d.config["host"]["interface"] == host, pid
        cache = d.config["slc_cache"]
        assert cache["static_percent_of_capacity"] + cache["dynamic_percent_of_capacity"] > 0, pid
        for field in ("static_percent_of_capacity", "dynamic_percent_of_capacity"):
            assert d.provenance[f"slc_cache.{field}"] == f"profile {profile}", pid


def test_a_fill_of_an_slc_drive_steps_down_where_the_cache_ends_and_calibrate_reads_the_figures(tmp_path: Path) -> None:
    drive = tmp_path / "slc.json"
    # 4 dies x 128 blocks x 384 pages of 16KB: 3.2 GB, long enough for the fill's 250 ms intervals
    drive.write_text(json.dumps(slc_drive(blocks=128, pages=384, page_size_bytes=16384)))
    cap_gb = Drive.load(str(drive)).capacity_bytes / 1e9
    rows = []
    for figure, unit, value in (("cache_gb", "GB", 0.22 * cap_gb), ("in_cache_mbps", "MB/s", 160.0),
                                ("after_cache_mbps", "MB/s", 33.0), ("avg", "MB/s", 1.0)):
        rows.append({"drive_id": str(drive), "published_drive": "a test drive", "test": f"fill: {figure}", "state": "clean",
                     "data_pattern": "incompressible", "iodepth": "32", "value": value, "unit": unit, "kind": "measured",
                     "source": "this test", "suite_test": "whole-drive-fill", "measure": f"fill.{figure}", "note": ""})
    table = tmp_path / "t.csv"
    with open(table, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=TABLE_FIELDS)
        w.writeheader()
        w.writerows(rows)
    res = calibrate(load_table(table), jobs=1, stream=None)
    got = {r["measure"]: r for r in res}
    # the cache: 22% of the capacity in SLC, then direct to TLC (4 dies x 48 KiB / 1.5 ms at most)
    assert got["fill.cache_gb"]["ok"], got["fill.cache_gb"]
    assert got["fill.in_cache_mbps"]["simulated"] > 4 * got["fill.after_cache_mbps"]["simulated"]
    assert got["fill.after_cache_mbps"]["simulated"] < 4 * 49152 / 1.5e-3 / 1e6
    assert not got["fill.avg"]["ok"] and got["fill.avg"]["simulated"] > 30


def test_idle_time_gives_the_slc_cache_back() -> None:
    from ssdlab import Simulator
    sim = Simulator(Drive.load(slc_drive()), seed=1)
    sim.run(rw="write", bs="128k", iodepth=32, size="40m")
    held = sim.smart()["slc_cache_data_bytes"]
    assert held > 8 << 20
    slow = sim.run(rw="write", bs="128k", iodepth=32, offset="40m", size="4m").bw_mbps
    sim.idle("5s")
    assert sim.smart()["slc_cache_data_bytes"] == 0
    fast = sim.run(rw="write", bs="128k", iodepth=32, offset="44m", size="4m").bw_mbps
    assert fast > 3 * slow


def test_a_trimmed_full_drive_gives_its_whole_cache_back_after_idle() -> None:
    """TRIM frees the space the dynamic part is sized by; idle time erases
    the blocks that hold nothing, so a second fill finds the cache again."""
    from ssdlab import Simulator
    sim = Simulator(Drive.load(slc_drive()), seed=1)
    first = sim.run(rw="write", bs="128k", iodepth=32, size="100%")
    sim.trim()
    sim.idle("30s")
    sim.check()
    again = sim.run(rw="write", bs="128k", iodepth=32, size="100%")
    assert abs(again.bw_mbps - first.bw_mbps) < 0.02 * first.bw_mbps, (first.bw_mbps, again.bw_mbps)


def test_erases_in_slc_mode_wear_against_the_slc_rating() -> None:
    """Writes that pass through the cache spend the SLC-mode P/E rating: an
    SLC erase is rating/slc_rating of a native one, and an SLC byte (a third
    of a TLC block per erase) bits * rating/slc_rating of a native byte."""
    from ssdlab import Simulator
    smart = {}
    for slc_rated in (3000, 9000, 30000):
        d = slc_drive()
        d["nand"].update({"pe_cycles_rated": 3000, "slc_pe_cycles_rated": slc_rated})
        sim = Simulator(Drive.load(d), seed=1)
        for _ in range(3):
            sim.run(rw="write", bs="128k", iodepth=32, size="40m")
            sim.idle("5s")
        smart[slc_rated] = sim.smart()
    native, per_byte, slc = smart[3000], smart[9000], smart[30000]
    assert slc["slc_block_erases"] > 0 and slc["erase_count_avg"] == native["erase_count_avg"]
    # rated as native cells, an SLC erase wears as a native one ...
    assert native["life_remaining_percent"] == 100 * (1 - native["erase_count_avg"] / 3000)
    # ... and at three times the rating an SLC byte wears as a native byte
    assert per_byte["wear_amplification"] == per_byte["waf_lifetime"]
    assert native["wear_amplification"] > native["waf_lifetime"]
    assert slc["life_remaining_percent"] > per_byte["life_remaining_percent"] > native["life_remaining_percent"]
    assert slc["wear_amplification"] < slc["waf_lifetime"]
    assert slc["lifetime_years_at_20_gb_per_day"] > native["lifetime_years_at_20_gb_per_day"]


def test_right_after_a_trim_the_cache_erases_the_empty_blocks_it_needs() -> None:
    """A pause just long enough to give the cache back, far too short to
    erase what a TRIM emptied: the cache erases those blocks as it takes
    them, so writes after a full-drive TRIM land in SLC again (without any
    pause the cache stays full, as after a fill)."""
    from ssdlab import Simulator
    rate = {}
    for pause in ("0s", "101ms"):
        d = slc_drive(blocks=192)
        d["ftl"]["idle_gc_delay_ns"] = 100_000_000
        sim = Simulator(Drive.load(d), seed=1, check=True)
        sim.run(rw="write", bs="128k", iodepth=32)
        sim.trim()
        sim.idle(pause)
        rate[pause] = sim.run(rw="write", bs="128k", iodepth=32, size="40m").bw_mbps
        sim.check()
    assert rate["101ms"] > 1.3 * rate["0s"], rate


def test_the_980_pro_acknowledges_large_writes_at_its_dies_and_small_ones_from_its_buffer() -> None:
    from ssdlab import Simulator

    pro = Drive.load("samsung980pro-1000")
    back = pro.with_changes({"controller.write_ack_at_die_whole_units": False})

    def mbps(drive: Drive, **job: Any) -> float:
        return float(Simulator(drive, seed=1).run(rw="write", size="2g", **job).bw_mbps)

    # In the SLC cache: QD32 keeps the dies busy either way (write-back only
    # gains its 64 MiB buffer's head start); at QD1 each 1MB command waits
    # for its last data to reach its die (TechPowerUp's 4 GB/s against
    # AnandTech's 5 GB/s).
    qd32, qd1 = mbps(pro, bs="128k", iodepth=32), mbps(pro, bs="1m", iodepth=1)
    assert abs(qd32 / mbps(back, bs="128k", iodepth=32) - 1) < 0.04
    assert qd1 < 0.88 * qd32 and qd1 < 0.88 * mbps(back, bs="1m", iodepth=1), (qd1, qd32)
    # A 4KB write is shorter than a program unit: acknowledged from the buffer, the same run as write-back.
    small: Dict[str, Any] = {"rw": "randwrite", "bs": "4k", "iodepth": 1, "size": "2g", "runtime": "200ms"}
    assert Simulator(pro, seed=1).run(**small).iops == Simulator(back, seed=1).run(**small).iops
