"""The full drive on a modern twin: the die count and the spare area.

The clean stage writes into the write cache, whose rate is dies x SLC unit / SLC program time: twice the dies at
twice the program time write it as fast, and its reads at depth often bind at the controller. On the full drive
the data lies in native blocks, so its reads at depth and its sequential reads move with the dies (at the page
read the QD1 reads fixed). The die counts of half, the same and twice the fitted one, each with its program times
(SLC and native) scaled with it so that every write rate the cache fit matched stays, are simulated on the clean
and full stages; the count whose two stages together come closest is kept.

The spare area: a modern drive's 4KB torture in the fill stage rarely reaches garbage collection (a DRAM-less
drive's map cache or its commands hold it to tens of MB/s), so the full stage's 128KB random writes give the GC
onset instead (:func:`full_onset_features`)."""

from __future__ import annotations

import copy
import math
from typing import Any, Dict, List, Mapping, Optional, Sequence, TextIO, Tuple

from ...cluster import Runner
from ..features.common import Features, feature
from ..probe import CLEAN, FULL, probe_jobs
from ..records import Figures, JobFigures, Provenance
from .base import _fv, base_of
from .evaluate import simulate_probe_figures

#: The die counts tried, as factors on the fitted count.
DIE_FACTORS = (0.5, 1.0, 2.0)
#: Another count replaces the fitted one only where it lowers the combined error by this share: the clean
#: stage chose the fitted one, and the full stage is a handful of jobs.
DIES_EVIDENCE = 0.85
#: The keys of the program times that scale with the dies (the rates the clean stage and the cache fit matched are
#: dies x unit / program time).
PROGRAM_KEYS = ("nand.slc_tprog_ns", "nand.tprog_ns")


def full_onset_features(features: Features) -> Dict[str, Any]:
    """``features`` with the GC onset of the full stage's random writes standing for the fill stage's torture's
    where that one saw none, on a modern drive (a SATA-era twin keeps its torture's)."""
    if not base_of(features).modern or _fv(features, "gc_onset_bytes") or not _fv(features, "full_gc_onset_bytes"):
        return dict(features)
    out: Dict[str, Any] = dict(features)
    f = features["full_gc_onset_bytes"]
    out["gc_onset_bytes"] = feature(f["value"], "B", f["confidence"],
                                    f["how"] + " (the full stage: the fill stage's 4KB torture saw no onset)")
    out["spare_fraction"] = dict(features["full_spare_fraction"])
    return out


def _dies(nand: Mapping[str, Any]) -> int:
    return int(nand.get("channels", 8)) * int(nand.get("packages_per_channel", 1)) * int(nand.get("dies_per_package", 1))


def _with_dies(drive_doc: Mapping[str, Any], factor: float, part: Mapping[str, Any]) -> Optional[Dict[str, Any]]:
    """The twin with ``factor`` times its dies (packages per channel, or dies per package where those cannot
    halve), the same raw NAND (blocks per plane scaled back) and its program times scaled with the dies; None where
    the count cannot change so."""
    d = copy.deepcopy(dict(drive_doc))
    nand = d.setdefault("nand", {})
    ppc, dpp = int(nand.get("packages_per_channel", 1)), int(nand.get("dies_per_package", 1))
    if factor > 1:
        ppc *= 2
    elif factor < 1:
        if ppc % 2 == 0:
            ppc //= 2
        elif dpp % 2 == 0:
            dpp //= 2
        else:
            return None
    if ppc > 16:
        return None
    before = _dies(nand)
    nand["packages_per_channel"], nand["dies_per_package"] = ppc, dpp
    k = _dies(nand) / before
    for key in PROGRAM_KEYS:
        name = key.split(".", 1)[1]
        t = nand.get(name, part.get(name))
        if t:
            nand[name] = int(round(float(t) * k))
    bpp = nand.get("blocks_per_plane", part.get("blocks_per_plane"))
    if bpp:
        nand["blocks_per_plane"] = int(math.ceil(float(bpp) / k))
    return d


