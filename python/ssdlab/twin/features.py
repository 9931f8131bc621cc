"""What a probe reveals: each feature from the figures of the jobs that
measure it (:mod:`ssdlab.twin.probe`), with its unit, a confidence and how
it was derived. Every feature is a black-box estimate: it uses only what fio
measures on a real drive (rates, latencies, per-second IOPS), never the
simulator's internals.

Confidence: ``high`` when the jobs bound the value tightly, ``medium`` when it
rests on one assumption stated in ``how``, ``low`` when the probe only bounds
it (the fit of a twin then decides it), and ``none`` when the jobs that
measure it did not run (a value of None)."""

from __future__ import annotations

import statistics
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple

from .probe import KiB

__all__ = ["extract", "feature", "ASSUMED_PROGRAM_UNIT_BYTES", "ASSUMED_TPROG_NS", "MIN_FLUSH_PROGRAM_NS"]

#: The typical MLC program unit of the drives the probe targets (8KB pages,
#: two planes) and its program time (IMFT 25nm L74A, docs/model.md): used only
#: for the starting estimate of the dies from the sequential write rate.
ASSUMED_PROGRAM_UNIT_BYTES = 16384
ASSUMED_TPROG_NS = 1_300_000
#: A flush that adds less than this to a write programmed nothing the host
#: waited for (no MLC/TLC part of the era programs a page in under 200 us):
#: the drive acknowledges flushes at once (power-loss protection).
MIN_FLUSH_PROGRAM_NS = 200_000


def feature(value: Any, unit: str, confidence: str, how: str) -> Dict[str, Any]:
    return {"value": value, "unit": unit, "confidence": confidence, "how": how}


def _get(figs: Mapping[str, Mapping[str, Any]], job: str, key: str) -> Optional[float]:
    f = figs.get(job)
    if not f:
        return None
    v = f.get(key)
    return None if v is None else float(v)


def _ratio(a: Optional[float], b: Optional[float]) -> Optional[float]:
    return None if a is None or b is None or b <= 0 else a / b


def _buffer(figs: Mapping[str, Mapping[str, Any]], r_fast: Optional[float], r_slow: Optional[float]) -> Dict[str, Any]:
    """The write buffer from bursts after idle: while it fills, the host
    writes at r_fast and the buffer drains at the NAND's rate r_d, so a burst
    of S bytes beyond what the buffer absorbs (S1 at r_fast) takes
    t = S1/r_fast + (S - S1)/r_d = S/r_d - S1 (1/r_d - 1/r_fast), and the
    buffer is B = S1 (1 - r_d/r_fast). With two or more bursts that outran
    the buffer, t against S is a line: its slope is 1/r_d and its intercept
    gives S1, so the drain rate comes from the bursts themselves (B is the
    small difference of two rates, so a drain rate taken from another job
    moves it by tens of percent); with one, r_d is the sustained sequential
    write r_slow. Each burst's time is its bytes over its rate (fio's runtime
    is whole milliseconds)."""
    bursts = sorted(((int(f["io_bytes"]), float(f["mbps"]) * 1e6)
                     for n, f in figs.items() if n.startswith("burst-") and f.get("mbps")), key=lambda x: x[0])
    if not bursts or r_fast is None or r_slow is None:
        return feature(None, "B", "none", "the burst jobs did not run")
    if r_fast <= r_slow * 1.02 or max(r for _, r in bursts) <= r_slow * 1.02:
        return feature(None, "B", "none", f"bursts are no faster than the sustained write ({r_slow / 1e6:.0f} MB/s): "
                       "the buffer is not visible in write rates (the link or the controller binds before it)")
    partial = [(float(sz), sz / r) for sz, r in bursts if r < 0.99 * r_fast]
    if not partial:
        if bursts[-1][1] >= r_fast * 0.99:
            return feature(float(bursts[-1][0]), "B", "low", "every burst went at the fast rate: the buffer holds at "
                           f"least the largest burst ({bursts[-1][0]:,} B)")
        return feature(None, "B", "low", "no burst went faster than the sustained write")
    if len(partial) >= 2:
        xs, ts = [x for x, _ in partial], [t for _, t in partial]
        mx, mt = statistics.fmean(xs), statistics.fmean(ts)
        a = sum((x - mx) * (t - mt) for x, t in partial) / sum((x - mx) ** 2 for x in xs)
        c = mx * a - mt
        r_d = 1 / a if a > 0 else 0.0
        if r_d > 0 and a > 1 / r_fast and c > 0:
            s1 = c / (a - 1 / r_fast)
            b = s1 * (1 - r_d / r_fast)
            resid = max(abs(x * a - c - t) / t for x, t in partial)
            conf = "high" if len(partial) >= 3 or resid < 0.002 else "medium"
            return feature(round(b), "B", conf, f"{len(partial)} bursts after idle longer than the buffer: their times "
                           f"against their sizes give the drain rate ({r_d / 1e6:.0f} MB/s) and the bytes taken at "
                           f"{r_fast / 1e6:.0f} MB/s ({s1 / 1e6:.0f} MB) until it was full")
    sz, t = partial[0]
    s1 = (sz / r_slow - t) / (1 / r_slow - 1 / r_fast)
    if not 0 < s1 < sz:
        return feature(None, "B", "low", "the burst that outran the buffer is not faster than the sustained write")
    return feature(round(s1 * (1 - r_slow / r_fast)), "B", "medium",
                   f"one burst after idle ({int(sz):,} B) outran the buffer: taken at {r_fast / 1e6:.0f} MB/s until full, "
                   f"draining at the sustained {r_slow / 1e6:.0f} MB/s")


