"""The interface every backend meets: ``run(test, target)`` returns the
test's output in the results schema (``test``, ``skipped``, ``profile``,
``figures``, ``charts``, ``jobs``, ``wall_time_s``; docs/results-schema.md)."""

from __future__ import annotations

from typing import Any, Dict, Protocol

from ..suite.vocabulary import SuiteTest

__all__ = ["Backend"]


class Backend(Protocol):
    """Runs one test description on a target and returns its output."""

    def run(self, test: SuiteTest, target: Any) -> Dict[str, Any]:
        ...
