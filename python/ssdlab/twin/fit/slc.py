"""The twin's write cache: where the probe's cache stage showed a step down
(:mod:`ssdlab.twin.features.cache`), the twin gets a pseudo-SLC cache whose
values start at a generic modern drive's and are fitted, round by round, until
the cache stage simulated on the twin gives the measured cache size and the
measured post-cache rate. The in-cache rate stays the clean stage's (the
fit of the program time and dies: the clean stage writes into the cache)."""

from __future__ import annotations

import copy
from typing import Any, Dict, Mapping, Optional, Tuple

from ..features.cache import cache_features
from ..features.common import Features
from ..probe import CACHE, CLEAN, FILL, FULL, probe_jobs
from ..probe.names import FILL_JOB
from ..records import Figures, Provenance, SlcFit
from .base import _fv, link_bound_cache_write, modern_base
from .native import (  # noqa: F401  (re-exported: the fit's other steps and the tests read them here)
    FOLD_MAX,
    GENERIC_BITS_PER_CELL,
    NATIVE_TPROG_RANGE_NS,
    NATIVE_UNIT_BYTES,
    NO_FOLD_SHARE,
    _part_nand,
    folds_nothing,
    full_drive_fold,
    native_program_ns,
    native_tprog_range_ns,
)

#: A generic modern (TLC) drive's cache, where the fit starts: a small static part carved from the spare area,
#: a dynamic part of about a tenth of the capacity, no folding while the host writes (the values of the modern
#: profiles range 0.6-1.2% static, 10.8-15.4% dynamic, docs/model.md). Only the dynamic part is fitted: one fill
#: of an empty drive measures their sum, not the split.
GENERIC_SLC_CACHE: Dict[str, Any] = {"static_percent_of_capacity": 1.0, "dynamic_percent_of_capacity": 10.0,
                                     "fold_units_per_host_unit": 0.0, "refill_while_writing": False}
#: Rounds of the fit, and the relative error at which it stops.
ROUNDS = 4
TOLERANCE = 0.02




def _cache_of(drive_doc: Dict[str, Any], seed: int, budget: float, job: str) -> Tuple[Dict[str, Any], Figures]:
    """The cache features of the jobs that showed the cache (the cache stage, or the clean stage and the
    whole-drive fill) simulated on ``drive_doc``, and their figures."""
    from ...drive import Drive
    from ..probe import run_probe_simulated

    if job == FILL_JOB:
        cap = int(Drive.load(drive_doc).capacity_bytes)
        names = [j.name for j in probe_jobs(cap, budget) if j.stage == CLEAN or j.name == FILL_JOB]
        figs = run_probe_simulated(Drive.load(drive_doc), None, stages=(CLEAN, FILL), budget=budget, seed=seed,
                                   names=names).figures
    else:
        figs = run_probe_simulated(Drive.load(drive_doc), None, stages=(CACHE,), budget=budget, seed=seed).figures
    return {k: f["value"] for k, f in cache_features(figs).items()}, figs


def _modern_cache(drive_doc: Mapping[str, Any]) -> Optional[Dict[str, Any]]:
    """The [slc_cache] of the modern profile the twin started from (None on a SATA-era twin)."""
    from ...fit.params import library_values

    prof = str(drive_doc.get("drive", {}).get("controller") or "")
    if prof != modern_base().profile:
        return None
    return dict(library_values("profile", prof)["slc_cache"])


