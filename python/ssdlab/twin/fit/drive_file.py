"""The twin's drive file: the description built from the features and the
fitted values with the provenance of every value, its TOML text, and the
power model fitted to the probe's power readings."""

from __future__ import annotations

import math
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple

from ...errors import SsdlabError
from ...fit.output import toml_value
from ...fit.params import library_values
from ..features import SATA_LINKS
from ..features.common import Features, field_of
from ..records import JobFigures, PowerFit, Provenance, ValueSource
from .base import (
    _RESERVE_BLOCKS,
    ASSUMED_BUFFER_BYTES,
    ASSUMED_READAHEAD_BYTES,
    ASSUMED_SPARE_FRACTION,
    CHANNELS,
    CHANNELS_KEY,
    GENERIC_CHANNEL_BYTES_PER_S,
    MIN_TPROG_NS,
    PLANE_READS_KEY,
    PLANES,
    PLANES_KEY,
    REORG_UNITS_PER_HOST_UNIT,
    Base,
    _base_profile_ftl,
    _buffer_pow2,
    _fv,
    _tprog_measured,
    base_of,
    slc_read_range_ns,
)
from .native import _part_nand, full_drive_fold, native_program_ns, native_tprog_range_ns
from .start import clean_reads_native


def build_doc(features: Features, values: Mapping[str, Any], drive_id: str, name: str = ""
              ) -> Tuple[Dict[str, Any], Provenance]:
    """The twin's drive description (a dict for :meth:`Drive.load`) and the
    provenance of every value it sets: ``{dotted key: {value, source, why}}``."""
    prov: Provenance = {}
    cap = int(_fv(features, "capacity_bytes"))
    b = base_of(features)
    doc: Dict[str, Any] = {"drive": {"id": drive_id, "name": name or f"Twin of {drive_id}",
                                     "description": "a digital twin fitted by ssdlab to a probe (ssdlab probe, ssdlab fit --probe)",
                                     "controller": b.profile, "nand_part": b.part}}
    prov["drive.controller"] = {"value": b.profile, "source": "assumed", "why": f"the generic profile the twin starts from: {b.why}"}
    prov["drive.nand_part"] = {"value": b.part, "source": "assumed", "why": f"the generic part the twin starts from: {b.why}"}
    _put(doc, prov, "drive.user_capacity_bytes", cap - cap % 512, "measured", "the size of the probed target")
    _host(doc, prov, features)
    _buffer_and_readahead(doc, prov, features)
    _data_reduction(doc, prov, features)
    _map_idle_trim(doc, prov, features)
    _map_cache(doc, prov, features)
    _slc_cache_start(doc, prov, features, b)
    dies, page = _fitted(doc, prov, features, values, b)
    _native_start(doc, prov, features, b)
    _perf_mode(doc, prov, features, dies, page)
    _unmapped_read(doc, prov, features, b)
    _spare_area(doc, prov, features, cap, dies, page, b)
    return doc, prov


#: The most commands a SATA drive holds (NCQ).
SATA_NCQ_DEPTH = 32


def _map_cache(doc: Dict[str, Any], prov: Provenance, features: Features) -> None:
    """The map cache of a drive that holds only part of its map, from the span its QD1 reads stay fast over."""
    size = _fv(features, "map_cache_bytes")
    if _fv(features, "map_cache_limited") and size:
        _put(doc, prov, "controller.map_cache_bytes", int(size), "measured", features["map_cache_bytes"]["how"] + "; "
             + features["map_cache_span_bytes"]["how"])


