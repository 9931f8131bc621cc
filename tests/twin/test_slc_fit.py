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
