"""Run an fio job file on a simulated drive and write what fio would:
``--output-format=json`` and the per-interval logs (``write_iops_log``,
``write_bw_log``), so that fio tooling and :mod:`ssdlab.fio.parse` read them.

How fio's semantics map onto the engine (one closed-loop job per call):

- Jobs run in file order. Jobs not separated by ``stonewall`` run at the same
  time in fio; the simulator runs one queue at a time, so such a group is an
  error unless its jobs are *identical* (same options but ``name`` and
  ``description``; ``numjobs`` clones are identical by definition), random
  (``randread``, ``randwrite``, ``randrw``, ``randtrim``) and reported with
  N identical random jobs of depth D over one region are one queue of depth
  N*D whose I/Os fall uniformly on the region, which is what the engine runs
  (byte and I/O bounds add up). Sequential clones are N separate streams and
  cannot be merged. With ``group_reporting`` the queue is one entry, as in
  fio; without it fio reports each clone, and each clone's entry gets 1/N of
  the queue's I/Os and bytes (counts split exactly, the remainder to the first
  clones) with the queue's latency distribution: fio's clones would differ by
  noise (a note says so).
- Reporting groups (``groupid``) follow fio: a job with ``stonewall`` or
  ``new_group`` starts a new group when the current one has jobs.
- Bounds follow fio: without ``time_based`` a job does one pass over ``size``
  (or ``io_size`` bytes, times ``loops``; a sequential job runs each loop
  from its offset), stopping earlier at ``runtime`` or
  ``number_ios``; with ``time_based`` it runs for ``runtime``.
- ``ramp_time`` (time-based random jobs only) runs the job for the ramp, then
  the measured phase; only the latter is reported. The queue drains at the
  boundary (microseconds to milliseconds): a sequential stream would restart at
  ``offset``, so a sequential ramp is an error.
- ``startdelay`` is an idle phase before the job; ``end_fsync`` a FLUSH CACHE
  after it.
- ``fsync=N`` (and ``fdatasync=N``, the same on a block device) is the
  engine's: after every N writes the job waits for its I/O in flight, sends a
  FLUSH CACHE and waits until what it wrote is programmed (a partial program
  unit padded), then goes on, as fio's async engines do. Its count and
  latency are the job's ``sync`` section (``total_ios``, ``lat_ns``), as in
  fio's JSON; ``fsync=0`` is no option. Giving both with different periods is
  an error (fio would send two kinds of sync; a block device has one).
- Synchronous engines (``ioengine=psync``, fio's default on Linux, and the
  other sync engines) keep one I/O in flight whatever ``iodepth`` says, as fio
  does; a note says so when ``iodepth`` > 1.
- Random offsets are drawn with replacement, as fio's ``norandommap=1``; fio's
  default random map would touch every block once per pass (a note says so).

The JSON has fio's fields (``fio version`` is ``ssdlab-VERSION``): per job
``jobname``, ``groupid``, ``job options``, ``read``/``write``/``trim`` with
``io_bytes``, ``io_kbytes``, ``bw_bytes``, ``bw`` (KiB/s), ``iops``, ``runtime``
(ms), ``total_ios``, ``slat_ns`` (zeros: the simulated host has no submission
latency), ``clat_ns`` and ``lat_ns`` (min, max, mean, stddev from the engine's
histogram, N, percentiles: fio's list or ``percentile_list``; json+ adds the
histogram's ``bins``) and ``iops_*``/``bw_*`` statistics over the log
intervals (a job shorter than one interval is one sample); per job fio's
``latency_ns/us/ms`` shares, ``iodepth_level`` (the closed loop's fill, then
full), ``iodepth_submit``/``complete`` (one I/O per call), the latency-target
fields (fio's defaults, or what ``latency_target``'s search found) and CPU
keys of 0 (a simulation has no host CPU); plus an ``ssdlab`` object per job
(WAF, GC, SMART, notes) and at the top (manifest, notes). Logs have fio's line format
``msec, value, ddir, bs, offset`` and, as fio, no line for an interval without
I/O of that direction. Merged clones each get a log with 1/N of the group's
I/Os (the sum over clones is exact; fio's clones would differ by noise).

API:
- :func:`plan` ``(jobfile, capacity_bytes) -> tuple[PlannedJob, ...]`` checks
  everything without running;
- :func:`simulate` ``(jobfile, drive=..., seed=1, simulator=None, progress=None) -> SimulatedRun``;
- :func:`write_outputs` ``(run, output, log_dir, output_format) -> list[Path]``
  (``normal``: fio's text report, :mod:`ssdlab.fio.normal`; ``json``; ``json+``);
- :func:`main` ``(argv) -> int``: a standalone form of ``ssdlab fio JOBFILE --drive X
  [--seed N] [--output-format json] [--output F] [--log-dir D] [--parse-only]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from ..errors import SsdlabError, WorkloadError
from ..outputs import write_text
from ..results import PhaseResult
from . import fiojson, steadystate
from .document import ENGINE_FIELD_TO_OPTION, ETIMEDOUT, completion_times, direction_entry, fio_document, job_entries, job_entry, log_texts
from .errors import JobFileError
from .jobfile import JobFile, parse_jobfile
from .plan import (
    MAX_IODEPTH,
    RANDOM_MODES,
    PlannedJob,
    ProgressCallback,
    plan,
    verifies,
)

__all__ = ["PlannedJob", "SimulatedRun", "plan", "simulate", "write_outputs", "output_format_for", "OUTPUT_FORMATS", "main",
           "RANDOM_MODES", "MAX_IODEPTH"]


@dataclass
class SimulatedRun:
    """A finished (or interrupted) simulated run: ``document`` is the fio JSON,
    ``logs`` maps log file names to their text, ``phases`` every phase run
    (ramps, idles and measured phases, in order), ``measured`` the measured
    phase of each planned job that ran."""

    document: Dict[str, Any]
    logs: Dict[str, str]
    phases: List[PhaseResult] = field(default_factory=list)
    measured: List[PhaseResult] = field(default_factory=list)
    interrupted: bool = False

    def to_json(self, output_format: str = "json") -> str:
        """fio's ``json`` (the histogram ``bins`` left out) or ``json+``."""
        doc = self.document if output_format == "json+" else _without_bins(self.document)
        return json.dumps(doc, indent=2) + "\n"

    def render(self, output_format: str = "json") -> str:
        """The run as fio's ``--output-format`` (normal, json, json+) prints it."""
        if output_format == "normal":
            from .normal import render

            return render(_without_bins(self.document))
        return self.to_json(output_format)