def _rms_log(measured: Mapping[str, JobFigures], twin: Mapping[str, JobFigures], jobs: Sequence[str]) -> float:
    errs = [math.log(float(twin[j]["mbps"]) / float(measured[j]["mbps"])) for j in jobs
            if (measured.get(j) or {}).get("mbps") and (twin.get(j) or {}).get("mbps")]
    return math.sqrt(sum(e * e for e in errs) / len(errs)) if errs else math.inf


def choose_full_dies(drive_doc: Dict[str, Any], prov: Provenance, features: Features,
                     measured: Mapping[str, JobFigures], run: Runner, seed: int, budget: float,
                     stream: Optional[TextIO]) -> Tuple[Dict[str, Any], Figures, Optional[Dict[str, Any]]]:
    """The twin with the die count whose clean and full stages come closest to the probe's (unchanged where the
    probe has no full stage or the twin is not modern); its full stage's figures; the record of the choice."""
    from .slc import _part_nand

    cap = int(_fv(features, "capacity_bytes") or 0)
    jobs = probe_jobs(cap, budget)
    full = [j.name for j in jobs if j.stage == FULL and j.direction != "trim" and (measured.get(j.name) or {}).get("mbps")]
    if not base_of(features).modern or not full:
        return drive_doc, {}, None
    clean = [j.name for j in jobs if j.stage == CLEAN and j.direction != "trim"]
    part = _part_nand(drive_doc)
    docs: List[Tuple[float, Dict[str, Any]]] = []
    for k in DIE_FACTORS:
        d = drive_doc if k == 1.0 else _with_dies(drive_doc, k, part)
        if d is not None:
            docs.append((k, d))
    items = [(d, seed, budget, (CLEAN, FULL)) for _, d in docs]
    figs = [f for _, f in sorted(run.map(simulate_probe_figures, items, what="twin full drives"), key=lambda x: x[0])]
    rows: List[Dict[str, Any]] = []
    for (k, d), f in zip(docs, figs):
        e_clean, e_full = _rms_log(measured, f, clean), _rms_log(measured, f, full)
        rows.append({"dies": _dies({**part, **d["nand"]}), "factor": k, "clean_error": round(e_clean, 4),
                     "full_error": round(e_full, 4), "error": round(math.hypot(e_clean, e_full) / math.sqrt(2), 4),
                     "full_jobs": {n: round(float((f.get(n) or {}).get("mbps") or 0.0), 1) for n in full}})
    base = next(i for i, (k, _) in enumerate(docs) if k == 1.0)
    err = [float(r["error"]) for r in rows]
    best = min(range(len(rows)), key=lambda i: err[i])
    if err[best] > DIES_EVIDENCE * err[base]:
        best = base
    rows[best]["kept"] = True
    kept, kept_figs = docs[best][1], figs[best]
    record = {"measured": {n: round(float(measured[n]["mbps"]), 1) for n in full}, "rows": rows}
    if stream is not None:
        stream.write("ssdlab fit: the full drive: " + ", ".join(
            f"{r['dies']} dies {r['error']:.3f} (clean {r['clean_error']:.3f}, full {r['full_error']:.3f})"
            for r in rows) + f": {rows[best]['dies']} kept\n")
    if best != base:
        why = (f"the clean and full stages simulated with {', '.join(str(r['dies']) for r in rows)} dies (program "
               f"times scaled with them, so the cache's write rates stay): RMS log error "
               + ", ".join(f"{r['error']:.3f}" for r in rows)
               + f"; {rows[best]['dies']} dies read the full drive's native blocks as the drive does")
        for key in ("nand.packages_per_channel", "nand.dies_per_package", "nand.blocks_per_plane", *PROGRAM_KEYS):
            sec, name = key.split(".", 1)
            if name in kept.get(sec, {}):
                old = prov.get(key)
                source = "fitted" if key != "nand.blocks_per_plane" or old is None else old["source"]
                was = "" if old is None or not old.get("why") else "; " + str(old.get("why"))
                prov[key] = {"value": kept[sec][name], "source": source, "why": why + was}
    return kept, {n: kept_figs[n] for n in kept_figs if n in {j.name for j in jobs if j.stage == FULL}}, record
