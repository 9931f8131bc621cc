"""The few measurements a claim needs that the review suite does not make:
each a test description in the suite's vocabulary (run by the same runner,
sharing preconditioned states with the suite's tests), and the small drives
of the physics claim.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Mapping, Optional

from ..definitions import find_test
from ..vocabulary import SuiteTest

__all__ = ["SCENARIOS", "PHYSICS_SPARE_FACTORS", "physics_drive", "physics_drive_id", "test_of", "desnoyers_waf",
           "drive_spec"]

_AS_SSD_SEQ_WRITE = {"rw": "write", "bs": "16m", "iodepth": 1, "size": "1g", "io_size": "1g",
                     "data_pattern": "incompressible"}
_UNIFORM = {"rw": "randwrite", "bs": "4k", "iodepth": 32, "io_size": "100%"}
_HD_TACH_WRITE = {"rw": "write", "bs": "128k", "iodepth": 1, "data_pattern": "incompressible"}

#: The seconds of idle the reviewers gave a drive after filling half of it.
IDLE_S = 600

SCENARIOS: Dict[str, SuiteTest] = {
    # A drive filled to the brim once, in two halves, left idle, then written again: how performance mode
    # (the first half of the LBAs written fast, the rest after a reorganisation) shows to a reviewer.
    "story-half-fill": {
        "id": "story-half-fill",
        "title": "Sequential fill of every LBA in two halves, 10 minutes idle, then 8GB more",
        "group": "stories",
        "about": "HD Tach's write pass (128KB, QD1) over the first half of the LBAs, then the second; ten minutes "
                 "of idle; then 8GB written again from the start.",
        "summary": "throughput",
        "chart": "bar",
        "runs": [{"state": {"state": "clean"}, "steps": [
            {**_HD_TACH_WRITE, "offset": "0%", "size": "50%", "measure": "first half"},  # type: ignore[typeddict-item]
            {**_HD_TACH_WRITE, "offset": "50%", "size": "50%", "measure": "second half"},  # type: ignore[typeddict-item]
            {"action": "idle", "seconds": IDLE_S},
            {**_HD_TACH_WRITE, "size": "100%", "io_size": "8g", "measure": "after idle"},  # type: ignore[typeddict-item]
        ]}],
    },
    # The SandForce dirty state and the one thing that ends it.
    "story-secure-erase": {
        "id": "story-secure-erase",
        "title": "AS-SSD sequential write on a dirty drive, after TRIM, after a secure erase",
        "group": "stories",
        "about": "The resiliency test's dirty run, then a secure erase and the same write once more.",
        "summary": "throughput",
        "chart": "bar",
        "runs": [{"state": {"state": "dirty"}, "steps": [
            {**_AS_SSD_SEQ_WRITE, "measure": "dirty"},  # type: ignore[typeddict-item]
            {"action": "trim"},
            {**_AS_SSD_SEQ_WRITE, "measure": "dirty, after TRIM"},  # type: ignore[typeddict-item]
            {"action": "precondition", "state": "clean"},
            {**_AS_SSD_SEQ_WRITE, "measure": "after secure erase"},  # type: ignore[typeddict-item]
        ]}],
    },
    # Uniform 4KB random writes on a full drive until the write amplification settles (4 capacities), then
    # measured over one more, as Desnoyers' model assumes.
    "story-uniform-random-writes": {
        "id": "story-uniform-random-writes",
        "title": "Uniform 4KB random writes on a full drive, 4 capacities to settle, 1 measured",
        "group": "stories",
        "about": "Write amplification of uniform random writes in steady state.",
        "summary": "throughput",
        "chart": "bar",
        "runs": [{"state": {"state": "filled"}, "steps": [
            *([_UNIFORM] * 4),  # type: ignore[list-item]
            {**_UNIFORM, "measure": "steady"},  # type: ignore[typeddict-item]
        ]}],
    },
}


def test_of(test_id: str) -> Optional[SuiteTest]:
    """A suite test or a scenario of the stories, by id."""
    return SCENARIOS.get(test_id) or find_test(test_id)


# -- the physics claim's drives ------------------------------------------------------------------------------------

#: Physical over user capacity of the physics drives (Desnoyers' alpha).
PHYSICS_SPARE_FACTORS = (1.10, 1.20, 1.50)
_DIES, _BLOCKS, _PAGES, _PAGE_BYTES = 4, 2048, 64, 4096


def physics_drive_id(alpha: float, policy: str) -> str:
    return f"physics-{policy}-{alpha:.2f}"


def physics_drive(alpha: float, policy: str) -> Mapping[str, Any]:
    """A small drive of 4KB pages with ``alpha`` times more pages than LBAs,
    cleaning by ``policy``: nothing but the FTL between the host and the
    dies, as the analytic model has it."""
    user_pages = math.floor(_DIES * _BLOCKS * _PAGES / alpha)
    return {
        "drive": {"id": physics_drive_id(alpha, policy), "name": f"physics drive, alpha {alpha:.2f}, {policy}",
                  "user_capacity_bytes": user_pages * _PAGE_BYTES},
        "host": {"link_bytes_per_s": 550_000_000, "command_overhead_ns": 2000, "ncq_depth": 32},
        "controller": {"command_cost_ns": 4000, "write_buffer_bytes": 1 << 20},
        "nand": {"channels": _DIES, "packages_per_channel": 1, "dies_per_package": 1, "planes_per_die": 1,
                 "blocks_per_plane": _BLOCKS, "pages_per_block": _PAGES, "page_size_bytes": _PAGE_BYTES,
                 "tr_ns": 50_000, "tprog_ns": 900_000, "tbers_ns": 3_000_000, "channel_bytes_per_s": 200_000_000},
        "ftl": {"gc_policy": policy, "gc_threshold_blocks": 2, "bg_gc_threshold_blocks": 4},
    }


_PHYSICS: Dict[str, Mapping[str, Any]] = {
    physics_drive_id(a, p): physics_drive(a, p) for a in PHYSICS_SPARE_FACTORS for p in ("fifo", "greedy")
}


def drive_spec(drive_id: str) -> Any:
    """What to load for a claim's drive: a preset id, or a physics drive."""
    return _PHYSICS.get(drive_id, drive_id)


def _lambert_w0(x: float) -> float:
    """Principal branch of Lambert W on [-1/e, 0), by Halley's iteration."""
    w = -1.0 + math.sqrt(2.0 * (1.0 + math.e * x)) if x < -0.3 else x
    for _ in range(100):
        ew = math.exp(w)
        f = w * ew - x
        wn = w - f / (ew * (w + 1.0) - (w + 2.0) * f / (2.0 * w + 2.0))
        if abs(wn - w) < 1e-15:
            return wn
        w = wn
    return w


def desnoyers_waf(alpha: float) -> float:
    """Write amplification of uniform random writes under FIFO cleaning
    (Desnoyers, SYSTOR 2012): alpha / (alpha + W0(-alpha e^-alpha))."""
    return alpha / (alpha + _lambert_w0(-alpha * math.exp(-alpha)))


def all_ids() -> List[str]:
    return list(SCENARIOS)
