"""fio's ``fsync=N`` / ``fdatasync=N`` on a simulated drive: a FLUSH CACHE
after every N writes that waits for the program of what was written, reported
as fio's ``sync`` section; and what the probe of a twin draws from it."""

from __future__ import annotations

from typing import Any, Dict

import pytest

from ssdlab import Drive
from ssdlab.fio import parse, simulate
from ssdlab.fio.errors import JobFileError
from ssdlab.fio.jobfile import parse_jobfile_text
from ssdlab.twin.features import MIN_FLUSH_PROGRAM_NS, extract
from ssdlab.twin.probe import CLEAN, probe_jobs

PRESET = "samsung840pro-256"

JOB = """\
[global]
ioengine=libaio
direct=1
size=32m
time_based=1
runtime=300ms
{extra}

[w]
rw=randwrite
bs=4k
iodepth=1
"""


def _run(extra: str, drive: Any = PRESET) -> simulate.SimulatedRun:
    return simulate.simulate(parse_jobfile_text(JOB.format(extra=extra), "job.fio", env={}), drive)


def _job(run: simulate.SimulatedRun) -> Dict[str, Any]:
    job: Dict[str, Any] = run.document["jobs"][0]
    return job


def test_a_flushed_qd1_write_is_slower_than_a_buffered_one_by_about_the_program_time() -> None:
    nand = Drive.load(PRESET).config["nand"]
    tprog = nand["tprog_ns"]
    unit_xfer = nand["planes_per_die"] * nand["page_size_bytes"] / nand["channel_bytes_per_s"] * 1e9
    plain = _job(_run(""))
    flushed = _job(_run("fsync=1"))
    w_plain = plain["write"]["clat_ns"]["mean"]
    w = flushed["write"]["clat_ns"]["mean"]
    sync = flushed["sync"]["lat_ns"]["percentile"]["50.000000"]
    # the writes are acknowledged from the buffer as before; the flush waits for the unit's transfer and program
    assert abs(w / w_plain - 1) < 0.05
    print(f"write {w_plain / 1e3:.1f} us; flush {sync / 1e3:.1f} us; tPROG {tprog / 1e3:.0f} us + transfer {unit_xfer / 1e3:.0f} us")
    assert tprog < sync - w < 1.1 * (tprog + unit_xfer)
    # one flush per write but the last: the job runs at one write per program time
    assert flushed["sync"]["total_ios"] == flushed["write"]["total_ios"] - 1
    assert flushed["write"]["iops"] < 1e9 / tprog < plain["write"]["iops"]
    assert flushed["ssdlab"]["ssdlab"]["flushes"] == flushed["sync"]["total_ios"]
    # a job without fsync has fio's empty sync section
    assert plain["sync"] == {"total_ios": 0, "lat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0}}


def test_fsync_zero_is_no_option_and_fdatasync_is_fsync_on_a_block_device(small_drive: Dict[str, Any]) -> None:
    base = _job(_run("", small_drive))
    zero = _job(_run("fsync=0", small_drive))
    for k in ("read", "write", "sync", "job_runtime"):
        assert zero[k] == base[k]
    assert zero["ssdlab"]["ssdlab"]["waf"] == base["ssdlab"]["ssdlab"]["waf"]
    a = _job(_run("fsync=8", small_drive))
    b = _job(_run("fdatasync=8", small_drive))
    for k in ("write", "sync"):
        assert a[k] == b[k]
    assert a["sync"]["total_ios"] > 0 and a["sync"] != base["sync"]


def test_the_sync_section_reads_back_like_fio_s(tmp_path: Any, small_drive: Dict[str, Any]) -> None:
    run = _run("fsync=4", small_drive)
    out = tmp_path / "out.json"
    simulate.write_outputs(run, out, tmp_path)
    res = parse.read_fio_output(out)
    job = res.job("w")
    assert job.sync is not None and job.sync.count == _job(run)["sync"]["total_ios"] > 0
    assert job.sync.mean_ns > 0 and job.sync.percentile_us(99.0)
    assert parse.read_fio_output(_plain_output(tmp_path, small_drive)).job("w").sync is None


def _plain_output(tmp_path: Any, drive: Dict[str, Any]) -> Any:
    out = tmp_path / "plain.json"
    simulate.write_outputs(_run("", drive), out, tmp_path)
    return out


@pytest.mark.parametrize("value, needle", [("-1", "at least 0"), ("often", "not a whole number"), ("1.5", "whole number")])
def test_bad_fsync_values_are_rejected_naming_the_option(value: str, needle: str) -> None:
    for opt in ("fsync", "fdatasync"):
        with pytest.raises(JobFileError) as ei:
            parse_jobfile_text(JOB.format(extra=f"{opt}={value}"), "job.fio", env={})
        msg = str(ei.value)
        assert f"'{opt}'" in msg and needle in msg and "\n" not in msg, msg


def test_fsync_clones_run_side_by_side_each_flushing_and_two_periods_are_refused(small_drive: Dict[str, Any]) -> None:
    jf = parse_jobfile_text(JOB.format(extra="fsync=1\nnumjobs=2"), "job.fio", env={})
    planned = simulate.plan(jf, 50 << 20)
    assert len(planned) == 2 and all(p.engine["fsync"] == 1 and p.concurrent == 0 for p in planned)
    with pytest.raises(JobFileError) as ei2:
        _run("fsync=2\nfdatasync=3", small_drive)
    assert "'fdatasync'" in str(ei2.value) and "one of them" in str(ei2.value)


def test_the_probe_measures_the_program_time_from_flushes() -> None:
    jobs = {j.name: j for j in probe_jobs(256_000_000_000) if j.stage == CLEAN}
    for bs in ("4k", "16k", "64k"):
        j = jobs[f"flushwrite-{bs}-qd1"]
        assert j.options["fsync"] == 1 and j.options["iodepth"] == 1 and j.direction == "write"


def _figs(sync_us: float, write_us: float = 40.0, p99_us: float = 0.0) -> Dict[str, Dict[str, Any]]:
    f = {"mbps": 2.0, "clat_mean_us": write_us, "clat_p50_us": write_us, "sync_mean_us": sync_us, "sync_p50_us": sync_us,
         "sync_p99_us": p99_us or sync_us, "syncs": 100}
    return {"flushwrite-4k-qd1": f, "flushwrite-16k-qd1": dict(f), "flushwrite-64k-qd1": dict(f, sync_p50_us=sync_us * 1.02),
            "seqwrite-128k-qd32": {"mbps": 256.0}}


def test_tprog_feature_from_flushes_and_the_dies_it_implies() -> None:
    f = extract(_figs(1340.0), 256_000_000_000)
    assert f["tprog_ns"]["value"] == 1_300_000 and f["tprog_ns"]["confidence"] == "high"
    assert "upper bound" in f["tprog_ns"]["how"]
    assert f["flush_pads_unit"]["value"] is True
    # 256 MB/s x 1.3 ms per 16KB unit
    assert f["dies"]["value"] == round(256e6 * 1.3e-3 / 16384) and f["dies"]["confidence"] == "medium"
    # a flush acknowledged at once (power-loss protection): no program time, the die estimate as before
    g = extract(_figs(40.0 + MIN_FLUSH_PROGRAM_NS / 1e3 / 2), 256_000_000_000)
    assert g["tprog_ns"]["value"] is None and "power-loss" in g["tprog_ns"]["how"]
    assert g["dies"]["confidence"] == "low"
    # no flush jobs (an older probe): nothing measured
    h = extract({"seqwrite-128k-qd32": {"mbps": 256.0}}, 256_000_000_000)
    assert h["tprog_ns"]["confidence"] == "none" and h["dies"]["value"] == round(256e6 * 1.3e-3 / 16384)
    # a flush latency that varies a lot lowers the confidence
    assert extract(_figs(1340.0, p99_us=4000.0), 256_000_000_000)["tprog_ns"]["confidence"] == "medium"


def test_the_twin_s_tprog_is_the_measured_flush_time_less_the_unit_s_transfer() -> None:
    from ssdlab.twin.fit.drive_file import build_doc
    from ssdlab.twin.fit.start import free_parameters

    f = extract(_figs(1340.0), 256_000_000_000)
    params = {p.key: p for p in free_parameters(f)}
    assert "nand.tprog_ns" not in params and "nand.channel_bytes_per_s" in params
    values = {p.key: p.value for p in params.values()}
    values.update({"nand.channel_bytes_per_s": 50_000_000, "nand.page_size_log2": 13})
    doc, prov = build_doc(f, values, "t")
    # 1300 us - 16 KiB at 50 MB/s (328 us)
    assert doc["nand"]["tprog_ns"] == 972_000 and prov["nand.tprog_ns"]["source"] == "measured"
    values["nand.channel_bytes_per_s"] = 400_000_000
    assert build_doc(f, values, "t")[0]["nand"]["tprog_ns"] == 1_259_000
    ppc = params["nand.packages_per_channel"]
    dies = f["dies"]["value"]
    assert ppc.low * 8 <= dies <= ppc.high * 8 and ppc.high - ppc.low < 15
    # a write as fast as a host-cached file's (2.6 GB/s x 1.7 ms per unit: about 270 dies) has a range the
    # sampler can take, held at the twin's most dies, and says so
    fast = _figs(1721.0)
    fast["seqwrite-128k-qd32"] = {"mbps": 2593.6}
    big = {p.key: p for p in free_parameters(extract(fast, 4 * 2**30))}["nand.packages_per_channel"]
    assert big.low <= big.value <= big.high == 16 and "more than the twin's 128: held at its most" in big.why
    # without the measurement: the datasheets' range, no channel parameter
    g = free_parameters(extract({"seqwrite-128k-qd32": {"mbps": 256.0}}, 256_000_000_000))
    keys = {p.key: p for p in g}
    assert "nand.channel_bytes_per_s" not in keys and keys["nand.tprog_ns"].high == 2_000_000
