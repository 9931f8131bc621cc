"""The review page: the verdict (headline figures, a text per drive
naming its best and worst figure against the field, a take per test), product
names, launch prices and $/GB, the spec sheet beside the measurements, the
CrystalDiskMark-style grid, latency charts, chart hygiene (legends clear of bar
labels, coinciding lines named, one folded reproduce block per test), and
matplotlib as a dependency whose absence is one clear line."""

from __future__ import annotations

import copy
import json
import re
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest
from matplotlib.text import Text

from conftest import REPO, assert_one_line_error, run_cli, small_review_drives
from ssdlab import Drive
from ssdlab.report import verdict
from ssdlab.report.labels import chart_values, drive_label, names_with_hashes
from ssdlab.report.prices import price_of, prices, usd_per_gb
from ssdlab.suite import default_test_ids, get_test

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    tomllib = None


def _doc(drive_id: str, name: str, charts: Dict[str, Any], test_id: str = "t", h: str = "0") -> Dict[str, Any]:
    return {"drive": {"id": drive_id, "name": name, "hash": h * 16, "capacity_bytes": 120_000_000_000},
            "test": {"id": test_id}, "charts": charts, "jobs": [], "manifest": {}}


def _bar(value: float, label: str = "incompressible", unit: str = "MB/s", higher: bool = True) -> Dict[str, Any]:
    return {"type": "bar", "title": "t", "unit": unit, "higher_is_better": higher, "data": {label: value}}


# ---------------------------------------------------------------------------
# verdict
# ---------------------------------------------------------------------------


def _field() -> Dict[str, Dict[str, Dict[str, Any]]]:
    """Three drives; B is the fastest sequential reader and the slowest random writer."""
    figures = {"A": (300.0, 150.0, 2.0), "B": (520.0, 40.0, 3.0), "C": (250.0, 160.0, 1.0)}
    by_test: Dict[str, Dict[str, Dict[str, Any]]] = {}
    for d, (sr, rw32, watts) in figures.items():
        by_test.setdefault("corners-seq-read-128k", {})[d] = _doc(d, d, {"corners-seq-read-128k.mbps": _bar(sr)})
        by_test.setdefault("corners-4k-random-write-qd32", {})[d] = _doc(
            d, d, {"corners-4k-random-write-qd32.mbps": _bar(rw32)})
        by_test.setdefault("power", {})[d] = _doc(d, d, {"power.watts": _bar(watts, "idle", "W", higher=False)})
    return by_test


def test_headline_values_pick_the_reviewers_figures() -> None:
    values = verdict.headline_values(_field(), ["A", "B", "C"])
    assert values["B"] == {"sr": 520.0, "rw32": 40.0, "p-idle": 3.0}


def test_each_drive_text_names_its_best_and_worst_figure_against_the_field_with_numbers() -> None:
    texts = verdict.drive_texts(verdict.headline_values(_field(), ["A", "B", "C"]))
    b = texts["B"]
    # best: sequential read, 520 MB/s against the others' median of 275 (89% above); worst: random writes
    assert b.startswith("Stands out at 128KB sequential read, 520.0 MB/s (1st of 3; 89% above the others' median of 275.0 MB/s)"), b
    assert "Weakest at 4KB random write at QD32, 40.0 MB/s (3rd of 3; 74% below the others' median of 155.0 MB/s)" in b, b
    # lower is better for power: C's 1 W is its standout
    assert "idle power, 1.00 W (1st of 3" in texts["C"] and "lower is better" in texts["C"]
    one = verdict.drive_texts({"A": {"sr": 1.0}})
    assert "nothing to compare" in one["A"]


def test_section_take_names_leader_and_last_with_numbers() -> None:
    docs = {d: doc for d, doc in _field()["corners-seq-read-128k"].items()}
    take = verdict.section_take(docs)
    assert take == "Best B (520.0 MB/s), last C (250.0 MB/s); 2.1x apart.", take
    power = verdict.section_take(_field()["power"])
    assert power.startswith("Lowest C (1.00 W), last B (3.00 W)"), power


