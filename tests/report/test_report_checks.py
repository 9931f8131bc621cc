"""The figures a reviewer would question are marked: a deeper queue that
runs slower, a steady state above the clean drive's peak; and the verdict's
wording fits the number of drives."""

from __future__ import annotations

from typing import Any, Dict, List

from ssdlab.report.checks import find_checks
from ssdlab.report.verdict import Standout, _against


def _doc(figs: List[Any]) -> Dict[str, Any]:
    return {"figures": [{"chart": "c", "label": lab, "metric": m, "value": v, "unit": u} for lab, m, v, u in figs]}


def test_a_qd1_figure_above_its_qd8_figure_is_marked_once() -> None:
    cdm = _doc([("SEQ1M Q8T1 read", "read MB/s", 461.4, "MB/s"), ("SEQ1M Q1T1 read", "read MB/s", 532.7, "MB/s"),
                ("SEQ1M Q8T1 read", "read IOPS", 440.0, "IOPS"), ("SEQ1M Q1T1 read", "read IOPS", 508.0, "IOPS"),
                ("RND4K Q32T1 read", "read MB/s", 272.9, "MB/s"), ("RND4K Q1T1 read", "read MB/s", 27.1, "MB/s")])
    checks = find_checks({"cdm": {"Samsung 830": cdm}})
    assert len(checks) == 1
    assert checks[0].test_id == "cdm" and "SEQ1M Q1T1 read 532.7 MB/s is above SEQ1M Q8T1 read 461.4 MB/s" in checks[0].message


def test_scaling_within_noise_is_not_marked() -> None:
    sweep = _doc([("QD1", "read MB/s", 300.0, "MB/s"), ("QD2", "read MB/s", 298.0, "MB/s"), ("QD4", "read MB/s", 500.0, "MB/s")])
    assert find_checks({"corners-seq-read-qd-sweep": {"d": sweep}}) == []


def test_a_steady_state_above_the_rated_peak_is_marked() -> None:
    rated = _doc([("sequential read", "read MB/s", 500.7, "MB/s"), ("4KB random write", "write IOPS", 66666, "IOPS")])
    steady = _doc([("sequential read", "read MB/s", 540.3, "MB/s"), ("4KB random write", "write IOPS", 9960, "IOPS")])
    checks = find_checks({"rated": {"d": rated}, "steady-state": {"d": steady}})
    assert [c.test_id for c in checks] == ["steady-state"] and "108% of the rated-style peak" in checks[0].message


def test_against_one_other_drive_the_verdict_names_that_drive_not_a_median() -> None:
    two = _against(Standout("ss", 7138.0, 3072.0, 2.3, 1, 2))
    assert "the other drive's 3,072 IOPS" in two and "median" not in two
    three = _against(Standout("ss", 7138.0, 3072.0, 2.3, 1, 3))
    assert "the others' median of 3,072 IOPS" in three
