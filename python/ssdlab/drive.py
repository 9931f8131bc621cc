"""Drive descriptions: presets shipped in the package, user files, dicts.

A :class:`Drive` is an immutable, validated drive description. The engine
(Rust) parses and validates every description once, into the
``_core.DriveConfig`` the drive holds (its canonical JSON, hash and geometry,
and every simulator built from it, come from that one parse); Python only
finds the text and applies "what if" changes.

>>> d = Drive.load("generic-mlc-120")
>>> d.geometry["dies"]
16
>>> slow = d.with_changes({"nand.tprog_ns": 1_800_000})
>>> slow.hash != d.hash
True
"""

from __future__ import annotations

import copy
import json
import os
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Dict, List, Mapping, Tuple, Union

from . import _core
from ._args import mapping, plain
from .errors import ConfigError, config_error, typed_arguments
from .textfile import read_text

__all__ = ["Drive", "PresetInfo", "DriveSpec"]

DriveSpec = Union["Drive", str, "os.PathLike[str]", Mapping[str, Any]]


@dataclass(frozen=True)
class PresetInfo:
    """One preset: its id and a one-line description."""

    id: str
    name: str
    description: str
    user_capacity_bytes: int
    dies: int


def _preset_dir() -> Any:
    return resources.files("ssdlab").joinpath("drives")


def _preset_texts() -> Dict[str, str]:
    out: Dict[str, str] = {}
    for entry in _preset_dir().iterdir():
        name = entry.name
        if name.endswith(".toml"):
            out[name[: -len(".toml")]] = entry.read_text(encoding="utf-8")
    return dict(sorted(out.items()))


def _drive_error(message: str) -> ConfigError:
    """An error about which drive was asked for (field "drive")."""
    e = ConfigError(message)
    e.field = "drive"  # type: ignore[attr-defined]
    return e


def _without_json_position(e: ConfigError) -> ConfigError:
    """The engine names the field ("nand.tprog_us"); its JSON position ("at
    line 1 column 603") means nothing for a dict or a dotted-key change."""
    new = ConfigError(re.sub(r" at line \d+ column \d+$", "", str(e)))
    new.field = getattr(e, "field", None)  # type: ignore[attr-defined]
    return new


def _reraise_with_source(e: ConfigError, source: str) -> ConfigError:
    new = ConfigError(f"{source}: {e}")
    new.field = getattr(e, "field", None)  # type: ignore[attr-defined]
    return new


#: The sections of a drive description (DriveConfig); data_reduction is optional.
DRIVE_SECTIONS = ("drive", "host", "controller", "nand", "ftl", "slc_cache", "data_reduction", "power")


