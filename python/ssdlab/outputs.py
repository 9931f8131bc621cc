"""Every file the lab writes goes through here: one rule for outputs.

The rule (docs/safety.md): an output is a regular file or a new name in an
existing directory. A block or character device, a FIFO or a socket is
refused, whatever symlinks lead there, and no flag allows it; nothing is
ever renamed onto a path that is not a regular file. Files are written
atomically (a hidden temporary file beside the real one, then a rename), so
a kill, a full disk or an error leaves the old file or the new one, never a
piece, and no temporary file. A symlink to a regular file is followed: the
file it names is replaced, the link stays.

An output directory is held by one run at a time (:func:`lock_dir`): a
second run into it is refused with the holder's process id and command.

API: :class:`OutputError`; :func:`refuse_special` ``(path, what)``;
:func:`check_file` / :func:`check_dir` ``(path, what) -> Path`` (the real
path to write); :func:`atomic_open` (a context manager giving a file
object), :func:`write_text`, :func:`write_bytes`; :func:`lock_dir`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import IO, Any, Iterator, Optional, Union

from .errors import SsdlabError

__all__ = ["OutputError", "refuse_special", "check_file", "check_dir", "atomic_open", "write_text", "write_bytes", "replace_into", "lock_dir",
           "LOCK_NAME"]

PathLike = Union[str, "os.PathLike[str]"]

#: The lock file a run keeps in its output directory while it writes there.
LOCK_NAME = ".ssdlab.lock"


class OutputError(SsdlabError):
    """An output path the lab will not write, or a write that failed (the
    message names the path and what was kept)."""


def _kind(mode: int) -> Optional[str]:
    """What a special node is, in words (None: a regular file or a directory)."""
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    return "not a regular file"


def _real(path: PathLike, what: str) -> Path:
    """``path`` with every symlink resolved; a symlink loop is an error."""
    p = os.fspath(path)
    try:
        return Path(os.path.realpath(p, strict=False) if sys.version_info >= (3, 10) else os.path.realpath(p))
    except OSError as e:  # pragma: no cover - realpath(strict=False) raises only on odd systems
        raise OutputError(f"{what} {p}: {e.strerror or e}") from None


def refuse_special(path: PathLike, what: str = "output") -> None:
    """Raise :class:`OutputError` when ``path``, or what its symlinks lead to,
    is a device, a FIFO or a socket, or when its symlinks loop."""
    p = os.fspath(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        st = None
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise OutputError(f"{what} {p}: a loop of symbolic links; give a file name") from None
        if e.errno == errno.ENOTDIR:
            part = next((q for q in Path(os.path.abspath(p)).parents if q.exists() and not q.is_dir()), Path(p).parent)
            raise OutputError(f"cannot create {what} {p}: {part} is not a directory") from None
        raise OutputError(f"{what} {p}: {e.strerror or e}") from None
    if st is None:  # a new name (or a dangling link: the file it names is created)
        return
    kind = _kind(st.st_mode)
    if kind is not None:
        real = _real(p, what)
        via = f" (through symbolic links to {real})" if str(real) != os.path.abspath(p) else ""
        raise OutputError(f"{what} {p} is {kind}{via}; the lab writes only regular files and new files in a directory, "
                          "never a device, FIFO or socket")


def check_file(path: PathLike, what: str = "output") -> Path:
    """The real path a file output is written to (symlinks followed), after
    :func:`refuse_special`; a directory is an error."""
    refuse_special(path, what)
    real = _real(path, what)
    if real.is_dir():
        raise OutputError(f"{what} {os.fspath(path)} is a directory; give a file name")
    return real


def check_dir(path: PathLike, what: str = "output directory") -> Path:
    """The real path of an output directory (created with its parents), after
    :func:`refuse_special`; an existing file there is an error."""
    refuse_special(path, what)
    real = _real(path, what)
    if real.exists() and not real.is_dir():
        raise OutputError(f"{what} {os.fspath(path)} exists and is not a directory")
    try:
        real.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(f"cannot create {what} {os.fspath(path)}: {e.strerror or e}") from None
    return real


_WRITE_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO)


def _failed(path: PathLike, e: OSError) -> OutputError:
    why = e.strerror or str(e)
    if e.errno == errno.ENOSPC:
        why = "no space left on device"
    elif e.errno == errno.EDQUOT:
        why = "disk quota exceeded"
    return OutputError(f"cannot write {os.fspath(path)}: {why}; nothing was written to it (an earlier version, if any, is kept)")


def replace_into(tmp: PathLike, real: PathLike, what: str = "output") -> None:
    """Rename the finished temporary file ``tmp`` onto ``real``, with the mode
    a new file gets (or the old file's); ``real`` is checked again first, as
    the node may have changed since: never a rename onto a device, FIFO or
    socket."""
    refuse_special(real, what)
    try:
        mode_bits = stat.S_IMODE(os.stat(real).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode_bits = 0o666 & ~umask
    os.chmod(tmp, mode_bits)
    os.replace(tmp, real)


@contextlib.contextmanager
def atomic_open(path: PathLike, mode: str = "w", *, what: str = "output", **kwargs: Any) -> Iterator[IO[Any]]:
    """A file object whose content replaces ``path`` when the block ends
    without an error; on an error (or Ctrl-C) the temporary file is removed and
    ``path`` is left as it was. ``mode`` is "w" or "wb"; ``kwargs`` go to
    :func:`open` (encoding, newline)."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_open: mode {mode!r} (w or wb)")
    real = check_file(path, what)
    real.parent.mkdir(parents=True, exist_ok=True)
    if "b" not in mode:
        kwargs.setdefault("encoding", "utf-8")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".tmp", dir=real.parent)
    except OSError as e:
        raise _failed(path, e) from None
    done = False
    try:
        try:
            with os.fdopen(fd, mode, **kwargs) as f:
                try:
                    yield f
                except OSError as e:
                    # the body's own errors pass unchanged, but a full disk while it wrote is this file's
                    if e.errno in _WRITE_ERRNOS:
                        raise _failed(path, e) from None
                    raise
                f.flush()
            replace_into(tmp, real, what)
            done = True
        except OSError as e:
            raise _failed(path, e) from None
    finally:
        if not done:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def write_text(path: PathLike, text: str, *, what: str = "output", encoding: str = "utf-8") -> None:
    """``text`` to ``path``, atomically (:func:`atomic_open`)."""
    with atomic_open(path, "w", what=what, encoding=encoding) as f:
        f.write(text)


