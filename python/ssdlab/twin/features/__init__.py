"""What a probe reveals: each feature from the figures of the jobs that
measure it (:mod:`ssdlab.twin.probe`), with its unit, a confidence and how
it was derived. Every feature is a black-box estimate: it uses only what fio
measures on a real drive (rates, latencies, per-second IOPS), never the
simulator's internals.

Confidence: ``high`` when the jobs bound the value tightly, ``medium`` when it
rests on one assumption stated in ``how``, ``low`` when the probe only bounds
it (the fit of a twin then decides it), and ``none`` when the jobs that
measure it did not run (a value of None).

The modules: :mod:`.common` (the :class:`Feature` record), :mod:`.clean`
(the clean stage's features), :mod:`.state` (the fill stage's), :mod:`.full` (the full
drive's).
"""

from __future__ import annotations

from typing import Dict, Mapping, Optional

from ..probe.names import (
    AFTER_IDLE_RANDWRITE,
    AFTER_TRIM_SEQWRITE,
    BURST_PREFIX,
    CACHE_FILL,
    DIRTY_SEQWRITE,
    FULL_RANDWRITE,
    FULL_SEQWRITE,
    HOST_BUFFERS,
    LINK_SEQREAD,
    QUEUE_PREFIX,
    RANDREAD_128K_QD32,
    RANDREAD_RANDOMLY_WRITTEN,
    RANDWRITE_PREFIX,
    SEQREAD_RANDOMLY_WRITTEN,
    SEQWRITE_128K_QD32,
    SEQWRITE_PREFIX,
    TORTURED_RANDREAD,
    UNWRITTEN_READ,
    UNWRITTEN_SEQREAD,
    KiB,
    randread_4k,
    randread_qd1,
    randwrite_4k,
    seqread_4k,
    seqread_128k,
    seqread_small,
    seqwrite_pattern,
    seqwrite_small,
)
from ..records import Feature, JobFigures
from .cache import cache_features
from .clean import SATA_LINKS, _buffer, _map_unit, _nand_read, _program, host_interface
from .common import ASSUMED_PROGRAM_UNIT_BYTES, ASSUMED_TPROG_NS, MIN_FLUSH_PROGRAM_NS, _get, _ratio, feature, field_of
from .full import full_features
from .physical import physical
from .queues import (
    QUEUE_SCALING_SHARE,
    has_map_jobs,
    link_seqread,
    map_cache_features,
    nvme_link,
    queue_features,
)
from .state import _dirty_buffer, _onset, _perf_mode, steady_iops

#: An incompressible write at this share of the host's buffer generation rate or more is host-bound.
HOST_BOUND_SHARE = 0.8

__all__ = ["extract", "feature", "ASSUMED_PROGRAM_UNIT_BYTES", "ASSUMED_TPROG_NS", "MIN_FLUSH_PROGRAM_NS", "Feature", "SATA_LINKS", "host_interface",
           "steady_iops"]


def extract(figs: Mapping[str, JobFigures], capacity_bytes: int, *, cache: bool = False) -> Dict[str, Feature]:
    """Every feature from a probe's figures by job name (in the order
    probe.json lists them). ``cache``: the cache's features even without the
    cache fill's job (a twin's cache fit runs only the job its probe found the
    cache in, which may be the whole-drive fill)."""
    F: Dict[str, Feature] = {}
    link = _link_and_reads(F, figs, capacity_bytes)
    iops32 = _writes(F, figs, link)
    _reduction_and_layout(F, figs, capacity_bytes, link, iops32)
    _state(F, figs, iops32)
    # the cache stage's features only where it ran: a probe taken before it keeps the features it had
    if CACHE_FILL in figs or cache:
        F.update(cache_features(figs))
    if has_map_jobs(figs):
        slc = field_of(F, "slc_cache_bytes", "value") if field_of(F, "slc_cache", "value") else None
        F.update(map_cache_features(figs, capacity_bytes, slc, field_of(F, "slc_idle_recovered_bytes", "value")))
    if any(n.startswith(QUEUE_PREFIX) for n in figs):
        F.update(queue_features(figs))
        _nvme(F, figs)
    # the full drive's features only where its stage ran: a probe taken before it keeps the features it had
    if FULL_SEQWRITE in figs or FULL_RANDWRITE in figs:
        F.update(full_features(figs, capacity_bytes))
    return physical(F)


