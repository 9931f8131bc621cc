"""Features of the map-cache and queue jobs: the span of LBAs whose map the
controller holds (a DRAM-less drive's map cache or host memory buffer), how
4KB random reads scale with the commands outstanding (SATA's 32 NCQ tags
against NVMe's queue pairs), and the NVMe link's PCIe generation from the
fastest transfer. Only fio's rates and mean latencies are read."""

from __future__ import annotations

import itertools
import math
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from ..probe.names import (
    CACHE_AFTER_IDLE,
    CACHE_FILL,
    CACHE_TRIM,
    LINK_SEQREAD,
    MAP_SPAN_PREFIX,
    MAP_TAIL,
    QUEUE_GRID,
    map_span,
    map_spans,
    queue_read,
    randread_4k,
)
from ..records import Feature, JobFigures
from .common import _get, feature

#: A span's mean QD1 latency this much above the flat spans' is past the map cache: a miss adds a translation
#: page's read (tens of microseconds on a read of about a hundred).
MAP_STEP_SHARE = 0.15
#: A map cache's step explains the spans' curve when it leaves at most this share of the rms without it.
MAP_FIT_SHARE = 0.8
#: Covered spans tried, on a log grid from the first span to the whole drive.
MAP_GRID = 400
TRIMMED = "trimmed LBAs"
UNKNOWN = "what earlier stages wrote"
SLC_DATA = "data in SLC"
NATIVE_DATA = "data in native blocks"
#: The QD1 reads of the cache stage's data by kind, from the map-span fit.
KIND_READS = ("slc_data_read_qd1_us", "native_data_read_qd1_us")
#: The QD1 read of a trimmed LBA whose map is held (the map tail job): the command and the link, no die read.
TRIMMED_READ = "trimmed_read_qd1_us"
#: Bytes of a map entry per 4KB unit (a 32-bit physical address: 1 GB of map per TB, the rule the DRAM of every
#: modern drive with a full map follows: 1 GB of DRAM on the 1TB 980 PRO, MODERN.md).
MAP_ENTRY_BYTES = 4
#: Reads at more than 32 commands outstanding beating the best at 32 by this share: the drive takes more commands
#: than SATA's NCQ tags (NVMe's queue pairs).
QUEUE_SCALING_SHARE = 1.1
#: The clean stage's 4KB random read depths (all at 32 or fewer outstanding).
CLEAN_READ_QDS = (1, 2, 3, 4, 8, 16, 32)
#: PCIe links an M.2 NVMe drive has: four lanes, generation 3 to 5, with the engine's usable rate of each
#: (``pcie_link_bytes_per_s``: 128b/130b coding, 256 B payloads with 24 B of TLP overhead).
PCIE_LANES = 4
PCIE_GENS = (3, 4, 5)


def pcie_usable_bytes_per_s(gen: int, lanes: int = PCIE_LANES) -> int:
    """The usable data rate of a PCIe link (the engine's formula: 8/16/32 GT/s a lane, 128b/130b, 256/(256+24))."""
    gt = {3: 8_000_000_000, 4: 16_000_000_000, 5: 32_000_000_000}[gen]
    return gt * lanes * 128 * 256 // (130 * 8 * (256 + 24))


def nvme_link(link: Optional[float]) -> Optional[Tuple[int, int, float]]:
    """(generation, lanes, usable rate) of the slowest x4 PCIe link that carries ``link`` B/s (the fastest transfer
    measured, a little above the usable rate allowed for timing), or None when none does."""
    if not link:
        return None
    for gen in PCIE_GENS:
        rate = pcie_usable_bytes_per_s(gen)
        if link <= 1.005 * rate:
            return gen, PCIE_LANES, rate
    return None


