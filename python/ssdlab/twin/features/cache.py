"""Features of the cache stage: a write cache (the pseudo-SLC cache of a
TLC/QLC drive) from a long sequential write's rate per second, the speeds
in and after it, and how much of it idle time gives back. Only fio's
per-second rates are read, as on a real drive."""

from __future__ import annotations

import statistics
from typing import Dict, List, Mapping, Optional, Tuple

from ..probe.names import CACHE_AFTER_IDLE, CACHE_FILL, FILL_JOB
from ..records import Feature, JobFigures
from .common import feature

#: A step down to under this share of the first rate, held for :data:`STEP_SECONDS`, is a full cache; a
#: smaller wobble is the link, the buffer or a refill.
STEP_SHARE = 0.7
STEP_SECONDS = 5
#: The transfer size of the cache jobs (128KB sequential writes).
CACHE_BLOCK_BYTES = 128 * 1024

KEYS = ("slc_cache", "slc_cache_bytes", "slc_write_bytes_per_s", "post_cache_write_bytes_per_s",
        "post_cache_first_bytes_per_s", "slc_idle_recovered_bytes", "slc_cache_job", "slc_fold_ratio", "slc_refill")
#: A step in the whole-drive fill counts as a cache only within this share of it: later, garbage collection or
#: a full drive explains a fall as well.
FILL_STEP_SHARE = 0.5


def _rates(figs: Mapping[str, JobFigures], job: str) -> Tuple[List[float], float]:
    f = figs.get(job) or {}
    series = [float(x) * CACHE_BLOCK_BYTES for x in (f.get("iops_series") or [])]
    return series, float(f.get("interval_ms") or 1000) / 1e3


def _first(rate: List[float], i: int) -> float:
    """The rate before second ``i``: the median of its first five whole seconds, or of those before ``i`` where
    fewer (the first second is partial: it holds the ramp-up)."""
    return statistics.median(rate[1:min(max(i, 2), 6)])


def _step(rate: List[float]) -> Optional[int]:
    """The first second of a sustained fall to under :data:`STEP_SHARE` of the rate before it (None: none). A
    fall within the first five seconds counts from the seconds before it (at least two), so that a small cache
    written at the link's rate in three seconds is not averaged with what follows it and missed (wd-sn570-1000:
    12 GB at 3.5 GB/s, then its native 2.0 GB/s)."""
    return next((i for i in range(1, len(rate) - STEP_SECONDS + 1)
                 if all(r < STEP_SHARE * _first(rate, max(i, 3)) for r in rate[i:i + STEP_SECONDS])), None)


def _fill_step(figs: Mapping[str, JobFigures]) -> Optional[int]:
    """A cache's step in the whole-drive fill: in its first half, and for good (no recovery: that is a
    performance mode's reorganisation)."""
    rate, _ = _rates(figs, FILL_JOB)
    if len(rate) < 2 * STEP_SECONDS:
        return None
    k = _step(rate)
    if k is None or sum(rate[:k]) > FILL_STEP_SHARE * sum(rate):
        return None
    first = _first(rate, max(k, 3))
    rest = sorted(rate[k:])
    return k if rest[int(0.9 * (len(rest) - 1))] < STEP_SHARE * first else None


#: Past a cache's step the whole-drive fill's rate rises by this factor or more, held :data:`STEP_SECONDS`, where
#: folding has emptied the cache: from there the dies program the host's units alone, or refill the cache.
FOLD_END_RISE = 1.15


