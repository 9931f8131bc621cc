"""The README's commands as a newcomer types them, from examples/: every
command parses, and every file one reads ships in examples/ or is written by
an earlier command of the README."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path
from typing import List, Set, Tuple

import pytest

from conftest import REPO
from ssdlab.cli import build_parser
from ssdlab.cli.flags import UsageError

#: Options whose value is a path the command writes (a file or a directory).
_WRITES = ("--out", "--output", "--log-dir", "--storage")
#: Paths that stand for a user's own disk or meter, named as such in the README.
_USERS_OWN = ("/dev/sdb", "/dev/sdX", "meter.csv", "/tmp/x/")


def readme_commands() -> List[Tuple[int, List[str]]]:
    """(line number, argv) of every `ssdlab ...` line of the README's sh blocks."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    out: List[Tuple[int, List[str]]] = []
    for m in re.finditer(r"```sh\n(.*?)```", text, re.S):
        start = text[: m.start()].count("\n") + 2
        lines = m.group(1).splitlines()
        i = 0
        while i < len(lines):
            ln, line = start + i, lines[i]
            while line.rstrip().endswith("\\") and i + 1 < len(lines):
                i += 1
                line = line.rstrip()[:-1] + " " + lines[i]
            i += 1
            for part in line.split("&&"):
                words = shlex.split(part, comments=True)
                if words and words[0] == "ssdlab":
                    out.append((ln, words[1:]))
    return out


def _writes(argv: List[str]) -> Tuple[str, ...]:
    # fio-parse and fio-import read the logs of an earlier run from --log-dir
    return tuple(o for o in _WRITES if not (o == "--log-dir" and argv[0] in ("fio-parse", "fio-import")))


def _paths_read(argv: List[str]) -> List[str]:
    """The arguments that name a file or directory the command reads."""
    read = []
    skip_next = False
    for k, w in enumerate(argv):
        if skip_next:
            skip_next = False
            continue
        if w in _writes(argv):
            skip_next = True
            continue
        if w.startswith("-"):
            continue
        prev = argv[k - 1] if k else ""
        looks = "/" in w or re.search(r"\.(toml|json|csv|fio|gz|bz2|iolog|log)$", w)
        if looks and prev not in ("--set", "--bssplit") and not w.startswith(("tcp://",)) and "=" not in w:
            read.append(w)
    return read


def test_every_readme_command_parses_and_reads_only_files_that_exist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "examples"
    shutil.copytree(REPO / "examples", work)
    monkeypatch.chdir(work)
    written: Set[str] = set()
    parser = build_parser()
    cmds = readme_commands()
    assert len(cmds) > 40
    for ln, argv in cmds:
        for p in _paths_read(argv):
            if p.startswith(_USERS_OWN) or p.startswith("/tmp/"):
                continue
            top = p.rstrip("/").split("/")[0]
            ok = Path(p).exists() or any(p.rstrip("/") == w or p.startswith(w + "/") or top == w for w in written)
            assert ok, f"README.md:{ln}: 'ssdlab {' '.join(argv)}' reads {p}, which examples/ does not ship and no earlier command writes"
        # the parser checks that input files exist: stand in for what earlier commands wrote
        for p in _paths_read(argv):
            if not Path(p).exists() and not p.startswith(("/dev/",)):
                if p.endswith("/") or "." not in Path(p).name:
                    Path(p).mkdir(parents=True, exist_ok=True)
                else:
                    Path(p).parent.mkdir(parents=True, exist_ok=True)
                    Path(p).write_text("")
        try:
            parser.parse_args(argv)
        except (SystemExit, UsageError) as e:
            pytest.fail(f"README.md:{ln}: 'ssdlab {' '.join(argv)}' does not parse: {e}")
        for k, w in enumerate(argv[:-1]):
            if w in _writes(argv):
                written.add(argv[k + 1].rstrip("/"))


