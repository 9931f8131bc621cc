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
"job options", no effect on a simulated drive) or ``host`` (the same, with a
note naming it). Options fio has that ssdlab
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
from .engines import ASYNC_ENGINES, BLOCK_ENGINES, ENGINE_OPTIONS, HOST_OPTIONS, SYNC_ENGINES, engine_refusal
from .errors import JobFileError

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
class Percent:
    """A size given as a share of the target (fio's ``size=50%``)."""

    percent: float

    def bytes_of(self, capacity_bytes: int, align_bytes: int = 512) -> int:
        b = int(capacity_bytes * self.percent / 100.0)
        return b // align_bytes * align_bytes


#: A typed option value.
Value = Union[int, bool, str, Percent, Tuple[Tuple[int, int], ...], Tuple[float, ...]]

_RW_MODES = ("read", "write", "randread", "randwrite", "rw", "readwrite", "randrw", "trim", "randtrim", "trimwrite",
             "randtrimwrite")


def rw_base(rw: object) -> str:
    """The mode of an ``rw`` value without fio's ``:N`` modifier."""
    return str(rw).split(":", 1)[0].strip()


@dataclass(frozen=True)
class OptionSpec:
    """One accepted option: its value ``kind`` (size, sizes, bssplit, time,
    int, uint, bool, str, choice), what the simulator does with it
    (``effect``: engine, ssdlab, recorded), allowed values for a choice, and a
    range for integers."""

    name: str
    kind: str
    effect: str
    choices: Tuple[str, ...] = ()
    lo: Optional[int] = None
    hi: Optional[int] = None
    percent_ok: bool = False
    help: str = ""


def _spec(name: str, kind: str, effect: str, **kw: object) -> Tuple[str, OptionSpec]:
    return name, OptionSpec(name, kind, effect, **kw)  # type: ignore[arg-type]