def write_bytes(path: PathLike, data: bytes, *, what: str = "output") -> None:
    """``data`` to ``path``, atomically (:func:`atomic_open`)."""
    with atomic_open(path, "wb", what=what) as f:
        f.write(data)


class _DirLock:
    """An exclusive ``flock`` on ``DIR/.ssdlab.lock`` (released by the kernel
    if the process dies, so a lock is never stale)."""

    def __init__(self, directory: Path, command: str) -> None:
        self.path = directory / LOCK_NAME
        self.command = command
        self.fd: Optional[int] = None

    def acquire(self) -> None:
        import fcntl

        refuse_special(self.path, "lock file")
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            try:
                holder = os.read(fd, 4096).decode("utf-8", "replace").strip()
            finally:
                os.close(fd)
            if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                pid, _, cmd = holder.partition("\n")
                who = f"process {pid}" + (f" ({cmd})" if cmd else "") if pid else "another process"
                raise OutputError(f"{self.path.parent} is in use by another ssdlab run: {who}; wait for it to finish or "
                                  "give another output directory") from None
            raise OutputError(f"cannot lock {self.path}: {e.strerror or e}") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n{self.command}\n".encode())
        self.fd = fd

    def release(self) -> None:
        if self.fd is None:
            return
        with contextlib.suppress(OSError):
            os.unlink(self.path)
        os.close(self.fd)
        self.fd = None


@contextlib.contextmanager
def lock_dir(directory: PathLike, command: str = "") -> Iterator[Path]:
    """Hold ``directory`` (created if missing) for this run: another run that
    asks for it meanwhile gets an :class:`OutputError` naming this process."""
    real = check_dir(directory)
    lock = _DirLock(real, command)
    lock.acquire()
    try:
        yield real
    finally:
        lock.release()