class Drive:
    """A validated drive description (see ``ssdlab drive show ID``)."""

    __slots__ = ("_core", "_config", "_geometry", "_doc", "source", "changes")

    def __init__(
        self,
        core: "_core.DriveConfig",
        source: str = "<dict>",
        changes: Mapping[str, Any] | None = None,
        doc: Mapping[str, Any] | None = None,
    ):
        #: The engine's validated description (parsed once).
        self._core: _core.DriveConfig = core
        #: The description as written (a file's or dict's own values, before
        #: composition with its controller profile and NAND part).
        self._doc: Dict[str, Any] | None = copy.deepcopy(dict(doc)) if doc is not None else None
        self._config: Dict[str, Any] = json.loads(core.json)
        self._geometry: Dict[str, Any] | None = None
        #: Where the description came from: a preset id, a file path or "<dict>".
        self.source: str = source
        #: The dotted-key changes applied by :meth:`with_changes` (in order).
        self.changes: Dict[str, Any] = dict(changes or {})

    # -- loading -----------------------------------------------------------

    @classmethod
    @typed_arguments("config")
    def load(cls, spec: DriveSpec) -> "Drive":
        """A drive from a preset id (``generic-mlc-120``), a ``.toml`` or
        ``.json`` file, a dict, or a Drive (returned as is)."""
        if isinstance(spec, Drive):
            return spec
        if isinstance(spec, Mapping):
            plain(spec, "", config_error)
            try:
                core = _core.DriveConfig.from_json(json.dumps(dict(spec)))
            except ConfigError as e:
                raise _without_json_position(e) from None
            return cls(core, "<dict>", doc=spec)
        if not isinstance(spec, (str, os.PathLike)):
            raise config_error("drive", f"expected a preset id, a file path or a dict, not {type(spec).__name__}")
        text_spec = os.fspath(spec)
        if not text_spec.strip():
            raise _drive_error("an empty drive name: give a preset id ('ssdlab drives') or a .toml/.json file")
        presets = _preset_texts()
        looks_like_path = isinstance(spec, os.PathLike) or os.sep in text_spec or text_spec.endswith((".toml", ".json"))
        if not looks_like_path and text_spec in presets:
            try:
                text = presets[text_spec]
                return cls(_core.DriveConfig.from_toml(text), text_spec, doc=_core.drive_document(text))
            except ConfigError as e:  # a broken preset is a packaging bug; say which
                raise _reraise_with_source(e, f"preset {text_spec}") from None
        path = Path(text_spec)
        if path.is_dir():
            raise _drive_error(f"{text_spec} is a directory, not a drive file (a .toml or .json file, or a preset id)")
        if path.exists() or path.is_symlink():  # a dangling or looping link: read_text says which
            return cls.from_file(path)
        if looks_like_path:
            raise _drive_error(f"drive file not found: {text_spec}")
        raise _drive_error(f"unknown drive '{text_spec}': not a preset nor a file; presets: {', '.join(presets) or '(none)'}")

    @classmethod
    @typed_arguments("config")
    def from_file(cls, path: Union[str, "os.PathLike[str]"]) -> "Drive":
        """A drive from a TOML or JSON file (chosen by extension, else by content)."""
        p = Path(path)
        text = read_text(p, "drive file (TOML or JSON)", lambda f, why: _drive_error(f"{f}: {why}"))
        if not text.strip():
            raise _drive_error(f"{p}: an empty file; a drive file has [drive], [host], [controller], [nand] and [ftl] "
                               "sections (docs/drive-file.md)")
        as_json = p.suffix.lower() == ".json" or (p.suffix.lower() != ".toml" and text.lstrip().startswith("{"))
        try:
            core = _core.DriveConfig.from_json(text) if as_json else _core.DriveConfig.from_toml(text)
            doc = json.loads(text) if as_json else _core.drive_document(text)
        except ConfigError as e:
            raise _reraise_with_source(e, str(p)) from None
        except ValueError as e:  # invalid JSON text
            raise config_error("(top level)", f"{p}: {e}") from None
        return cls(core, str(p), doc=doc)

    @staticmethod
    def presets() -> List[PresetInfo]:
        """The presets shipped in ``ssdlab/drives/``, sorted by id."""
        out = []
        for pid in _preset_texts():
            d = Drive.load(pid)
            out.append(
                PresetInfo(
                    id=pid,
                    name=d.name,
                    description=d.description,
                    user_capacity_bytes=d.capacity_bytes,
                    dies=int(d.geometry["dies_total"]),
                )
            )
        return out

    @staticmethod
    def preset_ids() -> List[str]:
        return list(_preset_texts())

    # -- what if -----------------------------------------------------------

    @typed_arguments("config")
    def with_changes(self, changes: Mapping[str, Any]) -> "Drive":
        """A new drive with dotted-key changes, e.g. ``{"nand.tprog_ns": 1800000,
        "ftl.gc_policy": "fifo"}``. The engine validates the result: an
        unknown key or a bad value raises ConfigError naming the field.

        Changes apply to the description as written, then it is composed
        again: ``{"drive.nand_part": "hynix-32nm"}`` swaps the part and keeps
        the counts; a value the profile or part sets becomes an override."""
        mapping(changes, "changes", "a dict of dotted keys, e.g. {'nand.tprog_ns': 1800000}", config_error)
        cfg = copy.deepcopy(self._doc if self._doc is not None else self._config)
        for key, value in changes.items():
            if not isinstance(key, str):
                raise config_error(str(key), f"a change key is a string SECTION.FIELD, e.g. 'nand.tprog_ns', not {key!r}")
            plain(value, key, config_error)
            parts = key.split(".")
            if len(parts) < 2 or not all(parts):
                raise config_error(key, "a change key is SECTION.FIELD, e.g. nand.tprog_ns")
            node: Any = cfg
            for i, part in enumerate(parts[:-1]):
                if part not in node and part in self._config and i == 0:
                    node[part] = {}  # a section the file leaves to its profile or part
                if part not in node or not isinstance(node[part], dict):
                    # at the top, every section a drive has (a file may leave some to its profile or part)
                    known = [*self._config, *DRIVE_SECTIONS] if i == 0 else []
                    sections = list(dict.fromkeys([*known, *(k for k, v in node.items() if isinstance(v, dict))]))
                    if not sections:
                        raise config_error(".".join(parts[: i + 1]), f"'{'.'.join(parts[:i])}' has fields, not sections: give "
                                                                     f"{'.'.join(parts[:i])}.FIELD")
                    raise config_error(".".join(parts[: i + 1]), f"unknown section in '{key}'; sections: {', '.join(sections)}")
                node = node[part]
            node[parts[-1]] = value
        merged = dict(self.changes)
        merged.update(changes)
        try:
            return Drive(_core.DriveConfig.from_json(json.dumps(cfg)), self.source, merged, doc=cfg)
        except ConfigError as e:
            new = _without_json_position(e)
            if getattr(new, "field", None) in changes:  # the value came from the change, not the drive file
                new = ConfigError(str(new).replace("(value from drive file", "(value from the change"))
                new.field = getattr(e, "field", None)  # type: ignore[attr-defined]
            raise new from None

    # -- properties ----------------------------------------------------------

    @property
    def id(self) -> str:
        return str(self._config["drive"]["id"])

    @property
    def name(self) -> str:
        return str(self._config["drive"]["name"])

    @property
    def description(self) -> str:
        return str(self._config["drive"].get("description", ""))

    @property
    def capacity_bytes(self) -> int:
        return int(self._config["drive"]["user_capacity_bytes"])

    @property
    def is_nvme(self) -> bool:
        """An NVMe drive: every job gets its own queue pair."""
        return bool(self._config["host"].get("interface") == "nvme")

    @property
    def config(self) -> Dict[str, Any]:
        """The full description as a dict (a copy; units last in every key)."""
        return copy.deepcopy(self._config)

    @property
    def provenance(self) -> Dict[str, str]:
        """Where each value comes from, by dotted key: ``profile ID`` (the
        controller profile), ``part ID`` (the NAND part), ``drive file``,
        ``drive file (over ...)`` for an override, ``change`` for a
        :meth:`with_changes` key, ``derived: ...`` or ``default``."""
        doc = self._doc if self._doc is not None else self._config
        pairs, _ = _core.drive_provenance(doc)
        out = dict(pairs)
        for k in self.changes:
            if k in out:
                src = out[k]
                out[k] = "change" + (src[len("drive file") :] if src.startswith("drive file (") else "")
        return out

    @property
    def overrides(self) -> List[Tuple[str, str, str]]:
        """Values the description sets that its profile or part also sets:
        ``(key, the library's value, where)``. A shipped preset has none."""
        doc = self._doc if self._doc is not None else self._config
        return list(_core.drive_provenance(doc)[1])

    @property
    def json(self) -> str:
        """Canonical JSON text (what the hash is computed from)."""
        return self._core.json

    @property
    def core(self) -> "_core.DriveConfig":
        """The engine's validated description (what simulators are built from)."""
        return self._core

    @property
    def hash(self) -> str:
        """Stable 16-hex-digit hash of the canonical description."""
        return self._core.hash

    @property
    def geometry(self) -> Dict[str, Any]:
        """Derived geometry: dies, raw/user/spare bytes, spare_fraction, 4KB
        slots, blocks, and memory estimates."""
        if self._geometry is None:
            self._geometry = self._core.geometry
        return dict(self._geometry)

    @property
    def memory_estimate_bytes(self) -> int:
        """RAM the simulator needs for this drive (normal mode)."""
        return int(self.geometry["memory_estimate_bytes"])

    @property
    def memory_estimate_check_bytes(self) -> int:
        """RAM the simulator needs in checking mode."""
        return int(self.geometry["memory_estimate_check_bytes"])

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Drive) and other.json == self.json

    def __hash__(self) -> int:
        return hash(self.json)

    def __repr__(self) -> str:
        extra = f", changes={self.changes!r}" if self.changes else ""
        return f"Drive({self.id!r}, hash={self.hash!r}{extra})"
