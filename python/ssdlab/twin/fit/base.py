"""The generic drive a twin starts from, and what every stage of the fit shares:
the base profile and part, the assumed layout (channels, planes), the keys a
scan may add, and the helpers that read a feature's value and size a buffer."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional, Tuple

from ...fit.params import library_values
from ..features.common import Features, field_of

BASE_PROFILE = "generic-2011"
BASE_PART = "imft-25nm-l74a"
CHANNELS = 8
#: The size assumed for a write buffer the probe could not see.
ASSUMED_BUFFER_BYTES = 4 * 1024 * 1024
#: The read-ahead window assumed when the probe sees a read-ahead.
ASSUMED_READAHEAD_BYTES = 1024 * 1024
#: Spare area assumed when the torture shows no GC onset.
ASSUMED_SPARE_FRACTION = 0.07
#: The most packages per channel a twin gets (16 x 8 channels: 128 dies).
MAX_PACKAGES_PER_CHANNEL = 16
#: The channel counts a twin may have: 8, the era's common layout, or 10 (a few controllers), chosen by the scan
#: (:func:`refine_candidates`) where the raw NAND's dies divide among them.
CHANNEL_CHOICES = (8, 10)
#: The channel counts a modern twin may have: 8, the high-end NVMe controllers' (Samsung Phoenix and Elpis), or 4,
#: those of the SM2263 (Crucial P1, Intel 660p), Samsung's Pablo (980) and the DRAM-less and QLC controllers of
#: MODERN.md (WD's MP16, the SM2258 on SATA). Both carry a modern drive's rates on 0.7-1.6 GB/s interfaces; they
#: differ in what one die's transfer takes (a 4 KB to 512 KB read at QD1) against what all of them carry (reads at
#: depth), so the scan chooses on the probe as it does between 8 and 10 on a SATA-era one.
MODERN_CHANNEL_CHOICES = (8, 4)
#: The key of the read-ahead window in a modern twin's values, where the scan chose it (:data:`READAHEAD_CHOICES`).
READAHEAD_KEY = "controller.readahead_bytes"
#: The read-ahead windows a modern twin's scan weighs where the probe sees a read-ahead: firmware sizes them in
#: powers of two, and the probe's sequential reads at QD1-4 (a 128KB read at QD1, 4KB reads at QD2-4: served from
#: the window once it runs ahead of them) move with the window; the assumed 1 MiB is one of them.
READAHEAD_CHOICES = (128 << 10, 256 << 10, 512 << 10, 1 << 20, 2 << 20)
#: The key of the channel count in a twin's values, when the scan chose other than :data:`CHANNELS`.
CHANNELS_KEY = "nand.channels"
#: The key of the active-die cap the scan may give a twin (:func:`refine_candidates`).
ACTIVE_DIES_KEY = "controller.max_active_dies"
#: The key of the program buffer the scan may give a twin instead (:func:`refine_candidates`): the controller's
#: memory for the data of the programs in flight, which holds programs, not reads, to the dies it has room for.
PROGRAM_BUFFER_KEY = "controller.program_buffer_bytes"
#: The keys of the two ways a twin keeps dies idle (a cap, in the scan's words).
CAP_KEYS = (ACTIVE_DIES_KEY, PROGRAM_BUFFER_KEY)
#: The keys of a modern twin's dies of four planes that read each plane on its own, where the structure scan chose
#: them over its part's two (:func:`ssdlab.twin.fit.structure.recheck_structure`): most 3D TLC dies since 2019 have
#: four (MODERN.md: the ISSCC 2019 Kioxia/WD 512Gb, BiCS5), and half the dies of twice the planes write as fast but
#: take twice as long over work done one page per die, such as a DRAM-less drive's translation pages.
PLANES_KEY = "nand.planes_per_die"
PLANE_READS_KEY = "nand.independent_plane_reads"
#: The planes of a modern twin's dies the scan weighs against its part's.
FOUR_PLANES = 4
#: Free blocks per die the generic profile keeps (ftl.gc_threshold_blocks + 1 open block).
_RESERVE_BLOCKS = 5
#: The engine's default for ``ftl.perf_mode_reorg_units_per_host_unit`` (units the performance mode's
#: reorganisation moves per host unit), where the base profile leaves it unset.
REORG_UNITS_PER_HOST_UNIT = 2
#: The channel rate of the generic profile (the twin's when the fit does not move it).
GENERIC_CHANNEL_BYTES_PER_S = 200_000_000
#: Planes per die of the generic part: a program unit is this many pages.
PLANES = 2
#: The least program time a twin gets from a flush measurement (MIN_FLUSH_PROGRAM_NS of the features).
MIN_TPROG_NS = 200_000
#: The generic profile's per-command FIS exchange on the link (host.command_overhead_ns of generic-2011).
GENERIC_COMMAND_OVERHEAD_NS = 3_000
#: The generic profile's time per command outside the slots (controller.command_latency_ns of generic-2011).
GENERIC_COMMAND_LATENCY_NS = 5_000
#: A write buffer is a region of SRAM or DRAM that firmware carves in powers of two: an estimate within this
#: share of a power of two is taken as that power of two (the estimates scatter that far, and a test that reads
#: what it has just written moves with the buffer to the byte).
BUFFER_POW2_SHARE = 0.2


@dataclass(frozen=True)
class Base:
    """The generic drive a twin starts from, and the ranges its fit moves within: the SATA-era MLC drive
    (``generic-2011`` on ``imft-25nm-l74a``), or the modern one (``generic-nvme`` on ``generic-tlc``, or on
    ``generic-qlc`` for a QLC drive, with an SLC cache) where the probe shows an NVMe link or a write cache
    (:func:`base_of`)."""

    profile: str
    part: str
    modern: bool
    #: The page read time's range (ns): the part's datasheets', widened.
    tr_range_ns: Tuple[int, int]
    #: The program time the clean stage's writes see (ns): MLC's tPROG, or the SLC mode's of a drive whose clean
    #: writes land in its cache.
    program_range_ns: Tuple[int, int]
    #: The key of that program time in the drive file.
    program_key: str
    channel_range_bytes_per_s: Tuple[int, int]
    channel_bytes_per_s: int
    command_latency_ns: int
    command_overhead_ns: int
    #: The user data of one die, by density (bytes): the raw NAND holds one of these counts.
    die_bytes: Tuple[int, ...]
    #: The page sizes (log2 bytes) the scan tries.
    page_log2s: Tuple[int, ...]
    planes: int
    pages_per_block: int
    why: str
    #: The channel counts the scan chooses among (:data:`CHANNELS` first).
    channel_choices: Tuple[int, ...] = CHANNEL_CHOICES


#: The generic modern parts: 3D TLC, and 3D QLC where the probe shows a QLC drive (:func:`base_of`).
TLC_PART = "generic-tlc"
QLC_PART = "generic-qlc"
#: A modern drive whose post-cache write rate, per TB of its capacity, is below this holds QLC. Past its cache a
#: drive writes at its native dies' program rate (less what folding takes), and bits per cell set that rate per
#: stored byte: the QLC dies of MODERN.md program 12-30 MB/s per 1 Tbit die, at most 8 x 30 = 240 MB/s per TB
#: with every die at work; its TLC dies 57-184 MB/s per 512 Gbit die, at least 16 x 57 = 912 MB/s per TB (456
#: even with 1 Tbit TLC dies). This is the geometric middle of 240 and 456. (Measured, MODERN.md: QLC Crucial
#: P1 150 and 60, Intel 660p about 100, Samsung 870 QVO 80 on the 1TB, 169 on the 4TB (42 a TB); TLC Samsung
#: 980 about 500, WD SN550 466, SN580 450, Crucial MX500 just above 400, P5 1,000, 980 PRO 1,500 MB/s per TB.)
#: The read latency cannot tell them apart: the clean stage reads what its writes left in the cache, in SLC mode.
QLC_POST_CACHE_PER_TB_BYTES_PER_S = 330_000_000


def _modern_base(part_id: str = TLC_PART) -> Base:
    prof, part = library_values("profile", "generic-nvme"), library_values("part", part_id)
    page = int(part["nand"]["page_size_bytes"])
    return Base(
        "generic-nvme", part_id, True,
        # the mean page read: tR 40-58 us on the ISSCC 2019-2021 TLC dies and 48-228 us by page type on QLC
        # (MODERN.md), widened; at least to twice the part's own mean (the QLC part's SLC read at 35 us is a
        # mean of 122: a drive whose SLC pages read in 45 us needs 157)
        tr_range_ns=(25_000, max(150_000, 2 * int(part["nand"]["tr_ns"]))),
        # SLC-mode programs are not published (MODERN.md): from a third of the library's 100 us to the IMFT QLC's
        # 300 us, widened
        program_range_ns=(30_000, 600_000), program_key="nand.slc_tprog_ns",
        # ONFI/Toggle interfaces of the class: 400 MT/s to 1.6 GT/s (MODERN.md: 667 MB/s SM2263, 1.4 Gb/s Samsung)
        channel_range_bytes_per_s=(400_000_000, 2_000_000_000),
        channel_bytes_per_s=int(prof["nand"]["channel_bytes_per_s"]),
        command_latency_ns=int(prof["controller"]["command_latency_ns"]),
        # an NVMe command's own TLPs take tens of nanoseconds on the link (the engine's, gen 3 x4: 59 ns)
        command_overhead_ns=100,
        # 256, 512 Gbit and 1 Tbit dies of 3D TLC and QLC (MODERN.md: 128L 512Gb TLC, 64L 1Tb QLC)
        die_bytes=(32 << 30, 64 << 30, 128 << 30),
        page_log2s=(page.bit_length() - 1,),
        planes=int(part["nand"]["planes_per_die"]), pages_per_block=int(part["nand"]["pages_per_block"]),
        why="the probe shows a modern drive", channel_choices=MODERN_CHANNEL_CHOICES)


SATA_BASE = Base("generic-2011", "imft-25nm-l74a", False, tr_range_ns=(30_000, 100_000),
                 program_range_ns=(700_000, 2_000_000), program_key="nand.tprog_ns",
                 channel_range_bytes_per_s=(40_000_000, 400_000_000), channel_bytes_per_s=200_000_000,
                 command_latency_ns=5_000, command_overhead_ns=3_000, die_bytes=(4 << 30, 8 << 30, 16 << 30),
                 page_log2s=(12, 13, 14), planes=2, pages_per_block=256, why="a drive of the SATA era")


@functools.lru_cache(maxsize=None)
def modern_base(part_id: str = TLC_PART) -> Base:
    return _modern_base(part_id)


def qlc_evidence(features: Features) -> Optional[str]:
    """Why the probe shows a QLC drive (None: it does not, or cannot tell): a post-cache write rate per TB of
    capacity below :data:`QLC_POST_CACHE_PER_TB_BYTES_PER_S`."""
    post, cap = _fv(features, "post_cache_write_bytes_per_s"), _fv(features, "capacity_bytes")
    if _fv(features, "slc_cache") is not True or not post or not cap:
        return None
    per_tb = float(post) / (float(cap) / 1e12)
    if per_tb >= QLC_POST_CACHE_PER_TB_BYTES_PER_S:
        return None
    return (f"its post-cache write, {float(post) / 1e6:,.0f} MB/s on {float(cap) / 1e12:,.2f} TB ({per_tb / 1e6:,.0f} "
            f"MB/s per TB), is below the {QLC_POST_CACHE_PER_TB_BYTES_PER_S / 1e6:,.0f} MB/s per TB a TLC drive writes "
            "at least: QLC dies")


def base_of(features: Features) -> Base:
    """The modern base where the probe shows an NVMe link (``host_interface``) or a write cache (``slc_cache``),
    on the generic QLC part where its post-cache write is a QLC drive's (:func:`qlc_evidence`), else the SATA
    era's."""
    nvme = field_of(features, "host_interface", "value") == "nvme"
    cache = field_of(features, "slc_cache", "value") is True
    if not nvme and not cache:
        return SATA_BASE
    why = " and ".join(w for w, on in (("an NVMe link", nvme), ("a write cache (a step down in a long write)", cache))
                       if on)
    qlc = qlc_evidence(features)
    b = modern_base(QLC_PART if qlc else TLC_PART)
    return Base(**{**b.__dict__, "why": f"the probe shows {why}: a modern drive" + (f"; {qlc}" if qlc else "")})