def _without_bins(doc: Dict[str, Any]) -> Dict[str, Any]:
    jobs = []
    for j in doc.get("jobs", []):
        j = dict(j)
        for d in ("read", "write", "trim"):
            if d in j and "bins" in j[d].get("clat_ns", {}):
                j[d] = dict(j[d], clat_ns={k: v for k, v in j[d]["clat_ns"].items() if k != "bins"})
        jobs.append(j)
    return dict(doc, jobs=jobs)


def _verify_phase(sim: Any, p: PlannedJob, written: Optional[PhaseResult], progress: Optional[ProgressCallback]) -> PhaseResult:
    """fio's verify phase: the job's region read back in order, in the job's
    block size, as much as it wrote (all of it for verify_only). In checking
    mode the engine compares every read with what was written last; a
    mismatch is an IntegrityError naming the LBA."""
    e = p.engine
    bs = int(e.get("bs", 0)) or 4096
    if "bssplit" in e or "bsrange" in e:
        bs = 4096
    size = int(e["size"])
    nbytes = size if written is None else min(size, int(written.data["write"]["io_bytes"]) or size)
    nbytes = max(nbytes // bs * bs, bs)
    job = {"name": f"{p.name} (verify)", "rw": "read", "bs": bs, "offset": int(e["offset"]), "size": size,
           "io_size": nbytes, "iodepth": int(e["iodepth"]), "time_based": 0}
    r: PhaseResult = sim.run(job, progress=progress)
    return r


def _per_second(r: PhaseResult) -> Tuple[List[int], List[int]]:
    """A job's I/Os and bytes in each whole second (its 1 s intervals)."""
    s = r.series
    mask = completion_times(r)
    if not len(mask):
        return [], []
    ios = (s["read_ios"] + s["write_ios"] + s["trim_ios"])[mask]
    nbytes = (s["read_bytes"] + s["write_bytes"])[mask]
    return [int(x) for x in ios], [int(x) for x in nbytes]


def _summed(rs: Sequence[PhaseResult]) -> PhaseResult:
    """The first result with the group's per-second I/Os and bytes summed
    (fio judges a reporting group's steady state on its sum)."""
    if len(rs) == 1:
        return rs[0]
    first = rs[0]
    series = dict(first.series)
    n = min(len(r.series["time_ns"]) for r in rs)
    for k in ("read_ios", "write_ios", "trim_ios", "read_bytes", "write_bytes"):
        series[k] = np.sum([r.series[k][:n] for r in rs], axis=0)
    series["time_ns"] = first.series["time_ns"][:n]
    return PhaseResult(dict(first.data), series)


BatchRunner = Callable[[Any, Sequence[PlannedJob]], List[PhaseResult]]


def _run_steady(sim: Any, batch: Sequence[PlannedJob], run_batch: BatchRunner) -> Tuple[Any, List[PhaseResult]]:
    """Run a batch; with fio's ``ss``, run it from a copy of the drive and,
    once the window meets the criterion at second T, run it again from the
    same state for exactly T seconds (the simulation repeats itself), so the
    job stops where fio's would. Returns the simulator to go on with."""
    steady = batch[0].steady
    if steady is None:
        return sim, run_batch(sim, batch)
    base = sim.clone()
    rs = run_batch(sim, batch)
    c, dur_s, ramp_s = steady
    iops, bw = _per_second(_summed(rs))
    d = steadystate.detect(c, iops, bw, dur_s, ramp_s)
    if d.attained_s is None or d.attained_s * 10**9 >= min(int(r.data["duration_ns"]) for r in rs):
        return sim, rs
    cut = [dataclasses.replace(p, engine=dict(p.engine, runtime=f"{d.attained_s}s")) for p in batch]
    return base, run_batch(base, cut)


def _add_steady(p: PlannedJob, r: PhaseResult, entries: List[Dict[str, Any]]) -> None:
    if p.steady is None:
        return
    c, dur_s, ramp_s = p.steady
    iops, bw = _per_second(r)
    d = steadystate.detect(c, iops, bw, dur_s, ramp_s)
    section = steadystate.json_section(c, d, dur_s)
    for e in entries:
        e["steadystate"] = section


def _batches(planned: Sequence[PlannedJob]) -> List[List[PlannedJob]]:
    """Planned jobs in the order they run: alone, or side by side (the same
    concurrency group)."""
    out: List[List[PlannedJob]] = []
    for p in planned:
        if out and p.concurrent is not None and out[-1][0].concurrent == p.concurrent:
            out[-1].append(p)
        else:
            out.append([p])
    return out


def _group_entries(batch: Sequence[PlannedJob], rs: Sequence[PhaseResult]) -> List[Dict[str, Any]]:
    """The JSON entries of jobs that ran side by side: each job's own, or,
    with ``group_reporting``, one per reporting group (fio's merge)."""
    out: List[Dict[str, Any]] = []
    i = 0
    while i < len(batch):
        p = batch[i]
        same = [k for k in range(i, len(batch)) if batch[k].groupid == p.groupid]
        if p.jobs[0].flag("group_reporting") and len(same) > 1 and same == list(range(i, same[-1] + 1)):
            out.append(_merged_entry([batch[k] for k in same], [rs[k] for k in same]))
            i = same[-1] + 1
            continue
        out.extend(job_entries(p, rs[i], None, 0))
        i += 1
    return out


def _merged_entry(ps: Sequence[PlannedJob], rs: Sequence[PhaseResult]) -> Dict[str, Any]:
    """fio's ``group_reporting`` of different jobs: I/O and bytes summed over
    the group's longest runtime, latency from the merged histograms."""
    entry = job_entry(ps[0], rs[0], None, 0)
    dur_ns = max(int(r.data["duration_ns"]) for r in rs)
    for d in ("read", "write", "trim"):
        xs = [direction_entry(r, d, p) for p, r in zip(ps, rs)]
        n = sum(int(x["total_ios"]) for x in xs)
        if not n:
            continue
        nbytes = sum(int(x["io_bytes"]) for x in xs)
        hist = _merge_hist([r.latency_hist.get(d) for r in rs])
        lo = min(int(x["clat_ns"]["min"]) for x in xs if x["total_ios"])
        hi = max(int(x["clat_ns"]["max"]) for x in xs)
        mean = sum(float(x["clat_ns"]["mean"]) * int(x["total_ios"]) for x in xs) / n
        pts = ps[0].percentile_list or tuple(float(k) for k in xs[0]["clat_ns"].get("percentile", {})) or ()
        c: Dict[str, Any] = {"min": lo, "max": hi, "mean": mean, "stddev": fiojson.stddev_ns(hist), "N": n}
        if ps[0].clat_percentiles:
            c["percentile"] = fiojson.percentiles(hist, pts, lo, hi)
        c["bins"] = fiojson.jsonplus_bins(hist)
        x = dict(xs[0])
        secs = dur_ns / 1e9
        x.update({"io_bytes": nbytes, "io_kbytes": nbytes // 1024, "total_ios": n, "bw_bytes": int(round(nbytes / secs)),
                  "bw": int(nbytes / secs // 1024), "iops": n / secs, "runtime": int(round(dur_ns / 1e6)),
                  "clat_ns": c, "lat_ns": {k: v for k, v in c.items() if k not in ("bins", "percentile")},
                  "slat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": n}})
        for k in ("bw_min", "bw_max", "bw_mean", "iops_min", "iops_max", "iops_mean"):
            x[k] = sum(y[k] for y in xs)
        entry[d] = x
    entry["ssdlab"] = dict(entry["ssdlab"], clones=sum(p.clones for p in ps), merged_jobs=[j.name for p in ps for j in p.jobs])
    return entry


def _merge_hist(hs: Sequence[Optional[fiojson.Hist]]) -> Optional[fiojson.Hist]:
    counts: Dict[Tuple[int, int], int] = {}
    for h in hs:
        if h is None:
            continue
        for lo, w, c in zip(h[0], h[1], h[2]):
            counts[(int(lo), int(w))] = counts.get((int(lo), int(w)), 0) + int(c)
    if not counts:
        return None
    keys = sorted(counts)
    return (np.array([k[0] for k in keys], dtype=np.uint64), np.array([k[1] for k in keys], dtype=np.uint64),
            np.array([counts[k] for k in keys], dtype=np.uint64))


def _check_engine(sim: Any, p: PlannedJob) -> None:
    """Let the engine validate the job now, mapping its field to our line."""
    try:
        sim.parse_job(dict(p.engine))
    except WorkloadError as e:
        fld = str(getattr(e, "field", "") or "")
        opt = ENGINE_FIELD_TO_OPTION.get(fld, fld)
        job = p.jobs[0]
        f, ln = job.where(opt)
        msg = str(e)
        raise JobFileError(f, ln, opt or "rw", f"job '{job.name}': {msg}") from None


def _run_notes(jobfile: JobFile, planned: Sequence[PlannedJob], verifying: bool, check_mode: bool) -> List[str]:
    """The job file's notes, checking mode's when a job verifies, and each job's own (once)."""
    notes: List[str] = list(jobfile.notes)
    if verifying:
        notes.append("verify: the simulator runs in checking mode (every read and, after every phase, the whole FTL compared "
                      "with a trivial model of what was written); a verifying job then reads its region back, reported as "
                      "its reads, as fio's verify phase" + ("" if check_mode else "; the simulator passed in is not in "
                                                         "checking mode, so only the read-back runs"))
    for p in planned:
        for n in p.notes:
            line = f"job '{p.name}': {n}"
            if line not in notes:
                notes.append(line)
    return notes


def _delay_and_ramp(sim: Any, p: PlannedJob, run: SimulatedRun, progress: Optional[ProgressCallback]
                    ) -> Optional[PhaseResult]:
    """A job's start delay (idle) and its ramp (a phase of its own, with another seed), before it is measured."""
    if p.startdelay_ns:
        run.phases.append(sim.idle(duration_ns=p.startdelay_ns))
    ramp: Optional[PhaseResult] = None
    if p.ramp_ns:
        rj = dict(p.engine, runtime=f"{p.ramp_ns}ns", time_based=1, name=f"{p.name} (ramp)")
        if "randseed" in rj:
            rj["randseed"] = int(rj["randseed"]) ^ 0x5EED
        ramp = sim.run(rj, progress=progress)
        run.phases.append(ramp)
    return ramp


def _cut_entries(p: PlannedJob, partial: PhaseResult) -> List[Dict[str, Any]]:
    """The entries of the job a Ctrl-C cut short, marked interrupted."""
    cut = job_entries(p, partial, None, p.startdelay_ns)
    for c in cut:
        c["ssdlab"]["interrupted"] = True
    return cut


def simulate(
    jobfile: JobFile,
    drive: Any = "generic-mlc-120",
    *,
    seed: int = 1,
    simulator: Any = None,
    progress: Optional[ProgressCallback] = None,
) -> SimulatedRun:
    """Run every job of ``jobfile`` on a simulated drive (a new
    ``ssdlab.Simulator(drive, seed=seed)``, or ``simulator`` as it is, e.g.
    preconditioned). Everything is checked before the first phase runs.
    Same job file, drive and seed -> the same document but its timestamps.

    Ctrl-C: the KeyboardInterrupt carries ``.run``, a SimulatedRun with the
    finished jobs and the interrupted one (marked in ``ssdlab.interrupted``)."""
    from ..sim import Simulator

    verifying = any(verifies(j) for j in jobfile.jobs)
    sim = simulator if simulator is not None else Simulator(drive, seed=seed, check=verifying)
    planned = plan(jobfile, int(sim.capacity_bytes), queue_per_job=sim.drive.is_nvme)
    for p in planned:
        _check_engine(sim, p)
    run = SimulatedRun(document={}, logs={})
    entries: List[Dict[str, Any]] = []
    notes = _run_notes(jobfile, planned, verifying, bool(sim.check_mode))
    done = 0  # planned jobs finished
    try:
        for batch in _batches(planned):
            if len(batch) > 1 or batch[0].concurrent is not None:
                sim, rs = _run_steady(sim, batch, lambda s, b: s.run_jobs([dict(p.engine) for p in b], progress=progress))
                run.phases.extend(rs)
                run.measured.extend(rs)
                got = _group_entries(batch, rs)
                if batch[0].steady is not None:
                    _add_steady(batch[0], _summed(rs), got)
                entries.extend(got)
                for p, r in zip(batch, rs):
                    run.logs.update(log_texts(p, r))
                if any(p.end_fsync for p in batch):
                    sim.flush()
                done += len(batch)
                continue
            p = batch[0]
            ramp = _delay_and_ramp(sim, p, run, progress)
            if p.verify and p.jobs[0].flag("verify_only"):
                r = _verify_phase(sim, p, None, progress)
            else:
                sim, (r,) = _run_steady(sim, batch, lambda s, b: [s.run(dict(b[0].engine), progress=progress)])
            run.phases.append(r)
            run.measured.append(r)
            if p.end_fsync:
                sim.flush()
            got = job_entries(p, r, ramp, p.startdelay_ns)
            _add_steady(p, r, got)
            if p.verify and not p.jobs[0].flag("verify_only"):
                v = _verify_phase(sim, p, r, progress)
                run.phases.append(v)
                for e in got:
                    e["read"] = direction_entry(v, "read", p)
                    e["ssdlab"]["verify"] = {"read_bytes": int(v.data["read"]["io_bytes"]), "checking_mode": bool(sim.check_mode),
                                             "errors": 0}
            entries.extend(got)
            run.logs.update(log_texts(p, r))
            done += 1
    except KeyboardInterrupt as e:
        partial = getattr(e, "result", None)
        if isinstance(partial, PhaseResult) and partial.kind == "workload" and done < len(planned):
            entries.extend(_cut_entries(planned[done], partial))
        run.interrupted = True
        run.document = fio_document(jobfile, entries, sim, notes, True)
        e.run = run  # type: ignore[attr-defined]
        raise
    for entry in entries:
        if entry.get("error") == ETIMEDOUT:
            notes.append(f"job '{entry['jobname']}': an I/O missed latency_target at depth 1: fio fails the job (ETIMEDOUT, "
                         "error 110) and so does the simulator")
    run.document = fio_document(jobfile, entries, sim, notes, False)
    return run


#: fio's ``--output-format`` values ssdlab writes.
OUTPUT_FORMATS = ("normal", "json", "json+")


def output_format_for(given: Optional[str], output: Optional[Union[str, "os.PathLike[str]"]]) -> str:
    """fio's default is ``normal``; an ``--output`` named ``*.json`` without a
    format given gets JSON (what such a name promises)."""
    if given:
        return given
    return "json" if output is not None and os.fspath(output).endswith(".json") else "normal"


def write_outputs(run: SimulatedRun, output: Optional[Union[str, "os.PathLike[str]"]], log_dir: Union[str, "os.PathLike[str]"] = ".",
                  output_format: str = "json") -> List[Path]:
    """Write the report (``output_format``: normal, json, json+; to ``output``,
    stdout when None) and the logs (under ``log_dir``, names as fio makes
    them). Returns the files written."""
    written: List[Path] = []
    text = run.render(output_format)
    if output is None:
        sys.stdout.write(text)
    else:
        p = Path(output)
        write_text(p, text)
        written.append(p)
    base = Path(log_dir)
    for name, text in run.logs.items():
        lp = base / name
        write_text(lp, text)
        written.append(lp)
    return written


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``ssdlab fio JOBFILE --drive X``: 0 on success, 2 with one error line on
    bad input, 130 on Ctrl-C (the finished jobs are still written)."""
    ap = argparse.ArgumentParser(
        prog="ssdlab fio",
        description="Run an fio job file on a simulated drive; write fio's JSON (--output-format=json) and its logs.",
    )
    ap.add_argument("jobfile")
    ap.add_argument("--drive", default="generic-mlc-120", help="preset id or drive file (default generic-mlc-120)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--output-format", choices=OUTPUT_FORMATS, help="normal (fio's default; json for an --output named *.json), json, json+")
    ap.add_argument("--output", help="write the JSON here (default stdout)")
    ap.add_argument("--log-dir", default=".", help="where the logs go (fio writes them to the working directory)")
    ap.add_argument("--parse-only", action="store_true", help="check the job file against the drive without running it")
    args = ap.parse_args(argv)
    fmt = output_format_for(args.output_format, args.output)
    try:
        jf = parse_jobfile(args.jobfile)
        if args.parse_only:
            from ..drive import Drive

            d = Drive.load(args.drive)
            for p in plan(jf, int(d.capacity_bytes), queue_per_job=d.is_nvme):
                sys.stdout.write(f"{p.name}: group {p.groupid}, engine job {json.dumps(p.engine)}\n")
                for n in p.notes:
                    sys.stdout.write(f"  note: {n}\n")
            return 0
        run = simulate(jf, args.drive, seed=args.seed)
    except KeyboardInterrupt as e:
        partial = getattr(e, "run", None)
        if isinstance(partial, SimulatedRun):
            write_outputs(partial, args.output, args.log_dir, fmt)
        sys.stderr.write("ssdlab: interrupted: the finished jobs were written\n")
        return 130
    except SsdlabError as e:
        sys.stderr.write(f"ssdlab: error: {e}\n")
        return 2
    for n in run.document["ssdlab"]["notes"]:
        sys.stderr.write(f"ssdlab: note: {n}\n")
    try:
        write_outputs(run, args.output, args.log_dir, fmt)
    except (OSError, SsdlabError) as e:
        sys.stderr.write(f"ssdlab: error: cannot write the results: {e}\n")
        return 2
    return 0