#: Every option ssdlab accepts, by canonical name.
OPTIONS: Dict[str, OptionSpec] = dict(
    [
        # -- passed to the engine's job parser ------------------------------
        _spec("rw", "choice", "engine", choices=_RW_MODES, help="I/O pattern"),
        _spec("bs", "sizes", "engine", help="block size (READ,WRITE,TRIM: the job's direction's)"),
        _spec("bssplit", "bssplit", "engine", help="block sizes and weights, SIZE/PERCENT:..."),
        _spec("bsrange", "range", "engine", help="block sizes drawn between MIN-MAX"),
        _spec("blockalign", "sizes", "engine", help="offset alignment of random I/O"),
        _spec("offset", "size", "engine", percent_ok=True, help="start of the region (0% allowed)"),
        _spec("size", "size", "engine", percent_ok=True, help="length of the region"),
        _spec("io_size", "size", "engine", help="bytes to transfer (per job)"),
        _spec("number_ios", "uint", "engine", lo=0, help="stop after this many I/Os (within one pass; 0: no limit, as in fio)"),
        _spec("runtime", "time", "engine", help="stop after this long"),
        _spec("time_based", "bool", "engine", help="run for runtime even after a pass"),
        _spec("iodepth", "int", "engine", lo=1, hi=256, help="I/Os in flight (async engines)"),
        _spec("rwmixread", "int", "engine", lo=0, hi=100, help="percentage of reads in rw/randrw"),
        _spec("refill_buffers", "bool", "engine", help="new data every write (incompressible)"),
        _spec("scramble_buffers", "bool", "engine", help="scramble the buffer (default on)"),
        _spec("zero_buffers", "bool", "engine", help="zeros"),
        _spec("buffer_compress_percentage", "int", "engine", lo=0, hi=99, help="compressible data"),
        _spec("log_avg_msec", "int", "engine", lo=1, help="interval of the logs and series"),
        _spec("randseed", "int", "engine", lo=0, help="seed of the offsets"),
        _spec("fsync", "int", "engine", lo=0, help="FLUSH CACHE after every N writes (the queue drains first; 0: never)"),
        _spec("fdatasync", "int", "engine", lo=0, help="the same as fsync on a block device (0: never)"),
        # -- implemented by ssdlab.fio.simulate --------------------------------
        _spec("name", "str", "ssdlab", help="job name"),
        _spec("description", "str", "ssdlab", help="text shown with the job"),
        _spec("numjobs", "int", "ssdlab", lo=1, hi=256, help="clones of the job (merged into one queue where exact)"),
        _spec("ramp_time", "time", "ssdlab", help="run this long before measuring (time-based random jobs)"),
        _spec("startdelay", "time", "ssdlab", help="idle before the job starts"),
        _spec("loops", "int", "ssdlab", lo=1, help="repeat the job's I/O this many times"),
        _spec("stonewall", "bool", "ssdlab", help="wait for the jobs before (a new group)"),
        _spec("wait_for", "str", "ssdlab", help="start after the named job (as a stonewall)"),
        _spec("new_group", "bool", "ssdlab", help="start a new reporting group"),
        _spec("group_reporting", "bool", "ssdlab", help="report a group as one job"),
        _spec("write_iops_log", "str", "ssdlab", help="write NAME_iops.N.log"),
        _spec("write_bw_log", "str", "ssdlab", help="write NAME_bw.N.log"),
        _spec("per_job_logs", "bool", "ssdlab", help="one log per job (default) or one per name"),
        _spec("random_distribution", "str", "engine", help="random, zoned:A/R:..., zoned_abs:A/SIZE:... (zipf, pareto, normal: not yet)"),
        _spec("norandommap", "bool", "ssdlab", help="offsets drawn with replacement (the engine always does)"),
        _spec("ioengine", "choice", "ssdlab", choices=BLOCK_ENGINES, help="sync engines run at QD1"),
        _spec("end_fsync", "bool", "ssdlab", help="FLUSH CACHE at the end of the job"),
        _spec("kb_base", "choice", "ssdlab", choices=("1024", "1000"), help="meaning of k/ki in sizes"),
        _spec("rate", "rates", "engine", help="bytes per second the job issues at most (READ,WRITE,TRIM)"),
        _spec("rate_iops", "ints", "engine", help="I/Os per second the job issues at most (READ,WRITE,TRIM)"),
        _spec("rate_process", "choice", "engine", choices=("linear", "poisson"), help="how I/Os are spread (linear)"),
        _spec("rate_min", "rates", "recorded", help="fio fails a job below it; the simulator records it"),
        _spec("rate_iops_min", "ints", "recorded", help="fio fails a job below it; the simulator records it"),
        _spec("rate_cycle", "int", "recorded", help="the window of rate_min"),
        _spec("thinktime", "time_us", "engine", help="pause after thinktime_blocks I/Os (a bare number is us)"),
        _spec("thinktime_blocks", "int", "engine", lo=1, help="I/Os between pauses"),
        _spec("thinktime_spin", "time_us", "recorded", help="the part of thinktime spent spinning (the pause is the same)"),
        _spec("thinktime_blocks_type", "choice", "recorded", choices=("complete", "issue"),
              help="the simulator counts I/Os issued"),
        _spec("verify", "str", "ssdlab", help="check what the job wrote: the engine's checking mode, then a read-back"),
        _spec("do_verify", "bool", "ssdlab", help="read back after writing (default 1 with verify)"),
        _spec("verify_fatal", "bool", "recorded", help="the first mismatch stops the run anyway"),
        _spec("verify_backlog", "int", "recorded", help="the checking mode checks every I/O as it completes"),
        _spec("verify_backlog_batch", "int", "recorded"),
        _spec("verify_dump", "bool", "recorded"),
        _spec("verify_async", "int", "recorded"),
        _spec("verify_interval", "size", "recorded"),
        _spec("verify_offset", "size", "recorded"),
        _spec("verify_pattern", "str", "recorded", help="the engine checks data versions, not byte patterns"),
        _spec("verify_state_save", "bool", "recorded"),
        _spec("verify_state_load", "bool", "recorded"),
        _spec("verify_only", "bool", "ssdlab", help="only read back and check (nothing is written)"),
        _spec("verify_header_seed", "bool", "recorded"),
        _spec("experimental_verify", "bool", "recorded"),
        _spec("steadystate", "str", "ssdlab", help="stop at steady state: iops|iops_slope|bw|bw_slope:LIMIT[%]"),
        _spec("steadystate_duration", "time", "ssdlab", help="the window steady state is judged over"),
        _spec("steadystate_ramp_time", "time", "ssdlab", help="time before the window may start"),
        _spec("steadystate_check_interval", "time", "ssdlab", help="1 s (fio's default) only"),
        _spec("buffer_pattern", "str", "ssdlab", help="a repeated pattern: written as the engine's zeros (as compressible)"),
        _spec("filesize", "size", "ssdlab", help="size of each file: a region of the drive"),
        _spec("nrfiles", "int", "ssdlab", lo=1, hi=1_000_000, help="files: consecutive regions of filesize"),
        _spec("file_service_type", "str", "ssdlab", help="how I/O moves between the files"),
        _spec("offset_increment", "size", "ssdlab", percent_ok=True, help="each clone's offset moves by this"),
        _spec("fill_device", "bool", "ssdlab", help="write to the end of the drive"),
        _spec("write_lat_log", "str", "ssdlab", help="write NAME_lat.N.log, NAME_clat.N.log, NAME_slat.N.log"),
        _spec("write_clat_log", "str", "ssdlab", help="write NAME_clat.N.log"),
        _spec("write_slat_log", "str", "ssdlab", help="write NAME_slat.N.log"),
        _spec("percentile_list", "floats", "ssdlab", help="the percentiles reported"),
        _spec("lat_percentiles", "bool", "ssdlab", help="report total-latency percentiles"),
        _spec("slat_percentiles", "bool", "ssdlab", help="report submission-latency percentiles"),
        # -- accepted and recorded: no effect on a simulated drive ----------
        _spec("filename", "str", "recorded", help="the simulated drive is the target"),
        _spec("directory", "str", "recorded"),
        _spec("direct", "bool", "recorded", help="a simulated drive has no page cache"),
        _spec("buffered", "bool", "recorded", help="a simulated drive has no page cache"),
        _spec("invalidate", "bool", "recorded"),
        _spec("randrepeat", "bool", "recorded", help="simulated runs repeat for a seed anyway"),
        _spec("random_generator", "choice", "recorded", choices=("tausworthe", "lfsr", "tausworthe64")),
        _spec("overwrite", "bool", "recorded"),
        _spec("unlink", "bool", "recorded"),
        _spec("clat_percentiles", "bool", "ssdlab", help="report completion-latency percentiles (default on)"),
        _spec("unit_base", "choice", "recorded", choices=("0", "1", "8")),
    ]
    + [_spec(k, "any", "host", help=why) for k, why in HOST_OPTIONS.items()]
    + [_spec(k, "any", "recorded", help="an option of the I/O engine") for k in ENGINE_OPTIONS]
)

