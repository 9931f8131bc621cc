"""The structure weighed again after the sampler, at the fitted times: twice
the dies with the fitted ones at work, the raw NAND's other layouts, page
size against channel rate, the channel's valley against tR, the command
slots against the time per command, and parity."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Dict, List, Mapping, Optional, Sequence, TextIO, Tuple

from ...cluster import Runner
from ...fit.evaluate import Evaluation
from ...fit.params import Target
from ...fit.polish import polish
from ..records import StructureRecord
from .base import (
    ACTIVE_DIES_KEY,
    CHANNEL_CHOICES,
    CHANNELS,
    CHANNELS_KEY,
    FOUR_PLANES,
    MAX_PACKAGES_PER_CHANNEL,
    PLANES,
    PLANES_KEY,
    PROGRAM_BUFFER_KEY,
    READAHEAD_CHOICES,
    READAHEAD_KEY,
    _buffer_pow2,
    _fv,
    base_of,
    cap_of,
)
from .candidates import CONTEST_EVALUATIONS, _channel_moved, _target_for
from .evaluate import evaluate_twin

#: After the fit, the twin's structure is tried again against others the scan weighed (and parity, which it does
#: not), at the fitted times (:func:`recheck_structure`), and another is taken where it explains the probe with
#: this share of the twin's error or less. The scan compares structures at its starts' times, where the command
#: costs and the write path are not yet fitted; at the fitted times they are far apart.
STRUCTURE_EVIDENCE = 0.6
#: ... and those within this share of the twin's error at its fitted times get a short polish first
#: (:data:`CONTEST_EVALUATIONS`): their times were fitted for another structure.
STRUCTURE_CONTEST_WINDOW = 0.9
#: The channel rates tried along the valley tR and the channel share, as multiples of the fitted one (tR moved so
#: that a read's first chunk keeps its time).
VALLEY_CHANNEL_STEPS = (1.25, 0.8)
#: The command slots and the firmware times per command, which the slot candidates move together.
SLOTS_KEY = "controller.command_slots"
COMMAND_COST_KEYS = ("controller.command_cost_read_ns", "controller.command_cost_write_ns")
#: The structure is weighed again from each one kept, at most this many times (each round keeps one change).
STRUCTURE_ROUNDS = 3


def recheck_structure(target: Target, best: Evaluation, runner: Runner, seed: int, dies_choices: Sequence[int],
                      polish_evaluations: int, stream: Optional[TextIO] = None,
                      channel_choices: Sequence[int] = CHANNEL_CHOICES
                      ) -> Tuple[Target, Evaluation, Optional[StructureRecord]]:
    """The fitted twin (every die at work) against, at its fitted times:
    twice its dies with the fitted ones at work, held by a cap on the dies
    at work (reads too) or by a program buffer with room for their units
    (programs alone); and every other layout of the die counts the raw NAND
    allows (``dies_choices``) on ``channel_choices`` channels, all at
    work; on a modern twin of a two-plane part, half the dies of four
    planes each; half the dies of twice the page on channels twice as fast
    (and the reverse); a command slot more or fewer at the same command
    ceilings; and parity on one die of every stripe (RAISE). Where one
    explains the probe clearly better (:data:`STRUCTURE_EVIDENCE`; those
    within :data:`STRUCTURE_CONTEST_WINDOW` after a short polish) it is
    polished (the times move, the structure stays) and returned with its
    target; else the twin as it was. The record of what was compared comes
    third (``kept``: the structure taken, or None), ``None`` where there
    was nothing to compare. A twin that already keeps dies idle (a cap or a
    program buffer) keeps its dies, layout and page: only the channel's
    valley, the slots and parity are weighed for it."""
    vals = dict(best.values)
    # a twin that already keeps dies idle keeps its dies, layout and page (the cap was chosen for them): only the
    # channel's valley and parity are weighed
    capped = cap_of(vals) is not None
    ppc, channels = int(vals["nand.packages_per_channel"]), int(vals.get(CHANNELS_KEY, CHANNELS))
    dies = ppc * channels
    cands = _structure_candidates(vals, target, dies_choices, channel_choices)
    if not cands:
        return target, best, None
    targets = [_fixed_dies(_target_for(target, c, channel_choices), int(c["nand.packages_per_channel"])) for _, c in cands]
    evs = evaluate_twin(list(zip(targets, [c for _, c in cands])), runner, seed)
    here = (f"{dies} dies on {channels} channels, " + (f"{vals[ACTIVE_DIES_KEY]} at work" if ACTIVE_DIES_KEY in vals
                                                           else "a program buffer" if capped else "all at work")
            + (", parity on one" if vals.get("nand.raise") else ""))
    record: StructureRecord = {"fitted": here, "objective": round(best.objective, 4), "kept": None,
                               "others": {name: round(ev.objective, 4) for (name, _), ev in zip(cands, evs)}}
    if stream is not None:
        stream.write(f"ssdlab fit: the structure at the fitted times: {here} {best.objective:.3f}; "
                     + ", ".join(f"{name} {ev.objective:.3f}" for (name, _), ev in zip(cands, evs)) + "\n")
    k = min(range(len(cands)), key=lambda i: evs[i].objective)
    if not evs[k].objective < STRUCTURE_EVIDENCE * best.objective:
        # structures that come close at times fitted for another: a short polish each, then the same test
        close = [i for i in range(len(cands)) if evs[i].objective < STRUCTURE_CONTEST_WINDOW * best.objective]
        if not close:
            return target, best, record
        for i in close:
            evs[i] = polish(targets[i], evs[i], evaluate_twin, runner, seed, budget=CONTEST_EVALUATIONS, stream=None).best
        record["contest"] = {cands[i][0]: round(evs[i].objective, 4) for i in close}
        if stream is not None:
            stream.write("ssdlab fit: polished a little: " + ", ".join(
                f"{cands[i][0]} {evs[i].objective:.3f}" for i in close) + "\n")
        k = min(close, key=lambda i: evs[i].objective)
        if not evs[k].objective < STRUCTURE_EVIDENCE * best.objective:
            return target, best, record
    return _kept(targets[k], evs[k], cands[k], vals, record, runner, seed, polish_evaluations, stream)


def _kept(target: Target, ev: Evaluation, cand: Tuple[str, Dict[str, Any]], vals: Mapping[str, Any],
          record: StructureRecord, runner: Runner, seed: int, polish_evaluations: int, stream: Optional[TextIO]
          ) -> Tuple[Target, Evaluation, StructureRecord]:
    """A candidate taken: polished (what it chose fixed, the times free), recorded with the values it changed."""
    res = polish(target, ev, evaluate_twin, runner, seed, budget=polish_evaluations, stream=stream)
    changed = sorted(key for key, v in cand[1].items() if vals.get(key) != v)
    return target, res.best, {**record, "kept": cand[0], "changed": changed, "polished": round(res.best.objective, 4)}


def _weighed(target: Target, best: Evaluation, fitted: str, cands: List[Tuple[str, Dict[str, Any]]], runner: Runner,
             seed: int, channel_choices: Sequence[int]) -> Tuple[List[Target], List[Evaluation], StructureRecord]:
    """Each candidate's target and evaluation at once on the runner, and the record comparing them with the twin
    (``fitted``: its name)."""
    targets = [_target_for(target, c, channel_choices) for _, c in cands]
    evs = evaluate_twin(list(zip(targets, [c for _, c in cands])), runner, seed)
    record: StructureRecord = {"fitted": fitted, "objective": round(best.objective, 4), "kept": None,
                               "others": {name: round(ev.objective, 4) for (name, _), ev in zip(cands, evs)}}
    return targets, evs, record


def recheck_window(target: Target, best: Evaluation, runner: Runner, seed: int, polish_evaluations: int,
                   stream: Optional[TextIO] = None, channel_choices: Sequence[int] = CHANNEL_CHOICES
                   ) -> Tuple[Target, Evaluation, Optional[StructureRecord]]:
    """The read-ahead window the scan chose, against each other one of
    :data:`READAHEAD_CHOICES` at the fitted times. The scan chose it at its
    start's times, where a slow channel or page read is still paid for by a
    window too large (the fit then speeds the channel and the window stays):
    where another window explains the probe better at the fitted times, it is
    taken and the times polished. The window is a choice among a few like the
    scan's, so the better objective alone decides, as there. Returns the target,
    the twin and the record of what was compared (None where the twin has no
    chosen window)."""
    vals = dict(best.values)
    if READAHEAD_KEY not in vals:
        return target, best, None
    w0 = int(vals[READAHEAD_KEY])
    cands = [(f"a read-ahead window of {w >> 10} KiB", {**vals, READAHEAD_KEY: w}) for w in READAHEAD_CHOICES if w != w0]
    targets, evs, record = _weighed(target, best, f"a read-ahead window of {w0 >> 10} KiB", cands, runner, seed,
                                    channel_choices)
    if stream is not None:
        stream.write(f"ssdlab fit: the read-ahead window at the fitted times: {w0 >> 10} KiB {best.objective:.3f}; "
                     + ", ".join(f"{c[READAHEAD_KEY] >> 10} KiB {ev.objective:.3f}" for (_, c), ev in zip(cands, evs))
                     + "\n")
    k = min(range(len(cands)), key=lambda i: evs[i].objective)
    if not evs[k].objective < best.objective:
        return target, best, record
    return _kept(targets[k], evs[k], cands[k], vals, record, runner, seed, polish_evaluations, stream)


#: Writes of a whole program unit acknowledged once at the die, shorter ones from the buffer
#: (``controller.write_ack_at_die_whole_units``), and the buffers tried with it (powers of two, 4-128 MiB).
WHOLE_UNIT_ACK_KEY = "controller.write_ack_at_die_whole_units"
BUFFER_KEY = "controller.write_buffer_bytes"
WHOLE_UNIT_ACK_BUFFERS = tuple(1 << s for s in range(22, 28))
#: The controller's write path, which the whole-unit candidates also try open (its range's top).
WRITE_PATH_KEY = "controller.max_write_bytes_per_s"


def recheck_write_ack(target: Target, best: Evaluation, runner: Runner, seed: int, polish_evaluations: int,
                      stream: Optional[TextIO] = None, channel_choices: Sequence[int] = CHANNEL_CHOICES
                      ) -> Tuple[Target, Evaluation, Optional[StructureRecord]]:
    """The fitted twin against one whose firmware acknowledges a write of a
    whole program unit only once its data is at the die, and shorter writes
    from its buffer (the 980 PRO's Elpis: docs/model.md), with each buffer of
    :data:`WHOLE_UNIT_ACK_BUFFERS` and the write path as fitted or open. On
    such a drive 128KB bursts never fill the buffer, so the bursts do not
    show it, and the fit pays for the slow 128KB QD1 writes (each waits for
    its die) with a small buffer and for the fast 4MB QD4 ones (the buffer
    holds what the dies have not taken) with nothing it has. One is kept,
    polished, where it explains the probe clearly better
    (:data:`STRUCTURE_EVIDENCE`, as a structure: it is one more mechanism).
    Returns the target, the twin and the record (None where the twin already
    acknowledges so)."""
    vals = dict(best.values)
    if vals.get(WHOLE_UNIT_ACK_KEY):
        return target, best, None
    path = next((p for p in target.params if p.key == WRITE_PATH_KEY), None)
    cands: List[Tuple[str, Dict[str, Any]]] = []
    for b in WHOLE_UNIT_ACK_BUFFERS:
        name = f"whole program units acknowledged at the die, a {b >> 20} MiB buffer"
        cands.append((name, {**vals, WHOLE_UNIT_ACK_KEY: True, BUFFER_KEY: b}))
        if path is not None and path.key in vals and float(vals[path.key]) < path.high:
            cands.append((name + ", the write path open", {**vals, WHOLE_UNIT_ACK_KEY: True, BUFFER_KEY: b,
                                                            path.key: path.snap(path.high)}))
    targets, evs, record = _weighed(target, best, "every write acknowledged from the buffer", cands, runner, seed,
                                    channel_choices)
    k = min(range(len(cands)), key=lambda i: evs[i].objective)
    k_flush = _flush_supported(cands, evs, k, target)
    if stream is not None:
        stream.write(f"ssdlab fit: writes acknowledged at the die at the fitted times: {best.objective:.3f} as fitted, "
                     f"{evs[k].objective:.3f} with {cands[k][0]}"
                     + (f"; {evs[k_flush].objective:.3f} with {cands[k_flush][0]}, nearest the flush after the "
                        "torture" if k_flush != k else "") + "\n")
    if k_flush != k:
        record["flush"] = {"buffer_bytes": int(cands[k_flush][1][BUFFER_KEY]), "instead_of": cands[k][0]}
        k = k_flush
    if not evs[k].objective < STRUCTURE_EVIDENCE * best.objective:
        return target, best, record
    return _kept(targets[k], evs[k], cands[k], vals, record, runner, seed, polish_evaluations, stream)


def _flush_supported(cands: Sequence[Tuple[str, Dict[str, Any]]], evs: Sequence[Evaluation], k: int,
                     target: Target) -> int:
    """Of the whole-unit candidates the clean rows cannot tell apart from the best (``k``: within
    :data:`STRUCTURE_CONTEST_WINDOW`, all weighed at times fitted for another write path), the one whose buffer
    lies nearest the flush after the torture's estimate (snapped to its power of two), the better objective
    between equals. On such a firmware the clean bursts see the buffer only through the large writes, where the
    dies' pace trades against it; the flush drains the buffer itself."""
    features = getattr(target.drives.get(target.id), "features", None)
    b_flush = _fv(features, "dirty_buffer_bytes") if features is not None else None
    if not b_flush or float(b_flush) <= 0:
        return k
    b_flush = float(_buffer_pow2(float(b_flush))[0])
    near = [i for i in range(len(cands)) if evs[i].objective * STRUCTURE_CONTEST_WINDOW <= evs[k].objective]
    return min(near, key=lambda i: (round(abs(math.log(float(cands[i][1][BUFFER_KEY]) / b_flush)), 6),
                                    evs[i].objective))


def _structure_candidates(vals: Dict[str, Any], target: Target, dies_choices: Sequence[int],
                          channel_choices: Sequence[int] = CHANNEL_CHOICES) -> List[Tuple[str, Dict[str, Any]]]:
    """The structures :func:`recheck_structure` weighs against the fitted twin ``vals``, each with its name."""
    capped = cap_of(vals) is not None
    ppc, channels = int(vals["nand.packages_per_channel"]), int(vals.get(CHANNELS_KEY, CHANNELS))
    dies = ppc * channels
    log2 = int(vals.get("nand.page_size_log2", 13))
    by_key = {p.key: p for p in target.params}
    ch_p, tr_p = by_key.get("nand.channel_bytes_per_s"), by_key.get("nand.tr_ns")
    cands: List[Tuple[str, Dict[str, Any]]] = []
    if not capped and 2 * ppc <= MAX_PACKAGES_PER_CHANNEL and (not dies_choices or 2 * dies in dies_choices):
        cands += [(f"{2 * dies} dies, {dies} at work", {**vals, "nand.packages_per_channel": 2 * ppc, ACTIVE_DIES_KEY: dies}),
                  (f"{2 * dies} dies, a program buffer for {dies} dies' units",
                   {**vals, "nand.packages_per_channel": 2 * ppc, PROGRAM_BUFFER_KEY: dies * PLANES << log2})]
    for d in () if capped else dies_choices:
        for c in channel_choices:
            if d % c == 0 and d // c <= MAX_PACKAGES_PER_CHANNEL and (d, c) != (dies, channels):
                cands.append((f"{d} dies on {c} channels", {**vals, "nand.packages_per_channel": d // c, CHANNELS_KEY: c}))
    cands += _four_plane_candidates(vals, target, dies_choices, capped)
    # half the dies of twice the page, the channel twice as fast (and the reverse): the same bytes per program
    # and per page transfer time, tR moved so that a 4KB read keeps its time; within the pages the twin may have
    # (a modern twin's is its part's)
    page_p = by_key.get("nand.page_size_log2")
    page_lo, page_hi = (int(page_p.low), int(page_p.high)) if page_p is not None else (12, 14)
    if not capped and ch_p is not None and tr_p is not None and "nand.page_size_log2" in vals:
        for step in (1, -1):
            d = dies // 2 if step == 1 else dies * 2
            if not (page_lo <= log2 + step <= page_hi and (step == -1 or dies % 2 == 0) and d % channels == 0
                    and 1 <= d // channels <= MAX_PACKAGES_PER_CHANNEL and (not dies_choices or d in dies_choices)):
                continue
            moved = _channel_moved(vals, ch_p, tr_p, 2.0 ** step)
            cands.append((f"{d} dies of {(1 << (log2 + step)) // 1024} KiB pages on {moved[ch_p.key] / 1e6:.0f} MB/s "
                          "channels", {**vals, "nand.packages_per_channel": d // channels,
                                       "nand.page_size_log2": log2 + step, **moved}))
    # along the valley tR and the channel rate share (a read's first chunk keeps its time): a quarter faster or a
    # fifth slower channel, farther than the polish's 8% steps reach where the objective is rugged; tPROG, where
    # measured, follows the channel in build_doc (the flushed unit keeps its time)
    if ch_p is not None and tr_p is not None:
        ch0 = float(vals[ch_p.key])
        for m in VALLEY_CHANNEL_STEPS:
            moved = _channel_moved(vals, ch_p, tr_p, m)
            ch = moved[ch_p.key]
            if ch == ch0:
                continue
            tp_p = by_key.get("nand.tprog_ns")
            if tp_p is not None and tp_p.key in vals:
                unit = float(PLANES << log2)
                moved[tp_p.key] = tp_p.snap(float(vals[tp_p.key]) + unit / ch0 * 1e9 - unit / ch * 1e9)
            cands.append((f"channels at {ch / 1e6:.0f} MB/s, tR {moved[tr_p.key] / 1e3:.0f} us", {**vals, **moved}))
    # a command slot more or fewer at the same command ceilings (each firmware time scaled with the slots): the
    # sampler and the polish move the slots and the times one at a time, and either alone breaks the QD32
    # ceilings that pin them together; the QD1-4 latencies tell the split
    slot_p = by_key.get(SLOTS_KEY)
    cost_ps = [by_key[k] for k in COMMAND_COST_KEYS if k in by_key and k in vals]
    if slot_p is not None and slot_p.key in vals and cost_ps:
        s0 = int(vals[slot_p.key])
        for s in (s0 + 1, s0 - 1):
            costs = {p.key: float(vals[p.key]) * s / s0 for p in cost_ps}
            if slot_p.low <= s <= slot_p.high and all(p.low <= costs[p.key] <= p.high for p in cost_ps):
                cands.append((f"{s} command slot{'' if s == 1 else 's'}, the same command ceilings",
                              {**vals, slot_p.key: s, **{p.key: p.snap(costs[p.key]) for p in cost_ps}}))
    # parity across the dies (RAISE): one die of every stripe holds parity, so the dies program a unit more per
    # stripe; the write paths as fitted, or as much faster (where the fit slowed them to stand in for the parity's
    # programs)
    if not vals.get("nand.raise") and dies > 2:
        paths = {k: by_key[k] for k in ("controller.max_write_bytes_per_s", "controller.encode_bytes_per_s")
                 if k in by_key and k in vals}
        cands.append(("parity on one die of every stripe (RAISE)", {**vals, "nand.raise": True}))
        if paths:
            cands.append(("parity on one die, the write paths as much faster", {
                **vals, "nand.raise": True, **{k: p.snap(float(vals[k]) * dies / (dies - 1)) for k, p in paths.items()}}))
    return cands


def _four_plane_candidates(vals: Dict[str, Any], target: Target, dies_choices: Sequence[int], capped: bool
                           ) -> List[Tuple[str, Dict[str, Any]]]:
    """A modern twin on a part of fewer planes: the raw NAND in dies of four planes (fewer dies, as many planes),
    each plane reading on its own. As many pages write and read at once; what goes one page per die takes longer
    per die (a DRAM-less drive's translation pages, written back one page program each after a full TRIM,
    before the next flushed write: docs/twin.md). The SLC program moves so that a flush, which pads a whole unit
    (bits x the SLC program after the unit's transfer), keeps its time."""
    ctx = target.drives.get(target.id)
    features = getattr(ctx, "features", None)
    if capped or features is None or PLANES_KEY in vals:
        return []
    b = base_of(features)
    ppc, channels = int(vals["nand.packages_per_channel"]), int(vals.get(CHANNELS_KEY, CHANNELS))
    dies = ppc * channels
    if not b.modern or b.planes >= FOUR_PLANES or (dies * b.planes) % FOUR_PLANES:
        return []
    d = dies * b.planes // FOUR_PLANES
    if d % channels or d < channels or (dies_choices and d not in dies_choices):
        return []
    moved: Dict[str, Any] = {"nand.packages_per_channel": d // channels, PLANES_KEY: FOUR_PLANES}
    slc_p = next((p for p in target.params if p.key == "nand.slc_tprog_ns"), None)
    ch = vals.get("nand.channel_bytes_per_s")
    if slc_p is not None and slc_p.key in vals and ch:
        page = 1 << int(vals.get("nand.page_size_log2", b.page_log2s[0]))
        # the one-shot unit's transfer grows by bits x the added pages' time, bits x the SLC program with it
        more_ns = (FOUR_PLANES - b.planes) * page / float(ch) * 1e9
        moved[slc_p.key] = slc_p.snap(max(slc_p.low, float(vals[slc_p.key]) - more_ns))
    return [(f"{d} dies of {FOUR_PLANES} planes, each plane reading on its own", {**vals, **moved})]


def _fixed_dies(target: Target, ppc: int) -> Target:
    """``target`` with its packages per channel fixed at ``ppc`` (the polish keeps the structure anyway)."""
    return replace(target, params=[replace(p, low=ppc, high=ppc, value=ppc) if p.key == "nand.packages_per_channel"
                                   else p for p in target.params])
