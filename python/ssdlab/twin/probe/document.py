"""probe.json: the document a probe writes (the target, every job with its
feature and figures, the features, wall time, manifest), loading it back
checked, and a power meter's log applied to a real target's probe."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple, Union, cast

from ...errors import SsdlabError
from ...outputs import write_text
from ..records import Feature, Figures, ProbeDoc
from .run import ProbeRun

__all__ = ["PROBE_SCHEMA", "PROBE_SCHEMA_VERSION", "REAL_KINDS", "ProbeError", "probe_document", "save_probe", "load_probe",
           "read_power_log", "apply_power_log", "figures_of", "capacity_of"]

PROBE_SCHEMA = "ssdlab.probe"
PROBE_SCHEMA_VERSION = 1
#: probe.json target kinds measured through fio.
REAL_KINDS = ("block", "file")
#: Share of a job's wall-clock window left out at each end when a meter log is averaged over it (fio's start-up
#: and the meter's own averaging straddle the edges).
METER_EDGE = 0.1


class ProbeError(SsdlabError):
    """A probe directory or document that cannot be used: one line."""


def probe_document(run: ProbeRun, features: Dict[str, Feature], *, seed: int, budget: float, command: str,
                   drive_hash: str = "", stages: Optional[Sequence[str]] = None) -> ProbeDoc:
    """probe.json (``stages``: the stages chosen, where not all were)."""
    from ...results import ssdlab_version

    doc: ProbeDoc = {"schema": PROBE_SCHEMA, "schema_version": PROBE_SCHEMA_VERSION,
            "manifest": {"seed": seed, "version": ssdlab_version(), "drive_hash": drive_hash, "command": command,
                         "budget": budget},
            "target": run.target, "budget": budget, "interrupted": run.interrupted, "notes": run.notes,
            "wall_time_s": round(run.wall_time_s, 3), "simulated_time_s": run.simulated_time_s,
            "power": run.power, "features": features, "jobs": run.jobs_doc()}
    if stages is not None:
        doc["stages"] = list(stages)
    return doc


def save_probe(doc: ProbeDoc, out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "probe.json"
    write_text(path, json.dumps(doc, indent=1) + "\n")
    return path


def load_probe(probe_dir: Union[str, Path]) -> ProbeDoc:
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
    return cast(ProbeDoc, doc)


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


def apply_power_log(doc: ProbeDoc, path: Union[str, Path]) -> ProbeDoc:
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
    new: ProbeDoc = json.loads(json.dumps(doc))
    new["power"] = {"source": f"meter log {path}", "idle_w": idle_w, "idle_s": float(window[1]) - float(window[0]),
                    "idle_window_s": window}
    for j in new["jobs"]:
        f = j.get("figures") or {}
        if "wall_start_s" in f:
            w = _window_mean(samples, float(f["wall_start_s"]), float(f["wall_end_s"]))
            if w is not None:
                f["avg_w"] = w
    return new


def figures_of(doc: ProbeDoc) -> Figures:
    """The figures by job name of a probe document."""
    return {j["name"]: f for j in doc.get("jobs", []) if (f := j.get("figures"))}


def capacity_of(doc: ProbeDoc) -> Tuple[int, float]:
    return int(doc["target"]["capacity_bytes"]), float(doc.get("budget", 1.0))