def _fv(features: Features, name: str) -> Any:
    return field_of(features, name, "value")


#: A clean sequential write at this share of the link's rate or more is bound by the link, not by the dies.
LINK_BOUND_SHARE = 0.97


def link_bound_rate(features: Features, name: str) -> Optional[float]:
    """The write rate ``name`` where it ran at the link's (within :data:`LINK_BOUND_SHARE`), else None: a write at
    the link's rate bounds the dies' rate only from below, so the ratios and counts taken from it are bounds too."""
    fast, link = _fv(features, name), _fv(features, "link_bytes_per_s")
    if not fast or not link or float(fast) < LINK_BOUND_SHARE * float(link):
        return None
    return float(fast)


def slc_read_range_ns(part: Mapping[str, Any], b: Base) -> Tuple[float, float]:
    """The SLC-mode read's range: the one the fit gives the mean page read, on the part's SLC scale."""
    k = float(part["slc_tr_ns"]) / float(part["tr_ns"])
    return b.tr_range_ns[0] * k, b.tr_range_ns[1] * k


def link_bound_cache_write(features: Features) -> Optional[float]:
    """:func:`link_bound_rate` of the cache fill's rate before its step."""
    return link_bound_rate(features, "slc_write_bytes_per_s")


def _clamp(x: float, lo: float, hi: float) -> float:
    return min(max(x, lo), hi)


