"""The reviews' stories: every claim of the seed reviews (shared/seeds/) as
data the lab checks, claim by claim (``ssdlab stories``).

- :mod:`.claim`: a claim (id, the project's wording, the page, the checks);
- :mod:`.rules`: the figures a claim reads and the checks it passes;
- :mod:`.sandforce`, :mod:`.indilinx`: the claims, by the pages they come from;
- :mod:`.scenarios`: the few measurements the review suite does not make;
- :mod:`.figures`: a figure read out of a results document;
- :mod:`.ledger`: running the claims on the cluster runner, the verdicts, the table.
"""

from __future__ import annotations

from typing import List

from . import indilinx, sandforce
from .claim import PAGES, Claim
from .ledger import HOLDS, NOT_RUN, PARTLY, WRONG, Judged, StoriesError, judge, judge_docs, run_stories, select

__all__ = ["CLAIMS", "PAGES", "Claim", "Judged", "StoriesError", "judge", "judge_docs", "run_stories", "select",
           "HOLDS", "PARTLY", "WRONG", "NOT_RUN"]

#: Every claim, S01..S46.
CLAIMS: List[Claim] = sandforce.CLAIMS + indilinx.CLAIMS
