"""Running the probe: on a simulated drive (the job file through the
simulator's fio), or through fio on a real block device or a test file (one
fio run per job, so a failure or Ctrl-C keeps what finished), and the figures
of each job read from fio's JSON."""

from __future__ import annotations

import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, List, Mapping, Optional, Sequence, TextIO, Tuple, cast

from ...outputs import write_text
from ..records import Figures, JobFigures, PhasePower, ProbeJobRecord, ProbePower, ProbeTarget
from .estimate import Rates, assumed_rates, estimate, estimate_text, measured_seconds, rates_from
from .jobs import (
    CACHE,
    CACHE_AFTER_IDLE,
    CACHE_FILL,
    CLEAN,
    FILL,
    FILL_JOB,
    FULL,
    FULL_RANDWRITE,
    HOST,
    STAGES,
    UNWRITTEN_READ,
    UNWRITTEN_SEQREAD,
    MiB,
    ProbeJob,
    cache_span_note,
    default_stages,
    full_stage_note,
    host_buffer_job,
    jobfile_text,
    probe_jobs,
)
from .names import GC_FALL_SHARE, STEP_FALL_SHARE
from .segments import merge_segments, rate_before_step, segment_job, segments_done, total_bytes

__all__ = ["ProbeRun", "job_figures", "full_stage_wanted", "phase_power", "run_probe_simulated", "run_probe_device", "IDLE_POWER_S"]

#: Seconds the probe leaves the target idle, before its first job that moves data, to read its idle power: the
#: simulator's power model on a simulated drive, a power meter's log (``ssdlab fit --power-log``) on a real one.
IDLE_POWER_S = 10.0
#: Seconds a real target rests after its TRIM before that idle window (the erases a TRIM may start).
IDLE_SETTLE_S = 5.0


def job_figures(job: Any, direction: str) -> JobFigures:
    """The figures of one parsed fio job (ssdlab.fio.parse.JobResult) in the
    measured direction: IOPS, MB/s, mean, median and p99 completion latency
    (us), bytes, runtime (s), the FLUSH CACHE count and mean, median and p99
    latency (us) of a job with fsync (``syncs``, ``sync_mean_us``,
    ``sync_p50_us``, ``sync_p99_us``), and the per-interval IOPS when logged."""
    d = job.read if direction == "rw" else getattr(job, direction)
    lat = d.clat
    both = (job.read, job.write) if direction == "rw" else (d,)
    out: JobFigures = {
        "iops": sum(x.iops for x in both), "mbps": sum(x.mbps for x in both),
        "io_bytes": sum(x.io_bytes for x in both), "runtime_s": max(x.runtime_ms for x in both) / 1e3,
        "clat_mean_us": None if lat is None or not lat.count else lat.mean_ns / 1e3,
        "clat_p50_us": None if lat is None or not lat.count else lat.percentile_us(50.0),
        "clat_p99_us": None if lat is None or not lat.count else lat.percentile_us(99.0),
    }
    sync = getattr(job, "sync", None)
    if sync is not None and sync.count:
        out["syncs"] = sync.count
        out["sync_mean_us"] = sync.mean_ns / 1e3
        out["sync_p50_us"] = sync.percentile_us(50.0)
        out["sync_p99_us"] = sync.percentile_us(99.0)
    if job.iops_series is not None:
        out["interval_ms"] = job.iops_series.interval_ms
        out["iops_series"] = [float(x) for x in (job.iops_series.total if direction == "rw" else
                                                 getattr(job.iops_series, direction))]
    return out


@dataclass
class ProbeRun:
    """What a probe measured: the target, the jobs and their figures (by job
    name), notes, wall time, and whether it was interrupted."""

    target: ProbeTarget
    jobs: List[ProbeJob]
    figures: Figures = field(default_factory=dict)
    notes: List[str] = field(default_factory=list)
    wall_time_s: float = 0.0
    simulated_time_s: Optional[float] = None
    interrupted: bool = False
    #: The stages the probe chose itself where it left some out (a real target's default: :func:`default_stages`).
    stages: Optional[List[str]] = None
    #: The power readings: ``source`` and ``idle_w`` (simulated), or the idle window's wall clock
    #: (``idle_window_s``, a real target) until a meter log is applied (:func:`apply_power_log`).
    power: ProbePower = field(default_factory=lambda: ProbePower())

    def jobs_doc(self) -> List[ProbeJobRecord]:
        out: List[ProbeJobRecord] = []
        for j in self.jobs:
            d = asdict(j)
            d["figures"] = self.figures.get(j.name)
            out.append(cast(ProbeJobRecord, d))
        return out


