"""The twin's accuracy, measured: for each preset, probe the simulated drive,
fit a twin from the generic profile without telling it the preset (the fit
sees only the probe's fio-shaped figures), review both, and score the twin:
which internals it recovered (dies, page size, write buffer, spare area, data
reduction) against the preset's, and every review figure's error.

Resumable: each preset's probe, fit and reviews are kept under
``OUT/<preset>/`` and not run again when present (a fit is redone when the
number of trials differs). ``benchmarks/twin_roundtrip.py`` is the command;
it writes ``OUT/roundtrip.json``, ``OUT/roundtrip.csv`` and the table of
docs/twin.md."""

from __future__ import annotations

import csv
import json
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, TextIO, Tuple, cast

from ..drive import Drive
from ..outputs import atomic_open, write_text
from .features import extract
from .probe import load_probe, probe_document, run_probe_simulated, save_probe
from .records import BufferSeen, GcModes, Internal, ProbeDoc, RoundTripRow, TwinRecord

__all__ = ["roundtrip_one", "roundtrip", "merge_runs", "markdown_table", "review_tests", "MODERN_REVIEW_TESTS", "observable_within",
           "UNOBSERVABLE_TESTS", "INTERNAL_NAMES",
           "REVIEW_TOLERANCE", "INTERNAL_TOLERANCE"]

INTERNAL_NAMES = ("dies", "page_size_bytes", "write_buffer_bytes", "spare_fraction", "data_reduction",
                  "compressible_stored_fraction")
REVIEW_TOLERANCE = 0.15
INTERNAL_TOLERANCE = 0.10
#: Review tests whose figures fio alone cannot observe: the power test's average watts need a power meter on the
#: drive's supply. The round trip's probe reads the simulated drive's power as a meter would (a real drive's
#: twin gets it from a meter's log, ``ssdlab fit --power-log``, else keeps the generic profile's). The table
#: counts the review figures with and without them; the target counts every figure.
UNOBSERVABLE_TESTS = ("power",)


def observable_within(row: RoundTripRow) -> Tuple[int, int]:
    """``(within, figures)`` of a round-trip row's review figures outside :data:`UNOBSERVABLE_TESTS`."""
    tests = [t for t in row.get("tests", []) if t["test_id"] not in UNOBSERVABLE_TESTS]
    return sum(int(t["within"]) for t in tests), sum(int(t["figures"]) for t in tests)


#: The tests of a modern drive's review beyond the default ones: the whole-drive fill (its write cache, the speed
#: in and after it), which every review of a drive with a pseudo-SLC cache runs.
MODERN_REVIEW_TESTS = ("whole-drive-fill",)


def review_tests(drive: Drive) -> Optional[List[str]]:
    """The review tests of a round trip: the default ones (None), and on an NVMe drive or one with a write cache
    :data:`MODERN_REVIEW_TESTS` too."""
    from ..suite.definitions import default_test_ids, get_test

    if not drive.is_nvme and not drive.config.get("slc_cache"):
        return None
    # (not a test that moves the drive onto a SATA link: an NVMe drive has no SATA port)
    sata = [t for t in default_test_ids()
            if any(str((r.get("drive") or {}).get("host.interface", "")).startswith("sata") for r in get_test(t)["runs"])]
    return [t for t in default_test_ids() if not (drive.is_nvme and t in sata)] + list(MODERN_REVIEW_TESTS)


def _probe(preset: str, d: Path, budget: float, seed: int, command: str, stream: TextIO) -> ProbeDoc:
    if (d / "probe.json").is_file():
        doc = load_probe(d)
        if not doc.get("interrupted") and float(doc.get("budget", 0)) == budget:
            return doc
    drive = Drive.load(preset)
    run = run_probe_simulated(drive, d, budget=budget, seed=seed)
    run.target.update({"drive": preset, "drive_id": drive.id})
    doc = probe_document(run, extract(run.figures, int(run.target["capacity_bytes"])), seed=seed, budget=budget,
                         command=command, drive_hash=drive.hash)
    save_probe(doc, d)
    stream.write(f"twin round trip: [{preset}] probe: {len(run.figures)} jobs, {run.wall_time_s:.1f} s wall\n")
    return doc