def queue_features(figs: Mapping[str, JobFigures]) -> Dict[str, Feature]:
    """The read IOPS over the commands outstanding, the most of them, and whether more than 32 help."""
    pts: List[Tuple[int, int, float]] = []
    for n, qd in QUEUE_GRID:
        v = _get(figs, queue_read(n, qd), "iops")
        if v:
            pts.append((n, qd, v))
    if not pts:
        return {k: feature(None, u, "none", "the queue jobs did not run") for k, u in
                (("read_iops_4k_max", "IOPS"), ("queue_scaling", ""), ("read_depth_90_percent", ""))}
    best = max(v for _, _, v in pts)
    at32 = max((v for n, qd, v in pts if n * qd <= 32), default=None)
    beyond = max((v for n, qd, v in pts if n * qd > 32), default=None)
    shown = ", ".join(f"{n}x{qd} {v / 1e3:,.0f}K" for n, qd, v in pts)
    out = {"read_iops_4k_max": feature(round(best), "IOPS", "high",
                                       f"the most 4KB random read IOPS over jobs x depth ({shown}): the controller's "
                                       "or the dies' read ceiling")}
    # the queue stage's shallow reads can run while the drive still folds or cleans after the writes before them,
    # and rise as its dies come free: a rise past 32 counts only where it beats what the clean stage read at 32 or
    # fewer (a SATA QLC drive: 56K at 32, 92K at 128, under the 96K its clean stage read at 16-32)
    clean = max((v for qd in CLEAN_READ_QDS if (v := _get(figs, randread_4k(qd), "iops"))), default=None)
    if at32 and beyond:
        ratio = beyond / at32
        multi = ratio >= QUEUE_SCALING_SHARE
        if multi and clean is not None and beyond <= clean:
            conf, why = "low", (f"a rise, but to no more than the clean stage's reads at 32 or fewer gave "
                                f"({clean / 1e3:,.0f}K): the shallow jobs ran while the drive was busy, not a deeper queue")
        elif multi:
            conf, why = "high", "more commands than SATA's 32 NCQ tags keep raising it (NVMe queues)"
        else:
            conf, why = "high", "flat past 32 (SATA's NCQ, or a ceiling reached by 32)"
        out["queue_scaling"] = feature(round(ratio, 3), "", conf,
                                       "the best rate past 32 commands outstanding over the best at 32 or fewer: " + why)
    else:
        out["queue_scaling"] = feature(None, "", "none", "the jobs past and below 32 outstanding did not both run")
    depth = min((n * qd for n, qd, v in pts if v >= 0.9 * best), default=None)
    out["read_depth_90_percent"] = feature(depth, "", "high", "the fewest commands outstanding (jobs x depth) whose "
                                           "rate is within 90% of the most: where the read path saturates")
    return out


