"""fio job files: ``[global]`` and job sections parsed into typed options.

The syntax is fio's (HOWTO "Job file format"): ``[section]`` headers; ``key=value``
lines and bare flags (``time_based``, ``stonewall``); comments from ``;`` or ``#``
to the end of a line; ``${VAR}`` expanded from the environment in values.
Settings of a ``[global]`` section apply to the job sections after it; a job's
own settings override them. The job is named after its section unless it sets
``name=``.

An unset ``${VAR}`` becomes an empty string, as in fio, with a note naming it.
An ``ioengine`` that does not do block I/O is refused with its reason before
any of its own options are read (:mod:`ssdlab.fio.engines`); host-side options
(CPU placement, priorities, system-call batching) are accepted with one note
each.

Deliberate differences from fio, each an error rather than a silent guess:
- ``include`` is an error (the file must be self-contained);
- a value fio would truncate silently (``1.5g`` -> 1g, ``10sec`` -> 10 us) is an
  error that says how to write it.

Every option is in :data:`OPTIONS` with what the simulator does with it:
``engine`` (passed to the engine's job parser), ``ssdlab`` (implemented by
:mod:`ssdlab.fio.simulate`), ``recorded`` (accepted and kept in the output's
"job options", no effect on a simulated drive), ``host`` (the same, with a
note naming it) or ``noted`` (fio's data options no simulated drive responds
to, such as dedupe: the same, with a note giving the reason). Options fio has that ssdlab
cannot simulate are in :data:`REJECTED` with the reason; any other name is an
unknown option. Both are a :class:`~ssdlab.fio.errors.JobFileError` naming the
file, line and option.

Sizes follow fio with ``kb_base=1024`` (the default): ``k``/``m``/``g``/``t``/``p``
(optionally with ``b``) are powers of 1024, ``ki``/``mi``/... are powers of 1000
(fio's compatibility rule; ``kb_base=1000`` swaps them); ``N%`` is a share of the
target. Times: a bare number is seconds; ``us``/``usec``, ``ms``/``msec``, ``s``,
``m``, ``h``, ``d``.

API:
- :func:`parse_jobfile` (path) and :func:`parse_jobfile_text` (text) -> :class:`JobFile`;
- :class:`JobFile` (``.jobs``, ``.global_options``, ``.notes``), :class:`Job` (``.name``,
  ``.value(name)``, ``.where(name)``, ``.error(name, message)``);
- :func:`main` ``(argv) -> int``: a standalone form of ``ssdlab fio JOBFILE --parse-only``:
  prints the jobs with their typed values as JSON, or one error line (exit 2).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ..textfile import read_text
from .engines import ASYNC_ENGINES, HOST_OPTIONS, SYNC_ENGINES, engine_refusal
from .errors import JobFileError
from .options import ALIASES, NO_EFFECT, OPTIONS, REJECTED, OptionSpec
from .values import Percent, PerDirection, Value, parse_size, parse_time_ns, parse_value, rw_base

__all__ = [
    "Percent",
    "Value",
    "OptionSpec",
    "OPTIONS",
    "ALIASES",
    "REJECTED",
    "SYNC_ENGINES",
    "ASYNC_ENGINES",
    "RawOption",
    "Section",
    "Job",
    "JobFile",
    "parse_jobfile",
    "parse_jobfile_text",
    "parse_size",
    "parse_time_ns",
    "rw_base",
    "main",
]


@dataclass(frozen=True)
class RawOption:
    """One option line as written: ``key`` (as written), ``name`` (canonical),
    ``text`` (the value after ``${VAR}`` expansion; None for a bare flag)."""

    key: str
    name: str
    text: Optional[str]
    file: str
    line: int

    def shown(self) -> str:
        """The value as fio prints it in "job options"."""
        return "" if self.text is None else self.text


@dataclass(frozen=True)
class Section:
    name: str
    line: int
    options: Tuple[RawOption, ...]

    @property
    def is_global(self) -> bool:
        return self.name == "global"


@dataclass(frozen=True)
class Job:
    """One job section with the globals in effect: ``values`` holds every
    option's typed value (canonical names), ``options`` the option lines they
    came from, ``own`` the lines of the job's own section. ``number`` is fio's
    job number of the first clone (1-based, counting clones of earlier jobs),
    used in log file names (``NAME_iops.NUMBER.log``)."""

    name: str
    section: str
    file: str
    line: int
    number: int
    options: Mapping[str, RawOption]
    own: Tuple[RawOption, ...]
    values: Mapping[str, Value]

    def has(self, name: str) -> bool:
        return name in self.values

    def value(self, name: str, default: Optional[Value] = None) -> Optional[Value]:
        return self.values.get(name, default)

    def int_value(self, name: str, default: int) -> int:
        v = self.values.get(name, default)
        assert isinstance(v, int)
        return int(v)

    def flag(self, name: str, default: bool = False) -> bool:
        v = self.values.get(name, default)
        return bool(v)

    def where(self, name: str) -> Tuple[str, int]:
        """File and line of an option (the section header when not set)."""
        o = self.options.get(name)
        return (o.file, o.line) if o else (self.file, self.line)

    def error(self, name: str, message: str) -> JobFileError:
        f, ln = self.where(name)
        return JobFileError(f, ln, name, f"job '{self.name}': {message}")

    def job_options(self) -> Dict[str, str]:
        """fio's "job options": the job's own settings that have a value."""
        return {o.key: o.text for o in self.own if o.text is not None}


@dataclass(frozen=True)
class JobFile:
    path: str
    sections: Tuple[Section, ...]
    jobs: Tuple[Job, ...]
    global_options: Tuple[RawOption, ...] = field(default=())
    #: What the parser took differently from fio's run or without effect
    #: (unset variables, host-side options), one line each.
    notes: Tuple[str, ...] = field(default=())

    def global_options_shown(self) -> Dict[str, str]:
        """fio's "global options": every global setting that has a value."""
        out: Dict[str, str] = {}
        for o in self.global_options:
            if o.text is not None:
                out[o.key] = o.text
        return out