def test_consistency_spread_is_sd_over_mean_of_the_steady_window() -> None:
    run = {"time_s": [1, 2, 3, 4, 5], "iops": [9999, 100, 300, 100, 300]}
    assert verdict.consistency_spread(run, from_s=1.5) == pytest.approx(50.0)


def test_spec_rows_put_the_box_beside_peak_and_steady_state() -> None:
    rated = _doc("vertex3-120", "V3", {"rated.mbps": {"type": "bar", "data": {"sequential read": 540.0}},
                                       "rated.iops": {"type": "bar", "data": {"4KB random read": 21000.0}}})
    steady = _doc("vertex3-120", "V3", {"steady-state.mbps": {"type": "bar", "data": {"sequential read": 500.0}}})
    rows = verdict.spec_rows({"rated": {"V3": rated}, "steady-state": {"V3": steady}},
                             {"V3": {"preset_id": "vertex3-120"}}, {("vertex3-120", "sequential read"): (550.0, "box")})
    seq = rows["V3"][0]
    assert (seq["rated"], seq["peak"], seq["steady"], seq["source"]) == (550.0, 540.0, 500.0, "box")
    assert rows["V3"][2]["peak"] == 21000.0


# ---------------------------------------------------------------------------
# names and prices
# ---------------------------------------------------------------------------


def test_drives_are_named_by_product_name_and_told_apart_by_hash() -> None:
    docs = [_doc("vertex3-120", "OCZ Vertex 3 120GB", {"c": _bar(1.0)}, h="1"),
            _doc("vertex3-120-slow", "OCZ Vertex 3 120GB", {"c": _bar(2.0)}, h="2"),
            _doc("x25m", "Intel X25-M", {"c": _bar(3.0)}, h="3")]
    names = names_with_hashes(docs)
    assert drive_label(docs[2], names) == "Intel X25-M"
    assert sorted(chart_values(docs, "c")) == ["Intel X25-M", "OCZ Vertex 3 120GB [11111111]", "OCZ Vertex 3 120GB [22222222]"]


def test_launch_prices_have_a_source_and_name_presets() -> None:
    presets = set(Drive.preset_ids())
    assert len(prices()) >= 6
    for p in prices().values():
        assert p.drive_id in presets and p.usd > 0 and p.source and p.kind
    v3 = price_of("vertex3-120")
    assert v3 is not None and v3.usd == 249.99 and "AnandTech" in v3.source
    assert round(usd_per_gb(v3, Drive.load("vertex3-120").capacity_bytes), 2) == 2.08
    assert price_of("generic-mlc-120") is None  # no sourced price: no guess


def test_prices_stay_out_of_the_drive_files() -> None:
    """The engine rejects unknown keys under [drive]: prices live in the report's table."""
    with pytest.raises(ValueError, match="price_usd"):
        Drive.load("vertex3-120").with_changes({"drive.price_usd": 249.99})


def test_matplotlib_is_a_dependency_of_the_package() -> None:
    if tomllib is None:
        pytest.skip("tomllib needs Python 3.11")
    meta = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert any(d.startswith("matplotlib") for d in meta["project"]["dependencies"])


@pytest.mark.parametrize("command", ["review", "report"])
def test_without_matplotlib_the_report_commands_say_so_in_one_line(tmp_path: Path, command: str) -> None:
    hide = tmp_path / "hide"
    (hide / "matplotlib").mkdir(parents=True)
    (hide / "matplotlib" / "__init__.py").write_text("raise ImportError(\"No module named 'matplotlib'\")\n")
    a, _ = small_review_drives(tmp_path)
    if command == "review":
        args = ["review", "--drive", str(a), "--out", str(tmp_path / "out"), "--quick", "--tests", "power"]
    else:
        (tmp_path / "r.json").write_text(json.dumps({"schema": "ssdlab.test-result"}))
        args = ["report", str(tmp_path / "r.json"), "--out", str(tmp_path / "out")]
    cp = run_cli(*args, env={"PYTHONPATH": str(hide)}, timeout=60)
    line = assert_one_line_error(cp, "matplotlib")
    assert "internal error" not in line and "pip install" in line
    assert not (tmp_path / "out" / "results").exists()  # refused before simulating