def map_cache_features(figs: Mapping[str, JobFigures], capacity_bytes: int, slc_bytes: Optional[float] = None,
                       recovered_bytes: Optional[float] = None) -> Dict[str, Feature]:
    """The span of LBAs the controller's map covers: the QD1 latency over growing spans from LBA 0 is flat while
    the span's map is held and rises past it, with the share of reads that miss (1 - covered/span). The spans
    also read what the cache stage left where (:func:`_regions`: data in SLC, in native blocks, trimmed LBAs),
    each at its own latency; the covered span is fitted with those (least squares over a log grid of spans), and
    the map cache is it at :data:`MAP_ENTRY_BYTES` per 4KB unit. ``slc_bytes``, ``recovered_bytes``: the cache
    stage's SLC cache and what idle time gave back (None: not seen)."""
    pts = [(s, _get(figs, map_span(s, capacity_bytes), "clat_mean_us")) for s in map_spans(capacity_bytes)]
    seen = [(float(s), float(v)) for s, v in pts if v]
    keys = ("map_cache_limited", "map_cache_span_bytes", "map_cache_bytes", "map_miss_us", TRIMMED_READ) + KIND_READS
    if len(seen) < 3:
        return {k: feature(None, "", "none", "the map-cache jobs did not run") for k in keys}
    shown = ", ".join(f"{s / 1e9:,.0f} GB {v:.0f} us" for s, v in seen)
    names, cols = _regions(figs, [s for s, _ in seen], slc_bytes, recovered_bytes)
    if len(cols) == 1:
        unknown = "the cache stage did not run: where the spans' data lies is not known"
        return {**{k: feature(None, "us", "none", unknown) for k in KIND_READS + (TRIMMED_READ,)},
                **_trend_features(seen, capacity_bytes, shown)}
    # the tail's reads give the latency of the LBAs past the written span (the last kind), where they read it
    tail = _get(figs, MAP_TAIL, "clat_mean_us") if names[-1] in (TRIMMED, UNKNOWN) else None
    if tail:
        seen = [(s, v - tail * share) for (s, v), share in zip(seen, cols[-1])]
        cols = cols[:-1]
        names = names[:-1] + [f"{names[-1]} ({tail:.0f} us: {MAP_TAIL})"]
    fit = _fit_covered(seen, cols, float(capacity_bytes))
    reads = _kind_reads(names, fit, tail)
    reads[TRIMMED_READ] = (feature(round(tail, 1), "us", "high", f"the mean QD1 read latency of {MAP_TAIL}: trimmed "
                                   "LBAs whose map is held, answered without a die read (the command and the link)")
                           if tail else feature(None, "us", "none", f"{MAP_TAIL} did not read trimmed LBAs"))
    where = "; the spans read " + ", ".join(names) if len(names) > 1 else ""
    if fit.limited:
        why = (f"QD1 read latency over spans from LBA 0 ({shown}): rising past {fit.covered / 1e9:,.0f} GB as the "
               f"share of reads past the map cache grows (1 - covered / span){where}, each at its own latency: the "
               f"covered span fitted to that curve (rms {fit.rms_us:.1f} us, without a map cache {fit.null_rms_us:.1f})")
        return {**reads, "map_cache_limited": feature(True, "", "high", why),
                "map_cache_span_bytes": feature(round(fit.covered), "B", "high", why),
                "map_cache_bytes": feature(int(math.ceil(fit.covered / 4096)) * MAP_ENTRY_BYTES, "B", "high",
                                           f"the covered span at {MAP_ENTRY_BYTES} B of map per 4KB unit"),
                "map_miss_us": feature(round(fit.miss_us, 1), "us", "high", "what a read past the map cache adds (a "
                                       "translation page's read): the fitted step's height at a span of which nothing "
                                       "is held")}
    why = (f"QD1 read latency over spans from LBA 0 ({shown}){where}: " + fit.why
           + ", so the controller holds the whole map (DRAM)")
    return {**reads, "map_cache_limited": feature(False, "", "high", why),
            "map_cache_span_bytes": feature(None, "B", "none", why),
            "map_cache_bytes": feature(None, "B", "none", why),
            "map_miss_us": feature(None, "us", "none", why)}


def _kind_reads(names: Sequence[str], fit: "_MapFit", tail: Optional[float]) -> Dict[str, Feature]:
    """The QD1 read latency of the cache stage's data in SLC and in native blocks, where its map is held (the
    kinds' latencies in the map-span fit), and with the tail's latency (the command and the link alone, no die
    read) what the read of each adds: the die's read and the transfer."""
    out: Dict[str, Feature] = {}
    for key, kind in zip(KIND_READS, (SLC_DATA, NATIVE_DATA)):
        i = next((j for j, n in enumerate(names) if n == kind), None)
        v = fit.latencies_us[i] if i is not None and i < len(fit.latencies_us) else 0.0
        if v <= 0:
            why = (f"the spans read no {kind}" if i is None else
                   f"the spans' curve does not set the {kind} apart from the other kinds")
            out[key] = feature(None, "us", "none", why)
            continue
        net = f"; {v - tail:.1f} us more than a read of a trimmed LBA ({MAP_TAIL}: no die read), the die's read " \
              "and the transfer" if tail else ""
        out[key] = feature(round(v, 1), "us", "medium", f"the QD1 read latency of the cache stage's {kind} where "
                           f"its map is held, fitted with the map cache over the spans' shares of each kind{net}")
    return out