#: A modern drive's internals beyond :data:`INTERNAL_NAMES`: its write cache on an empty drive (static and dynamic
#: parts), its map cache (0: the whole map in DRAM) and its link's PCIe generation.
MODERN_INTERNAL_NAMES = ("slc_cache_bytes", "map_cache_bytes", "pcie_gen")


def modern_truth(drive: Drive) -> Dict[str, Any]:
    """A modern drive's :data:`MODERN_INTERNAL_NAMES` from its description."""
    cfg = drive.config
    c = cfg.get("slc_cache") or {}
    pct = float(c.get("static_percent_of_capacity", 0)) + float(c.get("dynamic_percent_of_capacity", 0))
    return {"slc_cache_bytes": round(pct / 100 * int(cfg["drive"]["user_capacity_bytes"])),
            "map_cache_bytes": int(cfg["controller"].get("map_cache_bytes") or 0),
            "pcie_gen": cfg["host"].get("pcie_gen")}


def _internals(original: Drive, twin: Drive) -> List[Internal]:
    from .report.truth import truth_of

    t, r = truth_of(original), truth_of(twin)
    out = [_internal(n, t[n], r[n]) for n in INTERNAL_NAMES]
    if review_tests(original) is not None:
        mt, mr = modern_truth(original), modern_truth(twin)
        out += [_internal(n, mt[n], mr[n]) for n in MODERN_INTERNAL_NAMES]
    return out


def _internal(name: str, truth: Any, recovered: Any) -> Internal:
    from .report.truth import verdict_of

    # a preset's truth is always known: a value it lacks (a SATA drive's PCIe generation) is recovered by a twin
    # that lacks it too, and missed by one that has it
    if truth is None:
        return {"name": name, "truth": None, "recovered": recovered, "error": None,
                "verdict": "exact" if recovered is None else "missed"}
    v = verdict_of(truth, recovered)
    return {"name": name, "truth": truth, "recovered": recovered, "error": v["error"], "verdict": v["verdict"]}


def gc_of(drive: Drive) -> str:
    """A drive's foreground garbage collection: ``paced`` or ``lazy``, ``+recycle`` with a recycling path."""
    ftl = drive.config.get("ftl", {})
    path = ftl.get("recycle_bytes_per_s") or ftl.get("recycle_bytes_per_s_per_die")
    return str(ftl.get("gc_mode", "paced")) + ("+recycle" if path else "")


def gc_modes(preset: str, d: Path) -> GcModes:
    """The original's and the twin's garbage collection (shown beside the internals, not one of them: the
    twin's target names dies, page, buffer, spare and data reduction)."""
    t, r = gc_of(Drive.load(preset)), gc_of(Drive.load(str(d / "twin.toml")))
    return {"truth": t, "twin": r, "verdict": "exact" if t == r else "missed"}


#: A probe job whose rate moves by less than this when the twin takes the original's value did not see it.
SEEN_CHANGE = 0.01


def _buffer_seen(d: Path, truth_bytes: int, budget: float, seed: int, runner: Any) -> BufferSeen:
    """Whether the probe can see the write buffer at all: the whole probe on
    the twin as fitted and on the twin given the original's buffer (nothing
    else changed). If no job's rate moves by :data:`SEEN_CHANGE`, no fit to
    this probe could tell the two buffers apart (on drives whose NAND writes
    as fast as the link or the controller lets data in, the buffer never
    fills)."""
    import tomllib

    from .fit import simulate_probe_figures
    from .probe import CLEAN, FILL

    doc = tomllib.loads((d / "twin.toml").read_text())
    alt = {**doc, "controller": {**doc.get("controller", {}), "write_buffer_bytes": int(truth_bytes)}}
    items = [(doc, seed, budget, (CLEAN, FILL)), (alt, seed, budget, (CLEAN, FILL))]
    if runner is not None:
        figs = [f for _, f in sorted(runner.map(simulate_probe_figures, items, what="buffer check"), key=lambda x: x[0])]
    else:
        figs = [simulate_probe_figures(i) for i in items]
    moved, job = 0.0, ""
    for name, f in figs[0].items():
        a, b = f.get("mbps"), (figs[1].get(name) or {}).get("mbps")
        if a and b and abs(b / a - 1) > moved:
            moved, job = abs(b / a - 1), name
    return {"probe_sees": moved >= SEEN_CHANGE, "truth_moves_probe": round(moved, 4), "most_moved_job": job}


