#!/usr/bin/env python3
"""Storage Bench 2011 on the three SF-1200 drives (claims S01, S02): the
data rates (all, reads, writes) of Heavy and Light 2011 on force-f120,
vertex2-25nm-120 and vertex2-hynix-120, the ratios the claims check, and the
published figures beside them. Each run is the suite's test
(`ssdlab test storage-bench-WORKLOAD`, seed 1), on copies of the presets with
the --set changes (dotted keys, as `Drive.with_changes`) when given.

--only reads (or writes) replays only the trace's reads (writes), written
to a CSV first, with the suite's playback (as recorded, idle gaps cut to
25 ms, the data the trace reads laid down first): where the mixed trace
loses against each half alone.

    python benchmarks/sf1200_storage_bench.py [--workloads heavy-2011,light-2011]
        [--set controller.write_buffer_bytes=2097152 ...] [--only reads|writes]

Figures measured are in docs/stories.md ("Not holding yet", S01 and S02).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from typing import Any, Dict, List, Tuple

from ssdlab import Simulator
from ssdlab.backends.sim_runner import SuiteRunner
from ssdlab.drive import Drive
from ssdlab.suite.definitions import STORAGE_BENCH_PLAYBACK, find_test
from ssdlab.trace import write_generated_trace

DRIVES = ("force-f120", "vertex2-25nm-120", "vertex2-hynix-120")
#: Page 000 (docs/stories.md, S01 and S02): 34nm, 25nm, Hynix.
PUBLISHED = {"heavy-2011": (120.1, 110.9, 92.1), "light-2011": (155.9, 145.8, 125.6)}


def parse_set(items: List[str]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for it in items:
        key, sep, text = it.partition("=")
        if not sep or not key:
            raise SystemExit(f"--set: '{it}' is not KEY=VALUE (e.g. controller.write_buffer_bytes=2097152)")
        try:
            out[key] = json.loads(text)
        except ValueError:
            out[key] = text
    return out


def suite_rates(drive: Drive, workload: str) -> Tuple[float, float, float]:
    doc = SuiteRunner(drive, seed=1).run_test(find_test(f"storage-bench-{workload}"))
    f = {x["label"]: x["value"] for x in doc["figures"] if x["chart"].endswith(".rate")}
    return f["all"], f["reads"], f["writes"]


def half_rates(drive: Drive, path: str) -> Tuple[float, float, float]:
    r = Simulator(drive, seed=1).replay(path, mode=STORAGE_BENCH_PLAYBACK["mode"], idle_cap=STORAGE_BENCH_PLAYBACK["idle_cap"],
                                        lay_down_reads=True)
    sb = r.data["storage_bench"]
    return sb["data_rate_mb_per_s"], sb["read_data_rate_mb_per_s"], sb["write_data_rate_mb_per_s"]


def half_trace(workload: str, op: str, capacity_bytes: int, tmp: str) -> str:
    whole = os.path.join(tmp, f"{workload}.csv")
    write_generated_trace(workload, whole, capacity_bytes=capacity_bytes, seed=1)
    half = os.path.join(tmp, f"{workload}-{op}.csv")
    with open(whole) as src, open(half, "w") as dst:
        for i, line in enumerate(src):
            if i == 0 or line.split(",", 2)[1] == op:
                dst.write(line)
    return half


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workloads", default="heavy-2011,light-2011")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a change to all three drives")
    ap.add_argument("--only", choices=("reads", "writes"), help="replay only the trace's reads or writes")
    a = ap.parse_args()
    changes = parse_set(a.set)
    drives = [Drive.load(d).with_changes(changes) if changes else Drive.load(d) for d in DRIVES]
    with tempfile.TemporaryDirectory() as tmp:
        for w in a.workloads.split(","):
            if w not in PUBLISHED:
                ap.error(f"--workloads: '{w}' is not heavy-2011 or light-2011")
            if a.only:
                path = half_trace(w, a.only[:-1], Simulator(drives[0]).capacity_bytes, tmp)
                r = [half_rates(d, path) for d in drives]
            else:
                r = [suite_rates(d, w) for d in drives]
            al = [x[0] for x in r]
            p = PUBLISHED[w]
            print(f"{w}{' (' + a.only + ' only)' if a.only else ''}: all {al[0]:.1f} / {al[1]:.1f} / {al[2]:.1f} MB/s "
                  f"(published {p[0]} / {p[1]} / {p[2]}); 34/25 {al[0] / al[1]:.2f} ({p[0] / p[1]:.2f}), "
                  f"34/Hynix {al[0] / al[2]:.2f} ({p[0] / p[2]:.2f}), 25/Hynix {al[1] / al[2]:.2f} ({p[1] / p[2]:.2f}); "
                  f"reads {r[0][1]:.1f} / {r[1][1]:.1f} / {r[2][1]:.1f}, writes {r[0][2]:.1f} / {r[1][2]:.1f} / {r[2][2]:.1f}",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
