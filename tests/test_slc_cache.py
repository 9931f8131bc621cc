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
