"""No command destroys a user's data: every path the lab writes is a regular
file or a new name in a directory (never a device, FIFO or socket, whatever
symlinks lead there), files are replaced whole or not at all, an output
directory serves one run at a time, and job files cannot smuggle in targets
or commands. On fake devices everywhere (a character device, a FIFO, a
socket), and on an ext4 loop device where the tests run as root."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import shutil
import socket
import stat
import subprocess
import threading
from pathlib import Path
from typing import Iterator, List

import pytest

from conftest import assert_one_line_error, attached_loop_device, cli_in_process, run_cli
from ssdlab import outputs
from ssdlab.fio.errors import JobFileError
from ssdlab.fio.guard import filename_value, guard_jobfile

JOB = "[j]\nrw=randread\nbs=4k\nsize=16m\nruntime=1\n"


def output_commands(dest: str, tmp: Path) -> List[List[str]]:
    """Every command with an output flag, writing to ``dest``."""
    job = tmp / "j.fio"
    job.write_text(JOB)
    return [
        ["run", "--drive", "generic-mlc-120", "--rw", "randwrite", "--bs", "4k", "--runtime", "10ms", "--output", dest],
        ["fio", str(job), "--drive", "generic-mlc-120", "--output", dest],
        ["fio", str(job), "--drive", "generic-mlc-120", "--log-dir", dest],
        ["fio-run", str(job), "--target", str(tmp), "--output", dest],
        ["trace", "generate", "typical-2010", "--out", dest, "--format", "csv"],
        ["trace", "iolog", "typical-2010", "--target-bytes", "1g", "--out", dest],
        ["test", "as-ssd", "--quick", "--output", dest],
        ["review", "--drive", "generic-mlc-120", "--quick", "--tests", "as-ssd", "--out", dest],
        ["spec", "generic-mlc-120", "--output", dest],
        ["sweep", "--drive", "generic-mlc-120", "--set", "spare=0.1,0.2", "--test", "as-ssd", "--out", dest],
        ["probe", "--drive", "generic-mlc-120", "--out", dest],
    ]


def _special_nodes(tmp: Path) -> Iterator[Path]:
    fifo = tmp / "fifo"
    os.mkfifo(fifo)
    yield fifo
    sock_path = tmp / "sock"
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(sock_path))
    yield sock_path
    s.close()
    link = tmp / "link-to-null"
    link.symlink_to("/dev/null")
    yield link


@pytest.mark.parametrize("node", ["/dev/null", "fifo", "socket", "symlink"])
def test_every_output_flag_refuses_a_device_fifo_or_socket_and_leaves_it_as_it_was(tmp_path: Path, node: str) -> None:
    nodes = {p.name: p for p in _special_nodes(tmp_path)}
    dest = {"/dev/null": Path("/dev/null"), "fifo": nodes["fifo"], "socket": nodes["sock"], "symlink": nodes["link-to-null"]}[node]
    kind_before = stat.S_IFMT(os.stat(dest).st_mode)
    for args in output_commands(str(dest), tmp_path):
        cp = cli_in_process(*args, timeout=60)
        line = assert_one_line_error(cp, str(dest))
        assert any(w in line for w in ("device", "FIFO", "socket")), line
        assert stat.S_IFMT(os.stat(dest).st_mode) == kind_before, args  # never replaced by a regular file
    assert not list(tmp_path.glob(".*.tmp")), "no temporary file left"


def _md5(dev: str) -> str:
    h = hashlib.md5()
    with open(dev, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def test_an_ext4_loop_device_is_unchanged_by_every_command_with_an_output_flag(tmp_path: Path) -> None:
    mkfs = shutil.which("mkfs.ext4")
    if mkfs is None:
        pytest.skip("mkfs.ext4 is not installed (e2fsprogs)")
    with attached_loop_device(tmp_path, 32 << 20) as dev:
        subprocess.run([mkfs, "-q", "-F", dev], check=True, capture_output=True)
        before = _md5(dev)
        link = tmp_path / "disk"
        link.symlink_to(dev)
        for dest in (dev, str(link)):
            for args in output_commands(dest, tmp_path):
                cp = cli_in_process(*args, timeout=60)
                assert_one_line_error(cp, "block device")
        assert _md5(dev) == before
        assert stat.S_ISBLK(os.stat(dev).st_mode)


def test_fio_run_rewrites_an_iolog_that_names_another_file_to_the_checked_target(tmp_path: Path) -> None:
    if shutil.which("fio") is None:
        pytest.skip("fio is not installed")
    victim = tmp_path / "victim.bin"
    victim.write_bytes(b"precious" * 1024)
    before = hashlib.md5(victim.read_bytes()).hexdigest()
    log = tmp_path / "evil.log"
    log.write_text(f"fio version 2 iolog\n{victim} add\n{victim} open\n{victim} write 0 4096\n{victim} close\n")
    job = tmp_path / "evil.fio"
    job.write_text(f"[j]\nread_iolog={log}\nioengine=psync\n")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    logs = tmp_path / "logs"
    cp = run_cli("fio-run", str(job), "--target", str(scratch), "--size", "1m", "--log-dir", str(logs),
                 "--output", str(tmp_path / "out.json"), timeout=120)
    assert cp.returncode == 0, cp.stderr
    assert hashlib.md5(victim.read_bytes()).hexdigest() == before
    rewritten = (logs / "ssdlab-iolog-0.log").read_text()
    assert str(victim) not in rewritten and "ssdlab-fio-" in rewritten
    doc = json.loads((tmp_path / "out.json").read_text())
    assert doc["jobs"][0]["write"]["io_bytes"] == 4096


@pytest.mark.parametrize("line, option", [
    ("filename=/dev/sda", "filename"), ("directory=/mnt", "directory"), ("opendir=/", "opendir"),
    ("replay_redirect=/dev/sda", "replay_redirect"), ("exec_prerun=touch x", "exec_prerun"), ("ioscheduler=none", "ioscheduler"),
    ("cgroup=evil", "cgroup"), ("profile=act", "profile"), ("allow_mounted_write=1", "allow_mounted_write"),
    ("ioengine=exec", "ioengine"), ("ioengine=external:/tmp/x.so", "ioengine"), ("mem=mmap:/dev/sda", "mem"),
    ("write_iolog=/dev/sda", "write_iolog"), ("write_bw_log=/etc/x", "write_bw_log"), ("FileName=/dev/sda", "filename"),
    ("filename=${EVIL}", "filename"),
])
def test_a_job_file_cannot_name_another_target_or_run_a_command(line: str, option: str) -> None:
    with pytest.raises(JobFileError) as e:
        guard_jobfile(f"[global]\nioengine=libaio\n[j]\nrw=read\n{line}\n", "x.fio")
    assert e.value.file == "x.fio" and e.value.line == 5 and e.value.field == option


def test_an_environment_variable_cannot_smuggle_an_option_into_a_job_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SSDLAB_TEST_EVIL", "filename=/dev/sda")
    with pytest.raises(JobFileError, match="filename"):
        guard_jobfile("[j]\nrw=read\n${SSDLAB_TEST_EVIL}\n")
    assert guard_jobfile("[j]\nrw=read\nbs=${SSDLAB_TEST_UNSET_VAR}4k\n").lines[2] == "bs=4k"  # unset: empty, as fio
    with pytest.raises(JobFileError, match="include"):
        guard_jobfile("include other.fio\n[j]\nrw=read\n")


def test_fio_run_errors_name_the_job_file_not_a_placeholder(tmp_path: Path) -> None:
    job = tmp_path / "mine.fio"
    job.write_text("[j]\nrw=read\nfilename=/dev/sda\n")
    cp = cli_in_process("fio-run", str(job), "--target", str(tmp_path))
    assert_one_line_error(cp, f"{job}:3", "filename")


@pytest.mark.parametrize("value", ["/dev/sdz\n[evil]\nexec_prerun=touch pwned", "", "  ", "/a=b", "/a;b", "/x[1]", "/a#b"])
def test_a_filename_that_would_break_the_job_file_is_refused(value: str) -> None:
    cp = cli_in_process("test", "as-ssd", "--fio", "--filename", value)
    assert_one_line_error(cp, "--filename")
    with pytest.raises(JobFileError):
        filename_value(value)


def test_a_colon_in_a_filename_is_escaped_for_fio() -> None:
    cp = cli_in_process("test", "as-ssd", "--fio", "--filename", "/dev/disk/by-path/pci-0000:00:1f.2-ata-1")
    assert cp.returncode == 0
    assert "filename=/dev/disk/by-path/pci-0000\\:00\\:1f.2-ata-1" in cp.stdout.splitlines()


def test_atomic_writes_keep_the_old_file_on_a_full_disk_and_leave_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "figures.csv"
    target.write_text("old\n")
    with pytest.raises(outputs.OutputError, match=f"cannot write {target}: no space left on device"):
        with outputs.atomic_open(target) as f:
            f.write("new, partly")
            raise OSError(errno.ENOSPC, "No space left on device")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["figures.csv"]


def test_a_symlink_to_a_regular_file_is_followed_and_stays_a_link(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("{}")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    outputs.write_text(link, "[1]")
    assert link.is_symlink() and real.read_text() == "[1]"


def test_charts_are_written_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import matplotlib.pyplot as plt

    from ssdlab.report import charts

    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    charts.save(fig, tmp_path, "c")
    png = (tmp_path / "c.png").read_bytes()
    assert png.startswith(b"\x89PNG")

    def killed(*a: object, **k: object) -> None:
        raise KeyboardInterrupt

    fig, ax = plt.subplots()
    monkeypatch.setattr(outputs.os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        charts.save(fig, tmp_path, "c")
    assert (tmp_path / "c.png").read_bytes() == png  # the old chart, whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.png", "c.svg"]


def test_an_output_directory_in_use_by_another_run_is_refused_naming_it(tmp_path: Path) -> None:
    out = tmp_path / "review"
    with outputs.lock_dir(out, "ssdlab review --out review"):
        cp = cli_in_process("review", "--drive", "generic-mlc-120", "--quick", "--tests", "as-ssd", "--out", str(out))
        assert_one_line_error(cp, f"{out} is in use by another ssdlab run", f"process {os.getpid()}", "ssdlab review --out review")
    assert not (out / outputs.LOCK_NAME).exists()


def test_a_review_into_its_own_directory_resumes_and_one_of_another_run_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "r"
    args = ["review", "--drive", "generic-mlc-120", "--quick", "--tests", "as-ssd", "--jobs", "1", "--out", str(out)]
    first = cli_in_process(*args, timeout=120)
    assert first.returncode == 0, first.stderr
    doc = out / "results" / "generic-mlc-120" / "as-ssd.json"
    stamp = doc.stat().st_mtime_ns
    again = cli_in_process(*args, timeout=120)
    assert again.returncode == 0, again.stderr
    assert "1 of 1 results kept from an earlier run" in again.stderr
    assert doc.stat().st_mtime_ns == stamp  # kept, not recomputed
    other = cli_in_process(*args, "--seed", "2", timeout=120)
    assert_one_line_error(other, str(doc), "another run", "seed 1 (this run: 2)")


def test_ctrl_c_while_the_report_is_drawn_names_the_results_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ssdlab.report as report

    def interrupted(*a: object, **k: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(report, "build_report", interrupted)
    out = tmp_path / "r"
    cp = cli_in_process("review", "--drive", "generic-mlc-120", "--quick", "--tests", "as-ssd", "--jobs", "1", "--out", str(out))
    assert cp.returncode == 130
    assert f"the 1 results are kept in {out / 'results'}" in cp.stderr and "ssdlab report" in cp.stderr


@contextlib.contextmanager
def _server(banner: bytes) -> Iterator[str]:
    """A TCP server on loopback that writes ``banner`` (nothing: a silent
    port, or an HTTP server waiting for a request) to each connection and
    holds it open; its address."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    srv.settimeout(5)
    held: List[socket.socket] = []

    def serve() -> None:
        try:
            conn, _ = srv.accept()
        except OSError:
            return
        held.append(conn)
        if banner:
            conn.sendall(banner)

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    try:
        yield f"tcp://127.0.0.1:{srv.getsockname()[1]}"
    finally:
        t.join(6)
        for c in held:
            c.close()
        srv.close()