#: fio's other names for options.
ALIASES: Dict[str, str] = {
    "readwrite": "rw",
    "wait_for_previous": "stonewall",
    "io_limit": "io_size",
    "ba": "blockalign",
    "threads": "thread",
    "rwmixwrite": "rwmixread",  # stored as 100 - value
    "blocksize": "bs",
    "fileoffset": "offset",
    "timeout": "runtime",
    "blocksize_range": "bsrange",
    "nr_files": "nrfiles",
    "fill_fs": "fill_device",
    "iodepth_batch_submit": "iodepth_batch",
    "iomem": "mem",
    "mem_align": "iomem_align",
    "disable_bw": "disable_bw_measurement",
    "ratemin": "rate_min",
    "ratecycle": "rate_cycle",
    "blocksize_unaligned": "bs_unaligned",
    "iodepth_batch_complete": "iodepth_batch_complete_min",
    "ss": "steadystate",
    "ss_dur": "steadystate_duration",
    "ss_ramp": "steadystate_ramp_time",
}

#: fio options ssdlab knows but cannot simulate, with the reason.
REJECTED: Dict[str, str] = {
    "include": "include is not supported: put every option in the one job file",
    "sync": "synchronous writes (O_SYNC) are not simulated",
    "exec_prerun": "commands are not run on a simulated drive",
    "exec_postrun": "commands are not run on a simulated drive",
    "read_iolog": "iolog replay is not run from a job file yet: use 'ssdlab replay'",
    "write_iolog": "the simulator does not write iologs",
    "write_hist_log": "latency histograms are not logged by the engine",
    "log_offset": "logs are per-interval averages: there is no offset to log",
    "log_max_value": "logs are per-interval averages",
    "log_compression": "logs are written uncompressed",
    "bs_unaligned": "unaligned block sizes are not supported",
    "rw_sequencer": "rw_sequencer is not supported",
    "zonemode": "zoned modes stay refused until the simulated drives have zones",
    "zonesize": "zoned modes stay refused until the simulated drives have zones",
    "zonerange": "zoned modes stay refused until the simulated drives have zones",
    "zoneskip": "zoned modes stay refused until the simulated drives have zones",
    "zonecapacity": "zoned modes stay refused until the simulated drives have zones",
    "buffer_compress_chunk": "compressibility is per write in the engine",
    "dedupe_percentage": "dedupe is not simulated",
    "dedupe_mode": "dedupe is not simulated",
    "dedupe_working_set_percentage": "dedupe is not simulated",
    "flow": "flow balances jobs' I/O by tokens; not simulated yet (jobs run side by side at their own pace)",
    "flow_id": "flow balances jobs' I/O by tokens; not simulated yet",
    "flow_sleep": "flow balances jobs' I/O by tokens; not simulated yet",
    "flow_watermark": "flow balances jobs' I/O by tokens; not simulated yet",
    "latency_target": "fio's latency-target mode searches for a queue depth; not simulated yet",
    "latency_window": "fio's latency-target mode searches for a queue depth; not simulated yet",
    "latency_percentile": "fio's latency-target mode searches for a queue depth; not simulated yet",
    "latency_run": "fio's latency-target mode searches for a queue depth; not simulated yet",
    "trim_percentage": "trim after write is not simulated: use rw=trim",
    "trim_backlog": "trim after write is not simulated: use rw=trim",
}

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
# Values
# ---------------------------------------------------------------------------

