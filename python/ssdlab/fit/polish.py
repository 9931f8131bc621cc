"""A local search after the sampler: Hooke and Jeeves' pattern search (J. ACM
8(2), 1961) on the continuous free parameters, in multiplicative steps.

CMA-ES samples every parameter at once, the structural ones (dies, page size,
command slots) with them; a trial that moves the die count lands far from the
start, so from a start the measurements already put near the answer it rarely
improves within a few generations (the round trip's twins: 22 of 26 fits ended
at their start). The polish keeps the structure and moves one parameter at a
time, both ways at once on the runner, accepts what lowers the objective,
follows a run of accepted moves with a pattern move (the valley a page read
time and a channel rate share runs diagonally), and halves the step when no
move helps. It never returns a point worse than its start."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, TextIO

from ..cluster import Runner
from .evaluate import Evaluation
from .params import FreeParameter, Target
from .study import Evaluator

__all__ = ["PolishResult", "polish", "movable", "FIRST_STEP", "LAST_STEP"]

#: The first move: each parameter times (1 + this) and divided by it.
FIRST_STEP = 0.08
#: The search ends once the step has been halved below this (or the budget is spent).
LAST_STEP = 0.01
#: A move counts when it lowers the objective by more than this.
MIN_GAIN = 1e-4


@dataclass
class PolishResult:
    best: Evaluation
    start_objective: float
    evaluations: int
    accepted: int
    last_step: float
    interrupted: bool = False

    def summary(self) -> Dict[str, Any]:
        return {"method": "Hooke-Jeeves pattern search", "evaluations": self.evaluations, "accepted": self.accepted,
                "objective_start": self.start_objective, "objective": self.best.objective,
                "last_step": self.last_step, "interrupted": self.interrupted}


def movable(params: Sequence[FreeParameter], values: Mapping[str, Any], step: float = FIRST_STEP) -> List[FreeParameter]:
    """The parameters the polish moves: those whose grid is finer than a
    quarter of the first step at their value (not the structural counts, whose
    next value is a different drive)."""
    out = []
    for p in params:
        v = float(values[p.key])
        if v > 0 and (not p.step or p.step <= v * step / 4):
            out.append(p)
    return out


def _moved(values: Mapping[str, Any], p: FreeParameter, factor: float) -> Dict[str, Any]:
    out = dict(values)
    out[p.key] = p.snap(float(values[p.key]) * factor)
    return out


def polish(target: Target, start: Evaluation, evaluate: Evaluator, runner: Runner, seed: int = 1, budget: int = 60,
           stream: Optional[TextIO] = sys.stderr) -> PolishResult:
    """Pattern search from ``start`` (an evaluated point of ``target``) with
    at most ``budget`` evaluations by ``evaluate`` (an evaluator of
    :func:`ssdlab.fit.fit_many`), ``runner.workers`` moves at a time. On
    Ctrl-C the best so far comes back marked interrupted."""
    best = start
    params = movable(target.params, start.values)
    used = accepted = 0
    step = FIRST_STEP
    t0 = time.perf_counter()
    per_batch = max(2, runner.workers)

    def run(points: Sequence[Dict[str, Any]]) -> List[Evaluation]:
        nonlocal used
        used += len(points)
        return list(evaluate([(target, v) for v in points], runner, seed))

    interrupted = False
    try:
        while params and step >= LAST_STEP and used < budget:
            base = best
            # one sweep: each parameter up and down, a batch of parameters at a time
            for k in range(0, len(params), max(1, per_batch // 2)):
                group = params[k:k + max(1, per_batch // 2)]
                points = [m for p in group for m in (_moved(best.values, p, 1 + step), _moved(best.values, p, 1 / (1 + step)))
                          if m != best.values]
                points = points[:max(0, budget - used)]
                if not points:
                    continue
                cand = min(run(points), key=lambda e: e.objective)
                if cand.objective < best.objective - MIN_GAIN:
                    best, accepted = cand, accepted + 1
                if used >= budget:
                    break
            if best is base:
                step /= 2
            elif used < budget:
                # the pattern move: as far again in the direction the sweep went
                pattern = {}
                for p in target.params:
                    b, n = float(base.values[p.key]), float(best.values[p.key])
                    pattern[p.key] = p.snap(n * n / b) if b > 0 and n > 0 and p in params else best.values[p.key]
                if pattern != best.values:
                    cand = run([pattern])[0]
                    if cand.objective < best.objective - MIN_GAIN:
                        best, accepted = cand, accepted + 1
            if stream is not None:
                stream.write(f"ssdlab fit: polish {used}/{budget} evaluations, best {best.objective:.3f} "
                             f"(from {start.objective:.3f}), step {step:.3f}, {time.perf_counter() - t0:.0f} s wall\n")
                stream.flush()
    except KeyboardInterrupt:
        interrupted = True
    return PolishResult(best, start.objective, used, accepted, step, interrupted)

