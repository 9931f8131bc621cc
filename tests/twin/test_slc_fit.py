"""The fit of a twin's SLC cache: from the cache stage's features of a drive with a known cache, the twin (without
one) gains a cache of that size and that post-cache rate; a probe without a step leaves the twin as it was."""

import time

from ssdlab.twin.features.cache import cache_features
from ssdlab.twin.fit.evaluate import simulate_probe_figures
from ssdlab.twin.fit.slc import GENERIC_SLC_CACHE, choose_slc_cache
from ssdlab.twin.probe import CACHE

CAP = 64_000_000_000


def _generic(**nand):
    return {"drive": {"id": "t", "name": "t", "user_capacity_bytes": CAP, "controller": "generic-2011",
                      "nand_part": "imft-25nm-l74a"},
            "nand": {"channels": 8, "packages_per_channel": 1, "dies_per_package": 1, **nand}}


def _truth():
    d = _generic(bits_per_cell=3, tprog_ns=3_000_000, slc_tprog_ns=1_000_000, slc_tr_ns=50_000,
                 slc_tbers_ns=3_000_000, slc_pe_cycles_rated=30_000)
    d["slc_cache"] = {"static_percent_of_capacity": 0.5, "dynamic_percent_of_capacity": 14.5}
    return d


def test_the_twin_recovers_the_cache_size_and_post_cache_rate():
    t0 = time.time()
    figs = simulate_probe_figures((_truth(), 1, 1.0, (CACHE,)))
    features = {k: dict(f) for k, f in cache_features(figs).items()}
    features["capacity_bytes"] = {"value": CAP, "unit": "B", "confidence": "high", "how": ""}
    size = features["slc_cache_bytes"]["value"]
    assert abs(size / (0.15 * CAP) - 1) < 0.05
    doc, prov, record, twin_figs = choose_slc_cache(_generic(tprog_ns=1_000_000), features, 1, 1.0, 1_000_000)
    assert record is not None and record["residual"] <= 0.1
    total = doc["slc_cache"]["static_percent_of_capacity"] + doc["slc_cache"]["dynamic_percent_of_capacity"]
    assert abs(total / 15.0 - 1) <= 0.1
    assert abs(doc["nand"]["tprog_ns"] / 3_000_000 - 1) <= 0.1
    assert prov["slc_cache.dynamic_percent_of_capacity"]["source"] == "fitted"
    assert prov["slc_cache.static_percent_of_capacity"]["value"] == GENERIC_SLC_CACHE["static_percent_of_capacity"]
    assert twin_figs
    assert time.time() - t0 < 60


def test_no_step_no_cache():
    features = {"slc_cache": {"value": None, "unit": "", "confidence": "low", "how": ""}}
    doc = _generic()
    assert choose_slc_cache(doc, features, 1, 1.0, 1_000_000) == (doc, {}, None, {})


def _modern_doc():
    return {"drive": {"id": "t", "name": "t", "user_capacity_bytes": 1_000_000_000_000, "controller": "generic-nvme",
                      "nand_part": "generic-tlc"}, "nand": {"channels": 4, "packages_per_channel": 4}}


def test_a_modern_twins_slc_program_is_never_slower_per_byte_than_its_native_one():
    from ssdlab.twin.fit.slc import _with_cache

    # a TLC unit holds three SLC units: a 0.9 ms native program bounds the SLC one at 0.3 ms
    d = _with_cache(_modern_doc(), 1.0, 900_000, 498_000)
    assert d["nand"]["slc_tprog_ns"] == 300_000 and d["nand"]["tprog_ns"] == 900_000
    assert _with_cache(_modern_doc(), 1.0, 1_500_000, 100_000)["nand"]["slc_tprog_ns"] == 100_000


def test_a_modern_twin_starts_with_the_cache_the_probe_measured():
    from ssdlab.fit.params import library_values
    from ssdlab.twin.fit.base import modern_base
    from ssdlab.twin.fit.drive_file import _slc_cache_start

    def feat(v):
        return {"value": v, "unit": "", "confidence": "high", "how": ""}

    features = {"slc_cache": feat(True), "slc_cache_bytes": feat(12_000_000_000),
                "capacity_bytes": feat(1_000_000_000_000), "perf_mode": feat(False)}
    doc, prov = {}, {}
    _slc_cache_start(doc, prov, features, modern_base())
    static = library_values("profile", "generic-nvme")["slc_cache"]["static_percent_of_capacity"]
    assert doc["slc_cache"]["dynamic_percent_of_capacity"] == round(1.2 - static, 3)
    assert prov["slc_cache.dynamic_percent_of_capacity"]["source"] == "measured"
    # no step, no cache set: the profile's stays
    doc = {}
    _slc_cache_start(doc, {}, {**features, "slc_cache": feat(None)}, modern_base())
    assert doc == {}
