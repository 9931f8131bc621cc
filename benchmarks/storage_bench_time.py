#!/usr/bin/env python3
"""Wall time of Storage Bench playback on a 120GB preset (its floor:
Heavy 2011 in under 30 s). Runs each workload the way the suite's test
defines it (ssdlab.suite.definitions: a secure-erased drive, idle gaps cut to
at most 25 ms; --full: the drive filled first, the -full tests), so the data
rates are those of `ssdlab test storage-bench-WORKLOAD[-full]` for the same
drive and seed. Prints wall seconds, I/Os per wall second and the Storage
Bench metrics.

Run: python benchmarks/storage_bench_time.py [--drive generic-mlc-120] [--workloads heavy-2011,light-2011] [--full]
"""
import argparse
import sys
import time

from ssdlab import Simulator
from ssdlab.suite.definitions import STORAGE_BENCH_WORKLOADS, storage_bench_method


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--drive", default="generic-mlc-120")
    ap.add_argument("--workloads", default=",".join(w for w, _, _ in STORAGE_BENCH_WORKLOADS))
    ap.add_argument("--full", action="store_true", help="the -full tests: the drive filled first (default: secure-erased)")
    ap.add_argument("--seed", type=int, default=1, help="master seed (default 1, as ssdlab test)")
    a = ap.parse_args()
    methods = {}
    for w in a.workloads.split(","):
        m = storage_bench_method(w, full=a.full)
        if m is None:
            ap.error(f"--workloads: '{w}' is not a suite Storage Bench workload "
                     f"({', '.join(x for x, _, _ in STORAGE_BENCH_WORKLOADS)})")
        methods[w] = m
    states = {}
    for w, m in methods.items():
        if m["state"] not in states:
            sim = Simulator(a.drive, seed=a.seed)
            t = time.perf_counter()
            sim.precondition(m["state"])
            print(f"{a.drive}: precondition {m['state']} {time.perf_counter() - t:.1f} s wall")
            states[m["state"]] = sim
        s = states[m["state"]].clone()
        t = time.perf_counter()
        r = s.replay(generated=w, **m["replay"])
        wall = time.perf_counter() - t
        n = r.data["read"]["total_ios"] + r.data["write"]["total_ios"]
        sb = r.data["storage_bench"]
        print(f"{w} ({m['test_id']}: {m['state']}, idle gaps cut to {m['replay'].get('idle_cap', 'none')}): "
              f"{wall:.2f} s wall for {n:,} I/Os ({n / wall / 1e6:.2f} M/s), {r.duration_s:,.0f} s simulated; "
              f"data rate {sb['data_rate_mb_per_s']:.1f} MB/s (read {sb['read_data_rate_mb_per_s']:.1f}, "
              f"write {sb['write_data_rate_mb_per_s']:.1f}), busy {sb['busy_time_ns'] / 1e9:.1f} s, {sb['iops']:,.0f} IOPS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
