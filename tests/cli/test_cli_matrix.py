"""Every command with bad values for its flags: a negative, zero where it is
not allowed, a huge number, nan, a wrong unit, an unknown preset, test or
choice, a path that does not exist, a directory, a binary file, an empty file,
an output place that cannot be written, an unreachable scheduler. Each must
give exit 2 and exactly one line on stderr ("ssdlab: error: ..."), never a
traceback nor "internal error".

The commands run in this process through :func:`ssdlab.cli.main` (about 600
command lines in some 10 s); an alarm stops a case that does not answer
within 20 s (a bad value taken as good: the base command lines are small and
valid). The test marked slow runs the same command lines through the
installed ``ssdlab`` command, one process each (about 5 minutes)."""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, List, Optional, Sequence, Tuple

import pytest

from conftest import REPO, TRACES_DIR, assert_one_line_error, cli_in_process, make_drive, run_cli

#: Seconds a bad command line gets to answer (it should fail before any simulation).
CASE_TIMEOUT_S = 20


def assert_usage_error(argv: Sequence[str]) -> str:
    cp = cli_in_process(*argv, timeout=CASE_TIMEOUT_S)
    where = f"ssdlab {' '.join(argv)}\nexit {cp.returncode}\nstdout: {cp.stdout[-500:]}\nstderr: {cp.stderr[-1500:]}"
    assert "Traceback" not in cp.stderr, where
    assert "internal error" not in cp.stderr, where
    lines = cp.stderr.strip().splitlines()
    assert cp.returncode == 2, where
    assert len(lines) == 1 and lines[0].startswith("ssdlab"), where
    return lines[0]


# ---------------------------------------------------------------------------
# the files the cases name
# ---------------------------------------------------------------------------


class Files:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.drive = tmp / "small.json"
        self.drive.write_text(json.dumps(make_drive()))
        self.missing = str(tmp / "no-such-file.toml")
        self.directory = tmp / "a-directory"
        self.directory.mkdir()
        self.binary = tmp / "binary.toml"
        self.binary.write_bytes(bytes(range(256)) * 16 + b"\x00\xff\xfe")
        self.empty = tmp / "empty.toml"
        self.empty.write_bytes(b"")
        self.a_file = tmp / "a-file.txt"
        self.a_file.write_text("not a directory\n")
        # a place no file can be created in: /sys refuses even root; else a read-only directory
        if os.geteuid() == 0:
            self.unwritable = "/sys/ssdlab-test/out"
        else:
            ro = tmp / "read-only"
            ro.mkdir()
            ro.chmod(0o555)
            self.unwritable = str(ro / "out")
        self.trace = TRACES_DIR / "msr_cambridge_hm0_sample" / "msr-cambridge1-sample.csv"
        self.jobfile = tmp / "job.fio"
        self.jobfile.write_text("[j]\nrw=write\nbs=4k\nsize=1m\n")
        self.table = tmp / "table.csv"
        rows = (REPO / "python/ssdlab/suite/published.csv").read_text().splitlines()
        self.table.write_text("\n".join(rows[:2]) + "\n")
        self.fio_json = REPO / "tests" / "data" / "fio" / "seq-rand.json"

    def out(self, name: str) -> str:
        """An output path of a base command line (each case gets its own directory)."""
        return f"{{OUT}}/{name}"


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Files:
    return Files(tmp_path_factory.mktemp("matrix"))


# ---------------------------------------------------------------------------
# bad values by kind: (the first is the default run's; -m slow runs all)
# ---------------------------------------------------------------------------

SIZE = ["4q", "-1", "nan", "1e999", "", "99999999999999999999999999t", "12 parsecs"]
POSITIVE_SIZE = ["0", *SIZE]
DURATION = ["soon", "-1s", "nan", "1e999s", "", "5 parsecs"]
WHOLE = ["x", "-1", "nan", "1.5", "99999999999999999999999"]
POSITIVE_WHOLE = ["0", *WHOLE]
SEED = ["-1", "18446744073709551616", "x", "nan"]
CHOICE = ["bogus"]
SETTING = ["nand.tprog_ns=-1", "novalue", "nand.tprog_ns=nan", "bogus.key=1", "nand.tprog_ns=1e999",
           "host.link_bytes_per_s=0", "nand.tprog_us=5", "drive.user_capacity_bytes=\"big\""]
FLOAT = ["nan", "inf", "-2", "x"]
SCHEDULER = ["bogus-address", "tcp://127.0.0.1:1"]


def drive_values(f: Files) -> List[str]:
    return ["no-such-preset", f.missing, str(f.directory), str(f.binary), str(f.empty)]


