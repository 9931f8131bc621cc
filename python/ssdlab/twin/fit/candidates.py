"""The scan of structures before the sampler: the grid of starts, then the
structures around the best of them (channel rates, dies kept idle by a cap
or a program buffer, other channel counts), with a short contest where
several come close."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ...cluster import Runner
from ...fit.evaluate import Evaluation
from ...fit.params import FreeParameter, Target
from ...fit.polish import polish
from ..features import ASSUMED_PROGRAM_UNIT_BYTES
from ..features.common import Features
from .base import (
    ACTIVE_DIES_KEY,
    CHANNEL_CHOICES,
    CHANNELS,
    CHANNELS_KEY,
    MAX_PACKAGES_PER_CHANNEL,
    PLANES,
    PLANES_KEY,
    PROGRAM_BUFFER_KEY,
    READAHEAD_CHOICES,
    READAHEAD_KEY,
    _fv,
    base_of,
    cap_of,
)
from .evaluate import evaluate_twin
from .start import start_candidates

#: How much lower the scan's objective must be with an active-die cap than without for the twin to get one:
#: a cap is one more mechanism, and with half its dies idle a twin can absorb other errors.
ACTIVE_DIES_EVIDENCE = 0.6
#: Where the probe did not see the raw NAND (no garbage collection onset), the dies kept idle are tried up to
#: this many times the dies the write rate needs: the era's controllers kept from half to a third of their dies
#: working.
UNSEEN_RAW_DIES_SPAN = 4


def _channel_moved(values: Mapping[str, Any], ch_p: FreeParameter, tr_p: FreeParameter, m: float) -> Dict[str, Any]:
    """The channel rate at ``m`` times ``values``', tR moved so that a read's
    first chunk on the channel (the stripe chunk, at most 4KB) keeps its time."""
    chunk = float(min(4096, int(values.get("controller.die_stripe_bytes", 4096))))
    ch0 = float(values[ch_p.key])
    ch = ch_p.snap(ch0 * m)
    return {ch_p.key: ch, tr_p.key: tr_p.snap(float(values[tr_p.key]) + chunk / ch0 * 1e9 - chunk / ch * 1e9)}


def _page_log2s(params: Sequence[FreeParameter]) -> Tuple[int, ...]:
    """The page sizes (log2 bytes) the page parameter allows (a modern part's one, or 4-16 KiB)."""
    p = next((q for q in params if q.key == "nand.page_size_log2"), None)
    return (12, 13, 14) if p is None else tuple(range(int(p.low), int(p.high) + 1))


def refine_candidates(start: Mapping[str, Any], params: Sequence[FreeParameter], dies_choices: Sequence[int] = (),
                      features: Optional[Features] = None) -> List[Dict[str, Any]]:
    """Starts around the grid's best, over what the rates trade against each
    other there: the channel rate at 1/2, 2/3 and 3/2 of its start (tR moved
    by the 4KB's transfer so that the die's read keeps the measured time),
    each also with twice the dies of which only the start's work at once
    (``controller.max_active_dies``: a controller that keeps some of its dies
    busy). The rates alone leave
    these open; the reads of the probe's ATTO pair, right after its writes,
    tell them apart (a read waits for one of the dies the flush of its
    buffer holds). Given
    ``dies_choices``, twice the dies only where the raw NAND allows them.

    Given ``features`` and ``dies_choices`` too: every count the raw NAND
    allows with only the dies the write rate implies working (the features'
    estimate at each page size's program unit), where the NAND holds more.
    A drive whose write rate needs fewer dies than its NAND holds has either
    a slow write path or dies kept idle, and the two differ in what its reads
    see (a large read at QD1 gets the working dies, not all of them).

    Each such count comes in two structures: a cap on the dies at work
    (``controller.max_active_dies``: reads are held to them too) and a
    program buffer with room for the working dies' units
    (``controller.program_buffer_bytes``: programs are held, reads use every
    die).
    Both leave every write path the features gave (the controller's, and a
    reducing controller's encoder) no slower than the link, so that the dies
    alone explain the write rate; so does one start with every die at work,
    on the fewest dies that hold the working ones, which a cap must beat.
    Without ``dies_choices`` (no garbage
    collection onset in the probe, so no raw NAND: a firmware that holds
    random writes below what its GC keeps up with) the counts on each layout's channels go up to
    :data:`UNSEEN_RAW_DIES_SPAN` times the working dies."""
    by_key = {p.key: p for p in params}
    ch_p, tr_p, ppc_p = by_key.get("nand.channel_bytes_per_s"), by_key["nand.tr_ns"], by_key["nand.packages_per_channel"]

    def channel_times(m: float) -> Dict[str, Any]:
        # the channel rate at m times the start's, tR moved so that the die's read keeps its measured time
        return {} if ch_p is None else _channel_moved(start, ch_p, tr_p, m)

    variants: List[Dict[str, Any]] = [{}]
    if ch_p is not None:
        for m in (0.5, 2 / 3, 1.5):
            v = channel_times(m)
            if v[ch_p.key] != start[ch_p.key]:
                variants.append(v)
    out: List[Dict[str, Any]] = []
    ppc = int(start[ppc_p.key])
    doubled = 2 * ppc <= MAX_PACKAGES_PER_CHANNEL and (not dies_choices or 2 * ppc * CHANNELS in dies_choices)
    for v in variants:
        for capped in (False, True) if doubled else (False,):
            cand = {**start, **v}
            if capped:
                cand[ppc_p.key] = 2 * ppc
                cand[ACTIVE_DIES_KEY] = ppc * CHANNELS
            if cand != start and cand not in out:
                out.append(cand)
    # twice the dies at the other page sizes too: with half of them working, the page that fits differs
    if doubled and "nand.page_size_log2" in start:
        for log2 in _page_log2s(params):
            cand = {**start, ppc_p.key: 2 * ppc, ACTIVE_DIES_KEY: ppc * CHANNELS, "nand.page_size_log2": log2}
            if cand not in out:
                out.append(cand)
    # the raw NAND's dies on other channel counts where they divide (the dies a request reads at once, and the
    # channel each waits on, differ), each also with the write rate's dies working (below)
    here = int(start.get(CHANNELS_KEY, CHANNELS))
    b = base_of(features) if features is not None else None
    choices = b.channel_choices if b is not None else CHANNEL_CHOICES
    others = [(c, d) for c in choices if c != here for d in dies_choices
              if d % c == 0 and d // c <= MAX_PACKAGES_PER_CHANNEL]
    layouts: List[Tuple[int, Optional[int]]] = [(here, None), *others]
    for c, d in others:
        # the c channels carry the start's total rate; on a modern drive also each channel at the start's rates
        # (the variants above): its channel rate starts at the generic interface's, not at a measured total, and
        # fewer channels are told apart by what one die's transfer takes
        for m in (here / c, *([1.0, *(v[ch_p.key] / start[ch_p.key] for v in variants[1:])]
                              if b is not None and b.modern and ch_p is not None else [])):
            cand = {**start, CHANNELS_KEY: c, ppc_p.key: d // c, **channel_times(m)}
            if cand not in out:
                out.append(cand)
    implied = _fv(features, "dies") if features is not None else None
    if implied and "nand.page_size_log2" in start:
        _open_paths(out, start, by_key, here, layouts, dies_choices, implied)
    return out


def _open_paths(out: List[Dict[str, Any]], start: Mapping[str, Any], by_key: Mapping[str, FreeParameter], here: int,
                layouts: Sequence[Tuple[int, Optional[int]]], dies_choices: Sequence[int], implied: Any) -> None:
    """Add to ``out`` the raw NAND's counts with only the dies the write rate implies working (a cap on the dies
    at work, or a program buffer for their units), the write paths no slower than the link (refine_candidates)."""
    ch_p, tr_p, ppc_p = by_key.get("nand.channel_bytes_per_s"), by_key["nand.tr_ns"], by_key["nand.packages_per_channel"]

    def channel_times(m: float) -> Dict[str, Any]:
        return {} if ch_p is None else _channel_moved(start, ch_p, tr_p, m)

    # the write paths a rate below the dies' could be instead: the controller's, and a reducing controller's encoder
    paths = [by_key[k] for k in ("controller.max_write_bytes_per_s", "controller.encode_bytes_per_s") if k in by_key]

    def add_open(d: int, c: int, log2: int, cap: Mapping[str, Any]) -> None:
        # d dies on c channels at 2^log2 B pages, the write paths no slower than the link, with the cap if any
        cand = {**start, ppc_p.key: d // c, **cap, "nand.page_size_log2": log2}
        if c != here or CHANNELS_KEY in start:
            cand.update({CHANNELS_KEY: c, **channel_times(here / c)})
        cand.update({w.key: int(w.high) for w in paths})
        if cand not in out:
            out.append(cand)

    for log2 in _page_log2s(list(by_key.values())):
        working = int(round(implied * ASSUMED_PROGRAM_UNIT_BYTES / (PLANES << log2)))
        for c, only in layouts:
            # where the probe did not see the raw NAND, the counts on these channels up to a few times the
            # working dies
            counts = (only,) if only is not None else dies_choices or [
                k * c for k in range(1, MAX_PACKAGES_PER_CHANNEL + 1) if k * c <= UNSEEN_RAW_DIES_SPAN * working]
            if working < 4:
                continue
            # the same open paths with every die at work, on the fewest dies that hold the working ones: a cap
            # must beat that, not a start whose write path the features set below the dies' rate
            fewest = min((d for d in counts if d >= working and not d % c), default=None)
            if fewest is not None:
                add_open(fewest, c, log2, {})
            for d in counts:
                if d < 1.25 * working or d % c:
                    continue
                # the dies explain the write rate: the write paths are left no slower than the link; the
                # idle dies are kept so by a cap on the dies at work, or on the programs alone (a program
                # buffer with room for the working dies' units)
                for cap in ({ACTIVE_DIES_KEY: working}, {PROGRAM_BUFFER_KEY: working * PLANES << log2}):
                    add_open(d, c, log2, cap)


def with_active_dies(params: Sequence[FreeParameter], start: Mapping[str, Any]) -> List[FreeParameter]:
    """The free parameters of a start with an active-die cap: the cap is
    free too, and the dies may reach the start's (twice what the rates
    gave, beyond their range)."""
    out = [replace(p, high=max(p.high, int(start[p.key]))) if p.key == "nand.packages_per_channel" else p
           for p in params if p.key != ACTIVE_DIES_KEY]
    return out + [FreeParameter(ACTIVE_DIES_KEY, 4, MAX_PACKAGES_PER_CHANNEL * CHANNELS,
                                int(start.get(ACTIVE_DIES_KEY, CHANNELS)), True, 1,
                                "dies programming or reading at once, of all the dies: chosen by the scan where twice "
                                "the dies with the rates' count working at once reproduce the probe better")]


def with_program_buffer(params: Sequence[FreeParameter], start: Mapping[str, Any]) -> List[FreeParameter]:
    """The free parameters of a start with a program buffer: the buffer is
    free too, in steps of the smallest program unit."""
    unit = PLANES << 12
    out = [replace(p, high=max(p.high, int(start[p.key]))) if p.key == "nand.packages_per_channel" else p
           for p in params if p.key != PROGRAM_BUFFER_KEY]
    return out + [FreeParameter(
        PROGRAM_BUFFER_KEY, 2 * unit, MAX_PACKAGES_PER_CHANNEL * CHANNELS * unit * 4,
        int(start.get(PROGRAM_BUFFER_KEY, 16 * unit)), True, unit,
        "the controller's memory for programs in flight: it holds the programs, not the reads, to the dies it has "
        "room for; chosen by the scan where all the dies reading and fewer programming reproduce the probe better")]


def _target_for(target: Target, values: Mapping[str, Any], channel_choices: Sequence[int] = CHANNEL_CHOICES) -> Target:
    """``target`` with the parameters a start's structure adds: a free active-die cap or program buffer, a fixed
    channel count (one of ``channel_choices``)."""
    params = with_active_dies(target.params, values) if ACTIVE_DIES_KEY in values else list(target.params)
    if PROGRAM_BUFFER_KEY in values:
        params = with_program_buffer(params, values)
    if READAHEAD_KEY in values:
        w = int(values[READAHEAD_KEY])
        params = [p for p in params if p.key != READAHEAD_KEY] + [FreeParameter(
            READAHEAD_KEY, w, w, w, False, 4096, "the read-ahead window: the one of "
            f"{', '.join(f'{x >> 10} KiB' for x in READAHEAD_CHOICES)} (firmware sizes it in powers of two) that "
            "explains the probe best, chosen at the start's times and weighed again at the fitted ones (the clean "
            "stage's sequential reads show it, 8KB at QD8 most)")]
    if PLANES_KEY in values:
        n = int(values[PLANES_KEY])
        params = [p for p in params if p.key != PLANES_KEY] + [FreeParameter(
            PLANES_KEY, n, n, n, False, 1, "planes per die: the structure scan's choice between the part's and four "
            "(half the dies, each writing and reading twice the pages at once)")]
    if CHANNELS_KEY in values:
        c = int(values[CHANNELS_KEY])
        params = [p for p in params if p.key != CHANNELS_KEY] + [FreeParameter(
            CHANNELS_KEY, c, c, c, False, 1, f"channels: the scan's choice among {tuple(channel_choices)} for the dies the "
            "raw NAND holds (which dies a request reads at once, and the channel each waits on)")]
    return replace(target, params=params)


#: Structures (channel count, active-die cap or not) whose best start comes within this factor of the best
#: start's objective are each polished before one is chosen: at the starts' times they score alike, their own
#: times tell them apart.
CONTEST_WINDOW = 1.3
#: Pattern-search evaluations each contending structure gets (about one sweep of the times).
CONTEST_EVALUATIONS = 32
#: After the contest's polish a cap must still explain the probe this much better than the dies all working.
CONTEST_CAP_EVIDENCE = 0.85


def scan_starts(target: Target, features: Features, runner: Runner, seed: int = 1,
                dies_choices: Sequence[int] = ()) -> Tuple[Dict[str, Any], List[Tuple[Dict[str, Any], float]]]:
    """Every :func:`start_candidates` simulated (one batch on the runner),
    then the :func:`refine_candidates` around the best of them (a second
    batch); the best start and every (start, objective). CMA-ES's steps are
    small (``TWIN_SIGMA0``): it cannot move an integer like the dies by half
    or double, nor leave a start whose channel and tR trade against each
    other, so those moves are tried here first. ``dies_choices``: the die
    counts the raw NAND allows (:func:`raw_nand_dies`), the only ones tried.

    Where several structures (channels, an active-die cap) come close, the
    best start of each is polished a little (:data:`CONTEST_EVALUATIONS`)
    and the best polished one is the start; a cap must beat the dies all
    working by :data:`CONTEST_CAP_EVIDENCE` (before any polish, by
    :data:`ACTIVE_DIES_EVIDENCE`)."""
    choices = base_of(features).channel_choices
    cands = start_candidates(features, dies_choices)
    evs = evaluate_twin([(target, c) for c in cands], runner, seed)
    evaluated = list(zip(cands, evs))
    best = min(evaluated, key=lambda x: x[1].objective)[0]
    if base_of(features).modern and _fv(features, "readahead"):
        # the read-ahead window, on the best start: the structures after it are weighed with the window chosen (a
        # window too large speeds the sequential reads at QD1-4 that a slower page read then has to pay for)
        windows = [{**best, READAHEAD_KEY: w} for w in READAHEAD_CHOICES]
        evs = evaluate_twin([(_target_for(target, c, choices), c) for c in windows], runner, seed)
        evaluated += list(zip(windows, evs))
        best = min(zip(windows, evs), key=lambda x: x[1].objective)[0]
    more = [c for c in refine_candidates(best, target.params, dies_choices, features) if c not in cands]
    if more:
        evs = evaluate_twin([(_target_for(target, c, choices), c) for c in more], runner, seed)
        evaluated += list(zip(more, evs))
        groups: Dict[Tuple[int, Optional[str]], Tuple[Dict[str, Any], Evaluation]] = {}
        for c, ev in evaluated:
            key = (int(c.get(CHANNELS_KEY, CHANNELS)), cap_of(c))
            if key not in groups or ev.objective < groups[key][1].objective:
                groups[key] = (c, ev)
        low = min(ev.objective for _, ev in groups.values())
        contenders = [g for g in groups.values() if g[1].objective <= CONTEST_WINDOW * low]
        evidence = ACTIVE_DIES_EVIDENCE
        if len(contenders) > 1:
            polished = []
            for c, ev in contenders:
                res = polish(_target_for(target, c, choices), ev, evaluate_twin, runner, seed, budget=CONTEST_EVALUATIONS,
                             stream=None)
                polished.append((dict(res.best.values), res.best))
            evaluated += polished
            contenders, evidence = polished, CONTEST_CAP_EVIDENCE
        plain = min((x for x in contenders if cap_of(x[0]) is None), key=lambda x: x[1].objective, default=None)
        capped = min((x for x in contenders if cap_of(x[0])), key=lambda x: x[1].objective, default=None)
        if plain is None:
            plain = min((x for x in evaluated if cap_of(x[0]) is None), key=lambda x: x[1].objective)
        # a cap is one more mechanism: it must explain the probe clearly better than the dies all working
        best = capped[0] if capped is not None and capped[1].objective < evidence * plain[1].objective else plain[0]
    return best, [(c, ev.objective) for c, ev in evaluated]
