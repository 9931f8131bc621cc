"""The round trip over every preset (ssdlab.twin.roundtrip): its table."""

from __future__ import annotations

from ssdlab import Drive


def test_the_round_trip_table_shows_each_twins_garbage_collection_beside_the_originals() -> None:
    from ssdlab.twin.roundtrip import gc_of, markdown_table

    assert [gc_of(Drive.load(p)) for p in ("dc-s3700-200", "crucial-m4-256", "vertex3-120")] == \
        ["paced", "lazy", "lazy+recycle"]
    truth = {"dies": 32, "page_size_bytes": 8192, "write_buffer_bytes": 2**25, "spare_fraction": 0.074,
             "data_reduction": False, "compressible_stored_fraction": 1.0}
    internals = [{"name": k, "truth": v, "recovered": v, "verdict": "exact"} for k, v in truth.items()]
    row = {"preset": "crucial-m4-256", "internals": internals, "review_within_15": 9, "review_figures": 10,
           "review_share_within_15": 0.9, "review_median_abs_error": 0.01, "worst_test": None, "tests": [],
           "fit_objective_start": 0.5, "fit_objective": 0.1, "target_met": False,
           "gc": {"truth": "lazy", "twin": "paced", "verdict": "missed"}}
    table = markdown_table([row]).splitlines()
    assert table[0].endswith("| GC |") and table[2].endswith("| paced x |")


def test_presets_run_one_invocation_at_a_time_under_one_directory_make_one_record(tmp_path, monkeypatch) -> None:
    import io
    import json

    from ssdlab.twin import roundtrip as rt

    def one(preset, out, **kw):
        return {"preset": preset, "target_met": preset == "b", "internals": [], "review_figures": 1}

    monkeypatch.setattr(rt, "roundtrip_one", one)
    monkeypatch.setattr(rt, "_csv_rows", lambda rows: [{"preset": r["preset"]} for r in rows])
    rt.roundtrip(["a", "b"], tmp_path, trials=20, jobs=1, command="run 1", stream=io.StringIO())
    rt.roundtrip(["c", "a"], tmp_path, trials=20, jobs=1, command="run 2", stream=io.StringIO())
    doc = json.loads((tmp_path / "roundtrip.json").read_text())
    assert [r["preset"] for r in doc["rows"]] == ["b", "c", "a"]
    assert doc["commands"] == ["run 1", "run 2"] and doc["presets"] == 3 and doc["target_met"] == 1
    said = io.StringIO()
    rt.roundtrip(["c"], tmp_path, trials=40, jobs=1, command="run 3", stream=said)
    doc = json.loads((tmp_path / "roundtrip.json").read_text())
    assert [r["preset"] for r in doc["rows"]] == ["c"] and doc["commands"] == ["run 3"]
    assert "other settings" in said.getvalue() and "trials 20" in said.getvalue()


def test_round_trips_run_at_once_in_separate_directories_merge_into_one_record(tmp_path, monkeypatch) -> None:
    import io
    import json

    import pytest

    from ssdlab.twin import roundtrip as rt

    def one(preset, out, **kw):
        return {"preset": preset, "target_met": preset != "b", "internals": [], "review_figures": 1}

    monkeypatch.setattr(rt, "roundtrip_one", one)
    monkeypatch.setattr(rt, "_csv_rows", lambda rows: [{"preset": r["preset"]} for r in rows])
    rt.roundtrip(["a", "b"], tmp_path / "one", trials=20, jobs=1, command="run 1", stream=io.StringIO())
    rt.roundtrip(["b", "c"], tmp_path / "two", trials=20, jobs=1, command="run 2", stream=io.StringIO())
    assert rt.merge_runs(tmp_path / "all", [tmp_path / "one", tmp_path / "two"], stream=io.StringIO()) == 3
    doc = json.loads((tmp_path / "all" / "roundtrip.json").read_text())
    assert [r["preset"] for r in doc["rows"]] == ["a", "b", "c"] and doc["target_met"] == 2
    assert doc["commands"] == ["run 1", "run 2"] and doc["trials"] == 20
    rt.roundtrip(["d"], tmp_path / "three", trials=40, jobs=1, command="run 3", stream=io.StringIO())
    with pytest.raises(ValueError, match="three/roundtrip.json: a run with other settings .*trials 40"):
        rt.merge_runs(tmp_path / "all", [tmp_path / "three"], stream=io.StringIO())
    with pytest.raises(ValueError, match="not a finished round trip"):
        rt.merge_runs(tmp_path / "all", [tmp_path / "none"], stream=io.StringIO())


def test_the_fits_progress_reaches_the_round_trips_log_with_its_preset() -> None:
    import io

    from ssdlab.twin.roundtrip import Prefixed

    log = io.StringIO()
    s = Prefixed(log, "twin round trip: [p] ")
    s.write("ssdlab fit: 3/20 trials")
    s.write(", best 0.5\nssdlab fit: polish 1/16\n")
    assert log.getvalue() == "twin round trip: [p] ssdlab fit: 3/20 trials, best 0.5\ntwin round trip: [p] ssdlab fit: polish 1/16\n"
