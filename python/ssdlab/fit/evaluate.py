"""The objective of a fit: every calibration row of the target's drives, with
a set of free values applied, simulated on the runner; many sets at once."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ..cluster import Runner, TestRequest
from ..drive import Drive
from ..errors import SsdlabError
from ..suite.calibrate import Published, requests_for, row_result
from .params import Target, one_sided

__all__ = ["Evaluation", "residual", "score", "evaluate_many", "MISSING_PENALTY"]

#: The residual of a row with no simulated figure (a failed setting).
MISSING_PENALTY = 10.0


def residual(row: Published, simulated: Optional[float]) -> float:
    """A row's error in units of its tolerance (1.0 = at the edge): relative
    error / tolerance; a rated "up to" figure counts only when exceeded."""
    if simulated is None or not math.isfinite(simulated):
        return MISSING_PENALTY
    e = simulated / row.value - 1.0
    if one_sided(row):
        e = max(e, 0.0)
    return e / row.tolerance


def score(rows: Sequence[Published], simulated: Sequence[Optional[float]]) -> float:
    """The objective: root mean square of the residuals (1.0 = every row at
    its tolerance); lower is better."""
    if not rows:
        return 0.0
    return math.sqrt(sum(residual(r, s) ** 2 for r, s in zip(rows, simulated)) / len(rows))


@dataclass
class Evaluation:
    """One set of values on a target's rows."""

    values: Dict[str, Any]
    rows: List[Published]
    simulated: List[Optional[float]]
    error: Optional[str] = None

    @property
    def objective(self) -> float:
        return score(self.rows, self.simulated) if self.error is None else float("inf")

    @property
    def worst(self) -> float:
        """The largest |residual| (in tolerances)."""
        return max((abs(residual(r, s)) for r, s in zip(self.rows, self.simulated)), default=0.0)

    def relative_errors(self) -> List[Optional[float]]:
        return [None if s is None else s / r.value - 1.0 for r, s in zip(self.rows, self.simulated)]

    def row_dicts(self) -> List[Dict[str, Any]]:
        out = []
        for r, s, e in zip(self.rows, self.simulated, self.relative_errors()):
            out.append({"line": r.line, "drive_id": r.drive_id, "row": r.describe(), "suite_test": r.suite_test,
                        "measure": r.measure, "kind": r.kind, "one_sided": one_sided(r), "unit": r.unit,
                        "published": r.value, "simulated": s, "error": e, "residual": residual(r, s),
                        "tolerance": r.tolerance})
        return out


def evaluate_many(jobs: Sequence[Tuple[Target, Mapping[str, Any]]], runner: Runner, seed: int = 1) -> List[Evaluation]:
    """Each (target, values) on the target's rows, all simulated together on
    the runner (one request per drive and test of each set)."""
    requests: List[TestRequest] = []
    answered: List[Tuple[int, List[Published]]] = []
    out: List[Evaluation] = []
    for k, (target, values) in enumerate(jobs):
        ev = Evaluation(dict(values), list(target.rows), [None] * len(target.rows))
        out.append(ev)
        try:
            drives: Dict[str, Drive] = target.drives_with(values)
        except SsdlabError as e:  # a value the engine refuses: this set fails, the others run
            ev.error = str(e)
            continue
        reqs, ans = requests_for(target.rows, seed, drives)
        requests.extend(reqs)
        answered.extend((k, a) for a in ans)
    for i, doc in runner.run_tests(requests):
        k, rows = answered[i]
        ev = out[k]
        for r in rows:
            ev.simulated[ev.rows.index(r)] = row_result(r, doc, "", seed)["simulated"]
    return out
