"""Whether a twin can be trusted: a twin whose fit does not reproduce its own
probe, or whose probe showed a behaviour the twin does not have, says so (in
``ssdlab fit --probe``'s output, the drive file's header, twin.json and
``ssdlab twin-report``) instead of passing as a twin."""

from __future__ import annotations

from typing import Any, List, Optional, Sequence

from ..features.common import Features, field_of
from ..records import ProbeJobError, Reliability

#: The fit's objective is the RMS of the probe jobs' rate errors over a 10% tolerance: 1 is a twin within 10% on
#: the whole, and beyond twice that (an RMS error of 20%) the twin does not reproduce its own probe.
UNRELIABLE_OBJECTIVE = 2.0
#: A probe job or a feature the twin misses by more than this is named (the review's tolerance is 15%; a
#: feature that rests on one job scatters more than a figure).
MISSED_SHARE = 0.25
#: The features that measure a behaviour (not a derived choice) and that the twin's probe measures alike.
CHECKED = ("link_bytes_per_s", "seq_read_bytes_per_s", "seq_write_bytes_per_s", "read_iops_4k_qd32",
           "write_iops_4k_qd32", "read_latency_4k_us", "write_latency_4k_us", "steady_write_iops",
           "slc_cache_bytes", "slc_write_bytes_per_s", "post_cache_write_bytes_per_s", "static_cache_bytes")
#: Behaviours the probe sees as yes or no.
SEEN = ("slc_cache", "perf_mode", "readahead", "data_reduction")
#: The most probe jobs named among the worst.
WORST_JOBS = 3
#: A job that moves less than this (one write and a flush) measures a latency, not a rate: its MB/s is not judged.
MIN_RATE_MBPS = 1.0
#: The cache's features, judged only where the probe found a cache (without one they describe the cache fill).
CACHE_FEATURES = ("slc_cache_bytes", "slc_write_bytes_per_s", "post_cache_write_bytes_per_s", "static_cache_bytes")


def _missed(name: str, measured: Any, twin: Any) -> Optional[str]:
    if isinstance(measured, bool) or measured is None or not isinstance(measured, (int, float)) or not measured:
        return None
    if not isinstance(twin, (int, float)) or isinstance(twin, bool):
        return f"{name}: measured {measured:,.4g}, the twin's probe has none: the model does not represent it"
    err = float(twin) / float(measured) - 1
    if abs(err) <= MISSED_SHARE:
        return None
    return f"{name}: measured {measured:,.4g}, twin {twin:,.4g} ({err:+.0%}): the model does not represent it"


def assess(objective: float, jobs: Sequence[ProbeJobError], measured: Features, twin: Features) -> Reliability:
    """The problems of a twin: its objective, the probe jobs and the features it misses."""
    problems: List[str] = []
    if objective > UNRELIABLE_OBJECTIVE:
        worst = sorted(jobs, key=lambda j: -abs(float(j["error"])))[:WORST_JOBS]
        problems.append(f"the fit does not reproduce its own probe: objective {objective:.2f} (above "
                        f"{UNRELIABLE_OBJECTIVE:g}, an RMS error of {objective * 10:.0f}%); worst jobs "
                        + ", ".join(f"{j['job']} {j['measured_mbps']:,.0f} MB/s measured, {j['twin_mbps']:,.0f} twin"
                                    for j in worst))
    for j in jobs:
        if float(j["measured_mbps"]) < MIN_RATE_MBPS:
            continue
        if abs(float(j["error"])) > MISSED_SHARE and objective <= UNRELIABLE_OBJECTIVE:
            problems.append(f"probe job {j['job']}: measured {j['measured_mbps']:,.0f} MB/s, twin "
                            f"{j['twin_mbps']:,.0f} ({float(j['error']):+.0%})")
    for name in SEEN:
        m, t = field_of(measured, name, "value"), field_of(twin, name, "value")
        if m is True and t is not True:
            problems.append(f"{name}: the probe shows it, the twin does not have it: the model does not represent it")
    cache = field_of(measured, "slc_cache", "value") is True
    for name in CHECKED:
        if name in CACHE_FEATURES and not cache:
            continue
        p = _missed(name, field_of(measured, name, "value"), field_of(twin, name, "value"))
        if p is not None:
            problems.append(p)
    return {"reliable": not problems, "objective": round(float(objective), 4), "problems": problems}
