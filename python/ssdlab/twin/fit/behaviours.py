"""The behaviours the fill stage shows, chosen on the whole probe simulated
after the sampler: when foreground garbage collection works (paced, lazy,
through a recycling path), the recycling path's rate, and how many blocks
idle time cleans."""

from __future__ import annotations

import math
from typing import Any, Dict, Mapping, Optional, Tuple

from ...cluster import Runner
from ...drive import Drive
from ..features.common import Features
from ..probe.names import AFTER_TRIM_SEQWRITE
from ..records import Figures, JobFigures, ValueSource
from .base import BASE_PROFILE, _base_profile_ftl, _fv
from .evaluate import _fill_error, _rate_jobs, _simulate_docs, _torture_steady

#: The most the torture's per-second variability may exceed the twin's for the flush after it to give the buffer:
#: a paced garbage collection drains the buffer at the torture's steady pace, where one that cleans whole blocks
#: when it needs one or recycles through the controller makes the flush wait for that work.
PACED_CV_EVIDENCE = 1.3
#: Lazy foreground GC is one more mechanism than the generic profile's paced GC. A drive that cleans a whole victim
#: when it needs a block makes the flush after the torture wait for that cleaning, and its torture's per-second
#: rate comes in deeper valleys; lazy is taken when both say so: the fill stage's RMS log error below this share of
#: the paced twin's, and the torture's per-second coefficient of variation not against it (farther from the drive's
#: than the paced twin's and by more than :data:`PACED_CV_EVIDENCE`). The fill error alone does not separate them:
#: a buffer the twin lacks lengthens the flush too.
GC_MODE_EVIDENCE = 0.7


def _recycling(drive_doc: Dict[str, Any], features: Features) -> Optional[Dict[str, Any]]:
    """The twin with lazy GC through a recycling path at the rate the drive
    wrote right after a full TRIM, where the probe measured data reduction
    (and no path was set already): see :data:`RECYCLE_NEEDS`."""
    rate = _fv(features, "after_trim_write_bytes_per_s")
    ftl = drive_doc.get("ftl", {})
    if not (drive_doc.get("data_reduction") or {}).get("enabled") or not rate or ftl.get("recycle_bytes_per_s"):
        return None
    return {**drive_doc, "ftl": {**ftl, "gc_mode": "lazy", "recycle_bytes_per_s": int(rate)}}


#: A controller that stores data reduced cannot copy a victim's pages from die to die: every block on its way back
#: to the free pool passes through the controller's reduction engine, one recycling path for the whole drive, at
#: about the rate a write into recycled blocks runs (docs/model.md). Where the probe measured data reduction, that
#: is the third garbage collection tried: lazy, through a path at the rate of the sequential write right after the
#: full TRIM (a TRIM frees no pre-erased block). Its rate is measured, not fitted, so it is taken when it beats both
#: others on the fill stage's error, its torture's variability not against paced GC's (see :data:`GC_MODE_EVIDENCE`),
#: without that constant's margin.
RECYCLE_NEEDS = "data reduction measured"


