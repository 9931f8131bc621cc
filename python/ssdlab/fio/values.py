"""fio's value grammar: sizes (``kb_base``, ``N%``), times, integer ranges,
block-size splits and per-direction lists, each typed by its option's spec."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Optional, Tuple, Union

from .options import OptionSpec


@dataclass(frozen=True)
class Percent:
    """A size given as a share of the target (fio's ``size=50%``)."""

    percent: float

    def bytes_of(self, capacity_bytes: int, align_bytes: int = 512) -> int:
        b = int(capacity_bytes * self.percent / 100.0)
        return b // align_bytes * align_bytes


@dataclass(frozen=True)
class PerDirection:
    """``bs``/``bssplit`` of a mixed job whose reads and writes differ (fio's
    ``READ,WRITE`` values): each direction's value as the one-value form."""

    read: Union[int, Tuple[Tuple[int, int], ...]]
    write: Union[int, Tuple[Tuple[int, int], ...]]


#: A typed option value.
Value = Union[int, bool, str, Percent, PerDirection, Tuple[Tuple[int, int], ...], Tuple[float, ...]]



def rw_base(rw: object) -> str:
    """The mode of an ``rw`` value without fio's ``:N`` modifier."""
    return str(rw).split(":", 1)[0].strip()


_SIZE_RE = re.compile(r"^(0x[0-9a-f]+|\d+)([a-z]*)$")


def _mult(suffix: str, kb_base: int) -> Optional[int]:
    s = suffix[:-1] if suffix.endswith("b") and len(suffix) > 1 else suffix
    if suffix == "b" or suffix == "":
        return 1
    powers = {"k": 1, "m": 2, "g": 3, "t": 4, "p": 5}
    if s in powers:
        return int((1024 if kb_base == 1024 else 1000) ** powers[s])
    if len(s) == 2 and s[1] == "i" and s[0] in powers:
        return int((1000 if kb_base == 1024 else 1024) ** powers[s[0]])
    return None


def parse_size(text: str, *, kb_base: int = 1024, percent_ok: bool = False) -> Union[int, Percent]:
    """A fio size: ``4096``, ``4k``, ``4kb``, ``1m``, ``0x1000``, ``50%``.
    Raises ValueError with the reason."""
    t = text.strip().lower()
    if t.endswith("%"):
        if not percent_ok:
            raise ValueError(f"'{text}': a percentage is not allowed here")
        try:
            pct = float(t[:-1])
        except ValueError:
            raise ValueError(f"'{text}' is not a percentage") from None
        if not 0 < pct <= 100:
            raise ValueError(f"'{text}': a percentage must be above 0 and at most 100")
        return Percent(pct)
    m = _SIZE_RE.match(t)
    if not m:
        if re.match(r"^\d+\.\d+", t):
            raise ValueError(f"'{text}': fio reads only the whole part of a number (it would take {t.split('.')[0]}...); "
                             "give a whole number of bytes or units")
        raise ValueError(f"'{text}' is not a size: give bytes or a number with k, m, g, t (powers of 1024 as fio), e.g. 4k")
    num = int(m.group(1), 16) if m.group(1).startswith("0x") else int(m.group(1))
    mult = _mult(m.group(2), kb_base)
    if mult is None:
        raise ValueError(f"'{text}': unknown unit '{m.group(2)}'; use k, m, g, t, p (powers of 1024 as fio) or ki, mi, gi (powers of 1000)")
    return num * mult


_TIME_UNITS_US = {"": 1_000_000, "us": 1, "usec": 1, "ms": 1000, "msec": 1000, "s": 1_000_000, "m": 60_000_000,
                  "h": 3_600_000_000, "d": 86_400_000_000}


def parse_time_ns(text: str) -> int:
    """A fio time: a bare number is seconds; suffixes us/usec, ms/msec, s, m, h, d."""
    t = text.strip().lower()
    m = re.match(r"^(\d+)([a-z]*)$", t)
    if not m:
        if re.match(r"^\d+\.\d+", t):
            raise ValueError(f"'{text}': fio reads only the whole part of a number; write e.g. 1500ms")
        raise ValueError(f"'{text}' is not a time: give seconds or a number with us, ms, s, m, h or d, e.g. 60 or 500ms")
    unit = m.group(2)
    if unit not in _TIME_UNITS_US:
        raise ValueError(f"'{text}': unknown unit '{unit}' (fio would read it as microseconds); use us, ms, s, m, h or d")
    return int(m.group(1)) * _TIME_UNITS_US[unit] * 1000


def _parse_int(text: str) -> int:
    t = text.strip().lower()
    try:
        return int(t, 16) if t.startswith("0x") else int(t)
    except ValueError:
        raise ValueError(f"'{text}' is not a whole number") from None


def _parse_bool(text: Optional[str]) -> bool:
    if text is None:
        return True
    t = text.strip()
    if t in ("1", "0"):
        return t == "1"
    raise ValueError(f"'{text}' is not a boolean: give 1 or 0 (or the bare option name for 1)")


_READ_MODES = ("read", "randread")
_WRITE_MODES = ("write", "randwrite")
_TRIM_MODES = ("trim", "randtrim")


def _for_direction(text: str, rw: str, per_direction: bool = False) -> Union[str, Tuple[str, str]]:
    """fio's ``READ,WRITE,TRIM`` values: the one of the job's direction (a
    value not followed by a comma applies to the directions after it; an
    empty one is fio's default, returned as ""). A mixed job whose
    directions differ gets (read, write) when ``per_direction`` (the engine
    draws each direction's sizes), else it is refused."""
    parts = text.split(",")

    def part(i: int) -> str:
        if i < len(parts):
            return parts[i].strip()
        return "" if text.rstrip().endswith(",") else parts[-1].strip()

    base = rw_base(rw)
    dirs = [0] if base in _READ_MODES else [1] if base in _WRITE_MODES else [2] if base in _TRIM_MODES else \
        [2, 1] if base in ("trimwrite", "randtrimwrite") else [0, 1]
    vals = {part(i) for i in dirs}
    if len(vals) > 1 and per_direction and dirs == [0, 1]:
        return part(0), part(1)
    if len(vals) > 1:
        raise ValueError(f"'{text}': different values for the directions of a mixed job (rw={base}) are not simulated yet; "
                         "give one value")
    return vals.pop()


def parse_value(spec: OptionSpec, text: Optional[str], kb_base: int, rw: str = "read") -> Value:
    """One option's value as written (None for a bare flag), typed by its spec."""
    if spec.kind == "bool":
        return _parse_bool(text)
    if spec.kind == "any":
        return True if text is None else text
    if text is None:
        if spec.name in ("write_iops_log", "write_bw_log", "write_lat_log", "write_clat_log", "write_slat_log"):
            return ""  # fio: the job name is the log's name
        raise ValueError("needs a value (key=value)")
    if spec.kind == "str":
        return text
    if text.strip() == "":
        raise ValueError("has an empty value")
    if spec.kind == "choice":
        t = text.strip()
        if spec.name == "rw":
            t = t.replace(" ", "")
            base = rw_base(t)
            if base not in spec.choices:
                raise ValueError(f"'{t}' is not allowed; allowed: {', '.join(spec.choices)}")
            return t  # the engine checks the ':N' modifier
        if t not in spec.choices:
            raise ValueError(f"'{t}' is not allowed; allowed: {', '.join(spec.choices)}")
        return t
    if spec.kind in ("int", "uint"):
        n = _parse_int(text) if spec.kind == "int" else _size_int(text, kb_base)
        if spec.lo is not None and n < spec.lo:
            raise ValueError(f"{n}: must be at least {spec.lo}")
        if spec.hi is not None and n > spec.hi:
            raise ValueError(f"{n}: must be at most {spec.hi}")
        return n
    if spec.kind == "size":
        if spec.name == "offset" and re.fullmatch(r"\s*0+(\.0*)?\s*%\s*", text):
            return 0  # fio: offset=0% is the start
        return parse_size(text, kb_base=kb_base, percent_ok=spec.percent_ok)
    if spec.kind == "range":
        return _parse_range(text, kb_base)
    if spec.kind == "floats":
        return _parse_floats(text)
    if spec.kind == "sizes":
        one = _for_direction(text, rw, spec.name == "bs") if "," in text else text
        if isinstance(one, tuple):
            return PerDirection(*(_size_int(x, kb_base) if x else 4096 for x in one))
        return _size_int(one, kb_base) if one else 4096  # fio's default block size
    if spec.kind == "time":
        return parse_time_ns(text)
    if spec.kind == "time_us":
        t = text.strip().lower()
        return parse_time_ns(t + "us" if t.isdigit() else t)  # fio: a bare number is microseconds here
    if spec.kind in ("rates", "ints"):
        parts = text.split(",")
        if len(parts) > 3:
            raise ValueError(f"'{text}': at most three values (READ,WRITE,TRIM)")
        vals = [(_size_int(x, kb_base) if spec.kind == "rates" else _parse_int(x)) if x.strip() else 0 for x in parts]
        if any(v < 0 for v in vals):
            raise ValueError(f"'{text}': rates are 0 or more")
        return tuple(vals)
    if spec.kind == "bssplit":
        one = _for_direction(text, rw, True) if "," in text else text
        if isinstance(one, tuple):
            return PerDirection(*(_parse_bssplit(x, kb_base) if x else ((4096, 100),) for x in one))
        return _parse_bssplit(one, kb_base) if one else ((4096, 100),)
    raise AssertionError(spec.kind)


def _parse_range(text: str, kb_base: int) -> Tuple[Tuple[int, int], ...]:
    """fio's ``bsrange``: ``MIN-MAX`` (or one per direction, all equal here)."""
    ranges = set()
    for part in (p for p in text.split(",") if p.strip()):
        lo, sep, hi = part.partition("-")
        if not sep:
            raise ValueError(f"'{part}' is not MIN-MAX, e.g. 4k-64k")
        a, b = _size_int(lo, kb_base), _size_int(hi, kb_base)
        if not 0 < a <= b:
            raise ValueError(f"'{part}': give MIN-MAX with 0 < MIN <= MAX")
        ranges.add((a, b))
    if len(ranges) != 1:
        raise ValueError(f"'{text}': different ranges per direction are not supported; give one MIN-MAX")
    return (ranges.pop(),)


def _parse_floats(text: str) -> Tuple[float, ...]:
    """fio's ``percentile_list``: percentiles separated by ``:``, each in 0..100."""
    out: List[float] = []
    for part in (p for p in text.split(":") if p.strip()):
        try:
            v = float(part)
        except ValueError:
            raise ValueError(f"'{part}' is not a percentile: give numbers 0..100 separated by ':', e.g. 50:99:99.9") from None
        if not 0 <= v <= 100:
            raise ValueError(f"'{part}': a percentile is within 0..100")
        out.append(v)
    if not out or len(out) > 64:
        raise ValueError(f"'{text}': give 1 to 64 percentiles (fio's limit)")
    return tuple(out)


def _size_int(text: str, kb_base: int) -> int:
    v = parse_size(text, kb_base=kb_base)
    assert isinstance(v, int)
    return v


def _parse_bssplit(text: str, kb_base: int) -> Tuple[Tuple[int, int], ...]:
    """fio's rule (as the engine's): the percentages add up to 100, a size
    without one (``4k/`` or ``4k``) shares the rest evenly (integer division,
    as fio); more than 100 is an error, and so (unlike fio) is less with no
    such size."""
    if "," in text:
        raise ValueError(f"'{text}': a split per direction is not supported; give one SIZE/PERCENT:... list")
    parts = [p for p in text.split(":") if p.strip()]
    if len(parts) > 64:
        raise ValueError(f"'{text}': {len(parts)} sizes, at most 64 (fio's limit)")
    given: List[Tuple[int, Optional[int]]] = []
    for part in parts:
        b, _, w = part.partition("/")
        pct = _parse_int(w) if w.strip() else None
        if pct is not None and not 0 <= pct <= 100:
            raise ValueError(f"'{w}' in '{part}' is not a whole percentage 0..100")
        given.append((_size_int(b, kb_base), pct))
    total = sum(w for _, w in given if w is not None)
    blanks = sum(1 for _, w in given if w is None)
    if total > 100:
        raise ValueError(f"'{text}': the percentages add up to {total}, more than 100")
    if not blanks and total != 100:
        raise ValueError(f"'{text}': the percentages add up to {total}, not 100 (as in fio; a size without a percentage, "
                         "e.g. 4k/, shares the rest)")
    share = (100 - total) // blanks if blanks else 0
    return tuple((b, share if w is None else w) for b, w in given)