#: A flush after the torture shorter than this says the drive acknowledges flushes at once (power-loss protection).
MIN_DIRTY_FLUSH_S = 0.005


def _dirty_buffer(figs: Mapping[str, Mapping[str, Any]], steady_iops: Optional[float]
                  ) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """The buffer seen in the steady state: the torture holds the host at the
    rate garbage collection lets the buffer drain, so it ends with the buffer
    full, and a FLUSH CACHE right after it waits for all of it to drain. Its
    latency x the steady write rate is the buffer where the drain keeps the
    torture's pace (a paced garbage collection); a controller that cleans
    whole blocks when it needs one adds their time, so this is a start for
    the twin, which simulates the flush and keeps the buffer that reproduces
    it (ssdlab.twin.fit)."""
    f = figs.get("tortured-flush") or {}
    t_us = f.get("sync_mean_us")
    if not t_us:
        none = "the flush after the torture did not run"
        return feature(None, "s", "none", none), feature(None, "B", "none", none)
    t_s = float(t_us) / 1e6
    flush = feature(round(t_s, 6), "s", "high", "the FLUSH CACHE right after the torture: the time to drain the buffer it "
                    "left full")
    if t_s < MIN_DIRTY_FLUSH_S or not steady_iops:
        return flush, feature(None, "B", "low", f"the flush after the torture took {t_s * 1e3:.1f} ms: no buffer shows "
                              "(a drive that acknowledges flushes at once has power-loss protection)")
    b = t_s * float(steady_iops) * 4096
    return flush, feature(round(b), "B", "low", f"the flush after the torture ({t_s:.2f} s) x the steady state's write rate "
                          f"({float(steady_iops) * 4096 / 1e6:.0f} MB/s): the buffer where garbage collection drains it "
                          "at the torture's pace")


def _nand_read(figs: Mapping[str, Mapping[str, Any]], link: Optional[float]) -> Dict[str, Any]:
    """The NAND's read rate for one request, from large random reads at QD1:
    a drive that does not overlap a request's NAND reads with its transfer to
    the host takes, per extra byte, one byte time on the link plus one on the
    NAND side (its channels, or the dies' page reads where they bind), so the
    time from 128KB to 512KB less the link's share leaves the NAND's rate. A
    slope at the link's own rate means the NAND part is hidden (read-ahead, or
    reads overlapped with the transfer)."""
    r128, r512 = _get(figs, "randread-128k-qd1", "mbps"), _get(figs, "randread-512k-qd1", "mbps")
    if not r128 or not r512 or not link:
        return feature(None, "B/s", "none", "the 128KB and 512KB QD1 random reads did not run")
    per_byte = (512 * KiB / (r512 * 1e6) - 128 * KiB / (r128 * 1e6)) / (384 * KiB)
    beyond = per_byte - 1 / link
    if beyond <= 0.1 / link:
        return feature(None, "B/s", "low", f"512KB QD1 reads gain {1 / per_byte / 1e6:.0f} MB/s per extra byte, about the "
                       f"link's {link / 1e6:.0f} MB/s: the NAND's share is hidden (read-ahead or overlap)")
    return feature(round(1 / beyond), "B/s", "medium",
                   f"QD1 random reads from 128KB to 512KB take {per_byte * 1e9:.2f} ns per byte, {beyond * 1e9:.2f} ns "
                   f"beyond the link's ({link / 1e6:.0f} MB/s): the channels' (or the dies') read rate for one request")


