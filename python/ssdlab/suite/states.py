"""Preconditioning states (docs/methodology.md "Preconditioning states"), as
data: the one definition that the simulator (``Simulator.precondition``,
``ssdlab run --precondition``), the suite runner and the fio export use.

A state is reached by a list of phases, each state building on another:

- ``clean``: ATA secure erase;
- ``filled``: clean, then one sequential 128KB QD32 pass over the span
  (incompressible data unless the state names another ``data_pattern``);
- ``dirty``: filled, then the span written a second time (no TRIM);
- ``tortured``: filled, then 4KB random writes QD32 incompressible over the
  span for 20 minutes;
- ``trimmed``: another state (``from``, dirty by default), then TRIM of the span.

:func:`phases` lists the phases of a state; :func:`precondition` runs them
on a simulator; ``ssdlab.suite.fio`` renders them as fio sections.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Literal, Mapping, Optional, Protocol, Sequence, Tuple, TypedDict, Union, cast

from ..errors import workload_error

if TYPE_CHECKING:
    from ..results import PhaseResult

#: A phase's progress callback (as :data:`ssdlab.sim.ProgressCallback`).
ProgressCallback = Callable[[int, int, int, int], Optional[bool]]


class Simulator(Protocol):
    """What preconditioning needs of a simulator; :class:`ssdlab.sim.Simulator`
    meets it. A protocol, not an import: the simulator calls this module
    (``Simulator.precondition``), so this module does not import it."""

    @property
    def capacity_bytes(self) -> int: ...

    def secure_erase(self) -> "PhaseResult": ...

    def trim(self, offset: Any = 0, length: Any = None) -> "PhaseResult": ...

    def run(self, job: Any = None, /, *, progress: Optional[ProgressCallback] = None, **keys: Any) -> "PhaseResult": ...

__all__ = [
    "StateName",
    "State",
    "StatePhase",
    "STATES",
    "STATE_ABOUT",
    "DEFAULT_DATA_PATTERN",
    "TORTURE_RUNTIME_S",
    "state_spec",
    "phases",
    "precondition",
    "run_phase",
    "phase_key",
    "tortured_at",
]

StateName = Literal["clean", "filled", "dirty", "tortured", "trimmed"]

#: Every state, in the order each builds on the one before.
STATES: Tuple[StateName, ...] = ("clean", "filled", "dirty", "tortured", "trimmed")

#: What each state is, in one line (``ssdlab run --help``).
STATE_ABOUT: Dict[StateName, str] = {
    "clean": "secure erase",
    "filled": "clean + one sequential 128KB QD32 incompressible pass",
    "dirty": "filled + a second pass",
    "tortured": "filled + 20 min of 4KB random QD32",
    "trimmed": "dirty + TRIM of the span",
}

DEFAULT_DATA_PATTERN = "incompressible"

#: How long ``tortured`` writes at random (20 minutes).
TORTURE_RUNTIME_S = 20 * 60

_Size = Union[int, str]


class _StateOptions(TypedDict, total=False):
    #: Bytes from the start of the drive (fio size, or a percentage); None = the whole drive.
    span: Optional[_Size]
    #: The data pattern of the fill pass (default incompressible).
    data_pattern: str


# ``from`` is a Python keyword, hence the functional form.
_TrimmedFrom = TypedDict("_TrimmedFrom", {"from": StateName}, total=False)


class State(_StateOptions, _TrimmedFrom):
    """A state as a suite test names it: ``{"state": "filled", "span": "8g"}``."""

    state: StateName


@dataclass(frozen=True)
class StatePhase:
    """One phase on the way to a state.

    ``kind``: ``secure_erase``, ``write`` (an fio job over the span: ``job``)
    or ``trim`` (the span). ``name`` is the phase's jobname in results;
    ``fio_section`` its section in an fio job file."""

    kind: Literal["secure_erase", "write", "trim"]
    name: str
    fio_section: str
    job: Mapping[str, Any] = field(default_factory=dict)


_SECURE_ERASE = StatePhase("secure_erase", "precondition: secure erase", "secure-erase")
_FILL = StatePhase(
    "write", "precondition: sequential fill 128KB QD32", "precondition-fill",
    {"rw": "write", "bs": "128k", "iodepth": 32, "data_pattern": DEFAULT_DATA_PATTERN},
)
_SECOND_PASS = StatePhase(
    "write", "precondition: second sequential pass", "precondition-second-pass",
    {"rw": "write", "bs": "128k", "iodepth": 32, "data_pattern": DEFAULT_DATA_PATTERN},
)
_TORTURE = StatePhase(
    "write", "precondition: torture 4KB random QD32", "precondition-torture",
    {"rw": "randwrite", "bs": "4k", "iodepth": 32, "runtime": f"{TORTURE_RUNTIME_S}s", "time_based": 1,
     "blockalign": "4k", "data_pattern": DEFAULT_DATA_PATTERN},
)
_TRIM = StatePhase("trim", "precondition: TRIM", "precondition-trim")

#: Each state: the state it builds on (None: from scratch) and the phases it adds.
_BUILD: Dict[StateName, Tuple[Optional[StateName], Tuple[StatePhase, ...]]] = {
    "clean": (None, (_SECURE_ERASE,)),
    "filled": ("clean", (_FILL,)),
    "dirty": ("filled", (_SECOND_PASS,)),
    "tortured": ("filled", (_TORTURE,)),
    "trimmed": ("dirty", (_TRIM,)),
}


def _not_a_state(name: object) -> Exception:
    return workload_error("precondition", f"'{name}' is not a state; allowed: {', '.join(STATES)}")


#: The keys of a state given as a dict.
_STATE_KEYS = ("state", "span", "data_pattern", "from")


def state_spec(state: Union[str, Mapping[str, Any]]) -> State:
    """A state name or dict as a checked :class:`State` (WorkloadError naming
    ``precondition`` and the allowed states otherwise)."""
    spec: Dict[str, Any] = {"state": state} if isinstance(state, str) else dict(state)
    unknown = [k for k in spec if k not in _STATE_KEYS]
    if unknown:
        raise workload_error("precondition", f"unknown key '{unknown[0]}' in a state; allowed: {', '.join(_STATE_KEYS)}")
    for key in ("state", "from"):
        if key in spec and spec[key] not in STATES:
            raise _not_a_state(spec[key])
    if "state" not in spec:
        raise _not_a_state(None)
    if spec.get("from") == "trimmed":
        raise workload_error("precondition", "a trimmed state starts from another state, not from trimmed")
    return cast(State, spec)


def phases(state: Union[str, Mapping[str, Any]]) -> List[StatePhase]:
    """The phases that bring a drive to ``state``, in order (the first is a
    secure erase)."""
    spec = state_spec(state)
    out: List[StatePhase] = []
    name: Optional[StateName] = spec["state"]
    while name is not None:
        base, added = _BUILD[name]
        if name == "trimmed":
            base = spec.get("from", "dirty")
        out[:0] = added
        name = base
    pattern = spec.get("data_pattern", DEFAULT_DATA_PATTERN)
    if pattern != DEFAULT_DATA_PATTERN:
        out = [replace(p, name=f"{p.name} ({pattern})", job={**p.job, "data_pattern": pattern}) if p is _FILL else p
               for p in out]
    return out


def tortured_at(state: Mapping[str, Any], steps: Sequence[Mapping[str, Any]]) -> List[bool]:
    """For each step of a run from ``state``: whether it runs on the tortured
    drive (the run starts tortured, or a precondition step before it tortured
    it): the steps a scale times by :attr:`Scale.steady_time_scale`."""
    on = state["state"] == "tortured"
    out = []
    for step in steps:
        if step.get("action") == "precondition":
            on = step["state"] == "tortured"
        out.append(on)
    return out


def phase_key(p: StatePhase) -> str:
    """What a phase does, as a string: two states share their first phases
    (and a preconditioned drive) as far as these keys agree."""
    return json.dumps([p.kind, p.name, dict(p.job)], sort_keys=True)


def run_phase(
    sim: "Simulator",
    p: StatePhase,
    *,
    span_bytes: Optional[int] = None,
    offset_bytes: int = 0,
    progress: Optional["ProgressCallback"] = None,
    torture_runtime: Union[int, float, str, None] = None,
) -> "PhaseResult":
    """Run one phase of a state on ``sim`` (see :func:`precondition`)."""
    if p.kind == "secure_erase":
        r = sim.secure_erase()
        r.data["jobname"] = p.name
        return r
    if p.kind == "trim":
        return sim.trim(offset_bytes, span_bytes)
    size = sim.capacity_bytes - offset_bytes if span_bytes is None else span_bytes
    job: Dict[str, Any] = {k: v for k, v in p.job.items() if k != "time_based"}
    if "runtime" in job:
        if torture_runtime is not None:
            job["runtime"] = str(torture_runtime)
    else:
        job["io_size"] = size  # one pass: the engine's last I/O covers what is left of the span
    return sim.run({"offset": offset_bytes, "size": size, **job}, name=p.name, progress=progress)


def precondition(
    sim: "Simulator",
    state: Union[str, Mapping[str, Any]],
    *,
    span_bytes: Optional[int] = None,
    offset_bytes: int = 0,
    progress: Optional["ProgressCallback"] = None,
    torture_runtime: Union[int, float, str, None] = None,
) -> List["PhaseResult"]:
    """Bring ``sim`` to ``state`` over ``span_bytes`` from ``offset_bytes``
    (None: to the end of the drive); ``torture_runtime`` replaces the 20
    minutes of ``tortured`` (seconds or "60s"). Returns the phases run.

    A clone of a drive brought to a state this one builds on (the first
    phases of :func:`phases`, same span) continues with :func:`run_phase` for
    the rest and ends in the same state (``ssdlab.cluster`` shares states so)."""
    return [run_phase(sim, p, span_bytes=span_bytes, offset_bytes=offset_bytes, progress=progress,
                      torture_runtime=torture_runtime)
            for p in phases(state)]
