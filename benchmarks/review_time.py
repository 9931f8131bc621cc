"""Wall time of a full review of one drive (every test of the suite, one
process, one core): prints seconds per test and per review.

    python benchmarks/review_time.py [--drive generic-mlc-120] [--tests ID ...] [--quick] [--out DIR]
    # a 256GB drive: the 120GB preset with twice the blocks
    python benchmarks/review_time.py --set drive.user_capacity_bytes=256000000000 --set nand.blocks_per_plane=4096

Target: under 5 minutes for a 120GB drive, 10 for 256GB. The
simulated durations are fixed by docs/methodology.md; wall time is simulator speed.
With --out the results documents are saved (and `ssdlab report DIR --out ...`
draws them).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from ssdlab import Drive
from ssdlab.backends.sim_runner import SuiteRunner
from ssdlab.results import save_document
from ssdlab.suite import default_test_ids, get_scale
from ssdlab.suite.review import run_test_document


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--drive", default="generic-mlc-120")
    p.add_argument("--tests", nargs="+")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--out", help="save the results documents here")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="change a drive field, e.g. drive.user_capacity_bytes=256000000000 (repeatable)")
    a = p.parse_args()
    drive = Drive.load(a.drive)
    if a.set:
        drive = drive.with_changes({k: json.loads(v) for k, v in (item.split("=", 1) for item in a.set)})
    scale = get_scale("quick" if a.quick else "full")
    runner = SuiteRunner(drive, seed=a.seed, scale=scale)
    ids = a.tests or default_test_ids()
    print(f"review of {drive.id} ({drive.capacity_bytes / 1e9:.0f} GB), profile {scale.name}, {len(ids)} tests, "
          f"1 process, {os.cpu_count()} cores on the machine", flush=True)
    t0 = time.perf_counter()
    for tid in ids:
        t = time.perf_counter()
        doc = run_test_document(runner, a.drive, tid, command=" ".join(["python", *sys.argv]))
        sim_s = sum(j.get("duration_ns", 0) for j in doc["jobs"]) / 1e9
        if a.out:
            save_document(doc, Path(a.out) / "results" / drive.id / f"{tid}.json")
        print(f"  {tid:<34} {time.perf_counter() - t:8.1f} s wall  ({sim_s:,.0f} s simulated in measured phases)"
              + (f"  [skipped: {doc['skipped']}]" if doc["skipped"] else ""), flush=True)
    total = time.perf_counter() - t0
    print(f"review wall time: {total:.1f} s per review ({total / 60:.1f} min) for {drive.id}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
