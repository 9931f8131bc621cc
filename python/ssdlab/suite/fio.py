"""The fio backend's shared half: a test description (``definitions.TESTS``,
its states' phases from :mod:`ssdlab.suite.states`) rendered as fio job
sections, one per phase and step, each behind a ``stonewall``. The same data
the simulator runner interprets; :func:`to_fio_jobfile` prints it as a job file
(``ssdlab test ID --fio``) and ``ssdlab review --device``
(:mod:`ssdlab.backends.fio_runner`) runs it on a real target.

Data patterns follow docs/methodology.md: incompressible = ``refill_buffers=1``;
repeated = ``scramble_buffers=0`` without refill; compressible =
``buffer_compress_percentage=P`` with ``refill_buffers=1``; zeros =
``zero_buffers=1``. TRIM is fio's trim workload (``rw=trim``); an idle step is
a ``startdelay`` of the next section (a measured idle: a section that only
waits). Two phases are not fio options, and a job file says so in comments
rather than running a command whose failure fio would not report: the ATA
secure erase that starts every state (section kind ``secure_erase``), and a
Storage Bench replay (kind ``replay``), whose iolog ssdlab writes for the
target it replays on (:mod:`ssdlab.fio.iolog`).

A printed job file names each measured section's test, run and step in its
``description`` (fio's JSON keeps it), so that the JSON of a run made by hand
joins a review (``ssdlab fio-import``).

Sizes and times are as the description writes them, or resolved for a
target of known capacity under a scale (:class:`ScaleSizes`, the same
arithmetic as :class:`ssdlab.backends.sim_runner.SuiteRunner`: absolute sizes
scaled and cut to the target, 4 KiB-aligned; runtimes scaled).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

from .. import _core
from ..fio.guard import filename_value
from .scale import ScaleSizes
from .source import paced_by_source
from .states import DEFAULT_DATA_PATTERN, phases, tortured_at
from .vocabulary import Size, State, SuiteTest

__all__ = ["to_fio_jobfile", "fio_sections", "measured_description", "parse_measured_description", "data_options",
           "trim_options", "FioSection", "ScaleSizes", "DATA_PATTERN_OPTIONS", "TRIM_OPTIONS", "SECURE_ERASE_HINT",
           "secure_erase_hint"]

#: fio options per data pattern (docs/methodology.md "Data patterns").
DATA_PATTERN_OPTIONS: Dict[str, Dict[str, Any]] = {
    "incompressible": {"refill_buffers": 1},
    "repeated": {"scramble_buffers": 0},
    "compressible": {"refill_buffers": 1, "buffer_compress_percentage": 90},
    "zeros": {"zero_buffers": 1},
}

#: A TRIM of a span: fio's trim workload in 128 MiB discards.
TRIM_OPTIONS: Dict[str, Any] = {"rw": "trim", "bs": "128m"}

#: What a printed job file says where the drive must be secure-erased: the
#: ATA command for a SATA drive, an NVMe format with user-data erase for an
#: NVMe one (by its device name), both when the target is not named.
SECURE_ERASE_HINT = ("secure-erase the drive here, before the next section: fio cannot (SATA: "
                     "hdparm --user-master u --security-set-pass p DEV && hdparm --user-master u --security-erase p DEV; "
                     "NVMe: nvme format DEV --ses=1)")
_SATA_ERASE_HINT = ("ATA SECURITY ERASE the drive here, before the next section: fio cannot (e.g. "
                    "hdparm --user-master u --security-set-pass p DEV && hdparm --user-master u --security-erase p DEV)")
_NVME_ERASE_HINT = ("format the namespace with a user-data erase here, before the next section: fio cannot "
                    "(e.g. nvme format DEV --ses=1)")


def secure_erase_hint(device: Optional[str]) -> str:
    """The secure-erase comment for the target ``device`` (None: not named)."""
    if device is None:
        return SECURE_ERASE_HINT
    return _NVME_ERASE_HINT if re.match(r"^/dev/nvme\d", device) else _SATA_ERASE_HINT

_WRITES = ("write", "randwrite", "rw", "randrw", "readwrite")


def data_options(pattern: str) -> Dict[str, Any]:
    """fio options of a data pattern (``ratio:R`` = compressible to R of its size)."""
    if pattern.startswith("ratio:"):
        pct = int(round(100 * (1 - float(pattern.split(":", 1)[1]))))
        return {"refill_buffers": 1, "buffer_compress_percentage": pct}
    return dict(DATA_PATTERN_OPTIONS[pattern])


@dataclass(frozen=True)
class FioSection:
    """One section of a test's job file: ``name`` (unique in the test),
    fio ``options``, the ``run`` and ``step`` it comes from (``step`` None
    for a phase of the run's starting state), its ``kind`` (``job``,
    ``trim``, ``secure_erase``, ``idle``, ``replay``: the last three carry no
    fio workload), the ``measure`` label of a measured step, and ``about``
    (the phase's name in results)."""

    name: str
    options: Dict[str, Any]
    run: int
    step: Optional[int]
    kind: str
    measure: Optional[str] = None
    about: str = ""
    x: Optional[Union[int, float]] = None
    line: Optional[str] = None


def _name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.+-]+", "-", text).strip("-") or "job"