def choose_gc_mode(drive_doc: Dict[str, Any], features: Features, measured: Mapping[str, JobFigures],
                   runner: Runner, seed: int, budget: float
                   ) -> Tuple[Dict[str, Any], Figures, ValueSource]:
    """When the twin's foreground garbage collection works: the whole probe
    simulated with paced GC (the base profile's: a little before every host
    program once a die is short of blocks), lazy GC (whole victims when a
    block is needed) and, on a drive that reduces data, lazy GC through a
    recycling path (:func:`_recycling`), all at once on the runner; the mode
    whose fill stage (the fill, the torture, the flush after it, the dirty and
    trimmed writes) comes closer to the drive's, lazy only with clear evidence
    in the error and in the torture's variability (:data:`GC_MODE_EVIDENCE`).
    The clean stage, which the parameters were fitted to, runs before any
    garbage collection. Returns the drive, its probe's figures and the mode's
    provenance."""
    jobs = _rate_jobs(features, measured, budget)
    lazy = {**drive_doc, "ftl": {**drive_doc.get("ftl", {}), "gc_mode": "lazy"}}
    recycling = _recycling(drive_doc, features)
    docs = [drive_doc, lazy] + ([recycling] if recycling is not None else [])
    all_figs = _simulate_docs(docs, runner, seed, budget, measured)
    errs = [_fill_error(measured, f, jobs) for f in all_figs]
    cv = [_torture_steady(f)[1] for f in [dict(measured)] + all_figs]
    e_paced, e_lazy = errs[0], errs[1]
    errors = (f"the fill stage's RMS log error {e_lazy:.3f} with lazy GC against {e_paced:.3f} paced"
              + (f" and {errs[2]:.3f} lazy through a recycling path at the after-TRIM rate "
                 f"({recycling['ftl']['recycle_bytes_per_s'] / 1e6:.0f} MB/s)" if recycling is not None else "")
              + f", over {len(jobs)} jobs; the torture's per-second coefficient of variation "
              + ("not logged" if cv[0] is None else f"{cv[0]:.3f}, " + ", ".join(
                  f"{c or 0:.3f} {n}" for c, n in zip(cv[1:], ("paced", "lazy", "recycling")))))
    if cv[0] and all(c is not None for c in cv[1:]):
        c_meas = max(float(cv[0]), 1e-3)
        cv_dist = [abs(math.log(max(float(c or 0.0), 1e-3) / c_meas)) for c in cv[1:]]
    else:
        cv_dist = [0.0] * len(docs)  # a torture without variability (or unlogged) says nothing either way

    def cv_against(k: int, j: int) -> bool:
        """The torture's variability speaks against mode k beside mode j: k's is farther from the drive's than
        j's, and by more than PACED_CV_EVIDENCE (closer than that, the per-second variability of one probe does
        not tell the modes apart)."""
        return cv_dist[k] > max(cv_dist[j], math.log(PACED_CV_EVIDENCE))

    # the recycling candidate: lazy through a path at the after-TRIM rate, or, where build_doc set that path already
    # (the write after a full TRIM ran slow) on a drive that reduces data, lazy through it; taken without the margin
    measured_path = (recycling is None and (drive_doc.get("data_reduction") or {}).get("enabled")
                     and drive_doc.get("ftl", {}).get("recycle_bytes_per_s"))
    path = 2 if recycling is not None else 1 if measured_path else None
    # its variability is weighed against paced GC alone: beside lazy GC without a path it cleans whole victims
    # too, and what differs, the path's rate (not yet refined here), is what the fill error judges
    if path is not None and math.isfinite(errs[path]) and all(
            errs[path] < errs[k] and (docs[k].get("ftl", {}).get("gc_mode") == "lazy" or not cv_against(path, k))
            for k in range(len(docs)) if k != path):
        return docs[path], all_figs[path], {
            "value": "lazy", "source": "fitted", "residual": round(errs[path], 4),
            "why": "whole victims cleaned when a block is needed, every block through "
                   + ("the controller's recycling path" if path == 2 else
                      "the recycling path the write after the full TRIM measured")
                   + f" ({RECYCLE_NEEDS}): {errors}"}
    if math.isfinite(e_lazy) and e_lazy < GC_MODE_EVIDENCE * e_paced and not cv_against(1, 0):
        return lazy, all_figs[1], {"value": "lazy", "source": "fitted", "residual": round(e_lazy, 4),
                                   "why": f"whole victims cleaned when a block is needed: {errors}"}
    return drive_doc, all_figs[0], {"value": "paced", "source": "fitted" if math.isfinite(e_paced) else "assumed",
                                    "residual": round(e_paced, 4) if math.isfinite(e_paced) else None,
                                    "why": f"{_profile_of(drive_doc)}'s paced GC: {errors} (lazy needs below {GC_MODE_EVIDENCE} "
                                           "of paced, and the variability not farther)"}


#: The recycling path's rate tried above the write after the full TRIM (x this): that write passes every victim
#: through the path and waits for it, so it runs at most at the path's rate, and below it where the dies or the
#: encoder bind as well.
RECYCLE_PATH_STEPS = (1.06, 1.12, 1.19, 1.26, 1.34, 1.42)
#: The path is the slowest at which the twin's own write after the full TRIM comes within this of the drive's. Not
#: the fill stage's best: it samples lazy GC's stalls, and the path would stand in for what else the twin gets
#: wrong.
RECYCLE_PATH_TOLERANCE = 0.02