def infile_values(f: Files) -> List[str]:
    return [f.missing, str(f.directory), str(f.binary), str(f.empty)]


def outfile_values(f: Files) -> List[str]:
    return [str(f.directory), f.unwritable, f"{f.a_file}/x.json"]


def outdir_values(f: Files) -> List[str]:
    return [str(f.a_file), f.unwritable, f"{f.a_file}/sub"]


Case = Tuple[str, List[str], str, List[str]]  # (id, base argv, flag or positional index, bad values)


def cases(f: Files) -> List[Case]:
    """(command, base argv, flag, bad values): the flag's value in the base
    command line is replaced (or the flag added); ``#N`` is the Nth
    positional argument of the base."""
    d = str(f.drive)
    run = ["run", "--drive", d, "--rw", "write", "--io-size", "1m"]
    replay = ["replay", str(f.trace), "--drive", d, "--number-ios", "100"]
    sb = ["storage-bench", "--bench", "gaming-2010", "--drive", d, "--number-ios", "100"]
    sim_flags = [
        ("--drive", drive_values(f)), ("--set", SETTING), ("--link", CHOICE), ("--precondition", CHOICE),
        ("--idle-after", DURATION), ("--seed", SEED), ("--memory-limit", ["1k", *POSITIVE_SIZE]),
        ("--output", outfile_values(f)),
    ]
    out: List[Case] = []

    def add(cmd: List[str], flag: str, values: List[str]) -> None:
        name = cmd[0] if cmd[0] not in ("drive", "trace") else f"{cmd[0]} {cmd[1]}"
        out.append((f"{name} {flag}", cmd, flag, values))

    for flag, values in [
        ("--rw", ["randwrit", "", "read,write"]), ("--bs", POSITIVE_SIZE), ("--bssplit", ["4k/x", "4q/100", "4k/-5:8k/105"]),
        ("--blockalign", POSITIVE_SIZE), ("--iodepth", ["0", *WHOLE[:-1], "1e9"]), ("--runtime", DURATION),
        ("--size", ["0", "4q", "-1", "nan", "250%"]), ("--offset", ["-1", "4q", "nan", "1t"]),
        ("--io-size", ["-1", "4q", "nan"]), ("--number-ios", ["-1", "x", "nan"]),
        ("--rwmixread", ["101", "-1", "x", "nan"]), ("--data-pattern", ["fluffy", "ratio:0", "ratio:nan", "ratio:x"]),
        ("--log-avg-msec", ["0", "-1", "x", "nan"]), ("--randseed", ["-1", "x"]), *sim_flags,
    ]:
        add(run, flag, values)
    playback = [("--trace-seed", SEED), ("--mode", CHOICE), ("--idle-cap", DURATION), ("--log-avg-msec", ["-1", "x", "0"]),
                ("--number-ios", WHOLE), ("--runtime", DURATION)]  # 0: every record (fio)
    for flag, values in [("#1", infile_values(f)), ("--iodepth", ["x", "-1", "0"]), ("--format", CHOICE),
                         ("--device-mapping", CHOICE), ("--device-region", ["4q", "-1"]), ("--data-pattern", ["fluffy"]),
                         *playback, *sim_flags]:
        add(replay, flag, values)
    for flag, values in [("--bench", ["heavy-2012"]), *playback, *sim_flags]:
        add(sb, flag, values)
    add(["replay", "--generated", "gaming-2010", "--drive", d, "--number-ios", "100"], "--generated", ["heavy-2012", ""])
    add(["trace", "stats", "--generated", "gaming-2010"], "--generated", ["heavy-2012"])
    add(["drive", "show", d], "#2", drive_values(f))
    add(["drive", "show", d], "--set", SETTING)
    add(["drive", "parts"], "#2", ["no-such-part"])
    stats = ["trace", "stats", str(f.trace)]
    for flag, values in [("#2", infile_values(f)), ("--format", CHOICE), ("--capacity", POSITIVE_SIZE), ("--drive", drive_values(f)),
                         ("--compare-with", ["heavy-2012"]), ("--seed", SEED), ("--device-mapping", CHOICE)]:
        add(stats, flag, values)
    gen = ["trace", "generate", "gaming-2010", "--out", f.out("g.iolog")]
    for flag, values in [("#2", ["heavy-2012"]), ("--out", outfile_values(f)), ("--format", CHOICE),
                         ("--capacity", POSITIVE_SIZE), ("--drive", drive_values(f)), ("--seed", SEED)]:
        add(gen, flag, values)
    iolog = ["trace", "iolog", "gaming-2010", "--target-bytes", "1g", "--out", f.out("i.iolog"), "--max-ios", "100"]
    for flag, values in [("#2", ["heavy-2012"]), ("--target-bytes", POSITIVE_SIZE), ("--out", outfile_values(f)),
                         ("--align", POSITIVE_SIZE), ("--max-ios", POSITIVE_WHOLE), ("--max-time", DURATION),
                         ("--idle-cap", DURATION), ("--trims", CHOICE), ("--seed", SEED)]:
        add(iolog, flag, values)
    test = ["test", "corners-4k-random-read-qd3", "--drive", d, "--quick"]
    for flag, values in [("#1", ["no-such-test"]), ("--drive", drive_values(f)), ("--seed", SEED),
                         ("--output", outfile_values(f))]:
        add(test, flag, values)
    runner = [("--jobs", ["0", "-1", "x", "100000"]), ("--scheduler", SCHEDULER)]
    review = ["review", "--drive", d, "--tests", "corners-4k-random-read-qd3", "--quick", "--jobs", "1", "--out", f.out("rv")]
    for flag, values in [("--drive", drive_values(f)), ("--out", outdir_values(f)), ("--tests", ["no-such-test"]),
                         ("--seed", SEED), ("--size", POSITIVE_SIZE), *runner]:
        add(review, flag, values)
    report = ["report", str(f.fio_json), "--out", f.out("rep")]
    add(report, "#1", infile_values(f))
    add(report, "--out", outdir_values(f))
    table = ["table", str(f.fio_json), "--drive", d, "--out", f.out("t.csv")]
    add(table, "#1", infile_values(f))
    add(table, "--drive", drive_values(f))
    add(table, "--out", outfile_values(f))
    cal = ["calibrate", "--table", str(f.table), "--jobs", "1"]
    for flag, values in [("--table", infile_values(f)), ("--drive", ["no-such-preset"]), ("--kind", CHOICE), ("--seed", SEED),
                         ("--output", outfile_values(f)), *runner]:
        add(cal, flag, values)
    stories = ["stories", "--only", "S46", "--jobs", "1"]
    for flag, values in [("--only", ["S47", "", ",", "S46,nope"]), ("--seed", SEED), ("--output", outfile_values(f)), *runner]:
        add(stories, flag, values)
    cv = ["calibrate", "--cross-validate", "--profile", "sf-1200", "--trials", "1", "--jobs", "1", "--output", f.out("cv.json")]
    for flag, values in [("--profile", ["no-such-profile"]), ("--trials", POSITIVE_WHOLE), ("--batch", POSITIVE_WHOLE),
                         ("--storage", outfile_values(f)), ("--free", infile_values(f)), ("--start", CHOICE),
                         ("--table", infile_values(f)), ("--fit-seed", SEED)]:
        add(cv, flag, values)
    spec = ["spec", d, "--jobs", "1"]
    for flag, values in [("#1", drive_values(f)), ("--seed", SEED), ("--output", outfile_values(f)), *runner]:
        add(spec, flag, values)
    fit = ["fit", "--profile", "sf-1200", "--trials", "1", "--jobs", "1", "--out", f.out("fit.toml")]
    for flag, values in [("--profile", ["no-such-profile"]), ("--part", ["no-such-part"]), ("--table", infile_values(f)),
                         ("--free", infile_values(f)), ("--trials", POSITIVE_WHOLE), ("--batch", POSITIVE_WHOLE),
                         ("--perturb", FLOAT), ("--storage", outfile_values(f)), ("--out", outfile_values(f)),
                         ("--sampler", CHOICE), ("--fit-seed", SEED), *runner]:
        add(fit, flag, values)
    add(["fit", "--drive", d, "--table", str(f.table), "--trials", "1", "--jobs", "1"], "--drive", drive_values(f)[1:])
    sweep = ["sweep", "--drive", d, "--test", "corners-4k-random-read-qd3", "--set", "nand.tprog_ns=900us,1ms", "--quick",
             "--jobs", "1", "--out", f.out("sw")]
    for flag, values in [("--drive", drive_values(f)), ("--set", ["nand.tprog_ns=", "bogus.key=1,2", "nand.tprog_ns=-1,2",
                                                                   "nand.tprog_ns=1..2:0", "spare=500%", "novalue"]),
                         ("--test", ["no-such-test"]), ("--out", outdir_values(f)), ("--seed", SEED), *runner]:
        add(sweep, flag, values)
    probe = ["probe", "--drive", d, "--budget", "quick", "--out", f.out("pr")]
    for flag, values in [("--drive", drive_values(f)), ("--out", outdir_values(f)),
                         ("--budget", ["lots", "0", "-1", "nan", "100", "inf"]), ("--seed", SEED)]:
        add(probe, flag, values)
    real_probe = ["probe", str(f.tmp / "probe-target"), "--size", "256m", "--budget", "0.05", "--out", f.out("prr")]
    for flag, values in [("#1", [str(f.a_file), "/dev/null"]), ("--size", POSITIVE_SIZE)]:
        add(real_probe, flag, values)
    add(["fit", "--probe", str(f.directory), "--trials", "1", "--jobs", "1", "--out", f.out("twin.toml")], "--probe",
        [f.missing, str(f.a_file), str(f.directory), str(f.empty)])
    twin_report = ["twin-report", str(f.directory), "--quick", "--jobs", "1", "--out", f.out("tr")]
    for flag, values in [("#1", [f.missing, str(f.a_file), str(f.directory)]), ("--tests", ["no-such-test"]),
                         ("--twin", infile_values(f)), ("--original", [f.missing, str(f.a_file)]), *runner]:
        add(twin_report, flag, values)
    fio = ["fio", str(f.jobfile), "--drive", d]
    for flag, values in [("#1", infile_values(f)), ("--drive", drive_values(f)), ("--set", SETTING), ("--seed", SEED),
                         ("--output", outfile_values(f)), ("--log-dir", outdir_values(f)), ("--output-format", CHOICE)]:
        add(fio, flag, values)
    fio_run = ["fio-run", str(f.jobfile), "--target", str(f.tmp / "fio-target"), "--size", "1m"]
    for flag, values in [("#1", infile_values(f)), ("--size", POSITIVE_SIZE), ("--output", outfile_values(f)),
                         ("--log-dir", outdir_values(f)), ("--target", [str(f.a_file), "/dev/null"])]:
        add(fio_run, flag, values)
    add(["fio-check", str(f.tmp / "fio-target")], "#1", [str(f.a_file), "/dev/null", f"{f.a_file}/x"])
    parse = ["fio-parse", str(f.fio_json)]
    add(parse, "#1", infile_values(f))
    add(parse, "--log-dir", [f.missing, str(f.a_file)])
    add(parse, "--jobfile", infile_values(f))
    imp = ["fio-import", str(f.fio_json), "--name", "x", "--out", f.out("imp")]
    add(imp, "#1", infile_values(f))
    add(imp, "--out", outdir_values(f))
    add(imp, "--log-dir", [f.missing, str(f.a_file)])
    return out


