"""The fio backend: the review suite on a real drive through fio (``ssdlab review --device``).

The same test descriptions the simulator runs (``definitions.TESTS``, their
states' phases, rendered by :mod:`ssdlab.suite.fio`) run with fio on a block
device or on a test file ssdlab creates, and their results are written in the
same schema (docs/results-schema.md) so that ``ssdlab report`` draws real and
simulated drives in the same charts. The drive of such results has
``"kind": "real"`` (the report marks it) and an id starting ``real-``.

How the pieces map onto fio:

- the target is checked first (:func:`ssdlab.fio.safety.check_target`: a
  mounted, busy or read-only device is refused, one holding data only with
  ``--destroy-data`` naming it); a file target is one file ssdlab creates at
  the start (``--size``, by default 1 GiB or half the free space when that is
  less) and removes at the end, whatever happens;
- each phase and step of a test (a section of :func:`ssdlab.suite.fio.fio_sections`)
  is one fio run, in order, so that a failing phase stops the test at once
  (``ioengine=libaio``, ``direct=1`` unless the file system refuses
  O_DIRECT, ``norandommap`` as the simulator draws offsets, ``randseed`` from
  ``--seed``); measured steps log IOPS and bandwidth per ``log_avg_msec``
  (1 s unless the step says), which become the per-interval series of the
  results at fio's own sample times (:func:`log_series`);
- the secure erase that starts every state is not something fio can do: on a
  block device that accepts discard it is replaced by a TRIM of the span
  (fio's trim workload), elsewhere left out (the fill that follows writes the
  whole span); tests that measure a secure-erased drive (runs from the
  ``clean`` state) are skipped with the reason unless ``--clean-by-trim``
  accepts the TRIM instead on a device that has it;
- tests that need TRIM (a TRIM step or the ``trimmed`` state) are skipped on a
  target without it (a file), the power test everywhere (fio measures no
  power); the reason is recorded in the results (``skipped``) and shown in the
  report;
- a Storage Bench step replays the generated trace as an fio iolog written
  for this target (:mod:`ssdlab.fio.iolog`: placed on its capacity, aligned,
  idle gaps cut to the playback's cap, TRIM records dropped on fio < 3.34 with
  a note), in its own fio run; the busy time comes from the kernel's disk
  statistics fio reports (``disk_util``), which count all I/O to that disk.

A test fio fails in (an error of a job, e.g. a TRIM the device refuses) is
recorded as not run, with fio's error, and the review goes on.

Ctrl-C and SIGTERM stop fio (it writes what ran) and end the review: tests
that finished are saved (each as soon as it finishes), the one running is
not. fio's job files, JSON and logs of every phase are kept in
``OUT/fio/<drive>/<test>/NN-<section>/``.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, TextIO, Tuple

from ..fio.guard import filename_value
from ..fio.parse import FioResult, JobResult
from ..fio.run import FileTarget, FioRun, iolog_trim_problem, run_fio
from ..fio.safety import SystemView
from ..interrupt import sigterm_interrupts
from ..results import manifest as _manifest
from ..results import save_document, write_figures_csv
from ..results.documents import SCHEMA_VERSION, TEST_RESULT_SCHEMA
from ..suite import summary as _summary
from ..suite.definitions import get_test
from ..suite.fio import FioSection, fio_sections, trim_options
from ..suite.scale import FULL, Scale, ScaleSizes
from ..suite.vocabulary import Measured, SuiteTest
from .fio_results import disk_stat, disk_util, log_series, phase_from_fio, storage_bench_busy
from .fio_target import DeviceTarget, OpenedTarget, direct_io_works, open_target, skip_reason, target_drive_info
from .jobs import job_doc


class DeviceReviewInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM stopped the review: ``saved`` are the results files of
    the tests that finished (or were skipped) before."""

    def __init__(self, saved: Sequence[str]) -> None:
        super().__init__("interrupted")
        self.saved = list(saved)


class _TestFailed(Exception):
    """fio failed in a test: the test is recorded as not run, with why."""


@dataclass
class DeviceReview:
    """A finished device review: the results files, how many tests ran and
    were skipped, the target as given, the wall time."""

    target: str
    saved: List[str]
    ran: int
    skipped: int
    wall_time_s: float


def _header(t: DeviceTarget, with_file: bool) -> List[str]:
    lines = ["[global]"]
    if with_file:
        lines.append(f"filename={filename_value(t.filename, 'device target')}")
        if not t.is_block:
            lines.append(f"size={t.capacity_bytes}")
    lines += ["ioengine=libaio", f"direct={int(t.direct)}", "group_reporting=1", "norandommap=1", "randrepeat=0",
              f"randseed={t.seed}", ""]
    return lines


