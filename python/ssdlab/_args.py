"""Checks of the public API's arguments, raising the typed errors of
:mod:`ssdlab.errors` (with ``.field``) for what Python or the binding would
report as TypeError, OverflowError or ValueError: a bool or float where a
whole number goes, a negative or too large number, nan or infinity, a value
that is not plain data."""

from __future__ import annotations

import math
import os
from typing import Any, Callable, Mapping

from .errors import SsdlabError, workload_error

__all__ = ["U64_MAX", "whole", "finite", "plain", "path_text", "mapping"]

#: The largest value of the engine's counters, sizes and seeds.
U64_MAX = 2**64 - 1

Make = Callable[[str, str], SsdlabError]


def whole(value: Any, field: str, low: int = 0, high: int = U64_MAX, error: Make = workload_error) -> int:
    """A whole number ``low .. high`` (not a bool, not a float)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise error(field, f"{value!r} is not a whole number")
    if not low <= value <= high:
        top = "2^64-1" if high == U64_MAX else f"{high:,}"
        raise error(field, f"{value} is outside {low:,} .. {top}")
    return value


def finite(value: Any, field: str, error: Make = workload_error) -> float:
    """A finite number (int or float, not a bool, nan or infinity)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise error(field, f"{value!r} is not a number")
    if not math.isfinite(value):
        raise error(field, f"{value} is not a finite number")
    return float(value)


def plain(value: Any, field: str, error: Make = workload_error) -> Any:
    """``value`` if it is plain data the engine takes (None, bool, a 64-bit
    whole number, a finite float, a string, lists and dicts of them); the
    typed error naming the field (dotted inside dicts) otherwise."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        if not -(2**63) <= value <= U64_MAX:
            raise error(field, f"{value} does not fit 64 bits")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise error(field, f"{value} is not a finite number")
        return value
    if isinstance(value, (list, tuple)):
        for v in value:
            plain(v, field, error)
        return value
    if isinstance(value, Mapping):
        for k, v in value.items():
            if not isinstance(k, str):
                raise error(field, f"key {k!r} is not a string")
            plain(v, f"{field}.{k}" if field else k, error)
        return value
    raise error(field, f"a value of type {type(value).__name__} is not plain data (give a number, a string, a bool, a list or a dict)")


def path_text(value: Any, field: str, error: Make = workload_error) -> str:
    """A file path (str or os.PathLike) as text."""
    if not isinstance(value, (str, os.PathLike)):
        raise error(field, f"{value!r} is not a file path (give a str or a pathlib.Path)")
    return os.fspath(value)


def mapping(value: Any, field: str, what: str, error: Make = workload_error) -> Mapping[str, Any]:
    """``value`` if it is a mapping (``what`` says what it should hold)."""
    if not isinstance(value, Mapping):
        raise error(field, f"expected {what}, not {type(value).__name__} {value!r:.60}")
    return value