def _nvme(F: Dict[str, Feature], figs: Mapping[str, JobFigures]) -> None:
    """An NVMe link where the probe shows one: a transfer faster than any SATA link (the reads by several jobs at
    once reach it where one queue's do not), or reads that scale past SATA's 32 commands outstanding. Its PCIe
    generation is the slowest x4 link that carries the fastest transfer. A SATA drive's features stay as they were."""
    sata_max = max(rate for _, rate, _ in SATA_LINKS)
    link = F["link_bytes_per_s"]["value"]
    multi = link_seqread(figs)
    if multi and multi > 1.005 * sata_max and (not link or multi > link):
        link = multi
        F["link_bytes_per_s"] = feature(round(link), "B/s", "medium",
                                        f"the fastest large transfer measured: {LINK_SEQREAD} (several queues at once), "
                                        "the host link's usable rate or less")
    scaling = field_of(F, "queue_scaling", "value") if field_of(F, "queue_scaling", "confidence") == "high" else None
    fast = bool(link and link > 1.005 * sata_max)
    if not fast and not (scaling and scaling >= QUEUE_SCALING_SHARE):
        return
    pcie = nvme_link(link)
    why = (f"the fastest transfer ({(link or 0) / 1e6:,.0f} MB/s) is beyond every SATA link" if fast else
           f"4KB reads scale past 32 commands outstanding (x{scaling:.2f}), more than SATA's NCQ takes")
    F["host_interface"] = feature("nvme", "", "high", why + ": an NVMe drive")
    if pcie is not None:
        gen, lanes, rate = pcie
        how = (f"the slowest x{lanes} PCIe link that carries the fastest transfer ({(link or 0) / 1e6:,.0f} MB/s; "
               f"gen {gen} x{lanes} carries {rate / 1e6:,.0f} MB/s usable)")
        F["pcie_gen"] = feature(gen, "", "high" if (link or 0) >= 0.85 * rate else "medium", how)
        F["pcie_lanes"] = feature(lanes, "", "medium", "assumed: an M.2 drive's four lanes")


def _link_and_reads(F: Dict[str, Feature], figs: Mapping[str, JobFigures], capacity_bytes: int) -> Optional[float]:
    """The capacity, the host link and the clean drive's read path; returns the link's estimate (B/s)."""
    F["capacity_bytes"] = feature(capacity_bytes, "B", "high", "the size of the target")
    fast = [(_get(figs, n, "mbps") or 0.0) for n in (seqread_128k(32), RANDREAD_128K_QD32, UNWRITTEN_SEQREAD)]
    fast += [float(f["mbps"]) for n, f in figs.items() if n.startswith(BURST_PREFIX)]
    link = max(fast) * 1e6 if any(fast) else None
    F["link_bytes_per_s"] = feature(None if link is None else round(link), "B/s", "medium",
                                    "the fastest large transfer measured (128KB reads at QD32, of written and of "
                                    "unwritten LBAs; write bursts): the host "
                                    "link's usable rate or less")
    F["host_interface"] = host_interface(link)
    seq_r = _get(figs, seqread_128k(32), "mbps")
    F["seq_read_bytes_per_s"] = feature(None if seq_r is None else round(seq_r * 1e6), "B/s", "high" if seq_r else "none",
                                        "128KB QD32 sequential read: the link's rate, or below it the NAND's read "
                                        "bandwidth (channels, dies)")
    F["nand_read_bytes_per_s"] = _nand_read(figs, link)
    r8, r16 = _get(figs, randread_qd1("8k"), "mbps"), _get(figs, randread_qd1("16k"), "mbps")
    F["second_page_read_us"] = feature(
        None if not r8 or not r16 else round((16 * KiB / (r16 * 1e6) - 8 * KiB / (r8 * 1e6)) * 1e6, 2), "us",
        "medium" if r8 and r16 else "none",
        "QD1 random reads of 16KB less of 8KB: the second 8KB of a program unit (two planes of a die read at once) "
        "crossing the channel and the link, plus what the controller spends per byte read (an ECC decode that holds "
        "the die)")
    return link


