"""The review suite of docs/methodology.md, every test defined once, as data.

A test is a plain dict (JSON-ready) in fio's vocabulary, so the same
description can run on the simulator or, later, on a real device through fio:

- ``id``, ``title``, ``group`` (report section), ``about`` (what it measures
  and why, in plain language), ``summary`` (how its figures are made: one of
  :data:`SUMMARIES`) and ``chart`` (how the report draws it);
- ``runs``: each run starts from a preconditioning ``state`` (clean, filled,
  dirty, tortured, trimmed: :mod:`ssdlab.suite.states`; optionally
  ``data_pattern`` for the fill, ``span``, and for trimmed ``from``: the state
  that is then TRIMmed, dirty by default). A TRIM
  in the middle of a run is a ``{"action": "trim"}`` step and then goes through
  ``steps`` in order on the same drive. A step is a fio job dict (``rw``,
  ``bs``, ``iodepth``, ``size``, ``io_size``, ``runtime``, ``data_pattern``,
  ``log_avg_msec``, ...) or an action: ``trim`` (the whole span),
  ``precondition`` (bring the drive to another state in place, e.g. torture),
  ``idle`` (seconds), ``replay`` (a generated Storage Bench trace, with
  ``mode`` and ``idle_cap``: :data:`STORAGE_BENCH_PLAYBACK`). A step with
  ``measure`` (a label) is measured and summarised; the others only change
  the state.

Runs that start from the same state share one preconditioned drive (the
runner clones it). Sizes follow fio (k/m/g = 1024-based); ``span: null`` means
the whole drive. Spans larger than the drive are cut to the drive.

Each Storage Bench workload is two tests: ``storage-bench-WORKLOAD`` on a
secure-erased drive (the 2010/2011 method, in the review) and
``storage-bench-WORKLOAD-full`` on a drive filled first (the 2015 worst case,
on request). ``ssdlab storage-bench`` takes its defaults from these
descriptions (:func:`storage_bench_method`), so it gives the same figures.
"""

from __future__ import annotations

import copy
from typing import Any, Dict, List, Optional, Tuple, cast

from .states import STATES, State
from .vocabulary import Step, StorageBenchMethod, StorageBenchPlayback, SuiteTest

__all__ = [
    "TESTS", "SUMMARIES", "STATES", "STORAGE_BENCH_WORKLOADS", "STORAGE_BENCH_PLAYBACK", "test_ids", "get_test",
    "find_test", "default_test_ids", "storage_bench_test_id", "storage_bench_method",
]

#: How a test's measured steps become figures (see ``ssdlab.suite.summary``).
SUMMARIES = ("throughput", "sweep", "consistency", "curve", "fill", "storage_bench", "power", "grid", "mixed")

KB = 1024
GB_DECIMAL = 10**9

_INC = "incompressible"
#: The drive the file-copy test reads its file from (the review's: an Intel X25-M G2).
COPY_SOURCE = "x25m-g2-160"
_REP = "repeated"


def _job(rw: str, bs: Any, iodepth: int, **keys: Any) -> Step:
    return cast(Step, {"rw": rw, "bs": bs, "iodepth": iodepth, **keys})


def _with(step: Step, **keys: Any) -> Step:
    """A copy of a step with keys added or changed (``measure``, ``size``...)."""
    return cast(Step, {**step, **keys})


def _corner_write(test_id: str, title: str, iodepth: int) -> SuiteTest:
    return {
        "id": test_id,
        "title": title,
        "group": "four-corners",
        "about": (
            f"4KB writes at random 4KB-aligned places in an 8GB span, {iodepth} commands outstanding, for 3 minutes "
            "on a clean drive: the small-file write speed of a desktop (QD3) or a busy server (QD32). Run with a reused "
            "buffer ('repeated', Iometer's default) and with fresh random data ('incompressible'): a controller that "
            "compresses or deduplicates shows a large gap between the two."
        ),
        "summary": "throughput",
        "chart": "bar",
        "runs": [
            {
                "state": {"state": "clean"},
                "steps": [
                    _job("randwrite", "4k", iodepth, size="8g", runtime="180s", blockalign="4k", data_pattern=data, measure=data)
                ],
            }
            for data in (_REP, _INC)
        ],
    }


