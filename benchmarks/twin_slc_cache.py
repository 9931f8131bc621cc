"""The SLC cache stage of the twin's fit alone, per modern preset: the probe's cache stage on the simulated preset
(budget 1), then the twin's cache fitted (ssdlab.twin.fit.slc) on a generic-2011 twin of the same capacity whose
program time gives the measured in-cache rate (what the clean stage's fit gives the twin). Prints the measured
cache, the true and the fitted [slc_cache] values.

    python benchmarks/twin_slc_cache.py samsung980pro-1000 samsung980-1000 crucial-p1-1000 intel660p-1000
"""

import sys
import time

from ssdlab.drive import Drive
from ssdlab.twin.features.cache import cache_features
from ssdlab.twin.fit.slc import choose_slc_cache
from ssdlab.twin.probe import CACHE, run_probe_simulated

#: The generic twin's dies and program unit (8 channels x 16 packages; 8KB pages on two planes).
DIES = 128
UNIT_BYTES = 16384


def main(presets):
    for preset in presets:
        t = time.time()
        d = Drive.load(preset)
        cap = int(d.capacity_bytes)
        true = d.config["slc_cache"]
        figs = run_probe_simulated(d, None, stages=(CACHE,), budget=1.0).figures
        F = {k: dict(v) for k, v in cache_features(figs).items()}
        F["capacity_bytes"] = {"value": cap, "unit": "B", "confidence": "high", "how": ""}
        if F["slc_cache"]["value"] is not True:
            print(f"{preset}: no cache seen ({F['slc_cache']['how']})")
            continue
        tp = int(DIES * UNIT_BYTES / F["slc_write_bytes_per_s"]["value"] * 1e9)
        base = {"drive": {"id": "twin", "name": "twin", "user_capacity_bytes": cap, "controller": "generic-2011",
                          "nand_part": "imft-25nm-l74a"},
                "host": {"link_bytes_per_s": 8_000_000_000}, "controller": {"max_write_bytes_per_s": 8_000_000_000},
                "nand": {"channels": 8, "packages_per_channel": DIES // 8, "dies_per_package": 1, "tprog_ns": tp}}
        doc, _, rec, _ = choose_slc_cache(base, F, 1, 1.0, tp)
        c = doc["slc_cache"]
        ts, td = true["static_percent_of_capacity"], true["dynamic_percent_of_capacity"]
        fs, fd = c["static_percent_of_capacity"], c["dynamic_percent_of_capacity"]
        print(f"{preset}: measured cache {F['slc_cache_bytes']['value'] / 1e9:.1f} GB, in "
              f"{F['slc_write_bytes_per_s']['value'] / 1e6:,.0f} MB/s, post "
              f"{F['post_cache_write_bytes_per_s']['value'] / 1e6:,.0f} MB/s, idle gave back "
              f"{(F['slc_idle_recovered_bytes']['value'] or 0) / 1e9:.1f} GB; true {ts}+{td} = {ts + td:.2f}%, fitted "
              f"{fs}+{fd} = {fs + fd:.2f}%; residual {rec['residual']} after {len(rec['rounds'])} rounds; "
              f"{time.time() - t:.0f} s", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or ["samsung980pro-1000", "samsung980-1000", "crucial-p1-1000", "intel660p-1000"])
