"""A modern twin's dies of four planes: the structure scan weighs the raw NAND in half the dies of twice the planes,
which write and read as many pages at once but take twice as long over work done one page per die."""

from __future__ import annotations

from ssdlab import Drive
from ssdlab.twin.features import extract
from ssdlab.twin.fit.base import FOUR_PLANES, PLANES_KEY
from ssdlab.twin.fit.drive_file import build_doc
from ssdlab.twin.fit.evaluate import simulate_probe_figures, twin_target
from ssdlab.twin.fit.structure import _four_plane_candidates
from ssdlab.twin.probe import CLEAN, QUEUES, run_probe_simulated
from ssdlab.twin.probe.document import probe_document
from ssdlab.twin.probe.names import burst


def test_a_dramless_twin_on_four_plane_dies_waits_after_a_full_trim_as_its_drive_does() -> None:
    # the WD SN570: 16 dies of four planes (BiCS5), a 64 MB map cache; the twin's generic part has two planes
    # (the queue stage shows its NVMe link)
    run = run_probe_simulated("wd-sn570-1000", None, budget=0.25, stages=(CLEAN, QUEUES))
    features = extract(run.figures, run.target["capacity_bytes"])
    doc = probe_document(run, features, seed=1, budget=0.25, command="test", stages=(CLEAN, QUEUES))
    target = twin_target(doc, "t")
    vals = {p.key: p.value for p in target.params}
    # near a fitted twin's values; its native program comes from the full stage, not run here
    vals.update({"nand.packages_per_channel": 8, "nand.channels": 4, "nand.slc_tprog_ns": 121_000,
                 "nand.channel_bytes_per_s": 1_089_000_000, "nand.tprog_ns": 1_508_000})
    [(name, cand)] = _four_plane_candidates(vals, target, (8, 16, 32), False)
    assert cand[PLANES_KEY] == FOUR_PLANES and cand["nand.packages_per_channel"] * 4 == 16 and "16 dies" in name
    # a flush pads the whole one-shot unit: two more pages' transfer at 1,089 MB/s a program, the SLC one less
    assert cand["nand.slc_tprog_ns"] == 121_000 - 30_000
    two, four = (build_doc(features, v, "t")[0] for v in (vals, cand))
    n2, n4 = (Drive.load(d).config["nand"] for d in (two, four))
    assert n4["planes_per_die"] == 4 and n4["independent_plane_reads"] is True
    # the same raw NAND: as many planes of as many blocks
    assert n2["packages_per_channel"] * n2["planes_per_die"] == n4["packages_per_channel"] * n4["planes_per_die"]
    assert n2["blocks_per_plane"] == n4["blocks_per_plane"]
    # the first write after the probe's full TRIM waits for the translation pages written back one per die:
    # 16 dies take about as long as the drive's, 32 a quarter of it
    b8 = burst("8m")
    drive = run.figures[b8]["mbps"]
    sim2, sim4 = (simulate_probe_figures((d, 1, 0.25, (CLEAN,)))[b8]["mbps"] for d in (two, four))
    assert abs(sim4 / drive - 1) < 0.2 < sim2 / drive - 1
    # a twin already on four planes, or on a part with four, has no such candidate
    assert _four_plane_candidates(cand, target, (8, 16, 32), False) == []
