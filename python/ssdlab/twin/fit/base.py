"""The generic drive a twin starts from, and what every stage of the fit shares:
the base profile and part, the assumed layout (channels, planes), the keys a
scan may add, and the helpers that read a feature's value and size a buffer."""

from __future__ import annotations

import functools
import math
from typing import Any, Dict, Mapping, Optional, Tuple

from ...fit.params import library_values
from ..features.common import Features, field_of

BASE_PROFILE = "generic-2011"
BASE_PART = "imft-25nm-l74a"
CHANNELS = 8
#: The size assumed for a write buffer the probe could not see.
ASSUMED_BUFFER_BYTES = 4 * 1024 * 1024
#: The read-ahead window assumed when the probe sees a read-ahead.
ASSUMED_READAHEAD_BYTES = 1024 * 1024
#: Spare area assumed when the torture shows no GC onset.
ASSUMED_SPARE_FRACTION = 0.07
#: The most packages per channel a twin gets (16 x 8 channels: 128 dies).
MAX_PACKAGES_PER_CHANNEL = 16
#: The channel counts a twin may have: 8, the era's common layout, or 10 (a few controllers), chosen by the scan
#: (:func:`refine_candidates`) where the raw NAND's dies divide among them.
CHANNEL_CHOICES = (8, 10)
#: The key of the channel count in a twin's values, when the scan chose other than :data:`CHANNELS`.
CHANNELS_KEY = "nand.channels"
#: The key of the active-die cap the scan may give a twin (:func:`refine_candidates`).
ACTIVE_DIES_KEY = "controller.max_active_dies"
#: The key of the program buffer the scan may give a twin instead (:func:`refine_candidates`): the controller's
#: memory for the data of the programs in flight, which holds programs, not reads, to the dies it has room for.
PROGRAM_BUFFER_KEY = "controller.program_buffer_bytes"
#: The keys of the two ways a twin keeps dies idle (a cap, in the scan's words).
CAP_KEYS = (ACTIVE_DIES_KEY, PROGRAM_BUFFER_KEY)
#: Free blocks per die the generic profile keeps (ftl.gc_threshold_blocks + 1 open block).
_RESERVE_BLOCKS = 5
#: The engine's default for ``ftl.perf_mode_reorg_units_per_host_unit`` (units the performance mode's
#: reorganisation moves per host unit), where the base profile leaves it unset.
REORG_UNITS_PER_HOST_UNIT = 2
#: The channel rate of the generic profile (the twin's when the fit does not move it).
GENERIC_CHANNEL_BYTES_PER_S = 200_000_000
#: Planes per die of the generic part: a program unit is this many pages.
PLANES = 2
#: The least program time a twin gets from a flush measurement (MIN_FLUSH_PROGRAM_NS of the features).
MIN_TPROG_NS = 200_000
#: The generic profile's per-command FIS exchange on the link (host.command_overhead_ns of generic-2011).
GENERIC_COMMAND_OVERHEAD_NS = 3_000
#: The generic profile's time per command outside the slots (controller.command_latency_ns of generic-2011).
GENERIC_COMMAND_LATENCY_NS = 5_000
#: A write buffer is a region of SRAM or DRAM that firmware carves in powers of two: an estimate within this
#: share of a power of two is taken as that power of two (the estimates scatter that far, and a test that reads
#: what it has just written moves with the buffer to the byte).
BUFFER_POW2_SHARE = 0.2


def _fv(features: Features, name: str) -> Any:
    return field_of(features, name, "value")


def _clamp(x: float, lo: float, hi: float) -> float:
    return min(max(x, lo), hi)


def _buffer_bytes(b: float) -> int:
    """A buffer size for the drive file: at least 256 KiB, in whole 4KB units."""
    return int(max(b, 256 * 1024)) // 4096 * 4096


def _buffer_pow2(b: float) -> Tuple[int, str]:
    """``b`` as the power of two it lies within :data:`BUFFER_POW2_SHARE` of (and why), else in 4KB units."""
    p = 1 << max(0, round(math.log2(max(b, 1.0))))
    if abs(b / p - 1) <= BUFFER_POW2_SHARE:
        return _buffer_bytes(p), (f"; estimated at {int(b):,} B, within {BUFFER_POW2_SHARE:.0%} of {p / 2**20:g} MiB: "
                                  "buffers are powers of two")
    return _buffer_bytes(b), ""


def _tprog_measured(features: Features) -> Optional[float]:
    """transfer + tPROG from the flushed writes, when the probe measured it."""
    v = field_of(features, "tprog_ns", "value")
    return float(v) if v and field_of(features, "tprog_ns", "confidence") in ("high", "medium") else None


@functools.lru_cache(maxsize=None)
def _base_profile_ftl() -> Dict[str, Any]:
    """The base profile's [ftl] values (read once: build_doc runs for every trial)."""
    ftl: Dict[str, Any] = library_values("profile", BASE_PROFILE).get("ftl", {})
    return ftl


def cap_of(values: Mapping[str, Any]) -> Optional[str]:
    """Which way a twin's values keep dies idle (:data:`CAP_KEYS`), if any."""
    return next((k for k in CAP_KEYS if k in values), None)
