"""The full drive on a modern twin: the die count and the spare area.

The clean stage writes into the write cache, whose rate is dies x SLC unit / SLC program time: twice the dies at
twice the program time write it as fast, and its reads at depth often bind at the controller. On the full drive the
data lies in native blocks, so its reads at depth and its sequential reads move with the dies (at the page read the
QD1 reads fixed). The die counts of half, the same and twice the fitted one, each with its program times (SLC and
native) scaled with it so that every write rate the cache fit matched stays (the SLC one stays put where the cache
was written at the link's rate: the flushes set it), are simulated on the clean and full stages; the count whose
two stages together come closest is kept. Where the cache fit left the native program time at an end of the part's
range (the rates asked for one past it), the other counts take theirs from the full drive's write instead, which
their dies can reach inside the range.

Where the dies could program faster than the full drive writes (at the fitted native program time), the bound is
the controller's memory for the programs in flight (a program buffer, as on the Samsung Pablo): twice the dies at
the fitted native program time, with a buffer of the native units that give the full drive's sequential write, is a
candidate too, simulated with the cache stage (the buffer moves the post-cache write the cache fit matched).

The spare area: a modern drive's 4KB torture in the fill stage rarely reaches garbage collection (a DRAM-less
drive's map cache or its commands hold it to tens of MB/s), so the full stage's 128KB random writes give the GC
onset instead (:func:`full_onset_features`)."""

from __future__ import annotations

import copy
import math
from typing import Any, Dict, List, Mapping, Optional, Sequence, TextIO, Tuple

from ...cluster import Runner
from ...drive import Drive
from ...errors import SsdlabError
from ..features.common import Features, feature
from ..probe import CACHE, CLEAN, FULL, probe_jobs
from ..probe.names import CACHE_FILL, FULL_RANDREAD, FULL_SEQREAD
from ..records import Figures, JobFigures, Provenance
from .base import _fv, base_of, link_bound_cache_write
from .evaluate import simulate_probe_figures
from .start import MODERN_WRITE_PATH_MAX
from .structure import WRITE_PATH_KEY

#: The die counts tried, as factors on the fitted count.
DIE_FACTORS = (0.5, 1.0, 2.0)
#: Another count replaces the fitted one only where it lowers the combined error by this share: the clean
#: stage chose the fitted one, and the full stage is a handful of jobs.
DIES_EVIDENCE = 0.85
#: The key of the controller's memory for the data of the programs in flight.
PROGRAM_BUFFER_KEY = "controller.program_buffer_bytes"
#: The channel rate of a twin whose part and file give none (generic-nvme's).
DEFAULT_CHANNEL_BYTES_PER_S = 1_000_000_000
#: The least SLC program time a candidate gets (the modern fit's range starts there).
SLC_TPROG_MIN_NS = 30_000
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


def _with_dies(drive_doc: Mapping[str, Any], factor: float, part: Mapping[str, Any],
               keep: Sequence[str] = ()) -> Optional[Dict[str, Any]]:
    """The twin with ``factor`` times its dies (packages per channel, or dies per package where those cannot
    halve), the same raw NAND (blocks per plane scaled back) and its program times scaled with the dies, but for
    the keys in ``keep``; None where the count cannot change so."""
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
        if key in keep:
            continue
        name = key.split(".", 1)[1]
        t = nand.get(name, part.get(name))
        if t:
            nand[name] = int(round(float(t) * k))
    bpp = nand.get("blocks_per_plane", part.get("blocks_per_plane"))
    if bpp:
        nand["blocks_per_plane"] = int(math.ceil(float(bpp) / k))
    return d


