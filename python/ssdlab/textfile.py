"""The text files a user names (drive files, calibration tables, fio job
files, free-parameter files): read whole, with one error naming the file and
the real problem: not found, a directory, not a text file (binary, or not
UTF-8), or unreadable (with the system's reason)."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Callable, Union

__all__ = ["read_text"]


def read_text(path: Union[str, "os.PathLike[str]"], what: str, error: Callable[[str, str], Exception]) -> str:
    """The UTF-8 text of ``path``; ``error(path, reason)`` builds the
    exception raised otherwise (``what`` names the file's role, e.g. "drive
    file"; the reason reads after "PATH: ")."""
    p = Path(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        if p.is_symlink():
            raise error(str(p), f"a symbolic link to {os.readlink(p)}, which does not exist") from None
        raise error(str(p), f"no such {what}") from None
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise error(str(p), f"a loop of symbolic links, not a {what}") from None
        raise error(str(p), f"cannot read the {what}: {e.strerror or e}") from None
    if stat.S_ISDIR(st.st_mode):
        raise error(str(p), f"a directory, not a {what}")
    if not stat.S_ISREG(st.st_mode):
        # reading a FIFO would wait for a writer for ever, a device would read its contents
        kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(st.st_mode) else "a device" if stat.S_ISBLK(st.st_mode) or stat.S_ISCHR(st.st_mode)
                else "a socket" if stat.S_ISSOCK(st.st_mode) else "not a regular file")
        raise error(str(p), f"{kind}, not a {what}: give a regular file")
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