# ---------------------------------------------------------------------------
# the suite's new tests
# ---------------------------------------------------------------------------


def test_the_grid_and_the_mix_are_suite_tests_run_by_default() -> None:
    cdm = get_test("cdm")
    labels = [s["measure"] for s in cdm["runs"][0]["steps"] if "measure" in s]
    assert labels == [f"{t} {d}" for d in ("read", "write") for t in ("SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1")]
    steps = [s for s in cdm["runs"][0]["steps"] if "measure" in s]
    assert [(s["bs"], s["iodepth"]) for s in steps[:4]] == [("1m", 8), ("1m", 1), ("4k", 32), ("4k", 1)]
    mixed = get_test("mixed-70-30")["runs"][0]["steps"]
    assert {s["rwmixread"] for s in mixed} == {70} and {s["rw"] for s in mixed} == {"randrw"}
    for tid in ("cdm", "mixed-70-30", "atto-qd2", "atto-qd8", "corners-sata-3g", "seq-read-unwritten"):
        assert tid in default_test_ids()
    g3 = get_test("corners-sata-3g")
    assert all(r["drive"]["host.interface"] == "sata-3g" for r in g3["runs"])
    unwritten = get_test("seq-read-unwritten")["runs"]
    assert [r["state"]["state"] for r in unwritten] == ["clean", "filled"]


def test_a_run_with_drive_changes_runs_on_the_changed_drive(tmp_path: Path) -> None:
    """The 3Gbps corners: the same drive behind a 280 MB/s link reads at most that fast."""
    from ssdlab.backends import SuiteRunner
    from ssdlab.suite import QUICK

    _, b = small_review_drives(tmp_path)
    runner = SuiteRunner(str(b), scale=QUICK)
    test = get_test("corners-sata-3g")
    test["runs"] = [r for r in test["runs"] if r["steps"][0]["measure"] == "128KB sequential read"]
    test["runs"][0]["steps"][0]["iodepth"] = 32
    doc = runner.run_test(test)
    fast = runner.run_test({**test, "runs": [{k: v for k, v in test["runs"][0].items() if k != "drive"}]})
    slow_mbps, fast_mbps = (d["figures"][0]["value"] for d in (doc, fast))
    assert slow_mbps <= 280.0 < fast_mbps, (slow_mbps, fast_mbps)


# ---------------------------------------------------------------------------
# charts
# ---------------------------------------------------------------------------


def test_coinciding_lines_are_found() -> None:
    from ssdlab.report.charts import coinciding

    same = {"x": [1, 2], "y": [10.0, 20.0]}
    series = {"A": {"read": same}, "B": {"read": dict(same)}, "C": {"read": {"x": [1, 2], "y": [10.0, 21.0]}}}
    assert coinciding(series) == [("read", ["A", "B"])]


def _extents(fig: Any, prefix: str) -> List[Any]:
    """Window extents of the texts and legends whose gid starts with ``prefix``."""
    r = fig.canvas.get_renderer()
    out = [t.get_window_extent(r) for ax in fig.axes for t in ax.texts if str(t.get_gid()).startswith(prefix)]
    out += [leg.get_window_extent(r) for leg in fig.legends + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
            if str(leg.get_gid()).startswith(prefix)]
    return out


@pytest.mark.parametrize("labels", [["repeated", "incompressible"], ["a", "b", "c", "d", "e", "f"],
                                    [f"{t} {d}" for d in ("read", "write") for t in ("SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1")]])