def _with_cache(drive_doc: Dict[str, Any], dynamic: float, tprog_ns: int, slc_tprog_ns: int,
                fold: Optional[float] = None, refill: Optional[bool] = None) -> Dict[str, Any]:
    d = copy.deepcopy(drive_doc)
    nand = d.setdefault("nand", {})
    modern = _modern_cache(drive_doc)
    if modern is not None:
        # measured folding and refill over the profile's
        modern.update({k: v for k, v in (("fold_units_per_host_unit", fold), ("refill_while_writing", refill))
                       if v is not None})
    if modern is not None:
        # the modern part has its SLC mode (bits per cell, SLC reads and erases); the profile its cache's split,
        # folding and refill. A native unit holds bits-per-cell SLC units, and no drive programs its SLC mode
        # slower per byte than its native mode: the SLC program is at most the native one over the bits
        # (wd-sn570-1000: a clean stage written past its small cache gave a native rate for the SLC program)
        bits = int(_part_nand(drive_doc).get("bits_per_cell") or GENERIC_BITS_PER_CELL)
        nand.update({"slc_tprog_ns": min(slc_tprog_ns, tprog_ns // bits), "tprog_ns": tprog_ns})
        d["slc_cache"] = {**modern, "dynamic_percent_of_capacity": round(dynamic, 3)}
        return d
    nand.update({"bits_per_cell": GENERIC_BITS_PER_CELL, "slc_tprog_ns": slc_tprog_ns, "tprog_ns": tprog_ns})
    for k in ("slc_tr_ns", "slc_tbers_ns"):
        nand.setdefault(k, nand.get(k.replace("slc_", ""), 0) or {"slc_tr_ns": 50_000, "slc_tbers_ns": 3_000_000}[k])
    nand.setdefault("slc_pe_cycles_rated", 30_000)
    d["slc_cache"] = {**GENERIC_SLC_CACHE, "dynamic_percent_of_capacity": round(dynamic, 3)}
    return d


def choose_slc_cache(drive_doc: Dict[str, Any], features: Features, seed: int, budget: float,
                     base_tprog_ns: int) -> Tuple[Dict[str, Any], Provenance, Optional[SlcFit], Figures]:
    """The twin with the cache the probe showed (unchanged without one), the provenance of its values, the
    fit's record (rounds, twin against measured; None without a cache) and the twin's cache-stage figures."""
    size, post = _fv(features, "slc_cache_bytes"), _fv(features, "post_cache_write_bytes_per_s")
    fast = _fv(features, "slc_write_bytes_per_s")
    cap = float(_fv(features, "capacity_bytes") or 0)
    if post and _modern_cache(drive_doc) is not None and _fv(features, "slc_fold_ratio") is None and \
            folds_nothing(features):
        # a drive that folds nothing while the host writes has its post-cache write right after the step: a later
        # fall is its garbage collection (of blocks a TRIM left) moving the cache's data, which the twin's own
        # garbage collection does, not the native rate
        post = _fv(features, "post_cache_first_bytes_per_s")
    # a performance mode's end is a step down too, which the twin already has from the fill
    if _fv(features, "slc_cache") is not True or _fv(features, "perf_mode") or not size or not post or not fast or not cap:
        return drive_doc, {}, None, {}
    modern = _modern_cache(drive_doc)
    static = float((modern or GENERIC_SLC_CACHE)["static_percent_of_capacity"])
    dynamic = max(0.0, 100 * float(size) / cap - static)
    # the clean stage's program time gave the in-cache rate: SLC mode keeps it, native programs are slower by
    # the ratio of the rates the step shows (on the modern part, a native one-shot program holds bits-per-cell
    # times the SLC mode's unit)
    slc_tprog = int(base_tprog_ns)
    part = _part_nand(drive_doc) if modern is not None else {}
    bits = int(part.get("bits_per_cell") or GENERIC_BITS_PER_CELL) if modern is not None else 1
    lo, hi = native_tprog_range_ns(part) if modern is not None else (0, 0)
    tprog = int(bits * slc_tprog * float(fast) / float(post))
    if modern is not None:
        tprog = int(min(max(tprog, lo), hi))
    rounds = []
    figs: Figures = {}
    fold = full_drive_fold(features) if modern is not None else None
    refill = _fv(features, "slc_refill") if modern is not None else None
    full = _fv(features, "full_write_bytes_per_s")
    if modern is not None and full and link_bound_cache_write(features):
        # a cache written at the link's rate gives no ratio of the program times (its dies could write faster):
        # the full drive's write, native with nothing to fold, is the dies' native rate, dies x unit / tPROG
        # (samsung970evoplus-1000: 32 dies of 96 KiB units at 2,097 MB/s, 1.50 ms; from the ratio 0.53, the
        # range's floor, where the twin's writes showed no step at all)
        tprog = int(min(max(native_program_ns(part, float(full)), lo), hi))
    elif fold is not None:
        # the native program takes the host's units and the folds together: the start gives the dies' native rate
        # (the full drive's) for the post-cache one
        tprog = int(min(max(tprog / (1 + fold), lo), hi))
    doc = _with_cache(drive_doc, dynamic, tprog, slc_tprog, fold, refill)
    best: Tuple[float, Dict[str, Any], Figures, int] = (1.0, doc, figs, 0)
    for _ in range(ROUNDS):
        got, figs = _cache_of(doc, seed, budget, str(_fv(features, "slc_cache_job") or CACHE))
        rounds.append({"dynamic_percent": round(dynamic, 3), "tprog_ns": tprog, **got})
        if not got.get("slc_cache_bytes") or not got.get("post_cache_write_bytes_per_s"):
            # no step on the twin (a native rate too near the cache's to tell): the best round so far stays
            break
        e_size = float(got["slc_cache_bytes"]) / float(size) - 1
        e_post = float(got["post_cache_write_bytes_per_s"]) / float(post) - 1
        rounds[-1].update({"size_error": round(e_size, 4), "post_error": round(e_post, 4)})
        err = max(abs(e_size), abs(e_post))
        if err < best[0] or len(rounds) == 1:
            best = (err, doc, figs, len(rounds) - 1)
        if err <= TOLERANCE:
            break
        # the cache scales with its percentages, the native rate inversely with the program time (half the
        # step at most: a rate near the cache's hides the step the next round measures)
        dynamic = max(0.0, (dynamic + static) / (1 + e_size) - static)
        tprog = int(tprog * min(max(1 + e_post, 0.5), 2.0))
        if modern is not None:
            tprog = int(min(max(tprog, lo), hi))
        doc = _with_cache(drive_doc, dynamic, tprog, slc_tprog, fold, refill)
    resid, doc, figs = round(best[0], 4), best[1], best[2]
    rounds[best[3]]["kept"] = True
    prov = _provenance(doc, size, post, resid, len(rounds), modern is not None,
                       bits if modern is not None else GENERIC_BITS_PER_CELL)
    if fold is not None:
        full = float(_fv(features, "full_write_bytes_per_s") or 0)
        ratio: Mapping[str, Any] = features.get("slc_fold_ratio") or {}
        first = float(_fv(features, "post_cache_first_bytes_per_s") or 0)
        prov["slc_cache.fold_units_per_host_unit"] = {
            "value": fold, "source": "measured",
            "why": str(ratio.get("how")) if ratio.get("value") is not None else
            f"the cache fill right after its step ({first / 1e6:,.0f} MB/s) ran at the full drive's sequential write "
            f"({full / 1e6:,.0f} MB/s, at least {NO_FOLD_SHARE:.0%} of it): nothing folded while the host wrote"
            if ratio.get("value") is None and folds_nothing(features) else
            f"the full drive's sequential write ({full / 1e6:,.0f} MB/s: nothing to fold) over the post-cache "
            f"write ({float(post) / 1e6:,.0f} MB/s: the dies program the host's units and the folds), less 1 (an "
            "upper bound: a fold also reads SLC pages; the whole-drive fill's rate did not rise where the folds "
            "ended, which would measure it)"}
    if refill is not None:
        prov["slc_cache.refill_while_writing"] = {"value": bool(refill), "source": "measured",
                                                  "why": str(features["slc_refill"]["how"])}
    if not rounds[best[3]].get("slc_cache_bytes"):
        # the twin showed no step in any round (its writes bound elsewhere): the values are the measurement's
        # start, not a fit that reproduced it
        for k in ("slc_cache.dynamic_percent_of_capacity", "nand.tprog_ns"):
            prov[k]["source"] = "measured"
            prov[k]["why"] += "; not reproduced: the twin's own writes showed no step in any round"
    return doc, prov, {"measured": {"slc_cache_bytes": size, "post_cache_write_bytes_per_s": post,
                                    "slc_idle_recovered_bytes": _fv(features, "slc_idle_recovered_bytes")},
                       "rounds": rounds, "residual": resid}, figs


def _provenance(doc: Mapping[str, Any], size: float, post: float, resid: float, n: int, modern: bool = False,
                bits: int = GENERIC_BITS_PER_CELL) -> Provenance:
    why_gen = (f"{doc['drive']['controller']}'s (the middle of the modern profiles'; " if modern else
               "a generic modern drive's (") + "one fill of an empty drive measures the cache, not its split)"
    fit = f"{n} rounds of the cache stage simulated on the twin"
    c = doc["slc_cache"]
    return {
        "slc_cache.static_percent_of_capacity": {"value": c["static_percent_of_capacity"], "source": "assumed",
                                                 "why": why_gen},
        "slc_cache.dynamic_percent_of_capacity": {
            "value": c["dynamic_percent_of_capacity"], "source": "fitted", "residual": resid,
            "why": f"the cache fill's {size / 1e9:,.1f} GB before its step down, less the static part ({fit})"},
        "slc_cache.fold_units_per_host_unit": {"value": c["fold_units_per_host_unit"], "source": "assumed",
                                               "why": why_gen},
        "slc_cache.refill_while_writing": {"value": c["refill_while_writing"], "source": "assumed", "why": why_gen},
        "nand.tprog_ns": {"value": doc["nand"]["tprog_ns"], "source": "fitted", "residual": resid,
                          "why": f"the native program time: the post-cache rate {post / 1e6:,.0f} MB/s ({fit})"},
        "nand.slc_tprog_ns": {"value": doc["nand"]["slc_tprog_ns"], "source": "fitted",
                              "why": "the clean stage's program time: its writes land in the cache"},
        "nand.bits_per_cell": {"value": doc["nand"].get("bits_per_cell", bits), "source": "assumed",
                               "why": (f"the {doc['drive']['nand_part']} part's" if modern else "a generic modern (TLC) part")
                               + f": the cache's blocks hold 1/{bits} of their data in SLC mode"},
        **({"slc_cache.fold_units_per_host_unit": {
            "value": c["fold_units_per_host_unit"], "source": "assumed",
            "why": why_gen + "; folding and the native program share the post-cache rate, which one fill measures: "
                   "the program time is fitted with the folding assumed"}} if modern else {}),
    }


#: The static shares of the cache a modern twin weighs (percent of the capacity; the dynamic part takes the rest of
#: the cache the fill measured): the modern profiles' 0.6-1.2% and either side.
STATIC_SHARES_PERCENT = (0.3, 0.6, 1.0, 1.5, 2.0)
#: ... where the probe did not measure the static part, one is taken where its RMS log error over the fill and full
#: stages is at most this share of the assumed share's.
STATIC_EVIDENCE = 0.5


def choose_static_share(drive_doc: Dict[str, Any], prov: Provenance, features: Features, measured: Mapping[str, Any],
                        runner: Any, seed: int, budget: float) -> Tuple[Dict[str, Any], Figures, Optional[str]]:
    """The split of a modern twin's cache between its static and dynamic
    parts. One fill of an empty drive measures their sum; on a full drive
    only the static part is left. Where the probe measured it (the full
    drive's write after idle time, ``static_cache_bytes``), each share of
    :data:`STATIC_SHARES_PERCENT` and the measured one (the sum kept) is
    simulated with the whole probe and the share whose twin gives the same
    bytes is taken (interpolated once between the two that bracket them):
    the twin's idle time folds at its own pace, so a share read off the bytes
    alone would miss a drive that gives back only part of its static cache
    in that time. Without that measurement, from the fill and full stages'
    rates: the best share is taken where its error is at most
    :data:`STATIC_EVIDENCE` of the assumed share's. Returns the drive, the
    figures of the share taken (empty when the assumed stays) and a line for
    the fit's output (None where nothing was weighed)."""
    from ..features.full import full_static_cache
    from .evaluate import _fill_error, _rate_jobs, _simulate_docs

    c = drive_doc.get("slc_cache")
    if not c or _modern_cache(drive_doc) is None:
        return drive_doc, {}, None
    s0 = float(c["static_percent_of_capacity"])
    total = s0 + float(c["dynamic_percent_of_capacity"])
    cap = int(_fv(features, "capacity_bytes") or 0)
    got = _fv(features, "static_cache_bytes")
    target = None if got is None or not cap else float(got)
    shares = [s for s in STATIC_SHARES_PERCENT if s != s0 and s < total]
    if target is not None:
        m = round(min(total, 100.0 * target / cap), 3)
        shares += [m] if m not in shares and m != s0 else []

    def with_share(s: float) -> Dict[str, Any]:
        return {**drive_doc, "slc_cache": {**c, "static_percent_of_capacity": s,
                                           "dynamic_percent_of_capacity": round(total - s, 3)}}

    key = "slc_cache.static_percent_of_capacity"
    dyn = "slc_cache.dynamic_percent_of_capacity"
    prov.setdefault(key, {"value": s0, "source": "assumed", "why": "the generic profile's"})
    docs = [drive_doc] + [with_share(s) for s in shares]
    figs = _simulate_docs(docs, runner, seed, budget, measured)
    if target is not None and cap:
        every = [s0] + shares

        def twin_bytes(f: Figures) -> float:
            return float(full_static_cache(f, cap)["static_cache_bytes"]["value"] or 0.0)

        have = [twin_bytes(f) for f in figs]
        lo = [i for i in range(len(every)) if have[i] <= target]
        hi = [i for i in range(len(every)) if have[i] > target]
        if lo and hi:
            a = max(lo, key=lambda i: have[i])
            b = min(hi, key=lambda i: have[i])
            if have[b] > have[a]:
                s = round(every[a] + (every[b] - every[a]) * (target - have[a]) / (have[b] - have[a]), 3)
                if 0 <= s <= total and s not in every:
                    every.append(s)
                    docs.append(with_share(s))
                    figs += _simulate_docs(docs[-1:], runner, seed, budget, measured)
                    have.append(twin_bytes(figs[-1]))
        k = min(range(len(every)), key=lambda i: (abs(have[i] - target), abs(every[i] - s0)))
        listed = ", ".join(f"{s:g}%: {h / 1e9:,.2f} GB" for s, h in sorted(zip(every, have)))
        s = every[k]
        prov[key] = {"value": s, "source": "fitted", "residual": round(abs(have[k] - target) / cap, 5),
                     "why": f"the full drive's write after idle time: {target / 1e9:,.2f} GB at the cache's rate (its "
                            f"static part); the twin's same write by static share of the {total:g}% cache (the sum "
                            f"the fill measured kept): {listed}"}
        prov[dyn] = {**prov[dyn], "value": round(total - s, 3),
                     "why": prov[dyn]["why"].replace("less the static part", f"less the static part ({s:g}%, fitted)")}
        return docs[k], figs[k], (f"static share {s:g}% of the {total:g}% cache (the full drive's write after idle "
                                  f"time: {target / 1e9:,.2f} GB measured; by share: {listed})")
    jobs = _rate_jobs(features, measured, budget, (FILL, FULL))
    errs = [_fill_error(measured, f, jobs) for f in figs]
    listed = ", ".join(f"{s:g}%: {e:.4f}" for s, e in sorted(zip([s0] + shares, errs)))
    k = min(range(len(docs)), key=lambda i: errs[i])
    if k == 0 or not errs[k] <= STATIC_EVIDENCE * errs[0]:
        prov[key] = {**prov[key], "why": prov[key]["why"] + f"; the fill and full stages' RMS log error by static share (the "
                     f"sum kept): {listed}: none at {STATIC_EVIDENCE} of the assumed's or less"}
        return drive_doc, {}, f"static share {s0:g}% kept (fill and full stages by share: {listed})"
    s = shares[k - 1]
    prov[key] = {"value": s, "source": "fitted", "residual": round(errs[k], 4),
                 "why": f"the fill and full stages (the full drive has only the static part): their RMS log error by static "
                        f"share of the {total:g}% cache (the sum the fill measured kept): {listed}"}
    prov[dyn] = {**prov[dyn], "value": round(total - s, 3),
                 "why": prov[dyn]["why"].replace("less the static part", f"less the static part ({s:g}%, fitted)")}
    return docs[k], figs[k], f"static share {s:g}% of the {total:g}% cache (fill and full stages by share: {listed})"
