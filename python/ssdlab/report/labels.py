"""Drives by product name: the drive file's ``name`` (its id when it has none),
told apart by hash when two different drives share it."""

from __future__ import annotations

from typing import Any, Dict, Mapping, Sequence, Set

__all__ = ["drive_label", "names_with_hashes", "chart_values"]


def _name(dr: Mapping[str, Any]) -> str:
    return str(dr.get("name") or dr["id"])


def names_with_hashes(docs: Sequence[Mapping[str, Any]]) -> Dict[str, Set[str]]:
    out: Dict[str, Set[str]] = {}
    for d in docs:
        out.setdefault(_name(d["drive"]), set()).add(d["drive"]["hash"])
    return out


def drive_label(doc: Mapping[str, Any], names_with_hashes: Mapping[str, Set[str]]) -> str:
    """A drive's name in charts and tables: its product name (the drive file's
    ``name``; its id if it has none), with the hash's first 8 digits when two
    different drives share it."""
    dr = doc["drive"]
    name = _name(dr)
    if len(names_with_hashes.get(name, ())) <= 1:
        return name
    return f"{name} [{dr['hash'][:8]}]" if dr.get("name") else f"{dr['id']}-{dr['hash'][:8]}"


def chart_values(docs: Sequence[Mapping[str, Any]], chart_id: str) -> Dict[str, Any]:
    """``{drive: chart}`` of one chart id across drives."""
    names = names_with_hashes(docs)
    out: Dict[str, Any] = {}
    for d in docs:
        c = d.get("charts", {}).get(chart_id)
        if c is not None:
            out[drive_label(d, names)] = c
    return out