def _seq_write_128k() -> SuiteTest:
    return {
        "id": "corners-seq-write-128k",
        "title": "128KB sequential write, QD1",
        "group": "four-corners",
        "about": (
            "128KB writes one after another over the whole drive, one at a time, for a minute, on a drive filled "
            "once (as the reviewers' drives were when this corner was measured): large-file write speed. Both data "
            "patterns, side by side; a drive whose garbage collection lags behaves differently on the second pass."
        ),
        "summary": "throughput",
        "chart": "bar",
        "runs": [
            {"state": {"state": "filled"}, "steps": [_job("write", "128k", 1, runtime="60s", data_pattern=data, measure=data)]}
            for data in (_REP, _INC)
        ],
    }


def _seq_read_128k() -> SuiteTest:
    return {
        "id": "corners-seq-read-128k",
        "title": "128KB sequential read, QD1",
        "group": "four-corners",
        "about": (
            "128KB reads one after another over the whole drive (written first with the named pattern), one at a "
            "time, for a minute: large-file read speed, e.g. loading a game or copying a video off the drive."
        ),
        "summary": "throughput",
        "chart": "bar",
        "runs": [
            {
                "state": {"state": "filled", "data_pattern": data},
                "steps": [_job("read", "128k", 1, runtime="60s", measure=data)],
            }
            for data in (_REP, _INC)
        ],
    }


def _seq_read_sweep() -> SuiteTest:
    return {
        "id": "corners-seq-read-qd-sweep",
        "title": "128KB sequential read, queue depth 1 to 32",
        "group": "four-corners",
        "about": (
            "The same 128KB sequential reads with 1, 2, 4, 8, 16 and 32 commands outstanding: how far more parallel "
            "requests help a drive that already streams."
        ),
        "summary": "sweep",
        "chart": "line",
        "x": {"key": "iodepth", "label": "queue depth", "log": True},
        "runs": [
            {
                "state": {"state": "filled"},
                "steps": [
                    _job("read", "128k", qd, runtime="60s", measure=f"QD{qd}", x=qd) for qd in (1, 2, 4, 8, 16, 32)
                ],
            }
        ],
    }


_CLEAN: State = {"state": "clean"}
_FILLED: State = {"state": "filled"}


def _seq_read_unwritten() -> SuiteTest:
    return {
        "id": "seq-read-unwritten",
        "title": "128KB sequential read of never-written and of written LBAs, queue depth 1 to 32",
        "group": "four-corners",
        "about": (
            "The sequential-read sweep twice: on a secure-erased drive, whose LBAs were never written (the 'raw' "
            "drive some reviews measured first: the controller answers from its map, faster or slower than a NAND "
            "read, depending on the firmware), and on the drive filled once (every LBA holds data). 128KB reads "
            "over the whole drive at 1, 2, 4, 8, 16 and 32 commands outstanding, 60 s each."
        ),
        "summary": "sweep",
        "chart": "line",
        "x": {"key": "iodepth", "label": "queue depth", "log": True},
        "runs": [
            {
                "state": cast(State, dict(state)),
                "steps": [
                    _job("read", "128k", qd, runtime="60s", measure=f"{line} QD{qd}", x=qd, line=line)
                    for qd in (1, 2, 4, 8, 16, 32)
                ],
            }
            for state, line in ((_CLEAN, "never written"), (_FILLED, "written"))
        ],
    }


#: The drive changes that put a drive on a SATA 3Gbps link (docs/drive-file.md
#: "[host]": 280e6 B/s usable, 5 us per command), also for drive files that
#: give the link's figures instead of ``interface``.
SATA_3G: Dict[str, Any] = {"host.interface": "sata-3g", "host.link_bytes_per_s": 280_000_000, "host.command_overhead_ns": 5_000}


