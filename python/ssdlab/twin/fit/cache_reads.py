"""The clean stage's reads weighed again at the full drive's dies, on a modern twin.

The sampler fits the read path at the die count the clean stage's scan chose: there, the SLC-mode read (the clean
stage reads what its writes left in the cache) is set against how many dies serve reads at depth. When the full
drive's step (:func:`.full.choose_full_dies`) then changes the dies, it scales the program times so that every write
rate stays, but the reads at depth move with the dies while the read time stays where the old count put it: twice
the dies at the same read makes 4KB reads at QD32 as much faster, and the read-ahead window weighed against them
no longer fits either. The read that the new count calls for lies between the one fitted (QD1 reads, bound by the
read's latency) and the one scaled with the dies (reads at depth, bound by the dies' throughput).

So, where the dies changed: the SLC read is tried at powers of the die factor (:data:`READ_EXPONENTS`), the
read-ahead window at each of :data:`ssdlab.twin.fit.base.READAHEAD_CHOICES`, then the read once more at the
parabola's minimum through the best and its neighbours, each on the clean stage simulated; the lowest RMS log error
over the clean stage's jobs is kept."""

from __future__ import annotations

import copy
import math
from typing import Any, Dict, List, Mapping, Optional, Sequence, TextIO, Tuple

from ...cluster import Runner
from ..features.common import Features
from ..probe import CACHE, CLEAN, FULL, probe_jobs
from ..records import Figures, JobFigures, Provenance
from .base import READAHEAD_CHOICES, READAHEAD_KEY, _fv, base_of, slc_read_range_ns
from .evaluate import simulate_probe_figures
from .full import _rms_log

#: The SLC reads tried, as the die factor k to these powers: 0 keeps the read (QD1-bound), 1 scales it with the
#: dies (depth-bound); the probe's reads mix both.
READ_EXPONENTS = (0.0, 0.125, 0.25, 0.375, 0.5, 0.75)
#: The key of the SLC-mode read in the drive file.
SLC_READ_KEY = "nand.slc_tr_ns"
#: A read whose parabola step moves it by less than this share is not simulated again.
REFINE_MIN_STEP = 0.02


def _with(drive_doc: Mapping[str, Any], slc_tr_ns: int, window: Optional[int]) -> Dict[str, Any]:
    d = copy.deepcopy(dict(drive_doc))
    d.setdefault("nand", {})["slc_tr_ns"] = int(slc_tr_ns)
    if window is not None:
        d.setdefault("controller", {})["readahead_bytes"] = int(window)
    return d


def _die_factor(full_fit: Optional[Mapping[str, Any]]) -> float:
    """The kept die count over the fitted one (1: the full drive's step kept the dies)."""
    if not full_fit:
        return 1.0
    rows = full_fit.get("rows") or []
    kept = next((r for r in rows if r.get("kept")), None)
    base = next((r for r in rows if r.get("factor") == 1.0 and not r.get("program_buffer_bytes")), None)
    if kept is None or base is None or not base.get("dies"):
        return 1.0
    return float(kept["dies"]) / float(base["dies"])


def _parabola_min(points: Sequence[Tuple[float, float]]) -> Optional[float]:
    """The minimum of the parabola through three (x, y) points, None where it opens downwards or is degenerate."""
    (x0, y0), (x1, y1), (x2, y2) = points
    den = (x0 - x1) * (x0 - x2) * (x1 - x2)
    if den == 0:
        return None
    a = (x2 * (y1 - y0) + x1 * (y0 - y2) + x0 * (y2 - y1)) / den
    b = (x2 * x2 * (y0 - y1) + x1 * x1 * (y2 - y0) + x0 * x0 * (y1 - y2)) / den
    if a <= 0:
        return None
    return -b / (2 * a)