def test_legends_never_cover_bar_labels_at_13_drives(labels: List[str]) -> None:
    from ssdlab.report.charts import bar_chart

    # names of one, two and (wrapped at 30 characters) three lines; values past 100,000 (crowded ticks)
    names = [f"Drive {i} with a long product name ({i * 8} dies)" if i % 3 else
             f"Drive {i} Everlast Pro Max Ultra 1GB (16 dies, tPROG 600 us)" if i % 2 else f"Drive {i}" for i in range(13)]
    values = {name: {lab: 100.0 + 37 * i + 11 * j + (9_000 * i if j == 1 else 0) for j, lab in enumerate(labels)}
              for i, name in enumerate(names)}
    fig, order = bar_chart("A title long enough to need wrapping " * 4, values)
    fig.canvas.draw()
    bar_labels, legends = _extents(fig, "barlabel"), _extents(fig, "legend")
    assert len(bar_labels) == 13 * len(labels)
    assert all(not leg.overlaps(b) for leg in legends for b in bar_labels)
    assert order[0].startswith("Drive 12")
    # no text on another: the figure title, panel titles, drive names, value labels
    texts = [t for t in fig.findobj(Text)
             if t.get_visible() and t.get_text().strip() and (t.axes is None or t.axes.get_visible())]
    boxes = [(t.get_text(), t.get_window_extent(fig.canvas.get_renderer()).shrunk(0.98, 0.9)) for t in texts]
    hits = [(a, b) for i, (a, ba) in enumerate(boxes) for b, bb in boxes[i + 1:] if ba.overlaps(bb)]
    assert not hits, hits[:5]


def test_latency_panels_come_from_the_jobs_percentiles() -> None:
    from ssdlab.report.page import latency_exceedance, latency_panels

    clat = {"max": 9000, "mean": 100.0, "percentile": {"50.000000": 80, "99.000000": 500, "99.900000": 2000, "1.000000": 20}}
    job = {"jobname": "QD1", "job": {"rw": "randrw", "bs": "4k"}, "read": {"total_ios": 1000, "clat_ns": clat},
           "write": {"total_ios": 10, "clat_ns": clat}}
    panels = latency_panels({"A": {"jobs": [job, {**job, "job": {"rw": "read", "bs": "128k"}}]}})
    assert sorted(panels) == ["QD1, reads", "QD1, writes"]
    assert panels["QD1, reads"]["A"] == {"p50": 0.08, "p99": 0.5, "p99.9": 2.0, "max": 9.0}
    pts = latency_exceedance(job, "read")
    assert pts[0] == (0.02, 0.99) and pts[-1] == (9.0, 0.001)
    assert all(a[1] >= b[1] - 1e-12 and a[0] <= b[0] for a, b in zip(pts, pts[1:]))


# ---------------------------------------------------------------------------
# the page of a quick review
# ---------------------------------------------------------------------------


def test_the_page_opens_with_the_verdict_and_the_grid_and_names_products(quick_review: Path) -> None:
    page = (quick_review / "index.html").read_text()
    names = ["test drive 4x320x256", "test drive 8x160x256"]
    assert page.index("id=verdict") < page.index("id=cdm") < page.index("id=drives") < page.index("id=four-corners")
    verdict_html = page[page.index("id=verdict"):page.index("id=cdm")]
    for n in names:
        assert f"<p><b>{n}</b>: Stands out at" in verdict_html or f"<p><b>{n}</b>: Nowhere ahead" in verdict_html
    assert verdict_html.count("<li>") >= 8  # a take per section
    assert page.count('<div class="cdm">') == 2 and "SEQ1M" in page and "RND4K" in page
    assert "The box against the drive" in page
    # one folded reproduce block per test that ran, no reproduce line in captions
    ran = [t for t in default_test_ids() if f'<details class="test" id="{t}" open>' in page]
    assert page.count('<details class="reproduce">') == len(ran) - 3  # three Storage Bench traces skip in --quick
    assert "Reproduce: " not in page
    # product names, not preset ids, label the charts
    svg = (quick_review / "charts" / "corners-4k-random-read-qd3.mbps.svg").read_text()
    assert "<!-- test drive 4x320x256 -->" in svg and "small-a" not in svg
    # latency: percentile panels for the random tests, a distribution for consistency
    charts = {p.name for p in (quick_review / "charts").glob("*.png")}
    assert {"corners-4k-random-read-qd3.latency.png", "cdm.latency.png", "mixed-70-30.latency.png",
            "consistency.latency-cdf.png"} <= charts
    # consistency: 0-IOPS count in the captions, the selected button marked
    assert "with 0 IOPS (red markers on the bottom edge), whole run:" in page and 'class=on onclick="ssdlabSpare(\'v0\')"' in page