def _with_native_from_full(d: Optional[Dict[str, Any]], fitted: Mapping[str, Any], part: Mapping[str, Any],
                           full_write: Optional[float]) -> Optional[Dict[str, Any]]:
    """``d`` (another die count of the twin ``fitted``) with the native program time at which its dies write the
    full drive's sequential write, where the cache fit left ``fitted``'s at an end of the part's range: the rates
    there asked for a time past it, so scaling that time with the dies would carry the miss to every count
    (samsung870qvo-1000: 16 dies of 256 KiB units need 29 ms, past the QLC range's 21.9; halved to 8 dies at
    10.9 ms, the twin wrote 33% fast, where 8 dies at 14.6 ms write the drive's 144 MB/s)."""
    from .native import native_program_ns, native_tprog_range_ns

    if d is None or not full_write:
        return d
    nand = {**part, **fitted.get("nand", {})}
    lo, hi = native_tprog_range_ns(nand)
    tprog = float(nand.get("tprog_ns") or 0)
    if not tprog or lo < tprog < hi:
        return d
    d["nand"]["tprog_ns"] = int(min(max(native_program_ns({**part, **d["nand"]}, float(full_write)), lo), hi))
    return d


def _with_program_buffer(drive_doc: Mapping[str, Any], factor: float, part: Mapping[str, Any],
                         full_write: float, cache_write: Optional[float] = None) -> Optional[Dict[str, Any]]:
    """``factor`` times the dies at the fitted native program time, with the controller's program buffer holding
    the native units in flight that give the full drive's sequential write: where a drive's dies could program
    faster than its full drive writes, the programs in flight bind it, not the dies. A unit holds its room from
    its transfer on the channel to the end of its program, so the units are the rate x (transfer + native
    program) / unit, and the SLC program time is the one at which that many units in flight write the cache as
    fast as the twin did: at the rate its dies give, or at ``cache_write`` (the probe's cache fill) where that is
    slower, the cache written at the link's or the controller's rate (the dies could write faster:
    samsung970evoplus-1000's 32 dies at 91 us give 11.5 GB/s, its link 3.6; at the dies' rate the SLC program
    fell to the range's 30 us floor and the flushed writes ran twice as fast as the drive's; samsung980-1000's 16
    dies at 79 us give 6.6 GB/s where its cache fill ran at 2.1). None where the dies at that program time could
    not write the full drive's rate."""
    d = _with_dies(drive_doc, factor, part)
    if d is None:
        return None
    nand = d["nand"]
    was = {**part, **drive_doc.get("nand", {})}
    tprog = float(was.get("tprog_ns") or 0)
    channel = float(was.get("channel_bytes_per_s") or DEFAULT_CHANNEL_BYTES_PER_S)
    slc_unit = int(was.get("planes_per_die", 2)) * int(was.get("page_size_bytes", 16384))
    unit = slc_unit * int(was.get("bits_per_cell", 3))
    if not tprog or _dies(nand) * unit / (tprog / 1e9) <= full_write:
        return None
    nand["tprog_ns"] = int(tprog)
    units = max(1, round(full_write * (unit / channel + tprog / 1e9) / unit))
    if units >= _dies(nand):
        return None  # room for a program on every die: no bound (the candidate without a buffer)
    d.setdefault("controller", {})["program_buffer_bytes"] = units * unit
    slc = was.get("slc_tprog_ns")
    if slc:
        # the twin's cache took a unit per die per SLC program (its transfer overlapped the program before it)
        rate = _dies(was) * slc_unit / (float(slc) / 1e9)
        if cache_write:
            rate = min(rate, cache_write)
        t = units * slc_unit / rate - slc_unit / channel
        nand["slc_tprog_ns"] = int(round(max(SLC_TPROG_MIN_NS, t * 1e9), -3))
    return d


def _shorter_programs(drive_doc: Mapping[str, Any], part: Mapping[str, Any], keep: Sequence[str]
                      ) -> Optional[Dict[str, Any]]:
    """The twin on half its dies at half its program times (the same write rates), where the native program stays
    within the part's range: the start of a candidate with the fitted dies at half the program time."""
    from .native import native_tprog_range_ns

    d = _with_dies(drive_doc, 0.5, part, keep)
    if d is None:
        return None
    lo, _ = native_tprog_range_ns({**part, **d["nand"]})
    return d if float(d["nand"].get("tprog_ns") or 0) >= lo else None