def choose_cache_reads(drive_doc: Dict[str, Any], prov: Provenance, features: Features,
                       measured: Mapping[str, JobFigures], full_fit: Optional[Mapping[str, Any]], run: Runner,
                       seed: int, budget: float, stream: Optional[TextIO]
                       ) -> Tuple[Dict[str, Any], Figures, Optional[Dict[str, Any]]]:
    """The twin with the SLC read and read-ahead window whose clean stage comes closest to the probe's, where the full
    drive's step changed the dies; its clean, cache and full stages' figures where the twin changed; the record of
    the reads and windows tried. Unchanged where the twin is not modern, the dies stayed or the twin has no SLC read.
    A measured SLC read (the map spans': the die's own read at QD1, whatever the dies) stays; only the window is
    weighed again.
    """
    from .native import _part_nand

    k = _die_factor(full_fit)
    nand = drive_doc.get("nand", {})
    b = base_of(features)
    if not b.modern or k == 1.0 or not nand.get("slc_tr_ns"):
        return drive_doc, {}, None
    cap = int(_fv(features, "capacity_bytes") or 0)
    clean = [j.name for j in probe_jobs(cap, budget)
             if j.stage == CLEAN and j.direction != "trim" and (measured.get(j.name) or {}).get("mbps")]
    if not clean:
        return drive_doc, {}, None
    part = _part_nand(drive_doc)
    # the SLC read on the part's scale, within the range the fit gives the mean page read (as the fit sets it)
    lo, hi = slc_read_range_ns(part, b)

    def clamp(t: float) -> int:
        return int(round(min(max(t, lo), hi), -2))

    fitted = int(nand["slc_tr_ns"])
    tr0 = clamp(fitted)
    window0 = drive_doc.get("controller", {}).get("readahead_bytes")

    tried: Dict[Tuple[int, Optional[int]], Tuple[float, Figures]] = {}

    def simulate(cands: Sequence[Tuple[int, Optional[int]]]) -> None:
        new = [c for c in dict.fromkeys(cands) if c not in tried]
        items = [(_with(drive_doc, t, w), seed, budget, (CLEAN,)) for t, w in new]
        figs = [f for _, f in sorted(run.map(simulate_probe_figures, items, what="twin clean-stage reads"),
                                     key=lambda x: x[0])]
        for c, f in zip(new, figs):
            tried[c] = (_rms_log(measured, f, clean), f)

    def best_of(window: Optional[int]) -> int:
        return min((t for t, w in tried if w == window), key=lambda t: tried[(t, window)][0])

    measured_read = SLC_READ_KEY in prov and prov[SLC_READ_KEY].get("source") == "measured"
    simulate([(tr0, window0)] if measured_read else [(clamp(tr0 * k ** e), window0) for e in READ_EXPONENTS])
    tr = best_of(window0)
    window = window0
    if window0 is not None:
        simulate([(tr, w) for w in READAHEAD_CHOICES])
        window = min((w for t, w in tried if t == tr), key=lambda w: tried[(tr, w)][0])
    # the read once more at the parabola's minimum (in log time) through the best and its neighbours at that window
    reads = sorted(t for t, w in tried if w == window)
    if window != window0:
        simulate([(t, window) for t in sorted({t for t, w in tried if w == window0}) if abs(math.log(t / tr)) <= 0.3])
        reads = sorted(t for t, w in tried if w == window)
        tr = best_of(window)
    i = reads.index(tr)
    if 0 < i < len(reads) - 1 and not measured_read:
        x = _parabola_min([(math.log(t), tried[(t, window)][0]) for t in reads[i - 1:i + 2]])
        if x is not None and abs(math.exp(x) / tr - 1) >= REFINE_MIN_STEP:
            simulate([(clamp(math.exp(x)), window)])
            tr = best_of(window)
    err0 = tried[(tr0, window0)][0]
    err = tried[(tr, window)][0]
    rows: List[Dict[str, Any]] = [{"slc_tr_ns": t, "readahead_bytes": w, "clean_error": round(e, 4),
                                   **({"kept": True} if (t, w) == (tr, window) else {})}
                                  for (t, w), (e, _) in sorted(tried.items(), key=lambda x: (x[0][1] or 0, x[0][0]))]
    record: Dict[str, Any] = {"die_factor": k, "rows": rows}
    if stream is not None:
        stream.write(f"ssdlab fit: the clean stage's reads at {k:g}x the dies: SLC read {tr0 / 1e3:.1f} us"
                     + (f", window {window0 >> 10} KiB" if window0 else "") + f" {err0:.4f} -> {tr / 1e3:.1f} us"
                     + (f", window {window >> 10} KiB" if window else "") + f" {err:.4f} ({len(tried)} tried)\n")
    if tr == fitted and window == window0:
        return drive_doc, {}, record
    why = (f"weighed again after the full drive's dies ({k:g}x the fitted count): the clean stage simulated with "
           f"{len(tried)} SLC reads and read-ahead windows, RMS log error {err0:.4f} at the fitted ones, {err:.4f} "
           "here")
    kept = _with(drive_doc, tr, window)
    for key, value, was in ((SLC_READ_KEY, tr, fitted), (READAHEAD_KEY, window, window0)):
        if value != was:
            before = str(prov[key].get("why") or "") if key in prov else ""
            prov[key] = {"value": value, "source": "fitted", "residual": round(err, 4),
                         "why": why + ("; before: " + before if before else "")}
    # every stage the later steps read, on the twin kept (the full stage's reads may find the static cache's pages)
    figs = [f for _, f in run.map(simulate_probe_figures, [(kept, seed, budget, (CLEAN, CACHE, FULL))],
                                  what="twin clean-stage reads")][0]
    return kept, figs, record
