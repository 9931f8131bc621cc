"""Charts of a review, drawn with matplotlib (Agg) as PNG and SVG files.

Every bar chart shows all drives, best first, the unit in the title; a chart
of one or two figures per drive puts them side by side, one of three or more
draws a panel per figure (each best first). Legends sit outside the plot
(below it, or above under the title), never over bars or their labels; lines
that coincide are told apart (line width, markers) and named by the caller;
titles wrap and files are cropped to their content, so nothing is clipped.

In the SVG files, bar value labels have the id ``barlabel_N`` and legends
``legend_N``, so their geometry can be checked (tests/report/test_report_browser.py).
"""

from __future__ import annotations

import io
import itertools
import math
import textwrap
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.ticker import FuncFormatter, MaxNLocator, NullFormatter  # noqa: E402

from ..outputs import write_bytes  # noqa: E402

__all__ = [
    "bar_order", "bar_chart", "line_chart", "curve_chart", "consistency_chart", "latency_chart", "latency_cdf_chart",
    "coinciding", "interval_s", "save", "CONSISTENCY_VIEWS", "COLORS", "MARKERS",
]

plt.rcParams.update({"svg.hashsalt": "ssdlab", "font.size": 9, "axes.titlesize": 10})
_META_PNG = {"Software": None}
_META_SVG = {"Date": None, "Creator": None}
#: One color per drive (or per figure of a bar group), distinct up to 18 drives.
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
          "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d", "#31a354"]
#: One marker per drive, so that coinciding lines stay distinguishable.
MARKERS = ["o", "s", "^", "v", "D", "P", "X", "<", ">", "p", "*", "h", "d", "8"]
_WIDTH_IN = 9.0

#: The three consistency views: (id, title suffix, from t_s?, log y).
CONSISTENCY_VIEWS = (("all-log", "whole run, log scale", False, True),
                     ("steady-log", "from t = {t:g} s, log scale", True, True),
                     ("steady-linear", "from t = {t:g} s, linear scale", True, False))

_ids = itertools.count()


def _gid(kind: str) -> str:
    return f"{kind}_{next(_ids)}"


def save(fig: Figure, out_dir: Path, name: str) -> List[str]:
    """Write NAME.png and NAME.svg (deterministic: no dates; cropped to the
    content, so no title or legend is cut); returns the file names."""
    out_dir.mkdir(parents=True, exist_ok=True)
    global _ids
    # the content's box, measured once for both files (bbox_inches="tight" would draw the figure again for each)
    box = fig.get_tightbbox(fig.canvas.get_renderer())  # type: ignore[attr-defined]
    box = box.padded(0.12) if box is not None else "tight"
    # drawn in memory and written atomically: a kill mid-draw leaves the old chart, never an empty one
    for ext, kw in (("png", {"dpi": 100, "metadata": _META_PNG}), ("svg", {"metadata": _META_SVG})):
        buf = io.BytesIO()
        fig.savefig(buf, format=ext, bbox_inches=box, **kw)
        write_bytes(out_dir / f"{name}.{ext}", buf.getvalue())
    plt.close(fig)
    _ids = itertools.count()  # ids restart per file: the same chart gives the same SVG
    return [f"{name}.png", f"{name}.svg"]


def _wrap(text: str, width: int) -> str:
    return "\n".join(textwrap.wrap(text, width)) or text


def _name(drive: str) -> str:
    """A drive's product name as a tick label: at most two lines (wider lines
    for a long name; past 2 x 48 characters the end is shortened with an
    ellipsis, the drive table has the whole name)."""
    for width in range(30, 49, 2):
        lines = textwrap.wrap(drive, width)
        if len(lines) <= 2:
            return "\n".join(lines) or drive
    lines = textwrap.wrap(drive, 48)
    return lines[0] + "\n" + textwrap.shorten(" ".join(lines[1:]), 48, placeholder=" …")


def _row_in(order: Sequence[str]) -> float:
    """The height of a row of tick labels in inches: one or two lines of 8 pt
    text and a gap, so that the labels of neighbouring rows never touch."""
    lines = max((_name(d).count("\n") + 1 for d in order), default=1)
    return 0.06 + 0.135 * lines


def _suptitle(fig: Figure, text: str) -> None:
    """The figure's title just above its panels (after the layout, so it can
    never sit on a panel's own title; the saved file grows to include it)."""
    fig.suptitle(text, y=1.0, va="bottom")