def _section_text(sec: FioSection, logs: Optional[str]) -> List[str]:
    lines = [f"[{sec.name}]", "stonewall"]
    opts = dict(sec.options)
    if logs:
        opts.setdefault("log_avg_msec", 1000)
        opts["write_iops_log"] = logs
        if opts.get("rw") not in ("trim", "randtrim"):
            opts["write_bw_log"] = logs
    lines += [f"{k}={v}" for k, v in opts.items()]
    lines.append("")
    return lines


def _failure(run: FioRun, what: str) -> str:
    bad = [j for j in run.result.jobs if j.error] if run.result is not None else []
    if bad:
        return "fio failed in " + ", ".join(f"{j.name}: error {j.error} ({os.strerror(j.error)})" for j in bad)
    tail = " | ".join(ln.strip() for ln in run.stderr.strip().splitlines()[-2:]) or f"exit status {run.returncode}"
    return f"fio failed running {what}: {tail}"


def _check_run(run: FioRun, what: str) -> FioResult:
    """The run's result, or _TestFailed saying what failed (KeyboardInterrupt
    when it was stopped by a signal)."""
    if run.interrupted:
        raise KeyboardInterrupt()
    if run.result is None:
        raise _TestFailed(f"fio wrote no results for {what}")
    if any(j.error for j in run.result.jobs) or run.returncode not in (0, None):
        raise _TestFailed(_failure(run, what))
    return run.result


def _run_jobs(t: DeviceTarget, sections: List[FioSection], workdir: Path, measured_logs: Dict[str, str]) -> FioResult:
    text = _header(t, True)
    for sec in sections:
        text += _section_text(sec, measured_logs.get(sec.name))
    run = run_fio("\n".join(text), workdir, fio=t.fio)
    return _check_run(run, f"{workdir / 'ssdlab.fio'}")


def _run_replay(t: DeviceTarget, sec: FioSection, workdir: Path, notes: List[str]) -> Tuple[JobResult, Dict[str, Any]]:
    from ..fio.iolog import write_storage_bench_iolog
    from ..fio.jobfile import parse_time_ns

    workdir.mkdir(parents=True, exist_ok=True)
    workload = str(sec.options["generated"])
    log = workdir / f"{workload}.iolog"
    trim_problem = iolog_trim_problem(t.version)
    cap = sec.options.get("idle_cap")
    cap_us = parse_time_ns(str(cap)) // 1000 if cap not in (None, "none") else None
    st = write_storage_bench_iolog(workload, log, target_bytes=t.capacity_bytes, seed=t.seed, filename=t.filename,
                                   align_bytes=t.align_bytes, trims="drop" if trim_problem else "keep", idle_cap_us=cap_us)
    if st.dropped_trims:
        notes.append(f"{workload}: {st.dropped_trims:,} TRIM records dropped: {trim_problem}")
    if st.adjusted:
        notes.append(f"{workload}: {st.adjusted:,} I/Os moved or aligned to fit the {t.capacity_bytes:,} B target")
    opts: Dict[str, Any] = {"read_iolog": str(log), "iodepth": int(sec.options.get("iodepth", 32))}
    if sec.options.get("mode") == "as-fast-as-possible":
        opts["replay_no_stall"] = 1
    replay = FioSection(sec.name, opts, sec.run, sec.step, "replay", sec.measure, sec.about)
    text = _header(t, False) + _section_text(replay, "m")
    before = disk_stat(t.disk)
    try:
        run = run_fio("\n".join(text), workdir, fio=t.fio)
    finally:
        log.unlink(missing_ok=True)  # big, and rewritten from the seed when needed
    after = disk_stat(t.disk)
    result = _check_run(run, sec.name)
    job = result.job(sec.name)
    ticks = tuple(a - b for a, b in zip(after, before)) if before is not None and after is not None else None
    sb, note = storage_bench_busy(job, disk_util(run.json_path, t.disk), ticks, t.disk)  # type: ignore[arg-type]
    if note:
        notes.append(f"{workload}: {note}")
    else:
        notes.append(f"{workload}: busy time from the kernel's statistics of {sb['disk']} ({sb['busy_time_from']}), "
                     "which count all I/O to that disk")
    info = {"records": st.records, "reads": st.reads, "writes": st.writes, "trims": st.trims, "dropped_trims": st.dropped_trims,
            "duration_us": st.duration_us, "idle_cap_us": cap_us}
    return job, {"storage_bench": sb, "iolog": info}


