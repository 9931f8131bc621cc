"""The digital twin's round trip over every preset: probe the
simulated preset, fit a twin from the generic profile (the fit sees only the
probe's figures), review both, and score the twin's internals and review
figures. Prints a line per preset and the table; with --doc, writes the table
into docs/twin.md between its markers.

    python benchmarks/twin_roundtrip.py [--presets A,B,...] [--modern] [--trials 100] [--budget 1]
        [--full] [--out DIR] [--jobs N] [--doc docs/twin.md] [--table-only] [--merge DIR,...]

--modern: the presets with an NVMe link or TLC/QLC NAND (a twin from the generic modern start; their reviews add the whole-drive fill; the
table has their write cache, map cache and PCIe generation too), written between docs/twin.md's
roundtrip-modern markers. Each takes 40-60 minutes on 2 cores (a 1TB drive's probe, fit and whole-drive fills).

Resumable: what finished under --out (default /tmp/ssdlab-twin-roundtrip) is
not run again, and presets run one invocation at a time under one --out add
up to one table (roundtrip.json keeps every preset's row of runs with the same
settings); --table-only runs nothing and writes the table of the run under
--out (its roundtrip.json) into --doc; --merge DIR,... runs nothing either: it adds the
rows of round trips finished under other directories (run at once, one per core) to
--out's record first. Target: every recovered internal exact or within 10%, every
review figure of the twin within 15% of the original's, for at least 20
presets. Takes about 2.5 hours on 2 cores with --jobs 2 and the quick review profile
(145 min for the 26 presets from scratch, rt39 in docs/twin-history.md, the fit 60-70% of it; the
reviews alone, fits kept, 48 min with the quick scale's 20-minute torture, rt41).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ssdlab import Drive
from ssdlab.results import command_line
from ssdlab.twin.roundtrip import gc_modes, markdown_table, merge_runs, observable_within, roundtrip

SECTION = "roundtrip"
MODERN_SECTION = "roundtrip-modern"


def _modern(drive: Drive) -> bool:
    return drive.is_nvme or int(drive.config["nand"].get("bits_per_cell") or 2) >= 3


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--modern", action="store_true",
                   help="the presets with an NVMe link or TLC/QLC NAND, into the roundtrip-modern section of --doc "
                        "(default: the others, the SATA-era ones)")
    p.add_argument("--presets", help="comma-separated preset ids (default: every preset but the generic one the twin starts from)")
    p.add_argument("--trials", type=int, default=100, help="trials of each twin's fit (default 100)")
    p.add_argument("--polish", type=int, help="pattern-search evaluations after each fit's sampler (default: the fit's)")
    p.add_argument("--budget", type=float, default=1.0, help="the probe's budget (default 1)")
    p.add_argument("--full", action="store_true", help="review with the full profile (default: quick)")
    p.add_argument("--out", default="/tmp/ssdlab-twin-roundtrip", help="working directory (kept; resumable)")
    p.add_argument("--jobs", type=int, help="Dask workers (default: the cores)")
    p.add_argument("--doc", help="write the table into this markdown file between its roundtrip markers")
    p.add_argument("--table-only", action="store_true",
                   help="run nothing: the table (and --doc) from the finished run's OUT/roundtrip.json")
    p.add_argument("--merge", help="run nothing: add the rows of the round trips finished under these directories "
                                   "(comma-separated; same settings) to OUT's record, then the table")
    a = p.parse_args()
    # drives of today: an NVMe link, or TLC/QLC NAND behind an SLC cache (the SATA-era drives are MLC, an
    # Extreme II's small-write SLC buffer included)
    modern = [x for x in Drive.preset_ids() if _modern(Drive.load(x))]
    presets = (a.presets.split(",") if a.presets else modern if a.modern else
               [x for x in Drive.preset_ids() if x != "generic-mlc-120" and x not in modern])
    section = MODERN_SECTION if a.modern else SECTION
    begin, end = f"<!-- {section}:begin -->", f"<!-- {section}:end -->"
    done = Path(a.out) / "roundtrip.json"
    if a.merge:
        try:
            merge_runs(Path(a.out), [Path(x) for x in a.merge.split(",") if x])
        except ValueError as e:
            print(f"--merge: {e}", file=sys.stderr)
            return 2
        a.table_only = True
    if a.table_only and not done.is_file():
        print(f"--table-only: {done} does not exist (run the round trip first)", file=sys.stderr)
        return 2
    if not a.table_only:
        roundtrip(presets, Path(a.out), trials=a.trials, budget=a.budget, quick=not a.full, jobs=a.jobs,
                  command=command_line(), polish=a.polish)
    # The table is every preset the directory's record holds: runs of one preset at a time add up.
    run = json.loads(done.read_text())
    rows = [r for r in run["rows"] if (r["preset"] in modern) == a.modern]
    for r in rows:  # a run from before the GC column: the twin's drive file and the preset say it
        if "gc" not in r and (Path(a.out) / r["preset"] / "twin.toml").is_file():
            r["gc"] = gc_modes(r["preset"], Path(a.out) / r["preset"])
    commands = [str(c) for c in run.get("commands") or [run.get("command") or command_line()]]
    a.trials, a.budget, a.full = run["trials"], run["budget"], run.get("profile") == "full"
    wall = sum(float(r.get("wall_s") or r["probe_wall_s"] + r["fit_wall_s"] + r["review_wall_s"]) for r in rows)
    met = sum(1 for r in rows if r["target_met"])
    internals = sum(1 for r in rows if r["internals_ok"])
    seen = sum(1 for r in rows if r.get("internals_ok_where_seen"))
    review = sum(1 for r in rows if r["review_ok"])
    unpowered = [observable_within(r) for r in rows]
    review_np = sum(1 for w, n in unpowered if n and w == n)
    both_np = sum(1 for r, (w, n) in zip(rows, unpowered) if r["internals_ok"] and n and w == n)
    within = sum(r["review_within_15"] for r in rows)
    gc_right = sum(1 for r in rows if (r.get("gc") or {}).get("verdict") == "exact")
    figures = sum(r["review_figures"] for r in rows)
    table = markdown_table(rows)
    summary = (f"{len(rows)} presets in {wall / 60:.1f} min wall: review figures within 15%: {within:,}/{figures:,} "
               f"({within / max(1, figures):.1%}), without the power test (fio alone cannot read watts: a real drive needs a meter's log) "
               f"{sum(w for w, _ in unpowered):,}/{sum(n for _, n in unpowered):,}; internals all exact or within 10% on "
               f"{internals} ({seen} counting only what the probe can see, x†); every review figure within 15% on "
               f"{review} ({review_np} without the power test); both "
               f"(the target) on {met} ({both_np} without the power test{'' if a.modern else '; target: at least 20'}); garbage collection as "
               f"the original's on {gc_right}.")
    print(table)
    print(summary)
    if a.doc:
        doc = Path(a.doc)
        text = doc.read_text()
        if begin not in text or end not in text:
            print(f"{doc}: no {begin} ... {end} markers", file=sys.stderr)
            return 2
        head, rest = text.split(begin, 1)
        _, tail = rest.split(end, 1)
        block = (f"{begin}\n" + ", then ".join(f"`{c}`" for c in commands)
                 + f" ({'full' if a.full else 'quick'} review profile, {a.trials} trials, probe budget {a.budget:g}):"
                 f"\n\n{table}\n\n{summary}\n{end}")
        doc.write_text(head + block + tail)
        print(f"table written to {doc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