# ---------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------

_VAR_RE = re.compile(r"\$\{([^}]*)\}")


def _expand(text: str, env: Mapping[str, str], file: str, line: int, key: str, notes: List[str]) -> str:
    def sub(m: "re.Match[str]") -> str:
        var = m.group(1)
        if env.get(var, "") == "":
            note = f"{file}:{line}: ${{{var}}} is not set: an empty string, as in fio"
            if note not in notes:
                notes.append(note)
            return ""
        return env[var]

    return _VAR_RE.sub(sub, text)


def _check_engines(text: str, path: str) -> None:
    """Refuse an engine that does no block I/O at its line, before its own
    options (unknown to ssdlab) would be reported instead."""
    for ln, raw in enumerate(text.splitlines(), start=1):
        line = _strip_comment(raw)
        key, sep, val = line.partition("=")
        if sep and key.strip() == "ioengine":
            engine = val.strip()
            why = engine_refusal(engine.split(":", 1)[0])
            if why is not None:
                raise JobFileError(path, ln, "ioengine", f"'{engine}' cannot run on a simulated drive: it {why}")


def _strip_comment(line: str) -> str:
    cut = len(line)
    for ch in (";", "#"):
        i = line.find(ch)
        if i >= 0:
            cut = min(cut, i)
    return line[:cut].strip()


def _sections(text: str, path: str, env: Mapping[str, str], notes: List[str]) -> Tuple[Section, ...]:
    sections: List[Section] = []
    cur_name: Optional[str] = None
    cur_line = 0
    cur_opts: List[RawOption] = []

    def close() -> None:
        if cur_name is not None:
            sections.append(Section(cur_name, cur_line, tuple(cur_opts)))

    for ln, raw in enumerate(text.splitlines(), start=1):
        line = _strip_comment(raw)
        if not line:
            continue
        if line.startswith("["):
            if not line.endswith("]") or len(line) < 3:
                raise JobFileError(path, ln, "", f"'{line}' is not a section header: write [name]")
            close()
            cur_name = _expand(line[1:-1].strip(), env, path, ln, "", notes)
            cur_line = ln
            cur_opts = []
            continue
        if line.split()[0] == "include":
            raise JobFileError(path, ln, "include", REJECTED["include"])
        if cur_name is None:
            raise JobFileError(path, ln, line.split("=", 1)[0].strip(), "an option before any [section]")
        if "=" in line:
            key, val = line.split("=", 1)
            key = key.strip()
            text_v: Optional[str] = _expand(val.strip(), env, path, ln, key, notes)
        else:
            key, text_v = line.strip(), None
        if not key or " " in key:
            raise JobFileError(path, ln, key, f"'{line}' is not key=value or a bare option")
        name = ALIASES.get(key, key)
        if name in REJECTED:
            raise JobFileError(path, ln, key, f"not supported: {REJECTED[name]}")
        if name not in OPTIONS:
            raise JobFileError(path, ln, key, f"unknown or unsupported fio option; supported: {', '.join(sorted(OPTIONS))}")
        if OPTIONS[name].effect in ("host", "noted") and not any(n.startswith(f"option '{key}' ") for n in notes):
            why = HOST_OPTIONS[name] if OPTIONS[name].effect == "host" else NO_EFFECT[name]
            same = [n for n in notes if n.endswith(f": {why}")]
            if same and OPTIONS[name].effect == "noted":
                # one reason given once: later options of its kind point to it
                notes.append(f"option '{key}' ({path}:{ln}) has no effect on a simulated drive either "
                             f"(the same reason as {same[0].split(' (', 1)[0]})")
            else:
                notes.append(f"option '{key}' ({path}:{ln}) has no effect on a simulated drive: {why}")
        cur_opts.append(RawOption(key, name, text_v, path, ln))
    close()
    return tuple(sections)