def _corners_sata_3g() -> SuiteTest:
    random_read: State = {"state": "filled", "span": "8g"}
    rep: State = {"state": "filled", "data_pattern": _REP}
    runs: List[Tuple[State, Step]] = [
        (random_read, _job("randread", "4k", 3, size="8g", runtime="180s", blockalign="4k", measure="4KB random read QD3")),
        (_CLEAN, _job("randwrite", "4k", 3, size="8g", runtime="180s", blockalign="4k", data_pattern=_REP,
                                  measure="4KB random write QD3")),
        (_CLEAN, _job("randwrite", "4k", 32, size="8g", runtime="180s", blockalign="4k", data_pattern=_REP,
                                  measure="4KB random write QD32")),
        (rep, _job("read", "128k", 1, runtime="60s", measure="128KB sequential read")),
        (_FILLED, _job("write", "128k", 1, runtime="60s", data_pattern=_REP, measure="128KB sequential write")),
    ]
    return {
        "id": "corners-sata-3g",
        "title": "The four corners on a SATA 3Gbps link",
        "group": "four-corners",
        "about": (
            "The four corners again with the drive on a SATA 3Gbps port (280 MB/s usable, 5 us per command: "
            "an older motherboard or a laptop), same states, spans, queue depths and runtimes, with Iometer's "
            "reused buffer ('repeated') for the written data and the sequential read: what a 6Gbps drive loses "
            "on the older link. A drive that is 3Gbps already gives its four-corner figures again."
        ),
        "summary": "throughput",
        "chart": "bar",
        "runs": [{"state": cast(State, dict(state)), "drive": dict(SATA_3G), "steps": [step]} for state, step in runs],
        "interface": "sata",
    }


def _cdm() -> SuiteTest:
    common: Dict[str, Any] = {"size": "1g", "runtime": "5s", "data_pattern": _INC}
    grid = (("SEQ1M Q8T1", "read", "1m", 8), ("SEQ1M Q1T1", "read", "1m", 1),
            ("RND4K Q32T1", "randread", "4k", 32), ("RND4K Q1T1", "randread", "4k", 1))
    steps: List[Step] = []
    for direction in ("read", "write"):
        for name, rw, bs, qd in grid:
            if steps:
                steps.append({"action": "idle", "seconds": 5})
            rw_now = rw if direction == "read" else rw.replace("read", "write")
            keys: Dict[str, Any] = {"blockalign": "4k"} if bs == "4k" else {}
            steps.append(_job(rw_now, bs, qd, measure=f"{name} {direction}", **keys, **common))
    return {
        "id": "cdm",
        "title": "CrystalDiskMark-style grid (1GB test file, incompressible)",
        "group": "cdm",
        "about": (
            "CrystalDiskMark's and KDiskMark's default tests on a 1GB test file written first with random data: "
            "1MB sequential transfers at 8 and at 1 outstanding command (SEQ1M Q8T1, Q1T1) and 4KB random transfers "
            "at 32 and at 1 (RND4K Q32T1, Q1T1); every read first, then every write, each for 5 s with 5 s idle "
            "between them (one pass; CrystalDiskMark keeps the best of five). Each cell gives MB/s, IOPS and the "
            "mean latency."
        ),
        "summary": "grid",
        "chart": "grid",
        "runs": [{"state": {"state": "filled", "span": "1g"}, "steps": steps}],
    }


def _mixed() -> SuiteTest:
    return {
        "id": "mixed-70-30",
        "title": "Mixed 4KB random I/O, 70% reads / 30% writes",
        "group": "mixed",
        "about": (
            "4KB random transfers over an 8GB span written first, 70% reads and 30% writes (the classic "
            "database / OLTP mix, incompressible data), at 1, 4 and 32 commands outstanding, 60 s each: how a "
            "drive serves reads while it also has writes to absorb. Reported as total IOPS with the read and "
            "write parts, and the mean latency of each."
        ),
        "summary": "mixed",
        "chart": "bar",
        "runs": [
            {
                "state": {"state": "filled", "span": "8g"},
                "steps": [
                    _job("randrw", "4k", qd, size="8g", runtime="60s", blockalign="4k", rwmixread=70, data_pattern=_INC,
                         measure=f"QD{qd}")
                    for qd in (1, 4, 32)
                ],
            }
        ],
    }


def _as_ssd() -> SuiteTest:
    common: Dict[str, Any] = {"size": "1g", "data_pattern": _INC}
    steps = [
        _job("read", "16m", 1, io_size="1g", measure="Seq read", **common),
        _job("write", "16m", 1, io_size="1g", measure="Seq write", **common),
        _job("randread", "4k", 1, runtime="30s", blockalign="4k", measure="4K read", **common),
        _job("randwrite", "4k", 1, runtime="30s", blockalign="4k", measure="4K write", **common),
        _job("randread", "4k", 64, runtime="30s", blockalign="4k", measure="4K-64Thrd read", **common),
        _job("randwrite", "4k", 64, runtime="30s", blockalign="4k", measure="4K-64Thrd write", **common),
    ]
    return {
        "id": "as-ssd",
        "title": "AS-SSD (incompressible, 1GB test file)",
        "group": "as-ssd",
        "about": (
            "AS-SSD's tests on a 1GB test file, all with incompressible data (so data-reducing controllers get no "
            "help): sequential 16MB transfers, 4KB random at QD1 (a single application waiting for each request) "
            "and '4K-64Thrd': 64 threads each with one 4KB request outstanding, of which the drive's NCQ sees 32."
        ),
        "summary": "throughput",
        "chart": "bar",
        "runs": [{"state": {"state": "filled", "span": "1g"}, "steps": steps}],
    }