def _regions(figs: Mapping[str, JobFigures], spans: Sequence[float], slc_bytes: Optional[float],
             recovered_bytes: Optional[float]) -> Tuple[List[str], List[List[float]]]:
    """The share of each span's reads that land on each kind of LBA the cache stage left, from LBA 0: the cache
    fill's first ``slc_bytes`` and what idle time gave back at the start of the write after it in SLC, the rest of
    both writes in native blocks, and past them, after the stage's TRIM, LBAs that hold nothing (no data to read:
    only the map is looked up); without a TRIM, whatever the earlier stages left there. No cache stage: one kind."""
    fill = float(_get(figs, CACHE_FILL, "io_bytes") or 0)
    after = float(_get(figs, CACHE_AFTER_IDLE, "io_bytes") or 0)
    if not fill:
        return [UNKNOWN], [[1.0] * len(spans)]
    written = fill + after
    if slc_bytes is None:
        slc_first, slc_after = 0.0, 0.0
    else:
        slc_first = min(float(slc_bytes), fill)
        slc_after = min(after, max(0.0, float(slc_bytes) - fill) + float(recovered_bytes or 0))
    kinds = [(SLC_DATA, [(min(s, slc_first) + min(max(0.0, s - fill), slc_after)) / s for s in spans])]
    kinds.append((NATIVE_DATA, [min(s, written) / s - a for s, a in zip(spans, kinds[0][1])]))
    rest = TRIMMED if CACHE_TRIM in figs else UNKNOWN
    kinds.append((rest, [1 - min(s, written) / s for s in spans]))
    kinds = [(n, c) for n, c in kinds if max(c) > 1e-9]
    return [n for n, _ in kinds], [c for _, c in kinds]


def _trend_features(seen: List[Tuple[float, float]], capacity_bytes: int, shown: str) -> Dict[str, Feature]:
    """Without the cache stage, where the earlier stages' data lies is not known here: the first span from which
    every larger one is slower by the step starts the map's curve, fitted over a slow trend in log span."""
    base = min(v for _, v in seen)
    # the first span from which every larger one is slower by the step: a single slow span (the first, behind the
    # programs the job before it left) is not the map
    k = next((i for i in range(len(seen)) if all(v > (1 + MAP_STEP_SHARE) * base for _, v in seen[i:])), None)
    # nor is a rise at the largest span alone: one point cannot tell the map's curve from LBAs that read slower
    # where they lie
    if k is None or k == 0 or k == len(seen) - 1:
        why = (f"QD1 read latency over spans of the full drive ({shown}): flat to the whole drive"
               + (" but for the largest span alone (one point is not a map cache's curve)" if k == len(seen) - 1
                  else "") + ", so the controller holds the whole map (DRAM)")
        return {"map_cache_limited": feature(False, "", "high", why),
                "map_cache_span_bytes": feature(None, "B", "none", why),
                "map_cache_bytes": feature(None, "B", "none", why),
                "map_miss_us": feature(None, "us", "none", why)}
    lo, hi = seen[k - 1][0], capacity_bytes
    covered, miss = _fit_trend(seen, lo, hi)
    why = (f"QD1 read latency over spans of the full drive ({shown}): flat to {lo / 1e9:,.0f} GB, then rising as the "
           f"share of reads past the map cache grows (1 - covered / span); the covered span fitted to that curve over a "
           "slow trend in log span")
    return {"map_cache_limited": feature(True, "", "high", why),
            "map_cache_span_bytes": feature(round(covered), "B", "high", why),
            "map_cache_bytes": feature(int(math.ceil(covered / 4096)) * MAP_ENTRY_BYTES, "B", "high",
                                       f"the covered span at {MAP_ENTRY_BYTES} B of map per 4KB unit"),
            "map_miss_us": feature(round(miss, 1), "us", "high", "what a read past the map cache adds (a translation "
                                   "page's read): the fitted step's height at a span of which nothing is held")}


def _fit_trend(seen: List[Tuple[float, float]], lo: float, hi: float) -> Tuple[float, float]:
    """The covered span C and a miss's cost m of L(S) = a + t log S + m max(0, 1 - C / S) fitted to the spans'
    latencies by least squares (C on a log grid from ``lo`` to ``hi``; a, t, m linear): the reads of a larger
    span also land on more of the drive's regions (an SLC-cached start, other page types), a slow trend the log
    term takes, so that the step is the map's."""
    import numpy as np

    s = np.array([x for x, _ in seen])
    y = np.array([v for _, v in seen])
    best: Optional[Tuple[float, float, float]] = None
    for i in range(201):
        c = lo * (hi / lo) ** (i / 200)
        a = np.column_stack([np.ones_like(s), np.log(s), np.maximum(0.0, 1 - c / s)])
        coef = np.linalg.lstsq(a, y, rcond=None)[0]
        err = float(np.sum((a @ coef - y) ** 2))
        if coef[2] > 0 and (best is None or err < best[0]):
            best = (err, c, float(coef[2]))
    if best is None:
        return lo, 0.0
    return best[1], best[2]