def _legend_below(fig: Figure, axes: Sequence[Axes], handles: Sequence[Any], labels: Sequence[str], ncol: int,
                  title: Optional[str] = None) -> None:
    """A figure legend under the lowest axes' tick labels and axis label (the
    saved file grows to include it)."""
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    boxes = [a.get_tightbbox(renderer) for a in axes]
    bottom = min((b.y0 for b in boxes if b is not None), default=0.0)  # pixels
    y = bottom / fig.bbox.height - 0.08 / fig.get_figheight()
    leg = fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, y), ncol=max(1, ncol), fontsize=8,
                     frameon=False, title=title, title_fontsize=8)
    leg.set_gid(_gid("legend"))


def _key(v: Optional[float], higher: bool) -> float:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return math.inf
    return -v if higher else v


def bar_order(values: Dict[str, Dict[str, float]], labels: Sequence[str], higher: bool) -> List[str]:
    """Drives best first: by the first label's value (then the next ones), the
    highest first when higher is better, else the lowest; ties by name."""
    return sorted(values, key=lambda d: ([_key(values[d].get(lab), higher) for lab in labels], d))


def _value_text(x: float) -> str:
    return f" {x:,.2f}" if abs(x) < 10 else (f" {x:,.1f}" if abs(x) < 100 else f" {x:,.0f}")


def _bars(ax: Axes, order: Sequence[str], labels: Sequence[str], values: Dict[str, Dict[str, float]],
          colors: Sequence[str]) -> List[Any]:
    """Horizontal bars of ``labels`` per drive, the drive's group centred on its row; value labels at the bar ends."""
    k = max(len(labels), 1)
    height = 0.8 / k
    handles = []
    top = 0.0
    for j, lab in enumerate(labels):
        ys = [i + (j - (k - 1) / 2) * height for i in range(len(order))]
        vals = [values[d].get(lab, float("nan")) for d in order]
        bars = ax.barh(ys, [0 if (x is None or math.isnan(x)) else x for x in vals], height=height * 0.92,
                       color=colors[j % len(colors)], label=lab)
        handles.append(bars)
        for b, x in zip(bars, vals):
            if x is not None and not math.isnan(x):
                top = max(top, x)
                t = ax.text(b.get_width(), b.get_y() + b.get_height() / 2, _value_text(x), va="center", fontsize=7)
                t.set_gid(_gid("barlabel"))
    ax.set_yticks(range(len(order)))
    ax.set_yticklabels([_name(d) for d in order], fontsize=8)
    ax.set_ylim(len(order) - 0.5, -0.5)
    ax.set_xlim(0, top * 1.22 if top > 0 else 1.0)  # room for the value labels inside the axes
    ax.xaxis.set_major_locator(MaxNLocator(nbins=5))  # a half-width panel holds five "120,000"s
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:,.0f}" if top >= 100 else f"{x:g}"))
    ax.grid(True, axis="x", alpha=0.3)
    ax.set_axisbelow(True)
    return handles


