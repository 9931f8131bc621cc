"""Design sweeps: one suite test on every combination of drive settings, run
on :mod:`ssdlab.cluster`, as one tidy table (one row per run: the settings as
columns, then every figure of the test's summary) and a small HTML page with
one chart per figure against the swept settings.

>>> import ssdlab
>>> df = ssdlab.sweep("vertex3-120", {"ftl.gc_policy": ["greedy", "cost-benefit"],
...                                   "spare": ["7%", "12%", "25%"]}, test="consistency")  # doctest: +SKIP

A setting is a dotted drive key (``Drive.with_changes``: ``nand.tprog_ns``,
``ftl.gc_policy``, ...) or ``spare``: the spare area as a fraction of the user
capacity (``spare_fraction`` of ``ssdlab drive show``), set by changing
``drive.user_capacity_bytes`` on the same NAND. On the command line
(``--set KEY=VALUES``) values are a comma-separated list
(``ftl.gc_policy=greedy,cost-benefit``) or a range ``LOW..HIGH:N`` of N evenly
spaced values (``nand.tprog_ns=900us..2ms:5``); times take ns/us/ms/s on
``*_ns`` keys, sizes k/m/g on ``*_bytes`` keys, percentages on ``spare``.
"""

from __future__ import annotations

import base64
import html
import io
import itertools
import math
import re
import time
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, TextIO, Tuple, Union

from . import _core
from .cluster import Runner, TestRequest
from .drive import Drive, DriveSpec
from .errors import config_error, typed_arguments
from .extras import MissingExtraError, install_hint
from .outputs import atomic_open, write_bytes, write_text
from .results import ssdlab_version

#: A pandas DataFrame (pandas is imported only when a sweep runs; typed as Any
#: so that type-checking the package does not load pandas' stubs).
DataFrame = Any

__all__ = ["SPARE", "parse_setting", "parse_values", "apply_settings", "sweep", "sweep_runs", "write_sweep", "figure_column",
           "format_sweep"]

#: The pseudo-key for the spare area (fraction of the user capacity).
SPARE = "spare"

Settings = Union[Mapping[str, Sequence[Any]], Sequence[str]]


def _number(text: str) -> Optional[float]:
    try:
        return float(text)
    except ValueError:
        return None


def _scalar(key: str, text: str) -> Any:
    """One value of a setting, typed by its key's unit."""
    t = text.strip()
    if t == "":
        raise config_error(key, "an empty value")
    if key == SPARE:
        v = float(t[:-1]) / 100 if t.endswith("%") else _number(t)
        if v is None or not 0 < v <= 3:
            raise config_error(key, f"'{text}': give a percentage (12%) or a fraction (0.12) of the user capacity, above 0 and at most 300%")
        return v
    if key.endswith("_ns") and _number(t) is None:
        return _core.parse_duration_ns(t, key)
    if key.endswith("_bytes") and _number(t) is None:
        return _core.parse_size_bytes(t, 0, key)
    if t in ("true", "false"):
        return t == "true"
    n = _number(t)
    if n is None:
        return t
    return int(n) if n.is_integer() else n


#: The most values one setting takes, and the most runs one sweep makes (checked before any work: each run is a
#: simulation, and the table of a larger sweep would not fit in memory either).
MAX_VALUES_PER_SETTING = 1000
MAX_RUNS = 10_000


