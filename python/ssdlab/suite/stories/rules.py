"""The vocabulary of a claim's rule: the figures it reads (:class:`Fig`), what
it computes from them (ratios, differences, the lowest of several) and the
checks a claim passes (near a published figure, above another, in a range...).

A check is plain data: it names its figures (``refs``), says what it wants
(``want``) and, given the figures' values, whether it holds and what was
found (``judge``). Nothing here runs a simulation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Dict, Iterator, Mapping, Optional, Sequence, Tuple, Union

__all__ = [
    "Fig", "Ratio", "Diff", "Lowest", "Quantity", "Check", "Near", "NearRatio", "Above", "Below", "Between",
    "Together", "Apart", "Descending", "AmongTop", "Values",
]


@dataclass(frozen=True)
class Fig:
    """One figure of a suite test on a drive: ``label`` is the measured step
    (for Storage Bench: ``all``, ``reads`` or ``writes``), ``metric`` the
    figure's kind (empty: the test's main one; see :mod:`.figures`)."""

    drive: str
    test: str
    label: str
    metric: str = ""
    unit: str = "MB/s"

    def refs(self) -> Iterator["Fig"]:
        yield self

    def value(self, v: "Values") -> float:
        return v[self]

    def name(self) -> str:
        metric = f" {self.metric}" if self.metric else ""
        return f"{self.drive} {self.test} [{self.label}]{metric}"


@dataclass(frozen=True)
class Ratio:
    num: "Quantity"
    den: "Quantity"
    unit: str = ""

    def refs(self) -> Iterator[Fig]:
        yield from self.num.refs()
        yield from self.den.refs()

    def value(self, v: "Values") -> float:
        d = self.den.value(v)
        return self.num.value(v) / d if d else float("inf")


@dataclass(frozen=True)
class Diff:
    a: "Quantity"
    b: "Quantity"

    @property
    def unit(self) -> str:
        return self.a.unit

    def refs(self) -> Iterator[Fig]:
        yield from self.a.refs()
        yield from self.b.refs()

    def value(self, v: "Values") -> float:
        return self.a.value(v) - self.b.value(v)


@dataclass(frozen=True)
class Lowest:
    items: Tuple["Quantity", ...]

    @property
    def unit(self) -> str:
        return self.items[0].unit

    def refs(self) -> Iterator[Fig]:
        for q in self.items:
            yield from q.refs()

    def value(self, v: "Values") -> float:
        return min(q.value(v) for q in self.items)


Quantity = Union[Fig, Ratio, Diff, Lowest]
Values = Mapping[Fig, float]
Operand = Union[Quantity, float]


def _refs(*qs: Operand) -> Iterator[Fig]:
    for q in qs:
        if not isinstance(q, (int, float)):
            yield from q.refs()


def _val(q: Operand, v: Values) -> float:
    return float(q) if isinstance(q, (int, float)) else q.value(v)


def _fmt(x: float, unit: str = "") -> str:
    if unit in ("", "x"):
        return f"{x:.2f}"
    if abs(x) >= 1000:
        return f"{x:,.0f} {unit}"
    return f"{x:.1f} {unit}"


def _show(q: Operand, v: Values) -> str:
    return _fmt(_val(q, v), "" if isinstance(q, (int, float)) else q.unit)


@dataclass(frozen=True)
class Near:
    """An absolute figure within ``rel`` of the published one."""

    q: Quantity
    published: float
    rel: float = 0.15

    def refs(self) -> Iterator[Fig]:
        return _refs(self.q)

    def want(self) -> str:
        return f"{_fmt(self.published, self.q.unit)} +-{self.rel:.0%}"

    def judge(self, v: Values) -> Tuple[bool, str]:
        x = self.q.value(v)
        return abs(x / self.published - 1.0) <= self.rel, _fmt(x, self.q.unit)


@dataclass(frozen=True)
class NearRatio:
    """A ratio within ``tol`` (absolute) of the published one."""

    q: Ratio
    published: float
    tol: float = 0.08

    def refs(self) -> Iterator[Fig]:
        return _refs(self.q)

    def want(self) -> str:
        return f"ratio {self.published:.2f} +-{self.tol:.2f}"

    def judge(self, v: Values) -> Tuple[bool, str]:
        x = self.q.value(v)
        return abs(x - self.published) <= self.tol, f"ratio {x:.2f}"


@dataclass(frozen=True)
class _Compare:
    """``a`` on one side of ``factor`` times ``b`` (Above, Below)."""

    a: Quantity
    b: Operand
    factor: float = 1.0
    word: ClassVar[str] = ""

    def refs(self) -> Iterator[Fig]:
        return _refs(self.a, self.b)

    def want(self) -> str:
        times = "" if self.factor == 1.0 else f"{self.factor:g} x "
        return f"{self.word} {times}{self.b if isinstance(self.b, (int, float)) else 'the other'}"

    def holds(self, a: float, b: float) -> bool:
        raise NotImplementedError

    def judge(self, v: Values) -> Tuple[bool, str]:
        a, b = _val(self.a, v), _val(self.b, v)
        return self.holds(a, self.factor * b), f"{_show(self.a, v)} vs {_show(self.b, v)}"


@dataclass(frozen=True)
class Above(_Compare):
    """``a`` above ``factor`` times ``b``."""

    word: ClassVar[str] = "above"

    def holds(self, a: float, b: float) -> bool:
        return a > b


@dataclass(frozen=True)
class Below(_Compare):
    """``a`` below ``factor`` times ``b``."""

    word: ClassVar[str] = "below"

    def holds(self, a: float, b: float) -> bool:
        return a < b


@dataclass(frozen=True)
class Between:
    q: Quantity
    low: float
    high: float

    def refs(self) -> Iterator[Fig]:
        return _refs(self.q)

    def want(self) -> str:
        return f"in [{self.low:g}, {self.high:g}]"

    def judge(self, v: Values) -> Tuple[bool, str]:
        x = self.q.value(v)
        return self.low <= x <= self.high, _fmt(x, self.q.unit)


@dataclass(frozen=True)
class Together:
    """The highest of the figures within ``rel`` of the lowest."""

    items: Tuple[Quantity, ...]
    rel: float

    def refs(self) -> Iterator[Fig]:
        return _refs(*self.items)

    def want(self) -> str:
        return f"within {self.rel:.0%} of each other"

    def judge(self, v: Values) -> Tuple[bool, str]:
        xs = [q.value(v) for q in self.items]
        spread = max(xs) / min(xs) - 1.0 if min(xs) > 0 else float("inf")
        return spread <= self.rel, " / ".join(_fmt(x, self.items[0].unit) for x in xs) + f" (spread {spread:.1%})"


@dataclass(frozen=True)
class Apart:
    """``a`` and ``b`` differ by more than ``rel``."""

    a: Quantity
    b: Quantity
    rel: float

    def refs(self) -> Iterator[Fig]:
        return _refs(self.a, self.b)

    def want(self) -> str:
        return f"differ by more than {self.rel:.0%}"

    def judge(self, v: Values) -> Tuple[bool, str]:
        a, b = self.a.value(v), self.b.value(v)
        return abs(a / b - 1.0) > self.rel if b else a != 0, f"{_show(self.a, v)} vs {_show(self.b, v)}"


@dataclass(frozen=True)
class Descending:
    """The figures in the order given, highest first."""

    items: Tuple[Quantity, ...]

    def refs(self) -> Iterator[Fig]:
        return _refs(*self.items)

    def want(self) -> str:
        return "in the published order"

    def judge(self, v: Values) -> Tuple[bool, str]:
        xs = [q.value(v) for q in self.items]
        return all(a > b for a, b in zip(xs, xs[1:])), " > ".join(_fmt(x, self.items[0].unit) for x in xs)


@dataclass(frozen=True)
class AmongTop:
    """``q`` among the ``n`` highest of itself and ``others``."""

    q: Quantity
    others: Tuple[Quantity, ...]
    n: int

    def refs(self) -> Iterator[Fig]:
        return _refs(self.q, *self.others)

    def want(self) -> str:
        return f"among the top {self.n} of {len(self.others) + 1}"

    def judge(self, v: Values) -> Tuple[bool, str]:
        x = self.q.value(v)
        rank = 1 + sum(1 for o in self.others if o.value(v) > x)
        return rank <= self.n, f"{_fmt(x, self.q.unit)}, rank {rank}"


Check = Union[Near, NearRatio, Above, Below, Between, Together, Apart, Descending, AmongTop]


def judge_all(checks: Sequence[Check], values: Dict[Fig, float]) -> Tuple[int, Sequence[str], Optional[str]]:
    """How many checks hold, what each found, and the first figure missing
    (then nothing is judged)."""
    for c in checks:
        for f in c.refs():
            if f not in values:
                return 0, [], f.name()
    found = []
    held = 0
    for c in checks:
        ok, got = c.judge(values)
        held += ok
        found.append(got)
    return held, found, None
