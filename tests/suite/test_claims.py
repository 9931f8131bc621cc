"""Claims a review makes, checked on the built-in 120GB preset through the
Python API (each runs the engine for minutes of simulated time in seconds)."""

from __future__ import annotations

import numpy as np
import pytest

from ssdlab import Simulator

JOB = {"rw": "randwrite", "bs": "4k", "iodepth": 32, "data_pattern": "incompressible"}


def test_random_writes_on_a_filled_drive_fall_to_a_steady_state_once_the_spare_area_is_used() -> None:
    sim = Simulator("generic-mlc-120")
    sim.precondition("filled")
    r = sim.run(JOB, runtime="300s")
    iops = r.series["iops"]
    fresh, steady = float(np.mean(iops[:60])), float(np.mean(iops[-100:]))
    assert fresh > 40_000  # NAND-bound: 16 dies x 16KB per 1.3 ms program
    assert steady < fresh / 3
    assert r.data["ssdlab"]["gc_victims"] > 0 and r.waf > 1.5
    assert r.smart["erase_count_max"] >= 1


@pytest.mark.slow  # over 12 s on 2 cores: the default run stays under 8 minutes
def test_25_percent_spare_area_raises_the_minimum_iops() -> None:
    def steady_min_iops(span_percent: int) -> float:
        sim = Simulator("generic-mlc-120")
        span = sim.parse_job(rw="write", size=f"{span_percent}%")["size_bytes"]
        sim.precondition("filled", span=span)
        r = sim.run(JOB, size=span, runtime="600s")
        return float(np.min(r.series["iops"][-100:]))

    assert steady_min_iops(75) > steady_min_iops(100) + 5_000


def test_a_secure_erase_restores_fresh_out_of_box_speed() -> None:
    sim = Simulator("generic-mlc-120")
    sim.precondition("filled")
    tortured = sim.run(JOB, runtime="200s")
    sim.secure_erase()
    fresh = sim.run(JOB, runtime="10s")
    assert fresh.iops > 3 * float(np.mean(tortured.series["iops"][-50:]))
    assert fresh.data["ssdlab"]["gc_victims"] == 0
