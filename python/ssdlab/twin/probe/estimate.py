"""How long the probe takes on a real target, said before it starts: each job's time from its fio options (a timed
job's runtime, a sized job's bytes over a rate), summed by stage with the bytes each stage writes. The rates are
the ones the probe has measured so far (:func:`rates_from`), or, before any, stated conservative ones."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ... import _core
from .names import (
    CACHE_AFTER_IDLE,
    CACHE_EXPECTED_SHARE,
    CACHE_FILL,
    CLEAN,
    FILL_JOB,
    FULL_EXPECTED_ONSET_SHARE,
    FULL_RANDWRITE,
    FULL_SEGMENT_S,
    FULL_TAIL_SHARE,
    SEQREAD_4M_QD4,
    SEQWRITE_128K_QD32,
    seqread_128k,
)
from .spec import ProbeJob

__all__ = ["ASSUMED_WRITE_BYTES_PER_S", "ASSUMED_READ_BYTES_PER_S", "TRIM_S", "Rates", "StageEstimate",
           "assumed_rates", "rates_from", "measured_seconds", "job_seconds", "job_write_bytes", "estimate", "estimate_text"]

#: The write rate assumed before the probe measured one: the post-cache rate of a slow (QLC) drive of 2019-2020 and
#: about the SATA-era drives' steady sequential writes (the torture's length assumes the same 100 MB/s), so that the
#: estimate errs long on most drives rather than short.
ASSUMED_WRITE_BYTES_PER_S = 100e6
#: The read rate assumed before the probe measured one: below any SATA drive's sequential reads.
ASSUMED_READ_BYTES_PER_S = 250e6
#: Seconds a TRIM of the whole target is counted (a drive answers one in well under this; the simulator at once).
TRIM_S = 5.0


@dataclass(frozen=True)
class Rates:
    """The sequential write and read rates (B/s) sized jobs are estimated at, and where they come from: the clean
    stage's writes (on an empty drive, in any write cache) at their own rate, every later write at the other."""

    write_bytes_per_s: float
    read_bytes_per_s: float
    source: str
    clean_write_bytes_per_s: float = ASSUMED_WRITE_BYTES_PER_S


def assumed_rates() -> Rates:
    return Rates(ASSUMED_WRITE_BYTES_PER_S, ASSUMED_READ_BYTES_PER_S,
                 f"assumed {ASSUMED_WRITE_BYTES_PER_S / 1e6:,.0f} MB/s write, "
                 f"{ASSUMED_READ_BYTES_PER_S / 1e6:,.0f} MB/s read (nothing measured yet)")


def _mbps(figures: Dict[str, Any], name: str) -> Optional[float]:
    f = figures.get(name)
    v = f.get("mbps") if isinstance(f, dict) else None
    return float(v) * 1e6 if v else None


def rates_from(figures: Dict[str, Any]) -> Rates:
    """The rates for the jobs still to run, from what the probe measured: writes at the whole-drive fill's mean rate
    once it ran (it writes past any cache, as the sized writes of the later stages do); before it, the clean stage's
    sequential write only where it is slower than the assumed rate (a drive with a write cache writes the clean
    stage in it, far faster than it writes a whole drive). Reads at the clean stage's sequential read rate."""
    a = assumed_rates()
    fill, clean_w = _mbps(figures, FILL_JOB), _mbps(figures, SEQWRITE_128K_QD32)
    read = _mbps(figures, seqread_128k(32)) or _mbps(figures, SEQREAD_4M_QD4)
    if not (fill or clean_w or read):
        return a
    if fill:
        write, wsrc = fill, f"the fill's {fill / 1e6:,.0f} MB/s write"
    elif clean_w and clean_w < a.write_bytes_per_s:
        write, wsrc = clean_w, f"the clean stage's {clean_w / 1e6:,.0f} MB/s write"
    else:
        write, wsrc = a.write_bytes_per_s, f"an assumed {a.write_bytes_per_s / 1e6:,.0f} MB/s write"
    if read:
        rsrc = f"the clean stage's {read / 1e6:,.0f} MB/s read"
    else:
        read, rsrc = a.read_bytes_per_s, f"an assumed {a.read_bytes_per_s / 1e6:,.0f} MB/s read"
    clean = clean_w or a.write_bytes_per_s
    csrc = f" (the clean stage's own writes at its {clean_w / 1e6:,.0f} MB/s)" if clean_w else ""
    return Rates(write, read, f"{wsrc}{csrc}, {rsrc}", clean)


def _seconds(v: Any) -> float:
    """A fio time option in seconds (fio's duration grammar, as the engine parses it; absent: 0)."""
    return 0.0 if v is None else _core.parse_duration_ns(str(v), "runtime") / 1e9


