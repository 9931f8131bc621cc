"""The write buffer the clean drive hid (NAND as fast as the link: no burst
fills it), from the flush after the torture: scaled and moved by a secant
step on a twin that drains at the drive's pace, or chosen from a grid of
sizes on a twin that cleans whole blocks when it needs one."""

from __future__ import annotations

import math
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from ...cluster import Runner
from ..features.common import Features
from ..records import Figures, JobFigures, ValueSource
from .base import _buffer_bytes, _buffer_pow2, _fv
from .behaviours import PACED_CV_EVIDENCE
from .evaluate import _fill_error, _flush_s, _rate_jobs, _simulate_docs, _torture_steady

#: ... and the most the twin's steady state may differ from the drive's: the flush drains the buffer at the pace of
#: the twin's garbage collection.
PACE_TOLERANCE = 0.10
#: A buffer the clean bursts measured is tried against the flush's only where the flush gives more than this times
#: it. Bursts see a buffer only as far as the link outruns the NAND; the flush's own estimate is rough (its
#: confidence is low).
BURST_DOUBT = 2.0
#: ... and replaced only where the flush's buffer at least halves the fill stage's error.
BURST_EVIDENCE = 0.5
#: The twin's flush after the torture is close enough to the measured one within this (log ratio, 2%).
FLUSH_TOLERANCE = 0.02


def choose_dirty_buffer(drive_doc: Dict[str, Any], figs0: Figures, assumed: ValueSource,
                        features: Features, measured: Mapping[str, JobFigures], runner: Runner,
                        seed: int, budget: float, gc_mode: str = "paced"
                        ) -> Tuple[Dict[str, Any], Figures, ValueSource]:
    """The twin's write buffer where the clean drive hid it (NAND as fast as
    the link: no burst fills it). ``figs0``: the whole probe simulated on
    ``drive_doc``. The buffer the flush after the torture gives
    (``dirty_buffer_bytes``) is tried against the assumed one on the whole
    probe (or against the bursts' one, where it is more than
    :data:`BURST_DOUBT` times it, and must then halve the error:
    :data:`BURST_EVIDENCE`); where it reproduces the fill stage better and the twin drains at
    the drive's pace (paced GC, its torture's steady state within
    :data:`PACE_TOLERANCE`, its per-second variability within
    :data:`PACED_CV_EVIDENCE`), it is scaled by the measured flush time over
    the twin's (the flush drains at the pace of the twin's own garbage
    collection), then moved by a secant step, and the buffer whose flush
    comes closest is kept. Returns the drive, its probe's figures and the
    buffer's provenance."""
    b0 = _fv(features, "dirty_buffer_bytes")
    t_meas = _flush_s(measured)

    def with_buffer(b: float) -> Dict[str, Any]:
        return {**drive_doc, "controller": {**drive_doc.get("controller", {}), "write_buffer_bytes": _buffer_bytes(b)}}

    # bursts see the buffer only as far as the link outruns the NAND: where the flush gives much more, it is tried
    # (against the bursts' own estimate, not the power of two it was taken as)
    burst = assumed.get("source") == "measured"
    b_burst = _fv(features, "write_buffer_bytes") or float(assumed.get("value") or 0)
    if (assumed.get("source") not in ("assumed", "measured") or not b0 or not t_meas
            or (burst and (gc_mode != "paced" or b0 <= BURST_DOUBT * b_burst))):
        return drive_doc, figs0, assumed
    if gc_mode != "paced":
        return _lazy_buffer(drive_doc, figs0, assumed, features, measured, runner, seed, budget, with_buffer)
    fill_jobs = _rate_jobs(features, measured, budget)
    docs = [drive_doc, with_buffer(b0)]
    figs = [figs0] + _simulate_docs(docs[1:], runner, seed, budget, measured)
    errs = [_fill_error(measured, f, fill_jobs) for f in figs]
    (pace_meas, cv_meas), (pace_twin, cv_twin) = _torture_steady(measured), _torture_steady(figs[0])
    if not (pace_meas and pace_twin and cv_meas is not None and cv_twin is not None):
        return drive_doc, figs[0], {**assumed, "why": assumed["why"] + "; the torture logged too few seconds to judge "
                                    "the flush after it"}
    if abs(math.log(pace_twin / pace_meas)) > math.log(1 + PACE_TOLERANCE) or cv_meas > PACED_CV_EVIDENCE * cv_twin:
        return drive_doc, figs[0], {**assumed, "why": assumed["why"] + "; the flush after the torture does not show it "
                                    "either: the twin does not drain at the drive's pace (steady state "
                                    f"{pace_twin:,.0f} IOPS against {pace_meas:,.0f}; per-second coefficient of variation "
                                    f"{cv_twin:.3f} against {cv_meas:.3f}), so the flush waits for garbage collection "
                                    "the twin does not do (whole blocks cleaned when needed, a recycling path)"}
    if not errs[1] < (BURST_EVIDENCE if burst else 1.0) * errs[0]:
        return drive_doc, figs[0], {**assumed, "why": assumed["why"] + f"; the buffer the flush after the torture gives "
                                    f"({int(b0):,} B) reproduces the fill stage no better ({errs[1]:.3f} against "
                                    f"{errs[0]:.3f}, RMS log error" + ("; it must halve it to replace the bursts)"
                                                                       if burst else ")")}
    # (buffer, its twin's flush time, drive, figures): scaled once by the times, then a secant step through the two
    tried = [(float(b0), _flush_s(figs[1]), docs[1], figs[1])]
    _secant(tried, t_meas, with_buffer, runner, seed, budget, measured)
    b_best, _, best_doc, best_figs = min(tried, key=lambda x: abs(math.log(x[1] / t_meas)) if x[1] else math.inf)
    size, snapped = _buffer_pow2(b_best)
    if snapped and size != int(best_doc["controller"]["write_buffer_bytes"]):
        best_doc = with_buffer(size)
        best_figs = _simulate_docs([best_doc], runner, seed, budget, measured)[0]
    value = int(best_doc["controller"]["write_buffer_bytes"])
    t_twin = _flush_s(best_figs) or 0.0
    return best_doc, best_figs, {"value": value, "source": "fitted",
                                 "why": (f"the clean drive's bursts gave {int(b_burst):,} B, a shallow step (the NAND "
                                         "nearly keeps up with the link)" if burst else "the clean drive's bursts did not show it")
                                        + f"; the flush right after the torture took "
                                        f"{t_meas:.3f} s, {t_twin:.3f} s on the twin with this buffer (the fill stage: RMS "
                                        f"log error {_fill_error(measured, best_figs, fill_jobs):.3f}, "
                                        f"{errs[0]:.3f} with the {'bursts' if burst else 'assumed'} "
                                        f"{int(assumed['value']):,} B)" + snapped,
                                 "residual": round(abs(math.log(t_twin / t_meas)), 4) if t_twin else None}

