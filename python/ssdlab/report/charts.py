"""Charts of a review, drawn with matplotlib (Agg) as PNG and SVG files.

Every bar chart shows all drives, best first, the unit in the title, and the
bars of one drive (e.g. repeated and incompressible data) side by side."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

__all__ = ["bar_order", "bar_chart", "line_chart", "curve_chart", "consistency_chart", "save", "CONSISTENCY_VIEWS"]

plt.rcParams.update({"svg.hashsalt": "ssdlab", "font.size": 9, "axes.titlesize": 10})
_META_PNG = {"Software": None}
_META_SVG = {"Date": None, "Creator": None}
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]

#: The three consistency views: (id, title suffix, from t_s?, log y).
CONSISTENCY_VIEWS = (("all-log", "whole run, log scale", False, True),
                     ("steady-log", "from t = {t:g} s, log scale", True, True),
                     ("steady-linear", "from t = {t:g} s, linear scale", True, False))


def save(fig: Figure, out_dir: Path, name: str) -> List[str]:
    """Write NAME.png and NAME.svg (deterministic: no dates); returns the file names."""
    out_dir.mkdir(parents=True, exist_ok=True)
    fig.savefig(out_dir / f"{name}.png", dpi=100, metadata=_META_PNG)
    fig.savefig(out_dir / f"{name}.svg", metadata=_META_SVG)
    plt.close(fig)
    return [f"{name}.png", f"{name}.svg"]


def _key(v: Optional[float], higher: bool) -> float:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return math.inf
    return -v if higher else v


def bar_order(values: Dict[str, Dict[str, float]], labels: Sequence[str], higher: bool) -> List[str]:
    """Drives best first: by the first label's value (then the next ones), the
    highest first when higher is better, else the lowest; ties by name."""
    return sorted(values, key=lambda d: ([_key(values[d].get(lab), higher) for lab in labels], d))


def bar_chart(title: str, values: Dict[str, Dict[str, float]], higher: bool = True) -> Tuple[Figure, List[str]]:
    """``values[drive][label]``: one group of horizontal bars per drive, best drive at the top."""
    labels: List[str] = []
    for v in values.values():
        for lab in v:
            if lab not in labels:
                labels.append(lab)
    order = bar_order(values, labels, higher)
    n, k = len(order), max(len(labels), 1)
    height = 0.8 / k
    fig, ax = plt.subplots(figsize=(8, 0.6 + 0.3 * n * k + 0.35 * n))
    for j, lab in enumerate(labels):
        ys = [i + (j - (k - 1) / 2) * height for i in range(n)]
        vals = [values[d].get(lab, float("nan")) for d in order]
        bars = ax.barh(ys, [0 if (x is None or math.isnan(x)) else x for x in vals], height=height * 0.95,
                       color=COLORS[j % len(COLORS)], label=lab)
        for b, x in zip(bars, vals):
            if x is not None and not math.isnan(x):
                ax.text(b.get_width(), b.get_y() + b.get_height() / 2, f" {x:,.1f}" if abs(x) < 100 else f" {x:,.0f}",
                        va="center", fontsize=7)
    ax.set_yticks(range(n))
    ax.set_yticklabels(order)
    ax.invert_yaxis()
    ax.set_title(title)
    ax.margins(x=0.15)
    if len(labels) > 1:
        ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return fig, order


def _size_label(b: float) -> str:
    """Transfer sizes as ATTO prints them: 0.5KB, 4KB, 1MB (KB = 1024 B)."""
    if b >= 1 << 20:
        return f"{b / (1 << 20):g}MB"
    return f"{b / 1024:g}KB"


def line_chart(title: str, series: Dict[str, Dict[str, Dict[str, List[float]]]], x_label: str, y_label: str,
               x_log: bool = False) -> Figure:
    """``series[drive][line] = {"x": [...], "y": [...]}``; a color per drive, a line style per line."""
    fig, ax = plt.subplots(figsize=(8, 4.5))
    styles = ["-", "--", ":", "-."]
    line_names: List[str] = []
    for i, (drive, lines) in enumerate(series.items()):
        for line, pts in lines.items():
            if line not in line_names:
                line_names.append(line)
            ax.plot(pts["x"], pts["y"], styles[line_names.index(line) % len(styles)], marker=".",
                    color=COLORS[i % len(COLORS)], label=f"{drive} {line}")
    if x_log:
        ax.set_xscale("log", base=2)
    xs = sorted({x for lines in series.values() for pts in lines.values() for x in pts["x"]})
    if xs:
        ax.set_xticks(xs)
        ax.set_xticklabels([_size_label(x) if "bytes" in x_label else f"{x:g}" for x in xs], rotation=45 if len(xs) > 8 else 0)
        ax.minorticks_off()
    ax.set_xlabel(x_label)
    ax.set_ylabel(y_label)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def curve_chart(title: str, curves: Dict[str, Dict[str, Dict[str, List[float]]]]) -> Figure:
    """HD Tach-style: one panel per drive (same axes), MB/s against position, a line per state."""
    n = max(len(curves), 1)
    fig, axes = plt.subplots(n, 1, figsize=(8, 2.6 * n), sharex=True, sharey=True, squeeze=False)
    for ax, (drive, states) in zip(axes[:, 0], curves.items()):
        for j, (state, c) in enumerate(states.items()):
            ax.plot(c["position_gb"], c["mbps"], color=COLORS[j % len(COLORS)], lw=1, label=state)
        ax.set_title(drive)
        ax.set_ylabel("MB/s")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    axes[-1, 0].set_xlabel("position (GB = 1e9 B)")
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def consistency_chart(title: str, runs: Dict[str, Dict[str, Any]], view: Tuple[str, str, bool, bool], from_s: float,
                      y_max: float, t_max: float) -> Figure:
    """One panel per drive, the same axes: IOPS against time for one OP variant and one view."""
    _, suffix, from_steady, log = view
    n = max(len(runs), 1)
    fig, axes = plt.subplots(n, 1, figsize=(8, 2.3 * n), sharex=True, sharey=True, squeeze=False)
    for i, (ax, (drive, r)) in enumerate(zip(axes[:, 0], runs.items())):
        t, y = r["time_s"], r["iops"]
        if from_steady:
            keep = [k for k, x in enumerate(t) if x > from_s]
            t, y = [t[k] for k in keep], [y[k] for k in keep]
        ax.plot(t, y, ".", ms=1.5, color=COLORS[i % len(COLORS)])
        ax.set_title(drive, fontsize=9)
        ax.set_ylabel("IOPS")
        ax.grid(True, alpha=0.3)
    ax0 = axes[0, 0]
    if log:
        ax0.set_yscale("log")
        ax0.set_ylim(max(1.0, y_max / 1e3), y_max * 1.5)
    else:
        ax0.set_ylim(0, y_max * 1.05)
    ax0.set_xlim(from_s if from_steady else 0, t_max)
    axes[-1, 0].set_xlabel("time (s)")
    fig.suptitle(f"{title}: {suffix.format(t=from_s)}")
    fig.tight_layout()
    return fig