def _span(job: ProbeJob, cap: int) -> int:
    o = job.options
    return int(o["size"]) if "size" in o else max(0, cap - int(o.get("offset", 0)))


def _cache_expected(job: ProbeJob, cap: int, rates: Rates) -> Tuple[float, float]:
    """A segmented cache write's expected seconds (without its delay) and bytes: the cache fill steps down past
    :data:`CACHE_EXPECTED_SHARE` of the capacity, written at the clean stage's (the cache's) rate, and goes on half
    that time at the write rate; the write after idle time is expected to do as much with its own size (at least
    three segments: a drive that gave nothing back starts past the step)."""
    size = float(job.options["size"])
    fast = min(size, CACHE_EXPECTED_SHARE * cap) if job.name == CACHE_FILL else size
    t = fast / rates.clean_write_bytes_per_s
    tail = max(FULL_TAIL_SHARE * t, 3 * FULL_SEGMENT_S - t)
    return t + tail, min(size, fast + tail * rates.write_bytes_per_s)


def job_seconds(job: ProbeJob, cap: int, rates: Rates, most: bool = False, segmented: bool = False) -> float:
    """One job's time on the target: its delays, then its runtime (a timed job) or its bytes at the rate. The full
    drive's random writes, which end a bounded time after their rate steps down, are expected to step down past
    :data:`FULL_EXPECTED_ONSET_SHARE` of the capacity at the write rate (``most``: at most, they write their whole
    size); so are the cache stage's writes where ``segmented`` (a modern drive: :func:`_cache_expected`)."""
    o = job.options
    if job.name == FULL_RANDWRITE and not most:
        onset = min(float(o["io_size"]), FULL_EXPECTED_ONSET_SHARE * cap) / rates.write_bytes_per_s
        return min((1 + FULL_TAIL_SHARE) * onset, job_seconds(job, cap, rates, most=True))
    if job.name in (CACHE_FILL, CACHE_AFTER_IDLE) and segmented and not most:
        whole = job_seconds(job, cap, rates, most=True)
        return min(whole, _seconds(o.get("startdelay")) + _cache_expected(job, cap, rates)[0])
    t = _seconds(o.get("startdelay")) + _seconds(o.get("ramp_time"))
    if o.get("time_based"):
        return t + _seconds(o.get("runtime"))
    if job.direction == "trim":
        return t + TRIM_S
    if o.get("ioengine") == "null":
        return t
    nbytes = int(o.get("io_size", _span(job, cap))) * int(o.get("numjobs", 1))
    if o.get("runtime") and job.direction == "write":
        # a sized write with a runtime ends at whichever comes first
        return t + min(_seconds(o.get("runtime")), nbytes / rates.write_bytes_per_s)
    if job.direction == "read":
        return t + nbytes / rates.read_bytes_per_s
    if job.stage == CLEAN:
        return t + nbytes / rates.clean_write_bytes_per_s
    if job.name == FULL_RANDWRITE:
        # past the spare area the full drive writes at what garbage collection leaves, which no job before has
        # measured (a 1TB TLC drive's 128KB writes step down to about 51 MB/s there): at most the assumed rate
        return t + nbytes / min(rates.write_bytes_per_s, ASSUMED_WRITE_BYTES_PER_S)
    return t + nbytes / rates.write_bytes_per_s


def job_write_bytes(job: ProbeJob, cap: int, rates: Rates, segmented: bool = False) -> float:
    """What one job writes to the target (a timed write: at most its runtime at the write rate; a random write of
    small blocks writes far less; a segmented write what it is expected to before it ends)."""
    o = job.options
    if job.name in (CACHE_FILL, CACHE_AFTER_IDLE) and segmented:
        return _cache_expected(job, cap, rates)[1]
    if job.direction != "write" or o.get("ioengine") == "null":
        return 0.0
    if o.get("time_based"):
        rate = rates.clean_write_bytes_per_s if job.stage == CLEAN else rates.write_bytes_per_s
        return _seconds(o.get("runtime")) * rate * int(o.get("numjobs", 1))
    if o.get("runtime"):
        return min(float(int(o.get("io_size", _span(job, cap)))), _seconds(o.get("runtime")) * rates.write_bytes_per_s)
    if job.name == FULL_RANDWRITE:
        # the expected onset, then the time after it at no more than the assumed rate (their size at most)
        onset = min(float(o["io_size"]), FULL_EXPECTED_ONSET_SHARE * cap)
        tail = FULL_TAIL_SHARE * onset / rates.write_bytes_per_s * min(rates.write_bytes_per_s, ASSUMED_WRITE_BYTES_PER_S)
        return min(float(o["io_size"]), onset + tail)
    return float(int(o.get("io_size", _span(job, cap))) * int(o.get("numjobs", 1)))


