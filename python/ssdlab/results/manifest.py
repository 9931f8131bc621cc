"""The manifest that makes every result reproducible: versions, the seed, the
drive's id and hash, any drive changes, the exact command line and a
timestamp (STYLE.md: one seed; every result records what reproduces it)."""

from __future__ import annotations

import datetime as _dt
import os
import platform
import shlex
import sys
from typing import Any, Dict, Mapping, Optional, Sequence

from .. import _core

__all__ = ["manifest", "command_line", "ssdlab_version"]


def ssdlab_version() -> str:
    """The installed package's version (falls back to the engine's)."""
    try:
        from importlib.metadata import version

        return version("ssdlab")
    except Exception:  # not installed as a distribution (e.g. in-tree use)
        return _core.version()


def command_line(argv: Optional[Sequence[str]] = None) -> str:
    """The command that produced this process, shell-quoted: ``ssdlab ...``
    when run through the ``ssdlab`` entry point or ``python -m ssdlab``, else
    ``python ARGV...``."""
    args = list(sys.argv if argv is None else argv)
    if not args:
        return "python"
    prog = os.path.basename(args[0])
    if prog in ("ssdlab", "__main__.py", "-m") or prog.startswith("ssdlab"):
        return shlex.join(["ssdlab", *args[1:]])
    return shlex.join([os.path.basename(sys.executable) or "python", *args])


def manifest(
    *,
    seed: int,
    drive_id: str,
    drive_hash: str,
    command: Optional[str] = None,
    check: bool = False,
    drive_changes: Optional[Mapping[str, Any]] = None,
    extra: Optional[Mapping[str, Any]] = None,
) -> Dict[str, Any]:
    """What a result needs to be reproduced and traced back."""
    m: Dict[str, Any] = {
        "ssdlab_version": ssdlab_version(),
        "engine_version": _core.version(),
        "seed": seed,
        "drive_id": drive_id,
        "drive_hash": drive_hash,
        "drive_changes": dict(drive_changes or {}),
        "checking_mode": check,
        "command": command if command is not None else command_line(),
        "timestamp": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "units": "MB/s = 1e6 B/s; GB = 1e9 B; sizes in jobs: k/m/g = 1024-based (fio); times in ns",
    }
    if extra:
        m.update(extra)
    return m
