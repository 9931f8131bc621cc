"""``ssdlab probe`` (ssdlab.twin.probe): the job list, the probe on simulated
drives and on a file through fio, probe.json and power meter logs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Dict

import pytest
from twin_helpers import preset_truth

from conftest import assert_one_line_error, run_cli
from ssdlab import Drive
from ssdlab.twin.features import extract
from ssdlab.twin.probe import CACHE, CLEAN, FILL, FULL, QUEUES, jobfile_text, probe_jobs, run_probe_simulated

needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")



@pytest.fixture(scope="module")
def generic_probe() -> Dict[str, Any]:
    run = run_probe_simulated("generic-mlc-120", None, budget=0.25)
    return {"run": run, "features": extract(run.figures, run.target["capacity_bytes"])}


def test_every_probe_job_names_the_feature_it_reveals_and_the_job_file_is_fio_s() -> None:
    from ssdlab.fio.jobfile import parse_jobfile_text

    jobs = probe_jobs(120_000_000_000)
    assert {j.stage for j in jobs} == {CLEAN, FILL, CACHE, QUEUES, FULL}
    assert all(j.feature and len(j.why) > 30 for j in jobs)
    assert len({j.name for j in jobs}) == len(jobs)
    jf = parse_jobfile_text(jobfile_text(jobs, filename="/dev/sdX"), "probe.fio")
    assert [j.name for j in jf.jobs] == [j.name for j in jobs]
    # a file target without TRIM runs the same list but the TRIM jobs
    assert [j.name for j in probe_jobs(120_000_000_000, trim=False)] == [
        j.name for j in jobs if j.direction != "trim" and j.name != "after-trim-seqwrite"]
    # the budget scales the runtimes
    t1 = {j.name: j.options.get("runtime") for j in probe_jobs(120_000_000_000, full=False)}
    t3 = {j.name: j.options.get("runtime") for j in probe_jobs(120_000_000_000, 3.0, full=False)}
    assert t1["torture"] == "420000ms" and t3["torture"] == "1260000ms"
    # after the full stage the drive is past its spare area: the torture only settles in the steady state
    assert {j.name: j.options.get("runtime") for j in jobs}["torture"] == "120000ms"


def test_a_sata_era_drive_is_spared_the_full_drive_stage(generic_probe: Dict[str, Any]) -> None:
    from ssdlab.twin.probe.run import full_stage_wanted

    run = generic_probe["run"]
    # no NVMe link and no write cache: its torture showed the spare area, and no second whole-drive fill runs
    assert not any(j.stage == FULL for j in run.jobs) and not any(n.startswith("full-") for n in run.figures)
    assert not full_stage_wanted(run.figures, run.target["capacity_bytes"], (CLEAN, FILL, CACHE, QUEUES, FULL))
    # a run of chosen stages (the fit's) runs it as asked
    assert full_stage_wanted({}, run.target["capacity_bytes"], (CLEAN, CACHE, FULL))
    assert not any("full-drive stage" in n for n in run.notes)


def test_probe_of_a_simulated_drive_recovers_its_buffer_spare_area_and_dies(generic_probe: Dict[str, Any]) -> None:
    f = generic_probe["features"]
    truth = preset_truth("generic-mlc-120")
    buf = f["write_buffer_bytes"]["value"]
    spare = f["spare_fraction"]["value"]
    print(f"buffer {buf:,} (truth {truth['write_buffer_bytes']:,}); spare {spare:.4f} (truth {truth['spare_fraction']:.4f}); "
          f"dies {f['dies']['value']} (truth {truth['dies']})")
    assert abs(buf / truth["write_buffer_bytes"] - 1) < 0.10
    assert abs(spare / truth["spare_fraction"] - 1) < 0.10
    assert abs(f["dies"]["value"] / truth["dies"] - 1) < 0.10
    assert f["data_reduction"]["value"] is False and f["readahead"]["value"] is False
    assert f["unwritten_reads_from_map"]["value"] is True
    # garbage collection: the steady state is well below the clean random-write rate
    assert f["steady_write_iops"]["value"] < 0.5 * f["write_iops_4k_qd32"]["value"]


def test_probe_sees_data_reduction_and_read_ahead_where_the_drives_have_them() -> None:
    sf = run_probe_simulated("vertex3-120", None, stages=(CLEAN,), budget=0.25)
    fs = extract(sf.figures, sf.target["capacity_bytes"])
    assert fs["data_reduction"]["value"] is True and preset_truth("vertex3-120")["data_reduction"]
    v4 = run_probe_simulated("vertex4-128-fw15", None, stages=(CLEAN,), budget=0.25)
    f4 = extract(v4.figures, v4.target["capacity_bytes"])
    assert f4["readahead"]["value"] is True and f4["data_reduction"]["value"] is False


@pytest.mark.slow  # over 15 s on 2 cores: the default run stays under 8 minutes
def test_probe_cli_on_a_preset_then_fit_writes_a_twin_with_provenance(tmp_path: Path) -> None:
    out = tmp_path / "probe"
    cp = run_cli("probe", "--drive", "generic-mlc-120", "--out", str(out), "--budget", "quick", timeout=300)
    assert cp.returncode == 0, cp.stderr
    doc = json.loads((out / "probe.json").read_text())
    assert doc["schema"] == "ssdlab.probe" and doc["target"]["kind"] == "simulated"
    assert doc["target"]["drive_id"] == "generic-mlc-120" and doc["manifest"]["drive_hash"] == Drive.load("generic-mlc-120").hash
    assert (out / "fio" / "probe.fio").is_file() and (out / "fio" / "probe.json").is_file()
    assert all(j["figures"] for j in doc["jobs"])
    assert "write_buffer_bytes" in cp.stdout and "fit --probe" in cp.stdout
    cp = run_cli("fit", "--probe", str(out), "--trials", "6", "--jobs", "2", timeout=600)
    assert cp.returncode == 0, cp.stderr
    twin = Drive.load(str(out / "twin.toml"))
    rec = json.loads((out / "twin.json").read_text())
    assert twin.capacity_bytes == 120_000_000_000 and rec["source"] == "generic-mlc-120"
    sources = {v["source"] for v in rec["values"].values()}
    assert sources == {"measured", "fitted", "assumed"}
    assert rec["values"]["controller.write_buffer_bytes"]["source"] == "measured"
    # tPROG from the flushed writes less the unit's transfer at the fitted channel rate
    assert rec["values"]["nand.tprog_ns"]["source"] == "measured"
    assert rec["values"]["nand.channel_bytes_per_s"]["source"] == "fitted" and "residual" in rec["values"]["nand.channel_bytes_per_s"]
    assert rec["fit"]["objective"] <= rec["fit"]["objective_start"]
    text = (out / "twin.toml").read_text()
    assert "# measured" in text and "# fitted" in text and "# assumed" in text
    # every probe job simulated on the twin, with its error
    assert {j["job"] for j in rec["probe_jobs"]} >= {"fill", "torture", "randread-4k-qd32"}
    # the probe read the simulated drive's power: the twin's idle draw is the drive's, its active draw fitted
    assert doc["power"]["idle_w"] == pytest.approx(0.5)
    assert rec["values"]["power.idle_mw"] == {"value": 500, "source": "measured", "why": rec["values"]["power.idle_mw"]["why"]}
    assert rec["values"]["power.active_mw"]["source"] == "fitted" and twin.config["power"]["idle_mw"] == 500


def test_probe_and_fit_refuse_bad_input_with_one_line(tmp_path: Path) -> None:
    assert_one_line_error(run_cli("probe", "--out", str(tmp_path / "a")), "DEVICE_OR_FILE", "--drive")
    assert_one_line_error(run_cli("probe", str(tmp_path), "--drive", "generic-mlc-120", "--out", str(tmp_path / "b")), "not both")
    assert_one_line_error(run_cli("probe", "--drive", "generic-mlc-120", "--size", "1g", "--out", str(tmp_path / "c")),
                          "--size", "real target")
    assert_one_line_error(run_cli("probe", "--drive", "generic-mlc-120", "--budget", "lots", "--out", str(tmp_path / "d")),
                          "--budget", "quick")
    assert_one_line_error(run_cli("probe", "--drive", "no-such-drive", "--out", str(tmp_path / "e")), "no-such-drive")
    assert_one_line_error(run_cli("fit", "--probe", str(tmp_path)), "no probe.json", "ssdlab probe")
    (tmp_path / "probe.json").write_text('{"schema": "ssdlab.results"}')
    assert_one_line_error(run_cli("fit", "--probe", str(tmp_path)), "schema 'ssdlab.results', not 'ssdlab.probe'")
    assert_one_line_error(run_cli("fit", "--profile", "sf-2281", "--power-log", str(tmp_path / "m.csv")),
                          "--power-log", "--probe")
    assert_one_line_error(run_cli("fit", "--profile", "sf-2281", "--polish", "10"), "--polish", "--probe")
    assert_one_line_error(run_cli("fit", "--probe", str(tmp_path), "--polish", "-1"), "--polish", "0 .. 100,000")


@pytest.mark.slow
@needs_fio
def test_probe_runs_through_fio_on_a_test_file(tmp_path: Path) -> None:
    target = tmp_path / "t"
    target.mkdir()
    out = tmp_path / "probe"
    cp = run_cli("probe", str(target), "--size", "256m", "--budget", "0.05", "--out", str(out), timeout=300)
    assert cp.returncode == 0, cp.stderr
    doc = json.loads((out / "probe.json").read_text())
    assert doc["target"]["kind"] == "file" and doc["target"]["capacity_bytes"] == 256 << 20
    names = [j["name"] for j in doc["jobs"]]
    assert "erase" not in names and "trim-all" not in names  # a file has no TRIM
    assert any("no TRIM" in n for n in doc["notes"])
    ran = [j for j in doc["jobs"] if j["figures"]]
    assert len(ran) == len(names), [j["name"] for j in doc["jobs"] if not j["figures"]]
    assert doc["features"]["read_iops_4k_qd32"]["value"] > 0
    assert list(target.iterdir()) == []  # the test file is removed
    # the windows a power meter's log is averaged over: the idle one, then every job's
    idle = doc["power"]["idle_window_s"]
    assert idle[1] - idle[0] >= 10 and all(j["figures"]["wall_start_s"] >= idle[1] for j in ran)
    # a meter's log of the probe (0.8 W idle, 2.5 W while a job runs): the twin's idle and active draws
    busy = [(j["figures"]["wall_start_s"], j["figures"]["wall_end_s"]) for j in ran]
    t, lines = idle[0] - 5, ["time_s,watts"]
    while t < busy[-1][1] + 5:
        lines.append(f"{t:.2f},{2.5 if any(a <= t <= b for a, b in busy) else 0.8}")
        t += 0.25
    (tmp_path / "meter.csv").write_text("\n".join(lines) + "\n")
    cp = run_cli("fit", "--probe", str(out), "--trials", "2", "--jobs", "1", "--power-log", str(tmp_path / "meter.csv"),
                 timeout=600)
    assert cp.returncode == 0, cp.stderr
    rec = json.loads((out / "twin.json").read_text())
    assert rec["values"]["power.idle_mw"]["value"] == 800 and rec["manifest"]["power_log"] == str(tmp_path / "meter.csv")
    assert abs(rec["power_fit"]["active_w"] - 1.7) < 0.1 and Drive.load(str(out / "twin.toml")).config["power"]["idle_mw"] == 800


def _real_probe_doc(t0: float) -> Dict[str, Any]:
    jobs = [{"name": "write", "stage": CLEAN, "direction": "write",
             "figures": {"mbps": 100.0, "wall_start_s": t0 + 20, "wall_end_s": t0 + 30}},
            {"name": "read", "stage": CLEAN, "direction": "read",
             "figures": {"mbps": 200.0, "wall_start_s": t0 + 30, "wall_end_s": t0 + 40}}]
    return {"target": {"kind": "file", "capacity_bytes": 1 << 30}, "power": {"idle_window_s": [t0 + 5, t0 + 15]},
            "jobs": jobs}


def test_a_power_meter_log_gives_the_idle_draw_and_each_job_s_average_watts(tmp_path: Path) -> None:
    from ssdlab.twin.probe import ProbeError, apply_power_log

    t0 = 1.7e9
    log = tmp_path / "meter.csv"
    # 1 W idle, 3 W while writing, 2 W while reading; the samples at the jobs' edges are left out
    lines = ["time,watts"] + [f"{t0 + i * 0.5:.1f},{1.0 if i < 40 else 3.0 if i < 60 else 2.0}" for i in range(81)]
    log.write_text("\n".join(lines) + "\n")
    doc = apply_power_log(_real_probe_doc(t0), log)
    assert doc["power"]["idle_w"] == pytest.approx(1.0) and doc["power"]["source"] == f"meter log {log}"
    w = {j["name"]: j["figures"]["avg_w"] for j in doc["jobs"]}
    assert w == {"write": pytest.approx(3.0), "read": pytest.approx(2.0)}
    bad = tmp_path / "bad.csv"
    bad.write_text("time,watts\n1700000000,1.0\n1700000001,lots\n")
    with pytest.raises(ProbeError, match="line 3"):
        apply_power_log(_real_probe_doc(t0), bad)
    far = tmp_path / "far.csv"
    far.write_text("1600000000,1.0\n1600000001,1.0\n")
    with pytest.raises(ProbeError, match="do not cover the probe's idle window"):
        apply_power_log(_real_probe_doc(t0), far)
    sim = dict(_real_probe_doc(t0), target={"kind": "simulated", "capacity_bytes": 1 << 30})
    with pytest.raises(ProbeError, match="simulated drive"):
        apply_power_log(sim, log)


def test_every_job_name_the_features_and_the_fit_read_is_a_job_of_the_probe() -> None:
    """The job names are constants and name functions (a typo fails at import); each names a job the probe runs."""
    from ssdlab.twin.probe import jobs as J

    # the host's buffer generation job runs on a real target only (J.host_buffer_job)
    names = ({j.name for j in probe_jobs(256 << 30, 1.0)} | {J.host_buffer_job(256 << 30).name}
             | {j.name for j in probe_jobs(256 << 30, 1.0, stages=(CLEAN, FULL))})
    fixed = {getattr(J, n) for n in dir(J) if n.isupper() and isinstance(getattr(J, n), str)
             and n not in ("CLEAN", "FILL", "CACHE", "HOST", "QUEUES", "FULL") and not n.endswith("_PREFIX")}
    families = ([J.randwrite_4k(q) for q in (1, 4, 32)] + [J.flushwrite(b) for b in ("4k", "16k", "64k")]
                + [J.seqwrite_pattern(p) for p in ("incompressible", "compressible", "repeated", "zeros")]
                + [J.randread_4k(q) for q in (1, 2, 3, 4, 8, 16, 32)] + [J.randread_qd1(b) for b in ("8k", "16k", "128k", "512k")]
                + [J.seqread_128k(q) for q in (1, 32)] + [J.seqread_4k(q) for q in (1, 2, 3, 4)]
                + [J.seqwrite_small("512", 32), J.seqread_small("512", 32)] + [J.rewrite(b) for b in ("4k", "8k", "16k")]
                + [J.burst("8m")] + [J.queue_read(n, q) for n, q in J.QUEUE_GRID]
                + [J.map_span(x, 256 << 30) for x in J.map_spans(256 << 30)])
    assert fixed | set(families) <= names, sorted((fixed | set(families)) - names)
    assert all(n.startswith((J.BURST_PREFIX, J.SEQWRITE_PREFIX, J.RANDWRITE_PREFIX)) for n in names
               if n.startswith(("burst", "seqwrite", "randwrite")))


def test_the_flushes_program_an_slc_cache_still_empty() -> None:
    """The flushed writes measure the program the fit takes them for: on a drive whose SLC cache (12 GB) is about
    the size of the write-buffer bursts, they run before the bursts fill it (SLC mode, 480 us), not after (the
    native TLC program, 1.67 ms); and they come after the first burst, which takes the full TRIM's map updates."""
    from ssdlab.twin.probe.names import ERASE, burst, flushwrite

    jobs = probe_jobs(1_000_000_000_000, 0.25, stages=(CLEAN,))
    names = [j.name for j in jobs]
    first_flush = names.index(flushwrite("4k"))
    assert names.index(ERASE) < names.index(burst("8m")) < first_flush < names.index(burst("32m"))
    # no more than a few hundred MB reach the drive before the flushes (the bursts after them write 10 GB)
    assert sum(int(j.options.get("size", 0)) for j in jobs[:first_flush]
               if j.direction == "write" and not j.options.get("time_based")) <= 16 << 20
    run = run_probe_simulated("wd-sn570-1000", None, budget=0.25, stages=(CLEAN,))
    tprog_ns = int(Drive.load("wd-sn570-1000").config["nand"]["tprog_ns"])
    for bs in ("4k", "16k", "64k"):
        assert run.figures[flushwrite(bs)]["sync_p50_us"] * 1e3 < 0.5 * tprog_ns