def trim_options(span: Optional[Size], sizes: Optional[ScaleSizes]) -> Dict[str, Any]:
    """A TRIM of ``span`` (None: the whole target): 128 MiB discards, fewer
    bytes when the span (known under ``sizes``) is smaller."""
    opts: Dict[str, Any] = dict(TRIM_OPTIONS)
    if sizes is not None:
        whole = span if isinstance(span, int) else sizes.capacity_bytes
        opts["bs"] = max(4096, min(128 << 20, whole - whole % 4096))
    if span is not None:
        opts["size"] = span
    return opts


def _state_sections(state: Mapping[str, Any], run: int, step: Optional[int], span: Optional[Size],
                    sizes: Optional[ScaleSizes]) -> List[FioSection]:
    region: Dict[str, Any] = {"size": span} if span is not None else {}
    out: List[FioSection] = []
    for p in phases(state):
        if p.kind == "secure_erase":
            out.append(FioSection(p.fio_section, dict(region), run, step, "secure_erase", about=p.name))
        elif p.kind == "trim":
            out.append(FioSection(p.fio_section, trim_options(span, sizes), run, step, "trim", about=p.name))
        else:
            job = dict(p.job)
            pattern = job.pop("data_pattern", DEFAULT_DATA_PATTERN)
            job.pop("time_based", None)
            if "runtime" in job:  # the torture: time based, scaled
                job["runtime"] = sizes.torture_runtime() if sizes is not None else job["runtime"]
                job["time_based"] = 1
            # else one pass over the span (fio's default for a job without time_based)
            out.append(FioSection(p.fio_section, {**job, **region, **data_options(pattern)}, run, step, "job", about=p.name))
    return out


def _job_options(step: Mapping[str, Any], span: Optional[Size], sizes: Optional[ScaleSizes],
                 steady: bool = False) -> Dict[str, Any]:
    opts = {k: v for k, v in step.items() if k not in ("measure", "x", "line", "data_pattern", "name")}
    if sizes is not None:
        for key in ("size", "io_size"):
            if key in opts:
                opts[key] = sizes.size(opts[key], key)
        if "runtime" in opts:
            opts["runtime"] = sizes.runtime(opts["runtime"], steady)
        if "log_avg_msec" in opts:
            opts["log_avg_msec"] = sizes.log_avg_msec(int(opts["log_avg_msec"]), step, steady)
    if opts.get("rw") in _WRITES:
        opts.update(data_options(step.get("data_pattern", DEFAULT_DATA_PATTERN)))
    if "runtime" in opts and "io_size" not in opts:
        opts["time_based"] = 1  # run for the runtime (wrapping), not one pass
    if span is not None and "size" not in opts:
        opts["size"] = span
    if "source" in opts:
        # a copy from another drive: the writes paced by the source's read rate, as on the simulator
        size = opts.get("io_size") or opts.get("size")
        opts, _ = paced_by_source(opts, size if isinstance(size, int) else int(_core.parse_size_bytes(str(size), 0, "size")))
    return opts