def parse_values(key: str, text: str) -> List[Any]:
    """``a,b,c`` or ``LOW..HIGH:N`` (N evenly spaced values, ends included;
    N at most :data:`MAX_VALUES_PER_SETTING`)."""
    m = re.fullmatch(r"(.+?)\.\.(.+?):(\d+)", text.strip())
    if m:
        if len(m.group(3)) > 6 or int(m.group(3)) > MAX_VALUES_PER_SETTING:
            raise config_error(key, f"'{text}': at most {MAX_VALUES_PER_SETTING} values in a range")
        low, high, n = _scalar(key, m.group(1)), _scalar(key, m.group(2)), int(m.group(3))
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (low, high)):
            raise config_error(key, f"'{text}': a range needs numbers at both ends")
        if n < 2:
            raise config_error(key, f"'{text}': a range needs at least 2 values")
        vals = [low + (high - low) * i / (n - 1) for i in range(n)]
        integer = isinstance(low, int) and isinstance(high, int)
        return [int(round(v)) if integer else v for v in vals]
    if text.count(",") >= MAX_VALUES_PER_SETTING:
        raise config_error(key, f"{text.count(',') + 1} values: at most {MAX_VALUES_PER_SETTING}")
    vals = [_scalar(key, v) for v in text.split(",")]
    if len(set(map(repr, vals))) != len(vals):
        raise config_error(key, f"'{text}': a value is given twice")
    return vals


def parse_setting(text: str) -> Tuple[str, List[Any]]:
    """``KEY=VALUES`` as (key, values)."""
    if "=" not in text:
        raise config_error("--set", f"'{text}': give KEY=VALUES, e.g. ftl.gc_policy=greedy,cost-benefit")
    key, values = text.split("=", 1)
    key = key.strip()
    if key != SPARE and ("." not in key or not all(key.split("."))):
        raise config_error(key, "a setting is spare or SECTION.FIELD, e.g. nand.tprog_ns")
    return key, parse_values(key, values)


def _settings(settings: Settings) -> Dict[str, List[Any]]:
    if isinstance(settings, Mapping):
        out_m: Dict[str, List[Any]] = {}
        for k, v in settings.items():
            if not isinstance(k, str):
                raise config_error(str(k), f"a setting is a string (spare or SECTION.FIELD), not {k!r}")
            if isinstance(v, (str, bytes)) or not isinstance(v, Sequence) or not v:
                raise config_error(k, f"give a non-empty list of values, e.g. ['greedy', 'cost-benefit'], not {v!r:.60}")
            out_m[k] = list(v)
        return out_m
    if isinstance(settings, str) or not isinstance(settings, Sequence) or not all(isinstance(x, str) for x in settings):
        raise config_error("settings", f"give a dict {{key: [values]}} or a list of 'KEY=VALUES' strings, not {settings!r:.60}")
    out: Dict[str, List[Any]] = {}
    for s in settings:
        k, v = parse_setting(s)
        if k in out:
            raise config_error(k, "set twice")
        out[k] = v
    return out


def apply_settings(drive: Drive, values: Mapping[str, Any]) -> Drive:
    """The drive with one combination of settings (``spare`` last, on the
    changed NAND)."""
    changed = drive.with_changes({k: v for k, v in values.items() if k != SPARE}) if any(k != SPARE for k in values) else drive
    if SPARE in values:
        g = changed.geometry
        data_raw = g["user_bytes"] * (1 + g["spare_fraction"])  # what the data dies hold
        user = int(data_raw / (1 + float(values[SPARE])))
        user -= user % 4096
        changed = changed.with_changes({"drive.user_capacity_bytes": user})
    return changed


def figure_column(f: Mapping[str, Any], labels: int) -> str:
    """The table column of a figure: ``metric (unit)``, prefixed by its label
    when the test measures more than one."""
    unit = str(f["unit"])
    metric = str(f["metric"])
    base = metric if metric.endswith((f"({unit})", f" {unit}")) or metric == unit else f"{metric} ({unit})"
    return f"{f['label']}: {base}" if labels > 1 else base


