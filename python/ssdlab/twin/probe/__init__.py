"""``ssdlab probe``: one fixed list of diagnosis jobs, each with the internal
feature it reveals and why, run through fio on a real device or file, or on
a simulated drive (the same job file either way), then the features
extracted from what was measured (:mod:`ssdlab.twin.features`).

The jobs run in five stages. ``clean`` (after a TRIM of the whole target)
measures what a drive does before garbage collection: the write buffer
(bursts after idle), random and sequential writes and reads at several
queue depths and transfer sizes, data reduction, read-ahead, reads of
unwritten LBAs. ``fill`` fills the target, writes 4KB at random past its
capacity (garbage collection starts when the spare area is used up), and
measures a sequential write on the dirty drive, recovery by idle time, and
a sequential write after a full TRIM. ``cache`` measures a write cache
(a long write after a TRIM, and again after idle time); ``queues`` (reads
only, last) how reads scale over fio jobs and depth (NVMe's queue pairs, the
link's PCIe generation) and the map cache (QD1 reads over growing spans).
``full``, where the clean stage and the fill show a modern drive (an NVMe link or a write cache), runs right
after the fill stage's whole-drive fill, before its torture (one whole-drive write serves both), and measures the
native NAND on the full drive (no dynamic cache left) and the spare area from 128KB random writes past it, written
in segments that end a bounded time after the rate steps down (:mod:`.segments`). A real target above 360 GB runs
neither whole-drive stage unless ``--stages`` names them (:func:`.jobs.default_stages`). The fit of a twin
(:mod:`ssdlab.twin.fit`) simulates the ``clean`` stage many times; the
``fill`` stage sets the spare area and the state behaviours directly.

Layout of ``--out DIR``: ``probe.json`` (the target, every job with its
feature and figures, the features, wall time, manifest), ``fio/probe.fio``
(the job file as run up to the fill) and ``fio/probe.json`` (fio's JSON), the full stage's
``fio/probe-full.*`` and its random writes' segments ``fio/probe-full-sNN.*`` where it ran, the rest in
``fio/probe-rest.*`` (on a modern drive the cache writes' segments ``fio/cache-fill-sNN.*`` and
``fio/cache-after-idle-sNN.*``, then ``fio/probe-queues.*``), and the fio logs under ``fio/`` (on a real target one run per job, each in its own
directory).

The modules: :mod:`.jobs` (the job list and its fio job file), :mod:`.names`
(the stages and job names), :mod:`.spec` (a job as data, the spans), :mod:`.segments` (writes in segments),
:mod:`.clean` and :mod:`.later` (the jobs by stage), :mod:`.run` (running
them), :mod:`.document` (probe.json and power logs).
"""

from __future__ import annotations

from .document import (
                       PROBE_SCHEMA,
                       PROBE_SCHEMA_VERSION,
                       REAL_KINDS,
                       ProbeError,
                       apply_power_log,
                       capacity_of,
                       figures_of,
                       load_probe,
                       probe_document,
                       read_power_log,
                       save_probe,
)
from .jobs import (
    BUDGETS,
    CACHE,
    CLEAN,
    FILL,
    FULL,
    QUEUES,
    STAGES,
    GiB,
    KiB,
    MiB,
    ProbeJob,
    default_stages,
    jobfile_text,
    probe_jobs,
)
from .run import IDLE_POWER_S, ProbeRun, job_figures, phase_power, run_probe_device, run_probe_simulated

__all__ = ["ProbeJob", "PROBE_SCHEMA", "probe_jobs", "default_stages", "STAGES", "jobfile_text", "run_probe_simulated", "run_probe_device",
           "ProbeRun", "job_figures", "CLEAN", "FILL", "CACHE", "QUEUES", "FULL", "BUDGETS", "probe_document", "save_probe", "load_probe",
           "figures_of", "capacity_of", "ProbeError", "PROBE_SCHEMA_VERSION", "REAL_KINDS", "phase_power",
           "apply_power_log", "read_power_log", "IDLE_POWER_S", "KiB", "MiB", "GiB"]