def _fold_end(figs: Mapping[str, JobFigures]) -> Dict[str, Feature]:
    """The units folded per host unit past the cache, and whether the drive then refills its cache, from the
    whole-drive fill. The cache's data is folded while the host writes past it, so the rate stays down until the
    cache is empty, then rises: the cache's bytes over the bytes written between the step and the rise are the
    ratio (``slc_fold_ratio``). A rise that holds to the end is the native rate with nothing to fold; one that
    falls back to the folding rate is the cache taking writes again until it is full (``slc_refill``)."""
    none = {"slc_fold_ratio": feature(None, "", "none", "the whole-drive fill shows no cache step"),
            "slc_refill": feature(None, "", "none", "the whole-drive fill shows no cache step")}
    k = _fill_step(figs)
    if k is None:
        return none
    rate, dt = _rates(figs, FILL_JOB)
    # the last interval may be a part of one
    body = rate[:-1] if len(rate) > k + 3 * STEP_SECONDS else rate
    slow = statistics.median(body[k:k + max(2 * STEP_SECONDS, (len(body) - k) // 10)])
    high = FOLD_END_RISE * slow

    def held(i: int, up: bool) -> bool:
        return all((r >= high) == up for r in body[i:i + STEP_SECONDS])

    rise = next((i for i in range(k + STEP_SECONDS, len(body) - STEP_SECONDS + 1) if held(i, True)), None)
    if rise is None:
        why = (f"the whole-drive fill's rate did not rise past its cache's step ({slow / 1e6:,.0f} MB/s to its "
               "end): the folds, if any, outlasted the fill")
        return {"slc_fold_ratio": feature(None, "", "none", why), "slc_refill": feature(None, "", "none", why)}
    cache = sum(rate[:k]) * dt
    after = sum(rate[k:rise]) * dt
    back = next((j for j in range(rise + STEP_SECONDS, len(body) - STEP_SECONDS + 1) if held(j, False)), None)
    up = statistics.median(body[rise:back])
    ratio = feature(round(cache / after, 3), "", "high",
                    f"the whole-drive fill's cache ({cache / 1e9:,.1f} GB before its step) over the {after / 1e9:,.1f} "
                    f"GB written past it at {slow / 1e6:,.0f} MB/s until the rate rose to {up / 1e6:,.0f}: folding had "
                    "emptied the cache")
    if back is None:
        refill = feature(False, "", "high", f"the fill's rate rose to {up / 1e6:,.0f} MB/s once the folds were done "
                         "and held it: the native rate, the cache not refilled while the host writes")
    else:
        refill = feature(True, "", "high",
                         f"the fill's rate rose to {up / 1e6:,.0f} MB/s for {sum(rate[rise:back]) * dt / 1e9:,.1f} GB "
                         f"once the folds were done, then fell back to about {slow / 1e6:,.0f}: the cache took the "
                         "host's writes again until it was full")
    return {"slc_fold_ratio": ratio, "slc_refill": refill}


def cache_features(figs: Mapping[str, JobFigures]) -> Dict[str, Feature]:
    """The write cache from the cache fill and the write after idle time; where the cache fill shows no step
    (a drive that does not free the blocks a TRIM of a full drive leaves), from the whole-drive fill after the
    clean stage: the cache that stage's writes left."""
    rate, dt = _rates(figs, CACHE_FILL)
    job = CACHE_FILL
    if (len(rate) < 2 * STEP_SECONDS or _step(rate) is None) and _fill_step(figs) is not None:
        rate, dt = _rates(figs, FILL_JOB)
        job = FILL_JOB
    if len(rate) < 2 * STEP_SECONDS:
        return {k: feature(None, "", "none", "the cache fill did not run long enough (needs its per-second log)")
                for k in KEYS}
    k = _step(rate)
    written = sum(rate) * dt
    if k is None:
        out = {"slc_cache": feature(None, "", "low", f"no step down over the {written / 1e9:.1f} GB the cache fill "
                                    "wrote: no write cache, or one larger than that (--budget writes more)"),
               "slc_cache_bytes": feature(None, "B", "none", "no step down seen"),
               "slc_cache_at_least_bytes": feature(round(written), "B", "low", "the bytes the cache fill wrote with no "
                                                   "step down: a cache, if any, holds at least that"),
               "slc_write_bytes_per_s": feature(round(statistics.median(rate)), "B/s", "medium",
                                                "the cache fill's median rate (no step down)"),
               "post_cache_write_bytes_per_s": feature(None, "B/s", "none", "no step down seen"),
               "post_cache_first_bytes_per_s": feature(None, "B/s", "none", "no step down seen"),
               "slc_idle_recovered_bytes": feature(None, "B", "none", "no step down seen")}
        return out
    cache = sum(rate[:k]) * dt
    fast, slow = statistics.median(rate[1:k]) if k > 1 else rate[0], statistics.median(rate[k:])
    out = {"slc_cache": feature(True, "", "high", f"the cache fill ran at {fast / 1e6:,.0f} MB/s for {k * dt:.0f} s, "
                                f"then stepped down to {slow / 1e6:,.0f} MB/s for good"),
           "slc_cache_bytes": feature(round(cache), "B", "high" if k >= STEP_SECONDS else "medium",
                                      "the bytes the cache fill wrote (after a full TRIM and idle time) before its "
                                      "rate stepped down: the cache on an empty drive (static and dynamic parts)"),
           "slc_write_bytes_per_s": feature(round(fast), "B/s", "high", "the cache fill's median rate before the step"),
           "post_cache_write_bytes_per_s": feature(round(slow), "B/s", "high",
                                                   "the cache fill's median rate after the step: the native NAND's "
                                                   "write (less what folding takes of the dies)"),
           "post_cache_first_bytes_per_s": feature(
               round(statistics.median(rate[k:k + STEP_SECONDS])), "B/s", "high",
               f"the cache fill's median rate over the {STEP_SECONDS} s right after the step: before anything that "
               "comes later (garbage collection of the blocks a TRIM left) slows it"),
           "slc_cache_job": feature(job, "", "high", "the job whose step gave the cache: the cache fill (an empty "
                                    "drive) or the whole-drive fill (after the clean stage's writes)")}
    out["slc_idle_recovered_bytes"] = (_recovered(figs, fast) if job == CACHE_FILL else
                                       feature(None, "B", "none", "the cache fill showed no cache to give back"))
    out.update(_fold_end(figs))
    return out


def _recovered(figs: Mapping[str, JobFigures], fast: float) -> Feature:
    rate, dt = _rates(figs, CACHE_AFTER_IDLE)
    if len(rate) < STEP_SECONDS:
        return feature(None, "B", "none", "the write after idle time did not run long enough (needs its log)")
    # in the cache again where its first seconds run near the cache fill's first rate
    if statistics.median(rate[:3]) < STEP_SHARE * fast:
        return feature(0, "B", "high", "the write after idle time started at the post-cache rate: idle time gave "
                       "nothing back")
    k = next((i for i in range(len(rate) - STEP_SECONDS + 1)
              if all(r < STEP_SHARE * fast for r in rate[i:i + STEP_SECONDS])), None)
    got = sum(rate[:k] if k is not None else rate) * dt
    return feature(round(got), "B", "high" if k is not None else "low",
                   "the bytes the write after idle time wrote at the cache's rate: what the idle time gave back"
                   + ("" if k is not None else " (at least: it never stepped down)"))