def _read_run(json_path: Path, log_dir: Path, jobfile: str, jobs: Sequence[ProbeJob]) -> Figures:
    from ...fio.jobfile import parse_jobfile_text
    from ...fio.parse import read_fio_output

    result = read_fio_output(json_path, log_dir, parse_jobfile_text(jobfile, "probe.fio"))
    names = {j.name for j in result.jobs}
    return {j.name: job_figures(result.job(j.name), j.direction) for j in jobs if j.name in names}


def _host_rate(json_path: Path, job: ProbeJob) -> Figures:
    """The host's buffer generation job read straight from fio's JSON (the null engine has no device for the
    job file's parser, which checks what a drive can run)."""
    import json

    try:
        w = json.loads(json_path.read_text(encoding="utf-8"))["jobs"][0]["write"]
        return {job.name: {"mbps": float(w["bw_bytes"]) / 1e6, "io_bytes": int(w["io_bytes"]),
                           "runtime_s": float(w["runtime"]) / 1e3}}
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return {}


def phase_power(data: Mapping[str, Any]) -> PhasePower:
    """A simulated phase's average watts (``avg_w``), its duration and busy
    time (``power_s``, ``power_busy_s``) and the NAND's share of its energy
    (``nand_energy_j``)."""
    p = data["ssdlab"]["power"]
    return {"avg_w": float(p["avg_w"]), "power_s": int(data["duration_ns"]) / 1e9,
            "power_busy_s": int(data.get("busy_time_ns", 0)) / 1e9, "nand_energy_j": float(p["nand_energy_j"])}


def _split_at_full(jobs: Sequence[ProbeJob]) -> Tuple[List[ProbeJob], List[ProbeJob], List[ProbeJob]]:
    """The jobs before the full stage, its jobs, and those after it; where it has none, the clean stage and the
    fill, then the rest."""
    at = [i for i, j in enumerate(jobs) if j.stage == FULL]
    if not at:
        k = next((i + 1 for i, j in enumerate(jobs) if j.name == FILL_JOB),
                 next((i for i, j in enumerate(jobs) if j.stage != CLEAN), len(jobs)))
        return list(jobs[:k]), [], list(jobs[k:])
    return list(jobs[:at[0]]), list(jobs[at[0]:at[-1] + 1]), list(jobs[at[-1] + 1:])


def _segments(run: ProbeRun, job: ProbeJob, seed: int, stream: Optional[TextIO],
              run_segment: Callable[[ProbeJob, int], bool], reference: Optional[float] = None,
              share: float = STEP_FALL_SHARE) -> Tuple[bool, Optional[float]]:
    """``job`` in segments (:mod:`.segments`), each run by ``run_segment`` (its figures into ``run.figures``; False
    where Ctrl-C stopped it), until the rate stepped down (below ``share`` of the rate before, or of ``reference``
    where given) and the writes went on
    a bounded time past it, or they wrote the job's size; then their figures as ``job``'s. Returns whether to go
    on (False where stopped) and the rate before the step (None: no step)."""
    total = total_bytes(job)
    parts: List[JobFigures] = []
    rates: List[float] = []
    going, why = True, f"they wrote their whole {total / 1e9:,.1f} GB without a step down"
    done_bytes = 0
    while going and done_bytes < total:
        seg = segment_job(job, len(parts), seed, done_bytes, rates[-1] if rates else None)
        going = run_segment(seg, len(parts))
        f = run.figures.pop(seg.name, None)
        if f is None or not f.get("runtime_s"):
            break
        parts.append(f)
        rates.append(float(f["io_bytes"]) / float(f["runtime_s"]))
        done_bytes += int(f.get("io_bytes") or 0)
        done = segments_done(rates, [float(p["runtime_s"]) for p in parts], reference, share)
        if done is not None:
            why = done
            break
    if not parts:
        return going, None
    run.figures[job.name] = merge_segments(parts)
    note = f"{job.name}: {len(parts)} segments, {run.figures[job.name]['io_bytes'] / 1e9:,.1f} GB: {why}"
    run.notes.append(note)
    if stream is not None:
        stream.write(f"ssdlab probe: {note}\n")
        stream.flush()
    return going, rate_before_step(rates, share)


