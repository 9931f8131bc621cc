"""Typed exceptions: one class per engine error kind (raised by ``ssdlab._core``).

Every class derives from :class:`SsdlabError`, itself a ``ValueError``.
``ConfigError`` and ``WorkloadError`` carry ``.field`` (the field named in
the message); ``TraceError`` carries ``.file``, ``.line`` and ``.field``;
``MemoryLimitError`` carries ``.needed_bytes`` and ``.limit_bytes``.
"""

from __future__ import annotations

from ._core import (
    ConfigError,
    DriveError,
    IntegrityError,
    MemoryLimitError,
    SsdlabError,
    TraceError,
    WorkloadError,
)

__all__ = [
    "SsdlabError",
    "ConfigError",
    "WorkloadError",
    "MemoryLimitError",
    "IntegrityError",
    "TraceError",
    "DriveError",
    "config_error",
    "workload_error",
]


def config_error(field: str, message: str) -> ConfigError:
    """A ConfigError raised from Python, worded like the engine's."""
    e = ConfigError(f"drive field '{field}': {message}")
    e.field = field  # type: ignore[attr-defined]
    return e


def workload_error(field: str, message: str) -> WorkloadError:
    """A WorkloadError raised from Python, worded like the engine's."""
    e = WorkloadError(f"workload field '{field}': {message}")
    e.field = field  # type: ignore[attr-defined]
    return e
