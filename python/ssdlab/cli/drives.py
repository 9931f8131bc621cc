"""``ssdlab drives``, ``ssdlab drive show`` and ``ssdlab drive parts``: the
presets, one drive's description, and the shared library of controller
profiles and NAND parts."""

from __future__ import annotations

import argparse
from typing import Any, Dict, List

from .. import _core
from ..drive import Drive
from ..text import format_drive, format_library, format_presets
from .flags import EXIT_OK, UsageError, add_json, add_settings, load_drive, print_json

__all__ = ["add_parsers"]


def add_parsers(sub: Any) -> None:
    d = sub.add_parser("drives", help="list the drive presets")
    add_json(d)
    d.set_defaults(func=cmd_drives)
    ds = sub.add_parser("drive", help="show a drive description")
    dsub = ds.add_subparsers(dest="drive_cmd", metavar="{show,parts}")
    dsub.required = True
    show = dsub.add_parser("show", help="full description and derived geometry of a preset or file")
    show.add_argument("drive", help="preset id or .toml/.json file")
    add_settings(show, "change a field first (repeatable)")
    add_json(show)
    show.set_defaults(func=cmd_drive_show)
    parts = dsub.add_parser("parts", help="the shared library: controller profiles and NAND parts (or one of them in full)")
    parts.add_argument("id", nargs="?", help="a profile or part id: print its file")
    add_json(parts)
    parts.set_defaults(func=cmd_drive_parts)


def cmd_drives(args: argparse.Namespace) -> int:
    presets = Drive.presets()
    if args.json:
        print_json([{"id": p.id, "name": p.name, "description": p.description,
                     "user_capacity_bytes": p.user_capacity_bytes, "dies": p.dies} for p in presets])
    else:
        print(format_presets(presets))
    return EXIT_OK


def cmd_drive_show(args: argparse.Namespace) -> int:
    d = load_drive(args.drive, args.set)
    if args.json:
        print_json({"id": d.id, "source": d.source, "hash": d.hash, "changes": d.changes, "config": d.config,
                    "provenance": d.provenance, "overrides": [list(o) for o in d.overrides], "geometry": d.geometry})
    else:
        print(format_drive(d))
    return EXIT_OK


def cmd_drive_parts(args: argparse.Namespace) -> int:
    entries = _core.library_entries()
    if args.id:
        found = [e for e in entries if e[1] == args.id]
        if not found:
            raise UsageError(f"argument id: unknown profile or part '{args.id}'; known: {', '.join(e[1] for e in entries)}")
        kind, pid, name, text = found[0]
        if args.json:
            print_json({"kind": kind, "id": pid, "name": name, "text": text})
        else:
            print(text, end="")
        return EXIT_OK
    users: Dict[str, List[str]] = {}
    for pid in Drive.preset_ids():
        cfg = Drive.load(pid).config["drive"]
        for key in ("controller", "nand_part"):
            if key in cfg:
                users.setdefault(cfg[key], []).append(pid)
    if args.json:
        print_json([{"kind": k, "id": i, "name": n, "presets": users.get(i, [])} for k, i, n, _ in entries])
    else:
        print(format_library(entries, users))
    return EXIT_OK