@typed_arguments()
def sweep_runs(drive: DriveSpec, settings: Settings, test: str = "consistency", seed: int = 1, scale: str = "full",
               jobs: Optional[int] = None, scheduler: Optional[str] = None, runner: Optional[Runner] = None,
               progress: Optional[bool] = None, stream: Optional[TextIO] = None) -> Tuple[List[str], List[Dict[str, Any]]]:
    """Run the sweep; returns (the swept keys, one record per run in the
    order of the cross product). A run interrupted by Ctrl-C is left out
    (the records of the finished ones come back)."""
    base = Drive.load(drive)
    grid = _settings(settings)
    keys = list(grid)
    total = math.prod(len(v) for v in grid.values())
    if total > MAX_RUNS:
        sizes = " x ".join(f"{len(v)} ({k})" for k, v in grid.items())
        raise config_error("settings", f"{sizes} = {total:,} runs: a sweep makes at most {MAX_RUNS:,}")
    combos = [dict(zip(keys, vals)) for vals in itertools.product(*grid.values())] if keys else [{}]
    drives = [apply_settings(base, c) for c in combos]
    requests = [TestRequest(d, test, seed=seed, scale=scale) for d in drives]
    labels = len({s.get("measure") for r in requests[0].suite_test["runs"] for s in r["steps"] if "measure" in s})
    records: Dict[int, Dict[str, Any]] = {}
    own = runner is None
    run = runner if runner is not None else Runner(jobs=jobs, scheduler=scheduler, progress=progress)
    t0 = time.perf_counter()
    try:
        for i, doc in run.run_tests(requests):
            d = drives[i]
            rec: Dict[str, Any] = {"run": i, "drive": base.id, **combos[i], "test": test, "seed": seed, "profile": scale,
                                   "drive_hash": d.hash, "user_capacity_bytes": d.capacity_bytes,
                                   "spare_fraction": d.geometry["spare_fraction"], "skipped": doc["skipped"] or ""}
            for f in doc["figures"]:
                rec[figure_column(f, labels)] = f["value"]
            records[i] = rec
            if stream is not None:
                stream.write(f"ssdlab sweep: run {i + 1}/{len(combos)} done ({len(records)} finished), "
                             f"{time.perf_counter() - t0:.1f} s wall\n")
                stream.flush()
    except KeyboardInterrupt:
        pass
    finally:
        if own:
            run.close()
    return keys, [records[i] for i in sorted(records)]


@typed_arguments()
def sweep(drive: DriveSpec, settings: Settings, test: str = "consistency", seed: int = 1, scale: str = "full",
          jobs: Optional[int] = None, scheduler: Optional[str] = None, runner: Optional[Runner] = None,
          progress: Optional[bool] = None, out: Optional[Union[str, Path]] = None) -> DataFrame:
    """Run ``test`` on every combination of ``settings`` (``{"key": [values]}``
    or ``["key=v1,v2", "key=LOW..HIGH:N"]``) and return the tidy table as a
    pandas DataFrame (one row per run). ``out``: also write the table
    (Parquet, CSV) and the HTML page there (:func:`write_sweep`)."""
    keys, records = sweep_runs(drive, settings, test, seed, scale, jobs, scheduler, runner, progress)
    df = _frame(records)
    df.attrs["swept"] = keys
    df.attrs["test"] = test
    if out is not None:
        write_sweep(df, Path(out))
    return df


def _pandas() -> Any:
    import importlib

    try:
        return importlib.import_module("pandas")
    except ImportError:
        raise MissingExtraError(f"ssdlab sweep needs pandas (and pyarrow for Parquet): {install_hint('sweep')}") from None


def _frame(records: List[Dict[str, Any]]) -> DataFrame:
    df: DataFrame = _pandas().DataFrame.from_records(records)
    return df


def _chart_png(df: DataFrame, keys: Sequence[str], column: str) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 3.6), dpi=100)

    def is_numeric(k: str) -> bool:
        return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in df[k])

    # a numeric setting on the x axis when there is one; one line per value of the others
    x = next((k for k in keys if is_numeric(k)), keys[0] if keys else "run")
    others = [k for k in keys if k != x]
    numeric = is_numeric(x)
    xs_all = list(dict.fromkeys(df[x].tolist()))
    groups = [((), df)] if not others else list(df.groupby(others, sort=False))
    for name, g in groups:
        label = ", ".join(f"{k}={v}" for k, v in zip(others, name if isinstance(name, tuple) else (name,))) or None
        if numeric:
            ax.plot(g[x].tolist(), g[column].tolist(), marker="o", label=label)
        else:
            pos = [xs_all.index(v) for v in g[x]]
            ax.plot(pos, g[column].tolist(), marker="o", label=label)
    if not numeric:
        ax.set_xticks(range(len(xs_all)))
        ax.set_xticklabels([str(v) for v in xs_all])
    ax.set_xlabel(x)
    ax.set_ylabel(column)
    ax.grid(True, alpha=0.3)
    if others:
        ax.legend(fontsize=8)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