def _secant(tried: List[Tuple[float, Optional[float], Dict[str, Any], Figures]], t_meas: float,
            with_buffer: Callable[[float], Dict[str, Any]], runner: Runner, seed: int, budget: float,
            measured: Mapping[str, JobFigures]) -> None:
    """Append to ``tried`` (buffer, its twin's flush time, drive, figures) the buffer scaled once by the flush
    times, then a secant step through the last two, until a flush comes within :data:`FLUSH_TOLERANCE`."""
    for _ in range(2):
        (b_a, t_a, _d, _f) = tried[-1]
        if not t_a or abs(math.log(t_a / t_meas)) < FLUSH_TOLERANCE:
            break
        if len(tried) == 1:
            b_next = b_a * t_meas / t_a
        else:
            b_p, t_p = tried[-2][0], tried[-2][1]
            if not t_p or t_p == t_a:
                break
            b_next = b_a + (t_meas - t_a) * (b_a - b_p) / (t_a - t_p)
        if b_next <= 0:
            break
        doc_n = with_buffer(b_next)
        f_n = _simulate_docs([doc_n], runner, seed, budget, measured)[0]
        tried.append((b_next, _flush_s(f_n), doc_n, f_n))



#: The write buffers tried on a twin that cleans whole blocks when it needs one (lazy GC, with or without a recycling
#: path), where the bursts did not see the buffer: powers of two from 1 to 128 MiB, the era's caches.
LAZY_BUFFER_GRID_BYTES = tuple(1 << k for k in range(20, 28))
#: ... of which the best is kept where its fill-stage error is below this share of the assumed buffer's. With lazy GC
#: the flush after the torture waits for the cleaning as well as for the buffer, and on a twin that cleans as the
#: drive does (its torture at the drive's pace and variability) both are in the twin's flush too. Where the
#: cleaning hides the buffer the errors lie within a few percent of each other, and the assumed buffer stays.
LAZY_BUFFER_EVIDENCE = 0.7
#: ... and buffers whose errors lie within this share of the best are ties: of those the largest the flush's
#: estimate allows is kept.
LAZY_BUFFER_TIE = 0.05