def _slc_cache_start(doc: Dict[str, Any], prov: Provenance, features: Features, b: Base) -> None:
    """A modern twin's write cache at the size the probe's cache stage measured (the profile's static part, the
    dynamic part the rest), from the first trial on: the clean stage's writes land in the cache only while it
    has room, so a generic cache far larger than the drive's would take writes the drive made native for SLC
    ones (wd-sn570-1000: a 12 GB cache full before its clean stage's sequential write, which then ran at the
    native rate). The cache's own fit refines it after the sampler (:mod:`.slc`)."""
    size, cap = _fv(features, "slc_cache_bytes"), _fv(features, "capacity_bytes")
    if not b.modern or _fv(features, "slc_cache") is not True or _fv(features, "perf_mode") or not size or not cap:
        return
    static = float(library_values("profile", b.profile)["slc_cache"]["static_percent_of_capacity"])
    _put(doc, prov, "slc_cache.dynamic_percent_of_capacity", round(max(0.0, 100 * float(size) / float(cap) - static), 3),
         "measured", f"the cache stage's {float(size) / 1e9:,.1f} GB before its step down, less the {b.profile} "
         f"profile's static {static:g}%")
    fold = full_drive_fold(features)
    if fold is not None:
        _put(doc, prov, "slc_cache.fold_units_per_host_unit", fold, "measured",
             "the units folded per host unit past the cache, from the whole-drive fill or the full drive's write")


def _native_start(doc: Dict[str, Any], prov: Provenance, features: Features, b: Base) -> None:
    """A modern twin's native program time at the full drive's sequential write (nothing left to fold: the dies'
    native rate) for the dies of this trial, within the part's range, from the first trial on: the clean stage's
    writes past a small cache run at it (wd-sn570-1000), and the cache's fit refines it after the sampler."""
    full = _fv(features, "full_write_bytes_per_s")
    if not b.modern or not full:
        return
    nand = _part_nand(doc)
    lo, hi = native_tprog_range_ns(nand)
    _put(doc, prov, "nand.tprog_ns", int(min(max(native_program_ns(nand, float(full)), lo), hi)), "measured",
         f"the full drive's sequential write ({float(full) / 1e6:,.0f} MB/s): dies x native unit / this")


def _put(doc: Dict[str, Any], prov: Provenance, key: str, value: Any, source: str, why: str) -> None:
    """Set a dotted key of the drive description and record where it came from."""
    section, field = key.split(".", 1)
    doc.setdefault(section, {})[field] = value
    prov[key] = {"value": value, "source": source, "why": why}


def _host(doc: Dict[str, Any], prov: Provenance, features: Features) -> None:
    """The host link: a SATA generation's rate and FIS time, or the fastest transfer's rate."""
    link, iface = _fv(features, "link_bytes_per_s"), _fv(features, "host_interface")
    sata = {name: (rate, fis) for name, rate, fis in SATA_LINKS}
    if iface == "nvme" and _fv(features, "pcie_gen"):
        why = str(features["host_interface"]["how"])
        _put(doc, prov, "host.interface", "nvme", "measured", why)
        _put(doc, prov, "host.pcie_gen", int(_fv(features, "pcie_gen")), "measured", features["pcie_gen"]["how"])
        _put(doc, prov, "host.pcie_lanes", int(_fv(features, "pcie_lanes")), "assumed", features["pcie_lanes"]["how"])
    elif iface in sata:
        why = str(features["host_interface"]["how"])
        if base_of(features).modern:
            # a SATA drive with a write cache starts from the modern profile, an NVMe one: its link and queue are
            # SATA's (NCQ's 32 commands, where NVMe queues take more; samsung870qvo-1000's twin was an NVMe drive
            # with a 550 MB/s link)
            _put(doc, prov, "host.interface", iface, "measured", why)
            _put(doc, prov, "host.ncq_depth", SATA_NCQ_DEPTH, "assumed", "NCQ's most commands outstanding")
        _put(doc, prov, "host.link_bytes_per_s", sata[iface][0], "measured", why)
        _put(doc, prov, "host.command_overhead_ns", sata[iface][1], "measured", f"{iface}'s FIS time per command: {why}")
    elif link:
        _put(doc, prov, "host.link_bytes_per_s", int(link * 1.02), "measured",
            "2% above the fastest large transfer measured (the link is never quite saturated)")


