"""Run fio itself on a real target (a file or a block device) and read its
output with :mod:`ssdlab.fio.parse`.

- :func:`find_fio` finds fio (``shutil.which``) or says how to install it;
  :func:`fio_version` reads ``fio --version``; :func:`iolog_trim_problem` and
  :func:`iolog_v3_problem` say when the installed fio cannot replay what an
  iolog holds (TRIM records need fio 3.34+: fio 3.33 skips them, printing only
  "bad ddir: 2"; the v3 iolog format needs 3.31+).
- :func:`run_fio` runs a job file as a subprocess in its own process group
  with ``--output-format=json``. Ctrl-C (KeyboardInterrupt), SIGTERM or
  ``should_stop()`` returning True sends fio SIGINT (fio then writes the
  results of what ran), escalating to SIGTERM and SIGKILL if it does not exit;
  the run's jobs are then split into finished, interrupted and not run.
- :func:`run_on_target` checks the target with :mod:`ssdlab.fio.safety`, points
  the job file at it (a ``[global]`` section with ``filename=`` and, for a
  file, ``size=``) and runs it. A file target is a new file ssdlab creates
  (``O_EXCL``) and removes afterwards; an existing regular file is refused.
  The job file is checked first by :mod:`ssdlab.fio.guard`: nothing in it
  may name another file, run a command or change the system, and an iolog
  it replays is rewritten to the target.

API: ``find_fio(fio=None) -> str``; ``fio_version(fio) -> FioVersion``;
``run_fio(jobfile_text, workdir, *, fio=None, should_stop=None, timeout_s=None) -> FioRun``;
``run_on_target(jobfile_text, target, *, size_bytes=..., destroy_data=None, workdir=None, fio=None) -> FioRun``;
:func:`main` ``(argv) -> int``: a standalone form of ``ssdlab fio-run JOBFILE --target PATH
[--size 1g] [--destroy-data=/dev/sdX] [--output F] [--log-dir D]`` (the real-device
counterpart of ``ssdlab fio JOBFILE --drive X``).
"""

from __future__ import annotations

import argparse
import errno
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType, TracebackType
from typing import Callable, Optional, Sequence, Tuple, Type, Union

from ..errors import SsdlabError
from ..interrupt import note_terminated
from ..outputs import write_text
from .errors import FioNotFoundError, FioOutputError, FioRunError, JobFileError, UnsafeTargetError
from .guard import filename_value, guard_jobfile
from .jobfile import parse_size
from .parse import FioResult, attach_logs, parse_fio_json_text
from .safety import TargetCheck, check_target

__all__ = [
    "FioVersion",
    "FioRun",
    "FileTarget",
    "IOLOG_TRIM_MIN_VERSION",
    "IOLOG_V3_MIN_VERSION",
    "INSTALL_HINT",
    "find_fio",
    "fio_version",
    "iolog_trim_problem",
    "iolog_v3_problem",
    "run_fio",
    "classify",
    "run_on_target",
    "main",
]

PathLike = Union[str, "os.PathLike[str]"]

#: fio 3.33 skips TRIM records of an iolog; 3.34 replays them.
IOLOG_TRIM_MIN_VERSION = (3, 34)
#: The v3 iolog format (timestamps) appeared in fio 3.31.
IOLOG_V3_MIN_VERSION = (3, 31)
INSTALL_HINT = "install it with 'sudo apt-get install fio' (Debian/Ubuntu) or 'sudo dnf install fio', or pass --fio PATH"

#: Seconds fio gets to write its results after SIGINT, then after SIGTERM.
_GRACE_S = (15.0, 5.0)


@dataclass(frozen=True, order=True)
class FioVersion:
    major: int
    minor: int
    text: str = field(compare=False, default="")

    def at_least(self, version: Tuple[int, int]) -> bool:
        return (self.major, self.minor) >= version

    def __str__(self) -> str:
        return self.text or f"fio-{self.major}.{self.minor}"


def find_fio(fio: Optional[str] = None) -> str:
    """The fio executable (``fio`` given as a path or name, else on PATH)."""
    name = fio or "fio"
    found = shutil.which(name)
    if found is None:
        where = f"'{fio}' is not an executable" if fio else "fio is not installed (not on PATH)"
        raise FioNotFoundError(f"{where}: {INSTALL_HINT}")
    return found


def parse_version(text: str) -> FioVersion:
    m = re.search(r"fio-(\d+)\.(\d+)", text)
    if not m:
        raise FioRunError(f"cannot read fio's version from {text.strip()!r}")
    return FioVersion(int(m.group(1)), int(m.group(2)), text.strip())