def _typed(opts: Mapping[str, RawOption], notes: Sequence[str] = ()) -> Dict[str, Value]:
    kb_opt = opts.get("kb_base")
    kb_base = 1024
    if kb_opt is not None:
        try:
            kb_base = int(str(parse_value(OPTIONS["kb_base"], kb_opt.text, 1024)))
        except ValueError as e:
            raise JobFileError(kb_opt.file, kb_opt.line, kb_opt.key, str(e)) from None
    values: Dict[str, Value] = {}
    rw_opt = opts.get("rw")
    rw = (rw_opt.text or "read") if rw_opt is not None else "read"
    for name, o in opts.items():
        try:
            v = parse_value(OPTIONS[name], o.text, kb_base, rw)
        except ValueError as e:
            unset = [n.split(" is not set")[0].split(": ", 1)[1] for n in notes if n.startswith(f"{o.file}:{o.line}: ")]
            why = f" ({', '.join(unset)} not set: fio substitutes an empty string" if unset else ""
            if why:
                why += ", and refuses the empty value too)" if str(e) == "has an empty value" else ")"
            raise JobFileError(o.file, o.line, o.key, f"{e}{why}") from None
        if o.key == "rwmixwrite":
            assert isinstance(v, int)
            v = 100 - v
        values[name] = v
    return values


def parse_jobfile_text(text: str, path: str = "<jobfile>", env: Optional[Mapping[str, str]] = None) -> JobFile:
    """Parse job file text (``path`` only names it in errors). ``env`` defaults
    to ``os.environ``. Raises JobFileError naming the file, line and option."""
    environ: Mapping[str, str] = os.environ if env is None else env
    _check_engines(text, path)
    notes: List[str] = []
    sections = _sections(text, path, environ, notes)
    glob: Dict[str, RawOption] = {}
    all_globals: List[RawOption] = []
    jobs: List[Job] = []
    number = 1
    for s in sections:
        if s.is_global:
            for o in s.options:
                glob[o.name] = o
                all_globals.append(o)
            _typed(glob, notes)  # report a bad global at its own line even if no job follows
            continue
        eff: Dict[str, RawOption] = dict(glob)
        for o in s.options:
            eff[o.name] = o
        values = _typed(eff, notes)
        own_name = next((o.text for o in reversed(s.options) if o.name == "name" and o.text), None)
        job = Job(
            name=own_name or s.name,
            section=s.name,
            file=path,
            line=s.line,
            number=number,
            options=eff,
            own=s.options,
            values=values,
        )
        jobs.append(job)
        numjobs = values.get("numjobs", 1)
        assert isinstance(numjobs, int)
        number += numjobs
    if not jobs:
        raise JobFileError(path, 0, "", "no job sections: add a [name] section with rw=...")
    return JobFile(path=path, sections=sections, jobs=tuple(jobs), global_options=tuple(all_globals), notes=tuple(notes))


def parse_jobfile(path: Union[str, "os.PathLike[str]"], env: Optional[Mapping[str, str]] = None) -> JobFile:
    """Read and parse a job file. Raises JobFileError (also for a file that
    cannot be read)."""
    p = os.fspath(path)
    text = read_text(p, "fio job file", lambda f, why: JobFileError(f, 0, "", why))
    return parse_jobfile_text(text, p, env)


def _jsonable(v: Value) -> object:
    if isinstance(v, Percent):
        return f"{v.percent:g}%"
    if isinstance(v, PerDirection):
        return {"read": _jsonable(v.read), "write": _jsonable(v.write)}
    if isinstance(v, tuple):
        return [list(x) if isinstance(x, tuple) else x for x in v]
    return v


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``ssdlab fio JOBFILE --parse-only``: print the jobs and their typed
    values (sizes in bytes, times in ns) as JSON; exit 2 with one error line."""
    ap = argparse.ArgumentParser(prog="ssdlab fio --parse-only", description="Parse an fio job file and print its jobs as ssdlab reads them.")
    ap.add_argument("jobfile")
    args = ap.parse_args(argv)
    try:
        jf = parse_jobfile(args.jobfile)
    except JobFileError as e:
        sys.stderr.write(f"ssdlab: error: {e}\n")
        return 2
    doc = {
        "file": jf.path,
        "jobs": [
            {
                "name": j.name,
                "section": j.section,
                "line": j.line,
                "number": j.number,
                "values": {k: _jsonable(v) for k, v in j.values.items()},
                "effects": {k: OPTIONS[k].effect for k in j.values},
            }
            for j in jf.jobs
        ],
    }
    sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    return 0
