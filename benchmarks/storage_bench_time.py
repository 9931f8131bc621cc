#!/usr/bin/env python3
"""Wall time of Storage Bench playback on a 120GB preset (issue 6's floor:
Heavy 2011 in under 30 s). Fills the drive, then replays each generated
workload as recorded, and prints wall seconds, records per wall second and
the Storage Bench metrics.

Run: python benchmarks/storage_bench_time.py [--drive generic-mlc-120] [--workloads heavy-2011,light-2011]
"""
import argparse
import sys
import time

from ssdlab import Simulator


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--drive", default="generic-mlc-120")
    ap.add_argument("--workloads", default="heavy-2011,light-2011,typical-2010,multitasking-2010,gaming-2010")
    a = ap.parse_args()
    sim = Simulator(a.drive)
    t = time.perf_counter()
    sim.precondition("filled")
    print(f"{a.drive}: fill {time.perf_counter() - t:.1f} s wall")
    for w in a.workloads.split(","):
        s = sim.clone()
        t = time.perf_counter()
        r = s.replay(generated=w)
        wall = time.perf_counter() - t
        n = r.data["read"]["total_ios"] + r.data["write"]["total_ios"]
        sb = r.data["storage_bench"]
        print(f"{w}: {wall:.2f} s wall for {n:,} I/Os ({n / wall / 1e6:.2f} M/s), {r.duration_s:,.0f} s simulated; "
              f"data rate {sb['data_rate_mb_per_s']:.1f} MB/s (read {sb['read_data_rate_mb_per_s']:.1f}, "
              f"write {sb['write_data_rate_mb_per_s']:.1f}), busy {sb['busy_time_ns'] / 1e9:.1f} s, {sb['iops']:,.0f} IOPS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