def write_sweep(df: DataFrame, out: Path, command: str = "") -> List[Path]:
    """``OUT/sweep.parquet``, ``OUT/sweep.csv`` and ``OUT/index.html`` (one
    chart per figure against the swept settings, images inline)."""
    out.mkdir(parents=True, exist_ok=True)
    keys: List[str] = list(df.attrs.get("swept", []))
    written = [out / "sweep.csv", out / "sweep.parquet", out / "index.html"]
    with atomic_open(written[0], newline="") as f:
        df.to_csv(f, index=False)
    pq = df.copy()
    pq.attrs = {}
    for c in pq.columns:  # Parquet wants one type per column (a swept setting may mix ints and floats)
        if pq[c].dtype == object and any(isinstance(v, (int, float)) and not isinstance(v, bool) for v in pq[c]):
            if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in pq[c]):
                pq[c] = pq[c].astype(float)
            else:
                pq[c] = pq[c].astype(str)
    buf = io.BytesIO()
    pq.to_parquet(buf, index=False)
    write_bytes(written[1], buf.getvalue())
    fixed = {"run", "drive", "test", "seed", "profile", "drive_hash", "user_capacity_bytes", "spare_fraction", "skipped", *keys}
    figures = [c for c in df.columns if c not in fixed]
    test = df.attrs.get("test", df["test"].iloc[0] if len(df) else "")
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>ssdlab sweep: {html.escape(str(test))}</title>"
             "<style>body{font-family:sans-serif;margin:2em;max-width:70em}table{border-collapse:collapse;font-size:85%}"
             "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}figure{display:inline-block;margin:0 1em 1em 0}"
             "</style></head><body>",
             f"<h1>Sweep: {html.escape(str(test))} on {html.escape(str(df['drive'].iloc[0]) if len(df) else '')}</h1>",
             f"<p>{len(df)} runs; swept: {html.escape(', '.join(keys) or '(nothing)')}. ssdlab {ssdlab_version()}. "
             + (f"Command: <code>{html.escape(command)}</code>. " if command else "")
             + "Data: <a href='sweep.csv'>sweep.csv</a>, <a href='sweep.parquet'>sweep.parquet</a>. "
             "MB/s = 1e6 B/s.</p>"]
    for col in figures:
        if not len(df) or not all(isinstance(v, (int, float)) and not (isinstance(v, float) and math.isnan(v)) for v in df[col]):
            continue
        png = base64.b64encode(_chart_png(df, keys, col)).decode("ascii")
        parts.append(f"<figure><img alt='{html.escape(col)}' src='data:image/png;base64,{png}'>"
                     f"<figcaption>{html.escape(col)}</figcaption></figure>")
    parts.append("<h2>Table</h2>" + df.to_html(index=False, float_format=lambda v: f"{v:,.4g}", na_rep=""))
    parts.append("</body></html>")
    write_text(written[2], "\n".join(parts))
    return written


def format_sweep(df: DataFrame) -> str:
    """The table as text (the swept settings, then the figures)."""
    keys: List[str] = list(df.attrs.get("swept", []))
    drop = [c for c in ("drive", "test", "seed", "profile", "drive_hash", "skipped", "run") if c in df.columns]
    shown = df.drop(columns=drop)
    text: str = shown.to_string(index=False, float_format=lambda v: f"{v:,.4g}")
    return f"sweep of {', '.join(keys) or '(nothing)'}: {len(df)} runs\n{text}"
