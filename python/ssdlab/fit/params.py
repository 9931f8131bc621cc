"""What a fit moves and what it compares: free parameters with their bounds
(``free.toml`` for controller profiles, the ``[part.range]`` of a NAND part),
the calibration rows of the drives that use them, and the drives themselves
with a set of values applied."""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence

from .. import _core
from ..drive import Drive
from ..errors import SsdlabError
from ..suite.calibrate import Published, load_table
from ..textfile import read_text

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["FREE_PATH", "FreeParameter", "Target", "FitError", "free_parameters", "profile_target",
           "drive_target", "users_of", "one_sided"]

#: The free parameters of the controller profiles (bounds and reasons).
FREE_PATH = Path(__file__).with_name("free.toml")


class FitError(SsdlabError):
    """A fit that cannot be set up (no free parameter, no row, a bad bound)."""


@dataclass(frozen=True)
class FreeParameter:
    """A dotted drive key the fit moves within ``[low, high]`` (on a log scale
    when ``log``), rounded to ``step``; ``value`` is the committed value."""

    key: str
    low: float
    high: float
    value: Any
    log: bool = True
    step: float = 0.0
    why: str = ""

    @property
    def integer(self) -> bool:
        return all(float(x).is_integer() for x in (self.low, self.high, self.step or 1.0))

    def clamp(self, x: float) -> float:
        return min(max(x, self.low), self.high)

    def snap(self, x: float) -> Any:
        """``x`` within the bounds, rounded to the step (an int for integer keys)."""
        x = self.clamp(x)
        if self.step:
            x = self.clamp(round(x / self.step) * self.step)
        return int(round(x)) if self.integer else x

    @property
    def center(self) -> Any:
        """The middle of the bounds (geometric on a log scale)."""
        return self.snap(math.sqrt(self.low * self.high) if self.log else (self.low + self.high) / 2)


def one_sided(row: Published) -> bool:
    """A rated figure the sheet gives as "up to": only a simulated figure
    above it is an error."""
    return row.kind == "rated" and "up to" in f"{row.test} {row.note}".lower()


@dataclass
class Target:
    """What one fit moves and compares: ``kind`` ``profile``, ``part`` or
    ``drive``; the drives (by the rows' drive_id) that use it, committed; the
    rows of the calibration table for those drives; and, per drive, the free
    keys that apply to it (a preset's own override of a profile value stays)."""

    kind: str
    id: str
    params: List[FreeParameter]
    rows: List[Published]
    drives: Dict[str, Drive]
    applies: Dict[str, List[str]] = field(default_factory=dict)
    #: The preset left out (cross-validation), if any.
    held_out: Optional[str] = None
    #: CMA-ES's initial step, as a share of each parameter's (log) range; None: Optuna's default (1/6), for
    #: starts far from the answer. A fit whose start the measurements already put near it searches closer.
    sigma0: Optional[float] = None

    @property
    def label(self) -> str:
        return f"{self.kind} {self.id}" + (f" without {self.held_out}" if self.held_out else "")

    def committed(self) -> Dict[str, Any]:
        return {p.key: p.value for p in self.params}

    def start(self, how: str = "committed", perturb: float = 0.0) -> Dict[str, Any]:
        """Start values: ``committed``, or ``center`` of the bounds; ``perturb``
        multiplies each by (1 + perturb) (the refit tests start off the committed values)."""
        out: Dict[str, Any] = {}
        for p in self.params:
            base = p.value if how == "committed" else p.center
            out[p.key] = p.snap(float(base) * (1.0 + perturb))
        return out

    def drives_with(self, values: Mapping[str, Any]) -> Dict[str, Drive]:
        """Every drive of the target with ``values`` applied where they apply."""
        out: Dict[str, Drive] = {}
        for drive_id, d in self.drives.items():
            changes = {k: v for k, v in values.items() if k in self.applies.get(drive_id, [])}
            out[drive_id] = d.with_changes(changes) if changes else d
        return out

    def without(self, drive_id: str) -> "Target":
        """The same target fitted on every drive but one (cross-validation)."""
        return replace(self, held_out=drive_id, rows=[r for r in self.rows if r.drive_id != drive_id],
                       drives={k: v for k, v in self.drives.items() if k != drive_id},
                       applies={k: v for k, v in self.applies.items() if k != drive_id})

    def without_all_but(self, drive_id: str) -> "Target":
        """The same target on one drive's rows only (the held-out preset)."""
        return replace(self, rows=[r for r in self.rows if r.drive_id == drive_id],
                       drives={drive_id: self.drives[drive_id]}, applies={drive_id: self.applies.get(drive_id, [])})


def _load_free(path: Path) -> Dict[str, Any]:
    text = read_text(path, "free-parameter file (TOML)", lambda f, why: FitError(f"{f}: {why}"))
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise FitError(f"{path}: {e}") from None


def _parse_entries(table: Mapping[str, Any], where: str) -> List[Dict[str, Any]]:
    out = []
    for key, spec in table.items():
        if not isinstance(spec, dict) or "low" not in spec or "high" not in spec:
            raise FitError(f"{where}: {key}: give {{ low = ..., high = ..., why = \"...\" }}")
        low, high = float(spec["low"]), float(spec["high"])
        if not 0 < low < high:
            raise FitError(f"{where}: {key}: bounds {low:g} .. {high:g} must be positive and increasing")
        out.append({"key": key, "low": low, "high": high, "log": bool(spec.get("log", True)),
                    "step": float(spec.get("step", 0)), "why": str(spec.get("why", ""))})
    return out


