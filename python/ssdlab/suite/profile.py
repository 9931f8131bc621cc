"""Suite profiles: ``full`` runs docs/methodology.md as written; ``quick`` runs the
same descriptions through the same code with runtimes and spans cut (for tests
and a first look), never for published figures."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import FrozenSet

__all__ = ["Profile", "FULL", "QUICK", "PROFILE_NAMES", "get_profile"]


@dataclass(frozen=True)
class Profile:
    name: str
    #: Simulated times (runtime, torture, idle, steady-state windows, the log interval of a timed job) are multiplied
    #: by this; a job bounded by a size logs at the interval its size is scaled by (a full-span pass: unscaled).
    time_scale: float = 1.0
    #: Byte sizes given as absolute sizes (spans, io_size) are multiplied by this; percentages are not.
    size_scale: float = 1.0
    #: Tests left out of this profile (listed as skipped in the results).
    skip: FrozenSet[str] = field(default_factory=frozenset)


FULL = Profile("full")
QUICK = Profile(
    "quick",
    time_scale=0.05,
    size_scale=1 / 16,
    # the long traces (the profile cannot shorten a recorded trace): with and without the fill
    skip=frozenset(f"storage-bench-{w}{v}" for w in ("heavy-2011", "light-2011", "multitasking-2010") for v in ("", "-full")),
)

_PROFILES = {"full": FULL, "quick": QUICK}

#: The profiles' names.
PROFILE_NAMES = tuple(_PROFILES)


def get_profile(name: str) -> Profile:
    try:
        return _PROFILES[name]
    except KeyError:
        raise KeyError(f"'{name}' is not a profile; allowed: {', '.join(_PROFILES)}") from None
