"""``ssdlab probe``: one fixed list of diagnosis jobs, each with the internal
feature it reveals and why, run through fio on a real device or file, or on
a simulated drive (the same job file either way), then the features
extracted from what was measured (:mod:`ssdlab.twin.features`).

The jobs run in two stages. ``clean`` (after a TRIM of the whole target)
measures what a drive does before garbage collection: the write buffer
(bursts after idle), random and sequential writes and reads at several
queue depths and transfer sizes, data reduction, read-ahead, reads of
unwritten LBAs. ``fill`` fills the target, writes 4KB at random past its
capacity (garbage collection starts when the spare area is used up), and
measures a sequential write on the dirty drive, recovery by idle time, and
a sequential write after a full TRIM. The fit of a twin
(:mod:`ssdlab.twin.fit`) simulates the ``clean`` stage many times; the
``fill`` stage sets the spare area and the state behaviours directly.

Layout of ``--out DIR``: ``probe.json`` (the target, every job with its
feature and figures, the features, wall time, manifest), ``fio/probe.fio``
(the job file as run), ``fio/probe.json`` (fio's JSON) and the fio logs
under ``fio/``.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, TextIO, Tuple, Union

from ..errors import SsdlabError
from ..fio.guard import filename_value
from ..outputs import write_text
from ..suite.fio import DATA_PATTERN_OPTIONS

__all__ = ["ProbeJob", "PROBE_SCHEMA", "probe_jobs", "jobfile_text", "run_probe_simulated", "run_probe_device",
           "ProbeRun", "job_figures", "CLEAN", "FILL", "BUDGETS", "probe_document", "save_probe", "load_probe",
           "figures_of", "capacity_of", "ProbeError", "PROBE_SCHEMA_VERSION", "REAL_KINDS", "phase_power",
           "apply_power_log", "read_power_log", "IDLE_POWER_S"]

PROBE_SCHEMA = "ssdlab.probe"
PROBE_SCHEMA_VERSION = 1
#: probe.json target kinds measured through fio.
REAL_KINDS = ("block", "file")
CLEAN = "clean"
FILL = "fill"

#: --budget names: a factor on every runtime and on the sizes of the state writes.
BUDGETS = {"quick": 0.25, "default": 1.0, "thorough": 3.0}
#: Seconds the probe leaves the target idle, before its first job that moves data, to read its idle power: the
#: simulator's power model on a simulated drive, a power meter's log (``ssdlab fit --power-log``) on a real one.
IDLE_POWER_S = 10.0
#: Seconds a real target rests after its TRIM before that idle window (the erases a TRIM may start).
IDLE_SETTLE_S = 5.0
#: Share of a job's wall-clock window left out at each end when a meter log is averaged over it (fio's start-up
#: and the meter's own averaging straddle the edges).
METER_EDGE = 0.1

class ProbeError(SsdlabError):
    """A probe directory or document that cannot be used: one line."""


KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB


@dataclass(frozen=True)
class ProbeJob:
    """One diagnosis job: fio ``options`` (beyond the shared header), the
    ``stage``, the ``feature`` it reveals and ``why``, the direction its
    figures come from (``read``, ``write``, ``trim``, or ``rw``: both), and whether fio
    logs its IOPS and bandwidth per ``log_ms``."""

    name: str
    stage: str
    feature: str
    why: str
    options: Dict[str, Any]
    direction: str
    log_ms: int = 0

    @property
    def block_bytes(self) -> int:
        bs = str(self.options.get("bs", "4k")).lower()
        mult = {"k": KiB, "m": MiB, "g": GiB}.get(bs[-1], 1)
        return int(bs[:-1] if bs[-1] in "kmg" else bs) * mult


def _align(n: float, unit: int = MiB) -> int:
    return max(unit, int(n) // unit * unit)


def _secs(s: float) -> str:
    return f"{int(round(max(s, 0.2) * 1000))}ms"


def probe_jobs(capacity_bytes: int, budget: float = 1.0, trim: bool = True) -> List[ProbeJob]:
    """The probe for a target of ``capacity_bytes`` (``budget``: factor on
    runtimes and state-write sizes; ``trim``: the target accepts TRIM)."""
    if capacity_bytes < 256 * MiB:
        raise SsdlabError(f"the probe needs a target of at least 256 MiB; this one has {capacity_bytes:,} B")
    b = float(budget)
    cap = capacity_bytes
    read_span = _align(min(8 * GiB, cap // 4))
    write_span = _align(min(8 * GiB, cap // 4))
    red_span = _align(min(1 * GiB, cap // 16))
    w0, d0 = read_span, read_span + write_span
    t_short = _secs(1.0 * b)
    inc = dict(DATA_PATTERN_OPTIONS["incompressible"])
    jobs: List[ProbeJob] = []

    def add(name: str, stage: str, feature: str, why: str, direction: str, log_ms: int = 0, **opts: Any) -> None:
        jobs.append(ProbeJob(name, stage, feature, why, opts, direction, log_ms))

    if trim:
        add("erase", CLEAN, "starting state", "a TRIM of the whole target leaves no valid data, as a secure erase would "
            "(the probe issues no ATA SECURITY ERASE)", "trim", rw="trim", bs="64m")
    add("unwritten-read", CLEAN, "unwritten-LBA reads",
        "4KB reads of LBAs that hold no data: a drive that answers them from its map is much faster than a die read",
        "read", rw="randread", bs="4k", iodepth=1, size=read_span, time_based=1, runtime=t_short)
    add("unwritten-seqread-128k-qd32", CLEAN, "host link",
        "128KB sequential reads of LBAs that hold no data, at QD32: a drive that answers them from its map moves "
        "them at the link's rate even where its NAND reads and writes slower (Crucial m4: 440 MB/s from the NAND, "
        "543 MB/s on the link)", "read", rw="read", bs="128k", iodepth=32, size=read_span, time_based=1,
        runtime=t_short)
    # write buffer: bursts after idle, growing; a burst the buffer absorbs goes at link speed
    off = d0
    # (the 8 GiB burst gives a large buffer on a NAND almost as fast as the link a second burst that outruns
    # it; it runs only where it ends below 40% of the drive, so the fill still crosses half of it in order)
    for s in (8 * MiB, 32 * MiB, 128 * MiB, 512 * MiB, 2 * GiB, 8 * GiB):
        if off + s > (cap if s <= 2 * GiB else 0.4 * cap):
            break
        label = f"{s // MiB}m" if s < GiB else f"{s // GiB}g"
        add(f"burst-{label}", CLEAN, "write buffer size",
            "a burst after idle time (3 s, at least 1 s) goes at the host link's rate while the write buffer takes it; where the rate "
            "falls to the NAND's, the buffer is full", "write", rw="write", bs="128k", iodepth=32, offset=off, size=s,
            startdelay=_secs(max(1.0, 3.0 * b)), **inc)
        off += s
    for qd in (1, 4, 32):
        add(f"randwrite-4k-qd{qd}", CLEAN, "write parallelism and command cost",
            "4KB random writes on a clean drive: QD1 gives the write latency (command cost, buffer), QD32 the "
            "controller's and the dies' ceiling", "write", rw="randwrite", bs="4k", iodepth=qd, offset=w0,
            size=write_span, time_based=1, runtime=t_short, **inc)
    for bs in ("4k", "16k", "64k"):
        add(f"flushwrite-{bs}-qd1", CLEAN, "program time (tPROG) and the program unit",
            f"{bs} random writes one at a time, each followed by a FLUSH CACHE (fio fsync=1): the flush returns once "
            "the data is programmed, so its latency less the plain write's is the program time plus the unit's "
            "transfer to the die; a flush of less than a program unit programs (pads) the whole unit, so the "
            "latency stays flat over 4-64KB (a drive that acknowledges flushes at once has power-loss protection)",
            "write", rw="randwrite", bs=bs, iodepth=1, fsync=1, offset=w0, size=write_span, time_based=1,
            runtime=t_short, **inc)
    add("seqwrite-128k-qd32", CLEAN, "NAND program bandwidth",
        "a sequential write over the read span on a clean drive: dies x program unit / tPROG, or the link",
        "write", rw="write", bs="128k", iodepth=32, offset=0, size=read_span, **inc)
    add("seqwrite-128k-qd1", CLEAN, "write latency of large transfers",
        "128KB writes one at a time: the buffer and the link per transfer", "write", rw="write", bs="128k",
        iodepth=1, offset=d0, size=red_span, **inc)
    for pattern in ("incompressible", "compressible", "repeated", "zeros"):
        add(f"seqwrite-{pattern}", CLEAN, "data reduction",
            f"a sequential write of {pattern} data: a drive that compresses or deduplicates writes reducible data "
            "faster than incompressible data (stored bytes / host bytes ~ the ratio of the rates)", "write",
            rw="write", bs="128k", iodepth=32, offset=d0, size=red_span, **DATA_PATTERN_OPTIONS[pattern])
    # ATTO's large transfers: a short write at QD4 then, at once, a read of what it wrote: the read meets the
    # programs the buffer still holds, and a large request is split into many die operations (128 MiB, ATTO's
    # span in the quick profile: the buffer's share of it shows)
    atto_span = _align(min(128 * MiB, cap // 16))
    add("seqwrite-4m-qd4", CLEAN, "reads right after writes, large transfers",
        "4MB sequential writes at QD4 over a short span, as ATTO's largest transfers: the write path with many "
        "die operations per command, and what the buffer takes of the span", "write", rw="write", bs="4m",
        iodepth=4, offset=d0, size=atto_span, **inc)
    add("seqread-4m-qd4", CLEAN, "reads right after writes, large transfers",
        "the same span read back at once in 4MB transfers at QD4: reads that meet the programs the buffer still "
        "holds, and how many dies a request reads at once", "read", rw="read", bs="4m", iodepth=4, offset=d0,
        size=atto_span)
    for qd in (1, 2, 3, 4, 8, 16, 32):
        # the first after the writes starts after 1 s of idle: the programs the buffer still holds would hold
        # its reads (by up to half a program each), and QD1 is where the die read's own time is measured
        idle: Dict[str, Any] = {"startdelay": _secs(1.0)} if qd == 1 else {}
        add(f"randread-4k-qd{qd}", CLEAN, "read parallelism",
            "4KB random reads of written data: QD1 gives the die read time plus the controller's, the knee over "
            "queue depth the dies that work at once", "read", rw="randread", bs="4k", iodepth=qd, size=read_span,
            time_based=1, runtime=t_short, **idle)
    for bs in ("8k", "16k", "32k", "64k", "128k", "512k"):
        add(f"randread-{bs}-qd1", CLEAN, "page and stripe size",
            "random reads one at a time against transfer size: the step where a transfer needs another page read "
            "or another die", "read", rw="randread", bs=bs, iodepth=1, size=read_span, time_based=1, runtime=t_short)
    add("randread-128k-qd32", CLEAN, "read bandwidth", "large random reads at depth: the dies' read bandwidth or the link",
        "read", rw="randread", bs="128k", iodepth=32, size=read_span, time_based=1, runtime=t_short)
    for qd in (1, 32):
        add(f"seqread-128k-qd{qd}", CLEAN, "link and read-ahead",
            "sequential 128KB reads: at QD32 the host link's ceiling; at QD1 whether the drive reads ahead",
            "read", rw="read", bs="128k", iodepth=qd, size=read_span, time_based=1, runtime=t_short)
    for qd in (1, 2, 3, 4):
        add(f"seqread-4k-qd{qd}", CLEAN, "read-ahead and its queue-depth threshold",
            "sequential 4KB reads against random ones at the same depth: a read-ahead serves them from the buffer, "
            "from the depth at which the firmware detects the stream", "read", rw="read", bs="4k", iodepth=qd,
            size=read_span, time_based=1, runtime=t_short)
    for bs, qd in (("512", 4), ("512", 32), ("32k", 4)):
        depth = ("at QD4 (ATTO's depth)" if qd == 4 else
                 f"at QD{qd}: with almost no data to move, the most commands the controller completes per second")
        add(f"seqwrite-{bs}-qd{qd}", CLEAN, "small and partial-unit writes",
            f"sequential writes {depth}; below the 4KB mapping unit a write costs a read-modify-write; "
            "small transfers show the per-command cost", "write", rw="write", bs=bs, iodepth=qd, offset=d0,
            size=red_span, time_based=1, runtime=t_short, **inc)
        add(f"seqread-{bs}-qd{qd}", CLEAN, "small reads",
            f"sequential reads {depth}; a drive that reads ahead serves transfers smaller than a 4KB unit from "
            "its buffer, one that does not reads the unit again for each", "read", rw="read",
            bs=bs, iodepth=qd, size=read_span, time_based=1, runtime=t_short)
    rnd_span = _align(min(256 * MiB, cap // 16))
    add("randwrite-span", CLEAN, "reads of data written at random",
        "4KB random writes over a small span, twice its size: the data the next two jobs read was written at random",
        "write", rw="randwrite", bs="4k", iodepth=32, offset=w0, size=rnd_span, io_size=2 * rnd_span, **inc)
    add("randread-randomly-written-4k-qd32", CLEAN, "reads of data written at random",
        "4KB random reads of data written at random: slower than of data written in order when the controller "
        "stripes its stored stream across dies or maps coarsely", "read", rw="randread", bs="4k", iodepth=32,
        offset=w0, size=rnd_span, time_based=1, runtime=t_short)
    add("seqread-randomly-written-128k-qd32", CLEAN, "reads of data written at random",
        "sequential 128KB reads of data written at random: a drive whose physical layout follows the writes reads "
        "it scattered", "read", rw="read", bs="128k", iodepth=32, offset=w0, size=rnd_span, time_based=1, runtime=t_short)
    for bs in ("4k", "8k", "16k"):
        add(f"rewrite-{bs}-qd32", CLEAN, "map unit",
            f"{bs} random writes, aligned, of reducible (repeated) data over the span just written at random: a drive "
            "whose map unit is larger than a write rewrites the rest of the unit with it (reads it back and programs "
            "it again), so its writes below the unit run well below those of a whole unit; with a 4KB map the "
            "smaller writes run at least as fast", "write", rw="randwrite", bs=bs, blockalign=bs, iodepth=32,
            offset=w0, size=rnd_span, time_based=1, runtime=t_short, **DATA_PATTERN_OPTIONS["repeated"])
    add("randrw-4k-qd4", CLEAN, "mixed reads and writes",
        "4KB random I/O, 70% reads, at QD4: reads waiting behind programs on their die", "rw", rw="randrw",
        rwmixread=70, bs="4k", iodepth=4, size=read_span, time_based=1, runtime=t_short, **inc)
    # the state: fill, write past the capacity, dirty, idle, TRIM
    add("fill", FILL, "sequential write of the whole drive",
        "every LBA written once in order: the first-pass sequential rate", "write", log_ms=1000, rw="write",
        bs="128k", iodepth=32, **inc)
    # long enough to write 35% of the capacity at 100 MB/s: past the spare area of the drives of the era
    # (7-28%) and on into the steady state
    torture_s = max(60.0, 0.35 * cap / 100e6) * b
    add("torture", FILL, "spare area, GC onset and steady state",
        "4KB random writes after the fill: the rate stays at the clean one until the spare area is used up, then "
        "falls to the steady state garbage collection allows (bytes written before the fall ~ the spare area)",
        "write", log_ms=1000, rw="randwrite", bs="4k", iodepth=32, time_based=1, runtime=_secs(torture_s), **inc)
    # the buffer in the steady state: the torture leaves it full (the host is held at the rate garbage collection
    # lets the buffer drain), so a FLUSH CACHE at once waits for all of it to drain at that rate. On a clean drive
    # whose NAND writes as fast as the link lets data in, no burst fills the buffer, and this is what shows it
    add("tortured-flush", FILL, "write buffer size",
        "one 4KB write and a FLUSH CACHE (fio fsync=1) right after the torture: the torture leaves the buffer full "
        "and draining at the steady state's rate, so the flush's latency x that rate is the buffer (a drive that "
        "acknowledges flushes at once has power-loss protection: no buffer shows)", "write", rw="randwrite",
        bs="4k", iodepth=1, fsync=1, io_size=8192, **inc)
    add("after-idle-randwrite", FILL, "idle-time garbage collection",
        "4KB random writes after idle time: faster than the steady state when the drive cleans blocks while idle",
        "write", rw="randwrite", bs="4k", iodepth=32, time_based=1, runtime=_secs(5.0 * b),
        startdelay=_secs(60.0 * b), **inc)
    for name, rw, bs in (("tortured-randread-4k-qd32", "randread", "4k"), ("tortured-seqread-128k-qd32", "read", "128k")):
        add(name, FILL, "reads of data written at random",
            "reads after the torture, over the whole drive: the layout random writes leave", "read", rw=rw, bs=bs,
            iodepth=32, time_based=1, runtime=_secs(2.0 * b))
    dirty_size = _align(min(2 * GiB * b, cap // 8))
    add("dirty-seqwrite", FILL, "sequential write on a dirty drive",
        "a sequential write right after random writes: how much garbage collection costs a large write",
        "write", rw="write", bs="128k", iodepth=32, offset=0, size=dirty_size, **inc)
    if trim:
        add("trim-all", FILL, "TRIM response", "a TRIM of the whole drive after the torture", "trim", rw="trim", bs="64m")
        add("after-trim-seqwrite", FILL, "TRIM response",
            "a sequential write right after the full TRIM: back near the clean rate when TRIM frees the blocks at "
            "once; at the dirty rate when the drive still recycles the trimmed blocks", "write", rw="write",
            bs="128k", iodepth=32, offset=dirty_size, size=dirty_size, **inc)
    return jobs


def jobfile_text(jobs: Sequence[ProbeJob], *, seed: int = 1, filename: Optional[str] = None,
                 size_bytes: Optional[int] = None, direct: bool = True) -> str:
    """The probe as one fio job file: a ``[global]`` header, then each job
    behind a ``stonewall`` (``filename``/``size`` for a real target)."""
    lines = ["# ssdlab probe: diagnosis jobs (ssdlab.twin.probe); every job's 'description' names the feature", "[global]"]
    if filename is not None:
        lines.append(f"filename={filename_value(filename, 'probe target')}")
    if size_bytes is not None:
        lines.append(f"size={size_bytes}")
    lines += ["ioengine=libaio", f"direct={int(direct)}", "group_reporting=1", "norandommap=1", "randrepeat=0",
              f"randseed={seed}", ""]
    for j in jobs:
        lines += [f"[{j.name}]", "stonewall", f"description={j.feature}"]
        opts = dict(j.options)
        if j.log_ms:
            opts["log_avg_msec"] = j.log_ms
            opts["write_iops_log"] = j.name
            opts["write_bw_log"] = j.name
        lines += [f"{k}={v}" for k, v in opts.items()]
        lines.append("")
    return "\n".join(lines)


def job_figures(job: Any, direction: str) -> Dict[str, Any]:
    """The figures of one parsed fio job (ssdlab.fio.parse.JobResult) in the
    measured direction: IOPS, MB/s, mean and p99 completion latency (us),
    bytes, runtime (s), the FLUSH CACHE count and mean, median and p99
    latency (us) of a job with fsync (``syncs``, ``sync_mean_us``,
    ``sync_p50_us``, ``sync_p99_us``, and its writes' median ``clat_p50_us``), and
    the per-interval IOPS when logged."""
    d = job.read if direction == "rw" else getattr(job, direction)
    lat = d.clat
    both = (job.read, job.write) if direction == "rw" else (d,)
    out: Dict[str, Any] = {
        "iops": sum(x.iops for x in both), "mbps": sum(x.mbps for x in both),
        "io_bytes": sum(x.io_bytes for x in both), "runtime_s": max(x.runtime_ms for x in both) / 1e3,
        "clat_mean_us": None if lat is None or not lat.count else lat.mean_ns / 1e3,
        "clat_p99_us": None if lat is None or not lat.count else lat.percentile_us(99.0),
    }
    sync = getattr(job, "sync", None)
    if sync is not None and sync.count:
        out["syncs"] = sync.count
        out["sync_mean_us"] = sync.mean_ns / 1e3
        out["sync_p50_us"] = sync.percentile_us(50.0)
        out["sync_p99_us"] = sync.percentile_us(99.0)
        out["clat_p50_us"] = None if lat is None or not lat.count else lat.percentile_us(50.0)
    if job.iops_series is not None:
        out["interval_ms"] = job.iops_series.interval_ms
        out["iops_series"] = [float(x) for x in (job.iops_series.total if direction == "rw" else
                                                 getattr(job.iops_series, direction))]
    return out


@dataclass
class ProbeRun:
    """What a probe measured: the target, the jobs and their figures (by job
    name), notes, wall time, and whether it was interrupted."""

    target: Dict[str, Any]
    jobs: List[ProbeJob]
    figures: Dict[str, Dict[str, Any]] = field(default_factory=dict)
    notes: List[str] = field(default_factory=list)
    wall_time_s: float = 0.0
    simulated_time_s: Optional[float] = None
    interrupted: bool = False
    #: The power readings: ``source`` and ``idle_w`` (simulated), or the idle window's wall clock
    #: (``idle_window_s``, a real target) until a meter log is applied (:func:`apply_power_log`).
    power: Dict[str, Any] = field(default_factory=dict)

    def jobs_doc(self) -> List[Dict[str, Any]]:
        out = []
        for j in self.jobs:
            d = asdict(j)
            d["figures"] = self.figures.get(j.name)
            out.append(d)
        return out


def _read_run(json_path: Path, log_dir: Path, jobfile: str, jobs: Sequence[ProbeJob]) -> Dict[str, Dict[str, Any]]:
    from ..fio.jobfile import parse_jobfile_text
    from ..fio.parse import read_fio_output

    result = read_fio_output(json_path, log_dir, parse_jobfile_text(jobfile, "probe.fio"))
    names = {j.name for j in result.jobs}
    return {j.name: job_figures(result.job(j.name), j.direction) for j in jobs if j.name in names}


def phase_power(data: Mapping[str, Any]) -> Dict[str, float]:
    """A simulated phase's average watts (``avg_w``), its duration and busy
    time (``power_s``, ``power_busy_s``) and the NAND's share of its energy
    (``nand_energy_j``)."""
    p = data["ssdlab"]["power"]
    return {"avg_w": float(p["avg_w"]), "power_s": int(data["duration_ns"]) / 1e9,
            "power_busy_s": int(data.get("busy_time_ns", 0)) / 1e9, "nand_energy_j": float(p["nand_energy_j"])}


def run_probe_simulated(drive: Any, out_dir: Optional[Path], *, stages: Sequence[str] = (CLEAN, FILL), budget: float = 1.0,
                        seed: int = 1, progress: Optional[Callable[..., Any]] = None, stream: Optional[TextIO] = None
                        ) -> ProbeRun:
    """The probe on a simulated drive (a ssdlab Drive, preset id or file):
    fio's JSON and logs go to ``out_dir/fio`` (a temporary directory when
    None). Ctrl-C keeps the finished jobs (``interrupted``)."""
    import tempfile

    from ..fio.jobfile import parse_jobfile_text
    from ..fio.simulate import SimulatedRun, simulate, write_outputs
    from ..sim import Simulator

    t0 = time.perf_counter()
    sim = Simulator(drive, seed=seed)
    cap = int(sim.capacity_bytes)
    idle = sim.idle(duration_ns=int(IDLE_POWER_S * 1e9))
    jobs = [j for j in probe_jobs(cap, budget) if j.stage in stages]
    text = jobfile_text(jobs, seed=seed)
    run = ProbeRun({"kind": "simulated", "capacity_bytes": cap}, jobs)
    interrupted = False
    try:
        srun = simulate(parse_jobfile_text(text, "probe.fio"), simulator=sim, progress=progress)
    except KeyboardInterrupt as e:
        partial: Optional[SimulatedRun] = getattr(e, "run", None)
        if partial is None:
            raise
        srun = partial
        interrupted = True
    with tempfile.TemporaryDirectory(prefix="ssdlab-probe-") as tmp:
        fio_dir = Path(out_dir) / "fio" if out_dir is not None else Path(tmp)
        fio_dir.mkdir(parents=True, exist_ok=True)
        write_text(fio_dir / "probe.fio", text)
        write_outputs(srun, fio_dir / "probe.json", fio_dir)
        run.figures = _read_run(fio_dir / "probe.json", fio_dir, text, jobs)
    # the simulator's power model read as a meter would: each measured job's average watts, with what the
    # drive did to draw them (the twin's fit of its power model needs its own activity beside the readings)
    for r in srun.measured:
        f = run.figures.get(str(r.data.get("jobname")))
        if f is not None:
            f.update(phase_power(r.data))
    run.power = {"source": "simulated drive (the simulator's power model)", "idle_w": phase_power(idle.data)["avg_w"],
                 "idle_s": IDLE_POWER_S}
    run.simulated_time_s = sim.now_ns / 1e9
    run.wall_time_s = time.perf_counter() - t0
    run.interrupted = interrupted
    return run


def run_probe_device(target: str, out_dir: Path, *, size_bytes: Optional[int] = None, destroy_data: Optional[str] = None,
                     budget: float = 1.0, fio: Optional[str] = None, seed: int = 1, stream: TextIO = sys.stderr,
                     stages: Sequence[str] = (CLEAN, FILL)) -> ProbeRun:
    """The probe through fio on a real block device (``destroy_data`` must
    name it when it holds a partition table or file system) or on a test file
    ssdlab creates in a directory (or at a new path) and removes afterwards.
    One fio run per job, so a failure or Ctrl-C keeps what finished."""
    from ..fio.run import FileTarget, run_fio
    from ..suite.device import _direct_io_works, open_target, target_drive_info

    t0 = time.perf_counter()
    opened = open_target(target, size_bytes=size_bytes, destroy_data=destroy_data, fio=fio)
    check, exe, version, caps, directory = opened.check, opened.fio, opened.version, opened.caps, opened.directory
    view = opened.view
    capacity = opened.capacity_bytes // MiB * MiB
    info = target_drive_info(check, capacity, version, view, directory)
    trim = caps.trim is None
    jobs = [j for j in probe_jobs(capacity, budget, trim=trim) if j.stage in stages]
    run = ProbeRun({"kind": "block" if check.kind == "block" else "file", "path": target, "drive_id": info["id"],
                    "capacity_bytes": capacity, "fio_version": str(version), "drive": info}, jobs)
    if not trim:
        run.notes.append(f"no TRIM: {caps.trim}; the probe starts from the target as it is and skips the TRIM jobs")
    fio_dir = Path(out_dir) / "fio"
    fio_dir.mkdir(parents=True, exist_ok=True)
    stream.write(f"ssdlab probe: {len(jobs)} jobs on {target} ({capacity:,} B) with {version}\n")
    try:
        with (FileTarget(check.path, capacity) if check.kind != "block" else _same(check.resolved)) as path:
            direct = True
            if check.kind != "block" and not _direct_io_works(path):
                direct = False
                run.notes.append("the file system refuses O_DIRECT: buffered I/O (direct=0); the page cache takes part")
            full = jobfile_text(jobs, seed=seed, filename=path, size_bytes=None if check.kind == "block" else capacity,
                                direct=direct)
            write_text(fio_dir / "probe.fio", full)
            for i, job in enumerate(jobs):
                if job.direction != "trim" and not run.power:
                    # the idle window of a power meter's log (ssdlab fit --power-log), after the TRIM has settled
                    stream.write(f"ssdlab probe: {IDLE_SETTLE_S + IDLE_POWER_S:.0f} s idle (the idle power window "
                                 "of a meter log) ...\n")
                    stream.flush()
                    time.sleep(IDLE_SETTLE_S)
                    w = time.time()
                    time.sleep(IDLE_POWER_S)
                    run.power = {"idle_window_s": [w, time.time()]}
                part = fio_dir / f"{i:02d}-{job.name}"
                text = jobfile_text([job], seed=seed, filename=path,
                                    size_bytes=None if check.kind == "block" else capacity, direct=direct)
                w0 = time.perf_counter()
                stream.write(f"ssdlab probe: {i + 1}/{len(jobs)} {job.name} ({job.feature}) ...\n")
                stream.flush()
                wall_start = time.time()
                frun = run_fio(text, part, fio=exe)
                wall_end = time.time()
                if frun.interrupted:
                    raise KeyboardInterrupt()
                if frun.result is None or frun.returncode not in (0, None) or any(j.error for j in frun.result.jobs):
                    run.notes.append(f"{job.name}: fio failed (see {part}/fio-stderr.txt); left out")
                    continue
                run.figures.update(_read_run(part / "fio-output.json", part, text, [job]))
                if job.name in run.figures:
                    run.figures[job.name].update({"wall_start_s": wall_start, "wall_end_s": wall_end})
                stream.write(f"ssdlab probe: {job.name} done in {time.perf_counter() - w0:.1f} s\n")
    except KeyboardInterrupt:
        run.interrupted = True
    run.wall_time_s = time.perf_counter() - t0
    return run


class _same:
    def __init__(self, path: str) -> None:
        self.path = path

    def __enter__(self) -> str:
        return self.path

    def __exit__(self, *exc: Any) -> None:
        return None


def probe_document(run: ProbeRun, features: Dict[str, Any], *, seed: int, budget: float, command: str,
                   drive_hash: str = "") -> Dict[str, Any]:
    """probe.json."""
    from ..results import ssdlab_version

    return {"schema": PROBE_SCHEMA, "schema_version": PROBE_SCHEMA_VERSION,
            "manifest": {"seed": seed, "version": ssdlab_version(), "drive_hash": drive_hash, "command": command,
                         "budget": budget},
            "target": run.target, "budget": budget, "interrupted": run.interrupted, "notes": run.notes,
            "wall_time_s": round(run.wall_time_s, 3), "simulated_time_s": run.simulated_time_s,
            "power": run.power, "features": features, "jobs": run.jobs_doc()}


def save_probe(doc: Dict[str, Any], out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "probe.json"
    write_text(path, json.dumps(doc, indent=1) + "\n")
    return path


def load_probe(probe_dir: Union[str, Path]) -> Dict[str, Any]:
    """``DIR/probe.json``, checked: ProbeError (one line) when DIR or the
    file is missing, is not JSON, or is not an ``ssdlab.probe`` document."""
    d = Path(probe_dir)
    probe_dir = str(probe_dir)
    if not d.exists():
        raise ProbeError(f"{probe_dir}: no such directory (the --out DIR of 'ssdlab probe')")
    if not d.is_dir():
        raise ProbeError(f"{probe_dir} is not a directory: give the --out DIR of 'ssdlab probe'")
    p = d / "probe.json"
    if not p.is_file():
        raise ProbeError(f"{probe_dir} has no probe.json: it is not a probe directory (run 'ssdlab probe TARGET --out {probe_dir}')")
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ProbeError(f"{p}: not a probe document ({e})") from None
    if not isinstance(doc, dict) or doc.get("schema") != PROBE_SCHEMA:
        got = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
        raise ProbeError(f"{p}: schema {got!r}, not {PROBE_SCHEMA!r}: give the --out DIR of 'ssdlab probe'")
    if doc.get("schema_version") != PROBE_SCHEMA_VERSION:
        raise ProbeError(f"{p}: schema_version {doc.get('schema_version')!r} (this ssdlab reads {PROBE_SCHEMA_VERSION})")
    target = doc.get("target")
    if not isinstance(target, dict) or target.get("kind") not in ("simulated",) + REAL_KINDS:
        kind = target.get("kind") if isinstance(target, dict) else None
        raise ProbeError(f"{p}: target.kind {kind!r}: one of simulated, block, file")
    if not isinstance(doc.get("features", {}), dict):
        raise ProbeError(f"{p}: features must be an object of NAME: {{value, unit, confidence, how}}")
    return doc


def read_power_log(path: Union[str, Path]) -> List[Tuple[float, float]]:
    """A power meter's log: one sample per line, ``TIME,WATTS`` (TIME in Unix
    seconds, as the probe's job windows; commas, semicolons or spaces between,
    extra columns ignored); a header line, blank lines and ``#`` comments are
    skipped. ProbeError names the line that is neither."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ProbeError(f"--power-log {path}: cannot read it ({e})") from None
    out: List[Tuple[float, float]] = []
    first = True
    for n, line in enumerate(text.splitlines(), 1):
        s = line.split("#", 1)[0].strip()
        if not s:
            continue
        cells = [c for c in s.replace(";", ",").replace("\t", ",").replace(" ", ",").split(",") if c]
        try:
            t, w = float(cells[0]), float(cells[1])
        except (IndexError, ValueError):
            if first:
                first = False
                continue  # the header
            raise ProbeError(f"--power-log {path}, line {n}: {line.strip()[:60]!r} is not 'TIME,WATTS' (Unix seconds, "
                             "watts)") from None
        if not (t > 0 and 0 <= w < 1000):
            raise ProbeError(f"--power-log {path}, line {n}: time {t} s and {w} W: a Unix time and 0-1000 W allowed")
        first = False
        out.append((t, w))
    if not out:
        raise ProbeError(f"--power-log {path}: no samples (one 'TIME,WATTS' line per meter reading)")
    return sorted(out)