class Prefixed:
    """A text stream that puts ``prefix`` before each line it passes on: the fit's progress lines (half an hour
    of them on a modern preset) in a round trip's log, each naming its preset."""

    def __init__(self, stream: TextIO, prefix: str) -> None:
        self.stream, self.prefix, self.at_line_start = stream, prefix, True

    def write(self, text: str) -> int:
        for part in text.splitlines(keepends=True):
            self.stream.write((self.prefix if self.at_line_start else "") + part)
            self.at_line_start = part.endswith("\n")
        self.stream.flush()
        return len(text)

    def flush(self) -> None:
        self.stream.flush()


def _fit(preset: str, d: Path, trials: int, runner: Any, seed: int, command: str, stream: TextIO,
         polish: Optional[int]) -> TwinRecord:
    """The twin's record (twin.json): the one under ``d`` when it was fitted with ``trials``, else a new fit."""
    from .fit import fit_twin

    twin_json = d / "twin.json"
    if twin_json.is_file():
        rec: TwinRecord = json.loads(twin_json.read_text())
        if rec.get("fit", {}).get("trials") == trials:
            return rec
    t1 = time.perf_counter()
    storage = d / "twin-fit.db"
    if storage.exists():
        storage.unlink()
    more: Dict[str, Any] = {} if polish is None else {"polish_evaluations": polish}
    rec = fit_twin(d, d / "twin.toml", trials=trials, runner=runner, storage=str(storage), seed=seed, command=command,
                   stream=cast(TextIO, Prefixed(stream, f"twin round trip: [{preset}] ")), **more)
    stream.write(f"twin round trip: [{preset}] fit: {trials} trials, objective {rec['fit']['objective_start']:.2f} -> "
                 f"{rec['fit']['objective']:.2f}, {time.perf_counter() - t1:.0f} s wall\n")
    return rec