def fio_sections(test: SuiteTest, sizes: Optional[ScaleSizes] = None) -> List[FioSection]:
    """Every phase and step of ``test`` as fio sections, in order. With
    ``sizes`` the sizes are bytes and the times scaled (a target of known
    capacity); without, as the description writes them."""
    out: List[FioSection] = []
    used: Dict[str, int] = {}

    def add(sec: FioSection) -> None:
        base = f"run{sec.run}-{_name(sec.name)}"
        n = used.get(base, 0)
        used[base] = n + 1
        out.append(FioSection(base if n == 0 else f"{base}-{n + 1}", sec.options, sec.run, sec.step, sec.kind,
                              sec.measure, sec.about, sec.x, sec.line))

    for ri, run in enumerate(test["runs"]):
        state: State = run["state"]
        span_v = state.get("span")
        span: Optional[Size] = sizes.size(span_v, "span") if sizes is not None else span_v
        for sec in _state_sections(state, ri, None, span, sizes):
            add(sec)
        delay = 0.0
        tortured = tortured_at(state, run["steps"])  # a timed job on the tortured drive: Scale.steady_time_scale
        for si, step in enumerate(run["steps"]):
            action = step.get("action")
            label = step.get("measure")
            name = str(label or action or step.get("rw", "job"))
            if action == "idle":
                secs = float(step["seconds"])
                if sizes is not None and not step.get("unscaled"):
                    secs = sizes.seconds(secs)
                if label is None:
                    delay += secs
                    continue
                add(FioSection(name, {"rw": "read", "size": 4096, "io_size": 4096, "startdelay": f"{delay + secs:g}s"},
                               ri, si, "idle", label, f"idle {secs:g} s"))
                delay = 0.0
                continue
            if action == "precondition":
                for sec in _state_sections({"state": step["state"]}, ri, si, span, sizes):
                    add(sec)
                continue
            if action == "trim":
                sec = FioSection(name, trim_options(span, sizes), ri, si, "trim", label, "TRIM")
            elif action == "replay":
                replay: Mapping[str, Any] = step
                opts = {k: replay[k] for k in ("generated", "mode", "idle_cap", "iodepth") if k in replay}
                sec = FioSection(name, opts, ri, si, "replay", label, f"replay {step['generated']}")
            else:
                sec = FioSection(name, _job_options(step, span, sizes, tortured[si]), ri, si, "job", label, name,
                                 step.get("x"), step.get("line"))
            if delay:
                sec.options["startdelay"] = f"{delay:g}s"
                delay = 0.0
            add(sec)
    return out


def to_fio_jobfile(test: SuiteTest, device: Optional[str] = None, sizes: Optional[ScaleSizes] = None) -> str:
    """fio job file text for one test description (sections run in order).
    ``device``: the ``filename=`` of its ``[global]`` section (None: none, the
    target is given when it runs). The secure erase and Storage Bench replays
    are comments: see the module's docstring."""
    lines = [f"; ssdlab test {test['id']}: {test['title']}",
             "; generated from ssdlab.suite.definitions; sizes: k/m/g = 1024-based",
             "; 'ssdlab review --device FILE_OR_DEV' runs it safely (it checks the target, TRIMs or skips what fio cannot do)",
             "[global]"]
    if device is not None:
        lines.append(f"filename={filename_value(device, '--filename')}")
    lines += ["ioengine=libaio", "direct=1", "group_reporting=1", "stonewall=1", "write_iops_log=ssdlab", "write_bw_log=ssdlab",
              "log_avg_msec=1000", ""]
    run = -1
    for sec in fio_sections(test, sizes):
        if sec.run != run:
            run = sec.run
            changes = test["runs"][run].get("drive")
            if changes:  # e.g. the 3Gbps link: set the device up so before this run
                lines += [f"; run{run}: with the drive changed: " + ", ".join(f"{k}={v}" for k, v in changes.items()), ""]
        if sec.kind == "secure_erase":
            lines += [f"; [{sec.name}] {secure_erase_hint(device)}", ""]
            continue
        if sec.kind == "replay":
            lines += [f"; [{sec.name}] Storage Bench replay of {sec.options['generated']}: not a job of this file. "
                      "'ssdlab review --device' writes its iolog, fitted to the target, and replays it with fio's read_iolog "
                      f"(or: ssdlab trace generate {sec.options['generated']} --out {sec.options['generated']}.iolog --capacity SIZE)", ""]
            continue
        lines.append(f"[{sec.name}]")
        if sec.measure is not None:  # 'ssdlab fio-import' finds the measured step in fio's JSON by it
            lines.append(f"description={measured_description(test['id'], sec.run, sec.step)}")
        lines += [f"{k}={v}" for k, v in sec.options.items()]
        lines.append("")
    return "\n".join(lines)


def measured_description(test_id: str, run: int, step: Optional[int]) -> str:
    """The ``description`` of a measured section in a printed job file
    (fio's JSON keeps it as ``desc``): ``ssdlab:TEST:RUN:STEP``."""
    return f"ssdlab:{test_id}:{run}:{step}"


def parse_measured_description(desc: str) -> Optional[Tuple[str, int, int]]:
    """(test id, run, step) of a :func:`measured_description`, else None."""
    parts = desc.split(":")
    if len(parts) != 4 or parts[0] != "ssdlab" or not parts[2].isdigit() or not parts[3].isdigit():
        return None
    return parts[1], int(parts[2]), int(parts[3])
