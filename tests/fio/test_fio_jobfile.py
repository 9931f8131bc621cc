"""fio job files as fio reads them: sections, globals, flags, comments, ${VAR},
fio's units; and every option ssdlab cannot honour is an error naming the file,
line and option (never ignored)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pytest

from ssdlab.errors import SsdlabError, WorkloadError
from ssdlab.fio import jobfile
from ssdlab.fio.errors import JobFileError
from ssdlab.fio.jobfile import Percent, parse_jobfile, parse_jobfile_text, parse_size, parse_time_ns

STEADY = """\
# fio's examples/ssd-steadystate.fio, as shipped
[global]
ioengine=libaio
direct=1
group_reporting
filename=/dev/fioa

[sequential-fill]
description=Sequential fill phase
rw=write
iodepth=16
bs=1M

[random-write-steady]
stonewall
description=Random write steady state phase
rw=randwrite
bs=4K
iodepth=32
numjobs=4
write_bw_log=fioa-steady-state
"""


def err(text: str, env: Dict[str, str] | None = None) -> JobFileError:
    with pytest.raises(JobFileError) as ei:
        parse_jobfile_text(text, "job.fio", env=env or {})
    return ei.value


def test_fios_steady_state_example_reads_as_fio_reads_it() -> None:
    jf = parse_jobfile_text(STEADY, "ssd-steadystate.fio", env={})
    fill, steady = jf.jobs
    assert (fill.name, steady.name) == ("sequential-fill", "random-write-steady")
    # Globals reach both jobs; bare flags are 1.
    assert fill.value("ioengine") == steady.value("ioengine") == "libaio"
    assert fill.flag("group_reporting") and steady.flag("group_reporting")
    assert steady.flag("stonewall") and not fill.flag("stonewall")
    # fio's units: 1M = 1 MiB, 4K = 4 KiB.
    assert fill.value("bs") == 1 << 20 and steady.value("bs") == 4096
    assert steady.value("numjobs") == 4
    # Job numbers count clones: the 4 clones are fio jobs 2..5 (log names).
    assert (fill.number, steady.number) == (1, 2)
    # fio's "job options" list the job's own valued settings (bare flags are not shown).
    assert steady.job_options()["numjobs"] == "4" and "stonewall" not in steady.job_options()
    assert jf.global_options_shown() == {"ioengine": "libaio", "direct": "1", "filename": "/dev/fioa"}
    # Bare write_bw_log means "named after the job".
    assert steady.value("write_bw_log") == "fioa-steady-state"


def test_comments_globals_in_order_names_and_aliases() -> None:
    text = """\