def _buffer_bytes(b: float) -> int:
    """A buffer size for the drive file: at least 256 KiB, in whole 4KB units."""
    return int(max(b, 256 * 1024)) // 4096 * 4096


def _buffer_pow2(b: float) -> Tuple[int, str]:
    """``b`` as the power of two it lies within :data:`BUFFER_POW2_SHARE` of (and why), else in 4KB units."""
    p = 1 << max(0, round(math.log2(max(b, 1.0))))
    if abs(b / p - 1) <= BUFFER_POW2_SHARE:
        return _buffer_bytes(p), (f"; estimated at {int(b):,} B, within {BUFFER_POW2_SHARE:.0%} of {p / 2**20:g} MiB: "
                                  "buffers are powers of two")
    return _buffer_bytes(b), ""


def _tprog_measured(features: Features) -> Optional[float]:
    """transfer + tPROG from the flushed writes, when the probe measured it."""
    v = field_of(features, "tprog_ns", "value")
    return float(v) if v and field_of(features, "tprog_ns", "confidence") in ("high", "medium") else None


@functools.lru_cache(maxsize=None)
def _base_profile_ftl(profile: str = BASE_PROFILE) -> Dict[str, Any]:
    """A base profile's [ftl] values (read once: build_doc runs for every trial)."""
    ftl: Dict[str, Any] = library_values("profile", profile).get("ftl", {})
    return ftl


def cap_of(values: Mapping[str, Any]) -> Optional[str]:
    """Which way a twin's values keep dies idle (:data:`CAP_KEYS`), if any."""
    return next((k for k in CAP_KEYS if k in values), None)
