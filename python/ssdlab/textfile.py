"""The text files a user names (drive files, calibration tables, fio job
files, free-parameter files): read whole, with one error naming the file and
the real problem: not found, a directory, not a text file (binary, or not
UTF-8), or unreadable (with the system's reason)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Union

__all__ = ["read_text"]


def read_text(path: Union[str, "os.PathLike[str]"], what: str, error: Callable[[str, str], Exception]) -> str:
    """The UTF-8 text of ``path``; ``error(path, reason)`` builds the
    exception raised otherwise (``what`` names the file's role, e.g. "drive
    file"; the reason reads after "PATH: ")."""
    p = Path(path)
    if p.is_dir():
        raise error(str(p), f"a directory, not a {what}")
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise error(str(p), f"no such {what}") from None
    except OSError as e:
        raise error(str(p), f"cannot read the {what}: {e.strerror or e}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise error(str(p), f"not a text file (byte 0x{data[e.start]:02x} at offset {e.start} is not UTF-8); "
                            f"a {what} is UTF-8 text") from None
    nul = text.find("\0")
    if nul >= 0:
        raise error(str(p), f"not a text file (a NUL byte at offset {nul}); a {what} is UTF-8 text")
    return text