def _prepare(t: DeviceTarget, sections: List[FioSection], notes: List[str], sizes: ScaleSizes) -> List[FioSection]:
    """The secure erase phases as this target can do them: a TRIM of the span
    where it accepts discard, else left out (with a note)."""
    out: List[FioSection] = []
    for sec in sections:
        if sec.kind == "secure_erase":
            if t.caps.trim is None:
                out.append(FioSection(sec.name, trim_options(sec.options.get("size"), sizes), sec.run, sec.step, "trim", None, sec.about))
                msg = "secure erase replaced by a TRIM of the span (ssdlab issues no ATA SECURITY ERASE)"
            else:
                msg = "secure erase left out (this target can neither be erased nor trimmed); the fill writes the whole span"
            if msg not in notes:
                notes.append(msg)
            continue
        out.append(sec)
    return out


def run_device_test(test: SuiteTest, t: DeviceTarget, scale: Scale, workdir: Path) -> Dict[str, Any]:
    """Run one test on the target; the runner's output shape (``test``,
    ``skipped``, ``figures``, ``charts``, ``jobs``, ...) plus ``notes`` and
    ``target``. Raises KeyboardInterrupt when stopped, _TestFailed when fio fails."""
    t0 = time.perf_counter()
    sizes = ScaleSizes(t.capacity_bytes, scale)
    notes: List[str] = list(t.notes)
    sections = _prepare(t, fio_sections(test, sizes), notes, sizes)
    measured: List[Measured] = []
    job_docs: List[Dict[str, Any]] = []
    # One fio run per section: a failure stops the test at once (fio 3.33
    # would run the jobs behind later stonewalls, exitall_on_error or not),
    # and each part keeps its job file, JSON and logs.
    for i, sec in enumerate(sections):
        part = workdir / f"{i:02d}-{sec.name}"
        w0 = time.perf_counter()
        if sec.kind == "replay":
            job, extra = _run_replay(t, sec, part, notes)
            r = phase_from_fio(job, str(sec.measure or sec.name), "replay", log_series(part, "m"))
            r.data.update(extra)
            jd: Dict[str, Any] = {"action": "replay", **sec.options}
        else:
            result = _run_jobs(t, [sec], part, {sec.name: "m"} if sec.measure is not None else {})
            if sec.measure is None:
                continue
            kind = {"trim": "trim", "idle": "idle"}.get(sec.kind, "workload")
            r = phase_from_fio(result.job(sec.name), sec.measure, kind, log_series(part, "m"))
            jd = dict(sec.options)
        if sec.measure is None:
            continue
        m: Measured = {"run": sec.run, "step": sec.step if sec.step is not None else -1, "label": sec.measure,
                       "x": sec.x, "line": sec.line, "job": jd, "result": r}
        measured.append(m)
        job_docs.append(job_doc(m, time.perf_counter() - w0))
    figures, charts = _summary.summarise(test, measured, scale)
    return {
        "test": test,
        "skipped": None,
        "profile": scale.name,
        "only_measures": None,
        "figures": figures,
        "charts": charts,
        "jobs": job_docs,
        "wall_time_s": round(time.perf_counter() - t0, 3),
        "notes": notes,
    }


class FioBackend:
    """fio on a real drive: ``target`` is a :class:`DeviceTarget` (checked and
    opened, :func:`.fio_target.open_target`); each test's fio files go under
    ``workdir(test id)``."""

    def __init__(self, scale: Scale, workdir: Callable[[str], Path]) -> None:
        self.scale, self.workdir = scale, workdir

    def run(self, test: SuiteTest, target: DeviceTarget) -> Dict[str, Any]:
        return run_device_test(test, target, self.scale, self.workdir(test["id"]))


