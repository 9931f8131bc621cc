"""Checking mode: the FTL is compared with a trivial model (lba -> newest
data) on every read and after every phase. Nothing may ever be lost, whatever
the mix of writes, TRIMs, reads, GC and idle time (complements the engine's
Rust property tests)."""

from __future__ import annotations

import os
from typing import List, Tuple

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from conftest import make_drive
from ssdlab import Simulator

TINY = make_drive(dies=2, blocks=32, pages=16, overprovision=1.25, drive_id="test-tiny")

SECTOR = 512


def test_checking_mode_passes_writes_trims_reads_and_idle(small_drive: dict) -> None:
    sim = Simulator(small_drive, check=True)
    assert sim.check_mode
    sim.precondition("filled")
    sim.run(rw="randwrite", bs="4k", iodepth=32, runtime="1s")
    sim.trim(offset="4m", length="8m")
    sim.run(rw="randrw", bssplit="4k/50:16k/30:2k/20", blockalign="512", iodepth=16, runtime="0.5s", rwmixread=40)
    sim.idle("2s")
    sim.run(rw="randread", bs="4k", iodepth=4, runtime="0.2s")
    sim.flush()
    sim.check()
    sim.secure_erase()
    sim.check()


def test_check_also_verifies_structure_outside_checking_mode(small_drive: dict) -> None:
    sim = Simulator(small_drive, check=False)
    sim.precondition("filled")
    sim.run(rw="randwrite", bs="4k", iodepth=32, runtime="0.5s")
    sim.check()


# One operation of a random sequence: kind, start sector, length in sectors,
# queue depth, and a count (I/Os, or ms of idle time).
Op = Tuple[str, int, int, int, int]

_ops = st.tuples(
    st.sampled_from(["write", "randwrite", "trim", "randtrim", "read", "randread", "randrw", "idle", "flush"]),
    st.integers(min_value=0, max_value=10**9),
    st.sampled_from([1, 2, 7, 8, 16, 32, 64, 256]),
    st.sampled_from([1, 2, 4, 32]),
    st.integers(min_value=1, max_value=400),
)

_profile = dict(
    max_examples=int(os.environ.get("SSDLAB_HYPOTHESIS_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=bool(os.environ.get("CI")),
)


@settings(**_profile)  # type: ignore[arg-type]
@given(seed=st.integers(min_value=0, max_value=2**64 - 1), prefill=st.booleans(), ops=st.lists(_ops, min_size=1, max_size=12))
def test_random_sequences_never_lose_data_on_a_tiny_drive_under_gc_pressure(
    seed: int, prefill: bool, ops: List[Op]
) -> None:
    sim = Simulator(TINY, seed=seed, check=True)
    cap_sectors = sim.capacity_bytes // SECTOR
    if prefill:
        sim.precondition("filled")
    for kind, start, length, qd, count in ops:
        if kind == "idle":
            sim.idle(count / 1000)
            continue
        if kind == "flush":
            sim.flush()
            continue
        length = min(length, cap_sectors)
        start = start % (cap_sectors - length + 1)
        job = {
            "rw": kind,
            "bs": length * SECTOR,
            "blockalign": SECTOR,
            "offset": start * SECTOR,
            "size": max(length, min(cap_sectors - start, length * 8)) * SECTOR,
            "iodepth": qd,
            "number_ios": count,
        }
        sim.run(job)  # raises IntegrityError if anything was lost
    sim.check()
    victims = sum(p.data["ssdlab"]["gc_victims"] for p in sim.history)
    event("garbage collection ran" if victims else "no garbage collection")