#: ATTO's transfer sizes in bytes: 0.5KB .. 8MB.
ATTO_SIZES = [512, 1024, 2048] + [KB * (4 << i) for i in range(9)] + [KB * KB * m for m in (2, 4, 8)]


def _atto(iodepth: int, on_request: bool) -> SuiteTest:
    steps: List[Step] = []
    for bs in ATTO_SIZES:
        for rw, label in (("write", "write"), ("read", "read")):
            # Each size moves its whole span, as ATTO does, with no time limit: a write cut off by time ends at any
            # 4KB unit, the next size's stream goes on filling that open NAND page, and every transfer after it then
            # straddles two pages and reads both; whether a drive landed on that side turned on nanoseconds of its
            # command time (docs/methodology.md).
            steps.append(
                _job(rw, bs, iodepth, size="2g", io_size="2g", data_pattern="compressible",
                     measure=f"{label} {bs}", x=bs, line=label)
            )
    return {
        "id": "atto" if iodepth == 4 else f"atto-qd{iodepth}",
        "title": f"ATTO transfer-size sweep, QD{iodepth}",
        "group": "atto",
        "on_request": on_request,
        "about": (
            f"Sequential writes then reads over a 2GB span at QD{iodepth} with highly compressible data (ATTO's "
            "pattern), for transfer sizes from 0.5KB to 8MB: where a drive reaches its full speed, and how much a "
            "compressing controller gains. Each size writes, then reads, the whole 2GB span."
        ),
        "summary": "sweep",
        "chart": "line",
        "x": {"key": "bs", "label": "transfer size (bytes; KB = 1024 B)", "log": True},
        "runs": [{"state": {"state": "filled", "span": "2g", "data_pattern": "compressible"}, "steps": steps}],
    }


def _consistency() -> SuiteTest:
    job = _job("randwrite", "4k", 32, runtime="2000s", blockalign="4k", data_pattern=_INC, log_avg_msec=1000)
    return {
        "id": "consistency",
        "title": "Performance consistency (4KB random write QD32, 2000 s)",
        "group": "consistency",
        "about": (
            "A filled drive takes 4KB random writes at QD32 with incompressible data for 2000 s; IOPS are recorded "
            "every second. Fresh-drive speed lasts only until the spare area is used up; then garbage collection "
            "sets the pace, and how evenly it does so is what a user feels as stutter. Run with the default spare "
            "area and with 25% over-provisioning (only 75% of the drive is written, the way a smaller partition "
            "leaves spare area)."
        ),
        "summary": "consistency",
        "chart": "consistency",
        "steady": {"from_s": 1400, "round_s": 60, "window_rounds": 5, "range_fraction": 0.2, "slope_fraction": 0.1},
        "runs": [
            {"state": {"state": "filled"}, "steps": [_with(job, measure="default")]},
            {"state": {"state": "filled", "span": "75%"}, "steps": [_with(job, size="75%", measure="25% OP")]},
        ],
    }


def _trim_validation() -> SuiteTest:
    seq = _job("write", "128k", 1, io_size="100%", data_pattern=_INC, log_avg_msec=1000)
    return {
        "id": "trim-validation",
        "title": "TRIM validation (HD Tach-style full-span write)",
        "group": "trim",
        "about": (
            "One sequential write pass over the whole drive, with the write speed recorded along the way (MB/s "
            "against position, like HD Tach): on a clean drive; after the consistency torture (20 minutes of 4KB "
            "random writes); after one more sequential pass; and after TRIM of the whole drive. A drive whose TRIM "
            "works returns to its clean curve. Beside them, HD Tach's read pass: one sequential read over the whole "
            "drive after it was filled once (128KB, QD1), MB/s against position."
        ),
        "summary": "curve",
        "chart": "curve",
        "runs": [
            {
                "state": {"state": "clean"},
                "steps": [
                    _with(seq, measure="clean"),
                    {"action": "precondition", "state": "tortured"},
                    _with(seq, measure="after torture"),
                    _with(seq, measure="after another pass"),
                    {"action": "trim"},
                    _with(seq, measure="after TRIM"),
                ],
            },
            {
                "state": {"state": "filled"},
                "steps": [_job("read", "128k", 1, io_size="100%", log_avg_msec=1000, measure="read pass")],
            },
        ],
    }


