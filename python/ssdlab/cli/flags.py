"""What the commands share: the parser with one-line errors, the flags that
several commands take (declared here once), the argparse ``type=``
converters that turn a flag's text into a typed value or one error naming the
flag, and writing a document to stdout or ``--output``.

Output paths, one rule for every command: ``--output FILE`` and ``--out
FILE|DIR`` (and ``--log-dir``, ``--storage`` where they are written) are
checked when the command line is parsed, before anything runs: the place must
be writable (the nearest existing directory takes a new file), a FILE must
not be a directory and a DIR not a file; then ``main`` creates the missing
directories (:func:`prepare_outputs`) and the command runs. :class:`Parser`
applies the check to every ``--out``/``--output`` option (``metavar="DIR"``:
a directory)."""

from __future__ import annotations

import argparse
import errno
import json
import math
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Dict, List, NamedTuple, NoReturn, Optional, Sequence, TextIO, Tuple, TypeVar

from .. import _core
from ..drive import Drive
from ..errors import SsdlabError
from ..interrupt import EXIT_INTERRUPTED as _EXIT_INTERRUPTED
from ..outputs import OutputError, atomic_open, refuse_special
from ..results import write_json

__all__ = [
    "test_id_list",
    "EXIT_OK", "EXIT_FAILURE", "EXIT_USAGE", "EXIT_INTERRUPTED", "DEFAULT_DRIVE", "UsageError", "Parser",
    "Duration", "IdleCap", "MAX_WHOLE", "seed", "whole", "non_negative_whole", "positive_whole", "fraction", "worker_count",
    "scheduler_address", "duration", "bounded_whole",
    "idle_cap", "size_bytes", "positive_size_bytes", "size_text", "input_file", "input_dir", "OutputPath", "output_file",
    "output_dir", "check_output", "output_dirs", "prepare_outputs", "setting", "add_seed", "add_json", "add_output", "add_progress",
    "add_runner", "add_drive", "add_settings", "load_drive", "print_json", "write_output", "emit",
]

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
#: Ctrl-C; ``main`` turns it into 143 after SIGTERM (:mod:`ssdlab.interrupt`).
EXIT_INTERRUPTED = _EXIT_INTERRUPTED

DEFAULT_DRIVE = "generic-mlc-120"