_SIZE_RE = re.compile(r"^(0x[0-9a-f]+|\d+)([a-z]*)$")


def _mult(suffix: str, kb_base: int) -> Optional[int]:
    s = suffix[:-1] if suffix.endswith("b") and len(suffix) > 1 else suffix
    if suffix == "b" or suffix == "":
        return 1
    powers = {"k": 1, "m": 2, "g": 3, "t": 4, "p": 5}
    if s in powers:
        return int((1024 if kb_base == 1024 else 1000) ** powers[s])
    if len(s) == 2 and s[1] == "i" and s[0] in powers:
        return int((1000 if kb_base == 1024 else 1024) ** powers[s[0]])
    return None


def parse_size(text: str, *, kb_base: int = 1024, percent_ok: bool = False) -> Union[int, Percent]:
    """A fio size: ``4096``, ``4k``, ``4kb``, ``1m``, ``0x1000``, ``50%``.
    Raises ValueError with the reason."""
    t = text.strip().lower()
    if t.endswith("%"):
        if not percent_ok:
            raise ValueError(f"'{text}': a percentage is not allowed here")
        try:
            pct = float(t[:-1])
        except ValueError:
            raise ValueError(f"'{text}' is not a percentage") from None
        if not 0 < pct <= 100:
            raise ValueError(f"'{text}': a percentage must be above 0 and at most 100")
        return Percent(pct)
    m = _SIZE_RE.match(t)
    if not m:
        if re.match(r"^\d+\.\d+", t):
            raise ValueError(f"'{text}': fio reads only the whole part of a number (it would take {t.split('.')[0]}...); "
                             "give a whole number of bytes or units")
        raise ValueError(f"'{text}' is not a size: give bytes or a number with k, m, g, t (powers of 1024 as fio), e.g. 4k")
    num = int(m.group(1), 16) if m.group(1).startswith("0x") else int(m.group(1))
    mult = _mult(m.group(2), kb_base)
    if mult is None:
        raise ValueError(f"'{text}': unknown unit '{m.group(2)}'; use k, m, g, t, p (powers of 1024 as fio) or ki, mi, gi (powers of 1000)")
    return num * mult


_TIME_UNITS_US = {"": 1_000_000, "us": 1, "usec": 1, "ms": 1000, "msec": 1000, "s": 1_000_000, "m": 60_000_000,
                  "h": 3_600_000_000, "d": 86_400_000_000}


def parse_time_ns(text: str) -> int:
    """A fio time: a bare number is seconds; suffixes us/usec, ms/msec, s, m, h, d."""
    t = text.strip().lower()
    m = re.match(r"^(\d+)([a-z]*)$", t)
    if not m:
        if re.match(r"^\d+\.\d+", t):
            raise ValueError(f"'{text}': fio reads only the whole part of a number; write e.g. 1500ms")
        raise ValueError(f"'{text}' is not a time: give seconds or a number with us, ms, s, m, h or d, e.g. 60 or 500ms")
    unit = m.group(2)
    if unit not in _TIME_UNITS_US:
        raise ValueError(f"'{text}': unknown unit '{unit}' (fio would read it as microseconds); use us, ms, s, m, h or d")
    return int(m.group(1)) * _TIME_UNITS_US[unit] * 1000


def _parse_int(text: str) -> int:
    t = text.strip().lower()
    try:
        return int(t, 16) if t.startswith("0x") else int(t)
    except ValueError:
        raise ValueError(f"'{text}' is not a whole number") from None