def _buffer_and_readahead(doc: Dict[str, Any], prov: Provenance, features: Features) -> None:
    buf = _fv(features, "write_buffer_bytes")
    if buf:
        size, snapped = _buffer_pow2(buf)
        _put(doc, prov, "controller.write_buffer_bytes", size, "measured", features["write_buffer_bytes"]["how"] + snapped)
    else:
        _put(doc, prov, "controller.write_buffer_bytes", ASSUMED_BUFFER_BYTES, "assumed",
            "the probe could not see the buffer: " + field_of(features, "write_buffer_bytes", "how", ""))
    if _fv(features, "readahead"):
        _put(doc, prov, "controller.readahead_bytes", ASSUMED_READAHEAD_BYTES, "assumed", "read-ahead seen; its window assumed 1 MiB")
        _put(doc, prov, "controller.readahead_min_qd", int(_fv(features, "readahead_min_qd") or 1), "measured",
            "the lowest depth at which sequential 4KB reads beat random ones")


def _data_reduction(doc: Dict[str, Any], prov: Provenance, features: Features) -> None:
    if _fv(features, "data_reduction"):
        doc.setdefault("data_reduction", {})["enabled"] = True
        prov["data_reduction.enabled"] = {"value": True, "source": "measured", "why": features["data_reduction"]["how"]}
        _put(doc, prov, "data_reduction.metadata_bytes_per_unit", 64, "assumed", "SandForce-like metadata per 4KB")
        link_bound = field_of(features, "compressible_stored_fraction", "confidence") == "low"
        for pattern in ("compressible", "repeated", "zeros"):
            f: Mapping[str, Any] = features.get(f"{pattern}_stored_fraction") or {}
            v = f.get("value")
            if v is None:
                continue
            if f.get("confidence") == "low" or (pattern != "compressible" and link_bound and v < 0.5):
                # the write reached the link: the drive stores at most this share; take the best case (one
                # 1KB granule per 4KB unit for compressed data, nothing beyond metadata for duplicates)
                best = 0.2 if pattern == "compressible" else 0.0
                _put(doc, prov, f"data_reduction.{pattern}_stored_fraction", best, "assumed",
                    f"at most {v} (the write ran at the link); the best case assumed (one 1KB granule per unit)")
            else:
                # the measured share includes the original's metadata and granule rounding: just below it
                # the twin stores the same whole granules
                _put(doc, prov, f"data_reduction.{pattern}_stored_fraction", round(max(0.0, float(v) - 80 / 4096), 4),
                    "measured", f.get("how", ""))


