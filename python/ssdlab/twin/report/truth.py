"""The internals a probe tries to recover, as a drive's description defines
them (the truth a twin's features are scored against, for a simulated
original), and the table of recovered against true values.

Definitions (each as the engine uses it; docs/drive-file.md, docs/model.md):

- ``dies``: dies that hold user data = ``channels x packages_per_channel x
  dies_per_package - reserved_dies``, minus one more when ``nand.raise`` is
  on (RAISE keeps a die's capacity for parity: the engine's geometry numbers
  the parity die after the data dies and stores no user data on it). The
  engine's ``geometry["dies"]``.
- ``page_size_bytes``: ``nand.page_size_bytes`` (data bytes of one page of
  one plane; a multi-plane program unit is ``planes_per_die`` pages).
- ``write_buffer_bytes``: ``controller.write_buffer_bytes``.
- ``spare_fraction``: (raw NAND of the data dies - user capacity) / user
  capacity, with raw NAND = data dies x ``planes_per_die x blocks_per_plane x
  pages_per_block x page_size_bytes`` and the user capacity counted in whole
  4KB units as the FTL maps it (``ceil(user_capacity_bytes / 4096) x 4096``):
  the engine's ``spare_slots / user_units``, docs/drive-file.md's "Spare area
  = raw NAND of the data dies - user capacity". Reserved and parity dies are
  not spare.
- ``data_reduction``: ``[data_reduction].enabled`` (false without the section).
- ``compressible_stored_fraction``: NAND bytes stored per host byte of fio's
  ``buffer_compress_percentage=90`` data (what the probe writes). The engine
  turns that option into the data pattern ``ratio:0.1`` (not the drive's
  ``compressible`` pattern), and with data reduction stores each 4KB unit in
  whole 1KB granules, 1 to 4, holding ``4096 x 0.1`` bytes plus
  ``metadata_bytes_per_unit``: ``ceil((409 + metadata) / 1024) / 4`` (0.25
  with 64 B of metadata). 1.0 without data reduction. The drive file's
  ``compressible_stored_fraction`` (what the suite's ``compressible`` pattern
  stores) is reported beside it as ``compressible_stored_fraction_config``.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional

from ...drive import Drive
from ..records import InternalRow, Verdict
from .compare import finite_number

__all__ = ["INTERNALS", "UNIT_BYTES", "GRANULE_BYTES", "FIO_COMPRESS_PERCENTAGE", "truth_of", "internals_table", "verdict_of",
           "twin_internals", "SET_BY"]

#: The internals scored, in table order: (feature name, unit, what it is).
INTERNALS = [
    ("dies", "", "dies holding user data (RAISE parity and reserved dies excluded)"),
    ("page_size_bytes", "B", "NAND page data bytes (one plane)"),
    ("write_buffer_bytes", "B", "write-back buffer of the controller"),
    ("spare_fraction", "", "(raw NAND of the data dies - user capacity) / user capacity"),
    ("data_reduction", "", "the drive stores reducible data in fewer bytes"),
    ("compressible_stored_fraction", "", "stored / host bytes of fio buffer_compress_percentage=90 data"),
]

#: The FTL's mapping unit.
UNIT_BYTES = 4096
#: With data reduction, stored units are allocated in 1KB granules (1 to 4 per unit).
GRANULE_BYTES = 1024
#: fio's option the probe writes its compressible data with (ssdlab.suite.fio.DATA_PATTERN_OPTIONS).
FIO_COMPRESS_PERCENTAGE = 90

#: Relative tolerance of "within 10%" (the twin's target for recovered internals).
WITHIN = 0.10


def _stored_fraction(ratio: float, metadata_bytes: int) -> float:
    """What the engine stores per host byte of a 4KB unit of ``ratio`` data
    (ssdlab-sim ftl::mapping ``granules_for``, the ``Ratio`` pattern): whole
    granules, at least one, at most four."""
    permille = int(round(ratio * 1000))
    nbytes = UNIT_BYTES * permille // 1000 + metadata_bytes
    granules = min(max(-(-nbytes // GRANULE_BYTES), 1), UNIT_BYTES // GRANULE_BYTES)
    return granules * GRANULE_BYTES / UNIT_BYTES


def truth_of(drive: Drive) -> Dict[str, Any]:
    """The internals of a drive's composed description (module docstring),
    by feature name, plus ``dies_total``, ``reserved_dies``,
    ``parity_dies``, ``raw_bytes``, ``user_units_bytes`` and
    ``compressible_stored_fraction_config`` for context."""
    cfg = drive.config
    n = cfg["nand"]
    dies_total = int(n["channels"]) * int(n["packages_per_channel"]) * int(n["dies_per_package"])
    reserved = int(n.get("reserved_dies", 0))
    parity = 1 if n.get("raise") else 0
    dies = dies_total - reserved - parity
    page = int(n["page_size_bytes"])
    raw = dies * int(n["planes_per_die"]) * int(n["blocks_per_plane"]) * int(n["pages_per_block"]) * page
    user = int(cfg["drive"]["user_capacity_bytes"])
    user_units = -(-user // UNIT_BYTES) * UNIT_BYTES
    dr = cfg.get("data_reduction") or {}
    reduces = bool(dr.get("enabled", False))
    if reduces:
        stored = _stored_fraction(1 - FIO_COMPRESS_PERCENTAGE / 100, int(dr.get("metadata_bytes_per_unit", 0)))
        config_fraction: Optional[float] = float(dr.get("compressible_stored_fraction", 1.0))
    else:
        stored, config_fraction = 1.0, None
    return {
        "dies": dies,
        "page_size_bytes": page,
        "write_buffer_bytes": int(cfg["controller"]["write_buffer_bytes"]),
        "spare_fraction": (raw - user_units) / user_units,
        "data_reduction": reduces,
        "compressible_stored_fraction": stored,
        # context
        "dies_total": dies_total,
        "reserved_dies": reserved,
        "parity_dies": parity,
        "raw_bytes": raw,
        "user_units_bytes": user_units,
        "compressible_stored_fraction_config": config_fraction,
    }


def verdict_of(truth: Any, recovered: Any) -> Verdict:
    """``{"error", "verdict"}`` of one recovered value against the truth.
    ``verdict``: ``exact`` (equal; a float within 1e-6 relative),
    ``within 10%``, ``missed``, ``not recovered`` (no value) or ``no truth``
    (a real drive's: nothing to score against). ``error`` = recovered /
    truth - 1 for numbers (None for booleans and when either is missing;
    the absolute difference when the truth is 0)."""
    if recovered is None:
        return {"error": None, "verdict": "not recovered"}
    if truth is None:
        return {"error": None, "verdict": "no truth"}
    if isinstance(truth, bool) or isinstance(recovered, bool):
        return {"error": None, "verdict": "exact" if bool(truth) == bool(recovered) else "missed"}
    t, r = finite_number(truth), finite_number(recovered)
    if t is None or r is None:
        return {"error": None, "verdict": "missed"}
    if t == 0:
        err = r - t
        return {"error": err, "verdict": "exact" if abs(err) <= 1e-12 else "missed"}
    err = r / t - 1
    if abs(err) <= 1e-6:
        v = "exact"
    elif abs(err) <= WITHIN + 1e-12:
        v = "within 10%"
    else:
        v = "missed"
    return {"error": err, "verdict": v}


def internals_table(features: Mapping[str, Any], truth: Optional[Mapping[str, Any]]) -> List[InternalRow]:
    """One row per internal (:data:`INTERNALS`): ``name``, ``unit``, ``about``,
    ``truth`` (None for a real drive: ``truth`` None), ``recovered`` (the
    feature's value, None when the probe has none), ``confidence``, ``how``,
    ``error`` and ``verdict`` (:func:`verdict_of`)."""
    rows: List[InternalRow] = []
    for name, unit, about in INTERNALS:
        f = features.get(name)
        f = f if isinstance(f, Mapping) else {}
        recovered = f.get("value")
        t = None if truth is None else truth.get(name)
        rows.append({"name": name, "unit": str(f.get("unit", unit) or unit), "about": about, "truth": t,
                     "recovered": recovered, "confidence": f.get("confidence", "none" if not f else None),
                     "how": f.get("how", "not in probe.json" if not f else ""), **verdict_of(t, recovered)})
    return rows


#: The twin's values that set each internal (twin.json's provenance keys).
SET_BY = {
    "dies": "nand.packages_per_channel",
    "page_size_bytes": "nand.page_size_bytes",
    "write_buffer_bytes": "controller.write_buffer_bytes",
    "spare_fraction": "nand.blocks_per_plane",
    "data_reduction": "data_reduction.enabled",
    "compressible_stored_fraction": "data_reduction.enabled",
}


def twin_internals(twin: Drive, probe_features: Mapping[str, Any], provenance: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    """What the twin recovered, as features for :func:`internals_table`: the
    twin drive's own internals (:func:`truth_of` of its file), each with
    where the twin's value came from (measured, fitted or assumed, from
    twin.json) and the probe's own estimate."""
    mine = truth_of(twin)
    out: Dict[str, Any] = {}
    for name, unit, _about in INTERNALS:
        key = SET_BY[name]
        src = (provenance or {}).get(key, {})
        est = (probe_features.get(name) or {}) if isinstance(probe_features.get(name), Mapping) else {}
        how = f"the twin's value ({key}: {src.get('source', 'not recorded')})"
        if est.get("value") is not None:
            how += f"; the probe's own estimate {est['value']} ({est.get('confidence')})"
        out[name] = {"value": mine[name], "unit": unit, "confidence": src.get("source", "twin"), "how": how}
    return out