_AS_SSD_SEQ_WRITE = _job("write", "16m", 1, size="1g", io_size="1g", data_pattern=_INC)


def _resiliency() -> SuiteTest:
    m = _AS_SSD_SEQ_WRITE
    return {
        "id": "resiliency",
        "title": "Resiliency (AS-SSD sequential write, clean / used / after TRIM)",
        "group": "resiliency",
        "about": (
            "AS-SSD's incompressible sequential write on a clean drive, after torture (20 minutes of 4KB random "
            "writes over the whole drive), after TRIM of the whole drive, and once more (a second pass); and the "
            "same on a drive made dirty (every LBA and the spare area written). Shows how much a used drive slows "
            "down and whether TRIM brings it back."
        ),
        "summary": "throughput",
        "chart": "bar",
        "runs": [
            {
                "state": {"state": "clean"},
                "steps": [
                    _with(m, measure="clean"),
                    {"action": "precondition", "state": "tortured"},
                    _with(m, measure="tortured"),
                    {"action": "trim"},
                    _with(m, measure="tortured, after TRIM"),
                    _with(m, measure="tortured, after TRIM, second pass"),
                ],
            },
            {
                "state": {"state": "dirty"},
                "steps": [
                    _with(m, measure="dirty"),
                    {"action": "trim"},
                    _with(m, measure="dirty, after TRIM"),
                ],
            },
        ],
    }


def _file_copy() -> SuiteTest:
    # the review copied the file from an Intel X25-M G2
    write = _job("write", "1m", 1, io_size=int(6.6 * GB_DECIMAL), size=int(6.6 * GB_DECIMAL), data_pattern=_INC,
                 source={"drive": COPY_SOURCE})
    read = _job("read", "1m", 2, io_size=3 * GB_DECIMAL, size=3 * GB_DECIMAL)

    def copy_steps(state: str) -> List[Step]:
        return [_with(write, measure=f"write, {state}"), _with(read, measure=f"read, {state}")]

    return {
        "id": "file-copy",
        "title": "File copies (6.6GB write, 3GB read)",
        "group": "file-copy",
        "about": (
            "A 6.6GB incompressible file (a video) copied from an Intel X25-M G2 (simulated; the review's source): "
            "written in 1MB pieces one at a time, no faster than the source reads them; and a 3GB file read at QD2, "
            "as when copied to a RAM disk. On a clean drive, a dirty drive, and the dirty drive after TRIM."
        ),
        "summary": "throughput",
        "chart": "bar",
        "runs": [
            {"state": {"state": "clean"}, "steps": copy_steps("clean")},
            {"state": {"state": "dirty"}, "steps": copy_steps("dirty") + [{"action": "trim"}] + copy_steps("after TRIM")},
        ],
    }


def _power() -> SuiteTest:
    return {
        "id": "power",
        "title": "Power",
        "group": "power",
        "about": (
            "Average power drawn by the drive sitting idle, streaming 128KB sequential writes, and under 4KB random "
            "writes at QD32: what it costs a laptop's battery."
        ),
        "summary": "power",
        "chart": "bar",
        "runs": [
            {"state": {"state": "filled"}, "steps": [{"action": "idle", "seconds": 60, "measure": "idle"}]},
            {"state": {"state": "clean"}, "steps": [_job("write", "128k", 1, runtime="60s", data_pattern=_INC, measure="128KB sequential write")]},
            {
                "state": {"state": "clean"},
                "steps": [_job("randwrite", "4k", 32, size="8g", runtime="60s", blockalign="4k", data_pattern=_INC, measure="4KB random write QD32")],
            },
        ],
    }


