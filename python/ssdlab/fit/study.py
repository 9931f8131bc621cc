"""The optimiser: Optuna (CMA-ES or TPE, seeded), trials asked in batches and
evaluated together on the runner, the study kept in a SQLite file so a
stopped fit resumes. Several fits run in lockstep (cross-validation), each
batch of every fit simulated at once."""

from __future__ import annotations

import contextlib
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, TextIO, Tuple

from ..cluster import Runner
from ..extras import install_hint
from .evaluate import Evaluation, evaluate_many
from .params import FitError, Target

__all__ = ["FitResult", "fit", "fit_many", "SAMPLERS", "study_name"]

SAMPLERS = ("cmaes", "tpe")

#: Simulates a batch of (target, values) on the runner with a seed.
Evaluator = Callable[[Sequence[Tuple[Target, Mapping[str, Any]]], Runner, int], List[Evaluation]]


def _optuna() -> Any:
    import importlib

    try:
        optuna = importlib.import_module("optuna")
    except ImportError:
        raise FitError(f"ssdlab fit needs Optuna: {install_hint('fit')}") from None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Optuna's experimental-feature and fallback notices are not ours to show."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@dataclass
class FitResult:
    """A finished (or stopped) fit: the committed values' evaluation, the best
    trial's, how many trials ran, and the settings that reproduce it."""

    target: Target
    committed: Evaluation
    best: Evaluation
    start: Dict[str, Any]
    trials: int
    sampler: str
    seed: int
    storage: Optional[str]
    history: List[float] = field(default_factory=list)
    interrupted: bool = False

    def summary(self) -> Dict[str, Any]:
        return {
            "target": {"kind": self.target.kind, "id": self.target.id},
            "sampler": self.sampler, "seed": self.seed, "trials": self.trials, "storage": self.storage,
            "interrupted": self.interrupted,
            "parameters": [{"key": p.key, "low": p.low, "high": p.high, "log": p.log, "why": p.why,
                            "committed": self.committed.values[p.key], "start": self.start[p.key],
                            "fitted": self.best.values[p.key]} for p in self.target.params],
            "objective": {"committed": self.committed.objective, "fitted": self.best.objective,
                          "committed_worst": self.committed.worst, "fitted_worst": self.best.worst,
                          "about": "root mean square of row error / tolerance (1.0 = every row at its tolerance); "
                                   "worst = the largest |error| / tolerance"},
            "history": self.history,
            "rows": [{**f, "committed_simulated": c["simulated"], "committed_error": c["error"]}
                     for f, c in zip(self.best.row_dicts(), self.committed.row_dicts())],
        }


def study_name(target: Target) -> str:
    return f"ssdlab-fit {target.kind} {target.id} rows {','.join(str(r.line) for r in target.rows)}"


@dataclass
class _Fit:
    target: Target
    study: Any
    trials: int
    start: Dict[str, Any]
    committed: Optional[Evaluation] = None
    history: List[float] = field(default_factory=list)

    def done(self) -> int:
        """Trials that count toward the budget: completed, or failed by their
        values (not those cut short by an interruption, which run again)."""
        return sum(1 for t in self.study.trials
                   if t.state.name == "COMPLETE" or (t.state.name == "FAIL" and "error" in t.user_attrs))


