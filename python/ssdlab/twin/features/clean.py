"""Features of the clean stage: the write buffer from the bursts, the NAND's
share of a read, the program time from the flushes, the map unit and the
host link's generation."""

from __future__ import annotations

import statistics
from typing import Dict, Mapping, Optional, Tuple

from ..probe.names import (
    BURST_PREFIX,
    KiB,
    flushwrite,
    randread_qd1,
    rewrite,
)
from ..records import Feature, JobFigures
from .common import MIN_FLUSH_PROGRAM_NS, _get, feature


def _buffer(figs: Mapping[str, JobFigures], r_fast: Optional[float], r_slow: Optional[float]) -> Feature:
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
                     for n, f in figs.items() if n.startswith(BURST_PREFIX) and f.get("mbps")), key=lambda x: x[0])
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


def _nand_read(figs: Mapping[str, JobFigures], link: Optional[float]) -> Feature:
    """The NAND's read rate for one request, from large random reads at QD1:
    a drive that does not overlap a request's NAND reads with its transfer to
    the host takes, per extra byte, one byte time on the link plus one on the
    NAND side (its channels, or the dies' page reads where they bind), so the
    time from 128KB to 512KB less the link's share leaves the NAND's rate. A
    slope at the link's own rate means the NAND part is hidden (read-ahead, or
    reads overlapped with the transfer)."""
    r128, r512 = _get(figs, randread_qd1("128k"), "mbps"), _get(figs, randread_qd1("512k"), "mbps")
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


def _program(figs: Mapping[str, JobFigures]) -> Dict[str, Feature]:
    """The program time from the flushed writes: a FLUSH CACHE after a 4KB
    write at QD1 returns once the data is on the NAND, i.e. after the program
    unit holding it (padded) crossed the channel and was programmed; the write
    itself was acknowledged from the buffer. So flush latency - write latency
    = the flush command's own cost (about a write's) + the unit's transfer on
    the channel + tPROG: tPROG plus a transfer (a few percent on a fast
    channel, up to a quarter on a 50 MB/s one), an upper bound. Flushes of
    16KB and 64KB writes as slow as of 4KB ones: a partial unit is padded and
    programmed whole (its size is not visible this way)."""
    out: Dict[str, Feature] = {}
    # medians: the first flushes of the job also wait for what the jobs before it left in the buffer
    sync = _get(figs, flushwrite("4k"), "sync_p50_us")
    write = _get(figs, flushwrite("4k"), "clat_p50_us")
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
        p99 = _get(figs, flushwrite("4k"), "sync_p99_us")
        steady = p99 is not None and p99 < 1.5 * sync
        out["tprog_ns"] = feature(round(extra_ns), "ns", "high" if steady else "medium",
                                  f"median flush latency after a 4KB QD1 write ({sync:.0f} us) less the write's ({write:.0f} us): "
                                  "tPROG plus the program unit's transfer to the die (an upper bound on tPROG)"
                                  + ("" if steady else "; the flush latency varies (p99 > 1.5 x median)"))
    sizes = [(bs, _get(figs, flushwrite(bs), "sync_p50_us")) for bs in ("16k", "64k")]
    seen = [(bs, v) for bs, v in sizes if v is not None]
    if not seen:
        out["flush_pads_unit"] = feature(None, "", "none", "the 16KB and 64KB flushed-write jobs did not run")
    else:
        flat = all(abs(v / sync - 1) < 0.1 for _, v in seen)
        out["flush_pads_unit"] = feature(flat, "", "medium", "flushes after 16KB and 64KB writes within 10% of those after "
                                         "4KB writes: a flush programs a whole (padded) unit whatever the unit holds")
    return out


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


def _map_unit(figs: Mapping[str, JobFigures]) -> Feature:
    """The map unit from aligned random writes of 4, 8 and 16KB into data
    written at random: the size that runs fastest, when it beats 4KB writes
    by more than 1 / ``MAP_UNIT_IOPS_RATIO`` (writes below the unit rewrite
    the rest of it); 4KB otherwise."""
    sizes = [(4096, _get(figs, rewrite("4k"), "iops")), (8192, _get(figs, rewrite("8k"), "iops")),
             (16384, _get(figs, rewrite("16k"), "iops"))]
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


def host_interface(link: Optional[float]) -> Feature:
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