#: The Storage Bench workloads of the suite: (workload id, title, year).
STORAGE_BENCH_WORKLOADS = (
    ("heavy-2011", "Storage Bench 2011 Heavy", 2011),
    ("light-2011", "Storage Bench 2011 Light", 2011),
    ("typical-2010", "Storage Bench 2010 Typical", 2010),
    ("multitasking-2010", "Storage Bench 2010 Heavy multitasking", 2010),
    ("gaming-2010", "Storage Bench 2010 Gaming", 2010),
)

#: Storage Bench playback (docs/methodology.md "Storage Bench"): each I/O at its
#: recorded time, every idle gap of the trace cut to at most 25 ms; what the
#: trace reads before writing it is written first (the recorded desktop read
#: files that were on its disk).
STORAGE_BENCH_PLAYBACK: StorageBenchPlayback = {"mode": "as-recorded", "idle_cap": "25ms", "lay_down_reads": True}


def storage_bench_test_id(workload: str, full: bool = False) -> str:
    """The suite test of a Storage Bench workload: on a secure-erased drive, or
    (``full``) on a drive filled first."""
    return f"storage-bench-{workload}" + ("-full" if full else "")


def storage_bench_method(workload: str, full: bool = False) -> Optional[StorageBenchMethod]:
    """How the suite runs a Storage Bench workload, for the commands that run
    one outside the suite (``ssdlab storage-bench``, the benchmark): the
    test id, the state the drive starts in, and the replay options (mode,
    idle_cap). None for a workload that is not a suite test."""
    t = find_test(storage_bench_test_id(workload, full))
    if t is None:
        return None
    run = t["runs"][0]
    step = run["steps"][0]
    replay: StorageBenchPlayback = {}
    if "mode" in step:
        replay["mode"] = step["mode"]
    if "idle_cap" in step:
        replay["idle_cap"] = step["idle_cap"]
    if "lay_down_reads" in step:
        replay["lay_down_reads"] = step["lay_down_reads"]
    return {"test_id": t["id"], "state": run["state"]["state"], "replay": replay}


def _storage_bench(workload: str, title: str, year: int, full: bool) -> SuiteTest:
    if full:
        state: State = {"state": "filled"}
        where = ("on a drive filled first (every LBA written once: the worst case the reviewers added from 2015; "
                 "a drive whose garbage collection lags shows it here)")
    else:
        state = {"state": "clean"}
        where = "on a secure-erased drive (how the 2010 and 2011 suites ran it)"
    return {
        "id": storage_bench_test_id(workload, full),
        "title": title + (", full drive" if full else ""),
        "group": "storage-bench",
        # The 2010-2011 method is the secure-erased run; the filled run is a later addition, on request.
        "on_request": full,
        "about": (
            f"Playback of a desktop I/O trace ({title}; generated to match the published statistics of the "
            f"original) {where}, each I/O at its recorded time with idle gaps cut to at most 25 ms: the average "
            "data rate is bytes moved over the time the drive was busy (at least one I/O outstanding), so a faster "
            "drive scores higher even though the user's pauses are the same."
            + (" The 2010 suite also reports average IOPS." if year == 2010 else "")
        ),
        "summary": "storage_bench",
        "chart": "bar",
        "min_capacity_bytes": GB_DECIMAL,
        "runs": [
            {
                "state": state,
                "steps": [_with({"action": "replay", "generated": workload}, **STORAGE_BENCH_PLAYBACK, measure=workload)],
            }
        ],
    }