@pytest.mark.parametrize("banner, needle", [(b"", "no handshake within 1 s"),
                                            (b"SSH-2.0-OpenSSH_9.2\r\n", "its first bytes 'SSH-2.0-' are not a Dask handshake"),
                                            (b"HTTP/1.1 400 Bad Request\r\n\r\n", "are not a Dask handshake")])
def test_a_scheduler_address_that_is_not_dask_is_one_clear_error(monkeypatch: pytest.MonkeyPatch, banner: bytes, needle: str) -> None:
    import dask.distributed as dd

    from ssdlab.cluster import workers
    from ssdlab.errors import SsdlabError

    monkeypatch.setattr(workers, "_CONNECT_TIMEOUT_S", 1)
    with _server(banner) as addr:
        with pytest.raises(SsdlabError) as e:
            workers._connect(dd, addr)
    assert f"scheduler {addr}: not a Dask scheduler" in str(e.value) and needle in str(e.value)


def test_ranges_and_counts_have_a_maximum_checked_before_any_work(tmp_path: Path) -> None:
    never = str(tmp_path / "sweep")
    cp = cli_in_process("sweep", "--drive", "generic-mlc-120", "--set", "nand.tprog_ns=1ms..2ms:100000000", "--out", never)
    assert_one_line_error(cp, "at most 1000 values")
    cp = cli_in_process("sweep", "--drive", "generic-mlc-120", "--set", "nand.tprog_ns=1ms..2ms:200", "--set",
                        "nand.tr_ns=10us..20us:200", "--out", never)
    assert_one_line_error(cp, "40,000 runs", "at most 10,000")
    assert_one_line_error(cli_in_process("fit", "--trials", "1000000"), "--trials", "1 .. 100,000")