def with_value(base: List[str], flag: str, value: str) -> List[str]:
    argv = list(base)
    if flag.startswith("#"):
        i = int(flag[1:])
        return [*argv[:i], value, *argv[i + 1:]]
    if flag in argv:
        argv[argv.index(flag) + 1] = value
        return argv
    return [*argv, flag, value]


def _expand(f: Files) -> List[Tuple[str, List[str]]]:
    out = []
    for name, base, flag, values in cases(f):
        for v in values:
            own = str(f.tmp / "outputs" / str(len(out)))
            out.append((f"{name}={v!r}", [a.replace("{OUT}", own) for a in with_value(base, flag, v)]))
    return out


def _check_all(f: Files, check: Callable[[List[str]], None], workers: int = 1) -> None:
    def one(item: Tuple[str, List[str]]) -> Optional[str]:
        name, argv = item
        try:
            check(argv)
        except AssertionError as e:
            return f"{name}: {e}"
        except pytest.fail.Exception as e:  # the alarm
            return f"{name}: {e}"
        return None

    items = list(_expand(f))
    if workers > 1:  # separate processes only: the in-process check's alarm is per process
        with ThreadPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(one, items))
    else:
        results = [one(i) for i in items]
    failures = [r for r in results if r is not None]
    assert not failures, f"{len(failures)} bad command lines misreported:\n\n" + "\n\n".join(failures)


def test_every_command_answers_every_bad_value_with_one_line(files: Files, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(files.tmp)  # commands whose default output is "." (fio-run's --log-dir) write there
    before = set(os.listdir(files.tmp))
    t0 = time.monotonic()
    _check_all(files, assert_usage_error)
    assert time.monotonic() - t0 < 120, "the matrix should take seconds: a bad value ran a simulation?"
    # a refused command line writes nothing where it ran (output directories
    # are created while the line is parsed, as every command does: outputs/)
    assert set(os.listdir(files.tmp)) - before <= {"outputs"}, sorted(set(os.listdir(files.tmp)) - before)


@pytest.mark.slow
def test_the_installed_command_answers_every_bad_value_with_one_line(files: Files) -> None:
    def check(argv: List[str]) -> None:
        assert_one_line_error(run_cli(*argv, timeout=60, cwd=files.tmp))

    # one process per command line, two at a time (CI's two cores): each is mostly the interpreter's start
    _check_all(files, check, workers=2)
