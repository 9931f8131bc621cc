"""Wall time of the whole ledger of the reviews' stories, as `ssdlab stories`
runs it (every claim, the cluster runner sharing each drive's states): prints
the ledger, then the wall and CPU seconds.

    python benchmarks/stories_time.py [--jobs N] [--only S01,S02] [--output ledger.json]

Target: every claim within 10 minutes of wall time on 2 cores.
Figures measured are in docs/stories.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from ssdlab.suite.stories import CLAIMS, select
from ssdlab.suite.stories.ledger import format_table, run_stories


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--jobs", type=int)
    p.add_argument("--only", help="claim ids, comma-separated")
    p.add_argument("--output", help="also write the ledger as JSON (every check) to this file")
    a = p.parse_args()
    claims = select(CLAIMS, a.only.split(",") if a.only else None)
    t0 = time.perf_counter()
    cpu0 = os.times()
    judged, _ = run_stories(claims, jobs=a.jobs, progress=False, stream=None)
    wall = time.perf_counter() - t0
    cpu1 = os.times()
    print(format_table(judged))
    if a.output:
        with open(a.output, "w", encoding="utf-8") as f:
            json.dump({"claims": [j.as_dict() for j in judged]}, f, indent=1)
    user = cpu1.user - cpu0.user + cpu1.children_user - cpu0.children_user
    print(f"stories wall time: {wall:.1f} s for {len(claims)} claims, {a.jobs or 'default'} jobs, "
          f"{os.cpu_count()} cores on the machine, load average {os.getloadavg()[0]:.2f} "
          f"(CPU of this process and its children: {user:.1f} s user)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