def _valid(d: Optional[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    """``d`` where it is a drive the engine accepts, else None: more dies on the same raw NAND leave fewer spare
    blocks on each, fewer than the FTL needs on a small drive."""
    if d is None:
        return None
    try:
        Drive.load(d)
    except SsdlabError:
        return None
    return d


def _rms_log(measured: Mapping[str, JobFigures], twin: Mapping[str, JobFigures], jobs: Sequence[str]) -> float:
    errs = [math.log(float(twin[j]["mbps"]) / float(measured[j]["mbps"])) for j in jobs
            if (measured.get(j) or {}).get("mbps") and (twin.get(j) or {}).get("mbps")]
    return math.sqrt(sum(e * e for e in errs) / len(errs)) if errs else math.inf


def choose_full_dies(drive_doc: Dict[str, Any], prov: Provenance, features: Features,
                     measured: Mapping[str, JobFigures], run: Runner, seed: int, budget: float,
                     stream: Optional[TextIO]) -> Tuple[Dict[str, Any], Figures, Optional[Dict[str, Any]]]:
    """The twin with the die count (and program buffer) whose clean, cache and full stages come closest to the
    probe's (unchanged where the probe has no full stage or the twin is not modern); its full stage's figures (and
    its clean and cache stages' where the twin changed); the record of the choice."""
    from .native import _part_nand

    cap = int(_fv(features, "capacity_bytes") or 0)
    jobs = probe_jobs(cap, budget)
    full = [j.name for j in jobs if j.stage == FULL and j.direction != "trim" and (measured.get(j.name) or {}).get("mbps")]
    if not base_of(features).modern or not full:
        return drive_doc, {}, None
    clean = [j.name for j in jobs if j.stage == CLEAN and j.direction != "trim"]
    # the cache fill (not the write after idle time: what idle time gives back is the profile's, assumed)
    cache = [n for n in (CACHE_FILL,) if (measured.get(n) or {}).get("mbps")]
    part = _part_nand(drive_doc)
    full_write = _fv(features, "full_write_bytes_per_s")
    docs: List[Tuple[float, Dict[str, Any]]] = []
    link_cache = link_bound_cache_write(features)
    # a cache written at the link's rate says nothing of the SLC program time: the flushed writes set it (a flush
    # programs one unit on one die, whatever the count), so it stays where the count moves
    keep = ("nand.slc_tprog_ns",) if link_cache else ()
    # the cache's rate a buffer of units in flight must give: the probe's, where the dies could write faster
    cache_write = min((float(x) for x in (link_cache, _fv(features, "slc_write_bytes_per_s")) if x), default=None)
    for k in DIE_FACTORS:
        d = drive_doc if k == 1.0 else _valid(_with_native_from_full(_with_dies(drive_doc, k, part, keep), drive_doc,
                                                                     part, full_write))
        if d is not None:
            docs.append((k, d))
    if full_write and PROGRAM_BUFFER_KEY.split(".", 1)[1] not in drive_doc.get("controller", {}):
        for k in DIE_FACTORS:
            d = _valid(_with_program_buffer(drive_doc, k, part, float(full_write), cache_write))
            if d is not None:
                docs.append((k, d))
        # the fitted dies at half the program time, bound by a buffer instead: a rate the dies give at one program
        # time the programs in flight give at a shorter one, which only the reads waiting behind programs tell
        # apart (samsung980-1000: 16 dies at 1.2 ms behind a 864 KiB buffer, fitted as 16 dies at 2.4 ms)
        half = _shorter_programs(drive_doc, part, keep)
        d = None if half is None else _valid(_with_program_buffer(half, 2.0, part, float(full_write), cache_write))
        if d is not None and _dies({**part, **d["nand"]}) == _dies({**part, **drive_doc.get("nand", {})}):
            docs.append((1.0, d))
    # the cache stage too: a program buffer moves the post-cache write the cache fit matched
    items = [(d, seed, budget, (CLEAN, CACHE, FULL)) for _, d in docs]
    figs = [f for _, f in sorted(run.map(simulate_probe_figures, items, what="twin full drives"), key=lambda x: x[0])]
    rows: List[Dict[str, Any]] = []
    for (k, d), f in zip(docs, figs):
        e_clean, e_full = _rms_log(measured, f, clean), _rms_log(measured, f, full + cache)
        rows.append({"dies": _dies({**part, **d["nand"]}), "factor": k,
                     "program_buffer_bytes": d.get("controller", {}).get("program_buffer_bytes"),
                     "tprog_ns": d["nand"].get("tprog_ns"),
                     "clean_error": round(e_clean, 4),
                     "full_error": round(e_full, 4), "error": round(math.hypot(e_clean, e_full) / math.sqrt(2), 4),
                     "full_jobs": {n: round(float((f.get(n) or {}).get("mbps") or 0.0), 1) for n in full + cache}})
    base = next(i for i, (k, _) in enumerate(docs) if k == 1.0)
    err = [float(r["error"]) for r in rows]
    best = min(range(len(rows)), key=lambda i: err[i])
    if err[best] > DIES_EVIDENCE * err[base]:
        best = base
    opened = _write_path_opened(docs[best][1]) if best != base else None
    if opened is not None:
        # the write path the clean fit capped stood in for the bound the program buffer now gives: opened, and
        # kept where the stages come as close or closer
        f = [f for _, f in run.map(simulate_probe_figures, [(opened, seed, budget, (CLEAN, CACHE, FULL))],
                                   what="twin full drive")][0]
        e_clean, e_full = _rms_log(measured, f, clean), _rms_log(measured, f, full + cache)
        rows.append({**rows[best], "write_path_open": True, "clean_error": round(e_clean, 4),
                     "full_error": round(e_full, 4), "error": round(math.hypot(e_clean, e_full) / math.sqrt(2), 4),
                     "full_jobs": {n: round(float((f.get(n) or {}).get("mbps") or 0.0), 1) for n in full + cache}})
        docs.append((docs[best][0], opened))
        figs.append(f)
        if float(rows[-1]["error"]) <= float(rows[best]["error"]):
            best = len(rows) - 1
    rows[best]["kept"] = True
    kept, kept_figs = docs[best][1], figs[best]
    record = {"measured": {n: round(float(measured[n]["mbps"]), 1) for n in full}, "rows": rows}
    if stream is not None:
        stream.write("ssdlab fit: the full drive: " + ", ".join(
            f"{_label(r)} {r['error']:.3f} (clean {r['clean_error']:.3f}, full {r['full_error']:.3f})"
            for r in rows) + f": {_label(rows[best])} kept\n")
    if best != base:
        why = ("the clean, cache and full stages simulated with " + ", ".join(_label(r) for r in rows)
               + " (program times scaled with the dies, so the cache's write rates stay, but for an SLC program the "
               "flushes set under a cache written at the link's rate; with a program buffer, the "
               "native program time kept and the buffer holding the units in flight that give the full drive's "
               "sequential write): RMS log error " + ", ".join(f"{r['error']:.3f}" for r in rows)
               + f"; {_label(rows[best])} came closest")
        for key in ("nand.packages_per_channel", "nand.dies_per_package", "nand.blocks_per_plane", *PROGRAM_KEYS,
                    PROGRAM_BUFFER_KEY, WRITE_PATH_KEY):
            sec, name = key.split(".", 1)
            if key == WRITE_PATH_KEY and not rows[best].get("write_path_open"):
                continue
            if name in kept.get(sec, {}):
                old = prov.get(key)
                source = "fitted" if key != "nand.blocks_per_plane" or old is None else old["source"]
                was = "" if old is None or not old.get("why") else "; " + str(old.get("why"))
                prov[key] = {"value": kept[sec][name], "source": source, "why": why + was}
    # the full stage's figures of the twin kept, and its clean and cache stages' where this step changed the twin
    shown = {j.name for j in jobs if j.stage == FULL or (best != base and j.stage in (CLEAN, CACHE))}
    return kept, {n: kept_figs[n] for n in kept_figs if n in shown}, record


def _label(row: Mapping[str, Any]) -> str:
    pb = row.get("program_buffer_bytes")
    t = row.get("tprog_ns")
    return (f"{row['dies']} dies" + (f" at {float(t) / 1e6:.2f} ms" if t else "")
            + (f" + {int(pb) // 1024} KiB program buffer" if pb else "")
            + (", the write path open" if row.get("write_path_open") else ""))


def _write_path_opened(d: Mapping[str, Any]) -> Optional[Dict[str, Any]]:
    """``d`` with its write path at the modern range's top, where it has a program buffer and a path below that
    (else None): the clean fit capped the path where the programs in flight bound the writes."""
    ctrl = d.get("controller", {})
    path = ctrl.get(WRITE_PATH_KEY.split(".", 1)[1])
    if not ctrl.get(PROGRAM_BUFFER_KEY.split(".", 1)[1]) or not path or float(path) >= MODERN_WRITE_PATH_MAX:
        return None
    out = copy.deepcopy(dict(d))
    out["controller"][WRITE_PATH_KEY.split(".", 1)[1]] = MODERN_WRITE_PATH_MAX
    return out


#: The full stage's reads, of the native pages past any cache (the data the whole-drive fill and the full stage's
#: sequential write left): they set the native page types' one read factor.
NATIVE_READ_JOBS = (FULL_SEQREAD, FULL_RANDREAD)
#: Rounds of the native read factor (each one simulation of the clean, cache and full stages).
NATIVE_READ_ROUNDS = 2
#: A factor whose full-stage reads land within this RMS log error is kept without another round.
NATIVE_READ_TOLERANCE = 0.03
#: A full-stage read measures the page read only where its rate answers the factor: a read bound by the die's page
#: read slows by the factor (a response of 1); below half of that, something else binds it (the link, the
#: controller, map-cache misses) and moving the factor to fit it would set the page read from another cause.
NATIVE_READ_MIN_RESPONSE = 0.5


def _with_native_reads(drive_doc: Mapping[str, Any], part: Mapping[str, Any], factor: float) -> Dict[str, Any]:
    """The twin with the part's native page-type reads times ``factor`` (and the mean page read with them)."""
    d = copy.deepcopy(dict(drive_doc))
    nand = d.setdefault("nand", {})
    types = [int(round(float(t) * factor, -2)) for t in part["tr_page_types_ns"]]
    nand["tr_page_types_ns"] = types
    nand["tr_ns"] = int(round(sum(types) / len(types), -2))
    return d


def choose_native_reads(drive_doc: Dict[str, Any], prov: Provenance, features: Features,
                        measured: Mapping[str, JobFigures], full_figs: Mapping[str, JobFigures], run: Runner,
                        seed: int, budget: float, stream: Optional[TextIO]
                        ) -> Tuple[Dict[str, Any], Figures, Optional[Dict[str, Any]]]:
    """A modern twin's native page-type reads: the part's times x one factor, from the full stage's reads
    (:data:`NATIVE_READ_JOBS`, the native NAND past any cache). The twin's full-stage figures ``full_figs`` (at the
    part's times) give the first step: die-bound reads take the page read's time, so the factor is the twin's
    rate over the measured one (their geometric mean); each round simulates the clean, cache and full stages at
    that factor. The first step also measures how far each read follows the factor: reads that do not (a response
    below :data:`NATIVE_READ_MIN_RESPONSE`: link-, controller- or map-bound) leave the fit, and where none follows
    the part's times are kept as assumed. Later steps go by the measured response, and the factor whose following
    reads come closest (RMS log error) is kept.
    Unchanged where the twin is not modern, its part has no page types or the probe has no full-stage reads.
    Returns the twin, its figures where the factor moved, and the record of the rounds."""
    from .native import _part_nand

    b = base_of(features)
    part = _part_nand({"drive": drive_doc.get("drive", {})})
    if not b.modern or not part.get("tr_page_types_ns"):
        return drive_doc, {}, None
    jobs = [n for n in NATIVE_READ_JOBS if (measured.get(n) or {}).get("mbps") and (full_figs.get(n) or {}).get("mbps")]
    mean = sum(float(t) for t in part["tr_page_types_ns"]) / len(part["tr_page_types_ns"])
    # the factor the twin already has: the part's (1) unless the map spans or the clean stage's reads set the types
    own = (drive_doc.get("nand") or {}).get("tr_page_types_ns")
    start = round(sum(float(t) for t in own) / len(own) / mean, 3) if own else 1.0
    if not jobs:
        if start != 1.0:
            return _with_native_reads(drive_doc, part, start), {}, None
        drive_doc = _with_native_reads(drive_doc, part, 1.0)
        why = (f"the {b.part} part's page-type reads: the probe read no native pages (no full stage), so they are "
               "assumed")
        for key in ("nand.tr_page_types_ns", "nand.tr_ns"):
            sec, name = key.split(".", 1)
            prov[key] = {"value": drive_doc[sec][name], "source": "assumed", "why": why}
        return drive_doc, {}, None
    lo, hi = b.tr_range_ns[0] / mean, b.tr_range_ns[1] / mean

    def ratio(figs: Mapping[str, JobFigures], names: Sequence[str]) -> float:
        # the twin's reads over the measured ones (geometric mean): a die-bound read's rate goes as 1 / the read time
        return math.exp(sum(math.log(float(figs[n]["mbps"]) / float(measured[n]["mbps"])) for n in names)
                        / len(names))

    def response(f0: float, a: Mapping[str, JobFigures], f1: float, c: Mapping[str, JobFigures], n: str) -> float:
        # how far a read's rate follows the factor: 1 for a read bound by the page read, 0 for one bound elsewhere
        return -math.log(float(c[n]["mbps"]) / float(a[n]["mbps"])) / math.log(f1 / f0)

    rounds: List[Dict[str, Any]] = [{"factor": start, "error": round(_rms_log(measured, full_figs, jobs), 4),
                                     "jobs": {n: round(float(full_figs[n]["mbps"]), 1) for n in jobs}}]
    docs: List[Tuple[float, Dict[str, Any], Mapping[str, JobFigures]]] = [(start, drive_doc, full_figs)]
    factor, figs = start, full_figs
    moving: List[str] = list(jobs)
    responses: Dict[str, float] = {}
    for _ in range(NATIVE_READ_ROUNDS):
        if _rms_log(measured, figs, moving) <= NATIVE_READ_TOLERANCE:
            break
        # the first step takes die-bound reads; later ones the response the last two rounds measured
        gain = sum(responses[n] for n in moving) / len(moving) if responses else 1.0
        nxt = min(max(factor * ratio(figs, moving) ** (1.0 / min(max(gain, NATIVE_READ_MIN_RESPONSE), 1.5)), lo), hi)
        if abs(nxt / factor - 1) < 0.01:
            break
        before, before_figs = factor, figs
        factor = round(nxt, 3)
        d = _with_native_reads(drive_doc, part, factor)
        figs = [f for _, f in run.map(simulate_probe_figures, [(d, seed, budget, (CLEAN, CACHE, FULL))],
                                      what="twin native reads")][0]
        docs.append((factor, d, figs))
        responses = {n: response(before, before_figs, factor, figs, n) for n in jobs}
        rounds.append({"factor": factor, "error": round(_rms_log(measured, figs, jobs), 4),
                       "jobs": {n: round(float(figs[n]["mbps"]), 1) for n in jobs},
                       "response": {n: round(responses[n], 3) for n in jobs}})
        moving = [n for n in jobs if responses[n] >= NATIVE_READ_MIN_RESPONSE]
        if not moving:
            break
    record: Dict[str, Any] = {"measured": {n: round(float(measured[n]["mbps"]), 1) for n in jobs}, "rounds": rounds}
    if not moving:
        # none of the reads follows the page read: they do not measure it, so the twin's times stay (the part's,
        # assumed, or the ones the map spans or the clean stage's reads set)
        drive_doc = _with_native_reads(drive_doc, part, start)
        rounds[0]["kept"] = True
        record["moving"] = []
        last = rounds[-1]
        if start != 1.0:
            if stream is not None:
                stream.write("ssdlab fit: native page reads: " + ", ".join(
                    f"x{r['factor']:.3f} {r['error']:.3f}" for r in rounds)
                    + f": the reads do not follow the page read; x{start:.3f} (the start's: "
                    f"{(prov.get('nand.tr_page_types_ns') or {'source': 'fitted'})['source']}) kept\n")
            return drive_doc, {}, record
        why = (f"the {b.part} part's page-type reads, assumed: the full stage's reads hardly follow them (at x"
               f"{last['factor']:.3f} " + ", ".join(
                   f"{n} {rounds[0]['jobs'][n]:,.1f} -> {last['jobs'][n]:,.1f} MB/s, response "
                   f"{last['response'][n]:.2f}" for n in jobs)
               + f", where a read bound by the page read gives 1; below {NATIVE_READ_MIN_RESPONSE} the link, the "
               "controller or map-cache misses bind it), so they do not measure the page read")
        for key in ("nand.tr_page_types_ns", "nand.tr_ns"):
            sec, name = key.split(".", 1)
            prov[key] = {"value": drive_doc[sec][name], "source": "assumed", "why": why}
        if stream is not None:
            stream.write("ssdlab fit: native page reads: " + ", ".join(
                f"x{r['factor']:.3f} {r['error']:.3f}" for r in rounds)
                + ": the reads do not follow the page read; the part's kept\n")
        return drive_doc, {}, record
    record["moving"] = moving
    # the factor whose reads that follow it come closest (the others stay where they are whatever it is)
    best = min(range(len(rounds)), key=lambda i: _rms_log(measured, docs[i][2], moving))
    rounds[best]["kept"] = True
    factor, kept, kept_figs = docs[best]
    if best == 0:
        kept = _with_native_reads(drive_doc, part, start)
    why = (f"the {b.part} part's page-type reads x {factor:.3f}, one factor from the full stage's reads of the native "
           "pages past any cache (" + ", ".join(f"{n} {float(measured[n]['mbps']):,.0f} MB/s measured, "
                                               f"{float(kept_figs[n]['mbps']):,.0f} on the twin" for n in jobs)
           + f"; {len(rounds) - 1} round{'' if len(rounds) == 2 else 's'} of the clean, cache and full stages "
           "simulated" + ("" if moving == list(jobs) else
                          "; set by " + ", ".join(moving) + ", the reads that follow the page read") + ")")
    prov["nand.tr_page_types_ns"] = {"value": kept["nand"]["tr_page_types_ns"], "source": "fitted", "why": why,
                                     "residual": rounds[best]["error"]}
    prov["nand.tr_ns"] = {"value": kept["nand"]["tr_ns"], "source": "fitted",
                          "why": "the mean of the native page types' reads: " + why}
    if stream is not None:
        stream.write("ssdlab fit: native page reads: " + ", ".join(
            f"x{r['factor']:.3f} {r['error']:.3f}" for r in rounds) + f": x{factor:.3f} kept\n")
    shown = {j.name for j in probe_jobs(int(_fv(features, "capacity_bytes") or 0), budget)
             if j.stage in (CLEAN, CACHE, FULL)}
    return kept, ({n: kept_figs[n] for n in kept_figs if n in shown} if best else {}), record
