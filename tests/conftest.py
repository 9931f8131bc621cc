"""Shared fixtures: small drives built in code (so each test states its
geometry and runs in well under a second), the sample trace directory, and a
helper that runs the ``ssdlab`` command as a user would."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from types import FrameType
from typing import Any, Dict, Iterator, List, Optional

import pytest

REPO = Path(__file__).resolve().parent.parent


def make_drive(
    dies: int = 4,
    blocks: int = 64,
    pages: int = 64,
    overprovision: float = 1.25,
    policy: str = "greedy",
    gc_threshold_blocks: int = 2,
    bg_gc_threshold_blocks: int = 4,
    drive_id: str = "test-small",
) -> Dict[str, Any]:
    """A drive of ``dies`` dies, one plane, ``blocks`` blocks of ``pages`` 4KB
    pages; user capacity = raw / ``overprovision``."""
    raw_units = dies * blocks * pages
    user_units = int(raw_units / overprovision)
    channels = min(dies, 4)
    return {
        "drive": {"id": drive_id, "name": f"test drive {dies}x{blocks}x{pages}", "user_capacity_bytes": user_units * 4096},
        "host": {"link_bytes_per_s": 550_000_000, "command_overhead_ns": 2000, "ncq_depth": 32},
        "controller": {"command_cost_ns": 4000, "write_buffer_bytes": 1 << 20},
        "nand": {
            "channels": channels,
            "packages_per_channel": dies // channels,
            "dies_per_package": 1,
            "planes_per_die": 1,
            "blocks_per_plane": blocks,
            "pages_per_block": pages,
            "page_size_bytes": 4096,
            "tr_ns": 50_000,
            "tprog_ns": 900_000,
            "tbers_ns": 3_000_000,
            "channel_bytes_per_s": 200_000_000,
        },
        "ftl": {
            "gc_policy": policy,
            "gc_threshold_blocks": gc_threshold_blocks,
            "bg_gc_threshold_blocks": bg_gc_threshold_blocks,
        },
    }


@pytest.fixture
def small_drive() -> Dict[str, Any]:
    """4 dies x 64 blocks x 64 pages of 4KB = 64 MiB raw, 25% spare."""
    return make_drive()


@pytest.fixture
def tiny_drive() -> Dict[str, Any]:
    """2 dies x 32 blocks x 16 pages = 4 MiB raw, 20% spare: GC runs constantly."""
    return make_drive(dies=2, blocks=32, pages=16, overprovision=1.25, drive_id="test-tiny")


@pytest.fixture
def small_drive_file(tmp_path: Path, small_drive: Dict[str, Any]) -> Path:
    p = tmp_path / "small.json"
    p.write_text(json.dumps(small_drive))
    return p


#: The sample traces the tests read: whole public traces copied into the
#: repository (tests/data/traces/README.md gives each one's source and licence).
TRACES_DIR = REPO / "tests" / "data" / "traces"


@pytest.fixture(scope="session")
def traces_dir() -> Path:
    """The sample trace directory, tests/data/traces."""
    if not (TRACES_DIR / "README.md").is_file():
        pytest.fail(f"sample traces not found at {TRACES_DIR}")
    return TRACES_DIR


def ssdlab_command() -> List[str]:
    """The installed ``ssdlab`` entry point (next to this interpreter, else on PATH)."""
    here = Path(sys.executable).with_name("ssdlab")
    if here.is_file():
        return [str(here)]
    found = shutil.which("ssdlab")
    if found is None:
        pytest.fail("the 'ssdlab' command is not installed (pip install '.[test]')")
    return [found]


def run_cli(
    *args: str,
    module: bool = False,
    timeout: float = 120,
    env: Optional[Dict[str, str]] = None,
    cwd: Optional[Path] = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``ssdlab ARGS`` (or ``python -m ssdlab ARGS``) in ``cwd`` (default:
    this process's) and capture its output."""
    cmd = [sys.executable, "-m", "ssdlab"] if module else ssdlab_command()
    full_env = dict(os.environ)
    full_env.pop("SSDLAB_DEBUG", None)
    if env:
        full_env.update(env)
    return subprocess.run(
        [*cmd, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        env=full_env,
        cwd=cwd,
    )


class _Timeout(BaseException):
    """Raised by the alarm of :func:`cli_in_process` (a BaseException: the CLI
    does not catch it)."""


@contextlib.contextmanager
def _alarm(seconds: int) -> Iterator[None]:
    def on_alarm(signum: int, frame: Optional[FrameType]) -> None:
        raise _Timeout()

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def cli_in_process(*args: str, timeout: int = 60) -> subprocess.CompletedProcess[str]:
    """``ssdlab ARGS`` in this process through :func:`ssdlab.cli.main` (no
    interpreter start): exit status, stdout and stderr as :func:`run_cli`
    gives them. A command that has not answered after ``timeout`` seconds
    fails the test."""
    from ssdlab.cli import main

    out, err = io.StringIO(), io.StringIO()
    debug = os.environ.pop("SSDLAB_DEBUG", None)
    argv = sys.argv
    sys.argv = ["ssdlab", *args]  # the manifests' command line, as from the shell
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), _alarm(timeout):
            try:
                rc = main(list(args))
            except SystemExit as e:  # --help, --version
                rc = int(e.code or 0)
    except _Timeout:
        pytest.fail(f"ssdlab {' '.join(args)}: no answer within {timeout} s")
    finally:
        sys.argv = argv
        if debug is not None:
            os.environ["SSDLAB_DEBUG"] = debug
    return subprocess.CompletedProcess(["ssdlab", *args], rc, out.getvalue(), err.getvalue())


