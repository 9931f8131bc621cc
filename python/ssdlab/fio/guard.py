"""What a job file may make fio open, before ssdlab hands it to fio.

A job file that ``ssdlab fio-run`` runs on a checked target must not reach
anything else: every option that names a file fio opens, a command it runs
or a system setting it changes is refused with its line, or rewritten to the
checked target. The rules (docs/safety.md):

- the target is ``--target``: ``filename``, ``directory``,
  ``filename_format``, ``opendir``, ``replay_redirect`` and
  ``merge_blktrace_file`` are refused;
- ``read_iolog``: the iolog is copied into the run's directory with every
  file name in it replaced by the target (v2 and v3 iologs; a v1 iolog names
  none); a binary blktrace log, several iologs or an unreadable one is refused;
- files fio writes (``write_iolog``, ``write_bw_log``, ``write_lat_log``,
  ``write_iops_log``, ``write_hist_log``) are plain names, written in the
  run's log directory;
- no commands and no system changes: ``exec_prerun``, ``exec_postrun``,
  ``include``, ``ioscheduler``, ``cgroup``, ``profile``,
  ``allow_mounted_write`` are refused, ``mem``/``iomem`` may not name a file,
  and ``ioengine`` is one of the block I/O engines in :data:`BLOCK_ENGINES`
  (no plugins, network, command or file-system engines);
- ``${VAR}`` is expanded here, from the environment (an unset one is empty,
  as in fio), so the text checked is the text fio reads.

Values ssdlab itself puts into a job file (a test file's or a device's path)
go through :func:`filename_value`: a newline, ``[``, ``]``, ``=``, ``;`` or
``#`` would change the job file's meaning and is refused; ``:`` (fio's list
separator) is escaped.

API: :func:`filename_value`; :func:`guard_jobfile` ``(text, file) ->
GuardedJobFile``; :meth:`GuardedJobFile.for_target` ``(target, workdir) ->
str``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Tuple

from .errors import JobFileError

__all__ = ["BLOCK_ENGINES", "filename_value", "GuardedJobFile", "guard_jobfile", "expand_env"]

#: fio's engines that do block I/O on the one file named by ``filename``.
BLOCK_ENGINES = frozenset({"sync", "psync", "vsync", "pvsync", "pvsync2", "libaio", "io_uring", "posixaio", "mmap", "splice",
                           "null"})

_TARGET_KEYS = {
    "filename": "the target is given with --target: remove this line",
    "directory": "the target is given with --target: remove this line",
    "filename_format": "the target is given with --target: remove this line",
    "opendir": "the target is given with --target: remove this line",
    "replay_redirect": "the replay goes to --target: remove this line",
    "merge_blktrace_file": "fio would write a merged trace where this names: merge traces before the run",
}
_REFUSED_KEYS = {
    "exec_prerun": "fio does not report when this command fails; run it yourself before the job",
    "exec_postrun": "fio does not report when this command fails; run it yourself after the job",
    "ioscheduler": "it changes the device's I/O scheduler for the whole system; set it yourself before the run",
    "cgroup": "it creates control groups on the system; run fio yourself for cgroup tests",
    "profile": "fio's built-in profiles take their own device names; write the jobs out instead",
    "allow_mounted_write": "ssdlab never writes a mounted device",
}
_LOG_KEYS = ("write_iolog", "write_bw_log", "write_lat_log", "write_iops_log", "write_hist_log")
_KEY = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:=(.*))?$")
_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_INCLUDE = re.compile(r"^\s*include\s", re.IGNORECASE)
_BAD_IN_VALUE = ("\n", "\r", "\0", "[", "]", "=", ";", "#", "\\")


def filename_value(path: str, what: str = "filename") -> str:
    """``path`` as the value of fio's ``filename=`` (``:`` escaped); a path
    that would break the job file's syntax is a JobFileError naming it."""
    if not path or not path.strip():
        raise JobFileError(what, 0, "filename", "an empty path: give the device or file to name")
    if path != path.strip():
        raise JobFileError(what, 0, "filename", f"{path!r} starts or ends with white space, which fio drops")
    for bad in _BAD_IN_VALUE:
        if bad in path:
            shown = {"\n": "a newline", "\r": "a carriage return", "\0": "a NUL byte"}.get(bad, f"'{bad}'")
            raise JobFileError(what, 0, "filename", f"{path!r} holds {shown}, which would change the job file's meaning in fio")
    if any(ord(c) < 32 for c in path):
        raise JobFileError(what, 0, "filename", f"{path!r} holds a control character")
    return path.replace(":", "\\:")