def _writes(F: Dict[str, Feature], figs: Mapping[str, JobFigures], link: Optional[float]) -> Optional[float]:
    """The clean drive's writes, the write buffer, the command ceilings, the program time and the dies; returns the
    4KB QD32 random read rate."""
    seq_w = _get(figs, SEQWRITE_128K_QD32, "mbps")
    F["seq_write_bytes_per_s"] = feature(None if seq_w is None else round(seq_w * 1e6), "B/s", "high",
                                         "128KB QD32 sequential write of incompressible data on a clean drive")
    writes = [float(f["mbps"]) * 1e6 for n, f in figs.items()
              if n.startswith((BURST_PREFIX, SEQWRITE_PREFIX, RANDWRITE_PREFIX)) and f.get("mbps")]
    F["fastest_write_bytes_per_s"] = feature(round(max(writes)) if writes else None, "B/s", "high" if writes else "none",
                                             "the fastest write measured on the clean drive (bursts, sequential and "
                                             "random writes of every data pattern): the controller's write path is at "
                                             "least this fast")
    # While the buffer fills the host writes as fast as the write path lets it: the fastest write measured, which
    # is the link's rate or, behind a slower write path, below it; a read that fills the
    # link says nothing about it.
    r_fast = max(writes) if writes else link
    F["write_buffer_bytes"] = _buffer(figs, r_fast, None if seq_w is None else seq_w * 1e6)
    r1 = _get(figs, randread_4k(1), "clat_mean_us")
    u1 = _get(figs, UNWRITTEN_READ, "clat_mean_us")
    F["read_latency_4k_us"] = feature(r1, "us", "high", "4KB random read at QD1, written data")
    F["unwritten_read_latency_us"] = feature(u1, "us", "high" if u1 is not None else "none",
                                             "4KB random read at QD1 of LBAs holding no data")
    F["unwritten_reads_from_map"] = feature(None if r1 is None or u1 is None else bool(u1 < 0.6 * r1), "", "high"
                                            if u1 is not None else "none",
                                            "an unwritten LBA answered in well under a die read's time (< 60%)")
    iops32 = _get(figs, randread_4k(32), "iops")
    F["read_iops_4k_qd32"] = feature(iops32, "IOPS", "high", "4KB random read at QD32")
    F["write_iops_4k_qd32"] = feature(_get(figs, randwrite_4k(32), "iops"), "IOPS", "high",
                                      "4KB random write at QD32 on a clean drive")
    # the median: the first writes may wait for the buffer the bursts before them left full (samsung980-1000's
    # probe: mean 19.4 us, median 17.2, the drive's own write path 17.2); a probe without medians gives the mean
    w1 = _get(figs, randwrite_4k(1), "clat_p50_us") or _get(figs, randwrite_4k(1), "clat_mean_us")
    F["write_latency_4k_us"] = feature(w1, "us", "high", "4KB random write at QD1 on a clean drive (median)")
    # 512 B at QD32: with almost no data per command, the rate is the controller's command ceiling (a
    # read that must go to a die, on a drive without read-ahead, is bound by that die instead)
    cmd_w = max([x for x in (_get(figs, seqwrite_small("512", 32), "iops"), _get(figs, randwrite_4k(32), "iops")) if x],
                default=None)
    F["write_command_iops"] = feature(cmd_w, "IOPS", "medium" if cmd_w else "none",
                                      "the most write commands per second measured (512 B sequential or 4KB random "
                                      "writes at QD32): the controller's write-command ceiling or less")
    cmd_r = max([x for x in (_get(figs, seqread_small("512", 32), "iops"), iops32) if x], default=None)
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
    return iops32


def _reduction_and_layout(F: Dict[str, Feature], figs: Mapping[str, JobFigures], capacity_bytes: int,
                          link: Optional[float], iops32: Optional[float]) -> None:
    """Data reduction, read-ahead, the map unit and the layout random writes leave, the GC onset, the buffer the
    flush after the torture shows and a performance mode."""
    # data reduction
    inc = _get(figs, seqwrite_pattern("incompressible"), "mbps")
    host = _get(figs, HOST_BUFFERS, "mbps")
    F["host_buffer_bytes_per_s"] = feature(None if host is None else round(host * 1e6), "B/s",
                                           "high" if host else "none", "incompressible 128KB writes to fio's null "
                                           "engine: the host's rate of making fresh buffers (a real target only)")
    if host and inc and inc >= HOST_BOUND_SHARE * host:
        # the incompressible write ran at the host's pace: a faster reducible write says the host made its
        # buffers faster, not that the drive stored fewer bytes
        why = (f"not measurable: the incompressible write ({inc:,.0f} MB/s) ran at {inc / host:.0%} of the host's "
               f"buffer generation ({host:,.0f} MB/s): host-bound")
        for k, unit in (("data_reduction", ""), ("compressible_stored_fraction", ""), ("repeated_stored_fraction", ""),
                        ("zeros_stored_fraction", "")):
            F[k] = feature(None, unit, "none", why)
        _readahead_layout(F, figs, capacity_bytes, iops32)
        return
    host_note = ""
    if host and inc:
        host_note = f"; the incompressible rate less the host's buffer generation time ({host:,.0f} MB/s)"
        # fio makes each fresh buffer in the thread that submits it, so the host's time per byte adds to the
        # drive's: the drive's own incompressible rate is what remains once the host's share is taken out
        inc = 1 / (1 / inc - 1 / host)
    for pattern in ("compressible", "repeated", "zeros"):
        r = _get(figs, seqwrite_pattern(pattern), "mbps")
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
            "that much while the NAND binds)" + host_note
            + ("; the reducible write reached the link, so the stored fraction is at most this" if reduced and bound
               else ""))
    _readahead_layout(F, figs, capacity_bytes, iops32)