#: README commands this test runs as printed (seconds each on a busy 2-core
#: machine: under a minute).
_RUN = (
    "run --drive generic-mlc-120 --precondition filled --rw randwrite --bs 4k --iodepth 32 --runtime 300s",
    "tests",
    "review --drive my-drive.toml --drive vertex3-120 --out quick/ --quick --tests as-ssd atto",
    "fio ssd-steadystate.fio --drive vertex3-120 --output out.json --log-dir logs/",
    "fio-parse out.json --log-dir logs/",
    "calibrate --drive force-f120 --kind measured --json",
    "calibrate --table my-measurements.csv",
    "drives",
    "drive show generic-mlc-120",
    "drive show my-drive.toml --set nand.tprog_ns=1800000",
    "run --drive generic-mlc-120 --precondition filled --size 8g --rw randwrite --bs 4k --iodepth 3 --runtime 180s --data-pattern repeated",
    "run --drive generic-mlc-120 --rw randrw --rwmixread 70 --bssplit 4k/50:64k/50 --iodepth 32 --runtime 60s --log-avg-msec 100"
    " --idle-after 5s --json --output r.json",
    "run --drive generic-mlc-120 --set nand.tprog_ns=1800000 --rw write --bs 128k --iodepth 32 --size 4g",
    "run --drive generic-mlc-120 --check --precondition filled --size 4g --rw randrw --bs 4k --iodepth 32 --runtime 10s",
    "storage-bench --drive generic-mlc-120 --bench heavy-2011",
    "storage-bench --drive generic-mlc-120 --bench heavy-2011 --idle-cap none",
    "replay --generated heavy-2011 --precondition filled --idle-cap 25ms",
    "replay hm_0-sample.csv.gz --device hm_0 --mode as-fast-as-possible --iodepth 8 --json",
    "replay hm_0-sample.csv.gz --runtime 1min",
    "trace stats hm_0-sample.csv.gz",
    "trace stats tencent-sample.bz2 --device 1063 --capacity 64g --reject --skip-bad-lines --json",
    "trace stats --generated heavy-2011",
    "trace workloads",
    "trace generate heavy-2011 --out heavy.iolog",
    "trace generate typical-2010 --out typical.csv",
)

#: README commands that need a real drive, a test file or a meter, or the
#: results of one: the fio tests (tests/fio/, tests/backends/) run them on
#: test files and loop devices.
_DEVICE = ("/dev/sd", "/tmp/x/", "sdb/results", "sdb.csv", "meter.csv", "probe-mine", "fio-import out.json")

#: README commands of several minutes, each covered by a slow test of its
#: own (the whole table, the ledger, fits, probes, sweeps, full reviews).
_LONG = ("test consistency", "review --drive generic-mlc-120 --drive my-drive.toml", "report review/results", "calibrate",
         "spec ", "stories", "fit ", "sweep ", "probe ", "twin-report ", "storage-bench --drive generic-mlc-120 --bench heavy-2011 --full")


def _kind(cmd: str) -> str:
    if cmd in _RUN:
        return "run"
    if any(d in cmd for d in _DEVICE):
        return "device"
    if any(cmd.startswith(p) for p in _LONG):
        return "long"
    return "unclassified"


@pytest.mark.slow  # 80 s of CPU; 8 minutes of wall on a machine at load 14
def test_the_readme_commands_run_as_printed_from_examples(tmp_path: Path) -> None:
    """Every README command is run here as printed (in README order, in a
    copy of examples/), or named as one that needs a device or as a long
    one with a slow test of its own; a new README command must be sorted."""
    from conftest import run_cli

    work = tmp_path / "examples"
    shutil.copytree(REPO / "examples", work)
    cmds = [(ln, " ".join(argv), argv) for ln, argv in readme_commands()]
    loose = [f"README.md:{ln}: {c}" for ln, c, _ in cmds if _kind(c) == "unclassified"]
    assert not loose, "README commands neither run here nor named as device or long ones:\n" + "\n".join(loose)
    ran = 0
    for ln, cmd, argv in cmds:
        if _kind(cmd) != "run":
            continue
        cp = run_cli(*argv, cwd=work, timeout=600)
        assert cp.returncode == 0, f"README.md:{ln}: 'ssdlab {cmd}' exited {cp.returncode}: {cp.stderr.strip()[-500:]}"
        assert "Traceback" not in cp.stderr
        ran += 1
    assert ran == len(_RUN), f"{len(_RUN) - ran} commands of _RUN are no longer in the README"