def _program(figs: Mapping[str, Mapping[str, Any]]) -> Dict[str, Dict[str, Any]]:
    """The program time from the flushed writes: a FLUSH CACHE after a 4KB
    write at QD1 returns once the data is on the NAND, i.e. after the program
    unit holding it (padded) crossed the channel and was programmed; the write
    itself was acknowledged from the buffer. So flush latency - write latency
    = the flush command's own cost (about a write's) + the unit's transfer on
    the channel + tPROG: tPROG plus a transfer (a few percent on a fast
    channel, up to a quarter on a 50 MB/s one), an upper bound. Flushes of
    16KB and 64KB writes as slow as of 4KB ones: a partial unit is padded and
    programmed whole (its size is not visible this way)."""
    out: Dict[str, Dict[str, Any]] = {}
    # medians: the first flushes of the job also wait for what the jobs before it left in the buffer
    sync = _get(figs, "flushwrite-4k-qd1", "sync_p50_us")
    write = _get(figs, "flushwrite-4k-qd1", "clat_p50_us")
    if sync is None or write is None:
        none = "the flushed-write job (flushwrite-4k-qd1) did not run"
        return {"flush_latency_4k_us": feature(None, "us", "none", none), "tprog_ns": feature(None, "ns", "none", none),
                "flush_pads_unit": feature(None, "", "none", none)}
    out["flush_latency_4k_us"] = feature(round(sync, 2), "us", "high", "median FLUSH CACHE latency after each 4KB random "
                                         "write at QD1 (fio fsync=1)")
    extra_ns = (sync - write) * 1e3
    if extra_ns < MIN_FLUSH_PROGRAM_NS:
        out["tprog_ns"] = feature(None, "ns", "none", f"a flush adds only {extra_ns / 1e3:.0f} us to a 4KB write: the drive "
                                  "acknowledges it before programming (power-loss protection); the program time is not visible")
    else:
        p99 = _get(figs, "flushwrite-4k-qd1", "sync_p99_us")
        steady = p99 is not None and p99 < 1.5 * sync
        out["tprog_ns"] = feature(round(extra_ns), "ns", "high" if steady else "medium",
                                  f"median flush latency after a 4KB QD1 write ({sync:.0f} us) less the write's ({write:.0f} us): "
                                  "tPROG plus the program unit's transfer to the die (an upper bound on tPROG)"
                                  + ("" if steady else "; the flush latency varies (p99 > 1.5 x median)"))
    sizes = [(bs, _get(figs, f"flushwrite-{bs}-qd1", "sync_p50_us")) for bs in ("16k", "64k")]
    seen = [(bs, v) for bs, v in sizes if v is not None]
    if not seen:
        out["flush_pads_unit"] = feature(None, "", "none", "the 16KB and 64KB flushed-write jobs did not run")
    else:
        flat = all(abs(v / sync - 1) < 0.1 for _, v in seen)
        out["flush_pads_unit"] = feature(flat, "", "medium", "flushes after 16KB and 64KB writes within 10% of those after "
                                         "4KB writes: a flush programs a whole (padded) unit whatever the unit holds")
    return out


def steady_iops(series: Sequence[float]) -> float:
    """The steady state of a torture's per-second IOPS: the median of its last 20%."""
    return float(statistics.median(series[int(len(series) * 0.8):]))