def expand_env(text: str) -> str:
    """``${VAR}`` from the environment, as fio does (unset: empty)."""
    return _ENV.sub(lambda m: os.environ.get(m.group(1), ""), text)


@dataclass
class GuardedJobFile:
    """A checked job file: its lines with ``${VAR}`` expanded, and the lines
    whose ``read_iolog`` is rewritten for the target."""

    file: str
    lines: List[str]
    iologs: List[Tuple[int, str]] = field(default_factory=list)  # (line index, iolog path)

    def for_target(self, target: str, workdir: "os.PathLike[str] | str") -> str:
        """The job file text for ``target``, each iolog copied into
        ``workdir`` with its file names replaced by ``target``."""
        out = list(self.lines)
        for n, (i, src) in enumerate(self.iologs):
            dst = Path(workdir) / f"ssdlab-iolog-{n}.log"
            _rewrite_iolog(self.file, i + 1, src, dst, target)
            out[i] = f"read_iolog={filename_value(str(dst), 'read_iolog')}"
        return "\n".join(out) + "\n"


def _strip_comment(line: str) -> str:
    s = line.lstrip()
    return "" if s.startswith((";", "#")) else line


def guard_jobfile(text: str, file: str = "<jobfile>") -> GuardedJobFile:
    """Check a user's job file (see the module's rules); raises JobFileError
    naming ``file``, the line and the option."""
    lines = expand_env(text).splitlines()
    guarded = GuardedJobFile(file, lines)
    for i, raw in enumerate(lines):
        ln = i + 1
        line = _strip_comment(raw)
        if not line.strip() or line.strip().startswith("["):
            continue
        if _INCLUDE.match(line):
            raise JobFileError(file, ln, "include", "an included file is not checked: put its lines in this job file")
        m = _KEY.match(line)
        if not m:
            continue
        key, value = m.group(1).lower(), (m.group(2) or "").strip()
        if key in _TARGET_KEYS:
            raise JobFileError(file, ln, key, _TARGET_KEYS[key])
        if key in _REFUSED_KEYS:
            raise JobFileError(file, ln, key, _REFUSED_KEYS[key])
        if key == "ioengine":
            engine = value.split(":", 1)[0].strip().lower()
            if engine not in BLOCK_ENGINES:
                raise JobFileError(file, ln, key, f"'{value}' is not an engine that does block I/O on the target; allowed: "
                                                  f"{', '.join(sorted(BLOCK_ENGINES))}")
        elif key in ("mem", "iomem") and (":" in value or "/" in value):
            raise JobFileError(file, ln, key, f"'{value}' backs the buffers with a file; use malloc, shm, shmhuge, mmap or mmaphuge "
                                              "without a file name")
        elif key in _LOG_KEYS and value and ("/" in value or value.startswith(".")):
            raise JobFileError(file, ln, key, f"'{value}' must be a plain name: fio writes it in --log-dir")
        elif key == "read_iolog":
            if not value:
                raise JobFileError(file, ln, key, "give the iolog's path")
            if ":" in value:
                raise JobFileError(file, ln, key, "one iolog per job: several are not checked")
            guarded.iologs.append((i, value))
    return guarded


def _rewrite_iolog(file: str, ln: int, src: str, dst: Path, target: str) -> None:
    """Copy the iolog at ``src`` to ``dst`` with every file name replaced by
    ``target`` (v2/v3: ``[time] NAME action ...``; v1 names none)."""
    from ..outputs import atomic_open

    if any(c.isspace() for c in target):
        raise JobFileError(file, ln, "read_iolog", f"the target path {target!r} holds white space, which an iolog cannot name")
    try:
        data = Path(src).read_bytes()
    except OSError as e:
        raise JobFileError(file, ln, "read_iolog", f"cannot read {src}: {e.strerror or e}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise JobFileError(file, ln, "read_iolog", f"{src} is not a text iolog (a binary blktrace log names its own devices: "
                                                   "convert it to an iolog first)") from None
    rows = text.splitlines()
    head = rows[0].strip() if rows else ""
    version = 3 if head == "fio version 3 iolog" else 2 if head == "fio version 2 iolog" else 1
    name_at = 1 if version == 3 else 0
    with atomic_open(dst, what="iolog") as out:
        if version == 1:
            out.write(text if text.endswith("\n") else text + "\n")
            return
        out.write(head + "\n")
        for k, row in enumerate(rows[1:], start=2):
            parts = row.split()
            if not parts:
                continue
            if len(parts) <= name_at + 1:
                raise JobFileError(file, ln, "read_iolog", f"{src}:{k}: not an iolog v{version} record")
            parts[name_at] = target
            out.write(" ".join(parts) + "\n")
