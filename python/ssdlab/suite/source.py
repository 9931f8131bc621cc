"""A copy's source drive: a write step that copies a file from another drive
issues its writes no faster than the source reads the file.

A file copy (Windows' copy engine, ``cp``) reads the next piece while the
last is being written, so it runs at the slower of the two drives: a
destination that writes faster than the source reads waits for the data. The
review whose copy this reproduces read a 6.6GB video from an Intel X25-M G2,
and the drives it wrote to that were faster than that source all copied at
the same rate. The source is a simulated drive (a preset): the file is
written to it sequentially, then read at the step's block size and depth;
its read rate becomes the step's fio ``rate``, on the simulator and on a real
drive through fio alike (the user's own source is unknown to the suite, so
the test keeps the review's)."""

from __future__ import annotations

import functools
from typing import Any, Dict, Mapping, Tuple

from ..sim import Simulator
from .vocabulary import CopySource

__all__ = ["SOURCE_SEED", "source_read_bytes_per_s", "paced_by_source", "source_record"]

#: The source is a fixed part of the test, not of the drive under test: one seed for it everywhere.
SOURCE_SEED = 1


@functools.lru_cache(maxsize=16)
def source_read_bytes_per_s(drive: str, bs: str, iodepth: int, size_bytes: int) -> int:
    """Bytes per second at which ``drive`` (a preset or drive file) reads a
    file of ``size_bytes`` it holds, written sequentially, at ``bs`` and
    ``iodepth``."""
    sim = Simulator(drive, seed=SOURCE_SEED)
    size = min(int(size_bytes), sim.capacity_bytes) // 2**20 * 2**20
    sim.run(rw="write", bs="1m", iodepth=1, size=size, data_pattern="incompressible")
    r = sim.run(rw="read", bs=bs, iodepth=iodepth, size=size)
    return int(round(r.bw_mbps * 1e6))


def paced_by_source(job: Mapping[str, Any], size_bytes: int) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """The job as it runs (its ``source`` replaced by the fio ``rate`` the
    source reads at) and what its result records of the source: the drive,
    the seed it was simulated with and that rate."""
    src: CopySource = job["source"]
    rate = source_read_bytes_per_s(src["drive"], str(job.get("bs", "1m")), int(job.get("iodepth", 1)), int(size_bytes))
    run = {k: v for k, v in job.items() if k != "source"}
    run["rate"] = rate
    return run, source_record(src, rate)


def source_record(source: CopySource, rate: int) -> Dict[str, Any]:
    """What a result records of a copy's source: the drive, the seed it was simulated with and its read rate."""
    return {"drive": source["drive"], "seed": SOURCE_SEED, "read_bytes_per_s": rate}
