"""A probe job as data (:class:`ProbeJob`), and where the jobs of one target write and read, and for how long."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Tuple

from .names import (
    CACHE_FILL_SHARE,
    FULL_RANDWRITE_MIN_SHARE,
    FULL_RANDWRITE_SHARE,
    STATIC_FOLD_FLOOR_BYTES_PER_S,
    STATIC_IDLE_MIN_S,
    STATIC_MAX_SHARE,
    STATIC_SLC_FLOOR_BYTES_PER_S,
    STATIC_WRITE_MIN_S,
    GiB,
    KiB,
    MiB,
)


@dataclass(frozen=True)
class ProbeJob:
    """One diagnosis job: fio ``options`` (beyond the shared header), the
    ``stage``, the ``feature`` it reveals and ``why``, the direction its
    figures come from (``read``, ``write``, ``trim``, or ``rw``: both), and whether fio
    logs its IOPS and bandwidth per ``log_ms``."""

    name: str
    stage: str
    feature: str
    why: str
    options: Dict[str, Any]
    direction: str
    log_ms: int = 0

    @property
    def block_bytes(self) -> int:
        bs = str(self.options.get("bs", "4k")).lower()
        mult = {"k": KiB, "m": MiB, "g": GiB}.get(bs[-1], 1)
        return int(bs[:-1] if bs[-1] in "kmg" else bs) * mult


def align(n: float, unit: int = MiB) -> int:
    return max(unit, int(n) // unit * unit)


def secs(s: float) -> str:
    return f"{int(round(max(s, 0.2) * 1000))}ms"


@dataclass(frozen=True)
class Spans:
    """Where the jobs of one target write and read, and for how long."""

    cap: int
    budget: float

    @property
    def read(self) -> int:
        return align(min(8 * GiB, self.cap // 4))

    @property
    def write(self) -> int:
        return align(min(8 * GiB, self.cap // 4))

    @property
    def reduction(self) -> int:
        return align(min(1 * GiB, self.cap // 16))

    @property
    def short(self) -> str:
        return secs(1.0 * self.budget)


class JobList(List[ProbeJob]):
    def add(self, name: str, stage: str, feature: str, why: str, direction: str, log_ms: int = 0, **opts: Any) -> None:
        self.append(ProbeJob(name, stage, feature, why, opts, direction, log_ms))


def cache_sizes(cap: int, budget: float) -> Tuple[int, int, float]:
    """The cache fill's and the write after idle's sizes, and what the budget asked of the fill (bytes)."""
    asked = CACHE_FILL_SHARE * budget * cap
    fill = align(min(asked, 0.75 * cap))
    return fill, align(min(fill / 2, cap - fill)), asked



def full_sizes(cap: int, budget: float) -> Tuple[int, int]:
    """The full drive's sequential write and random writes (bytes): the sequential write long enough to pass a
    static SLC cache (about 1% of the capacity) and show the native rate; the random writes past the spare area."""
    seq = align(min(cap // 8, max(16 * GiB, 32 * GiB * budget)))
    rand = align(min(float(cap), cap * max(FULL_RANDWRITE_MIN_SHARE, FULL_RANDWRITE_SHARE * budget)))
    return seq, rand


def static_idle_times(cap: int) -> Tuple[float, float, int]:
    """The full drive's idle time before the write that shows the static cache, that write's runtime (s) and its
    most bytes: they depend on the capacity alone (a part of the cache, not the budget, sets them)."""
    most = STATIC_MAX_SHARE * cap
    idle = max(STATIC_IDLE_MIN_S, most / STATIC_FOLD_FLOOR_BYTES_PER_S)
    return idle, max(STATIC_WRITE_MIN_S, most / STATIC_SLC_FLOOR_BYTES_PER_S), align(min(cap / 8, 4 * most))