def test_a_fifo_drive_file_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "drive.toml"
    os.mkfifo(fifo)
    cp = cli_in_process("run", "--drive", str(fifo), "--rw", "read", "--runtime", "1s", timeout=10)
    assert_one_line_error(cp, "a FIFO")


def test_a_symlink_loop_is_named_as_one(tmp_path: Path) -> None:
    a, b = tmp_path / "a.toml", tmp_path / "b.toml"
    a.symlink_to(b)
    b.symlink_to(a)
    assert_one_line_error(cli_in_process("run", "--drive", str(a), "--rw", "read", "--runtime", "1s"), "a loop of symbolic links")
    assert_one_line_error(cli_in_process("fio", str(a)), "a loop of symbolic links")


@pytest.mark.parametrize("value, needle", [("nan", "NaN is not a finite number"), ("inf", "inf is not a finite number"),
                                           ("1979-05-27T07:32:00Z", "a TOML date/time")])
def test_toml_values_with_no_number_are_named_with_their_field(tmp_path: Path, value: str, needle: str) -> None:
    from ssdlab import Drive

    text = (Path(__file__).parent.parent / "python" / "ssdlab" / "drives" / "generic-mlc-120.toml").read_text()
    p = tmp_path / "d.toml"
    p.write_text(text.replace("channels = 8", f"channels = {value}", 1))
    cp = cli_in_process("drive", "show", str(p))
    assert_one_line_error(cp, "nand.channels", needle)
    with pytest.raises(Exception, match="nand.channels"):
        Drive.load(str(p))


