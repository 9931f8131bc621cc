"""One claim of the seed reviews, as data: what a reviewer measured, where,
and the rule by which the simulated figures hold it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Tuple

from .rules import Check, Fig

__all__ = ["Claim", "PAGES", "LONG_TESTS"]

#: The seed review pages (shared/seeds/), by number.
PAGES = {
    "000": "OCZ Vertex 3 120GB review (SF-2281 120 vs 240GB; SF-1200 NAND variants)",
    "001": "OCZ Vertex 3 Pro preview (SF-2500; the SF-1200 dirty state)",
    "002": "Vertex 4 firmware 1.4 and 1.5 (Everest 2; performance mode)",
    "003": "Vector 150 (performance consistency, TRIM, performance mode)",
    "004": "Vertex 4 launch firmware (low queue-depth sequential reads)",
    "physics": "Desnoyers, Analytic modeling of SSD write performance (SYSTOR 2012)",
}

#: Tests that take more than a few seconds of CPU per drive: a claim that
#: reads one is a slow test.
LONG_TESTS = frozenset({
    "consistency", "resiliency", "file-copy", "trim-validation", "atto", "atto-qd2", "story-half-fill",
    "story-secure-erase", "story-uniform-random-writes", "storage-bench-heavy-2011", "storage-bench-light-2011",
})


@dataclass(frozen=True)
class Claim:
    """``claim`` is the project's own wording; ``published`` the figures as
    the page gives them; every check must hold for the claim to hold."""

    id: str
    page: str
    claim: str
    published: str
    checks: Tuple[Check, ...]

    @property
    def figures(self) -> List[Fig]:
        seen: List[Fig] = []
        for c in self.checks:
            for f in c.refs():
                if f not in seen:
                    seen.append(f)
        return seen

    @property
    def presets(self) -> List[str]:
        return sorted({f.drive for f in self.figures})

    @property
    def tests(self) -> List[str]:
        return sorted({f.test for f in self.figures})

    @property
    def rule(self) -> str:
        return "; ".join(c.want() for c in self.checks)

    @property
    def slow(self) -> bool:
        return any(t in LONG_TESTS for t in self.tests) or len(self.presets) > 3