class UsageError(Exception):
    """A bad command line, reported as one line and exit 2."""


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage dump) and exit code 2; a flag
    is spelled out in full (no abbreviations: a renamed flag keeps no alias);
    every ``--out``/``--output`` is checked as an output path
    (:func:`output_file`, or :func:`output_dir` with ``metavar="DIR"``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)
        # a value that starts with a minus and a digit ("-1s", "-5%") is a value, not an unknown flag:
        # it gets the flag's own error ("must not be negative") instead of "expected one argument"
        self._negative_number_matcher = re.compile(r"^-\.?\d")

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        if kwargs.get("type") is None and any(a in ("--out", "--output") for a in args):
            kwargs["type"] = output_dir if kwargs.get("metavar") == "DIR" else output_file
        return super().add_argument(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        hint = f" (see '{self.prog} --help')"
        raise UsageError(f"{message}{hint}")


# ---------------------------------------------------------------------------
# converters: argparse reports ArgumentTypeError as "argument --FLAG: MESSAGE"
# ---------------------------------------------------------------------------

T = TypeVar("T")


def _engine(parse: Callable[[], T]) -> T:
    """An engine parser's value, or its message (without the field it names:
    argparse names the flag) as an ArgumentTypeError."""
    try:
        return parse()
    except SsdlabError as e:
        text = str(e)
        prefix = f"workload field '{getattr(e, 'field', '')}': "
        raise argparse.ArgumentTypeError(text[len(prefix):] if text.startswith(prefix) else text) from None


def seed(text: str) -> int:
    """A seed: a whole number 0 .. 2^64-1 (0x... accepted)."""
    try:
        v = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if not 0 <= v < 2**64:
        raise argparse.ArgumentTypeError(f"{v} must be 0 .. 2^64-1")
    return v


#: The largest whole number a flag takes (the engine counts in 64 bits).
MAX_WHOLE = 2**63 - 1


def whole(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if abs(v) > MAX_WHOLE:
        raise argparse.ArgumentTypeError(f"{text} is too large (at most 2^63-1)")
    return v


def non_negative_whole(text: str) -> int:
    v = whole(text)
    if v < 0:
        raise argparse.ArgumentTypeError(f"{v}: must be 0 or more")
    return v


def positive_whole(text: str) -> int:
    v = whole(text)
    if v < 1:
        raise argparse.ArgumentTypeError(f"{v}: must be at least 1")
    return v


def fraction(text: str) -> float:
    """A finite number (``--perturb``): not nan nor infinite."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"'{text}' is not a finite number")
    return v


def worker_count(text: str) -> int:
    """``--jobs``: worker processes, 1 .. 4 x the cores this process may use
    (more only slow each other down, and each holds a drive in memory)."""
    from ..cluster import default_workers

    v = positive_whole(text)
    cores = default_workers()
    if v > 4 * cores:
        raise argparse.ArgumentTypeError(f"{v} worker processes on {cores} core(s): at most {4 * cores} (4 per core)")
    return v


def bounded_whole(most: int, low: int = 1) -> Callable[[str], int]:
    """``type=`` of a count with a documented maximum (checked before any work)."""
    def parse(text: str) -> int:
        v = whole(text)
        if not low <= v <= most:
            raise argparse.ArgumentTypeError(f"{v} is out of range: {low} .. {most:,}")
        return v
    parse.__name__ = "count"
    return parse


def scheduler_address(text: str) -> str:
    """``--scheduler``: ``sync`` or a Dask scheduler's address (tcp://HOST:PORT)."""
    if text == "sync":
        return text
    from distributed.comm.addressing import get_address_host_port

    try:
        get_address_host_port(text)
    except (ValueError, TypeError) as e:
        raise argparse.ArgumentTypeError(f"'{text}' is not a scheduler address ({e}); give tcp://HOST:PORT "
                                         "(e.g. tcp://10.0.0.5:8786) or sync") from None
    return text


def input_file(text: str) -> str:
    """A file to read: it exists and is not a directory (its content is the
    reader's to check)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path")
    if os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text} is a directory, not a file")
    if not os.path.exists(text):
        if os.path.islink(text):
            try:
                os.stat(text)
            except OSError as e:
                if e.errno == errno.ELOOP:
                    raise argparse.ArgumentTypeError(f"{text}: a loop of symbolic links") from None
            raise argparse.ArgumentTypeError(f"{text}: a symbolic link to {os.readlink(text)}, which does not exist")
        raise argparse.ArgumentTypeError(f"{text}: no such file")
    return text


def input_dir(text: str) -> str:
    """A directory to read: it exists and is a directory."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path")
    if not os.path.exists(text):
        raise argparse.ArgumentTypeError(f"{text}: no such directory")
    if not os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text} is not a directory")
    return text


class Duration(NamedTuple):
    """A duration as typed (kept in manifests and phase names) and in ns."""

    text: str
    ns: int


def duration(text: str) -> Duration:
    """A duration with a unit (ns, us, ms, s, m, h; a bare number is seconds)."""
    return Duration(text, _engine(lambda: _core.parse_duration_ns(text, "duration")))


class IdleCap(NamedTuple):
    """``--idle-cap``: a duration, or ``none`` (``ns`` None: every gap kept)."""

    text: str
    ns: Optional[int]


def idle_cap(text: str) -> IdleCap:
    if text.strip().lower() == "none":
        return IdleCap(text, None)
    return IdleCap(text, duration(text).ns)


def size_bytes(text: str) -> int:
    """A size in bytes (fio's k/m/g/t = powers of 1024)."""
    return _engine(lambda: _core.parse_size_bytes(text, 0, "size"))


def positive_size_bytes(text: str) -> int:
    v = size_bytes(text)
    if v <= 0:
        raise argparse.ArgumentTypeError(f"'{text}' must be a positive size")
    return v


