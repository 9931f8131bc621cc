"""``ssdlab fit --probe DIR``: a drive file fitted to what a probe measured.

The twin is a generic 2011-2013 SATA drive (controller profile
``generic-2011``, NAND part ``imft-25nm-l74a``), or a generic modern one
(``generic-nvme`` on ``generic-tlc``, or on ``generic-qlc`` where the
post-cache write is a QLC drive's, with an SLC cache) where the probe shows
an NVMe link or a write cache (:func:`.base.base_of`), with:

- *measured* values, set from the probe's features: the capacity, the host
  link, the write buffer, data reduction and its stored fractions, read-ahead
  and its queue-depth threshold, the spare area (from the GC onset), whether
  idle time cleans blocks, tPROG when the flushed writes measured it (the
  time per program unit less the unit's transfer at the fitted channel rate),
  and a performance mode when the fill showed one (the clean stage's tPROG is
  then that mode's; the standard one follows from the fill's final rate);
- *fitted* values: the free parameters below, moved jointly by Optuna
  (:mod:`ssdlab.fit.study`, trials in parallel on the Dask runner) so that
  the simulated ``clean`` stage of the probe reproduces the measured one (the
  root mean square of each job's rate error over a 10% tolerance), after a
  scan of structures (dies, page size, channels, dies kept idle) at the
  starts' times, then the read-ahead window (:func:`recheck_window`), on a
  modern twin writes of whole program units acknowledged at the die
  (:func:`recheck_write_ack`), and the structure weighed again at the fitted
  times (:func:`recheck_structure`: dies kept idle, the raw NAND's layouts,
  page size against channel rate, RAISE parity); on a modern twin, after the
  full drive's dies, the clean stage's reads at those dies
  (:func:`.cache_reads.choose_cache_reads`);
- *assumed* values: everything else, from the generic profile and part.

``DIR/twin.toml`` is the drive file, with where every value came from in its
comments; ``DIR/twin.json`` records, for every value, ``measured``,
``fitted`` (with the residual of the fit) or ``assumed``, and the residual of
every probe job once the whole probe is simulated on the twin.

The stages, one module each: :mod:`.start` (the free parameters and the starts),
:mod:`.candidates` (the scan of structures), :mod:`.evaluate` (the objective),
:mod:`.structure` (the structure weighed again after the sampler),
:mod:`.slc` and :mod:`.full` (a modern twin's cache, its full-drive dies and native reads), :mod:`.cache_reads`
(the clean stage's reads at those dies),
:mod:`.behaviours` and :mod:`.buffer` (what the fill stage shows), and
:mod:`.drive_file` (the drive file, its provenance and the power model). The
evidence behind their constants is in docs/twin.md.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Dict, List, Optional, TextIO, Tuple

from ...cluster import Runner
from ...drive import Drive
from ...fit.evaluate import Evaluation
from ...fit.params import Target, library_values
from ...fit.polish import polish
from ...outputs import write_text
from ..features import extract
from ..probe import CACHE, CLEAN, FULL, apply_power_log, capacity_of, figures_of, load_probe, probe_jobs
from ..records import Figures, PowerFit, ProbeDoc, ProbeJobError, Provenance, SlcFit, StructureRecord, TwinRecord
from .base import BASE_PART, BASE_PROFILE, base_of
from .behaviours import choose_gc_mode, choose_idle_gc, choose_recycle_path
from .buffer import choose_dirty_buffer
from .cache_reads import choose_cache_reads
from .candidates import _target_for, scan_starts
from .drive_file import _toml_text, build_doc, fit_power
from .evaluate import _simulate_docs, evaluate_twin, probe_rows, simulate_probe_figures, twin_target
from .full import choose_full_dies, choose_native_reads, full_onset_features
from .reliability import assess
from .slc import choose_slc_cache, choose_static_share
from .start import free_parameters, raw_nand_dies, start_candidates
from .structure import STRUCTURE_ROUNDS, recheck_structure, recheck_window, recheck_write_ack

__all__ = ["BASE_PROFILE", "BASE_PART", "stages_left_out", "free_parameters", "start_candidates", "scan_starts", "build_doc", "probe_rows",
           "twin_target", "fit_twin", "evaluate_twin", "simulate_probe_figures"]
#: Evaluations of the pattern search after the sampler.
POLISH_EVALUATIONS = 80


def fit_twin(probe_dir: Path, out: Path, *, trials: int = 60, sampler: str = "cmaes", seed: int = 1, runner: Optional[Runner] = None,
             storage: Optional[str] = None, resume: bool = False, stream: Optional[TextIO] = sys.stderr,
             command: str = "", twin_id: Optional[str] = None, power_log: Optional[Path] = None,
             polish_evaluations: int = POLISH_EVALUATIONS) -> TwinRecord:
    """Fit a twin to the probe in ``probe_dir``; write the drive file ``out``
    and ``out``'s ``.json`` provenance; return that provenance document.
    ``power_log``: a power meter's log of a real target's probe
    (:func:`ssdlab.twin.probe.read_power_log`), from which the twin's power
    model is fitted. ``polish_evaluations``: the pattern search's budget
    after the sampler (:func:`ssdlab.fit.polish.polish`; 0: none)."""
    doc = load_probe(probe_dir)
    if power_log is not None:
        doc = apply_power_log(doc, power_log)
    # the features from the probe's figures by this ssdlab's extractor: a probe taken by an older one gains
    # what the extractor learned since (the features it saved are the record of what it saw then)
    doc = {**doc, "features": {**doc.get("features", {}), **extract(figures_of(doc), capacity_of(doc)[0])}}
    # a modern drive's spare area from the full drive's random writes where the torture saw no GC onset
    doc = {**doc, "features": full_onset_features(doc["features"])}
    source_id = str(doc["target"].get("drive_id") or doc["target"].get("drive") or "drive")
    tid = twin_id or f"twin-{Path(source_id).stem}"
    target = twin_target(doc, tid)
    own = runner is None
    run = runner if runner is not None else Runner()
    try:
        target, result, polished, best, structures = _sample(target, doc, run, seed, trials, sampler, storage, resume,
                                                             stream, polish_evaluations)
        features = doc["features"]
        drive_doc, prov = build_doc(features, best.values, tid)
        for k in best.values:
            key = "nand.page_size_bytes" if k == "nand.page_size_log2" else k
            prov[key]["residual"] = round(best.objective, 4)
            prov[key]["why"] = next((p.why for p in target.params if p.key == k), prov[key]["why"])
        kept = [r for r in structures if r.get("kept")]
        if kept:
            why = "after the fit, at the fitted times, " + "; then ".join(
                f"{r['kept']} explained the probe better than {r['fitted']} (objective {r['objective']:.3f}; "
                + ", ".join(f"{n} {o:.3f}" for n, o in r["others"].items())
                + ("; after a short polish " + ", ".join(f"{n} {o:.3f}" for n, o in r["contest"].items())
                   if r.get("contest") else "")
                + (f"; of the near ties, the buffer nearest the flush after the torture, instead of "
                   f"{r['flush']['instead_of']}" if r.get("flush") else "")
                + f"; {r['polished']:.3f} polished)" for r in kept)
            for k in sorted({c for r in kept for c in r["changed"]}):
                key = "nand.page_size_bytes" if k == "nand.page_size_log2" else k
                prov[key]["why"] = why + (": " + prov[key]["why"] if prov[key]["why"] else "")
        drive_doc, twin_figs = _behaviours(drive_doc, prov, doc, run, seed, stream)
        drive_doc, slc_fit = _slc_cache(drive_doc, prov, twin_figs, doc, seed, stream)
        # the dies on the full drive, last: they keep every write rate the fits before matched
        drive_doc, full_figs, full_fit = choose_full_dies(drive_doc, prov, doc["features"], figures_of(doc), run, seed,
                                                          capacity_of(doc)[1], stream)
        twin_figs.update(full_figs)
        # the clean stage's reads at those dies: the sampler set the SLC read and the window at the count before
        drive_doc, cache_read_figs, cache_read_fit = choose_cache_reads(drive_doc, prov, doc["features"],
                                                                        figures_of(doc), full_fit, run, seed,
                                                                        capacity_of(doc)[1], stream)
        twin_figs.update(cache_read_figs)
        if full_fit is not None and cache_read_fit is not None:
            full_fit["cache_reads"] = cache_read_fit
        # the native page reads from the full stage's reads, at the dies kept
        drive_doc, read_figs, read_fit = choose_native_reads(drive_doc, prov, doc["features"], figures_of(doc),
                                                             twin_figs, run, seed, capacity_of(doc)[1], stream)
        twin_figs.update(read_figs)
        if full_fit is not None and read_fit is not None:
            full_fit["native_reads"] = read_fit
        # the cache's split, from the fill stage where the full drive has only its static part: last, on the twin
        # whose dies and reads the full stage set, since the fill stage's rates after the cache are theirs too
        drive_doc, static_figs, said = choose_static_share(drive_doc, prov, doc["features"], figures_of(doc), run,
                                                           seed, capacity_of(doc)[1])
        if stream is not None and said:
            stream.write(f"ssdlab fit: {said}\n")
        resimulate = bool(static_figs)
        if base_of(doc["features"]).modern:
            drive_doc, static_figs, buffer_moved = _modern_buffer(drive_doc, prov, doc, static_figs, run, seed, stream)
            resimulate = resimulate or buffer_moved
        if full_fit is None:
            twin_figs.update(static_figs)
        else:
            # the fill stage again on the twin written, so that twin.json and the reliability judge it: the figures
            # above are the twin's before its cache fit (the generic cache and native program) and the full-drive
            # steps (the share's or the buffer's step simulated it where it moved either; the full stage then moves too)
            fill = static_figs or _simulate_docs([drive_doc], run, seed, capacity_of(doc)[1], figures_of(doc))[0]
            twin_figs.update({n: f for n, f in fill.items() if n not in full_figs})
            if resimulate:
                cap, budget = capacity_of(doc)
                moved = [f for _, f in run.map(simulate_probe_figures, [(drive_doc, seed, budget, (CLEAN, CACHE, FULL))],
                                               what="twin full drive")][0]
                shown = {j.name for j in probe_jobs(cap, budget) if j.stage in (CACHE, FULL)}
                twin_figs.update({n: f for n, f in moved.items() if n in shown})
    finally:
        if own:
            run.close()
    record = _write_twin(doc, drive_doc, prov, twin_figs, out, probe_dir, power_log, source_id, tid, command, seed,
                         sampler, result, polished, best, structures, slc_fit, full_fit)
    return record


def _slc_cache(drive_doc: Dict[str, Any], prov: Provenance, twin_figs: Figures,
               doc: ProbeDoc, seed: int, stream: Optional[TextIO]) -> Tuple[Dict[str, Any], Optional[SlcFit]]:
    """The write cache the probe's cache stage showed (:mod:`.slc`): the twin with it, and the fit's record."""
    _, budget = capacity_of(doc)
    b = base_of(doc["features"])
    # the program time the clean stage's writes saw: on a modern twin its SLC mode's (they land in its cache)
    key = b.program_key.split(".", 1)[1]
    tprog = int(drive_doc.get("nand", {}).get(key) or library_values("part", b.part)["nand"][key])
    drive_doc, slc_prov, slc_fit, figs = choose_slc_cache(drive_doc, doc["features"], seed, budget, tprog)
    prov.update(slc_prov)
    # the cache stage's figures are those of the twin with its cache; the clean and fill stages' stay those of the
    # twin before it (its clean-stage writes land in the cache at the clean stage's program time)
    twin_figs.update(figs)
    if stream is not None and slc_fit is not None:
        c = drive_doc["slc_cache"]
        r = next(x for x in slc_fit["rounds"] if x.get("kept"))
        stream.write(f"ssdlab fit: SLC cache {c['static_percent_of_capacity']:g}% static (assumed) + "
                     f"{c['dynamic_percent_of_capacity']:g}% dynamic of the capacity, native tPROG "
                     f"{drive_doc['nand']['tprog_ns'] / 1e6:.3f} ms: cache {float(r['slc_cache_bytes'] or 0) / 1e9:,.1f} GB "
                     f"(measured {slc_fit['measured']['slc_cache_bytes'] / 1e9:,.1f}), post-cache "
                     f"{float(r['post_cache_write_bytes_per_s'] or 0) / 1e6:,.0f} MB/s (measured "
                     f"{slc_fit['measured']['post_cache_write_bytes_per_s'] / 1e6:,.0f}), "
                     f"{len(slc_fit['rounds'])} rounds\n")
    return drive_doc, slc_fit


def _sample(target: Target, doc: ProbeDoc, run: Runner, seed: int, trials: int, sampler: str,
            storage: Optional[str], resume: bool, stream: Optional[TextIO], polish_evaluations: int
            ) -> Tuple[Target, Any, Any, Evaluation, List[StructureRecord]]:
    """The scan of structures, the sampler from its best start, the polish, then the structure weighed again at
    the fitted times: the target, the sampler's and the polish's results, the best twin and the structures
    compared."""
    from ...fit.study import fit as run_fit

    # the best of the page size x dies starts becomes the fit's start (and its committed values)
    dies_choices = raw_nand_dies(doc)
    start, scanned = scan_starts(target, doc["features"], run, seed, dies_choices)
    choices = base_of(doc["features"]).channel_choices
    target = _target_for(target, start, choices)
    target.params = [replace(p, value=start[p.key]) for p in target.params]
    if dies_choices:
        # the scan chose among the counts the raw NAND allows: the sampler's steps of one package would leave them
        target.params = [replace(p, low=p.value, high=p.value) if p.key == "nand.packages_per_channel" else p
                         for p in target.params]
    if stream is not None:
        stream.write(f"ssdlab fit: {len(scanned)} starts over page size and dies, objective "
                     f"{scanned[0][1]:.3f} at the features' own -> {min(o for _, o in scanned):.3f}\n")
    result = run_fit(target, start=target.committed(), trials=trials, sampler=sampler, seed=seed, runner=run,
                     storage=storage, resume=resume, stream=stream, evaluate=evaluate_twin)
    # CMA-ES moves the structure with the times; the polish then moves the times alone
    polished = polish(target, result.best, evaluate_twin, run, seed, budget=polish_evaluations, stream=stream)
    best = polished.best
    # the structures the scan compared at its starts' times, compared again at the fitted ones (again from the
    # structure kept: one round may change the layout, the next add parity)
    structures: List[StructureRecord] = []
    # the read-ahead window first: the structures are weighed with the window the fitted times call for
    target, best, window = recheck_window(target, best, run, seed, polish_evaluations, stream, choices)
    if window is not None:
        structures.append(window)
    if base_of(doc["features"]).modern:
        # a firmware behaviour seen on a modern controller (the Elpis); a SATA drive's buffer shows in its bursts
        target, best, ack = recheck_write_ack(target, best, run, seed, polish_evaluations, stream, choices)
        if ack is not None:
            structures.append(ack)
    for _ in range(STRUCTURE_ROUNDS):
        target, best, rec = recheck_structure(target, best, run, seed, dies_choices, polish_evaluations, stream,
                                              choices)
        if rec is None:
            break
        structures.append(rec)
        if not rec.get("kept"):
            break
    return target, result, polished, best, structures


def _behaviours(drive_doc: Dict[str, Any], prov: Provenance, doc: ProbeDoc, run: Runner,
                seed: int, stream: Optional[TextIO]) -> Tuple[Dict[str, Any], Figures]:
    """What the fill stage shows, on the whole probe simulated on the twin: the garbage collection, the recycling
    path, idle-time GC and the buffer the clean drive hid (a modern twin's later: :func:`_modern_buffer`). Returns
    the drive and its probe's figures; ``prov`` gains each choice's provenance."""
    features = doc["features"]
    # the whole probe on the twin: when its garbage collection works (the fill stage), how much idle time
    # cleans, then the buffer the clean drive hid (the flush after the torture)
    cap, budget = capacity_of(doc)
    measured = figures_of(doc)
    drive_doc, twin_figs, gc_prov = choose_gc_mode(drive_doc, features, measured, run, seed, budget)
    prov["ftl.gc_mode"] = gc_prov
    rec = drive_doc.get("ftl", {}).get("recycle_bytes_per_s")
    if rec and "ftl.recycle_bytes_per_s" not in prov:
        prov["ftl.recycle_bytes_per_s"] = {
            "value": rec, "source": "measured",
            "why": f"the sequential write right after the full TRIM ({rec / 1e6:.0f} MB/s): the rate of writes into "
                   "recycled blocks (the garbage collection above)"}
    if stream is not None:
        stream.write(f"ssdlab fit: {gc_prov['value']} garbage collection ({gc_prov['why']})\n")
    if rec:
        drive_doc, twin_figs, path_prov = choose_recycle_path(drive_doc, twin_figs, prov["ftl.recycle_bytes_per_s"],
                                                              features, measured, run, seed, budget)
        prov["ftl.recycle_bytes_per_s"] = path_prov
        if stream is not None and path_prov.get("source") == "fitted":
            stream.write(f"ssdlab fit: recycling path {path_prov['value'] / 1e6:.0f} MB/s (the write after the full "
                         "TRIM's rate is its lower bound)\n")
    # idle-time GC before the buffer: the writes after idle time and the dirty write it moves are in the fill
    # stage the buffer is judged on
    drive_doc, twin_figs, idle_prov = choose_idle_gc(drive_doc, twin_figs, prov.get("ftl.bg_gc_threshold_blocks"),
                                                     features, measured, run, seed, budget)
    if idle_prov:
        prov["ftl.bg_gc_threshold_blocks"] = idle_prov
    if stream is not None and idle_prov is not None and idle_prov.get("source") == "fitted":
        stream.write(f"ssdlab fit: idle-time GC restores {idle_prov['value']} blocks per die\n")
    if base_of(features).modern:
        # judged on the twin with its cache (_modern_buffer): before the cache fit a modern twin's fill stage is the
        # generic cache's, and a buffer's effect drowns in that error
        return drive_doc, twin_figs
    drive_doc, twin_figs, buffer_prov = choose_dirty_buffer(drive_doc, twin_figs, prov["controller.write_buffer_bytes"],
                                                            features, measured, run, seed, budget,
                                                            gc_mode=str(gc_prov["value"]))
    prov["controller.write_buffer_bytes"] = buffer_prov
    if stream is not None and buffer_prov["source"] != "assumed":
        stream.write(f"ssdlab fit: write buffer {buffer_prov['value']:,} B from the flush after the torture\n")
    return drive_doc, twin_figs


def _modern_buffer(drive_doc: Dict[str, Any], prov: Provenance, doc: ProbeDoc, figs: Figures, run: Runner,
                   seed: int, stream: Optional[TextIO]) -> Tuple[Dict[str, Any], Figures, bool]:
    """A modern twin's write buffer from the flush after the torture (:func:`choose_dirty_buffer`), on the twin
    with its cache, dies and static share fitted: ``figs`` its whole probe where a step before simulated it (else
    simulated here). Returns the drive, its whole probe's figures and whether the buffer moved."""
    key = "controller.write_buffer_bytes"
    _, budget = capacity_of(doc)
    measured = figures_of(doc)
    figs0 = figs or _simulate_docs([drive_doc], run, seed, budget, measured)[0]
    new_doc, new_figs, buffer_prov = choose_dirty_buffer(drive_doc, figs0, prov[key], doc["features"], measured,
                                                         run, seed, budget, gc_mode=str(prov["ftl.gc_mode"]["value"]))
    prov[key] = buffer_prov
    if new_doc is drive_doc:
        return drive_doc, figs0, False
    if stream is not None:
        stream.write(f"ssdlab fit: write buffer {buffer_prov['value']:,} B from the flush after the torture, on the "
                     "twin with its cache\n")
    return new_doc, new_figs, True


def _write_twin(doc: ProbeDoc, drive_doc: Dict[str, Any], prov: Provenance,
                twin_figs: Figures, out: Path, probe_dir: Path, power_log: Optional[Path],
                source_id: str, tid: str, command: str, seed: int, sampler: str, result: Any, polished: Any,
                best: Evaluation, structures: List[StructureRecord], slc_fit: Optional[SlcFit] = None,
                full_fit: Optional[Dict[str, Any]] = None) -> TwinRecord:
    """The power model, then the drive file and its provenance document (returned)."""
    from ...results import ssdlab_version

    cap, _ = capacity_of(doc)
    measured = figures_of(doc)
    jobs: List[ProbeJobError] = []
    for name, f in measured.items():
        t = twin_figs.get(name)
        if not f.get("mbps") or t is None:
            continue
        jobs.append({"job": name, "measured_mbps": f["mbps"], "twin_mbps": t["mbps"], "error": t["mbps"] / f["mbps"] - 1})
    twin_features = extract(twin_figs, cap, cache=slc_fit is not None)
    reliability = assess(best.objective, jobs, doc["features"], twin_features)
    power_fit: Optional[PowerFit] = None
    idle_w = (doc.get("power") or {}).get("idle_w")
    if idle_w is not None:
        # the probe read the drive's power (the simulator's model, or a meter's log): the twin's power model from it
        base_power = Drive.load(drive_doc).config["power"]
        pvals, pprov, power_fit = fit_power(measured, float(idle_w), twin_figs, base_power)
        drive_doc["power"] = pvals
        prov.update(pprov)
    else:
        prov["power"] = {"value": "profile", "source": "assumed",
                         "why": f"the probe read no power (a meter log: ssdlab fit --power-log): "
                                f"{drive_doc['drive']['controller']}'s"}
    header = [f"Digital twin of {source_id}, fitted by ssdlab {ssdlab_version()} to the probe in {probe_dir}",
              f"({command or 'ssdlab.twin.fit_twin'}): {result.trials} trials ({sampler}, seed {seed}) and "
              f"{polished.evaluations} of pattern search; objective "
              f"(RMS of probe-job rate error / 10%) {result.committed.objective:.3f} at the start, {best.objective:.3f} fitted.",
              f"Based on controller profile {drive_doc['drive']['controller']} and NAND part "
              f"{drive_doc['drive']['nand_part']} ({base_of(doc['features']).why}); every value set here says",
              "whether it was measured by the probe, fitted to it, or assumed. Provenance: the .json beside this file."]
    header += [f"UNRELIABLE TWIN: {p}" for p in reliability["problems"]]
    left_out = stages_left_out(doc)
    header += [f"The probe left out its {stage} stage (--stages): what it shows ({'; '.join(shows)}) was not "
               "measured, and the values it sets are assumed" for stage, shows in left_out.items()]
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text(out, _toml_text(drive_doc, prov, header))
    Drive.load(str(out))  # the file loads
    record: TwinRecord = {"schema": "ssdlab.twin", "schema_version": 1, "twin_id": tid, "source": source_id,
              "manifest": {"seed": seed, "version": ssdlab_version(), "command": command, "probe": str(probe_dir),
                           "power_log": None if power_log is None else str(power_log),
                           "drive_hash": Drive.load(str(out)).hash},
              "fit": {"trials": result.trials, "sampler": sampler, "objective_start": result.committed.objective,
                      "objective_sampler": result.best.objective, "polish": polished.summary(),
                      "structure_recheck": structures, "objective": best.objective, "worst": best.worst,
                      "interrupted": result.interrupted or polished.interrupted,
                      "rows": best.row_dicts()},
              "reliability": reliability, "slc_cache_fit": slc_fit, "full_drive_fit": full_fit, "values": prov, "probe_jobs": jobs,
              "twin_features": twin_features, "power_fit": power_fit}
    if left_out:
        record["stages_left_out"] = left_out
    write_text(out.with_suffix(".json"), json.dumps(record, indent=1) + "\n")
    return record


def stages_left_out(doc: ProbeDoc) -> Dict[str, List[str]]:
    """The stages a probe of chosen stages left out, each with the features its jobs reveal (empty: every stage ran,
    or the probe chose none). The full stage counts only where it was chosen out: without a choice it runs where
    the stages before call for it."""
    chosen = doc.get("stages")
    if chosen is None:
        return {}
    cap, budget = capacity_of(doc)
    out: Dict[str, List[str]] = {}
    for j in probe_jobs(cap, budget):
        if j.stage not in chosen and j.feature not in out.setdefault(j.stage, []):
            out[j.stage].append(j.feature)
    return out
