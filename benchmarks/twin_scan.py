"""The digital twin's scan alone: the structure the fit starts
from (dies, page size, channels, dies kept idle by a cap or a program
buffer) for each preset's probe, against the preset's truth, in a minute or
two per preset instead of the round trip's five.

    python benchmarks/twin_scan.py [--presets A,B,...] [--out DIR] [--jobs N]

The probes go where the round trip keeps them (OUT/PRESET/probe.json, budget
1, seed 1): a later `twin_roundtrip.py --out DIR` reuses them, and this script
reuses the round trip's.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ssdlab import Drive
from ssdlab.results import command_line


def main() -> int:
    from ssdlab.cluster import Runner
    from ssdlab.twin.features import extract
    from ssdlab.twin.fit.base import CHANNELS, CHANNELS_KEY, cap_of
    from ssdlab.twin.fit.candidates import scan_starts
    from ssdlab.twin.fit.evaluate import twin_target
    from ssdlab.twin.fit.start import raw_nand_dies
    from ssdlab.twin.probe import capacity_of, figures_of
    from ssdlab.twin.report.truth import truth_of
    from ssdlab.twin.roundtrip import _probe

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--presets", help="comma-separated preset ids (default: every preset but the generic one)")
    p.add_argument("--out", default="/tmp/ssdlab-twin-roundtrip", help="the round trip's working directory")
    p.add_argument("--jobs", type=int, help="Dask workers (default: the cores)")
    a = p.parse_args()
    presets = a.presets.split(",") if a.presets else [x for x in Drive.preset_ids() if x != "generic-mlc-120"]
    unknown = [x for x in presets if x not in Drive.preset_ids()]
    if unknown:
        print(f"--presets: unknown preset {', '.join(unknown)} (allowed: {', '.join(Drive.preset_ids())})",
              file=sys.stderr)
        return 2
    command = command_line()
    with Runner(jobs=a.jobs, progress=False) as runner:
        for preset in presets:
            t0 = time.perf_counter()
            d = Path(a.out) / preset
            d.mkdir(parents=True, exist_ok=True)
            doc = _probe(preset, d, 1.0, 1, command, sys.stderr)
            doc = {**doc, "features": {**doc.get("features", {}), **extract(figures_of(doc), capacity_of(doc)[0])}}
            choices = raw_nand_dies(doc)
            best, scored = scan_starts(twin_target(doc, "t"), doc["features"], runner, 1, choices)
            c = int(best.get(CHANNELS_KEY, CHANNELS))
            cap = cap_of(best)
            truth = truth_of(Drive.load(preset))
            print(f"{preset}: raw NAND {choices or 'not seen'}: {c * int(best['nand.packages_per_channel'])} dies on "
                  f"{c} channels, {1 << int(best['nand.page_size_log2'])} B pages"
                  f"{f', {cap} {best[cap]}' if cap else ''}; objective {min(o for _, o in scored):.3f} over "
                  f"{len(scored)} starts, {time.perf_counter() - t0:.0f} s (truth: {truth['dies']} dies, "
                  f"{truth['page_size_bytes']} B pages)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