def _map_idle_trim(doc: Dict[str, Any], prov: Provenance, features: Features) -> None:
    """The map unit, idle-time GC and the recycling path the write after a full TRIM shows."""
    map_unit = _fv(features, "map_unit_bytes")
    if map_unit and int(map_unit) > 4096:
        # entries that leave the drive's LBA space exactly this map unit (ceil(units / m) < units / (m / 2))
        units = -(-int(doc["drive"]["user_capacity_bytes"]) // 4096)
        _put(doc, prov, "ftl.max_map_entries", -(-units // (int(map_unit) // 4096)), "measured",
            f"a {int(map_unit) // 1024}KB map unit: " + features["map_unit_bytes"]["how"])
    idle = _fv(features, "idle_recovery_ratio")
    if idle is not None and field_of(features, "idle_recovery_ratio", "confidence") != "low":
        _put(doc, prov, "ftl.bg_gc_threshold_blocks", 16 if idle > 1.5 else 0, "measured",
            f"IOPS after idle / steady state = {idle:.2f}: " + ("idle time cleans blocks" if idle > 1.5 else "no idle-time GC"))
    trim_ratio = _fv(features, "trim_recovery_ratio")
    after_trim = _fv(features, "after_trim_write_bytes_per_s")
    # (not on a modern drive: the write after the TRIM of a full drive with a write cache runs at its native
    # NAND's rate once the cache is spent, and folding and GC take their share; a recycling path through the
    # controller would slow every fold, and every read waiting on one, to its rate: the 980's twin read 4KB at QD1
    # 10x slow with one)
    if trim_ratio is not None and trim_ratio < 0.8 and after_trim and not base_of(features).modern:
        _put(doc, prov, "ftl.recycle_bytes_per_s", int(after_trim), "measured",
            f"right after a full TRIM the drive writes at {trim_ratio:.0%} of its clean rate: it still passes every "
            "victim block through a recycling path of this rate")


def _fitted(doc: Dict[str, Any], prov: Provenance, features: Features, values: Mapping[str, Any],
            b: Base) -> Tuple[int, int]:
    """The fitted values, then what they imply (channels, the program time from the flushes); returns the dies
    and the page size."""
    link = _fv(features, "link_bytes_per_s")
    for k, v in values.items():
        if k == "nand.page_size_log2":
            _put(doc, prov, "nand.page_size_bytes", 1 << int(v), "fitted", "page size")
        else:
            _put(doc, prov, k, v, "fitted", "")
    if PLANES_KEY in values:
        _put(doc, prov, PLANE_READS_KEY, True, "fitted", "the four-plane dies the structure scan chose read each "
             "plane on its own, as the four-plane 3D TLC dies do (MODERN.md: the ISSCC 2019 Kioxia/WD 512Gb)")
    if b.modern and "nand.tr_ns" in values:
        _read_times(doc, prov, float(values["nand.tr_ns"]), b, features)
    if CHANNELS_KEY not in values:
        _put(doc, prov, CHANNELS_KEY, CHANNELS, "assumed",
             "8 channels, as the high-end modern controllers (Elpis, Phoenix): the scan also weighs 4 (the SM2263's, "
             "the Pablo's, the DRAM-less and QLC ones') where the raw NAND's dies divide, and did not take it"
             if b.modern else "8 channels, the common layout of the era")
    _put(doc, prov, "nand.dies_per_package", 1, "assumed", "one die per package (dies = channels x packages)")
    dies = int(doc["nand"]["channels"]) * int(doc["nand"].get("packages_per_channel", 2))
    page = int(doc["nand"].get("page_size_bytes", 8192))
    flush_ns = _tprog_measured(features)
    if flush_ns is not None and b.program_key not in values:
        # flush latency - write latency = the flush's own command time (a write's, less its 4KB on the
        # link) + the padded unit's transfer on the channel + tPROG (on a modern drive, the SLC mode's: the
        # clean stage's writes land in its cache)
        ch = float(doc["nand"].get("channel_bytes_per_s", b.channel_bytes_per_s))
        link_ns = 4096 / float(link) * 1e9 if link else 0.0
        unit = b.planes * page
        floor = b.program_range_ns[0] if b.modern else MIN_TPROG_NS
        tprog = max(floor, flush_ns - unit / ch * 1e9 + link_ns)
        _put(doc, prov, b.program_key, int(round(tprog, -3)), "measured",
            f"the flushed writes' time per program unit ({flush_ns / 1e3:.0f} us: median flush latency - write latency) "
            f"less the {unit // 1024} KiB unit's transfer at {ch / 1e6:.0f} MB/s, plus the write's 4KB on the link"
            + ("; the SLC mode's: the clean stage writes into the cache" if b.modern else ""))
    return dies, page


def _read_times(doc: Dict[str, Any], prov: Provenance, tr_ns: float, b: Base, features: Features) -> None:
    """A modern part's SLC-mode and native page-type reads from the fitted page read. Where the clean stage's QD1
    reads are well slower than the map spans' reads of the cache stage's SLC data (they read native pages:
    wd-sn570-1000's static cache is full by then), the SLC read is measured apart over the spans
    (:func:`_measured_slc_read`) and the fitted value scales the native page types. The native page types are
    measured where the spans read the cache stage's native data (:func:`_measured_native_read`), and stay the
    part's where neither sets them. Otherwise the clean stage's reads are taken to read the cache's SLC pages, so
    the fitted value scales the part's SLC read alone (its mean page read stands for it on the part's scale).
    Either way the full stage's reads, past any cache, set the native types' one factor later
    (:func:`ssdlab.twin.fit.full.choose_native_reads`)."""
    part = library_values("part", b.part)["nand"]
    scale = tr_ns / float(part["tr_ns"])
    # the spans' SLC reads come after the cache stage's writes, and a drive folding them in idle time makes them
    # wait behind its programs (crucial-p1-1000: 77.0 us over the spans, 65.6 in the clean stage): where the clean
    # stage read SLC pages, its reads, under the fit's whole read path, measure the SLC read instead
    native_clean = clean_reads_native(features)
    slc = _measured_slc_read(doc, features, part, b) if part.get("slc_tr_ns") and native_clean else None
    if slc is not None:
        _put(doc, prov, "nand.slc_tr_ns", slc[0], "measured", slc[1])
    elif part.get("slc_tr_ns"):
        _put(doc, prov, "nand.slc_tr_ns", int(round(float(part["slc_tr_ns"]) * scale, -2)), "fitted",
             f"the {b.part} part's SLC read x {scale:.3f}, the fitted page read over the part's mean: the QD1 reads "
             "of the clean stage read the cache's SLC pages")
    if part.get("tr_page_types_ns"):
        native = _measured_native_read(doc, features, part, b)
        if native is not None:
            _put(doc, prov, "nand.tr_page_types_ns", [int(round(float(t) * native[0], -2)) for t in part["tr_page_types_ns"]],
                 "measured", native[1])
        elif native_clean:
            _put(doc, prov, "nand.tr_page_types_ns", [int(round(float(t) * scale, -2)) for t in part["tr_page_types_ns"]],
                 "fitted", f"the {b.part} part's x {scale:.3f}, the fitted page read over the part's mean: the clean "
                 "stage's QD1 reads are well slower than the SLC read measured apart, so they read native pages")
        else:
            _put(doc, prov, "nand.tr_page_types_ns", [int(t) for t in part["tr_page_types_ns"]], "assumed",
                 f"the {b.part} part's: the clean stage's reads find its data in the cache")


def _die_read(doc: Mapping[str, Any], features: Features, key: str, b: Base) -> Optional[Tuple[float, str]]:
    """The die's read under a map-span kind's QD1 read, with how: that read less a trimmed LBA's (the command, the
    map lookup and the link, which both pay) less the 4KB crossing the channel (and the decode, where the twin has
    one). None where the probe did not measure both."""
    kind_us, trimmed_us = _fv(features, key), _fv(features, "trimmed_read_qd1_us")
    if not kind_us or not trimmed_us:
        return None
    ch = float(doc["nand"].get("channel_bytes_per_s", b.channel_bytes_per_s))
    decode = float(doc.get("controller", {}).get("read_decode_bytes_per_s") or 0)
    xfer_ns = 4096 / ch * 1e9 + (4096 / decode * 1e9 if decode else 0.0)
    return (float(kind_us) - float(trimmed_us)) * 1e3 - xfer_ns, (
        f"({float(kind_us):.1f} us) less a trimmed LBA's ({float(trimmed_us):.1f} us: the command, map and link "
        f"alone), less the 4KB's {xfer_ns / 1e3:.1f} us on the channel" + (" and decode" if decode else ""))


def _measured_slc_read(doc: Mapping[str, Any], features: Features, part: Mapping[str, Any], b: Base
                       ) -> Optional[Tuple[int, str]]:
    """The SLC-mode page read the map-span jobs measured (:func:`_die_read` of the cache stage's SLC data), with
    why. Within the range the fit gives the mean page read, on the part's scale; None where not measured."""
    got = _die_read(doc, features, "slc_data_read_qd1_us", b)
    if got is None:
        return None
    lo, hi = slc_read_range_ns(part, b)
    return int(round(min(max(got[0], lo), hi), -2)), (
        f"the QD1 read of the cache stage's SLC data over the map spans {got[1]} (within {lo / 1e3:.1f}-"
        f"{hi / 1e3:.1f} us)")


def _measured_native_read(doc: Mapping[str, Any], features: Features, part: Mapping[str, Any], b: Base
                          ) -> Optional[Tuple[float, str]]:
    """The factor on the part's native page-type reads that the map-span jobs measured, with why: random 4KB reads
    of data folded or written past the cache land on every page type alike, so :func:`_die_read` of the cache
    stage's native data is the types' mean (within the range the fit gives the mean page read). None where the
    spans read no native data."""
    got = _die_read(doc, features, "native_data_read_qd1_us", b)
    if got is None:
        return None
    types = [float(t) for t in part["tr_page_types_ns"]]
    mean = min(max(got[0], float(b.tr_range_ns[0])), float(b.tr_range_ns[1]))
    factor = round(mean / (sum(types) / len(types)), 3)
    return factor, (f"the {b.part} part's x {factor:.3f}: the QD1 read of the cache stage's native data over the map "
                    f"spans {got[1]} is the page types' mean read ({mean / 1e3:.1f} us, within "
                    f"{b.tr_range_ns[0] / 1e3:.1f}-{b.tr_range_ns[1] / 1e3:.1f} us)")


def _perf_mode(doc: Dict[str, Any], prov: Provenance, features: Features, dies: int, page: int) -> None:
    """A performance mode's program times, where the fill showed one."""
    std_rate = _fv(features, "standard_write_bytes_per_s")
    dip_rate = _fv(features, "perf_mode_dip_bytes_per_s")
    if _fv(features, "perf_mode") and (std_rate or dip_rate) and "tprog_ns" in doc["nand"]:
        # the clean stage ran in the faster mode: its program time is that mode's; the standard one follows
        # from the fill's final rate, die-bound: dies x unit / (transfer + tPROG)
        ch = float(doc["nand"].get("channel_bytes_per_s", GENERIC_CHANNEL_BYTES_PER_S))
        unit = PLANES * page
        xfer_ns = unit / ch * 1e9
        fast_tprog = int(doc["nand"]["tprog_ns"])
        pct = int(_fv(features, "perf_mode_fill_percent"))
        _put(doc, prov, "ftl.perf_mode_tprog_ns", fast_tprog, prov["nand.tprog_ns"]["source"],
            f"program time while fewer than {pct}% of the LBAs hold data (the clean stage ran in this mode)")
        _put(doc, prov, "ftl.perf_mode_fill_percent", pct, "measured", features["perf_mode_fill_percent"]["how"])
        if std_rate:
            std = dies * unit / float(std_rate) * 1e9 - xfer_ns
            why = (f"the standard mode's program time: {dies} dies x {unit // 1024} KiB per (transfer + tPROG) at the "
                   f"fill's final {float(std_rate) / 1e6:.0f} MB/s")
        else:
            # the fill ended at the link's rate: the standard mode shows only in the fall, where each die
            # programs the host's unit and r reorganised ones (each read first): per host unit
            # (1 + r) x (transfer + tPROG) + r x (tR + transfer)
            r = int(_base_profile_ftl(doc["drive"]["controller"]).get("perf_mode_reorg_units_per_host_unit",
                                                                     REORG_UNITS_PER_HOST_UNIT))
            tr = float(doc["nand"].get("tr_ns", library_values("part", doc["drive"]["nand_part"])["nand"]["tr_ns"]))
            per_unit_ns = dies * unit / float(dip_rate) * 1e9
            std = (per_unit_ns - r * (tr + xfer_ns)) / (1 + r) - xfer_ns
            why = (f"the standard mode's program time, from the fill's fall to {float(dip_rate) / 1e6:.0f} MB/s (its "
                   f"end ran at the link's rate): {dies} dies x {unit // 1024} KiB per host unit, each with {r} "
                   "reorganised units read and programmed beside it")
        _put(doc, prov, "nand.tprog_ns", int(round(max(fast_tprog + 10_000, std), -3)), "measured", why)


def _unmapped_read(doc: Dict[str, Any], prov: Provenance, features: Features, b: Base) -> None:
    """The drive's own time to answer a read of an unwritten LBA, where it does not answer from its map."""
    u1 = _fv(features, "unwritten_read_latency_us")
    # a drive that holds only part of its map reads a translation page before it can tell an LBA holds nothing:
    # the twin's own map cache (from the map-span jobs) gives that time, which a fixed answer time would add twice
    if _fv(features, "map_cache_limited"):
        return
    if _fv(features, "unwritten_reads_from_map") is False and u1:
        # a read of an unwritten LBA: the command's path (latency, FIS exchange, firmware time, 4KB on the
        # link), then the drive's own time to answer it; the rest of the measured latency is that time
        c = doc["controller"]
        rate = float(doc.get("host", {}).get("link_bytes_per_s") or 550_000_000)
        fis_ns = float(doc.get("host", {}).get("command_overhead_ns") or b.command_overhead_ns)
        path_ns = (float(c.get("command_latency_ns", b.command_latency_ns)) + fis_ns
                   + float(c.get("command_cost_read_ns", 24_000)) + 4096 / rate * 1e9)
        _put(doc, prov, "controller.unmapped_read_ns", int(round(max(1_000.0, float(u1) * 1e3 - path_ns), -3)), "measured",
            f"the unwritten-LBA read's QD1 latency ({float(u1):.0f} us) less the command's path at the fitted "
            f"command times ({path_ns / 1e3:.0f} us)")


def _spare_area(doc: Dict[str, Any], prov: Provenance, features: Features, cap: int, dies: int, page: int,
                b: Base) -> None:
    """The raw NAND (blocks per plane) from the GC onset, and idle-time GC within the spare blocks a die has."""
    planes, ppb = int(doc["nand"].get("planes_per_die", b.planes)), b.pages_per_block
    block = planes * ppb * page
    onset = _fv(features, "gc_onset_bytes")
    floor = _fv(features, "gc_onset_at_least_bytes")
    if onset:
        spare_bytes, source = float(onset), "measured"
        why = "raw NAND = capacity + the bytes written past it before GC bit (the GC onset) + the free blocks the FTL keeps"
    elif floor and floor > cap * ASSUMED_SPARE_FRACTION:
        # no onset over the whole torture: the least spare that agrees with that (a twin with less would fall
        # where the drive did not)
        spare_bytes, source = float(floor), "measured"
        why = ("raw NAND = capacity + at least the bytes the torture wrote past it with no GC onset (the least spare "
               "consistent with the probe) + the free blocks the FTL keeps")
    else:
        spare_bytes, source = cap * ASSUMED_SPARE_FRACTION, "assumed"
        why = f"no GC onset seen: {ASSUMED_SPARE_FRACTION:.0%} spare assumed"
    # the dies that hold data: with parity (RAISE), one die's worth holds none
    data_dies = dies - (1 if doc["nand"].get("raise") else 0)
    raw = cap + spare_bytes + data_dies * _RESERVE_BLOCKS * block
    # at least twice the blocks the FTL keeps free (its GC threshold must stay below half a die's blocks: a
    # small test file with many dies leaves few)
    bpp = max(2 * _RESERVE_BLOCKS, math.ceil(raw / (data_dies * block)))
    _put(doc, prov, "nand.blocks_per_plane", int(bpp), source, why)
    spare_blocks = bpp - math.ceil(cap / (data_dies * block))
    bg = doc.get("ftl", {}).get("bg_gc_threshold_blocks")
    if bg is None:
        bg = _base_profile_ftl(b.profile).get("bg_gc_threshold_blocks")
    if bg and bg > spare_blocks:
        # idle GC cannot clean more blocks than a die has spare (a small test file)
        old = prov.get("ftl.bg_gc_threshold_blocks", {"source": "assumed", "why": f"{b.profile}'s {bg}"})
        _put(doc, prov, "ftl.bg_gc_threshold_blocks", max(0, spare_blocks), old["source"],
            old["why"] + f"; at most the {spare_blocks} spare blocks a die has")


def _toml_text(doc: Mapping[str, Any], prov: Mapping[str, ValueSource], header: Sequence[str]) -> str:
    lines = [f"# {h}" for h in header] + [""]
    for section in ("drive", "host", "controller", "nand", "ftl", "slc_cache", "data_reduction", "power"):
        if section not in doc:
            continue
        lines.append(f"[{section}]")
        for k, v in doc[section].items():
            p = prov.get(f"{section}.{k}")
            if p is not None:
                why = f" ({p['why']})" if p.get("why") else ""
                resid = f", residual {p['residual']}" if "residual" in p else ""
                lines.append(f"# {p['source']}{resid}{why}")
            lines.append(f"{k} = {toml_value(v)}")
        lines.append("")
    return "\n".join(lines)


#: The NAND energies of the drive file's [power] section that the fitted NAND scale multiplies.
NAND_ENERGY_KEYS = ("read_uj_per_page", "program_uj_per_unit", "erase_uj_per_block", "transfer_pj_per_byte")


def fit_power(measured: Mapping[str, JobFigures], idle_w: float, twin: Mapping[str, JobFigures],
              base: Mapping[str, Any]) -> Tuple[Dict[str, Any], Provenance, PowerFit]:
    """The twin's power model from the probe's power readings: the idle draw
    is the idle window's average; every job's average watts is then
    ``idle + active x busy share + scale x the twin's NAND watts`` (its NAND
    energy with the part's energies in ``base``, over the job's duration), so
    the controller's active draw and one scale on the NAND's energies follow
    by least squares on the relative error (both kept at 0 or above).
    Reads, which spend little NAND energy, set the active draw; writes, whose
    programs dominate, set the scale. Returns the [power] values, their
    provenance and the fit (jobs used, RMS relative error)."""
    import numpy as np

    rows = []
    for name, f in measured.items():
        t = twin.get(name) or {}
        if f.get("avg_w") is None or not t.get("power_s"):
            continue
        w, dur = float(f["avg_w"]), float(t["power_s"])
        rows.append((w, float(t["power_busy_s"]) / dur, float(t["nand_energy_j"]) / dur))
    if not rows:
        raise SsdlabError("the probe's power readings match none of the twin's jobs")
    a = np.array([[b / w, n / w] for w, b, n in rows])
    y = np.array([(w - idle_w) / w for w, _, _ in rows])
    sol = np.linalg.lstsq(a, y, rcond=None)[0]
    if sol.min() < 0:  # one of the two at 0: the other alone
        best = None
        for i in (0, 1):
            col = a[:, i]
            x = max(0.0, float(col @ y / (col @ col))) if col @ col > 0 else 0.0
            v = np.zeros(2)
            v[i] = x
            err = float(np.sum((a @ v - y) ** 2))
            if best is None or err < best[0]:
                best = (err, v)
        assert best is not None
        sol = best[1]
    active_w, scale = float(sol[0]), float(sol[1])
    rms = float(np.sqrt(np.mean((a @ sol - y) ** 2)))
    n = len(rows)
    values: Dict[str, Any] = {"idle_mw": int(round(idle_w * 1e3)), "active_mw": int(round(active_w * 1e3))}
    for k in NAND_ENERGY_KEYS:
        values[k] = round(float(base[k]) * scale, 4)
    why = f"least squares over {n} probe jobs' average watts (RMS error {rms:.1%})"
    prov: Provenance = {"power.idle_mw": {"value": values["idle_mw"], "source": "measured",
                              "why": "the probe's idle window: the draw with nothing outstanding"},
            "power.active_mw": {"value": values["active_mw"], "source": "fitted",
                                "why": "the controller's draw while I/O is outstanding, " + why}}
    for k in NAND_ENERGY_KEYS:
        prov[f"power.{k}"] = {"value": values[k], "source": "fitted",
                              "why": f"the part's {base[k]} x {scale:.3f}, one scale on the NAND's energies, " + why}
    return values, prov, {"jobs": n, "rms_relative_error": rms, "active_w": active_w, "nand_scale": scale}