def test_a_drive_rated_for_no_program_erase_cycles_is_refused() -> None:
    cp = cli_in_process("run", "--set", "nand.pe_cycles_rated=0", "--rw", "read", "--runtime", "1s")
    assert_one_line_error(cp, "nand.pe_cycles_rated", "1..=1000000")


@pytest.mark.parametrize("flag", [["--size", "1g"], ["--destroy-data", "/dev/sdz"], ["--clean-by-trim"]])
def test_device_flags_without_a_device_are_an_error_not_ignored(tmp_path: Path, flag: List[str]) -> None:
    cp = cli_in_process("review", "--drive", "generic-mlc-120", *flag, "--out", str(tmp_path / "r"))
    assert_one_line_error(cp, flag[0], "--device")


def test_a_device_review_into_a_directory_with_results_refuses_instead_of_overwriting(tmp_path: Path) -> None:
    out = tmp_path / "r"
    doc = out / "results" / "real-x" / "as-ssd.json"
    doc.parent.mkdir(parents=True)
    doc.write_text("{}")
    cp = cli_in_process("review", "--device", str(tmp_path / "target"), "--quick", "--tests", "as-ssd", "--out", str(out))
    assert_one_line_error(cp, "does not resume", str(doc))
    assert doc.read_text() == "{}"