def _onset(figs: Mapping[str, Mapping[str, Any]], capacity_bytes: int, map_unit_bytes: int = 4096
           ) -> Dict[str, Dict[str, Any]]:
    """Where garbage collection bit in the torture, and the spare area that
    gives. On a drive whose map unit is coarser than 4KB every 4KB write of
    the torture (after the fill, every unit holds data) rewrites its whole
    unit, so the spare takes map_unit / 4KB times the bytes the host wrote."""
    out: Dict[str, Dict[str, Any]] = {}
    scale = max(1, int(map_unit_bytes) // 4096)
    rewrites = (f"; x{scale}: each 4KB write rewrote its {map_unit_bytes // 1024}KB map unit" if scale > 1 else "")
    f = figs.get("torture")
    series = list(f.get("iops_series") or []) if f else []
    if len(series) < 20:
        none = "the torture job did not run long enough (needs its per-second IOPS log)"
        return {"gc_onset_bytes": feature(None, "B", "none", none), "spare_fraction": feature(None, "", "none", none),
                "steady_write_iops": feature(None, "IOPS", "none", none)}
    interval_s = float(f.get("interval_ms") or 1000) / 1e3  # type: ignore[union-attr]
    initial = statistics.median(series[:5])
    tail = series[int(len(series) * 0.8):]
    steady = steady_iops(series)
    out["steady_write_iops"] = feature(round(steady, 1), "IOPS", "high" if len(tail) >= 20 else "medium",
                                       "median 4KB QD32 random-write IOPS of the last 20% of the torture")
    if initial < steady * 1.3:
        out["gc_onset_bytes"] = feature(None, "B", "low", f"no fall from the initial rate ({initial:,.0f} IOPS) to the "
                                        f"steady state ({steady:,.0f}): garbage collection costs little here")
        # or it never began: the spare holds at least what the torture wrote past the capacity (a firmware that
        # holds random writes below what its GC keeps up with)
        written = float(f.get("io_bytes") or sum(series) * interval_s * 4096) * scale  # type: ignore[union-attr]
        out["gc_onset_at_least_bytes"] = feature(round(written), "B", "low",
                                                 f"no GC onset while the torture wrote {written / 1e9:.1f} GB past the "
                                                 "capacity: the spare holds at least that (a lower bound)" + rewrites)
        out["spare_fraction"] = feature(round(written / capacity_bytes, 4), "", "low",
                                        "at least the bytes the torture wrote past the capacity, over the capacity "
                                        "(no GC onset seen)" + rewrites)
        return out
    cut = steady + 0.5 * (initial - steady)
    k = next((i for i, x in enumerate(series) if x < cut), len(series))
    written = sum(series[:k]) * interval_s * 4096 * scale
    conf = "high" if k >= 5 and k < len(series) * 0.8 else "medium"
    out["gc_onset_bytes"] = feature(round(written), "B", conf,
                                    f"4KB random writes after the fill ran at {initial:,.0f} IOPS for {k * interval_s:.0f} s "
                                    f"before falling below {cut:,.0f} (halfway to the steady {steady:,.0f})" + rewrites)
    out["spare_fraction"] = feature(round(written / capacity_bytes, 4), "", conf,
                                    "bytes written past the capacity before garbage collection bit, over the capacity "
                                    "(less than the spare area by the blocks the drive keeps free)" + rewrites)
    return out


#: The fill job's transfer size (probe.py: 128KB sequential writes).
FILL_BLOCK_BYTES = 128 * 1024


def _perf_mode(figs: Mapping[str, Mapping[str, Any]], capacity_bytes: int) -> Dict[str, Dict[str, Any]]:
    """A faster write mode while the drive is partly empty (a
    "performance mode": lower pages only until half the LBAs hold data, then
    a one-time reorganisation and the standard mode), from the fill's rate per
    second: a first plateau, a sustained fall to under 60% of it (the
    reorganisation), and a recovery to a final plateau well above the fall. A
    fall that does not recover is garbage collection, not a mode. The fill
    starts at LBA 0 and every earlier job wrote below a third of the drive, so
    the bytes the fill wrote before the fall are the fill level that ends the
    mode.

    The final plateau is the standard mode's sequential write when it is below
    the first one. Where the two are alike (within 10%), both are the link's or
    the controller's rate, not the NAND's: the standard mode's NAND rate then shows only in the
    fall, where the dies program the host's data and the reorganisation's
    together (``perf_mode_dip_bytes_per_s``, turned into a program time by the
    fit)."""
    f = figs.get("fill")
    series = [float(x) for x in (f.get("iops_series") or [])] if f else []
    keys = ("perf_mode", "perf_mode_fill_percent", "standard_write_bytes_per_s", "perf_mode_dip_bytes_per_s")
    if len(series) < 30:
        return {k: feature(None, "", "none", "the fill job did not run long enough (needs its per-second IOPS log)")
                for k in keys}
    interval_s = float(f.get("interval_ms") or 1000) / 1e3  # type: ignore[union-attr]
    rate = [x * FILL_BLOCK_BYTES for x in series]
    n = len(rate)
    fast = statistics.median(rate[2:12])
    end = statistics.median(rate[-max(5, n // 10):])
    fall = next((i for i in range(2, n - 5) if all(r < 0.6 * fast for r in rate[i:i + 5])), None)
    how = (f"the fill ran at {fast / 1e6:.0f} MB/s at first and {end / 1e6:.0f} MB/s at the end")

    def none(why: str, confidence: str = "high") -> Dict[str, Dict[str, Any]]:
        return {"perf_mode": feature(False, "", confidence, why),
                **{k: feature(None, "B/s" if k.endswith("_per_s") else "%", "none", "no performance mode")
                   for k in keys[1:]}}

    if fall is None or end < 1.5 * statistics.median(rate[fall:fall + 5]):
        return none(how + ": no fall to a faster mode's end and recovery")
    pct = round(100 * sum(rate[:fall]) * interval_s / capacity_bytes)
    if not 10 <= pct <= 90:
        return none(how + f"; it fell after {pct}% of the drive: not a mode's end", "medium")
    dip = statistics.median(rate[fall:fall + 5])
    hidden = end >= 0.9 * fast
    return {"perf_mode": feature(True, "", "high", how + f", falling to {dip / 1e6:.0f} MB/s after {fall * interval_s:.0f} s "
                                 "(a reorganisation) in between: a faster mode while the drive was emptier"),
            "perf_mode_fill_percent": feature(pct, "%", "high", f"the bytes the fill wrote before the fall ({pct}% of the "
                                              "capacity): the fill level that ends the faster mode"),
            "standard_write_bytes_per_s": (
                feature(None, "B/s", "none", f"the fill ended at its first rate ({end / 1e6:.0f} MB/s, the link's or "
                        "the controller's): the standard mode's NAND rate is above it, seen only in the fall")
                if hidden else
                feature(round(end), "B/s", "high", "the fill's rate over its last 10%: the sequential write in the "
                        "standard mode")),
            "perf_mode_dip_bytes_per_s": feature(round(dip), "B/s", "high", "the fill's rate during the fall: the "
                                                 "host's writes while the dies also rewrite the faster mode's blocks "
                                                 "in the standard one")}


#: The SATA generations' usable link rates and FIS times (id, B/s, ns per command), as the engine's
#: ``host.interface`` presets (crates/ssdlab-sim/src/config/sections.rs, ``Interface``).
SATA_LINKS: Tuple[Tuple[str, int, int], ...] = (("sata-3g", 280_000_000, 5_000), ("sata-6g", 550_000_000, 3_000))
#: A link's generation is taken where the fastest large transfer runs at least this share of its usable rate (and
#: not above it): a drive that fills its link. Below it the drive binds first and the link stays an estimate (2%
#: above the fastest transfer).
LINK_SHARE = 0.85


#: A map unit larger than 4KB shows as writes below it running at most this share of a whole unit's IOPS
#: (with a 4KB map the smaller writes run at least as fast: less data, the same commands).
MAP_UNIT_IOPS_RATIO = 0.75


def _map_unit(figs: Mapping[str, Mapping[str, Any]]) -> Dict[str, Any]:
    """The map unit from aligned random writes of 4, 8 and 16KB into data
    written at random: the size that runs fastest, when it beats 4KB writes
    by more than 1 / ``MAP_UNIT_IOPS_RATIO`` (writes below the unit rewrite
    the rest of it); 4KB otherwise."""
    sizes = [(4096, _get(figs, "rewrite-4k-qd32", "iops")), (8192, _get(figs, "rewrite-8k-qd32", "iops")),
             (16384, _get(figs, "rewrite-16k-qd32", "iops"))]
    seen = [(b, v) for b, v in sizes if v]
    if len(seen) < 2 or seen[0][0] != 4096:
        return feature(None, "B", "none", "the rewrite jobs did not run")
    best = max(seen, key=lambda x: x[1])
    unit = best[0] if best[0] > 4096 and seen[0][1] < MAP_UNIT_IOPS_RATIO * best[1] else 4096
    rates = ", ".join(f"{b // 1024}KB {v:,.0f}" for b, v in seen)
    how = (f"aligned random writes into data written at random, IOPS: {rates}; "
           + (f"writes below {unit // 1024}KB run under {MAP_UNIT_IOPS_RATIO:.0%} of a whole unit's rate: each rewrites "
              "the rest of its unit" if unit > 4096 else "4KB writes run at least as fast as larger ones: a 4KB map"))
    return feature(unit, "B", "high", how)


def host_interface(link: Optional[float]) -> Dict[str, Any]:
    """The SATA generation whose usable rate the fastest large transfer
    fills (:data:`LINK_SHARE`), or None. A link runs at one of a few fixed
    rates, so a twin takes the generation's rate and FIS time rather than the
    transfer's rate plus a margin: a read that pipelines only while its die
    time exceeds its link time flips with a 0.7% faster link."""
    if not link:
        return feature(None, "", "none", "no large transfer measured")
    for name, rate, _ in SATA_LINKS:
        if LINK_SHARE * rate <= link <= 1.005 * rate:
            return feature(name, "", "high", f"the fastest large transfer ({link / 1e6:.0f} MB/s) is "
                           f"{link / rate:.2f} of {name}'s usable {rate / 1e6:.0f} MB/s: the drive fills that link")
    rates = " or ".join(f"{rate / 1e6:.0f}" for _, rate, _ in SATA_LINKS)
    return feature(None, "", "none", f"the fastest large transfer ({link / 1e6:.0f} MB/s) fills no SATA generation's "
                   f"link (at least {LINK_SHARE} of {rates} MB/s): the drive binds before its link")


def extract(figs: Mapping[str, Mapping[str, Any]], capacity_bytes: int) -> Dict[str, Dict[str, Any]]:
    """Every feature from a probe's figures by job name."""
    F: Dict[str, Dict[str, Any]] = {}
    F["capacity_bytes"] = feature(capacity_bytes, "B", "high", "the size of the target")
    fast = [(_get(figs, n, "mbps") or 0.0) for n in ("seqread-128k-qd32", "randread-128k-qd32", "unwritten-seqread-128k-qd32")]
    fast += [float(f["mbps"]) for n, f in figs.items() if n.startswith("burst-")]
    link = max(fast) * 1e6 if any(fast) else None
    F["link_bytes_per_s"] = feature(None if link is None else round(link), "B/s", "medium",
                                    "the fastest large transfer measured (128KB reads at QD32, of written and of "
                                    "unwritten LBAs; write bursts): the host "
                                    "link's usable rate or less")
    F["host_interface"] = host_interface(link)
    seq_r = _get(figs, "seqread-128k-qd32", "mbps")
    F["seq_read_bytes_per_s"] = feature(None if seq_r is None else round(seq_r * 1e6), "B/s", "high" if seq_r else "none",
                                        "128KB QD32 sequential read: the link's rate, or below it the NAND's read "
                                        "bandwidth (channels, dies)")
    F["nand_read_bytes_per_s"] = _nand_read(figs, link)
    r8, r16 = _get(figs, "randread-8k-qd1", "mbps"), _get(figs, "randread-16k-qd1", "mbps")
    F["second_page_read_us"] = feature(
        None if not r8 or not r16 else round((16 * KiB / (r16 * 1e6) - 8 * KiB / (r8 * 1e6)) * 1e6, 2), "us",
        "medium" if r8 and r16 else "none",
        "QD1 random reads of 16KB less of 8KB: the second 8KB of a program unit (two planes of a die read at once) "
        "crossing the channel and the link, plus what the controller spends per byte read (an ECC decode that holds "
        "the die)")
    seq_w = _get(figs, "seqwrite-128k-qd32", "mbps")
    F["seq_write_bytes_per_s"] = feature(None if seq_w is None else round(seq_w * 1e6), "B/s", "high",
                                         "128KB QD32 sequential write of incompressible data on a clean drive")
    writes = [float(f["mbps"]) * 1e6 for n, f in figs.items()
              if n.startswith(("burst-", "seqwrite-", "randwrite-")) and f.get("mbps")]
    F["fastest_write_bytes_per_s"] = feature(round(max(writes)) if writes else None, "B/s", "high" if writes else "none",
                                             "the fastest write measured on the clean drive (bursts, sequential and "
                                             "random writes of every data pattern): the controller's write path is at "
                                             "least this fast")
    # While the buffer fills the host writes as fast as the write path lets it: the fastest write measured, which
    # is the link's rate or, behind a slower write path, below it; a read that fills the
    # link says nothing about it.
    r_fast = max(writes) if writes else link
    F["write_buffer_bytes"] = _buffer(figs, r_fast, None if seq_w is None else seq_w * 1e6)
    r1 = _get(figs, "randread-4k-qd1", "clat_mean_us")
    u1 = _get(figs, "unwritten-read", "clat_mean_us")
    F["read_latency_4k_us"] = feature(r1, "us", "high", "4KB random read at QD1, written data")
    F["unwritten_read_latency_us"] = feature(u1, "us", "high" if u1 is not None else "none",
                                             "4KB random read at QD1 of LBAs holding no data")
    F["unwritten_reads_from_map"] = feature(None if r1 is None or u1 is None else bool(u1 < 0.6 * r1), "", "high"
                                            if u1 is not None else "none",
                                            "an unwritten LBA answered in well under a die read's time (< 60%)")
    iops32 = _get(figs, "randread-4k-qd32", "iops")
    F["read_iops_4k_qd32"] = feature(iops32, "IOPS", "high", "4KB random read at QD32")
    F["write_iops_4k_qd32"] = feature(_get(figs, "randwrite-4k-qd32", "iops"), "IOPS", "high",
                                      "4KB random write at QD32 on a clean drive")
    F["write_latency_4k_us"] = feature(_get(figs, "randwrite-4k-qd1", "clat_mean_us"), "us", "high",
                                       "4KB random write at QD1 on a clean drive")
    # 512 B at QD32: with almost no data per command, the rate is the controller's command ceiling (a
    # read that must go to a die, on a drive without read-ahead, is bound by that die instead)
    cmd_w = max([x for x in (_get(figs, "seqwrite-512-qd32", "iops"), _get(figs, "randwrite-4k-qd32", "iops")) if x],
                default=None)
    F["write_command_iops"] = feature(cmd_w, "IOPS", "medium" if cmd_w else "none",
                                      "the most write commands per second measured (512 B sequential or 4KB random "
                                      "writes at QD32): the controller's write-command ceiling or less")
    cmd_r = max([x for x in (_get(figs, "seqread-512-qd32", "iops"), iops32) if x], default=None)
    F["read_command_iops"] = feature(cmd_r, "IOPS", "medium" if cmd_r else "none",
                                     "the most read commands per second measured (512 B sequential or 4KB random "
                                     "reads at QD32): the controller's read-command ceiling or less")
    F.update(_program(figs))
    unit_ns = F["tprog_ns"]["value"]
    if seq_w is not None and unit_ns:
        # a die takes a program unit every transfer + tPROG (the flush measures that sum), so at the
        # sustained rate dies = rate x (transfer + tPROG) / unit bytes
        dies = max(1, round(seq_w * 1e6 * unit_ns / 1e9 / ASSUMED_PROGRAM_UNIT_BYTES))
        F["dies"] = feature(dies, "", "medium", f"the clean sequential write rate ({seq_w:.0f} MB/s) x the measured time a "
                            f"die takes per program unit ({unit_ns / 1e6:.2f} ms: transfer + tPROG, from the flushes) over "
                            f"a {ASSUMED_PROGRAM_UNIT_BYTES} B unit (8KB pages, two planes: assumed; 4KB or 16KB pages "
                            "halve or double it); more than this when the write is bound by the link or the controller")
    else:
        dies = None if seq_w is None else max(1, round(seq_w * 1e6 * ASSUMED_TPROG_NS / 1e9 / ASSUMED_PROGRAM_UNIT_BYTES))
        F["dies"] = feature(dies, "", "low", f"the clean sequential write rate over {ASSUMED_PROGRAM_UNIT_BYTES} B per "
                            f"{ASSUMED_TPROG_NS / 1e6:.1f} ms program (typical 2011-2013 MLC; no flush measured it): a "
                            "starting point the fit moves (a drive bound elsewhere has more dies than this says)")
    F["page_size_bytes"] = feature(None, "B", "low", "not separable from the die count and program time by rates "
                                   "alone: the fit of a twin chooses it among 4, 8 and 16 KiB")
    # data reduction
    inc = _get(figs, "seqwrite-incompressible", "mbps")
    for pattern in ("compressible", "repeated", "zeros"):
        r = _get(figs, f"seqwrite-{pattern}", "mbps")
        ratio = _ratio(inc, r)
        bound = link is not None and r is not None and r * 1e6 >= 0.95 * link
        if pattern == "compressible":
            F["data_reduction"] = feature(None if ratio is None else bool(ratio < 1 / 1.2), "", "high" if ratio else "none",
                                          "compressible data (fio buffer_compress_percentage=90) written at least "
                                          "1.2x as fast as incompressible data")
        reduced = ratio is not None and ratio < 1 / 1.2
        F[f"{pattern}_stored_fraction"] = feature(
            None if ratio is None else (round(max(0.25, ratio), 3) if reduced else 1.0), "",
            "none" if ratio is None else ("low" if reduced and bound else "medium"),
            f"incompressible / {pattern} sequential write rate (a drive that stores fewer bytes writes faster by "
            "that much while the NAND binds)" + ("; the reducible write reached the link, so the stored fraction is "
                                                 "at most this" if reduced and bound else ""))
    # read-ahead
    # a read-ahead serves a stream 2-5x as fast as random reads at the same depth (2.2-5.3 on the presets that
    # have one); without one a sequential read gains at most what two 4KB units sharing a page give (1.4x)
    thr = None
    for qd in (1, 2, 3, 4):
        ratio = _ratio(_get(figs, f"seqread-4k-qd{qd}", "iops"), _get(figs, f"randread-4k-qd{qd}", "iops"))
        if ratio is not None and ratio > 2.0:
            thr = qd
            break
    seen = any(_get(figs, f"seqread-4k-qd{q}", "iops") is not None for q in (1, 2, 3, 4))
    F["readahead"] = feature(thr is not None if seen else None, "", "high" if seen else "none",
                             "sequential 4KB reads at least twice as fast as random ones at the same depth (1 to 4)")
    F["readahead_min_qd"] = feature(thr, "", "medium" if thr else ("high" if seen else "none"),
                                    "the lowest depth at which sequential reads beat random ones")
    rr = _ratio(_get(figs, "randread-randomly-written-4k-qd32", "iops"), iops32)
    F["map_unit_bytes"] = _map_unit(figs)
    F["random_layout_read_ratio"] = feature(None if rr is None else round(rr, 3), "", "high" if rr is not None else "none",
                                            "4KB QD32 random reads of data written at random / of data written in order: "
                                            "below 1 when a unit's stored bytes spread over dies (striping) or the map "
                                            "is coarser than 4KB")
    sr = _ratio(_get(figs, "seqread-randomly-written-128k-qd32", "mbps"), _get(figs, "seqread-128k-qd32", "mbps"))
    F["random_layout_seqread_ratio"] = feature(None if sr is None else round(sr, 3), "", "high" if sr is not None else "none",
                                               "128KB QD32 sequential reads of data written at random / of data written "
                                               "in order")
    F.update(_onset(figs, capacity_bytes, int(F["map_unit_bytes"]["value"] or 4096)))
    F["dirty_flush_s"], F["dirty_buffer_bytes"] = _dirty_buffer(figs, F["steady_write_iops"]["value"])
    F.update(_perf_mode(figs, capacity_bytes))
    # state behaviours
    clean = _get(figs, "seqwrite-128k-qd32", "mbps")
    dirty = _get(figs, "dirty-seqwrite", "mbps")
    F["dirty_seq_write_ratio"] = feature(None if dirty is None or not clean else round(dirty / clean, 3), "",
                                         "high" if dirty is not None else "none",
                                         "128KB sequential write right after the torture / on a clean drive")
    steady = F["steady_write_iops"]["value"]
    idle = _get(figs, "after-idle-randwrite", "iops")
    # where the torture never fell from its initial rate (no GC onset), the writes after idle time meet the same
    # ceiling whether or not idle time cleaned blocks
    ceiling = F.get("gc_onset_bytes", {}).get("value") is None and "gc_onset_at_least_bytes" in F
    F["idle_recovery_ratio"] = feature(
        None if idle is None or not steady else round(idle / steady, 3), "",
        "none" if idle is None or not steady else "low" if ceiling else "high",
        "4KB random-write IOPS after idle time / the steady state: above 1.5 the drive cleans blocks while idle"
        + ("; the torture never left its initial rate, so the ratio cannot show idle-time GC" if ceiling else ""))
    tr = _ratio(_get(figs, "tortured-randread-4k-qd32", "iops"), iops32)
    F["tortured_read_ratio"] = feature(None if tr is None else round(tr, 3), "", "high" if tr is not None else "none",
                                       "4KB QD32 random reads after the torture / on the clean drive")
    after_trim = _get(figs, "after-trim-seqwrite", "mbps")
    F["after_trim_write_bytes_per_s"] = feature(None if after_trim is None else round(after_trim * 1e6), "B/s",
                                                "high" if after_trim is not None else "none",
                                                "128KB QD32 sequential write right after a full TRIM of the tortured drive")
    F["trim_recovery_ratio"] = feature(None if after_trim is None or not clean else round(after_trim / clean, 3), "",
                                       "high" if after_trim is not None else "none",
                                       "128KB sequential write right after a full TRIM of the tortured drive / on a "
                                       "clean drive: near 1 when TRIM frees the blocks at once")
    return F
