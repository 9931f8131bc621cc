"""A twin that does not reproduce its probe says so: the objective, the probe jobs and the features it misses,
and twin-report reads what the fit recorded."""

import json

from ssdlab.cli.fit import format_twin
from ssdlab.twin.fit.reliability import UNRELIABLE_OBJECTIVE, assess
from ssdlab.twin.report import load_reliability


def _f(v):
    return {"value": v, "unit": "", "confidence": "high", "how": ""}


JOBS = [{"job": "seqwrite-128k-qd32", "measured_mbps": 2209.0, "twin_mbps": 381.0, "error": 381 / 2209 - 1},
        {"job": "randread-4k-qd1", "measured_mbps": 50.0, "twin_mbps": 51.0, "error": 0.02}]


def test_an_objective_far_above_one_is_unreliable_and_names_the_worst_job():
    r = assess(6.95, JOBS, {}, {})
    assert not r["reliable"]
    assert "objective 6.95" in r["problems"][0] and "seqwrite-128k-qd32 2,209 MB/s measured, 381 twin" in r["problems"][0]


def test_a_behaviour_without_a_model_is_named_with_how_far():
    measured = {"slc_cache": _f(True), "slc_cache_bytes": _f(160e9), "seq_read_bytes_per_s": _f(3.5e9)}
    twin = {"slc_cache": _f(None), "seq_read_bytes_per_s": _f(0.5e9)}
    r = assess(0.5, JOBS[1:], measured, twin)
    text = "\n".join(r["problems"])
    assert "slc_cache: the probe shows it, the twin does not have it" in text
    assert "slc_cache_bytes: measured 1.6e+11, the twin's probe has none" in text
    assert "seq_read_bytes_per_s: measured 3.5e+09, twin 5e+08 (-86%)" in text


def test_a_twin_that_reproduces_its_probe_is_reliable():
    f = {"seq_write_bytes_per_s": _f(500e6)}
    r = assess(UNRELIABLE_OBJECTIVE / 2, JOBS[1:], f, {"seq_write_bytes_per_s": _f(520e6)})
    assert r == {"reliable": True, "objective": 1.0, "problems": []}


def test_the_fit_output_and_twin_report_show_it(tmp_path):
    rel = assess(6.95, JOBS, {}, {})
    rec = {"twin_id": "t", "source": "s", "fit": {"trials": 1, "objective_start": 7.0, "objective": 6.95, "worst": 9.0},
           "values": {}, "probe_jobs": JOBS, "reliability": rel}
    assert "UNRELIABLE TWIN: what it does not reproduce of its own probe (1):" in format_twin(rec)
    path = tmp_path / "twin.json"
    path.write_text(json.dumps({"values": {}, "reliability": rel}))
    assert load_reliability(path) == rel
    path.write_text(json.dumps({"values": {}}))
    assert load_reliability(path) is None
