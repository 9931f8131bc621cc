"""The fio backend's first half: a test description rendered as an fio job
file for a real device (nothing is run). The same data the simulator runner
interprets becomes fio sections, one per step, each behind a ``stonewall``.

Data patterns follow METHODOLOGY.md: incompressible = ``refill_buffers=1``;
repeated = ``scramble_buffers=0`` without refill; compressible =
``buffer_compress_percentage=P`` with ``refill_buffers=1``; zeros =
``zero_buffers=1``. Preconditioning that fio cannot do itself (ATA secure
erase) is an ``exec_prerun`` of ``hdparm``; TRIM is ``rw=trim``; idle is a
``startdelay`` of the next step; a Storage Bench step replays the iolog written
by ``ssdlab trace generate WORKLOAD --out WORKLOAD.iolog``.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Tuple

from .states import DEFAULT_DATA_PATTERN, phases
from .vocabulary import Size, State, SuiteTest

__all__ = ["to_fio_jobfile", "DATA_PATTERN_OPTIONS"]

#: fio options per data pattern (METHODOLOGY.md "Data patterns").
DATA_PATTERN_OPTIONS: Dict[str, Dict[str, Any]] = {
    "incompressible": {"refill_buffers": 1},
    "repeated": {"scramble_buffers": 0},
    "compressible": {"refill_buffers": 1, "buffer_compress_percentage": 90},
    "zeros": {"zero_buffers": 1},
}

Section = Tuple[str, Dict[str, Any]]


def _data(pattern: str) -> Dict[str, Any]:
    if pattern.startswith("ratio:"):
        pct = int(round(100 * (1 - float(pattern.split(":", 1)[1]))))
        return {"refill_buffers": 1, "buffer_compress_percentage": pct}
    return dict(DATA_PATTERN_OPTIONS[pattern])


def _state_sections(state: State, device: str, span: Optional[Size]) -> List[Section]:
    """The phases of a state (:mod:`ssdlab.suite.states`) as fio sections."""
    region = {"size": span} if span else {}
    out: List[Section] = []
    for p in phases(state):
        if p.kind == "secure_erase":
            out.append((p.fio_section, {"rw": "read", "size": "4k", "exec_prerun":
                                        f"hdparm --user-master u --security-set-pass p {device} && "
                                        f"hdparm --user-master u --security-erase p {device}"}))
        elif p.kind == "trim":
            out.append((p.fio_section, {"rw": "trim", "bs": "128m", **region}))
        else:
            job: Mapping[str, Any] = p.job
            opts = {k: v for k, v in job.items() if k != "data_pattern"}
            out.append((p.fio_section, {**opts, **region, **_data(job.get("data_pattern", DEFAULT_DATA_PATTERN))}))
    return out


def to_fio_jobfile(test: SuiteTest, device: str = "/dev/sdX") -> str:
    """fio job file text for one test description (runs execute in order)."""
    lines = [f"; ssdlab test {test['id']}: {test['title']}", "; generated from ssdlab.suite.definitions; sizes: k/m/g = 1024-based",
             "[global]", f"filename={device}", "ioengine=libaio", "direct=1", "group_reporting=1", "stonewall=1",
             "write_iops_log=ssdlab", "log_avg_msec=1000", ""]
    for ri, run in enumerate(test["runs"]):
        if run.get("drive"):  # e.g. the 3Gbps link: set up the device so before this run
            lines.append(f"; run{ri}: with the drive changed: " + ", ".join(f"{k}={v}" for k, v in run["drive"].items()))
        span = run["state"].get("span")
        sections = _state_sections(run["state"], device, span)
        delay = 0.0
        for step in run["steps"]:
            action = step.get("action")
            label = step.get("measure", action or step.get("rw"))
            if action == "idle":
                delay += float(step["seconds"])
                if "measure" in step:  # measured idle: a job that only waits
                    sections.append((f"{label}", {"rw": "read", "size": "4k", "startdelay": f"{step['seconds']}s"}))
                    delay = 0.0
                continue
            if action == "trim":
                opts: Dict[str, Any] = {"rw": "trim", "bs": "128m", **({"size": span} if span else {})}
            elif action == "precondition":
                sections += _state_sections({"state": step["state"]}, device, span)
                continue
            elif action == "replay":
                opts = {"read_iolog": f"{step['generated']}.iolog", "replay_redirect": device, "iodepth": 32}
            else:
                opts = {k: v for k, v in step.items() if k not in ("measure", "x", "line", "data_pattern")}
                if opts["rw"] in ("write", "randwrite", "rw", "randrw"):
                    opts.update(_data(step.get("data_pattern", DEFAULT_DATA_PATTERN)))
                if "runtime" in opts and "io_size" not in opts:
                    opts["time_based"] = 1  # run for the runtime (wrapping), not one pass
                if span and "size" not in opts:
                    opts["size"] = span
            if delay:
                opts["startdelay"] = f"{delay:g}s"
                delay = 0.0
            sections.append((str(label), opts))
        for name, opts in sections:
            lines.append(f"[run{ri}-{name.replace(' ', '-').replace(',', '')}]")
            lines += [f"{k}={v}" for k, v in opts.items()]
            lines.append("")
    return "\n".join(lines)