def assert_one_line_error(cp: subprocess.CompletedProcess[str], *needles: str) -> str:
    """Exit 2, nothing on stdout, exactly one stderr line 'ssdlab: error: ...'."""
    assert cp.returncode == 2, (cp.returncode, cp.stdout, cp.stderr)
    assert "Traceback" not in cp.stderr and "internal error" not in cp.stderr, cp.stderr
    lines = cp.stderr.strip().splitlines()
    assert len(lines) == 1, cp.stderr
    assert lines[0].startswith("ssdlab: error: "), lines[0]
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


def deep(d: Dict[str, Any]) -> Dict[str, Any]:
    return copy.deepcopy(d)


def small_review_drives(tmp: Path) -> List[Path]:
    """Two small drives (about 1.07 GB each, so Storage Bench traces fit) of
    different speeds, as files."""
    a = make_drive(dies=4, blocks=320, pages=256, drive_id="small-a")
    b = make_drive(dies=8, blocks=160, pages=256, drive_id="small-b")
    paths = []
    for d in (a, b):
        p = tmp / f"{d['drive']['id']}.json"
        p.write_text(json.dumps(d))
        paths.append(p)
    return paths


@pytest.fixture(scope="session")
def quick_review(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A quick review of two small drives through the CLI (shared by the suite,
    report and browser tests)."""
    tmp = tmp_path_factory.mktemp("review")
    a, b = small_review_drives(tmp)
    out = tmp / "out"
    cp = run_cli("review", "--drive", str(a), "--drive", str(b), "--out", str(out), "--quick", timeout=300)
    assert cp.returncode == 0, cp.stderr
    return out


@pytest.fixture(scope="session")
def scheduler_address() -> Iterator[str]:
    """A Dask cluster started by the tests (two worker processes, one thread
    each): its scheduler's address, for ``--scheduler`` / ``scheduler=``."""
    import distributed

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  memory_limit=0) as c:
        yield c.scheduler_address


@contextlib.contextmanager
def attached_loop_device(tmp_path: Path, size_bytes: int) -> Iterator[str]:
    """A loop block device over a sparse image of ``size_bytes`` in
    ``tmp_path``, detached afterwards; skips (with the reason) where losetup
    is missing, the tests do not run as root or the container cannot attach one."""
    losetup = shutil.which("losetup")
    if losetup is None:
        pytest.skip("losetup is not installed")
    if os.geteuid() != 0:
        pytest.skip("attaching a loop device needs root")
    img = tmp_path / "loop.img"
    with open(img, "wb") as f:
        f.truncate(size_bytes)
    cp = subprocess.run([losetup, "--find", "--show", str(img)], capture_output=True, text=True)
    if cp.returncode != 0:
        pytest.skip(f"losetup cannot attach a loop device here: {cp.stderr.strip()}")
    dev = cp.stdout.strip()
    try:
        yield dev
    finally:
        subprocess.run([losetup, "--detach", dev], capture_output=True)