def _readahead_layout(F: Dict[str, Feature], figs: Mapping[str, JobFigures], capacity_bytes: int,
                      iops32: Optional[float]) -> None:
    """Read-ahead, the map unit, the layout random writes leave, the GC onset, the dirty buffer, a performance
    mode."""
    # read-ahead
    # a read-ahead serves a stream 2-5x as fast as random reads at the same depth (2.2-5.3 on the presets that
    # have one); without one a sequential read gains at most what two 4KB units sharing a page give (1.4x)
    thr = None
    for qd in (1, 2, 3, 4):
        ratio = _ratio(_get(figs, seqread_4k(qd), "iops"), _get(figs, randread_4k(qd), "iops"))
        if ratio is not None and ratio > 2.0:
            thr = qd
            break
    seen = any(_get(figs, seqread_4k(q), "iops") is not None for q in (1, 2, 3, 4))
    F["readahead"] = feature(thr is not None if seen else None, "", "high" if seen else "none",
                             "sequential 4KB reads at least twice as fast as random ones at the same depth (1 to 4)")
    F["readahead_min_qd"] = feature(thr, "", "medium" if thr else ("high" if seen else "none"),
                                    "the lowest depth at which sequential reads beat random ones")
    rr = _ratio(_get(figs, RANDREAD_RANDOMLY_WRITTEN, "iops"), iops32)
    F["map_unit_bytes"] = _map_unit(figs)
    F["random_layout_read_ratio"] = feature(None if rr is None else round(rr, 3), "", "high" if rr is not None else "none",
                                            "4KB QD32 random reads of data written at random / of data written in order: "
                                            "below 1 when a unit's stored bytes spread over dies (striping) or the map "
                                            "is coarser than 4KB")
    sr = _ratio(_get(figs, SEQREAD_RANDOMLY_WRITTEN, "mbps"), _get(figs, seqread_128k(32), "mbps"))
    F["random_layout_seqread_ratio"] = feature(None if sr is None else round(sr, 3), "", "high" if sr is not None else "none",
                                               "128KB QD32 sequential reads of data written at random / of data written "
                                               "in order")
    F.update(_onset(figs, capacity_bytes, int(F["map_unit_bytes"]["value"] or 4096)))
    F["dirty_flush_s"], F["dirty_buffer_bytes"] = _dirty_buffer(figs, F["steady_write_iops"]["value"])
    F.update(_perf_mode(figs, capacity_bytes))


def _state(F: Dict[str, Feature], figs: Mapping[str, JobFigures], iops32: Optional[float]) -> None:
    """The state behaviours: the dirty drive, idle time, the tortured reads and TRIM."""
    # state behaviours
    clean = _get(figs, SEQWRITE_128K_QD32, "mbps")
    dirty = _get(figs, DIRTY_SEQWRITE, "mbps")
    F["dirty_seq_write_ratio"] = feature(None if dirty is None or not clean else round(dirty / clean, 3), "",
                                         "high" if dirty is not None else "none",
                                         "128KB sequential write right after the torture / on a clean drive")
    steady = F["steady_write_iops"]["value"]
    idle = _get(figs, AFTER_IDLE_RANDWRITE, "iops")
    # where the torture never fell from its initial rate (no GC onset), the writes after idle time meet the same
    # ceiling whether or not idle time cleaned blocks
    onset = F.get("gc_onset_bytes")
    ceiling = (onset is None or onset["value"] is None) and "gc_onset_at_least_bytes" in F
    F["idle_recovery_ratio"] = feature(
        None if idle is None or not steady else round(idle / steady, 3), "",
        "none" if idle is None or not steady else "low" if ceiling else "high",
        "4KB random-write IOPS after idle time / the steady state: above 1.5 the drive cleans blocks while idle"
        + ("; the torture never left its initial rate, so the ratio cannot show idle-time GC" if ceiling else ""))
    tr = _ratio(_get(figs, TORTURED_RANDREAD, "iops"), iops32)
    F["tortured_read_ratio"] = feature(None if tr is None else round(tr, 3), "", "high" if tr is not None else "none",
                                       "4KB QD32 random reads after the torture / on the clean drive")
    after_trim = _get(figs, AFTER_TRIM_SEQWRITE, "mbps")
    F["after_trim_write_bytes_per_s"] = feature(None if after_trim is None else round(after_trim * 1e6), "B/s",
                                                "high" if after_trim is not None else "none",
                                                "128KB QD32 sequential write right after a full TRIM of the tortured drive")
    F["trim_recovery_ratio"] = feature(None if after_trim is None or not clean else round(after_trim / clean, 3), "",
                                       "high" if after_trim is not None else "none",
                                       "128KB sequential write right after a full TRIM of the tortured drive / on a "
                                       "clean drive: near 1 when TRIM frees the blocks at once")