def _window_mean(samples: Sequence[Tuple[float, float]], start: float, end: float) -> Optional[float]:
    edge = (end - start) * METER_EDGE
    ws = [w for t, w in samples if start + edge <= t <= end - edge]
    return sum(ws) / len(ws) if ws else None


def apply_power_log(doc: Dict[str, Any], path: Union[str, Path]) -> Dict[str, Any]:
    """The probe document with a power meter's log applied: every job's
    average watts over its wall-clock window (``avg_w``; the middle 80%) and
    the idle draw (``power.idle_w``). A real target's probe only: ProbeError
    when the probe has no windows or the log covers none of them."""
    if doc["target"].get("kind") not in REAL_KINDS:
        raise ProbeError("--power-log: the probe ran on a simulated drive, whose power the probe read itself")
    window = (doc.get("power") or {}).get("idle_window_s")
    if not window:
        raise ProbeError("--power-log: the probe has no idle window (it ran no job that moves data, or an older "
                         "ssdlab made it): probe the target again")
    samples = read_power_log(path)
    idle_w = _window_mean(samples, float(window[0]), float(window[1]))
    if idle_w is None:
        raise ProbeError(f"--power-log {path}: its samples ({samples[0][0]:.0f}-{samples[-1][0]:.0f} s) do not cover "
                         f"the probe's idle window ({window[0]:.0f}-{window[1]:.0f} s, Unix time): log the whole probe")
    new: Dict[str, Any] = json.loads(json.dumps(doc))
    new["power"] = {"source": f"meter log {path}", "idle_w": idle_w, "idle_s": float(window[1]) - float(window[0]),
                    "idle_window_s": window}
    for j in new["jobs"]:
        f = j.get("figures") or {}
        if "wall_start_s" in f:
            w = _window_mean(samples, float(f["wall_start_s"]), float(f["wall_end_s"]))
            if w is not None:
                f["avg_w"] = w
    return new


def figures_of(doc: Mapping[str, Any]) -> Dict[str, Dict[str, Any]]:
    """The figures by job name of a probe document."""
    return {j["name"]: j["figures"] for j in doc.get("jobs", []) if j.get("figures")}


def capacity_of(doc: Mapping[str, Any]) -> Tuple[int, float]:
    return int(doc["target"]["capacity_bytes"]), float(doc.get("budget", 1.0))