@pytest.mark.slow  # over 12 s on 2 cores: the default run stays under 8 minutes
def test_a_report_of_results_from_an_older_ssdlab_still_builds(quick_review: Path, tmp_path: Path) -> None:
    """Results without the new tests (no grid, no rated run) give a page with
    the drive table after the verdict and no spec table."""
    from ssdlab.report import build_report
    from ssdlab.results import load_results

    docs = [d for d in load_results([str(quick_review / "results")])
            if d["test"]["id"] in ("corners-seq-read-128k", "power", "consistency")]
    old = copy.deepcopy(docs)
    page = build_report(docs, str(tmp_path / "old")).read_text()
    assert docs == old
    assert page.index("id=verdict") < page.index("id=drives") < page.index("id=four-corners")
    assert "The box against the drive" not in page
    assert re.search(r"<p><b>test drive 4x320x256</b>: \w", page)


@pytest.mark.slow  # over 12 s on 2 cores: the default run stays under 8 minutes
def test_the_report_shows_the_reviews_stories_for_its_drives(tmp_path: Path) -> None:
    """The seed reviews' claims about the report's drives, judged on its own
    results; a claim whose test the report lacks is "not run", one about
    other drives is left out (counted)."""
    from ssdlab.backends.sim_runner import SuiteRunner
    from ssdlab.report import build_report
    from ssdlab.suite.review import run_test_document

    docs = [run_test_document(SuiteRunner(Drive.load(d)), d, "corners-4k-random-write-qd3")
            for d in ("vertex3-120", "vertex3-240")]
    page = build_report(docs, str(tmp_path / "r")).read_text()
    section = page[page.index("<h2 id=stories>"):page.index("id=about-results")]
    assert 'href="#stories"' in page
    s05 = re.search(r"<tr><td>S05</td>.*?</tr>", section)
    assert s05 and "holds</td></tr>" in s05.group(0)
    s09 = re.search(r"<tr><td>S09</td>.*?</tr>", section)  # needs the random reads too
    assert s09 is None, "S09 also concerns the Force F120, not in this report"
    s14 = re.search(r"<tr><td>S14</td>.*?</tr>", section)
    assert s14 and "not run</td></tr>" in s14.group(0) and "as-ssd" in s14.group(0)
    assert "other claims concern drives not in this report" in section


def test_a_figure_is_charted_once_its_iops_join_the_mbps_table(tmp_path: Path) -> None:
    """A throughput test's IOPS chart repeats its 4KB bars in another unit:
    the page draws the MB/s chart and puts the IOPS in its table; IOPS of
    measures the MB/s chart does not have keep their own chart."""
    from ssdlab.report import build_report

    def doc(drive_id: str, name: str, h: str, test_id: str, iops_label: str) -> Dict[str, Any]:
        d = _doc(drive_id, name, {f"{test_id}.mbps": {**_bar(80.0, "4KB random"), "data": {"4KB random": 80.0, "seq": 500.0}},
                                  f"{test_id}.iops": _bar(19531.0, iops_label, unit="IOPS")}, test_id=test_id, h=h)
        d["test"].update(title=f"test {test_id}", about="a test", group="other")
        return d

    docs = [doc("a", "A", "1", "same", "4KB random"), doc("b", "B", "2", "same", "4KB random"),
            doc("a", "A", "1", "other", "4KB rated"), doc("b", "B", "2", "other", "4KB rated")]
    page = build_report(docs, str(tmp_path / "r")).read_text()
    charts = {p.name for p in (tmp_path / "r" / "charts").glob("*.png")}
    assert "same.mbps.png" in charts and "same.iops.png" not in charts
    assert "<td>A, IOPS</td>" in page and "19,531" in page
    assert {"other.mbps.png", "other.iops.png"} <= charts