def _parse_bool(text: Optional[str]) -> bool:
    if text is None:
        return True
    t = text.strip()
    if t in ("1", "0"):
        return t == "1"
    raise ValueError(f"'{text}' is not a boolean: give 1 or 0 (or the bare option name for 1)")


_READ_MODES = ("read", "randread")
_WRITE_MODES = ("write", "randwrite")
_TRIM_MODES = ("trim", "randtrim")


def _for_direction(text: str, rw: str) -> str:
    """fio's ``READ,WRITE,TRIM`` values: the one of the job's direction (a
    value not followed by a comma applies to the directions after it; an
    empty one is fio's default, returned as ""). A mixed job whose
    directions differ is refused."""
    parts = text.split(",")

    def part(i: int) -> str:
        if i < len(parts):
            return parts[i].strip()
        return "" if text.rstrip().endswith(",") else parts[-1].strip()

    base = rw_base(rw)
    dirs = [0] if base in _READ_MODES else [1] if base in _WRITE_MODES else [2] if base in _TRIM_MODES else \
        [2, 1] if base in ("trimwrite", "randtrimwrite") else [0, 1]
    vals = {part(i) for i in dirs}
    if len(vals) > 1:
        raise ValueError(f"'{text}': different values for the directions of a mixed job (rw={base}) are not simulated yet; "
                         "give one value")
    return vals.pop()


def _parse_value(spec: OptionSpec, opt: RawOption, kb_base: int, rw: str = "read") -> Value:
    text = opt.text
    if spec.kind == "bool":
        return _parse_bool(text)
    if spec.kind == "any":
        return True if text is None else text
    if text is None:
        if spec.name in ("write_iops_log", "write_bw_log", "write_lat_log", "write_clat_log", "write_slat_log"):
            return ""  # fio: the job name is the log's name
        raise ValueError("needs a value (key=value)")
    if spec.kind == "str":
        return text
    if text.strip() == "":
        raise ValueError("has an empty value")
    if spec.kind == "choice":
        t = text.strip()
        if spec.name == "rw":
            t = t.replace(" ", "")
            base = rw_base(t)
            if base not in spec.choices:
                raise ValueError(f"'{t}' is not allowed; allowed: {', '.join(spec.choices)}")
            return t  # the engine checks the ':N' modifier
        if t not in spec.choices:
            raise ValueError(f"'{t}' is not allowed; allowed: {', '.join(spec.choices)}")
        return t
    if spec.kind in ("int", "uint"):
        n = _parse_int(text) if spec.kind == "int" else _size_int(text, kb_base)
        if spec.lo is not None and n < spec.lo:
            raise ValueError(f"{n}: must be at least {spec.lo}")
        if spec.hi is not None and n > spec.hi:
            raise ValueError(f"{n}: must be at most {spec.hi}")
        return n
    if spec.kind == "size":
        if spec.name == "offset" and re.fullmatch(r"\s*0+(\.0*)?\s*%\s*", text):
            return 0  # fio: offset=0% is the start
        return parse_size(text, kb_base=kb_base, percent_ok=spec.percent_ok)
    if spec.kind == "range":
        return _parse_range(text, kb_base)
    if spec.kind == "floats":
        return _parse_floats(text)
    if spec.kind == "sizes":
        one = _for_direction(text, rw) if "," in text else text
        return _size_int(one, kb_base) if one else 4096  # fio's default block size
    if spec.kind == "time":
        return parse_time_ns(text)
    if spec.kind == "time_us":
        t = text.strip().lower()
        return parse_time_ns(t + "us" if t.isdigit() else t)  # fio: a bare number is microseconds here
    if spec.kind in ("rates", "ints"):
        parts = text.split(",")
        if len(parts) > 3:
            raise ValueError(f"'{text}': at most three values (READ,WRITE,TRIM)")
        vals = [(_size_int(x, kb_base) if spec.kind == "rates" else _parse_int(x)) if x.strip() else 0 for x in parts]
        if any(v < 0 for v in vals):
            raise ValueError(f"'{text}': rates are 0 or more")
        return tuple(vals)
    if spec.kind == "bssplit":
        one = _for_direction(text, rw) if "," in text else text
        return _parse_bssplit(one, kb_base) if one else ((4096, 100),)
    raise AssertionError(spec.kind)


