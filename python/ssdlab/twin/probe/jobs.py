"""The probe's job list: :func:`probe_jobs` for a target, and the job file that runs it. Each job is a
:class:`ProbeJob` (:mod:`.spec`): its name, its stage, the feature it reveals and why, its fio options and the
direction its figures come from. The jobs by stage: :mod:`.clean` (the clean stage), :mod:`.later` (the fill, the
write cache, the queues and the map cache); their names: :mod:`.names` (every name is also importable from here)."""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from ...errors import SsdlabError
from ...fio.guard import filename_value
from ...suite.fio import DATA_PATTERN_OPTIONS
from . import names
from .clean import clean_stage
from .later import cache_stage, fill_job, fill_stage, full_stage, queue_stage
from .names import *  # noqa: F403 (every job name stays importable from here)
from .names import CACHE, CLEAN, FILL, FULL, FULL_TAIL_SHARE, HOST, HOST_BUFFERS, QUEUES, STAGES, WHOLE_DRIVE_DEFAULT_MAX_S, GiB, MiB
from .spec import JobList, ProbeJob, Spans, align, cache_sizes, full_sizes

__all__ = ["ProbeJob", "probe_jobs", "default_stages", "jobfile_text", "cache_span_note", "full_stage_note", "host_buffer_job", *names.__all__]


def probe_jobs(capacity_bytes: int, budget: float = 1.0, trim: bool = True,
               stages: Sequence[str] = STAGES, full: bool = True, cache_written: Optional[int] = None) -> List[ProbeJob]:
    """The probe for a target of ``capacity_bytes`` (``budget``: factor on
    runtimes and state-write sizes; ``trim``: the target accepts TRIM), the jobs of ``stages`` in the order they
    run: clean, the fill stage's whole-drive fill, the full stage (``full``: where the stages before it call for
    it), the rest of the fill stage (a short torture after the full stage), cache, queues. ``cache_written``: the
    bytes the cache fill wrote where it ended past its step, which the jobs after it follow."""
    if capacity_bytes < 256 * MiB:
        raise SsdlabError(f"the probe needs a target of at least 256 MiB; this one has {capacity_bytes:,} B")
    sp = Spans(capacity_bytes, float(budget))
    full = full and FULL in stages
    jobs = JobList()
    clean_stage(jobs, sp, trim)
    if FILL in stages:
        fill_job(jobs)
    if full:
        full_stage(jobs, sp, own_fill=FILL not in stages)
    fill_stage(jobs, sp, trim, after_full=full)
    cache_stage(jobs, sp, trim, cache_written)
    queue_stage(jobs, sp, cache_written)
    return [j for j in jobs if j.stage in stages]


def default_stages(capacity_bytes: int, write_bytes_per_s: float) -> Tuple[Tuple[str, ...], Optional[str]]:
    """The stages a real target's probe runs when ``--stages`` names none, and why where not all: the fill and the
    full stage (one whole-drive write between them) only where that write at ``write_bytes_per_s`` (the stated
    rate) takes at most :data:`WHOLE_DRIVE_DEFAULT_MAX_S`."""
    whole_s = capacity_bytes / write_bytes_per_s
    if whole_s <= WHOLE_DRIVE_DEFAULT_MAX_S:
        return STAGES, None
    return (CLEAN, CACHE, QUEUES), (
        f"the fill and full stages are left out by default on this target: a whole-drive write alone takes "
        f"{whole_s / 3600:,.1f} h at {write_bytes_per_s / 1e6:,.0f} MB/s (they run by default where it takes at most "
        f"{WHOLE_DRIVE_DEFAULT_MAX_S / 60:.0f} min); without them the twin's spare area, GC onset, steady state, "
        "buffer on a flush, idle recovery, TRIM response and native NAND on the full drive stay assumed. "
        "--stages clean,fill,cache,queues,full runs them")


def cache_span_note(capacity_bytes: int, budget: float) -> Optional[str]:
    """What the cache stage cannot write at this budget, said before the probe starts (None: nothing)."""
    fill, after, asked = cache_sizes(capacity_bytes, float(budget))
    if asked <= 0.75 * capacity_bytes:
        return None
    return (f"the cache fill would write {asked / 1e9:,.1f} GB at --budget {budget:g}, more than the "
            f"{0.75 * capacity_bytes / 1e9:,.1f} GB (75% of the capacity) it may: it writes {fill / 1e9:,.1f} GB, then "
            f"{after / 1e9:,.1f} GB after idle time")


def full_stage_note(capacity_bytes: int, budget: float, stages: Sequence[str] = STAGES) -> str:
    """What the full stage writes, said before it starts (with the fill stage's fill, more than the capacity)."""
    seq, rand = full_sizes(capacity_bytes, float(budget))
    fill = 0 if FILL in stages else capacity_bytes
    total = fill + seq + rand
    filled = (f"{fill / 1e9:,.1f} GB to fill the drive, " if fill else
              f"after the fill stage's {capacity_bytes / 1e9:,.1f} GB: ")
    return (f"the full-drive stage writes at most {total / 1e9:,.1f} GB ({filled}{seq / 1e9:,.1f} GB sequential and "
            f"up to {rand / 1e9:,.1f} GB of 128KB random writes, which end once their rate has stepped down and they "
            f"ran {FULL_TAIL_SHARE:g} x their time before it past the step) at --budget {budget:g}; with the fill, "
            f"{(capacity_bytes + seq + rand) / capacity_bytes:.2f} x the capacity")


def host_buffer_job(capacity_bytes: int) -> ProbeJob:
    """The host's own rate of generating incompressible buffers (fio's null engine: no I/O), run on a real target
    only: a drive whose incompressible writes reach it is bound by the host, not by its NAND, so the data-reduction
    jobs cannot tell a reducing drive from the host's cost of fresh buffers."""
    return ProbeJob(HOST_BUFFERS, HOST, "host's buffer generation rate",
                    "incompressible 128KB writes to fio's null engine (no device): the rate at which the host makes "
                    "fresh buffers; an incompressible write near it is host-bound", {"ioengine": "null", "rw": "write",
                    "bs": "128k", "size": align(min(1 * GiB, capacity_bytes // 16)),
                    **DATA_PATTERN_OPTIONS["incompressible"]}, "write")


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