def size_text(text: str) -> str:
    """A size checked now and resolved later against the drive (a percentage
    of its capacity is allowed)."""
    _engine(lambda: _core.parse_size_bytes(text, 0, "size"))
    return text


def _not_writable(directory: Path) -> Optional[str]:
    """Why no file can be created in an existing directory (None: one can);
    tried for real (permissions, read-only filesystems, root)."""
    try:
        fd, name = tempfile.mkstemp(prefix=".ssdlab-write-test-", dir=directory)
    except OSError as e:
        return e.strerror or str(e)
    os.close(fd)
    os.unlink(name)
    return None


class OutputPath(str):
    """An output path as typed, checked by :func:`output_file` or
    :func:`output_dir`; ``kind`` is "file" or "dir". ``main`` creates its
    missing directories (:meth:`prepare`) once the whole command line parsed."""

    kind = "file"

    def prepare(self) -> None:
        """Create the missing directories (a file's parent, or the directory)."""
        where = os.path.abspath(self) if self.kind == "dir" else os.path.dirname(os.path.abspath(self))
        try:
            os.makedirs(where, exist_ok=True)
        except OSError as e:
            raise UsageError(f"cannot create {where} for {self}: {e.strerror or e}") from None


class _OutputDir(OutputPath):
    kind = "dir"


def _output(text: str, kind: str) -> OutputPath:
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path")
    try:
        refuse_special(text, "output" if kind == "file" else "output directory")
    except OutputError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    p = Path(text)
    if p.exists():
        if kind == "file" and p.is_dir():
            raise argparse.ArgumentTypeError(f"{text} is a directory; give a file name")
        if kind == "dir" and not p.is_dir():
            raise argparse.ArgumentTypeError(f"{text} exists and is not a directory")
        if kind == "dir":
            why = _not_writable(p)
            if why:
                raise argparse.ArgumentTypeError(f"cannot write in {text}: {why}")
        elif p.is_file() and not os.access(p, os.W_OK):
            raise argparse.ArgumentTypeError(f"cannot write {text}: not writable")
    else:
        # the nearest existing directory up the path must take the new file or directories
        up = p.absolute().parent
        while not up.exists() and up != up.parent:
            up = up.parent
        if not up.is_dir():
            raise argparse.ArgumentTypeError(f"cannot create {text}: {up} is not a directory")
        why = _not_writable(up)
        if why:
            raise argparse.ArgumentTypeError(f"cannot create {text}: {up} is not writable ({why})")
    return _OutputDir(text) if kind == "dir" else OutputPath(text)


def output_file(text: str) -> OutputPath:
    """``type=`` of an output file: writable now, not a directory; its
    missing directories are created before the command runs."""
    return _output(text, "file")


def output_dir(text: str) -> OutputPath:
    """``type=`` of an output directory: writable now, not a file; created
    (with its parents) before the command runs."""
    return _output(text, "dir")


def check_output(path: str, flag: str, kind: str = "file") -> OutputPath:
    """:func:`output_file` (or ``kind="dir"``) for a path a command makes up
    (a default name), as a UsageError naming ``flag``; its directories made."""
    try:
        out = _output(path, kind)
    except argparse.ArgumentTypeError as e:
        raise UsageError(f"argument {flag}: {e}") from None
    out.prepare()
    return out


def output_dirs(args: argparse.Namespace) -> List[str]:
    """The output directories of a parsed command line (each distinct real
    path once), which the run holds while it writes there."""
    seen: Dict[str, str] = {}
    for v in vars(args).values():
        if isinstance(v, OutputPath) and v.kind == "dir":
            seen.setdefault(os.path.realpath(v), str(v))
    return list(seen.values())


def prepare_outputs(args: argparse.Namespace) -> None:
    """Create the missing directories of every output path of a parsed
    command line (``main`` calls it before the command runs)."""
    for v in vars(args).values():
        if isinstance(v, OutputPath):
            v.prepare()