def fio_version(fio: Optional[str] = None) -> FioVersion:
    exe = find_fio(fio)
    try:
        cp = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise FioRunError(f"{exe} --version failed: {e}") from None
    return parse_version(cp.stdout or cp.stderr)


def iolog_trim_problem(version: FioVersion) -> Optional[str]:
    """None when this fio replays TRIM records of an iolog, else why not."""
    if version.at_least(IOLOG_TRIM_MIN_VERSION):
        return None
    need = ".".join(map(str, IOLOG_TRIM_MIN_VERSION))
    return (f"{version} skips the TRIM records of an iolog (it prints only 'bad ddir: 2'); replaying TRIM needs fio {need} or newer: "
            "the replay runs without its TRIMs unless fio is upgraded")


def iolog_v3_problem(version: FioVersion) -> Optional[str]:
    """None when this fio reads v3 iologs (with timestamps), else why not."""
    if version.at_least(IOLOG_V3_MIN_VERSION):
        return None
    need = ".".join(map(str, IOLOG_V3_MIN_VERSION))
    return f"{version} cannot read v3 iologs (timestamps); fio {need} or newer is needed: {INSTALL_HINT}"


@dataclass
class FioRun:
    """What a fio run left: ``result`` (None when fio wrote no JSON),
    ``finished``/``interrupted_jobs``/``not_run`` job names (by reporting group:
    groups before the one running when stopped finished, later ones did not
    run), the exit status, fio's stderr, and where the JSON and logs are."""

    result: Optional[FioResult]
    returncode: Optional[int]
    interrupted: bool
    finished: Tuple[str, ...]
    interrupted_jobs: Tuple[str, ...]
    not_run: Tuple[str, ...]
    stderr: str
    json_path: Path
    log_dir: Path
    target: Optional[TargetCheck] = None


class _Stop(Exception):
    pass


def classify(result: FioResult, interrupted: bool) -> Tuple[Tuple[str, ...], Tuple[str, ...], Tuple[str, ...]]:
    """(finished, interrupted, not run) job names of a run: when stopped, the
    reporting group with the highest ``groupid`` that did I/O was running."""
    if not interrupted:
        return tuple(j.name for j in result.jobs), (), ()
    active = [j.groupid for j in result.jobs if j.read.total_ios + j.write.total_ios + j.trim.total_ios > 0]
    if not active:
        return (), (), tuple(j.name for j in result.jobs)
    running = max(active)
    fin = tuple(j.name for j in result.jobs if j.groupid < running)
    cut = tuple(j.name for j in result.jobs if j.groupid == running)
    later = tuple(j.name for j in result.jobs if j.groupid > running)
    return fin, cut, later


def _stop(proc: "subprocess.Popen[str]") -> None:
    """SIGINT to fio's process group (it writes its results), then SIGTERM,
    then SIGKILL."""
    for sig, grace in ((signal.SIGINT, _GRACE_S[0]), (signal.SIGTERM, _GRACE_S[1])):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    proc.wait()


def _wait(proc: "subprocess.Popen[str]", should_stop: Optional[Callable[[], bool]], timeout_s: Optional[float]) -> None:
    """Until fio exits; _Stop when ``should_stop()`` says so or the timeout passes."""
    t0 = time.monotonic()
    while proc.poll() is None:
        if (should_stop is not None and should_stop()) or (timeout_s is not None and time.monotonic() - t0 > timeout_s):
            raise _Stop()
        try:
            proc.wait(timeout=0.1)
        except subprocess.TimeoutExpired:
            pass


def _read_output(json_path: Path, err_path: Path, wd: Path) -> Tuple[Optional[FioResult], str]:
    """fio's results with their logs (None when it wrote none) and what it said on stderr."""
    stderr = err_path.read_text(errors="replace")
    result: Optional[FioResult] = None
    out_text = json_path.read_text(errors="replace") if json_path.exists() else ""
    if out_text.strip():
        try:
            result = attach_logs(parse_fio_json_text(out_text, str(json_path)), wd)
        except FioOutputError:
            # fio writes its own errors ("fio: failed parsing bs=...") to --output.
            stderr = out_text + stderr
    return result, stderr