def roundtrip_one(preset: str, out: Path, *, trials: int = 100, budget: float = 1.0, quick: bool = True, runner: Any = None,
                  jobs: Optional[int] = None, scheduler: Optional[str] = None, seed: int = 1, command: str = "",
                  stream: TextIO = sys.stderr, polish: Optional[int] = None) -> RoundTripRow:
    """One preset's round trip (see the module docstring); its row."""
    from .report import twin_report

    d = Path(out) / preset
    t0 = time.perf_counter()
    probe = _probe(preset, d, budget, seed, command, stream)
    t_probe = time.perf_counter() - t0
    t1 = time.perf_counter()
    rec = _fit(preset, d, trials, runner, seed, command, stream, polish)
    t_fit = time.perf_counter() - t1
    t2 = time.perf_counter()
    rep = twin_report(str(d), quick=quick, out=str(d / "report"), tests=review_tests(Drive.load(preset)), jobs=jobs,
                      scheduler=scheduler, seed=seed, command=command, stream=stream)
    t_review = time.perf_counter() - t2
    original, twin = Drive.load(preset), Drive.load(str(d / "twin.toml"))
    internals = _internals(original, twin)
    for i in internals:
        if i["name"] == "write_buffer_bytes" and i["verdict"] == "missed":
            seen = _buffer_seen(d, int(i["truth"]), budget, seed, runner)
            i["probe_sees"], i["truth_moves_probe"], i["most_moved_job"] = (
                seen["probe_sees"], seen["truth_moves_probe"], seen["most_moved_job"])
    s = rep.summary["overall"]
    tests = rep.summary["tests"]
    worst_test = max((t for t in tests if t.get("median_abs_error") is not None), key=lambda t: t["median_abs_error"] or 0.0,
                     default=None)
    ok_internals = all(i["verdict"] in ("exact", "within 10%") for i in internals)
    ok_seen = all(i["verdict"] in ("exact", "within 10%") or i.get("probe_sees") is False for i in internals)
    ok_review = s["figures"] > 0 and s["within"] == s["figures"]
    row: RoundTripRow = {
        "preset": preset,
        "internals": internals,
        "internals_ok": ok_internals,
        "internals_ok_where_seen": ok_seen,
        "gc": gc_modes(preset, d),
        "review_figures": s["figures"],
        "review_within_15": s["within"],
        "review_share_within_15": s["share_within"],
        "review_median_abs_error": s["median_abs_error"],
        "review_worst": s["worst"],
        "worst_test": None if worst_test is None else {"test_id": worst_test["test_id"],
                                                        "median_abs_error": worst_test["median_abs_error"]},
        "tests": [{"test_id": t["test_id"], "median_abs_error": t["median_abs_error"], "within": t["within"],
                   "figures": t["figures"]} for t in tests],
        "review_ok": ok_review,
        "review_ok_without_power": None,
        "target_met": ok_internals and ok_review,
        "fit_objective_start": rec["fit"]["objective_start"],
        "fit_objective": rec["fit"]["objective"],
        "fit_trials": rec["fit"]["trials"],
        "probe_wall_s": round(float(probe.get("wall_time_s", t_probe)), 1),
        "probe_simulated_s": probe.get("simulated_time_s"),
        "fit_wall_s": round(t_fit, 1),
        "review_wall_s": round(t_review, 1),
        "wall_s": round(time.perf_counter() - t0, 1),
        "report": str(rep.page),
    }
    w_obs, n_obs = observable_within(row)
    row["review_ok_without_power"] = n_obs > 0 and w_obs == n_obs
    stream.write(f"twin round trip: [{preset}] internals {'ok' if ok_internals else 'missed'}; review figures within 15%: "
                 f"{s['within']}/{s['figures']} (median |error| {100 * (s['median_abs_error'] or 0):.1f}%); "
                 f"{time.perf_counter() - t0:.0f} s wall\n")
    stream.flush()
    return row


def _csv_rows(rows: Sequence[RoundTripRow]) -> List[Dict[str, Any]]:
    out = []
    for r in rows:
        flat = {k: v for k, v in r.items() if not isinstance(v, (list, dict))}
        gc = r.get("gc")
        flat["gc_truth"], flat["gc_twin"] = (gc["truth"], gc["twin"]) if gc else (None, None)
        for i in r["internals"]:
            flat[f"{i['name']}_truth"] = i["truth"]
            flat[f"{i['name']}_twin"] = i["recovered"]
            flat[f"{i['name']}_verdict"] = i["verdict"]
        w = r.get("review_worst")
        flat["review_worst_figure"] = f"{w['test_id']}: {w['figure']}" if w else ": "
        flat["review_worst_error"] = w["error"] if w else None
        out.append(flat)
    return out


def _fmt_internal(i: Internal) -> str:
    t, r = i["truth"], i["recovered"]
    if isinstance(t, bool):
        shown = f"{'yes' if r else 'no'}"
    elif i["name"] in ("write_buffer_bytes", "map_cache_bytes"):
        shown = f"{r / 2**20:.3g} MiB"
    elif i["name"] == "slc_cache_bytes":
        shown = f"{r / 1e9:,.1f} GB"
    elif i["name"] == "page_size_bytes":
        shown = f"{r // 1024} KiB"
    elif isinstance(r, float):
        shown = f"{r:.3f}"
    else:
        shown = f"{r}"
    mark = {"exact": "=", "within 10%": "~"}.get(i["verdict"], "x")
    if i.get("probe_sees") is False:
        mark = "x†"
    return f"{shown} {mark}"


def _gc_truth(r: RoundTripRow) -> str:
    gc = r.get("gc")
    return gc["truth"] if gc else "-"


def _fmt_gc(gc: Optional[GcModes]) -> str:
    if not gc:
        return "-"
    return f"{gc['twin']} {'=' if gc['verdict'] == 'exact' else 'x'}"


