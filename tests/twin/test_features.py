"""What a probe reveals (ssdlab.twin.features): each feature against the
drives' own values."""

from __future__ import annotations

from typing import Any

import pytest
from twin_helpers import fill, preset_truth

from ssdlab import Drive
from ssdlab.twin.features import extract
from ssdlab.twin.probe import CLEAN, run_probe_simulated


def test_a_faster_mode_that_ends_half_way_through_the_fill_is_seen_and_a_gc_fall_is_not() -> None:
    cap = 100_000_000_000
    # 100 s at 500 MB/s = 50 GB (50%), a 60 s reorganisation at 100 MB/s, then 380 MB/s
    f = extract(fill([500] * 100 + [100] * 60 + [380] * 120), cap)
    print({k: f[k]["value"] for k in ("perf_mode", "perf_mode_fill_percent", "standard_write_bytes_per_s")})
    assert f["perf_mode"]["value"] is True and f["perf_mode_fill_percent"]["value"] == 50
    assert abs(f["standard_write_bytes_per_s"]["value"] / 380e6 - 1) < 0.01
    # a drive whose standard mode still outruns the link ends at its first rate: the mode shows in the fall
    # alone (Vertex 4 512GB: 504 MB/s, 219 during the reorganisation, 504 again)
    f = extract(fill([500] * 100 + [200] * 60 + [500] * 120), cap)
    assert f["perf_mode"]["value"] is True and f["perf_mode_fill_percent"]["value"] == 50
    assert f["standard_write_bytes_per_s"]["value"] is None and "link" in f["standard_write_bytes_per_s"]["how"]
    assert abs(f["perf_mode_dip_bytes_per_s"]["value"] / 200e6 - 1) < 0.01
    # a fall that never recovers (garbage collection late in the fill) and a flat fill: no mode
    assert extract(fill([500] * 150 + [100] * 100), cap)["perf_mode"]["value"] is False
    assert extract(fill([400] * 250), cap)["perf_mode"]["value"] is False
    # a fall after 5% of the drive is not a mode's end
    assert extract(fill([500] * 10 + [100] * 60 + [380] * 200), cap)["perf_mode"]["value"] is False


@pytest.mark.parametrize("preset", ["neutron-240", "samsung840pro-256"])
def test_bursts_measure_a_large_buffer_in_front_of_a_nand_almost_as_fast_as_the_link(preset: str) -> None:
    # the NAND drains at 90-95% of the link: the buffer is the small difference of two rates, so the drain rate
    # must come from the bursts themselves
    run = run_probe_simulated(preset, None, stages=(CLEAN,), budget=0.25)
    f = extract(run.figures, run.target["capacity_bytes"])["write_buffer_bytes"]
    truth = preset_truth(preset)["write_buffer_bytes"]
    print(f"{preset}: buffer {f['value']:,} B (truth {truth:,}): {f['how']}")
    assert abs(f["value"] / truth - 1) < 0.10


def test_bursts_measure_the_buffer_behind_a_write_path_slower_than_the_link() -> None:
    # Everest 2 fw1.5 takes writes at 510 MB/s, below the 550 MB/s link its 128KB reads of unwritten LBAs fill: the
    # buffer fills at the write rate (taken at the link's it came out at 32 MiB for 64)
    run = run_probe_simulated("vertex4-64-fw15", None, stages=(CLEAN,), budget=0.25)
    f = extract(run.figures, run.target["capacity_bytes"])
    got, truth = f["write_buffer_bytes"], preset_truth("vertex4-64-fw15")["write_buffer_bytes"]
    print(f"vertex4-64-fw15: link {f['link_bytes_per_s']['value']:,} B/s, buffer {got['value']:,} B (truth {truth:,}): "
          f"{got['how']}")
    assert f["link_bytes_per_s"]["value"] > 1.04 * f["fastest_write_bytes_per_s"]["value"]
    assert abs(got["value"] / truth - 1) < 0.10


def test_on_a_drive_that_maps_8kb_units_the_torture_fills_the_spare_twice_as_fast() -> None:
    from ssdlab.twin.features import _onset

    # after the fill every 4KB write of the torture rewrites its whole 8KB unit: the spare takes twice the bytes
    # the host wrote before garbage collection bit (Vertex 3 480GB: 6.3% of the capacity written, 12.7% spare)
    figs = {"torture": {"iops_series": [30_000.0] * 100 + [4_000.0] * 300, "interval_ms": 1000}}
    fine, coarse = _onset(figs, 480_000_000_000), _onset(figs, 480_000_000_000, 8192)
    assert coarse["gc_onset_bytes"]["value"] == 2 * fine["gc_onset_bytes"]["value"]
    assert coarse["spare_fraction"]["value"] == pytest.approx(2 * fine["spare_fraction"]["value"], abs=1e-4)
    assert "8KB map unit" in coarse["spare_fraction"]["how"] and "map unit" not in fine["spare_fraction"]["how"]


