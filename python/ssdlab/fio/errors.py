"""Typed errors of the fio adapter, each a subclass of an :mod:`ssdlab.errors`
class so that ``except SsdlabError`` (and the CLI's one-line error report)
catches them:

- :class:`JobFileError` (a ``WorkloadError``): a bad fio job file; carries
  ``.file``, ``.line`` (1-based, 0 when the whole file is meant) and
  ``.field`` (the option).
- :class:`FioOutputError` (a ``TraceError``): fio output (JSON or a log) that
  cannot be read; carries ``.file``, ``.line`` and ``.field``.
- :class:`FioNotFoundError`, :class:`FioRunError` (``SsdlabError``): fio is
  missing, too old, or failed.
- :class:`UnsafeTargetError` (``SsdlabError``): a target ssdlab refuses to
  write; carries ``.target``, ``.reasons`` and ``.flag`` (the flag that would
  allow it, or None when none does).
"""

from __future__ import annotations

from typing import Optional, Sequence

from ..errors import SsdlabError, TraceError, WorkloadError

__all__ = ["JobFileError", "FioOutputError", "FioNotFoundError", "FioRunError", "UnsafeTargetError"]


class JobFileError(WorkloadError):
    """A fio job file that ssdlab cannot run: ``FILE:LINE: option 'X': why``."""

    def __init__(self, file: str, line: int, field: str, message: str) -> None:
        where = f"{file}:{line}" if line else file
        opt = f"option '{field}': " if field else ""
        super().__init__(f"{where}: {opt}{message}")
        self.file = file
        self.line = line
        self.field = field


class FioOutputError(TraceError):
    """fio output that cannot be read: ``FILE[:LINE]: field 'X': why``."""

    def __init__(self, file: str, message: str, *, line: int = 0, field: str = "") -> None:
        where = f"{file}:{line}" if line else file
        fld = f"field '{field}': " if field else ""
        super().__init__(f"{where}: {fld}{message}")
        self.file = file
        self.line = line
        self.field = field


class FioNotFoundError(SsdlabError):
    """fio is not installed (or is older than a feature needs)."""


class FioRunError(SsdlabError):
    """fio ran but failed (exit status, no output)."""

    def __init__(self, message: str, *, returncode: Optional[int] = None, stderr: str = "") -> None:
        super().__init__(message)
        self.returncode = returncode
        self.stderr = stderr


class UnsafeTargetError(SsdlabError):
    """ssdlab refuses to write a target: one message with every reason and the
    flag that would allow it (``flag`` is None when no flag does, e.g. a
    mounted filesystem)."""

    def __init__(self, target: str, reasons: Sequence[str], flag: Optional[str], *, device: bool = True) -> None:
        why = "; ".join(reasons)
        if flag:
            tail = f"pass {flag} to destroy its data"
        elif device:
            tail = "no flag allows this: free the device first"
        else:
            tail = "no flag allows this"
        super().__init__(f"refusing to write {target}: {why}; {tail}")
        self.target = target
        self.reasons = tuple(reasons)
        self.flag = flag