def _parse_range(text: str, kb_base: int) -> Tuple[Tuple[int, int], ...]:
    """fio's ``bsrange``: ``MIN-MAX`` (or one per direction, all equal here)."""
    ranges = set()
    for part in (p for p in text.split(",") if p.strip()):
        lo, sep, hi = part.partition("-")
        if not sep:
            raise ValueError(f"'{part}' is not MIN-MAX, e.g. 4k-64k")
        a, b = _size_int(lo, kb_base), _size_int(hi, kb_base)
        if not 0 < a <= b:
            raise ValueError(f"'{part}': give MIN-MAX with 0 < MIN <= MAX")
        ranges.add((a, b))
    if len(ranges) != 1:
        raise ValueError(f"'{text}': different ranges per direction are not supported; give one MIN-MAX")
    return (ranges.pop(),)


def _parse_floats(text: str) -> Tuple[float, ...]:
    """fio's ``percentile_list``: percentiles separated by ``:``, each in 0..100."""
    out: List[float] = []
    for part in (p for p in text.split(":") if p.strip()):
        try:
            v = float(part)
        except ValueError:
            raise ValueError(f"'{part}' is not a percentile: give numbers 0..100 separated by ':', e.g. 50:99:99.9") from None
        if not 0 <= v <= 100:
            raise ValueError(f"'{part}': a percentile is within 0..100")
        out.append(v)
    if not out or len(out) > 64:
        raise ValueError(f"'{text}': give 1 to 64 percentiles (fio's limit)")
    return tuple(out)


def _size_int(text: str, kb_base: int) -> int:
    v = parse_size(text, kb_base=kb_base)
    assert isinstance(v, int)
    return v


def _parse_bssplit(text: str, kb_base: int) -> Tuple[Tuple[int, int], ...]:
    """fio's rule (as the engine's): the percentages add up to 100, a size
    without one (``4k/`` or ``4k``) shares the rest evenly (integer division,
    as fio); more than 100 is an error, and so (unlike fio) is less with no
    such size."""
    if "," in text:
        raise ValueError(f"'{text}': a split per direction is not supported; give one SIZE/PERCENT:... list")
    parts = [p for p in text.split(":") if p.strip()]
    if len(parts) > 64:
        raise ValueError(f"'{text}': {len(parts)} sizes, at most 64 (fio's limit)")
    given: List[Tuple[int, Optional[int]]] = []
    for part in parts:
        b, _, w = part.partition("/")
        pct = _parse_int(w) if w.strip() else None
        if pct is not None and not 0 <= pct <= 100:
            raise ValueError(f"'{w}' in '{part}' is not a whole percentage 0..100")
        given.append((_size_int(b, kb_base), pct))
    total = sum(w for _, w in given if w is not None)
    blanks = sum(1 for _, w in given if w is None)
    if total > 100:
        raise ValueError(f"'{text}': the percentages add up to {total}, more than 100")
    if not blanks and total != 100:
        raise ValueError(f"'{text}': the percentages add up to {total}, not 100 (as in fio; a size without a percentage, "
                         "e.g. 4k/, shares the rest)")
    share = (100 - total) // blanks if blanks else 0
    return tuple((b, share if w is None else w) for b, w in given)


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
        if OPTIONS[name].effect == "host" and not any(n.startswith(f"option '{key}' ") for n in notes):
            notes.append(f"option '{key}' ({path}:{ln}) has no effect on a simulated drive: {HOST_OPTIONS[name]}")
        cur_opts.append(RawOption(key, name, text_v, path, ln))
    close()
    return tuple(sections)


def _typed(opts: Mapping[str, RawOption], notes: Sequence[str] = ()) -> Dict[str, Value]:
    kb_opt = opts.get("kb_base")
    kb_base = 1024
    if kb_opt is not None:
        try:
            kb_base = int(str(_parse_value(OPTIONS["kb_base"], kb_opt, 1024)))
        except ValueError as e:
            raise JobFileError(kb_opt.file, kb_opt.line, kb_opt.key, str(e)) from None
    values: Dict[str, Value] = {}
    rw_opt = opts.get("rw")
    rw = (rw_opt.text or "read") if rw_opt is not None else "read"
    for name, o in opts.items():
        try:
            v = _parse_value(OPTIONS[name], o, kb_base, rw)
        except ValueError as e:
            unset = [n.split(" is not set")[0].split(": ", 1)[1] for n in notes if n.startswith(f"{o.file}:{o.line}: ")]
            why = f" ({', '.join(unset)} not set: fio substitutes an empty string)" if unset else ""
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
