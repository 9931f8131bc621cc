"""A measured phase as the results document keeps it, whichever backend ran
it: a fio-shaped job (read/write/trim, ``ssdlab``), its place in the test
(``run``, ``step``, ``job``), its wall time and the series kept."""

from __future__ import annotations

from typing import Any, Dict

from ..suite.vocabulary import Measured

__all__ = ["KEPT_SERIES", "job_doc"]

#: Per-interval series kept in results files.
KEPT_SERIES = ("time_s", "iops", "mbps", "read_bytes", "write_bytes", "lat_p99_ns")


def job_doc(m: Measured, wall_s: float) -> Dict[str, Any]:
    """A measured phase as a fio-shaped job (read/write/trim, ssdlab, kept series); ``wall_s``: the wall time
    it took (the simulator's own count, or the fio run's)."""
    r = m["result"]
    d = r.to_dict(series=False)
    d["jobname"] = m["label"]
    d["run"] = m["run"]
    d["step"] = m["step"]
    d["job"] = m["job"]
    d["wall_time_s"] = round(wall_s, 3)
    d["series"] = {k: r.series[k].tolist() for k in KEPT_SERIES if k in r.series}
    return d