def _library_text(kind: str, entry_id: str) -> str:
    for k, i, _name, text in _core.library_entries():
        if k == kind and i == entry_id:
            return text
    known = sorted(i for k, i, _n, _t in _core.library_entries() if k == kind)
    raise FitError(f"unknown {kind} '{entry_id}'; known: {', '.join(known)}")


def library_values(kind: str, entry_id: str) -> Dict[str, Any]:
    """A controller profile's (``kind`` ``profile``) or NAND part's
    (``part``) values as its library file gives them, by section."""
    values: Dict[str, Any] = tomllib.loads(_library_text(kind, entry_id))
    return values


def users_of(kind: str, entry_id: str) -> List[str]:
    """The presets whose drive file names this profile or part."""
    field_name = "controller" if kind == "profile" else "nand_part"
    return [p for p in Drive.preset_ids() if Drive.load(p).config["drive"].get(field_name) == entry_id]


def _value(drive: Drive, key: str) -> Any:
    section, name = key.split(".", 1)
    try:
        v = drive.config[section][name]
    except KeyError:
        raise FitError(f"{drive.id}: no value for {key}") from None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise FitError(f"{drive.id}: {key} = {v!r} is not a number; only numbers are free")
    return v


def free_parameters(kind: str, entry_id: str, example: Drive, free_path: Optional[Path] = None) -> List[FreeParameter]:
    """The free parameters of a profile (``free.toml``) or part (its
    ``[part.range]``), with the committed value read from ``example`` (a
    drive that uses it)."""
    if kind == "profile":
        _library_text("profile", entry_id)  # an unknown profile is one clear error
        free = _load_free(free_path or FREE_PATH).get("profile", {})
        if entry_id not in free:
            raise FitError(f"profile {entry_id} declares no free parameter ({free_path or FREE_PATH})")
        entries = _parse_entries(free[entry_id], f"{free_path or FREE_PATH}: [profile.{entry_id}]")
    elif kind == "part":
        doc = tomllib.loads(_library_text("part", entry_id))
        ranges = doc.get("part", {}).get("range", {})
        if not ranges:
            raise FitError(f"part {entry_id} gives no datasheet range ([part.range]); nothing of it is free")
        entries = [{"key": f"nand.{k}", "low": float(v[0]), "high": float(v[1]), "log": True, "step": 1000.0,
                    "why": f"datasheet range of {entry_id}"} for k, v in ranges.items()]
    else:
        raise FitError(f"kind {kind}: a profile or a part")
    return [FreeParameter(value=_value(example, e["key"]), **e) for e in entries]


def _applies(drive: Drive, keys: Sequence[str], kind: str) -> List[str]:
    prov = drive.provenance
    out = []
    for k in keys:
        src = prov.get(k, "default")
        if kind == "drive" or not src.startswith("drive file"):
            out.append(k)
    return out


def profile_target(kind: str, entry_id: str, table: Optional[Path] = None, free_path: Optional[Path] = None) -> Target:
    """Fit a profile (or part): every row of the table for every preset that uses it."""
    if kind not in ("profile", "part"):
        raise FitError(f"kind {kind}: a profile or a part")
    _library_text(kind, entry_id)  # an unknown id is one clear error
    presets = users_of(kind, entry_id)
    rows = [r for r in load_table(table) if r.drive_id in presets]
    if not rows:
        raise FitError(f"no row of the calibration table concerns a preset with {kind} {entry_id} "
                       f"(presets: {', '.join(presets) or 'none'})")
    drives = {d: Drive.load(d) for d in sorted({r.drive_id for r in rows})}
    params = free_parameters(kind, entry_id, next(iter(drives.values())), free_path)
    keys = [p.key for p in params]
    return Target(kind, entry_id, params, rows, drives, {d: _applies(v, keys, kind) for d, v in drives.items()})


def drive_target(drive_spec: str, table: Path, free_path: Optional[Path] = None) -> Target:
    """Fit a user's drive file to a table of its own measurements. The free
    parameters: a ``[drive]`` table of ``free_path`` (same entries as a
    profile's), else those of the drive's controller profile (``free.toml``
    or ``free_path``), applied to the file."""
    drive = Drive.load(drive_spec)
    rows = load_table(table)
    if not rows:
        raise FitError(f"{table}: no row")
    others = sorted({r.drive_id for r in rows if Drive.load(r.drive_id) != drive})
    if others:
        raise FitError(f"{table}: every row must concern the drive fitted ({drive_spec}); rows name {', '.join(others)}")
    own = _load_free(free_path).get("drive") if free_path is not None else None
    if own:
        entries = _parse_entries(own, f"{free_path}: [drive]")
        params = [FreeParameter(value=_value(drive, e["key"]), **e) for e in entries]
    else:
        profile = drive.config["drive"].get("controller")
        if not profile:
            raise FitError(f"{drive_spec} names no controller profile (drive.controller); give --free FILE with a "
                           "[drive] table of free parameters and bounds")
        params = free_parameters("profile", profile, drive, free_path)
    drives = {d: drive for d in {r.drive_id for r in rows}}
    return Target("drive", drive_spec, params, rows, drives, {d: [p.key for p in params] for d in drives})