def bar_chart(title: str, values: Dict[str, Dict[str, float]], higher: bool = True) -> Tuple[Figure, List[str]]:
    """``values[drive][label]``: horizontal bars, best drive at the top. One or
    two labels: side by side per drive, the legend above the bars; three or
    more: a panel per label, each ordered best first. Returns the figure and
    the drives in the order of the first label."""
    labels: List[str] = []
    for v in values.values():
        labels += [lab for lab in v if lab not in labels]
    order = bar_order(values, labels, higher)
    n = len(order)
    note = "" if higher else " (lower is better)"
    if len(labels) >= 3 and n > 1:
        ncol = 2
        nrow = math.ceil(len(labels) / ncol)
        panel_h = 0.5 + max(0.26, _row_in(order)) * n
        fig, axes = plt.subplots(nrow, ncol, figsize=(_WIDTH_IN * 1.15, panel_h * nrow + 0.6), squeeze=False)
        for idx, lab in enumerate(labels):
            ax = axes[idx // ncol, idx % ncol]
            sub = bar_order({d: values[d] for d in order}, [lab], higher)
            _bars(ax, sub, [lab], values, [COLORS[idx % len(COLORS)]])
            ax.set_title(_wrap(lab, 45), fontsize=9)
        for idx in range(len(labels), nrow * ncol):
            axes[idx // ncol, idx % ncol].set_visible(False)
        fig.tight_layout()
        _suptitle(fig, _wrap(title + note, 100))
        return fig, order
    k = max(len(labels), 1)
    row_h = max(0.2 * k + 0.16, _row_in(order))
    fig, ax = plt.subplots(figsize=(_WIDTH_IN, 1.0 + row_h * n + (0.3 if k > 1 else 0.0)))
    handles = _bars(ax, order, labels, values, COLORS)
    ax.set_title(_wrap(title + note, 90), pad=24 if k > 1 else 6)
    if k > 1:
        leg = ax.legend(handles, labels, fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=k, frameon=False,
                        borderaxespad=0.1)
        leg.set_gid(_gid("legend"))
    fig.tight_layout()
    return fig, order


def _size_label(b: float) -> str:
    """Transfer sizes as ATTO prints them: 0.5KB, 4KB, 1MB (KB = 1024 B)."""
    if b >= 1 << 20:
        return f"{b / (1 << 20):g}MB"
    return f"{b / 1024:g}KB"


def coinciding(series: Dict[str, Dict[str, Dict[str, List[float]]]]) -> List[Tuple[str, List[str]]]:
    """Lines that lie on one another: ``[(line, [drive, drive, ...])]`` for
    every line name whose points are the same (to 0.05%) on two drives or more."""
    out: List[Tuple[str, List[str]]] = []
    names: List[str] = []
    for lines in series.values():
        names += [ln for ln in lines if ln not in names]
    for ln in names:
        groups: List[List[str]] = []
        for drive, lines in series.items():
            pts = lines.get(ln)
            if pts is None:
                continue
            for g in groups:
                ref = series[g[0]][ln]
                if list(ref["x"]) == list(pts["x"]) and all(
                        math.isclose(a, b, rel_tol=5e-4, abs_tol=1e-9) for a, b in zip(ref["y"], pts["y"])):
                    g.append(drive)
                    break
            else:
                groups.append([drive])
        out += [(ln, g) for g in groups if len(g) > 1]
    return out


def line_chart(title: str, series: Dict[str, Dict[str, Dict[str, List[float]]]], x_label: str, y_label: str,
               x_log: bool = False) -> Figure:
    """``series[drive][line] = {"x": [...], "y": [...]}``: a color and a marker
    per drive, a line style per line; earlier drives are drawn wider, so a
    line that lies on another still shows both colors. Legends below."""
    fig, ax = plt.subplots(figsize=(_WIDTH_IN, 4.8))
    styles = ["-", "--", ":", "-."]
    line_names: List[str] = []
    for lines in series.values():
        line_names += [ln for ln in lines if ln not in line_names]
    n = len(series)
    handles: List[Any] = []
    for i, lines in enumerate(series.values()):
        lw = max(3.2 - 2.2 * i / max(n - 1, 1), 1.0)
        ms = max(8.0 - 4.0 * i / max(n - 1, 1), 4.0)
        for line, pts in lines.items():
            ax.plot(pts["x"], pts["y"], styles[line_names.index(line) % len(styles)], lw=lw, marker=MARKERS[i % len(MARKERS)],
                    ms=ms, mfc="none", mew=1.2, color=COLORS[i % len(COLORS)], zorder=2 + i)
        handles.append(Line2D([], [], color=COLORS[i % len(COLORS)], marker=MARKERS[i % len(MARKERS)], mfc="none", lw=1.5))
    if x_log:
        ax.set_xscale("log", base=2)
    xs = sorted({x for lines in series.values() for pts in lines.values() for x in pts["x"]})
    if xs:
        ax.set_xticks(xs)
        ax.set_xticklabels([_size_label(x) if "bytes" in x_label else f"{x:g}" for x in xs], rotation=45 if len(xs) > 8 else 0)
        ax.minorticks_off()
    ax.set_xlabel(x_label)
    ax.set_ylabel(y_label)
    ax.set_title(_wrap(title, 90))
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    labels = list(series)
    if len(line_names) > 1:
        handles += [Line2D([], [], color="#333", ls=styles[j % len(styles)]) for j in range(len(line_names))]
        labels += [f"line: {ln}" for ln in line_names]
    _legend_below(fig, [ax], handles, labels, ncol=2)
    return fig


def _grid(n: int, panel_h: float, sharey: bool = True) -> Tuple[Figure, Any]:
    """Panels for ``n`` drives: one column up to 4, else two."""
    ncol = 1 if n <= 4 else 2
    nrow = math.ceil(max(n, 1) / ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(_WIDTH_IN if ncol == 1 else _WIDTH_IN * 1.3, panel_h * nrow + 0.7),
                             sharex=True, sharey=sharey, squeeze=False)
    flat = list(axes.flat)
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat


def curve_chart(title: str, curves: Dict[str, Dict[str, Dict[str, Any]]]) -> Figure:
    """HD Tach-style: one panel per drive (same axes), MB/s against position,
    a line per pass (the read pass dashed); one legend, above the panels."""
    n = max(len(curves), 1)
    fig, flat = _grid(n, 2.1)
    states: List[str] = []
    for st in curves.values():
        states += [s for s in st if s not in states]
    for ax, (drive, passes) in zip(flat, curves.items()):
        for state, c in passes.items():
            j = states.index(state)
            ax.plot(c["position_gb"], c["mbps"], "--" if c.get("direction") == "read" else "-", color=COLORS[j % len(COLORS)],
                    lw=1)
        ax.set_title(_wrap(drive, 60), fontsize=9)
        ax.set_ylabel("MB/s")
        ax.grid(True, alpha=0.3)
    for ax in flat[-2:]:
        ax.set_xlabel("position (GB = 1e9 B)")
        ax.xaxis.set_tick_params(labelbottom=True)
    fig.tight_layout()
    _suptitle(fig, _wrap(title, 100))
    handles = [Line2D([], [], color=COLORS[j % len(COLORS)], ls="--" if "read" in s else "-") for j, s in enumerate(states)]
    _legend_below(fig, flat[:n], handles, states, ncol=min(len(states), 5))
    return fig


def interval_s(run: Dict[str, Any]) -> float:
    """The length of a consistency series' intervals (1 s in a review; less under --quick)."""
    t = run.get("time_s", [])
    steps = sorted(b - a for a, b in zip(t, t[1:]))
    return float(steps[len(steps) // 2]) if steps else 1.0


def _at_zero(n: int, dt: float) -> str:
    return f"{n} s at 0 IOPS" if abs(dt - 1.0) < 1e-9 else f"{n} intervals of {dt:g} s at 0 IOPS"


def consistency_chart(title: str, runs: Dict[str, Dict[str, Any]], view: Tuple[str, str, bool, bool], from_s: float,
                      y_max: float, t_max: float) -> Figure:
    """One panel per drive, the same axes (the caller gives the same ``y_max``
    to every spare-area variant): IOPS against time for one variant and one
    view. Intervals with 0 IOPS, which a log axis cannot show, are red markers on
    the bottom edge (and on the 0 line of the linear view)."""
    _, suffix, from_steady, log = view
    n = max(len(runs), 1)
    fig, flat = _grid(n, 1.9)
    y_low = max(1.0, y_max / 1e3) if log else 0.0
    for i, (ax, (drive, r)) in enumerate(zip(flat, runs.items())):
        t, y = r["time_s"], r["iops"]
        if from_steady:
            keep = [k for k, x in enumerate(t) if x > from_s]
            t, y = [t[k] for k in keep], [y[k] for k in keep]
        ax.plot(t, y, ".", ms=1.5, color=COLORS[i % len(COLORS)])
        zeros = [tt for tt, yy in zip(t, y) if yy <= 0]
        if zeros:
            ax.plot(zeros, [y_low] * len(zeros), "v", ms=4, color="#d00", clip_on=False, zorder=5)
        ax.set_title(_wrap(drive, 60) + (f"  ({_at_zero(len(zeros), interval_s(r))})" if zeros else ""), fontsize=9)
        ax.set_ylabel("IOPS")
        ax.grid(True, alpha=0.3)
    ax0 = flat[0]
    if log:
        ax0.set_yscale("log")
        ax0.set_ylim(y_low, y_max * 1.5)
    else:
        ax0.set_ylim(0, y_max * 1.05)
    ax0.set_xlim(from_s if from_steady else 0, t_max)
    for ax in flat[max(0, n - 2):n]:
        ax.set_xlabel("time (s)")
        ax.xaxis.set_tick_params(labelbottom=True)
    fig.tight_layout()
    _suptitle(fig, _wrap(f"{title}: {suffix.format(t=from_s)}", 100))
    return fig


def _plain_log_ticks(axis: Any) -> None:
    """Log-axis ticks as plain numbers (10, 100, 1,000 us), no minor labels."""
    axis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:,.0f}" if v >= 1 else f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


#: The percentiles of a latency chart: (key, legend, marker, color).
LATENCY_POINTS = (("p50", "median (p50)", "o", "#2ca02c"), ("p99", "p99", "s", "#1f77b4"),
                  ("p99.9", "p99.9", "^", "#ff7f0e"), ("max", "max", "x", "#d62728"))


def latency_chart(title: str, panels: Dict[str, Dict[str, Dict[str, float]]]) -> Figure:
    """Completion-latency percentiles, a panel per measured step:
    ``panels[step][drive] = {"p50": us, "p99": us, "p99.9": us, "max": us}``;
    a row per drive (lowest p99 at the top), log x axis shared by all panels."""
    names = list(panels)
    n_drives = max((len(p) for p in panels.values()), default=1)
    ncol = 1 if len(names) == 1 else 2
    nrow = math.ceil(len(names) / ncol)
    panel_h = 0.6 + max(0.34, _row_in([d for p in panels.values() for d in p])) * n_drives
    fig, axes = plt.subplots(nrow, ncol, figsize=(_WIDTH_IN * (1.0 if ncol == 1 else 1.15), panel_h * nrow + 0.5),
                             sharex=True, squeeze=False)
    flat = list(axes.flat)
    for ax in flat[len(names):]:
        ax.set_visible(False)
    for ax, name in zip(flat, names):
        rows = panels[name]
        order = sorted(rows, key=lambda d: (rows[d].get("p99", math.inf), d))
        for i, d in enumerate(order):
            pts = [rows[d][k] for k, *_ in LATENCY_POINTS if rows[d].get(k)]
            if pts:
                ax.plot([min(pts), max(pts)], [i, i], "-", color="#bbb", lw=1, zorder=1)
            for k, _, marker, color in LATENCY_POINTS:
                if rows[d].get(k):
                    ax.plot([rows[d][k]], [i], marker, color=color, ms=5, mfc="none" if marker != "x" else color, zorder=2)
        ax.set_yticks(range(len(order)))
        ax.set_yticklabels([_name(d) for d in order], fontsize=8)
        ax.set_ylim(len(order) - 0.5, -0.5)
        ax.set_xscale("log")
        _plain_log_ticks(ax.xaxis)
        ax.grid(True, axis="x", which="both", alpha=0.25)
        ax.set_title(_wrap(name, 50), fontsize=9)
    for ax in flat[max(0, len(names) - ncol):len(names)]:
        ax.set_xlabel("completion latency (us, log scale)")
        ax.xaxis.set_tick_params(labelbottom=True)
    fig.tight_layout()
    _suptitle(fig, _wrap(title, 100))
    handles = [Line2D([], [], ls="none", marker=m, color=c, mfc="none" if m != "x" else c) for _, _, m, c in LATENCY_POINTS]
    _legend_below(fig, flat[:len(names)], handles, [lab for _, lab, _, _ in LATENCY_POINTS], ncol=4)
    return fig


def latency_cdf_chart(title: str, panels: Dict[str, Dict[str, List[Tuple[float, float]]]]) -> Figure:
    """Latency distributions, a panel per spare-area variant: for each drive,
    the fraction of I/Os slower than x (``[(latency_us, fraction)]``, from the
    percentiles fio reports), log-log; a color and a marker per drive."""
    names = list(panels)
    fig, axes = plt.subplots(1, max(len(names), 1), figsize=(_WIDTH_IN * 1.15, 4.2), sharex=True, sharey=True, squeeze=False)
    flat = list(axes.flat)
    drives: List[str] = []
    for p in panels.values():
        drives += [d for d in p if d not in drives]
    n = len(drives)
    for ax, name in zip(flat, names):
        for d, pts in panels[name].items():
            i = drives.index(d)
            if not pts:
                continue
            xs, ys = zip(*pts)
            ax.plot(xs, ys, "-", marker=MARKERS[i % len(MARKERS)], ms=max(7.0 - 3.0 * i / max(n - 1, 1), 4.0), mfc="none",
                    lw=max(2.6 - 1.6 * i / max(n - 1, 1), 1.0), color=COLORS[i % len(COLORS)], zorder=2 + i)
        ax.set_xscale("log")
        ax.set_yscale("log")
        _plain_log_ticks(ax.xaxis)
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("completion latency (us)")
        ax.grid(True, which="both", alpha=0.25)
    flat[0].set_ylabel("fraction of I/Os slower")
    fig.tight_layout()
    _suptitle(fig, _wrap(title, 100))
    handles = [Line2D([], [], color=COLORS[i % len(COLORS)], marker=MARKERS[i % len(MARKERS)], mfc="none") for i in range(n)]
    _legend_below(fig, flat, handles, drives, ncol=2)
    return fig