def review_device(
    target: str,
    out_dir: str,
    test_ids: Sequence[str],
    *,
    scale: Scale = FULL,
    size_bytes: Optional[int] = None,
    destroy_data: Optional[str] = None,
    clean_by_trim: bool = False,
    fio: Optional[str] = None,
    seed: int = 1,
    command: str = "",
    stream: TextIO = sys.stderr,
    view: Optional[SystemView] = None,
) -> DeviceReview:
    """Run ``test_ids`` on ``target`` with fio, saving each test's results
    document (``OUT/results/<drive>/<test>.json``, figures.csv) as it
    finishes or is skipped. Raises UnsafeTargetError (with the flag that would
    allow the target), FioNotFoundError, SsdlabError for a bad size, and
    DeviceReviewInterrupted (with what was saved) on Ctrl-C or SIGTERM."""
    t_start = time.perf_counter()
    opened = open_target(target, size_bytes=size_bytes, destroy_data=destroy_data, fio=fio, view=view)
    check, version, caps, directory, capacity = opened.check, opened.version, opened.caps, opened.directory, opened.capacity_bytes
    drive = target_drive_info(check, capacity, version, opened.view, directory)
    key = drive["id"]
    base, fio_dir = Path(out_dir) / "results" / key, Path(out_dir) / "fio" / key
    backend = FioBackend(scale, lambda test_id: fio_dir / test_id)
    tests = [get_test(tid) for tid in test_ids]
    saved: List[str] = []
    docs: List[Dict[str, Any]] = []
    ran = skipped = 0
    where = check.resolved if check.kind == "block" else f"a {capacity:,} B test file in {directory}"
    _say(stream, f"{len(tests)} tests on {where} with {version} as {key}")

    def save(test: SuiteTest, out: Dict[str, Any]) -> None:
        man = _manifest(seed=seed, drive_id=key, drive_hash=drive["hash"], command=command,
                        extra={"profile": scale.name, "test_id": test["id"], "fio_version": str(version),
                               "reproduce": _reproduce(target, test["id"], scale, size_bytes, clean_by_trim, seed)})
        doc = {"schema": TEST_RESULT_SCHEMA, "schema_version": SCHEMA_VERSION, "manifest": man, "drive": drive, **out}
        path = base / f"{test['id']}.json"
        save_document(doc, path)
        docs.append(doc)
        write_figures_csv(docs, base / "figures.csv")
        saved.append(str(path))

    try:
        with sigterm_interrupts(), (FileTarget(check.path, capacity) if check.kind != "block" else _nullpath(check.resolved)) as path:
            t = _device_target(opened, path, seed, clean_by_trim)
            for i, test in enumerate(tests):
                why = skip_reason(test, scale=scale, capacity_bytes=capacity, caps=caps, clean_by_trim=clean_by_trim,
                                  version=version)
                if why is not None:
                    save(test, _skip_doc(test, why, scale))
                    skipped += 1
                    _say(stream, f"[{key}] {i + 1}/{len(tests)} {test['id']} skipped: {why}")
                    continue
                _say(stream, f"[{key}] {i + 1}/{len(tests)} {test['id']} ...")
                t0 = time.perf_counter()
                wd = fio_dir / test["id"]
                if wd.exists():
                    shutil.rmtree(wd)
                try:
                    out = backend.run(test, t)
                except _TestFailed as e:
                    save(test, _skip_doc(test, str(e), scale))
                    skipped += 1
                    _say(stream, f"[{key}] {i + 1}/{len(tests)} {test['id']} not run: {e}")
                    continue
                out["target"] = {"capacity_bytes": capacity, "direct": t.direct, "fio_dir": str(wd)}
                save(test, out)
                ran += 1
                _say(stream, f"[{key}] {i + 1}/{len(tests)} {test['id']} done in {time.perf_counter() - t0:.1f} s; "
                             f"{time.perf_counter() - t_start:.1f} s wall")
    except KeyboardInterrupt:
        raise DeviceReviewInterrupted(saved) from None
    return DeviceReview(target, saved, ran, skipped, time.perf_counter() - t_start)


def _say(stream: TextIO, line: str) -> None:
    stream.write(f"ssdlab review: {line}\n")
    stream.flush()


def _device_target(opened: OpenedTarget, path: str, seed: int, clean_by_trim: bool) -> DeviceTarget:
    """The opened target as the tests run on it: buffered I/O, with a note, where its file system refuses O_DIRECT."""
    check = opened.check
    t = DeviceTarget(check, path, opened.capacity_bytes, opened.caps, opened.fio, opened.version, seed=seed,
                     clean_by_trim=clean_by_trim)
    if check.kind != "block" and not direct_io_works(path):
        t.direct = False
        t.notes.append(f"the file system of {opened.directory} refuses O_DIRECT: buffered I/O (direct=0), so the page "
                       "cache takes part in every figure")
    return t


def _skip_doc(test: SuiteTest, why: str, scale: Scale) -> Dict[str, Any]:
    """A test that did not run, as its output (``skipped``: why)."""
    return {"test": test, "skipped": why, "profile": scale.name, "only_measures": None, "figures": [], "charts": {},
            "jobs": [], "wall_time_s": 0.0}


@contextmanager
def _nullpath(path: str) -> Iterator[str]:
    yield path


def _reproduce(target: str, test_id: str, scale: Scale, size: Optional[int], clean_by_trim: bool, seed: int) -> str:
    out = f"ssdlab review --device {target} --tests {test_id} --seed {seed} --out DIR"
    if size is not None:
        out += f" --size {size}"
    if clean_by_trim:
        out += " --clean-by-trim"
    return out + (" --quick" if scale.name == "quick" else "")
