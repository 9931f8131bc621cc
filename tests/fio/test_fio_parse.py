"""One reader for fio's JSON and logs: outputs recorded from real fio 3.33 runs
(tests/data/fio, re-recorded by record.sh) and simulated runs read the same way."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import make_drive
from ssdlab.errors import TraceError
from ssdlab.fio import parse, simulate
from ssdlab.fio.errors import FioOutputError
from ssdlab.fio.jobfile import parse_jobfile, parse_jobfile_text
from ssdlab.fio.run import classify

DATA = Path(__file__).parent.parent / "data" / "fio"


def jobfile(name: str) -> Any:
    return parse_jobfile(DATA / f"{name}.fio", env={"FIO_FIXTURE_FILE": "/tmp/fixture.dat"})


def test_real_fio_output_reads_into_typed_jobs() -> None:
    r = parse.read_fio_output(DATA / "seq-rand.json", DATA)
    assert (r.source, r.version) == ("fio", "fio-3.33")
    seq, rnd = r.jobs
    assert (seq.name, seq.rw, seq.bs_bytes, seq.iodepth, seq.ioengine, seq.groupid) == ("seq-write", "write", 131072, 8, "libaio", 0)
    assert seq.write.io_bytes == 64 << 20 and seq.write.total_ios == 512 and seq.read.total_ios == 0
    assert seq.write.mbps == pytest.approx(seq.write.io_bytes / (seq.write.runtime_ms / 1e3) / 1e6, rel=0.01)
    assert (rnd.name, rnd.rw, rnd.bs_bytes, rnd.iodepth, rnd.groupid) == ("rand-read", "randread", 4096, 16, 1)
    assert rnd.read.iops == pytest.approx(50661.1, abs=0.1)
    assert rnd.read.clat.percentile_us(99) == pytest.approx(481.28)
    assert rnd.read.clat.stddev_ns is not None and rnd.read.clat.count == rnd.read.total_ios
    assert rnd.read.lat is not None and rnd.read.lat.mean_ns >= rnd.read.clat.mean_ns
    # The per-second log: entries at 1000 and 2001 ms are seconds 1 and 2.
    assert rnd.iops_series is not None
    assert rnd.iops_series.time_ms == (1000, 2000) and rnd.iops_series.read == (52288.0, 54753.0)
    assert rnd.iops_series.write == (0.0, 0.0)
    assert seq.iops_series is None, "fio wrote an empty log for a job shorter than the interval"


def test_clones_logs_are_summed_per_interval_with_or_without_the_jobfile() -> None:
    for jf in (None, jobfile("clones")):
        r = parse.read_fio_output(DATA / "clones.json", DATA, jf)
        mix, seq = r.jobs
        assert (mix.numjobs, mix.rw, mix.options["rwmixread"]) == (2, "randrw", "70")
        assert mix.iops_series is not None and seq.iops_series is not None
        # clones_iops.1.log + clones_iops.2.log (fio's times 1125/2125 ms are intervals 1 and 2).
        assert mix.iops_series.read == (14025 + 13935, 15020 + 14896)
        assert mix.iops_series.write == (5947 + 6016, 6444 + 6341)
        assert seq.iops_series.read == (10491, 10544, 10941)
        assert seq.iops_series.total == seq.iops_series.read


def test_a_run_stopped_by_sigint_still_reads_and_splits_finished_from_cut() -> None:
    text = (DATA / "interrupted.json").read_text()
    assert text.lstrip().startswith("fio: terminating on signal 2")
    r = parse.load_fio_json(DATA / "interrupted.json")
    assert [j.name for j in r.jobs] == ["first", "second", "third"]
    assert r.jobs[0].iodepth_in_flight == 1 and r.jobs[0].ioengine == "psync"
    fin, cut, later = classify(r, interrupted=True)
    assert (fin, cut, later) == (("first",), ("second",), ("third",))
    assert classify(r, interrupted=False)[0] == ("first", "second", "third")


def test_simulated_output_reads_with_the_same_code(tmp_path: Path) -> None:
    text = (DATA / "seq-rand.fio").read_text()
    jf = parse_jobfile_text(text, "seq-rand.fio", env={"FIO_FIXTURE_FILE": "/dev/null"})
    run = simulate.simulate(jf, make_drive(dies=4, blocks=64, pages=512))  # 512 MiB raw
    simulate.write_outputs(run, tmp_path / "sim.json", tmp_path)
    sim = parse.read_fio_output(tmp_path / "sim.json", tmp_path)
    real = parse.read_fio_output(DATA / "seq-rand.json", DATA)
    assert sim.source == "ssdlab" and real.source == "fio"
    def shape(r: Any) -> Any:
        return [(j.name, j.rw, j.bs_bytes, j.iodepth, j.groupid) for j in r.jobs]

    assert shape(sim) == shape(real)
    assert sim.jobs[0].write.io_bytes == real.jobs[0].write.io_bytes == 64 << 20
    s = sim.jobs[1].iops_series
    assert s is not None and len(s.read) == 3 and all(v > 0 for v in s.read)
    assert sim.jobs[1].ssdlab is not None and "waf" in sim.jobs[1].ssdlab["ssdlab"]
    json.dumps(sim.to_dict())


@pytest.mark.parametrize(
    "text,line,field,needle",
    [
        ("fio: no such file\n", 0, "", "no JSON object"),
        ('{"fio version": "fio-3.33",\n "jobs": [ }', 2, "", "invalid JSON"),
        ('{"jobs": []}', 0, "fio version", "not fio's"),
        ('{"fio version": "fio-3.33"}', 0, "jobs", "missing"),
        ('{"fio version": "fio-3.33", "jobs": [{"jobname": "a", "read": {}}]}', 0, "io_bytes", "jobs[0].read"),
        ('{"fio version": "fio-3.33", "jobs": [{"jobname": "a"}]}', 0, "read", "missing"),
    ],
)
def test_bad_output_is_one_error_naming_file_line_field(tmp_path: Path, text: str, line: int, field: str, needle: str) -> None:
    p = tmp_path / "bad.json"
    p.write_text(text)
    with pytest.raises(FioOutputError) as ei:
        parse.load_fio_json(p)
    e = ei.value
    assert isinstance(e, TraceError)
    assert (e.line, e.field) == (line, field), str(e)
    assert needle in str(e) and str(p) in str(e)


def test_a_bad_log_line_is_named(tmp_path: Path) -> None:
    p = tmp_path / "x_iops.1.log"
    p.write_text("1000, 5, 1, 0, 0\n2000, five, 1, 0, 0\n")
    with pytest.raises(FioOutputError) as ei:
        parse.read_log(p)
    assert ei.value.line == 2
    p.write_text("1000, 5, 7, 0, 0\n")
    with pytest.raises(FioOutputError, match="ddir 7"):
        parse.read_log(p)


def test_per_io_logs_are_counted_per_second(tmp_path: Path) -> None:
    # fio without log_avg_msec logs every I/O: three in the first second, one in the third.
    p = tmp_path / "x_iops.1.log"
    p.write_text("10, 1, 1, 4096, 0\n500, 1, 1, 4096, 8192\n999, 1, 0, 4096, 0\n2500, 1, 1, 4096, 0\n")
    s = parse.series_from_logs([parse.read_log(p)], None)
    assert s is not None and s.write == (2.0, 0.0, 1.0) and s.read == (1.0, 0.0, 0.0)


def test_main_prints_the_parsed_result(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert parse.main([str(DATA / "clones.json"), "--log-dir", str(DATA)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["jobs"][0]["iops_series"]["read"] == [27960.0, 29916.0]
    (tmp_path / "x.json").write_text("nope")
    assert parse.main([str(tmp_path / "x.json")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
