"""The native NAND of a modern twin from the probe's rates: the part's values under a twin's, the range and the
value of the native program time the dies' rates give, and the units a drive folds per host unit past its
cache. Shared by the twin's drive file (where the sampler starts) and the cache's fit (:mod:`.slc`)."""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Tuple

from ..features.common import Features
from .base import _fv

#: Bits per cell of the generic modern part (TLC): a native block used in SLC mode holds a third of its data.
GENERIC_BITS_PER_CELL = 3
#: The native program time a modern twin's fit moves within: the ISSCC TLC and QLC dies program 12-184 MB/s each
#: (MODERN.md), which for the generic TLC part's 96 KiB one-shot unit is 0.53-8.2 ms (:data:`NATIVE_UNIT_BYTES`);
#: a part with another unit scales it (:func:`native_tprog_range_ns`).
NATIVE_TPROG_RANGE_NS = (530_000, 8_200_000)
NATIVE_UNIT_BYTES = 96 * 1024
#: The most units a twin folds per host unit past its cache (one each: as many folded as written).
FOLD_MAX = 1.0


def _part_nand(drive_doc: Mapping[str, Any]) -> Dict[str, Any]:
    """The [nand] values of the part a twin names, under those its drive file sets."""
    from ...fit.params import library_values

    part = str(drive_doc.get("drive", {}).get("nand_part") or "")
    nand: Dict[str, Any] = dict(library_values("part", part).get("nand", {})) if part else {}
    nand.update(drive_doc.get("nand", {}))
    return nand


def native_tprog_range_ns(nand: Mapping[str, Any]) -> Tuple[int, int]:
    """:data:`NATIVE_TPROG_RANGE_NS` for the one-shot unit (a page on each plane, one per bit of a cell) of a part."""
    unit = int(nand.get("planes_per_die", 2)) * int(nand.get("page_size_bytes", 16384)) * int(
        nand.get("bits_per_cell", GENERIC_BITS_PER_CELL))
    return (NATIVE_TPROG_RANGE_NS[0] * unit // NATIVE_UNIT_BYTES, NATIVE_TPROG_RANGE_NS[1] * unit // NATIVE_UNIT_BYTES)


def native_program_ns(nand: Mapping[str, Any], rate: float) -> float:
    """The native program time at which the dies of ``nand`` (channels x packages x dies a package) write ``rate``
    in one-shot units (a page on each plane for each bit of a cell)."""
    dies = int(nand.get("channels", 8)) * int(nand.get("packages_per_channel", 1)) * int(nand.get("dies_per_package", 1))
    unit = int(nand.get("planes_per_die", 2)) * int(nand.get("page_size_bytes", 16384)) * int(
        nand.get("bits_per_cell", GENERIC_BITS_PER_CELL))
    return dies * unit / rate * 1e9


#: Right after its cache's step, a drive that writes at this share of its full drive's sequential write or more
#: folds nothing while the host writes (the dies take the host's units alone).
NO_FOLD_SHARE = 0.9


def folds_nothing(features: Features) -> bool:
    """Whether the cache fill ran at the full drive's sequential write (:data:`NO_FOLD_SHARE`) right after its
    step: the dies then took the host's units alone, nothing folded while it wrote."""
    full, first = _fv(features, "full_write_bytes_per_s"), _fv(features, "post_cache_first_bytes_per_s")
    return bool(full and first and float(first) >= NO_FOLD_SHARE * float(full))


def full_drive_fold(features: Features) -> Optional[float]:
    """The units a modern drive folds per host unit past its cache. Measured where the whole-drive fill's rate
    rose once folding had emptied the cache (``slc_fold_ratio``: the cache's bytes over those written until
    then). 0 where the cache fill ran at the full drive's rate right after its step (:func:`folds_nothing`):
    nothing folded while the host wrote (wd-sn570-1000: 2,082 MB/s there, 2,086 on the full drive; its later
    fall, 1,350 MB/s for 35 GB, is its garbage collection moving the cache's data out of blocks a TRIM left).
    Else from the rates: on the full drive nothing is left to fold, so its sequential write is the
    dies' native rate R; past the cache they program the host's unit and the folds, R / (1 + fold) if a fold cost
    what a host unit does (it costs more: it also reads the SLC pages, so this overstates the ratio). None
    without either."""
    ratio = _fv(features, "slc_fold_ratio")
    if ratio is not None:
        return round(min(max(float(ratio), 0.0), FOLD_MAX), 3)
    full, post = _fv(features, "full_write_bytes_per_s"), _fv(features, "post_cache_write_bytes_per_s")
    if not full or not post:
        return None
    if folds_nothing(features):
        return 0.0
    return round(min(max(float(full) / float(post) - 1, 0.0), FOLD_MAX), 3)
