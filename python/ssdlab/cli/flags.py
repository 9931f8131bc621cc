"""What the commands share: the parser with one-line errors, the flags that
several commands take (declared here once), the argparse ``type=``
converters that turn a flag's text into a typed value or one error naming the
flag, and writing a document to stdout or ``--output``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Callable, Dict, NamedTuple, NoReturn, Optional, Sequence, TextIO, Tuple, TypeVar

from .. import _core
from ..drive import Drive
from ..errors import SsdlabError
from ..results import write_json

__all__ = [
    "EXIT_OK", "EXIT_FAILURE", "EXIT_USAGE", "EXIT_INTERRUPTED", "DEFAULT_DRIVE", "UsageError", "Parser",
    "Duration", "IdleCap", "seed", "whole", "positive_whole", "duration", "idle_cap", "size_bytes",
    "positive_size_bytes", "size_text", "setting", "add_seed", "add_json", "add_output", "add_progress",
    "add_runner", "add_drive", "add_settings", "load_drive", "print_json", "write_output", "emit",
]

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

DEFAULT_DRIVE = "generic-mlc-120"


class UsageError(Exception):
    """A bad command line, reported as one line and exit 2."""


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage dump) and exit code 2; a flag
    is spelled out in full (no abbreviations: a renamed flag keeps no alias)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

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


def whole(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None


def positive_whole(text: str) -> int:
    v = whole(text)
    if v < 1:
        raise argparse.ArgumentTypeError(f"{v}: must be at least 1")
    return v


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
    p.add_argument("--jobs", type=positive_whole,
                   help="worker processes of the local Dask cluster (default: the cores; 1 runs everything in this process)")
    p.add_argument("--scheduler", metavar="ADDRESS",
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


def write_output(path: str, doc: Any) -> None:
    try:
        with open(path, "w", encoding="utf-8") as f:
            write_json(doc, f)
    except OSError as e:
        raise UsageError(f"argument --output: cannot write {path}: {e.strerror or e}") from None


def emit(args: argparse.Namespace, doc: Dict[str, Any], text: Callable[[], str]) -> None:
    """A document: to ``--output`` when given, then to stdout as JSON with
    ``--json``, else as text."""
    if getattr(args, "output", None):
        write_output(args.output, doc)
    if args.json:
        print_json(doc)
    else:
        print(text())