def choose_recycle_path(drive_doc: Dict[str, Any], figs0: Figures, assumed: ValueSource,
                        features: Features, measured: Mapping[str, JobFigures], runner: Runner,
                        seed: int, budget: float) -> Tuple[Dict[str, Any], Figures, ValueSource]:
    """The rate of a twin's recycling path (``ftl.recycle_bytes_per_s``, set
    from the write after the full TRIM, a lower bound: see
    :data:`RECYCLE_PATH_STEPS`): where the twin's own write after the TRIM
    falls short of the drive's by more than :data:`RECYCLE_PATH_TOLERANCE`,
    each step above it is simulated on the whole probe at once on the
    runner, and the slowest whose write after the TRIM comes within it is
    kept (if its fill stage is no worse). ``figs0``: the whole probe on
    ``drive_doc``; ``assumed``: the rate's provenance so far. Returns the
    drive, its probe's figures and the rate's provenance."""
    ftl = drive_doc.get("ftl", {})
    r0 = ftl.get("recycle_bytes_per_s")
    job = AFTER_TRIM_SEQWRITE
    meas = (measured.get(job) or {}).get("mbps")
    if not r0 or ftl.get("gc_mode") != "lazy" or not meas:
        return drive_doc, figs0, assumed

    def short(figs: Mapping[str, JobFigures]) -> float:
        got = (figs.get(job) or {}).get("mbps")
        return float(got) / float(meas) - 1 if got else -1.0

    if short(figs0) >= -RECYCLE_PATH_TOLERANCE:
        return drive_doc, figs0, {**assumed, "why": assumed.get("why", "") + f"; the twin's own write after the TRIM "
                                  f"falls short of it by no more than {RECYCLE_PATH_TOLERANCE:.0%} ({short(figs0):+.1%})"}
    values = [int(round(r0 * k)) for k in RECYCLE_PATH_STEPS]
    docs = [{**drive_doc, "ftl": {**ftl, "recycle_bytes_per_s": v}} for v in values]
    jobs = _rate_jobs(features, measured, budget)
    tried = [(int(r0), drive_doc, figs0)] + list(zip(values, docs, _simulate_docs(docs, runner, seed, budget, measured)))
    errs = [_fill_error(measured, f, jobs) for _, _, f in tried]
    listed = ", ".join(f"{v / 1e6:.0f} MB/s: {short(f):+.1%} ({e:.3f})" for (v, _, f), e in zip(tried, errs))
    ok = [k for k in range(1, len(tried)) if short(tried[k][2]) >= -RECYCLE_PATH_TOLERANCE and errs[k] <= errs[0]]
    if not ok:
        return drive_doc, figs0, {**assumed, "why": assumed.get("why", "") + "; no faster path brings the twin's write "
                                  f"after the TRIM within {RECYCLE_PATH_TOLERANCE:.0%} of it with a fill stage as "
                                  f"close (by rate, that write's error and the fill stage's RMS log error: {listed})"}
    v, doc, figs = tried[ok[0]]
    return doc, figs, {"value": v, "source": "fitted", "residual": round(errs[ok[0]], 4),
                       "why": f"{assumed.get('why', '')}, a lower bound (that write waits for the path and, where they "
                              f"bind, for the dies or the encoder as well): the slowest path at which the twin's write "
                              f"after the TRIM comes within {RECYCLE_PATH_TOLERANCE:.0%} of the drive's (by rate, that "
                              f"write's error and the fill stage's RMS log error: {listed})"}


#: The blocks per die idle-time garbage collection cleans beyond those the foreground keeps free, tried where the
#: probe saw the drive recover while idle: the range of the era's controllers (docs/presets.md, idle / foreground
#: thresholds). Only the difference cleans anything while idle. The probe's 5 s of random writes after a minute
#: idle run fast for as long as the cleaned blocks last, then at the steady state; the dirty sequential write after
#: them meets the rest.
IDLE_GC_EXTRA_BLOCKS = (2, 4, 8, 16, 32, 56)
#: ... of which one replaces the starting value only where its fill-stage error is more than this share below the
#: starting value's, and values within it of the best are ties settled toward the starting value. Where the drive's
#: cleaning binds the writes after idle time rather than the blocks it restored, every value leaves the same error
#: to within a few percent, and the smallest of those differences is no evidence (the write buffer's ties, alike).
IDLE_GC_TIE = 0.05


