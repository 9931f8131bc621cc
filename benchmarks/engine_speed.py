#!/usr/bin/env python3
"""Engine speed on a 256GB drive with 7% spare area (its floors).

Prints, for a plain drive and again with every controller behaviour enabled
(data reduction, RAISE, recycling path, active-die limit, read-ahead, DRAM
buffer, performance mode off because it only applies below half fill):

- 128KB QD32 sequential fill: GB of simulated data per wall second (floor 20);
- 4KB random writes QD32 over all LBAs in GC steady state (greedy): simulated
  I/Os per wall second (floor 1.5 M), with the WA reached;
- the performance-consistency test (fill + 2000 s of 4KB QD32 random writes):
  wall seconds (floor: under 60);
- RAM per 4KB of raw NAND (floor: at most 12 B), as used by the drive after
  the consistency test, and the estimate reserved before allocation. The
  reverse map keeps one 4-byte entry per unit stored (see
  crates/ssdlab-sim/src/revmap.rs), so with data reduction it grows with how
  finely the data was packed: incompressible data needs one entry per 4KB,
  as on a plain drive, and the estimate allows for every 1KB granule holding
  a unit of its own (about 20 B per 4KB, the worst case).

Run: python benchmarks/engine_speed.py [--quick]   (--quick: 64GB drive)
The steady-state random-write case without Python (same drives, with CPU time
and a digest of the results): cargo run --release --example prof -- [plain|behaviours]
"""
import argparse
import resource
import sys
import time

from ssdlab import Drive, Simulator


def drive(capacity_gb: int, behaviours: bool) -> dict:
    dies = 32 if capacity_gb >= 256 else 8
    d = {
        "drive": {"id": "bench", "name": f"{capacity_gb}GB 25nm MLC", "user_capacity_bytes": capacity_gb * 10**9},
        "host": {"interface": "sata-6g", "ncq_depth": 32},
        "controller": {"command_cost_ns": 8000, "write_buffer_bytes": 4 << 20},
        "nand": {"channels": 8, "packages_per_channel": dies // 8, "dies_per_package": 1, "planes_per_die": 2,
                 "blocks_per_plane": 2048, "pages_per_block": 256, "page_size_bytes": 8192,
                 "tr_ns": 50_000, "tprog_ns": 1_300_000, "tbers_ns": 3_000_000, "channel_bytes_per_s": 200_000_000},
        "ftl": {"gc_policy": "greedy", "gc_threshold_blocks": 4, "bg_gc_threshold_blocks": 8},
    }
    if behaviours:
        # RAISE takes one die's capacity: the user capacity shrinks by a die so
        # the data dies keep the same 7% spare area.
        d["nand"]["raise"] = True
        d["drive"]["user_capacity_bytes"] = capacity_gb * 10**9 // dies * (dies - 1) // 512 * 512
        d["data_reduction"] = {"enabled": True, "metadata_bytes_per_unit": 64, "compressible_stored_fraction": 0.3,
                               "repeated_stored_fraction": 0.0, "zeros_stored_fraction": 0.0}
        d["ftl"]["recycle_bytes_per_s"] = 40_000_000 * dies
        d["controller"].update({"max_active_dies": dies * 3 // 4, "readahead_bytes": 1 << 20, "readahead_min_qd": 1,
                                "seq_read_max_dies": 16, "unmapped_read_ns": 20_000, "write_buffer_bytes": 64 << 20})
    return d


def bench(capacity_gb: int, behaviours: bool) -> None:
    cfg = drive(capacity_gb, behaviours)
    label = "every behaviour enabled" if behaviours else "plain"
    dr = Drive.load(cfg)
    g = dr.geometry
    print(f"== {capacity_gb}GB drive, {label}: {g['dies']} data dies, spare {g['spare_fraction'] * 100:.2f}%")
    sim = Simulator(cfg)
    t = time.perf_counter()
    fill = sim.run(rw="write", bs="128k", iodepth=32)
    w = time.perf_counter() - t
    gb = fill.data["write"]["io_bytes"] / 1e9
    print(f"fill 128KB QD32: {gb:.1f} GB simulated in {w:.2f} s wall = {gb / w:.1f} GB/s per wall second "
          f"(drive {fill.bw_mbps:.0f} MB/s)")
    cap = sim.capacity_bytes
    consistency_start = time.perf_counter() - w
    t = time.perf_counter()
    warm = sim.run(rw="randwrite", bs="4k", iodepth=32, io_size=cap)
    w = time.perf_counter() - t
    ios = warm.data["write"]["total_ios"]
    print(f"randwrite 4KB QD32, first pass over the capacity: {ios / w / 1e6:.2f} M I/O per wall second, WA {warm.waf:.2f}")
    t = time.perf_counter()
    steady = sim.run(rw="randwrite", bs="4k", iodepth=32, number_ios=20_000_000)
    w = time.perf_counter() - t
    ios = steady.data["write"]["total_ios"]
    print(f"randwrite 4KB QD32, GC steady state: {ios:,} I/Os in {w:.2f} s wall = {ios / w / 1e6:.2f} M simulated "
          f"I/O per wall second; WA {steady.waf:.2f}; drive {steady.iops:,.0f} IOPS")
    # The consistency test proper: fill + 2000 s of random writes on a fresh simulator.
    sim2 = Simulator(cfg)
    t = time.perf_counter()
    sim2.run(rw="write", bs="128k", iodepth=32)
    r = sim2.run(rw="randwrite", bs="4k", iodepth=32, runtime="2000s")
    w = time.perf_counter() - t
    print(f"performance consistency (fill + 2000 s randwrite): {w:.1f} s wall, "
          f"{r.data['write']['total_ios']:,} I/Os, {r.iops:,.0f} IOPS average")
    per4k = g['raw_bytes'] / 4096
    print(f"RAM in use after the consistency test: {sim2.memory_in_use_bytes / per4k:.2f} bytes per 4KB of raw NAND "
          f"(reserved at most: {dr.memory_estimate_bytes / per4k:.2f})")
    del consistency_start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="64GB drive instead of 256GB")
    ap.add_argument("--only", choices=["plain", "behaviours"], help="run one configuration")
    a = ap.parse_args()
    gb = 64 if a.quick else 256
    for b in (False, True):
        if a.only and (a.only == "behaviours") != b:
            continue
        bench(gb, b)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS of this process: {rss:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
