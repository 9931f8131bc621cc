"""The objective of a twin: its probe simulated on the runner and compared job
by job with the measured one (the clean stage's rates for the sampler, the
fill stage's for the behaviours), and the target the sampler fits."""

from __future__ import annotations

import math
import statistics
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ...cluster import Runner
from ...drive import Drive
from ...errors import SsdlabError
from ...fit.evaluate import Evaluation
from ...fit.params import Target
from ...suite.calibrate import Published
from ..features import steady_iops
from ..features.common import Features
from ..probe import CLEAN, FILL, FULL, capacity_of, figures_of, probe_jobs, run_probe_simulated
from ..probe.names import FULL_RANDREAD, FULL_RANDWRITE, FULL_SEQREAD, FULL_SEQWRITE, TORTURE, TORTURED_FLUSH
from ..records import Figures, JobFigures, ProbeDoc
from .base import _fv
from .drive_file import build_doc
from .start import free_parameters, raw_nand_dies

#: CMA-ES's initial step for a twin (share of each parameter's range, on a log scale for most): the features
#: put the start near the answer, and Optuna's default (1/6) leaves it at once for a distant compromise.
TWIN_SIGMA0: Optional[float] = 0.07


def probe_rows(doc: ProbeDoc, twin_id: str, stages: Sequence[str] = (CLEAN,)) -> List[Published]:
    """The measured probe jobs of ``stages`` as rows to fit (each job's MB/s,
    10% tolerance). TRIM jobs are left out (their rate is not the drive's)."""
    stage_of = {j["name"]: j for j in doc["jobs"]}
    rows = []
    for i, (name, f) in enumerate(figures_of(doc).items()):
        j = stage_of[name]
        if j["stage"] not in stages or j["direction"] == "trim" or not f.get("mbps"):
            continue
        o = j["options"]
        rows.append(Published(line=i + 1, drive_id=twin_id, published_drive=str(doc["target"].get("drive_id", "")),
                              test=name, state=j["stage"], data_pattern="-", iodepth=str(o.get("iodepth", 1)),
                              value=float(f["mbps"]), unit="MB/s", kind="measured", source="probe",
                              suite_test="probe", measure="mbps", note=j["feature"]))
    return rows


def simulate_probe_figures(item: Tuple[Dict[str, Any], int, float, Tuple[str, ...]]) -> Figures:
    """(drive dict, seed, budget, stages) -> the simulated probe's figures by
    job (a module-level function: the runner's workers import it)."""
    doc, seed, budget, stages = item
    run = run_probe_simulated(Drive.load(doc), None, stages=stages, budget=budget, seed=seed)
    return run.figures


def evaluate_twin(jobs: Sequence[Tuple[Target, Mapping[str, Any]]], runner: Runner, seed: int = 1) -> List[Evaluation]:
    """A batch of twins (target, values): each twin's probe simulated on the
    runner, compared job by job (an evaluator for :func:`ssdlab.fit.fit_many`)."""
    out: List[Evaluation] = []
    items: List[Tuple[Dict[str, Any], int, float, Tuple[str, ...]]] = []
    index: List[int] = []
    for k, (target, values) in enumerate(jobs):
        ev = Evaluation(dict(values), list(target.rows), [None] * len(target.rows))
        out.append(ev)
        ctx = target.drives[target.id]
        try:
            doc, _ = build_doc(ctx.features, values, target.id)  # type: ignore[attr-defined]
            Drive.load(doc)
        except SsdlabError as e:
            ev.error = str(e)
            continue
        items.append((doc, seed, ctx.budget, (CLEAN,)))  # type: ignore[attr-defined]
        index.append(k)
    for i, figs in runner.map(simulate_probe_figures, items, what="twin probes"):
        ev = out[index[i]]
        for n, r in enumerate(ev.rows):
            f = figs.get(r.test)
            ev.simulated[n] = None if f is None else float(f["mbps"])
    return out


class _Context:
    """What the evaluator needs of a twin target (kept where Target keeps drives)."""

    def __init__(self, features: Features, budget: float) -> None:
        self.features = dict(features)
        self.budget = budget


def twin_target(probe_doc: ProbeDoc, twin_id: str) -> Target:
    features = probe_doc["features"]
    params = free_parameters(features, raw_nand_dies(probe_doc))
    rows = probe_rows(probe_doc, twin_id)
    if not rows:
        raise SsdlabError("the probe measured none of the clean-stage jobs a twin is fitted to (was it interrupted at once?)")
    _, budget = capacity_of(probe_doc)
    ctx = _Context(features, budget)
    return Target("twin", twin_id, params, rows, {twin_id: ctx}, {twin_id: [p.key for p in params]},  # type: ignore[dict-item]
                  sigma0=TWIN_SIGMA0)


def _fill_error(measured: Mapping[str, JobFigures], twin: Mapping[str, JobFigures],
                jobs: Sequence[str]) -> float:
    errs = [math.log(float(twin[j]["mbps"]) / float(measured[j]["mbps"])) for j in jobs
            if (measured.get(j) or {}).get("mbps") and (twin.get(j) or {}).get("mbps")]
    return math.sqrt(sum(e * e for e in errs) / len(errs)) if errs else math.inf


def _torture_steady(figs: Mapping[str, JobFigures]) -> Tuple[Optional[float], Optional[float]]:
    """The torture's steady state: the median of its per-second IOPS over the last 20%, and their coefficient of
    variation over its second half."""
    series = [float(x) for x in (figs.get(TORTURE) or {}).get("iops_series") or []]
    half = series[len(series) // 2:]
    if len(half) < 10 or not statistics.fmean(half):
        return None, None
    return steady_iops(series), statistics.pstdev(half) / statistics.fmean(half)


def _flush_s(figs: Mapping[str, JobFigures]) -> Optional[float]:
    us = (figs.get(TORTURED_FLUSH) or {}).get("sync_mean_us")
    return None if not us else float(us) / 1e6


def _rate_jobs(features: Features, measured: Mapping[str, JobFigures], budget: float,
               stages: Sequence[str] = (FILL,)) -> List[str]:
    """The measured rate jobs (not TRIMs) of ``stages``: the fill stage's by default."""
    rate = {j.name for j in probe_jobs(int(_fv(features, "capacity_bytes")), budget)
            if j.stage in stages and j.direction != "trim"}
    return [n for n, f in measured.items() if f.get("mbps") and n in rate]


def fill_stages(measured: Mapping[str, JobFigures]) -> Tuple[str, ...]:
    """The stages a twin's fill stage is simulated with: with the full stage where the probe ran it (right after
    the fill, its random writes took the drive past its spare area before the torture)."""
    ran_full = any(n in measured for n in (FULL_SEQWRITE, FULL_SEQREAD, FULL_RANDREAD, FULL_RANDWRITE))
    return (CLEAN, FILL, FULL) if ran_full else (CLEAN, FILL)


def _simulate_docs(docs: Sequence[Dict[str, Any]], runner: Runner, seed: int, budget: float,
                   measured: Mapping[str, JobFigures]) -> List[Figures]:
    """Each drive's whole probe (clean and fill stages, and the full stage where the probe ran it), at once on the
    runner."""
    stages = fill_stages(measured)
    items = [(d, seed, budget, stages) for d in docs]
    return [f for _, f in sorted(runner.map(simulate_probe_figures, items, what="twin probes"), key=lambda x: x[0])]