def _lazy_buffer(drive_doc: Dict[str, Any], figs0: Figures, assumed: ValueSource,
                 features: Features, measured: Mapping[str, JobFigures], runner: Runner, seed: int,
                 budget: float, with_buffer: Callable[[float], Dict[str, Any]]
                 ) -> Tuple[Dict[str, Any], Figures, ValueSource]:
    """The buffer of a twin with lazy garbage collection, where the bursts did
    not see it: each of :data:`LAZY_BUFFER_GRID_BYTES` on the whole probe at
    once, the best fill stage kept under :data:`LAZY_BUFFER_EVIDENCE`, and only
    where the twin's torture runs at the drive's pace and variability (then
    the twin's flush waits for the same cleaning the drive's does)."""
    lazy_why = ("; the flush after the torture does not show it either: with garbage collection that cleans whole "
                "blocks when one is needed, the flush waits for that cleaning, not for the buffer")
    (pace_meas, cv_meas), (pace_twin, cv_twin) = _torture_steady(measured), _torture_steady(figs0)
    if (assumed.get("source") != "assumed" or not (pace_meas and pace_twin and cv_meas and cv_twin)
            or abs(math.log(pace_twin / pace_meas)) > math.log(1 + PACE_TOLERANCE)
            or abs(math.log(cv_twin / cv_meas)) > math.log(PACED_CV_EVIDENCE)):
        return drive_doc, figs0, {**assumed, "why": assumed["why"] + lazy_why}
    jobs = _rate_jobs(features, measured, budget)
    b_assumed = int(drive_doc.get("controller", {}).get("write_buffer_bytes") or assumed["value"])
    sizes = [b for b in LAZY_BUFFER_GRID_BYTES if b != b_assumed]
    docs = [with_buffer(b) for b in sizes]
    tried = [(b_assumed, drive_doc, figs0)] + list(zip(sizes, docs, _simulate_docs(docs, runner, seed, budget, measured)))
    errs = [_fill_error(measured, f, jobs) for _, _, f in tried]
    i = min(range(len(tried)), key=lambda k: errs[k])
    # buffers the fill stage cannot tell apart: the largest the flush after the torture allows (it drains the buffer
    # and waits for the cleaning, so its estimate is the most the buffer can be)
    b_flush = _fv(features, "dirty_buffer_bytes")
    ties = [k for k in range(len(tried)) if errs[k] <= (1 + LAZY_BUFFER_TIE) * errs[i]]
    allowed = [k for k in ties if not b_flush or tried[k][0] <= b_flush]
    tie_why = ""
    if len(ties) > 1 and allowed:
        i = max(allowed, key=lambda k: tried[k][0])
        tie_why = (f"; of those within {LAZY_BUFFER_TIE:.0%} of the best error, the largest"
                   + (f" below the flush's estimate ({int(b_flush):,} B)" if b_flush else ""))
    listed = ", ".join(f"{b / 2**20:g} MiB: {e:.4f}" for (b, _, _), e in sorted(zip(tried, errs), key=lambda x: x[0][0]))
    if i == 0 or not errs[i] < LAZY_BUFFER_EVIDENCE * errs[0]:
        return drive_doc, figs0, {**assumed, "why": assumed["why"] + lazy_why + f" (the fill stage's RMS log error by "
                                  f"buffer, the twin cleaning as the drive does: {listed}; a buffer must bring it below "
                                  f"{LAZY_BUFFER_EVIDENCE} of the assumed's)"}
    _, doc, figs = tried[i]
    return doc, figs, {"value": int(doc["controller"]["write_buffer_bytes"]), "source": "fitted",
                       "residual": round(errs[i], 4),
                       "why": "the clean drive's bursts did not show it; the flush after the torture waits for the "
                              "buffer and for the whole blocks garbage collection cleans, on the twin as on the drive "
                              "(its torture at the drive's pace and variability): the buffer whose fill stage comes "
                              f"closest (RMS log error by buffer: {listed}){tie_why}"}