def _cache_after(jobs: Sequence[ProbeJob]) -> List[ProbeJob]:
    """The jobs after the cache fill in ``jobs``."""
    at = next((i for i, j in enumerate(jobs) if j.name == CACHE_FILL), None)
    return [] if at is None else list(jobs[at + 1:])


@dataclass
class _Backend:
    """How one kind of target runs the probe's jobs; :func:`_run_stages` decides their order."""

    #: Runs ``jobs`` as one part named ``name`` (their figures into the run); False where Ctrl-C stopped it.
    part: Callable[[Sequence[ProbeJob], str], bool]
    #: Runs ``seg``, the ``n``-th segment of ``job``, as a part of its own; False where Ctrl-C stopped it.
    segment: Callable[[ProbeJob, ProbeJob, int], bool]
    #: The target's job list again: with the full stage or not, and for the bytes the cache fill wrote.
    jobs: Callable[[bool, Optional[int]], List[ProbeJob]]
    #: Whether the estimates said between stages go into the run's notes as well.
    note_estimates: bool = False


def _run_stages(run: ProbeRun, jobs: Sequence[ProbeJob], cap: int, budget: float, stages: Sequence[str], seed: int,
                stream: Optional[TextIO], backend: _Backend) -> Tuple[bool, bool]:
    """The probe's stages in their order, on any target: the clean stage and the fill; the full drive's stage right
    after the fill where they show a modern drive (:func:`full_stage_wanted`; otherwise the rest of the fill stage is
    the one for a drive without it), its random writes in segments; then the rest of the fill stage, the cache and
    the queue stages, on a modern drive with the cache fill and the write after idle time in segments that end past
    their step, and the jobs after the cache fill made for the bytes it wrote. ``run.jobs`` is the plan, rebuilt
    where a choice changes it. Returns whether it went on to the end (False where stopped) and whether the drive
    counted as modern."""
    head, late, rest = _split_at_full(jobs)
    run.jobs = head + late + rest

    def say_estimate(js: Sequence[ProbeJob], what: str, **kw: Any) -> None:
        text = _say_estimate(js, cap, rates_from(run.figures), stream, what=what, **kw)
        if backend.note_estimates:
            run.notes.append(text)

    going = backend.part(head, "probe")
    wanted = full_stage_wanted(run.figures, cap, stages) if head else True
    if going and head and not late and rest:
        say_estimate(rest, "the rest of the probe", stages=stages)
    if going and late:
        if not wanted:
            ran = {j.name for j in head}
            rest = [j for j in backend.jobs(False, None) if j.stage != FULL and j.name not in ran]
            run.jobs = head + rest
            if stream is not None:
                stream.write("ssdlab probe: no NVMe link and no write cache: the full drive's stage is left out (the "
                             "torture shows the spare area)\n")
        else:
            _say_full_stage(run, cap, budget, stream, stages=stages)
            say_estimate(late, "the full-drive stage")
            flat = [j for j in late if j.name != FULL_RANDWRITE]
            going = backend.part(flat, "probe-full")
            if going and len(flat) < len(late):
                torture = next(j for j in late if j.name == FULL_RANDWRITE)
                going, _ = _segments(run, torture, seed, stream, lambda seg, i: backend.segment(torture, seg, i),
                                     share=GC_FALL_SHARE)
    return going and _run_rest(run, rest, wanted, seed, stream, backend), wanted