def _rated() -> SuiteTest:
    written: State = {"state": "filled", "span": "8g", "data_pattern": _REP}
    # The tables rate random reads on a `filled` span (docs/methodology.md: one
    # sequential pass of incompressible data), not on the reused buffer.
    filled: State = {"state": "filled", "span": "8g"}
    return {
        "id": "rated",
        "title": "Rated-style peaks (spec-sheet conditions)",
        "group": "spec",
        "about": (
            "The figures a spec sheet prints, measured the way vendors did (best case): 128KB sequential writes at "
            "QD32 for 60 s on a clean drive and 4KB random writes at QD32 over an 8GB span of a clean drive for the "
            "first 60 s (both change as the drive fills, so the window is part of the figure), 128KB sequential "
            "reads at QD32 of an 8GB written span and 4KB random reads at QD32 over an 8GB span filled with "
            "incompressible data (the 'filled' state the tables give for rated random reads), each for 10 s: a read "
            "rate settles within seconds (10 s and 60 s differ by under 0.1% on 30 of the 34 rated read figures, "
            "2.4% at most). Written data is the reused buffer ('repeated'), which a SandForce controller "
            "deduplicates: the best case it was rated with."
        ),
        "summary": "throughput",
        "chart": "bar",
        "runs": [
            {"state": written, "steps": [_job("read", "128k", 32, size="8g", runtime="10s", measure="sequential read")]},
            {"state": {"state": "clean"},
             "steps": [_job("write", "128k", 32, runtime="60s", data_pattern=_REP, measure="sequential write")]},
            {"state": filled,
             "steps": [_job("randread", "4k", 32, size="8g", runtime="10s", blockalign="4k", measure="4KB random read")]},
            {"state": {"state": "clean"},
             "steps": [_job("randwrite", "4k", 32, size="8g", runtime="60s", blockalign="4k", data_pattern=_REP,
                            measure="4KB random write")]},
        ],
    }


def _steady() -> SuiteTest:
    tortured: State = {"state": "tortured"}
    return {
        "id": "steady-state",
        "title": "Steady-state (filled and tortured, incompressible)",
        "group": "spec",
        "about": (
            "What the drive keeps up once it is full and used: the drive is filled, then tortured (20 minutes of 4KB "
            "random writes over all of it), and each of the rated figures is measured again at QD32 for 60 s with "
            "incompressible data, which no controller can reduce. Sequential reads cover the whole drive, random "
            "reads and writes all of it too."
        ),
        "summary": "throughput",
        "chart": "bar",
        "runs": [
            {"state": tortured, "steps": [_job("read", "128k", 32, runtime="60s", measure="sequential read")]},
            {"state": tortured, "steps": [_job("write", "128k", 32, runtime="60s", data_pattern=_INC, measure="sequential write")]},
            {"state": tortured,
             "steps": [_job("randread", "4k", 32, runtime="60s", blockalign="4k", measure="4KB random read")]},
            {"state": tortured,
             "steps": [_job("randwrite", "4k", 32, runtime="60s", blockalign="4k", data_pattern=_INC, measure="4KB random write")]},
        ],
    }


def _whole_drive_fill(test_id: str, title: str, bs: str, iodepth: int, who: str) -> SuiteTest:
    return {
        "id": test_id,
        "title": title,
        "group": "modern",
        "about": (
            f"One sequential write of {bs.upper()}B transfers, {iodepth} outstanding, over the whole of a clean drive, "
            f"its speed recorded against the position written ({who}'s method). A drive that writes through a "
            "pseudo-SLC cache runs fast until the cache is full, then at the speed of its TLC/QLC NAND, often with "
            "the folding of the cache competing; the figures give the cache size (the data written before the "
            "first lasting step down), the speed in and after the cache, and the average over the fill."
        ),
        "summary": "fill",
        "chart": "curve",
        "on_request": True,
        "runs": [{"state": {"state": "clean"},
                  "steps": [_job("write", bs, iodepth, io_size="100%", data_pattern=_INC, log_avg_msec=250, measure="fill")]}],
    }


def _cache_recovery() -> SuiteTest:
    burst = _job("write", "128k", 32, io_size="10%", data_pattern=_INC)
    return {
        "id": "cache-recovery",
        "title": "Write cache recovery after idle (128KB QD32)",
        "group": "modern",
        "about": (
            "The whole drive written sequentially (past any write cache), then idle for 60 s and for 10 minutes, each "
            "followed by a write of 10% of the drive: how much of its fast write speed an idle drive gives back, as a "
            "drive with a pseudo-SLC cache does when it folds the cache into TLC/QLC while idle. The idle times are "
            "what the test measures, so they are the same at every scale."
        ),
        "summary": "throughput",
        "chart": "bar",
        "on_request": True,
        "runs": [{"state": {"state": "clean"},
                  "steps": [_job("write", "128k", 32, io_size="100%", data_pattern=_INC, measure="full-drive write"),
                            {"action": "idle", "seconds": 60, "unscaled": True},
                            _with(burst, measure="after 60 s idle"),
                            {"action": "idle", "seconds": 600, "unscaled": True},
                            _with(burst, measure="after 10 min idle")]}],
    }