def run_fio(
    jobfile_text: str,
    workdir: PathLike,
    *,
    fio: Optional[str] = None,
    should_stop: Optional[Callable[[], bool]] = None,
    timeout_s: Optional[float] = None,
    extra_args: Sequence[str] = (),
) -> FioRun:
    """Run fio on ``jobfile_text`` in ``workdir`` (its logs land there; the job
    file is written there as ``ssdlab.fio``, the JSON as ``fio-output.json``).
    Stops fio on Ctrl-C, SIGTERM (main thread only), ``should_stop()`` or the
    timeout and keeps what finished. Raises FioRunError when fio fails and
    writes no JSON; a KeyboardInterrupt is re-raised after fio stopped, with
    the FioRun as ``e.fio_run``."""
    exe = find_fio(fio)
    wd = Path(workdir)
    wd.mkdir(parents=True, exist_ok=True)
    jobpath = wd / "ssdlab.fio"
    write_text(jobpath, jobfile_text)
    json_path = wd / "fio-output.json"
    err_path = wd / "fio-stderr.txt"
    for p in (json_path, err_path):
        # fio and the shell open these by name: a symlink or node left there must not lead them to a device
        if os.path.lexists(p):
            p.unlink()
    interrupted = False
    keyboard: Optional[KeyboardInterrupt] = None
    old_term: Optional[Union[Callable[[int, Optional[FrameType]], object], int, signal.Handlers]] = None
    in_main = threading.current_thread() is threading.main_thread()

    def on_term(signum: int, frame: Optional[FrameType]) -> None:
        note_terminated()  # the command exits 143, as after SIGTERM elsewhere
        raise _Stop()

    with open(err_path, "w") as err:
        proc = subprocess.Popen(
            [exe, "--output-format=json", f"--output={json_path}", *extra_args, str(jobpath)],
            cwd=wd,
            stdin=subprocess.DEVNULL,
            stdout=err,
            stderr=err,
            text=True,
            start_new_session=True,  # its own process group: our Ctrl-C does not reach it unasked
        )
        if in_main:
            old_term = signal.signal(signal.SIGTERM, on_term)
        try:
            _wait(proc, should_stop, timeout_s)
        except _Stop:
            interrupted = True
            _stop(proc)
        except KeyboardInterrupt as e:
            interrupted = True
            keyboard = e
            _stop(proc)
        finally:
            if in_main and old_term is not None:
                signal.signal(signal.SIGTERM, old_term)
    result, stderr = _read_output(json_path, err_path, wd)
    if result is None and not interrupted:
        tail = " | ".join(stderr.strip().splitlines()[-3:])
        raise FioRunError(f"fio exited with status {proc.returncode} and wrote no results: {tail or 'no message'}",
                          returncode=proc.returncode, stderr=stderr)
    fin, cut, later = classify(result, interrupted) if result is not None else ((), (), ())
    run = FioRun(result, proc.returncode, interrupted, fin, cut, later, stderr, json_path, wd)
    if keyboard is not None:
        keyboard.fio_run = run  # type: ignore[attr-defined]
        raise keyboard
    return run