def markdown_table(rows: Sequence[RoundTripRow]) -> str:
    """The round-trip table: per preset the twin's internals (= exact, ~
    within 10%, x missed, truth in the header cell's table below) and its
    review figures within 15%."""
    modern = any(len(r["internals"]) > len(INTERNAL_NAMES) for r in rows)
    extra = " SLC cache | map cache | PCIe gen |" if modern else ""
    head = ("| preset | dies | page | buffer | spare | data red. | stored 90% |" + extra + " review figures within 15% | "
            "without power | median \\|error\\| | worst test (median) | fit objective | target | GC |")
    lines = [head, "|" + "---|" * (14 + (3 if modern else 0))]
    for r in rows:
        cells = [_fmt_internal(i) for i in r["internals"]]
        cells += ["-"] * ((len(INTERNAL_NAMES) + len(MODERN_INTERNAL_NAMES) - len(cells)) if modern else 0)
        wt = r.get("worst_test")
        lines.append(
            f"| {r['preset']} | " + " | ".join(cells)
            + f" | {r['review_within_15']}/{r['review_figures']} ({100 * (r['review_share_within_15'] or 0):.0f}%)"
            + " | {}/{}".format(*observable_within(r))
            + f" | {100 * (r['review_median_abs_error'] or 0):.1f}%"
            + f" | {wt['test_id'] if wt else '-'} ({100 * ((wt['median_abs_error'] if wt else None) or 0):.0f}%)"
            + f" | {r['fit_objective_start']:.2f} -> {r['fit_objective']:.2f}"
            + f" | {'met' if r['target_met'] else 'missed'}"
            + f" | {_fmt_gc(r.get('gc'))} |")
    truth = ["", "x† missed, and no fit to this probe could do better: the twin's whole probe given the original's "
             "buffer moves no job's rate by 1% (its NAND takes writes as fast as the link or the controller lets "
             "them in, so the buffer never fills).",
             "", "GC: the twin's foreground garbage collection (paced, or lazy: whole victims when a block is needed; "
             "+recycle: a controller-wide recycling path), = as the original's; shown, not counted in the target.",
             "", "Truth (the presets' own values, `ssdlab.twin.report.truth.truth_of`):", "",
             "| preset | dies | page | buffer | spare | data red. | stored 90% |" + extra + " GC |",
             "|" + "---|" * (8 + (3 if modern else 0))]
    for r in rows:
        t = {i["name"]: i["truth"] for i in r["internals"]}
        more = (f" {t['slc_cache_bytes'] / 1e9:,.1f} GB | {t['map_cache_bytes'] / 2**20:.3g} MiB | {t['pcie_gen']} |"
                if modern and "slc_cache_bytes" in t else (" - | - | - |" if modern else ""))
        truth.append(f"| {r['preset']} | {t['dies']} | {t['page_size_bytes'] // 1024} KiB | "
                     f"{t['write_buffer_bytes'] / 2**20:.3g} MiB | {t['spare_fraction']:.3f} | "
                     f"{'yes' if t['data_reduction'] else 'no'} | {t['compressible_stored_fraction']:.3f} |{more} "
                     f"{_gc_truth(r)} |")
    return "\n".join(lines + truth)


def roundtrip(presets: Sequence[str], out: Path, *, trials: int = 100, budget: float = 1.0, quick: bool = True,
              jobs: Optional[int] = None, scheduler: Optional[str] = None, seed: int = 1, command: str = "",
              stream: TextIO = sys.stderr, polish: Optional[int] = None) -> List[RoundTripRow]:
    """Every preset's round trip; ``OUT/roundtrip.json`` and ``.csv`` rewritten
    after each (an interrupted run keeps the presets that finished). Rows of
    other presets already in ``OUT/roundtrip.json`` from a run with the same
    trials, budget, scale and seed are kept, so presets run one invocation at
    a time make one table; the rows of this invocation are returned."""
    from ..cluster import Runner

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    settings = {"trials": trials, "budget": budget, "profile": "quick" if quick else "full", "seed": seed}
    kept, commands = _earlier_rows(out / "roundtrip.json", settings, presets, stream)
    commands = [c for c in commands if c != command] + [command]
    rows: List[RoundTripRow] = []
    with Runner(jobs=jobs, scheduler=scheduler, progress=False) as runner:
        for p in presets:
            rows.append(roundtrip_one(p, out, trials=trials, budget=budget, quick=quick, runner=runner, jobs=jobs,
                                      scheduler=scheduler, seed=seed, command=command, stream=stream, polish=polish))
            _write_record(out, kept + rows, command, commands, settings)
    return rows


