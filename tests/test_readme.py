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