def _random_read_spans() -> SuiteTest:
    return {
        "id": "random-read-spans",
        "title": "4KB random read QD1 over growing spans",
        "group": "modern",
        "about": (
            "4KB random reads, one outstanding, for 30 s over spans of 1, 4, 16 and 64 GB of a filled drive: a drive "
            "whose mapping table does not fit its controller's memory (DRAM-less, or a host memory buffer) slows "
            "down once the span outgrows the map it holds."
        ),
        "summary": "sweep",
        "chart": "line",
        "on_request": True,
        "min_capacity_bytes": 80 * GB_DECIMAL,
        "x": {"key": "span", "label": "span (GB)", "log": True},
        "runs": [{"state": {"state": "filled"},
                  "steps": [_job("randread", "4k", 1, size=f"{g}g", runtime="30s", blockalign="4k", measure=f"{g}GB span", x=g)
                            for g in (1, 4, 16, 64)]}],
    }


def _qd1_latency() -> SuiteTest:
    read = _job("randread", "4k", 1, size="8g", blockalign="4k")
    return {
        "id": "qd1-latency",
        "title": "4KB random read QD1 latency, burst and sustained",
        "group": "modern",
        "about": (
            "4KB random reads, one outstanding, over an 8GB span of a filled drive: a burst of 1,000 reads and then "
            "60 s of them. QD1 latency is what a desktop feels; today's reviews report its percentiles."
        ),
        "summary": "throughput",
        "chart": "bar",
        "on_request": True,
        "runs": [{"state": {"state": "filled", "span": "8g"},
                  "steps": [_with(read, number_ios=1000, measure="burst"), _with(read, runtime="60s", measure="sustained")]}],
    }


def _build() -> List[SuiteTest]:
    tests: List[SuiteTest] = [
        {
            "id": "corners-4k-random-read-qd3",
            "title": "4KB random read, QD3",
            "group": "four-corners",
            "about": (
                "4KB reads at random 4KB-aligned places in an 8GB span that was written first, 3 commands outstanding, "
                "for 3 minutes: how quickly a drive finds small pieces of data, e.g. while an application starts."
            ),
            "summary": "throughput",
            "chart": "bar",
            "runs": [
                {
                    "state": {"state": "filled", "span": "8g"},
                    "steps": [_job("randread", "4k", 3, size="8g", runtime="180s", blockalign="4k", measure="read")],
                }
            ],
        },
        _corner_write("corners-4k-random-write-qd3", "4KB random write, QD3", 3),
        _corner_write("corners-4k-random-write-qd32", "4KB random write, QD32", 32),
        _seq_read_128k(),
        _seq_write_128k(),
        _seq_read_sweep(),
        _seq_read_unwritten(),
        _corners_sata_3g(),
        _cdm(),
        _as_ssd(),
        _mixed(),
        _atto(4, False),
        _atto(2, False),
        _atto(8, False),
        _consistency(),
        _trim_validation(),
        _resiliency(),
        _file_copy(),
        _power(),
        *(_storage_bench(w, title, year, full) for w, title, year in STORAGE_BENCH_WORKLOADS for full in (False, True)),
        _rated(),
        _steady(),
        _whole_drive_fill("whole-drive-fill", "Whole-drive fill (128KB QD32)", "128k", 32, "AnandTech"),
        _whole_drive_fill("whole-drive-fill-1m-qd1", "Whole-drive fill (1MB QD1)", "1m", 1, "TechPowerUp"),
        _cache_recovery(),
        _random_read_spans(),
        _qd1_latency(),
    ]
    for t in tests:
        t.setdefault("on_request", False)
    return tests


#: Every test, in report order (plain data: ``json.dumps(TESTS)`` works).
TESTS: List[SuiteTest] = _build()


def test_ids(include_on_request: bool = True) -> List[str]:
    return [t["id"] for t in TESTS if include_on_request or not t["on_request"]]


def default_test_ids() -> List[str]:
    """The tests of a review (without those run only on request: Storage Bench on a filled drive)."""
    return test_ids(include_on_request=False)


def get_test(test_id: str) -> SuiteTest:
    """A deep copy of one test's description; KeyError names the known ids."""
    for t in TESTS:
        if t["id"] == test_id:
            return copy.deepcopy(t)
    raise KeyError(test_id)


def find_test(test_id: str) -> Optional[SuiteTest]:
    try:
        return get_test(test_id)
    except KeyError:
        return None