def setting(text: str) -> Tuple[str, Any]:
    """``--set nand.tprog_ns=1800000`` -> ("nand.tprog_ns", 1800000); values
    are JSON when they parse as JSON (numbers, true/false), else strings."""
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"'{text}' must be SECTION.FIELD=VALUE, e.g. nand.tprog_ns=1800000")
    k, v = text.split("=", 1)
    try:
        return k.strip(), json.loads(v)
    except ValueError:
        return k.strip(), v


# ---------------------------------------------------------------------------
# shared flags
# ---------------------------------------------------------------------------


def add_seed(p: argparse.ArgumentParser, help: str = "master seed (default 1)") -> None:
    p.add_argument("--seed", type=seed, default=1, help=help)


def add_json(p: argparse.ArgumentParser, help: Optional[str] = None, group: Any = None) -> None:
    (group or p).add_argument("--json", action="store_true", help=help)


def add_output(p: argparse.ArgumentParser, help: str) -> None:
    p.add_argument("--output", metavar="FILE", help=help)


def add_progress(p: argparse.ArgumentParser) -> None:
    prog = p.add_mutually_exclusive_group()
    prog.add_argument("--progress", dest="progress", action="store_true", default=None, help="always show progress on stderr")
    prog.add_argument("--no-progress", dest="progress", action="store_false", help="never show progress")


def add_runner(p: argparse.ArgumentParser) -> None:
    """``--jobs`` and ``--scheduler``: where many simulations run (``ssdlab.cluster``)."""
    p.add_argument("--jobs", type=worker_count,
                   help="worker processes of the local Dask cluster: 1 runs everything in this process; default one per "
                        "core; the most allowed is 4 x the cores")
    p.add_argument("--scheduler", type=scheduler_address, metavar="ADDRESS",
                   help="run on an existing Dask cluster, e.g. tcp://host:8786 (see docs/cluster.md); 'sync' runs in this process")
    add_progress(p)


def add_drive(p: argparse.ArgumentParser, help: Optional[str] = None, default: Optional[str] = DEFAULT_DRIVE,
              append: bool = False, metavar: Optional[str] = None) -> None:
    """``--drive``: a preset id or a .toml/.json file (``append``: repeatable)."""
    if help is None:
        help = f"preset id or .toml/.json file (default {default})"
    if append:
        p.add_argument("--drive", action="append", metavar=metavar, help=help)
    else:
        p.add_argument("--drive", default=default, metavar=metavar, help=help)


def add_settings(p: argparse.ArgumentParser, help: str) -> None:
    """``--set KEY=VALUE``, repeatable: changes to the drive's fields."""
    p.add_argument("--set", action="append", type=setting, metavar="KEY=VALUE", help=help)


def load_drive(spec: str, changes: Optional[Sequence[Tuple[str, Any]]] = None) -> Drive:
    d = Drive.load(spec)
    return d.with_changes(dict(changes)) if changes else d


# ---------------------------------------------------------------------------
# output
# ---------------------------------------------------------------------------


def print_json(doc: Any, out: Optional[TextIO] = None) -> None:
    write_json(doc, out if out is not None else sys.stdout)


def write_output(path: str, doc: Any, flag: str = "--output") -> None:
    """A JSON document to ``path`` (atomically; a device is refused)."""
    try:
        with atomic_open(path, "w") as f:
            write_json(doc, f)
    except OutputError as e:
        raise UsageError(f"argument {flag}: {e}") from None


def emit(args: argparse.Namespace, doc: Dict[str, Any], text: Callable[[], str]) -> None:
    """A document: to ``--output`` when given, then to stdout as JSON with
    ``--json``, else as text."""
    if getattr(args, "output", None):
        write_output(args.output, doc)
    if args.json:
        print_json(doc)
    else:
        print(text())


def test_id_list(text: str) -> List[str]:
    """``--tests``: test ids, comma-separated lists allowed."""
    from ..suite.definitions import test_ids

    known = test_ids()
    out = [tid.strip() for tid in text.split(",") if tid.strip()]
    for tid in out:
        if tid not in known:
            raise argparse.ArgumentTypeError(f"unknown test '{tid}' ('ssdlab tests' lists them)")
    return out