def test_the_map_unit_is_the_write_size_that_runs_fastest_when_it_beats_4kb_writes_clearly() -> None:
    from ssdlab.twin.features import _map_unit

    def unit(r4: float, r8: float, r16: float) -> Any:
        return _map_unit({"rewrite-4k-qd32": {"iops": r4}, "rewrite-8k-qd32": {"iops": r8},
                          "rewrite-16k-qd32": {"iops": r16}})["value"]

    assert unit(66_000, 55_000, 30_000) == 4096  # command-bound 4KB map: smaller writes at least as fast
    assert unit(10_000, 10_000, 10_000) == 4096  # a write-cost cap: every size alike
    assert unit(30_000, 55_000, 30_000) == 8192
    assert unit(20_000, 22_000, 40_000) == 16384  # 4KB and 8KB both rewrite the rest of a 16KB unit
    assert unit(45_000, 55_000, 30_000) == 4096  # within 1 / 0.75 of the fastest: not a coarser map
    assert _map_unit({})["value"] is None and _map_unit({})["confidence"] == "none"


def test_qd1_reads_of_growing_size_give_the_channels_rate_of_a_link_bound_drive() -> None:
    from ssdlab.twin.fit.base import GENERIC_CHANNEL_BYTES_PER_S
    from ssdlab.twin.fit.start import free_parameters

    # the SF-1200 drives sequential reads at the SATA 3Gbps link at depth, but a QD1 request crosses its
    # eight 50 MB/s asynchronous channels before the link: 512KB against 128KB reads leave the channels' rate
    run = run_probe_simulated("force-f120", None, stages=(CLEAN,), budget=0.25)
    f = extract(run.figures, run.target["capacity_bytes"])
    cfg = Drive.load("force-f120").config["nand"]
    truth = cfg["channels"] * cfg["channel_bytes_per_s"]
    got = f["nand_read_bytes_per_s"]["value"]
    start = {p.key: p.value for p in free_parameters(f)}
    print(f"NAND read rate {got / 1e6:.0f} MB/s (truth {truth / 1e6:.0f} MB/s of channels); channel start "
          f"{start['nand.channel_bytes_per_s'] / 1e6:.0f} MB/s: {f['nand_read_bytes_per_s']['how']}")
    assert f["seq_read_bytes_per_s"]["value"] > 0.9 * f["link_bytes_per_s"]["value"]
    assert 0.75 < got / truth < 1.1
    assert abs(start["nand.channel_bytes_per_s"] / cfg["channel_bytes_per_s"] - 1) < 0.25
    # a Barefoot 3 reads ahead at QD1: the NAND's share is hidden and the channel starts at the generic rate
    v = run_probe_simulated("vector-256", None, stages=(CLEAN,), budget=0.25)
    fv = extract(v.figures, v.target["capacity_bytes"])
    assert fv["nand_read_bytes_per_s"]["value"] is None
    assert {p.key: p.value for p in free_parameters(fv)}.get("nand.channel_bytes_per_s") == GENERIC_CHANNEL_BYTES_PER_S


def test_never_written_reads_give_the_link_of_a_drive_whose_nand_is_slower() -> None:
    from ssdlab.twin.fit.start import free_parameters

    # the Crucial m4 reads written data at 440 MB/s (eight 55 MB/s channels) and writes at 268: only reads the
    # map answers reach its SATA 6Gbps link, and with the link known the channel starts from the NAND-bound read
    run = run_probe_simulated("crucial-m4-256", None, stages=(CLEAN,), budget=0.25)
    f = extract(run.figures, run.target["capacity_bytes"])
    cfg = Drive.load("crucial-m4-256").config
    link, nand = cfg["host"]["link_bytes_per_s"], cfg["nand"]
    start = {p.key: p.value for p in free_parameters(f)}
    print(f"link {f['link_bytes_per_s']['value'] / 1e6:.0f} MB/s (truth {link / 1e6:.0f}), written data read at "
          f"{f['seq_read_bytes_per_s']['value'] / 1e6:.0f} MB/s; channel start "
          f"{start['nand.channel_bytes_per_s'] / 1e6:.0f} MB/s (truth {nand['channel_bytes_per_s'] / 1e6:.0f})")
    assert f["link_bytes_per_s"]["value"] > 1.15 * f["seq_read_bytes_per_s"]["value"]
    assert 0.95 < f["link_bytes_per_s"]["value"] / link <= 1.0
    assert abs(start["nand.channel_bytes_per_s"] / nand["channel_bytes_per_s"] - 1) < 0.1