class _MapFit(NamedTuple):
    limited: bool
    covered: float
    miss_us: float
    rms_us: float
    null_rms_us: float
    why: str
    #: Each kind's QD1 read latency where its map is held, in the model kept (with the step or without it).
    latencies_us: Tuple[float, ...] = ()


def _nnls(a: Any, y: Any) -> Optional[Tuple[float, Any]]:
    """Least squares with every coefficient >= 0 (a read takes time), by trying each subset of the few columns."""
    import numpy as np

    best: Optional[Tuple[float, Any]] = None
    n = a.shape[1]
    for k in range(1, n + 1):
        for sub in itertools.combinations(range(n), k):
            c = np.linalg.lstsq(a[:, sub], y, rcond=None)[0]
            if (c < 0).any():
                continue
            err = float(np.sum((a[:, sub] @ c - y) ** 2))
            if best is None or err < best[0]:
                full = np.zeros(n)
                full[list(sub)] = c
                best = (err, full)
    return best


def _fit_covered(seen: List[Tuple[float, float]], cols: List[List[float]], cap: float) -> _MapFit:
    """L(S) = sum of each kind's share x its latency + m max(0, 1 - C / S), by least squares with C on a log grid
    of spans (the rest linear, >= 0), against the same without a map cache. A map cache when the step explains
    the curve (its rms at most :data:`MAP_FIT_SHARE` of the one without), is at least :data:`MAP_STEP_SHARE` of
    the data's read, and lies under at least two spans: one span cannot tell a map's curve from LBAs that read
    slower where they lie."""
    import numpy as np

    s = np.array([x for x, _ in seen])
    y = np.array([v for _, v in seen])
    base = np.column_stack([np.array(c) for c in cols])
    null = _nnls(base, y)
    null_rms = math.sqrt(null[0] / len(s)) if null else float("inf")
    best: Optional[Tuple[float, float, Any]] = None
    for i in range(MAP_GRID + 1):
        c = s[0] * (cap / s[0]) ** (i / MAP_GRID)
        r = _nnls(np.column_stack([base, np.maximum(0.0, 1 - c / s)]), y)
        if r and r[1][-1] > 0 and (best is None or r[0] < best[0]):
            best = (r[0], c, r[1])
    flat = tuple(float(v) for v in null[1]) if null else ()
    if best is None:
        return _MapFit(False, 0.0, 0.0, null_rms, null_rms, "no rise with the span", flat)
    err, covered, coef = best
    rms = math.sqrt(err / len(s))
    miss = float(coef[-1])
    hit = max(float(v) for v in coef[:-1])
    past = int(np.sum(s > covered * (1 + MAP_STEP_SHARE)))
    if miss < MAP_STEP_SHARE * hit or rms > MAP_FIT_SHARE * null_rms:
        why = (f"no step a map cache makes (the best adds {miss:.0f} us to reads of {hit:.0f} us and takes the rms "
               f"from {null_rms:.1f} to {rms:.1f} us): flat over the spans but for what each reads")
        return _MapFit(False, covered, miss, rms, null_rms, why, flat)
    if past < 2:
        return _MapFit(False, covered, miss, rms, null_rms, "flat but for the largest span alone (one point is not "
                       "a map cache's curve)", flat)
    return _MapFit(True, covered, miss, rms, null_rms, "", tuple(float(v) for v in coef[:-1]))


def has_map_jobs(figs: Mapping[str, Any]) -> bool:
    return any(str(n).startswith(MAP_SPAN_PREFIX) for n in figs)


def link_seqread(figs: Mapping[str, JobFigures]) -> Optional[float]:
    v = _get(figs, LINK_SEQREAD, "mbps")
    return None if v is None else v * 1e6