def _spare_blocks_per_die(drive_doc: Mapping[str, Any]) -> int:
    """The blocks (over a die's planes) a die has beyond what the user capacity fills, as :func:`build_doc` counts them."""
    c = Drive.load(dict(drive_doc)).config
    n = c["nand"]
    dies = int(n["channels"]) * int(n["packages_per_channel"]) * int(n["dies_per_package"]) - (1 if n.get("raise") else 0)
    block = int(n["planes_per_die"]) * int(n["pages_per_block"]) * int(n["page_size_bytes"])
    return int(n["blocks_per_plane"]) - math.ceil(int(c["drive"]["user_capacity_bytes"]) / (dies * block))


def choose_idle_gc(drive_doc: Dict[str, Any], figs0: Figures, assumed: Optional[ValueSource],
                   features: Features, measured: Mapping[str, JobFigures], runner: Runner,
                   seed: int, budget: float) -> Tuple[Dict[str, Any], Figures, Optional[ValueSource]]:
    """How many free blocks per die idle-time garbage collection restores,
    where the probe saw the drive recover while idle (``ftl.bg_gc_threshold_blocks``
    above 0): the foreground's threshold plus each of :data:`IDLE_GC_EXTRA_BLOCKS`
    (at most the blocks a die has spare) simulated on the whole probe at once on the runner, and the one
    whose fill stage comes closest kept (the random writes after idle time and
    the dirty sequential write after them are what it moves). Where the probe
    could not tell (no value in ``drive_doc``), the base profile's is sized
    the same way. ``figs0``: the
    whole probe simulated on ``drive_doc``; ``assumed``: the value's
    provenance so far (None: none). Returns the drive, its probe's figures and the value's
    provenance."""
    own = drive_doc.get("ftl", {}).get("bg_gc_threshold_blocks")
    # a threshold the probe did not measure (the writes after idle time met a firmware ceiling) is the base
    # profile's, sized here like a measured one
    bg0 = int((own if own is not None else _base_profile_ftl(_profile_of(drive_doc)).get("bg_gc_threshold_blocks")) or 0)
    if bg0 <= 0:
        return drive_doc, figs0, assumed
    if not assumed:
        assumed = {"value": bg0, "source": "assumed", "why": f"{_profile_of(drive_doc)}'s idle-time GC"}
    cap = max(0, _spare_blocks_per_die(drive_doc))
    fg = int(drive_doc.get("ftl", {}).get("gc_threshold_blocks") or _base_profile_ftl(_profile_of(drive_doc)).get("gc_threshold_blocks") or 0)
    values = sorted({min(fg + d, cap) for d in IDLE_GC_EXTRA_BLOCKS} - {bg0, 0})
    if not values:
        return drive_doc, figs0, assumed
    docs = [{**drive_doc, "ftl": {**drive_doc.get("ftl", {}), "bg_gc_threshold_blocks": v}} for v in values]
    jobs = _rate_jobs(features, measured, budget)
    tried = [(bg0, drive_doc, figs0)] + list(zip(values, docs, _simulate_docs(docs, runner, seed, budget, measured)))
    errs = [_fill_error(measured, f, jobs) for _, _, f in tried]
    best = min(errs)
    if not math.isfinite(best):
        return drive_doc, figs0, assumed
    # values the fill stage cannot tell apart: the one nearest the start
    i = min((k for k in range(len(tried)) if errs[k] <= (1 + IDLE_GC_TIE) * best),
            key=lambda k: (abs(tried[k][0] - bg0), errs[k]))
    listed = ", ".join(f"{b}: {e:.3f}" for (b, _, _), e in sorted(zip(tried, errs), key=lambda x: x[0][0]))
    if i == 0:
        return drive_doc, figs0, {**assumed, "why": assumed.get("why", "") + f"; kept: no other number of blocks per "
                                  f"die brings the fill stage's error more than {IDLE_GC_TIE:.0%} below its "
                                  f"(RMS log error by blocks: {listed})"}
    v, doc, figs = tried[i]
    return doc, figs, {"value": v, "source": "fitted", "residual": round(errs[i], 4),
                       "why": f"{assumed.get('why', '')}; the blocks per die it restores fitted to the fill stage, "
                              f"{v - fg} beyond the {fg} the foreground keeps free (RMS log error by blocks: {listed}; "
                              f"at most the {cap} a die has spare)"}


def _profile_of(drive_doc: Mapping[str, Any]) -> str:
    """The controller profile a twin's drive file names (the base it started from)."""
    return str(drive_doc.get("drive", {}).get("controller") or BASE_PROFILE)
