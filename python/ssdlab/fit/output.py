"""What a fit writes: the fitted values as a TOML diff of the profile (or
part, or drive file), with the residual of every row, and the same as JSON."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

from ..results import ssdlab_version
from .study import FitResult

__all__ = ["toml_value", "diff_toml"]


def toml_value(v: Any) -> str:
    """A number, string or list of them in TOML (integers with _ every three digits, as the library files)."""
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return f"{v:_}"
    if isinstance(v, float):
        return repr(v) if v != int(v) or abs(v) < 1e15 else f"{int(v):_}"
    return json.dumps(str(v))


def _pct(x: Optional[float]) -> str:
    return "-" if x is None else f"{x * 100:+.1f}%"


def diff_toml(result: FitResult, command: str = "") -> str:
    """The fitted values as a TOML diff: the sections and keys of the
    profile (part, drive file) that change, each with its committed value,
    bounds and reason; then one ``[[rows]]`` table per calibration row with
    the published figure, the simulated figures (fitted, committed) and the
    errors."""
    t = result.target
    where = {"profile": f"crates/ssdlab-sim/library/controllers/{t.id}.toml",
             "part": f"crates/ssdlab-sim/library/nand/{t.id}.toml",
             "drive": t.id}[t.kind]
    lines: List[str] = [
        f"# ssdlab fit of {t.label} (ssdlab {ssdlab_version()}): {result.trials} trials, sampler {result.sampler}, "
        f"seed {result.seed}" + (" (interrupted)" if result.interrupted else ""),
        f"# {command}" if command else "# (from the Python API)",
        f"# The values of {where} that the fit changes: paste them over the file's.",
        f"# Objective (root mean square of row error / tolerance; 1.0 = every row at its tolerance): "
        f"committed {result.committed.objective:.4f}, fitted {result.best.objective:.4f}; "
        f"worst row committed {result.committed.worst:.3f}, fitted {result.best.worst:.3f} tolerances.",
        "",
    ]
    sections: Dict[str, List[str]] = {}
    for p in t.params:
        section, name = p.key.split(".", 1)
        new, old = result.best.values[p.key], result.committed.values[p.key]
        changed = float(new) != float(old)
        text = (f"{'' if changed else '# '}{name} = {toml_value(new)}  # committed {toml_value(old)}; "
                f"free in {toml_value(p.snap(p.low))} .. {toml_value(p.snap(p.high))}: {p.why}")
        sections.setdefault(section, []).append(text)
    for section, entries in sections.items():
        lines.append(f"[{section}]")
        lines.extend(entries)
        lines.append("")
    lines.append("# Every calibration row with the fitted values (simulated, error) and the committed ones.")
    for f, c in zip(result.best.row_dicts(), result.committed.row_dicts()):
        lines.append("[[rows]]")
        for k in ("drive_id", "row", "kind", "one_sided", "unit", "published", "simulated", "error", "residual"):
            v = f[k]
            if v is not None:
                lines.append(f"{k} = {toml_value(round(v, 6) if isinstance(v, float) else v)}")
        if c["simulated"] is not None:
            lines.append(f"committed_simulated = {toml_value(round(c['simulated'], 6))}")
            lines.append(f"committed_error = {toml_value(round(c['error'], 6))}")
        lines.append(f"# {f['drive_id']}: {f['row']}: published {f['published']:g} {f['unit']}, "
                     f"error {_pct(f['error'])} (committed {_pct(c['error'])})")
        lines.append("")
    return "\n".join(lines)