@dataclass(frozen=True)
class StageEstimate:
    """A stage's jobs, time, the bytes its sized writes write and at most what its timed writes do, and its time
    where the full drive's random writes never step down."""

    stage: str
    jobs: int
    seconds: float
    write_bytes: float
    timed_write_bytes: float = 0.0
    most_seconds: float = 0.0


def estimate(jobs: Sequence[ProbeJob], cap: int, rates: Rates, segmented: bool = False) -> List[StageEstimate]:
    """Each stage's time and written bytes, in the order the stages run (``segmented``: the cache stage's writes
    end past their step, as on a modern drive)."""
    order: List[str] = []
    acc: Dict[str, List[float]] = {}
    for j in jobs:
        if j.stage not in acc:
            order.append(j.stage)
            acc[j.stage] = [0, 0.0, 0.0, 0.0, 0.0]
        a = acc[j.stage]
        a[0] += 1
        a[1] += job_seconds(j, cap, rates, segmented=segmented)
        a[3 if j.options.get("time_based") else 2] += job_write_bytes(j, cap, rates, segmented)
        a[4] += job_seconds(j, cap, rates, most=True)
    return [StageEstimate(s, int(acc[s][0]), acc[s][1], acc[s][2], acc[s][3], acc[s][4]) for s in order]


def measured_seconds(jobs: Sequence[ProbeJob], figures: Dict[str, Any]) -> Dict[str, float]:
    """Each stage's time as the jobs that ran took it: fio's runtime and the job's delays."""
    out: Dict[str, float] = {}
    for j in jobs:
        f = figures.get(j.name)
        if isinstance(f, dict) and f.get("runtime_s") is not None:
            t = float(f["runtime_s"]) + _seconds(j.options.get("startdelay")) + _seconds(j.options.get("ramp_time"))
            out[j.stage] = out.get(j.stage, 0.0) + t
    return out


def _dur(s: float) -> str:
    return f"{s / 60:,.1f} min" if s < 5400 else f"{s / 3600:,.1f} h"


def estimate_text(stages: Sequence[StageEstimate], cap: int, rates: Rates, extra_s: float = 0.0,
                  what: str = "the probe", maybe: Sequence[str] = (),
                  without: Optional[Sequence[StageEstimate]] = None) -> str:
    """The estimate as lines: the total, then each stage (jobs, time, GB written and x the capacity, flagged where a
    stage writes more than the capacity). The ``maybe`` stages run only where the others call for them: the total
    is given without them (``without``: the stages as they run then, else the same ones less the ``maybe``) and
    with them."""
    total = sum(s.seconds for s in stages) + extra_s
    if maybe:
        alt = without if without is not None else [s for s in stages if s.stage not in maybe]
        bare = sum(s.seconds for s in alt if s.stage not in maybe) + extra_s
        head = f"{_dur(bare)} ({_dur(total)} with the {', '.join(maybe)} stage)"
    else:
        head = _dur(total)
    lines = [f"{what} should take about {head} on this target ({cap / 1e9:,.1f} GB), at {rates.source}:"]
    for s in stages:
        over = ("  MORE THAN THE CAPACITY" if s.write_bytes > cap else
                "  maybe more than the capacity" if s.write_bytes + s.timed_write_bytes > cap else "")
        when = "  (only where the stages before show an NVMe link or a write cache)" if s.stage in maybe else ""
        timed = f" + up to {s.timed_write_bytes / 1e9:,.1f} GB in timed writes" if s.timed_write_bytes else ""
        most = (f" (at most {_dur(s.most_seconds)}, where its writes never step down)"
                if s.most_seconds > 1.05 * s.seconds else "")
        lines.append(f"  {s.stage:<8} {s.jobs:>3} jobs  {_dur(s.seconds):>10}  writes {s.write_bytes / 1e9:,.1f} GB "
                     f"({s.write_bytes / cap:.2f} x the capacity){timed}{over}{when}{most}")
    if without is not None and maybe:
        for s in without:
            mine = next((x for x in stages if x.stage == s.stage), None)
            if mine is not None and abs(mine.seconds - s.seconds) > 1.0:
                lines.append(f"  ({s.stage} without the {', '.join(maybe)} stage: {_dur(s.seconds)}, its torture "
                             "longer: no random writes before it took the drive past its spare area)")
    if extra_s:
        lines.append(f"  idle      {_dur(extra_s):>19}  (the idle power window)")
    return "\n".join(lines)