; a comment
[global]
size=1m ; inline comment (fio strips from ; or #)
rw=read   # another
[one]
[global]
bs=8k
[two]
name=renamed
readwrite=randrw
rwmixwrite=30
wait_for_previous
"""
    jf = parse_jobfile_text(text, "t.fio", env={})
    one, two = jf.jobs
    assert one.value("size") == 1 << 20 and one.value("rw") == "read"
    assert not one.has("bs"), "a [global] after a job applies only to the jobs after it"
    assert two.value("bs") == 8192
    assert two.name == "renamed" and two.section == "two"
    assert two.value("rw") == "randrw" and two.value("rwmixread") == 70
    assert two.flag("stonewall")
    assert two.where("rwmixread") == ("t.fio", 11)


def test_environment_variables_expand_and_an_unset_one_is_empty_as_in_fio_with_a_note() -> None:
    jf = parse_jobfile_text("[j]\nrw=write\nsize=${SIZE}\nbs=${BS}k\n", "e.fio", env={"SIZE": "64m", "BS": "16"})
    assert jf.jobs[0].value("size") == 64 << 20 and jf.jobs[0].value("bs") == 16384
    jf = parse_jobfile_text("[j]\nrw=write\nfilename=${NOPE}\n", "e.fio", env={})
    assert jf.jobs[0].value("filename") == ""
    assert jf.notes == ("e.fio:3: ${NOPE} is not set: an empty string, as in fio",)
    e = err("[j]\nrw=write\nsize=${NOPE}\n")
    assert (e.file, e.line, e.field) == ("job.fio", 3, "size") and "empty value" in str(e) and "${NOPE} not set" in str(e)


@pytest.mark.parametrize(
    "text,expected",
    [
        ("4096", 4096), ("4k", 4096), ("4K", 4096), ("4kb", 4096), ("4KB", 4096), ("1m", 1 << 20), ("1g", 1 << 30),
        ("2t", 2 << 40), ("0x1000", 4096), ("4ki", 4000), ("1mi", 1_000_000), ("512b", 512), ("50%", Percent(50.0)),
    ],
)
def test_sizes_follow_fios_kb_base_1024_rules(text: str, expected: Any) -> None:
    assert parse_size(text, percent_ok=True) == expected


def test_kb_base_1000_swaps_the_prefixes() -> None:
    jf = parse_jobfile_text("[j]\nkb_base=1000\nrw=read\nsize=1m\nbs=4ki\n", "k.fio", env={})
    assert jf.jobs[0].value("size") == 1_000_000 and jf.jobs[0].value("bs") == 4096


@pytest.mark.parametrize("text,ns", [("60", 60 * 10**9), ("500ms", 5 * 10**8), ("2m", 120 * 10**9), ("1h", 3600 * 10**9),
                                     ("250us", 250_000), ("10s", 10**10)])
def test_times_are_seconds_unless_suffixed(text: str, ns: int) -> None:
    assert parse_time_ns(text) == ns


@pytest.mark.parametrize(
    "text,line,field,needles",
    [
        ("[j]\nrw=write\ninclude other.fio\n", 3, "include", ["include"]),
        ("[j]\nrw=write\nfrobnicate=3\n", 3, "frobnicate", ["unknown", "supported:", "iodepth"]),
        ("[j]\nrw=write\nrate_iops=5,x\n", 3, "rate_iops", ["whole number"]),
        ("[j]\nrw=readx:8\n", 2, "rw", ["allowed:", "trimwrite"]),
        ("[j]\nrw=write\nsize=1.5g\n", 3, "size", ["whole"]),
        ("[j]\nrw=write\nruntime=10sec\n", 3, "runtime", ["microseconds", "ms, s"]),
        ("[j]\nrw=randrw\nblockalign=4k,8k\n", 3, "blockalign", ["mixed job", "one value"]),
        ("[j]\nrw=randrw\nbssplit=4k/50:64k/40\n", 3, "bssplit", ["90", "not 100"]),
        ("[j]\nrw=write\niodepth=0\n", 3, "iodepth", ["at least 1"]),
        ("[j]\nrw=write\ntime_based=yes\n", 3, "time_based", ["1 or 0"]),
        ("[j]\nrw=write\nioengine=spdk\n", 3, "ioengine", ["libaio", "psync"]),
        ("[j]\nioengine=http\nhttp_verbose=1\n", 2, "ioengine", ["cannot run on a simulated drive", "HTTP"]),
        ("[j]\nrw=read\nioengine=filecreate\n", 3, "ioengine", ["file-system operations"]),
        ("[j]\nrw=read\nzonemode=zbd\n", 3, "zonemode", ["until the simulated drives have zones"]),
        ("[j]\nrw=read\nbsrange=8k-4k\n", 3, "bsrange", ["MIN <= MAX"]),
        ("[j]\nrw=read\npercentile_list=50:101\n", 3, "percentile_list", ["0..100"]),
        ("[j]\nrw=write\nexec_prerun=hdparm --security-erase p /dev/sdx\n", 3, "exec_prerun", ["not run"]),
        ("rw=write\n[j]\n", 1, "rw", ["before any [section]"]),
        ("[global]\nrw=write\n", 0, "", ["no job sections"]),
        ("[j\nrw=write\n", 1, "", ["section header"]),
        ("[j]\nrw=\n", 2, "rw", ["empty value"]),
    ],
)
def test_what_ssdlab_cannot_honour_is_one_error_naming_file_line_option(text: str, line: int, field: str, needles: List[str]) -> None:
    e = err(text)
    assert isinstance(e, WorkloadError) and isinstance(e, SsdlabError)
    assert (e.file, e.line, e.field) == ("job.fio", line, field), str(e)
    msg = str(e)
    assert msg.startswith(f"job.fio:{line}" if line else "job.fio"), msg
    for n in needles:
        assert n in msg, (n, msg)


def test_every_accepted_option_says_what_the_simulator_does_with_it() -> None:
    assert {s.effect for s in jobfile.OPTIONS.values()} == {"engine", "ssdlab", "recorded", "host", "noted"}
    for key in ("rw", "bs", "bssplit", "iodepth", "numjobs", "size", "offset", "io_size", "runtime", "time_based", "ramp_time", "rwmixread",
                "random_distribution", "randseed", "buffer_compress_percentage", "refill_buffers", "zero_buffers", "scramble_buffers", "stonewall",
                "write_iops_log", "log_avg_msec", "name", "filename", "ioengine", "direct", "group_reporting", "thread", "blockalign", "number_ios",
                "new_group", "description"):
        assert key in jobfile.OPTIONS, key
    assert not set(jobfile.REJECTED) & set(jobfile.OPTIONS)


def test_parse_jobfile_reads_a_file_and_names_an_unreadable_one(tmp_path: Path) -> None:
    p = tmp_path / "a.fio"
    p.write_text(STEADY)
    assert len(parse_jobfile(p, env={}).jobs) == 2
    with pytest.raises(JobFileError, match="missing.fio: no such fio job file"):
        parse_jobfile(tmp_path / "missing.fio")
    with pytest.raises(JobFileError, match="a directory, not a fio job file"):
        parse_jobfile(tmp_path)
    (tmp_path / "b.fio").write_bytes(b"[j]\nrw=write\n\xff\xfe")
    with pytest.raises(JobFileError, match="not a text file"):
        parse_jobfile(tmp_path / "b.fio")


def test_main_prints_typed_values_or_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "a.fio"
    p.write_text(STEADY)
    assert jobfile.main([str(p)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["jobs"][1]["values"]["numjobs"] == 4 and doc["jobs"][1]["effects"]["filename"] == "recorded"
    p.write_text("[j]\nrw=write\nbogus=1\n")
    assert jobfile.main([str(p)]) == 2
    errtxt = capsys.readouterr().err
    assert errtxt.count("\n") == 1 and "a.fio:3" in errtxt and "bogus" in errtxt and "Traceback" not in errtxt


def test_fios_aliases_and_everyday_options_are_read_as_fio_reads_them() -> None:
    jf = parse_jobfile_text("[j]\nreadwrite=read:-8k\nblocksize=8k\nfileoffset=0%\ntimeout=5\nblocksize_range=4k-16k\n"
                            "nr_files=2\nfilesize=1m\nfill_fs=0\npercentile_list=50:99.5\nwrite_lat_log\n", "a.fio", env={})
    v = jf.jobs[0].values
    assert v["rw"] == "read:-8k" and jobfile.rw_base(v["rw"]) == "read"
    assert v["bs"] == 8192 and v["offset"] == 0 and v["runtime"] == 5 * 10**9
    assert v["bsrange"] == ((4096, 16384),) and v["nrfiles"] == 2 and v["filesize"] == 1 << 20
    assert v["percentile_list"] == (50.0, 99.5) and v["write_lat_log"] == ""


def test_host_side_options_are_accepted_with_one_note_naming_each() -> None:
    text = "[global]\ncpus_allowed=0-3\niodepth_batch=8\n[a]\nrw=read\ncpus_allowed=1\n[b]\nrw=read\nio_submit_mode=offload\n"
    jf = parse_jobfile_text(text, "h.fio", env={})
    assert len(jf.jobs) == 2
    names = sorted(n.split("'")[1] for n in jf.notes)
    assert names == ["cpus_allowed", "io_submit_mode", "iodepth_batch"], jf.notes
    assert all("no effect on a simulated drive" in n for n in jf.notes)


def test_an_engine_without_block_io_is_refused_before_its_own_options() -> None:
    # netio's options (port, hostname) come first; the engine is the reason
    e = err("[j]\nport=8888\nhostname=localhost\nioengine=net\n")
    assert (e.line, e.field) == (4, "ioengine") and "network" in str(e)


def test_every_alias_names_a_known_option_and_no_alias_is_refused_itself() -> None:
    for alias, name in jobfile.ALIASES.items():
        assert name in jobfile.OPTIONS or name in jobfile.REJECTED, (alias, name)
        assert alias not in jobfile.REJECTED and alias not in jobfile.OPTIONS, alias


def test_per_direction_values_give_a_single_direction_job_its_own() -> None:
    jf = parse_jobfile_text("[w]\nrw=write\nbs=256k,32k\nbssplit=,4k/50:8k/50\n[r]\nrw=randread\nbs=,8k\n[t]\nrw=trim\nbs=16k,64k\n",
                            "d.fio", env={})
    w, r, t = jf.jobs
    assert w.value("bs") == 32768 and w.value("bssplit") == ((4096, 50), (8192, 50))
    assert r.value("bs") == 4096  # reads not given: fio's default
    assert t.value("bs") == 65536  # the last value applies to the directions after it
