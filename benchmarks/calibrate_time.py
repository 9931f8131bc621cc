"""Wall time of a full calibration (every row of the built-in table, or of
--drive/--kind), as `ssdlab calibrate` runs it: prints seconds per full
calibration, then where the CPU time goes (per drive, per test, and for
building simulators, cloning states and simulating).

    python benchmarks/calibrate_time.py [--jobs N] [--scheduler tcp://...] [--drive ID ...] [--profile-only]

Target: every row within 30 s of wall time on 2 cores. Measured
on the 2-core machine at load average 1-2: 65 s before states were shared
(61a6257's process pool, one process per drive), 49 s after (CPU 123 s ->
about 90 s), 53.9 s at 318f305; 25.9 s at the commit that added this line
(CPU 50 s): the engine's tables became copy-on-write chunks shared by clones
and by unwritten regions (a clone, a secure erase and building a simulator
cost next to nothing; memory fresh from the OS costs about 2 s per GB here),
the chunk memory is reused within a process, the next host die is found
without a branchy scan, rated reads run 10 s instead of 60, and the longest
tasks (by their preconditioning bytes) start first. `--profile-only` skips
the timed run and only profiles, in this process, one drive after another.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import time
from typing import Any, Dict, List

from ssdlab import sim as _sim
from ssdlab.suite.calibrate import calibrate, load_table


def _profile(rows: List[Any]) -> None:
    """CPU seconds (user + system) per drive and per kind of work, one process."""
    cpu: Dict[str, float] = collections.defaultdict(float)
    calls: Dict[str, int] = collections.Counter()

    def wrap(name: str) -> None:
        orig = getattr(_sim.Simulator, name)

        def timed(self: Any, *a: Any, **k: Any) -> Any:
            t = time.process_time()
            try:
                return orig(self, *a, **k)
            finally:
                cpu[name] += time.process_time() - t
                calls[name] += 1

        setattr(_sim.Simulator, name, timed)

    for n in ("__init__", "clone", "run", "trim", "secure_erase", "idle", "replay"):
        wrap(n)
    drives = sorted({r.drive_id for r in rows})
    print(f"{'drive':<24} {'CPU s':>6}  per call kind (CPU s / calls)")
    total = 0.0
    for d in drives:
        cpu.clear()
        calls.clear()
        t = time.process_time()
        calibrate([r for r in rows if r.drive_id == d], jobs=1, stream=None)
        used = time.process_time() - t
        total += used
        print(f"{d:<24} {used:6.2f}  " + "  ".join(f"{k.strip('_')}={v:.2f}/{calls[k]}" for k, v in sorted(cpu.items())),
              flush=True)
    print(f"CPU total: {total:.1f} s")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--jobs", type=int)
    p.add_argument("--scheduler")
    p.add_argument("--drive", action="append")
    p.add_argument("--kind", choices=["measured", "rated"])
    p.add_argument("--profile", action="store_true", help="also profile (one process, one drive after another)")
    p.add_argument("--profile-only", action="store_true")
    a = p.parse_args()
    rows = load_table(drives=a.drive, kinds=[a.kind] if a.kind else None)
    if not a.profile_only:
        t0 = time.perf_counter()
        cpu0 = os.times()
        res = calibrate(rows, jobs=a.jobs, scheduler=a.scheduler, stream=None)
        wall = time.perf_counter() - t0
        cpu1 = os.times()
        ok = sum(1 for r in res if r["ok"])
        where = a.scheduler or f"{a.jobs or 'default'} jobs"
        print(f"calibration: {len(res)} rows ({ok} within tolerance), {where}, {os.cpu_count()} cores on the machine, "
              f"load average {os.getloadavg()[0]:.2f}")
        user = cpu1.user - cpu0.user + cpu1.children_user - cpu0.children_user
        system = cpu1.system - cpu0.system + cpu1.children_system - cpu0.children_system
        print(f"calibrate wall time: {wall:.1f} s per full calibration "
              f"(CPU of this process and its workers: {user:.1f} s user + {system:.1f} s system)")
    if a.profile or a.profile_only:
        _profile(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