def _run_rest(run: ProbeRun, rest: Sequence[ProbeJob], segmented: bool, seed: int, stream: Optional[TextIO],
              backend: _Backend) -> bool:
    """The jobs after the full stage: the rest of the fill stage, the cache and the queue stages. ``segmented``
    (a modern drive): the cache fill and the write after idle time in segments, ending past their step, and the
    jobs after the cache fill made for the bytes it wrote. Returns whether it went on to the end."""
    names = [j.name for j in rest]
    if not segmented or CACHE_FILL not in names:
        return backend.part(rest, "probe-rest")
    k = names.index(CACHE_FILL)
    if not backend.part(rest[:k], "probe-rest"):
        return False
    fill = rest[k]
    going, fast = _segments(run, fill, seed, stream, lambda seg, i: backend.segment(fill, seg, i))
    if not going:
        return False
    if CACHE_FILL not in run.figures:
        # the cache fill failed (a real target's fio): the jobs after it as planned
        return backend.part(rest[k + 1:], "probe-queues")
    after = _cache_after(backend.jobs(True, int(run.figures[CACHE_FILL]["io_bytes"]) // MiB * MiB))
    at = [j.name for j in run.jobs].index(CACHE_FILL)
    run.jobs = run.jobs[:at + 1] + after
    if after and after[0].name == CACHE_AFTER_IDLE and fast is not None:
        idle = after[0]
        going, _ = _segments(run, idle, seed, stream, lambda seg, i: backend.segment(idle, seg, i), fast)
        after = after[1:]
    return going and backend.part(after, "probe-queues")


def run_probe_simulated(drive: Any, out_dir: Optional[Path], *, stages: Sequence[str] = STAGES, budget: float = 1.0,
                        seed: int = 1, progress: Optional[Callable[..., Any]] = None, stream: Optional[TextIO] = None,
                        names: Optional[Sequence[str]] = None) -> ProbeRun:
    """The probe on a simulated drive (a ssdlab Drive, preset id or file):
    fio's JSON and logs go to ``out_dir/fio`` (a temporary directory when
    None); ``names``: only these jobs of the ``stages``. Ctrl-C keeps the finished jobs (``interrupted``)."""
    import tempfile

    from ...fio.jobfile import parse_jobfile_text
    from ...fio.simulate import SimulatedRun, simulate, write_outputs
    from ...sim import Simulator

    t0 = time.perf_counter()
    sim = Simulator(drive, seed=seed)
    cap = int(sim.capacity_bytes)
    idle = sim.idle(duration_ns=int(IDLE_POWER_S * 1e9))

    def chosen(js: Sequence[ProbeJob]) -> List[ProbeJob]:
        return [j for j in js if names is None or j.name in names]

    jobs = chosen(probe_jobs(cap, budget, stages=stages))
    run = ProbeRun({"kind": "simulated", "capacity_bytes": cap}, list(jobs))
    _say_cache_span(run, cap, budget, stages, stream)
    _say_estimate(jobs, cap, assumed_rates(), stream, IDLE_POWER_S, stages=stages,
                  without=chosen(probe_jobs(cap, budget, stages=stages, full=False)))
    with tempfile.TemporaryDirectory(prefix="ssdlab-probe-") as tmp:
        fio_dir = Path(out_dir) / "fio" if out_dir is not None else Path(tmp)
        fio_dir.mkdir(parents=True, exist_ok=True)

        def part(js: Sequence[ProbeJob], name: str) -> bool:
            """``js`` as one job file through the simulator; False where Ctrl-C stopped it."""
            if not js:
                return True
            text = jobfile_text(js, seed=seed)
            done = True
            try:
                srun = simulate(parse_jobfile_text(text, f"{name}.fio"), simulator=sim, progress=progress)
            except KeyboardInterrupt as e:
                partial: Optional[SimulatedRun] = getattr(e, "run", None)
                if partial is None:
                    raise
                srun, done = partial, False
            write_text(fio_dir / f"{name}.fio", text)
            write_outputs(srun, fio_dir / f"{name}.json", fio_dir)
            figs = _read_run(fio_dir / f"{name}.json", fio_dir, text, js)
            # the simulator's power model read as a meter would: each measured job's average watts, with what the
            # drive did to draw them (the twin's fit of its power model needs its own activity beside the readings)
            for r in srun.measured:
                f = figs.get(str(r.data.get("jobname")))
                if f is not None:
                    p = phase_power(r.data)
                    f["avg_w"], f["power_s"], f["power_busy_s"], f["nand_energy_j"] = (
                        p["avg_w"], p["power_s"], p["power_busy_s"], p["nand_energy_j"])
            run.figures.update(figs)
            return done

        def segment(job: ProbeJob, seg: ProbeJob, i: int) -> bool:
            return part([seg], f"probe-full-s{i:02d}" if job.name == FULL_RANDWRITE else seg.name)

        going, wanted = _run_stages(run, jobs, cap, budget, stages, seed, stream, _Backend(
            part, segment, lambda full, written: chosen(probe_jobs(cap, budget, stages=stages, full=full,
                                                                   cache_written=written))))
        interrupted = not going
    run.power = {"source": "simulated drive (the simulator's power model)", "idle_w": phase_power(idle.data)["avg_w"],
                 "idle_s": IDLE_POWER_S}
    run.simulated_time_s = sim.now_ns / 1e9
    run.wall_time_s = time.perf_counter() - t0
    if stream is not None:
        # the estimate beside what it estimates: the simulated drive's own time for the jobs that ran
        ran = [j for j in run.jobs if j.name in run.figures]
        before = estimate(ran, cap, assumed_rates(), wanted)
        after = estimate(ran, cap, rates_from(run.figures), wanted)
        took = measured_seconds(ran, run.figures)
        stream.write(f"ssdlab probe: simulated device time {run.simulated_time_s:,.0f} s (jobs "
                     f"{sum(took.values()):,.0f} s, idle {IDLE_POWER_S:.0f} s); estimated before the start "
                     f"{sum(x.seconds for x in before):,.0f} s, at the rates it measured "
                     f"{sum(x.seconds for x in after):,.0f} s\n")
        for b, a in zip(before, after):
            stream.write(f"ssdlab probe:   {a.stage:<8} simulated {took.get(a.stage, 0.0):>8,.0f} s, estimated "
                         f"{b.seconds:>8,.0f} s before the start, {a.seconds:>8,.0f} s at the measured rates\n")
        stream.flush()
    run.interrupted = interrupted
    return run


def run_probe_device(target: str, out_dir: Path, *, size_bytes: Optional[int] = None, destroy_data: Optional[str] = None,
                     budget: float = 1.0, fio: Optional[str] = None, seed: int = 1, stream: TextIO = sys.stderr,
                     stages: Optional[Sequence[str]] = None) -> ProbeRun:
    """The probe through fio on a real block device (``destroy_data`` must
    name it when it holds a partition table or file system) or on a test file
    ssdlab creates in a directory (or at a new path) and removes afterwards.
    One fio run per job, so a failure or Ctrl-C keeps what finished. ``stages``: None runs the default
    (:func:`default_stages`: on a large target, no whole-drive write)."""
    from ...backends.fio_target import direct_io_works, open_target, target_drive_info
    from ...fio.run import FileTarget

    t0 = time.perf_counter()
    opened = open_target(target, size_bytes=size_bytes, destroy_data=destroy_data, fio=fio)
    check, exe, version, caps, directory = opened.check, opened.fio, opened.version, opened.caps, opened.directory
    view = opened.view
    capacity = opened.capacity_bytes // MiB * MiB
    info = target_drive_info(check, capacity, version, view, directory)
    trim = caps.trim is None
    chosen_note = None
    if stages is None:
        stages, chosen_note = default_stages(capacity, assumed_rates().write_bytes_per_s)
    target_stages: Sequence[str] = stages

    def target_jobs(full: bool, written: Optional[int]) -> List[ProbeJob]:
        """The probe's jobs on this target (a file target's reads of unwritten LBAs left out)."""
        return [j for j in probe_jobs(capacity, budget, trim=trim, stages=target_stages, full=full, cache_written=written)
                if j.name not in (UNWRITTEN_READ, UNWRITTEN_SEQREAD) or check.kind == "block"]

    jobs = probe_jobs(capacity, budget, trim=trim, stages=stages)
    run = ProbeRun({"kind": "block" if check.kind == "block" else "file", "path": target, "drive_id": info["id"],
                    "capacity_bytes": capacity, "fio_version": str(version), "drive": info}, jobs)
    if chosen_note is not None:
        run.stages = list(stages)
        run.notes.append(chosen_note)
        stream.write(f"ssdlab probe: {chosen_note}\n")
        full_jobs = probe_jobs(capacity, budget, trim=trim)
        stream.write("ssdlab probe: with them: " + _say_estimate(
            full_jobs, capacity, assumed_rates(), None, IDLE_SETTLE_S + IDLE_POWER_S,
            without=probe_jobs(capacity, budget, trim=trim, full=False)).splitlines()[0] + "\n")
    if not trim:
        run.notes.append(f"no TRIM: {caps.trim}; the probe starts from the target as it is and skips the TRIM jobs")
    if check.kind != "block":
        # a new file's unwritten extents are answered by the file system (zeros, no device I/O): not the drive's map
        jobs = [j for j in jobs if j.name not in (UNWRITTEN_READ, UNWRITTEN_SEQREAD)]
        run.notes.append("a file target: reads of unwritten LBAs are not measurable (the file system answers a new "
                         "file's unwritten extents without the drive); their jobs are left out")
    if CLEAN in stages:
        jobs = [host_buffer_job(capacity)] + jobs
    run.jobs = jobs
    _say_cache_span(run, capacity, budget, stages, stream)
    run.notes.append(_say_estimate(jobs, capacity, assumed_rates(), stream, IDLE_SETTLE_S + IDLE_POWER_S,
                                   stages=stages, without=target_jobs(False, None)))
    fio_dir = Path(out_dir) / "fio"
    fio_dir.mkdir(parents=True, exist_ok=True)
    stream.write(f"ssdlab probe: {len(jobs)} jobs on {target} ({capacity:,} B) with {version}\n")
    try:
        with (FileTarget(check.path, capacity) if check.kind != "block" else _same(check.resolved)) as path:
            direct = True
            if check.kind != "block" and not direct_io_works(path):
                direct = False
                run.notes.append("the file system refuses O_DIRECT: buffered I/O (direct=0); the page cache takes part")
            full = jobfile_text(jobs, seed=seed, filename=path, size_bytes=None if check.kind == "block" else capacity,
                                direct=direct)
            write_text(fio_dir / "probe.fio", full)

            def start(job: ProbeJob) -> int:
                """Before ``job``: the idle power window where it is the first to move data, and its line; its
                place in the plan (which names its fio directory)."""
                i = [j.name for j in run.jobs].index(job.name)
                if job.direction != "trim" and not run.power:
                    _idle_power_window(run, stream)
                stream.write(f"ssdlab probe: {i + 1}/{len(run.jobs)} {job.name} ({job.feature}) ...\n")
                return i

            def one(j: ProbeJob, k: int) -> None:
                text = jobfile_text([j], seed=seed, filename=path,
                                    size_bytes=None if check.kind == "block" else capacity, direct=direct)
                _run_device_job(run, j, text, fio_dir / f"{k:02d}-{j.name}", exe, stream)

            def part(js: Sequence[ProbeJob], name: str) -> bool:
                # one fio run per job, so that a failure or Ctrl-C keeps what finished
                for j in js:
                    one(j, start(j))
                return True

            def segment(job: ProbeJob, seg: ProbeJob, n: int) -> bool:
                i = start(job) if n == 0 else [j.name for j in run.jobs].index(job.name)
                one(seg, i * 100 + n)
                return True

            _run_stages(run, jobs, capacity, budget, stages, seed, stream,
                        _Backend(part, segment, target_jobs, note_estimates=True))
    except KeyboardInterrupt:
        run.interrupted = True
    run.wall_time_s = time.perf_counter() - t0
    return run


def _idle_power_window(run: ProbeRun, stream: TextIO) -> None:
    """The idle window of a power meter's log (ssdlab fit --power-log), after the TRIM has settled."""
    stream.write(f"ssdlab probe: {IDLE_SETTLE_S + IDLE_POWER_S:.0f} s idle (the idle power window of a meter "
                 "log) ...\n")
    stream.flush()
    time.sleep(IDLE_SETTLE_S)
    w = time.time()
    time.sleep(IDLE_POWER_S)
    run.power = {"idle_window_s": [w, time.time()]}


def _run_device_job(run: ProbeRun, job: ProbeJob, text: str, part: Path, exe: str, stream: TextIO) -> None:
    """One job as its own fio run in ``part``: its figures into ``run`` (with its wall-clock span), or a note
    where fio failed. KeyboardInterrupt where fio was stopped."""
    from ...fio.run import run_fio

    w0 = time.perf_counter()
    stream.flush()
    wall_start = time.time()
    frun = run_fio(text, part, fio=exe)
    wall_end = time.time()
    if frun.interrupted:
        raise KeyboardInterrupt()
    if frun.result is None or frun.returncode not in (0, None) or any(j.error for j in frun.result.jobs):
        run.notes.append(f"{job.name}: fio failed (see {part}/fio-stderr.txt); left out")
        return
    run.figures.update(_host_rate(part / "fio-output.json", job) if job.stage == HOST else
                       _read_run(part / "fio-output.json", part, text, [job]))
    if job.name in run.figures:
        run.figures[job.name].update({"wall_start_s": wall_start, "wall_end_s": wall_end})
    stream.write(f"ssdlab probe: {job.name} done in {time.perf_counter() - w0:.1f} s\n")


def _say_cache_span(run: ProbeRun, cap: int, budget: float, stages: Sequence[str], stream: Optional[TextIO]) -> None:
    """Before any job: a note (and a line on ``stream``) when the budget asks the cache fill for more than it may
    write on this target."""
    note = cache_span_note(cap, budget) if CACHE in stages else None
    if note is None:
        return
    run.notes.append(note)
    if stream is not None:
        stream.write(f"ssdlab probe: {note}\n")
        stream.flush()


def _say_estimate(jobs: Sequence[ProbeJob], cap: int, rates: Rates, stream: Optional[TextIO], extra_s: float = 0.0,
                  what: str = "the probe", stages: Sequence[str] = STAGES,
                  without: Optional[Sequence[ProbeJob]] = None) -> str:
    """Before the jobs run: how long they should take, by stage, and what each stage writes; ``without``: the jobs
    where the full stage does not run (it runs only where the stages before it call for it), whose total is given
    apart. The cache stage's writes are estimated segmented where the drive counts as modern: with the full
    stage, or where the stages that tell do not run."""
    maybe = (FULL,) if {CLEAN, FILL} <= set(stages) and what == "the probe" and without is not None else ()
    modern = not {CLEAN, FILL} <= set(stages) or any(j.stage == FULL for j in jobs)
    alt = estimate(without, cap, rates) if maybe and without is not None else None
    text = estimate_text(estimate(jobs, cap, rates, modern), cap, rates, extra_s, what, maybe, alt)
    if stream is not None:
        stream.write("".join(f"ssdlab probe: {line}\n" for line in text.splitlines()))
        stream.flush()
    return text


def _say_full_stage(run: ProbeRun, cap: int, budget: float, stream: Optional[TextIO],
                    stages: Sequence[str] = STAGES) -> None:
    """Before the full drive's stage: what it writes (with the fill's, more than the capacity)."""
    note = full_stage_note(cap, budget, stages)
    run.notes.append(note)
    if stream is not None:
        stream.write(f"ssdlab probe: {note}\n")
        stream.flush()


def full_stage_wanted(figures: Figures, cap: int, stages: Sequence[str]) -> bool:
    """Whether the full drive's stage runs, right after the fill stage's fill: where the clean stage and the fill
    show a modern drive (an NVMe link, or a write cache the fill stepped down from), whose clean stage wrote into
    its cache and whose 4KB torture rarely reaches its GC onset. A SATA-era drive's torture shows its spare area and
    its clean stage its native NAND, so its probe is as it was. Where the stages that tell did not run (a run of
    chosen stages without the clean or the fill stage), it runs."""
    from ..features import SATA_LINKS, extract

    if CLEAN not in stages or FILL not in stages:
        return True
    F = extract(figures, cap, cache=True)
    cache = F.get("slc_cache")
    # a transfer beyond every SATA link is an NVMe link (the queue stage, which tells it from the queues too, runs
    # after this choice)
    link = F["link_bytes_per_s"]["value"]
    fast = bool(link and link > 1.005 * max(rate for _, rate, _ in SATA_LINKS))
    return fast or F["host_interface"]["value"] == "nvme" or (cache is not None and cache["value"] is True)


class _same:
    def __init__(self, path: str) -> None:
        self.path = path

    def __enter__(self) -> str:
        return self.path

    def __exit__(self, *exc: Any) -> None:
        return None