def _sampler(optuna: Any, name: str, target: Target, start: Dict[str, Any], seed: int, trials: int) -> Any:
    if name not in SAMPLERS:
        raise FitError(f"sampler '{name}'; allowed: {', '.join(SAMPLERS)}")
    with _quiet():
        if name == "cmaes" and len(target.params) >= 2:
            return optuna.samplers.CmaEsSampler(x0={k: float(v) for k, v in start.items()}, seed=seed,
                                                sigma0=target.sigma0, warn_independent_sampling=False)
        # TPE (and CMA-ES's stand-in on one dimension, which CMA-ES does not search)
        return optuna.samplers.TPESampler(seed=seed, n_startup_trials=max(2, min(10, trials // 4)), multivariate=True,
                                          warn_independent_sampling=False)


def _evaluation(target: Target, values: Dict[str, Any], simulated: Sequence[Optional[float]]) -> Evaluation:
    return Evaluation(dict(values), list(target.rows), list(simulated))


def _open(target: Target, optuna: Any, sampler: str, seed: int, trials: int, storage: Optional[str], resume: bool,
          start: Dict[str, Any]) -> _Fit:
    url = None if storage is None else f"sqlite:///{Path(storage).resolve()}"
    name = study_name(target)
    if storage is not None and Path(storage).exists() and not resume:
        names = [s.study_name for s in optuna.get_all_study_summaries(url)]
        if name in names:
            raise FitError(f"a fit of {target.label} on these rows is in {storage}; --resume continues it "
                           "(or remove the file, or give another --storage)")
    with _quiet():
        study = optuna.create_study(study_name=name, storage=url, direction="minimize", load_if_exists=resume,
                                    sampler=_sampler(optuna, sampler, target, start, seed, trials))
    f = _Fit(target, study, trials, start)
    attrs = study.user_attrs
    if "ssdlab" in attrs:
        saved = attrs["ssdlab"]
        if [p["key"] for p in saved["parameters"]] != [p.key for p in target.params] or saved["sampler"] != sampler:
            raise FitError(f"{storage}: the stored fit of {target.label} has other free parameters or another sampler")
        f.start = saved["start"]
        if "committed_simulated" in attrs:
            f.committed = _evaluation(target, target.committed(), attrs["committed_simulated"])
        # trials asked but never told (a stopped run) are failed; their values run again
        for t in study.trials:
            if t.state.name == "RUNNING":
                study.tell(t.number, state=optuna.trial.TrialState.FAIL)
                study.enqueue_trial(t.user_attrs.get("values", t.params))
        f.history = [float(t.value) for t in study.trials if t.state.name == "COMPLETE"]
    else:
        study.set_user_attr("ssdlab", {"target": target.label, "sampler": sampler, "seed": seed, "start": start,
                                       "parameters": [{"key": p.key, "low": p.low, "high": p.high} for p in target.params]})
        study.enqueue_trial({k: float(v) for k, v in start.items()})
    return f


_Asked = List[Tuple[_Fit, Any, Dict[str, Any]]]


def _ask(fits: Sequence[_Fit], per_batch: int) -> _Asked:
    """The next trials of every fit to simulate (a trial at the committed values is told at once)."""
    asked: _Asked = []
    for f in fits:
        # a new study's first batch is its start alone (the sampler learns the space from it)
        for _ in range(min(per_batch if f.done() else 1, f.trials - f.done())):
            with _quiet():
                trial = f.study.ask()
                values = {p.key: p.snap(trial.suggest_float(p.key, p.low, p.high, log=p.log))
                          for p in f.target.params}
            trial.set_user_attr("values", values)
            assert f.committed is not None
            if values == f.committed.values:  # simulated already
                trial.set_user_attr("simulated", f.committed.simulated)
                f.study.tell(trial, f.committed.objective)
                f.history.append(f.committed.objective)
                continue
            asked.append((f, trial, values))
    return asked


def _tell(asked: _Asked, evs: Sequence[Evaluation], optuna: Any) -> None:
    """Each trial's evaluation to its study (a failed simulation a failed trial)."""
    for (f, trial, _), ev in zip(asked, evs):
        trial.set_user_attr("simulated", ev.simulated)
        if ev.error is not None:
            trial.set_user_attr("error", ev.error)
            f.study.tell(trial, state=optuna.trial.TrialState.FAIL)
        else:
            f.study.tell(trial, ev.objective)
            f.history.append(ev.objective)


def _report(fits: Sequence[_Fit], stream: TextIO, t0: float) -> None:
    """Every fit's progress, one line each."""
    for f in fits:
        low = min(f.history) if f.history else float("nan")
        assert f.committed is not None
        stream.write(f"ssdlab fit: {f.target.label}: {f.done()}/{f.trials} trials, best {low:.3f} "
                     f"(committed {f.committed.objective:.3f}), {time.perf_counter() - t0:.0f} s wall\n")
    stream.flush()


def fit_many(targets: Sequence[Target], trials: int = 40, sampler: str = "cmaes", seed: int = 1,
             storage: Optional[str] = None, resume: bool = False, starts: Optional[Sequence[Dict[str, Any]]] = None,
             batch: Optional[int] = None, runner: Optional[Runner] = None, stream: Optional[TextIO] = sys.stderr,
             sim_seed: int = 1, evaluate: Optional[Evaluator] = None) -> List[FitResult]:
    """Fit every target (``trials`` each, ``batch`` asked at once per target:
    default the runner's workers), all batches simulated together. ``starts``:
    the first trial of each (default the committed values). ``evaluate``: how
    a batch of (target, values) is simulated (default: the calibration rows,
    :func:`evaluate_many`; a twin's fit simulates its probe). On Ctrl-C the
    results so far come back marked interrupted."""
    evaluate_batch: Evaluator = evaluate or evaluate_many
    optuna = _optuna()
    if trials < 1:
        raise FitError("--trials must be at least 1")
    own = runner is None
    run = runner if runner is not None else Runner()
    try:
        fits = [_open(t, optuna, sampler, seed, trials, storage, resume,
                      (starts[i] if starts is not None else t.committed())) for i, t in enumerate(targets)]
        per_batch = batch or max(run.workers, 2)
        t0 = time.perf_counter()
        interrupted = False
        # the committed values once (kept in the study for --resume)
        need = [f for f in fits if f.committed is None]
        if need:
            for f, ev in zip(need, evaluate_batch([(f.target, f.target.committed()) for f in need], run, sim_seed)):
                f.committed = ev
                f.study.set_user_attr("committed_simulated", ev.simulated)
        try:
            while True:
                asked = _ask(fits, per_batch)
                if not asked:
                    if all(f.done() >= f.trials for f in fits):
                        break
                    continue
                try:
                    evs = evaluate_batch([(f.target, v) for f, _, v in asked], run, sim_seed)
                except KeyboardInterrupt:
                    for f, trial, _ in asked:
                        f.study.tell(trial, state=optuna.trial.TrialState.FAIL)
                    raise
                _tell(asked, evs, optuna)
                if stream is not None:
                    _report(fits, stream, t0)
        except KeyboardInterrupt:
            interrupted = True
        out = []
        for f in fits:
            assert f.committed is not None
            complete = [t for t in f.study.trials if t.state.name == "COMPLETE"]
            if complete:
                bt = min(complete, key=lambda t: (t.value, t.number))
                best = _evaluation(f.target, bt.user_attrs["values"], bt.user_attrs["simulated"])
            else:
                best = f.committed
            out.append(FitResult(f.target, f.committed, best, f.start, f.done(), sampler, seed, storage, f.history,
                                 interrupted))
        return out
    finally:
        if own:
            run.close()


def fit(target: Target, start: Optional[Dict[str, Any]] = None, **kw: Any) -> FitResult:
    """One fit (see :func:`fit_many`); ``start``: the first trial's values."""
    return fit_many([target], starts=None if start is None else [start], **kw)[0]
