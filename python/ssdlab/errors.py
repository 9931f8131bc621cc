"""Typed exceptions: one class per engine error kind (raised by ``ssdlab._core``).

Every class derives from :class:`SsdlabError`, itself a ``ValueError``.
``ConfigError`` and ``WorkloadError`` carry ``.field`` (the field named in
the message); ``TraceError`` carries ``.file``, ``.line`` and ``.field``;
``MemoryLimitError`` carries ``.needed_bytes`` and ``.limit_bytes``.

The public API raises only these for bad arguments (a wrong type, nan, a
negative or too large number, an unknown keyword: :func:`typed_arguments`),
never Python's TypeError, OverflowError or KeyError.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, TypeVar, cast

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
    "typed_arguments",
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


F = TypeVar("F", bound=Callable[..., Any])


def typed_arguments(kind: str = "workload") -> Callable[[F], F]:
    """A decorator for the public API: a call that does not fit the
    signature (an unknown keyword, a missing or extra argument) raises
    WorkloadError (``kind="config"``: ConfigError) naming the argument as
    ``.field``, instead of Python's TypeError."""
    make = config_error if kind == "config" else workload_error

    def deco(fn: F) -> F:
        sig = inspect.signature(fn)
        params = sig.parameters
        takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
        name = fn.__qualname__.replace(".__init__", "")

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                sig.bind(*args, **kwargs)
            except TypeError as e:
                unknown = [k for k in kwargs if k not in params or params[k].kind is inspect.Parameter.POSITIONAL_ONLY]
                if unknown and not takes_any:
                    allowed = ", ".join(p.name for p in params.values() if p.name != "self"
                                        and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD,
                                                           inspect.Parameter.POSITIONAL_ONLY))
                    raise make(unknown[0], f"{name}() takes no argument '{unknown[0]}'; its arguments: {allowed}") from None
                raise make("(arguments)", f"{name}(): {e}") from None
            return fn(*args, **kwargs)

        return cast(F, wrapper)

    return deco