def _write_record(out: Path, every: List[RoundTripRow], command: str, commands: List[str],
                  settings: Dict[str, Any]) -> None:
    """``OUT/roundtrip.json`` and ``.csv`` of these rows."""
    doc = {"command": command, "commands": commands, **settings, "presets": len(every),
           "target_met": sum(1 for r in every if r["target_met"]), "rows": every}
    write_text(out / "roundtrip.json", json.dumps(doc, indent=1) + "\n")
    flat = _csv_rows(every)
    with atomic_open(out / "roundtrip.csv", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(flat[0]))
        w.writeheader()
        w.writerows(flat)


def merge_runs(out: Path, others: Sequence[Path], stream: TextIO = sys.stderr) -> int:
    """Add the rows of finished round trips under other directories to ``OUT/roundtrip.json`` (a preset's row
    from a later directory replaces an earlier one), so that presets run at once in separate directories make one
    table. Every run must have the same settings (trials, budget, scale, seed); ValueError (one line) names the
    first that does not, or that holds no round trip's record. Returns the number of presets in the merged record."""
    out = Path(out)
    paths = [out / "roundtrip.json"] if (out / "roundtrip.json").is_file() else []
    paths += [Path(o) / "roundtrip.json" for o in others]
    docs = []
    for path in paths:
        try:
            docs.append(json.loads(path.read_text()))
            docs[-1]["rows"]
        except (OSError, ValueError, KeyError, TypeError):
            raise ValueError(f"{path}: not a finished round trip's record (run the round trip there first)") from None
    if not docs:
        raise ValueError("nothing to merge: no round trip's record given")
    keys = ("trials", "budget", "profile", "seed")
    settings = {k: docs[0].get(k) for k in keys}
    rows: Dict[str, RoundTripRow] = {}
    commands: List[str] = []
    for path, doc in zip(paths, docs):
        if any(doc.get(k) != v for k, v in settings.items()):
            raise ValueError(f"{path}: a run with other settings ({', '.join(f'{k} {doc.get(k)}' for k in keys)}; "
                             f"{paths[0]} has {', '.join(f'{k} {v}' for k, v in settings.items())})")
        rows.update({r["preset"]: r for r in doc["rows"]})
        commands += [str(c) for c in doc.get("commands") or [doc.get("command")] if c and str(c) not in commands]
    every = list(rows.values())
    out.mkdir(parents=True, exist_ok=True)
    _write_record(out, every, commands[-1] if commands else "", commands, settings)
    stream.write(f"twin round trip: {len(every)} presets' rows in {out / 'roundtrip.json'}\n")
    return len(every)


def _earlier_rows(path: Path, settings: Dict[str, Any], presets: Sequence[str],
                  stream: TextIO) -> Tuple[List[RoundTripRow], List[str]]:
    """The rows of an earlier run under the same directory that this run keeps (other presets, same settings)
    and the commands that made them; a run with other settings is replaced, and the user is told."""
    if not path.is_file():
        return [], []
    try:
        doc = json.loads(path.read_text())
        rows, same = doc["rows"], all(doc.get(k) == v for k, v in settings.items())
    except (ValueError, KeyError, TypeError):
        stream.write(f"twin round trip: {path} is not a round trip's record; it is replaced\n")
        return [], []
    if not same:
        stream.write(f"twin round trip: {path} holds a run with other settings "
                     f"({', '.join(f'{k} {doc.get(k)}' for k in settings)}); its rows are replaced\n")
        return [], []
    commands = doc.get("commands") or ([doc["command"]] if doc.get("command") else [])
    return [r for r in rows if r["preset"] not in presets], [str(c) for c in commands]