class FileTarget:
    """A test file ssdlab owns: created with O_EXCL at ``path`` (or as
    ``ssdlab-fio-*.dat`` in ``path`` when it is a directory), allocated to
    ``size_bytes`` when given (so that fio need not lay it out), and removed on
    exit, also after an error or Ctrl-C. An existing file is refused.

    fio re-creates a file it lays out (it unlinks a file shorter than its
    ``size`` and writes a new one), so the file removed on exit is the regular
    file at the path ssdlab created, whatever its inode; a symlink or other
    node put there meanwhile is left alone."""

    def __init__(self, path: PathLike, size_bytes: Optional[int] = None) -> None:
        self.requested = os.fspath(path)
        self.size_bytes = size_bytes
        self.path: Optional[str] = None

    def __enter__(self) -> str:
        req = self.requested
        if os.path.isdir(req):
            fd, p = tempfile.mkstemp(prefix="ssdlab-fio-", suffix=".dat", dir=req)
        else:
            if os.path.lexists(req):
                raise UnsafeTargetError(req, ["the file exists and ssdlab writes only files it creates: give a directory or a new file name"],
                                        None, device=False)
            try:
                fd = os.open(req, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except OSError as e:
                raise UnsafeTargetError(req, [f"cannot create the test file: {e.strerror}"], None, device=False) from None
            p = req
        self.path = p
        try:
            if self.size_bytes:
                self._allocate(fd, p, int(self.size_bytes))
        except BaseException:
            os.close(fd)
            self.__exit__(None, None, None)
            raise
        os.close(fd)
        return p

    @staticmethod
    def _allocate(fd: int, path: str, size: int) -> None:
        try:
            os.posix_fallocate(fd, 0, size)
        except OSError as e:
            if e.errno in (errno.EOPNOTSUPP, errno.EINVAL):  # no fallocate here: fio extends the file itself
                os.ftruncate(fd, size)
            else:
                raise UnsafeTargetError(path, [f"cannot allocate a {size:,} B test file: {e.strerror}"], None, device=False) from None

    def __exit__(self, et: Optional[Type[BaseException]], ev: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        if self.path is None:
            return
        try:
            if stat.S_ISREG(os.lstat(self.path).st_mode):
                os.unlink(self.path)
        except FileNotFoundError:
            pass
        self.path = None


def run_on_target(
    jobfile_text: str,
    target: PathLike,
    *,
    size_bytes: int = 1 << 30,
    destroy_data: Optional[str] = None,
    workdir: Optional[PathLike] = None,
    fio: Optional[str] = None,
    should_stop: Optional[Callable[[], bool]] = None,
    timeout_s: Optional[float] = None,
    jobfile_name: str = "<jobfile>",
) -> FioRun:
    """Run a job file on ``target``: a block device (checked by
    :func:`ssdlab.fio.safety.check_target`; ``destroy_data`` must name it to
    overwrite a signature) or a file ssdlab creates (``size_bytes`` long,
    laid out by fio, removed afterwards). Raises UnsafeTargetError,
    JobFileError, FioNotFoundError, FioRunError."""
    guarded = guard_jobfile(jobfile_text, jobfile_name)
    exe = find_fio(fio)
    check = check_target(os.fspath(target), destroy_data=destroy_data)
    wd_ctx = tempfile.TemporaryDirectory(prefix="ssdlab-fio-") if workdir is None else None
    wd = Path(wd_ctx.name) if wd_ctx is not None else Path(workdir)  # type: ignore[arg-type]
    try:
        wd.mkdir(parents=True, exist_ok=True)
        if check.kind == "block":
            head = f"[global]\nfilename={filename_value(check.resolved, '--target')}\n\n"
            run = run_fio(head + guarded.for_target(check.resolved, wd), wd, fio=exe, should_stop=should_stop, timeout_s=timeout_s)
            run.target = check
            return run
        with FileTarget(check.path, size_bytes) as path:
            head = f"[global]\nfilename={filename_value(path, '--target')}\nsize={int(size_bytes)}\n\n"
            run = run_fio(head + guarded.for_target(path, wd), wd, fio=exe, should_stop=should_stop, timeout_s=timeout_s)
            run.target = check
            return run
    finally:
        if wd_ctx is not None and workdir is None:
            # Keep nothing in a temp dir the caller cannot see: results were read.
            wd_ctx.cleanup()


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``ssdlab fio-run JOBFILE --target PATH``: run fio, write its JSON to
    --output (stdout when absent) and the logs to --log-dir. Exit 0, 2 with one
    error line, 130 when interrupted (finished jobs are kept)."""
    ap = argparse.ArgumentParser(prog="ssdlab fio-run", description="Run an fio job file on a real file or block device, safely.")
    ap.add_argument("jobfile")
    ap.add_argument("--target", required=True, help="a block device, a directory (a test file is created in it) or a new file path")
    ap.add_argument("--size", default="1g", help="test file size (fio sizes; file targets only)")
    ap.add_argument("--destroy-data", dest="destroy_data", metavar="DEVICE", help="allow overwriting DEVICE (must be the target)")
    ap.add_argument("--output", help="where fio's JSON goes (default stdout)")
    ap.add_argument("--log-dir", default=".", help="where fio's logs go")
    ap.add_argument("--fio", help="the fio executable")
    args = ap.parse_args(argv)
    try:
        size = parse_size(args.size)
        if not isinstance(size, int):
            raise JobFileError("--size", 0, "size", "give bytes or k/m/g, not a percentage")
        text = Path(args.jobfile).read_text()
        run = run_on_target(text, args.target, size_bytes=size, destroy_data=args.destroy_data, workdir=args.log_dir, fio=args.fio,
                            jobfile_name=args.jobfile)
    except KeyboardInterrupt as e:
        fr = getattr(e, "fio_run", None)
        if isinstance(fr, FioRun) and fr.json_path.exists():
            _emit(fr, args.output)
        sys.stderr.write("ssdlab: interrupted: fio stopped; the finished jobs' results were kept\n")
        return 130
    except (SsdlabError, OSError) as e:
        sys.stderr.write(f"ssdlab: error: {e}\n")
        return 2
    _emit(run, args.output)
    if run.interrupted:
        sys.stderr.write(f"ssdlab: interrupted: finished {', '.join(run.finished) or 'none'}; "
                         f"cut short {', '.join(run.interrupted_jobs) or 'none'}\n")
        return 130
    return 0


def _emit(run: FioRun, output: Optional[str]) -> None:
    text = run.json_path.read_text(errors="replace")
    if output is None:
        sys.stdout.write(text)
    elif Path(output).resolve() != run.json_path.resolve():
        write_text(output, text)
