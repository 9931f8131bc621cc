"""Fuzzing the parsers a user feeds: random and mutated drive
descriptions (dicts, JSON and TOML files), trace lines of every supported
format, job dicts and replay options, through the Python API. Whatever comes
in, the answer is a result or one typed ssdlab error with a message
(``SsdlabError``, a ``ValueError``): never another exception type, never a
Rust panic (pyo3's ``PanicException``, a ``BaseException``), and nothing
allocated beyond the memory limit: simulators are built with a small limit
and every engine call runs with the process's address space capped a little
above what it uses (an allocation past it would abort the process).

Values are the plain data the engine takes (strings, whole numbers,
floats, booleans, None, lists, mappings) and the Python-only values the API
layer checks before the engine sees them (NaN and infinities, integers past
64 bits, bytes).
The examples are derandomized (same inputs on every run) and bounded."""

from __future__ import annotations

import contextlib
import json
import resource
import string
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple, TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import make_drive
from ssdlab import Drive, Simulator, SsdlabError
from ssdlab.trace import trace_stats

T = TypeVar("T")

FUZZ = settings(max_examples=200, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

#: Address space an engine call may add to what the process uses.
HEADROOM_BYTES = 2 << 30

#: What a fuzzed simulator may use beside its drive's tables (series, logs).
SERIES_ROOM_BYTES = 4 << 20

SMALL = make_drive()


def _vm_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmSize in /proc/self/status")


@contextlib.contextmanager
def bounded_memory() -> Iterator[None]:
    """Cap this process's address space at what it uses plus HEADROOM_BYTES
    (an engine allocation past it aborts the run: the test fails loudly)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = _vm_bytes() + HEADROOM_BYTES
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def typed(call: Callable[[], T]) -> Optional[T]:
    """The call's result, or None when it raised a typed ssdlab error with a
    one-line message; any other exception (a panic included) propagates."""
    try:
        return call()
    except SsdlabError as e:
        text = str(e)
        assert isinstance(e, ValueError)
        assert text.strip() and "\n" not in text.strip(), repr(text)
        assert "panicked" not in text and "internal error" not in text, text
        return None


def small_simulator(drive: Any = SMALL) -> Simulator:
    d = Drive.load(drive)
    return Simulator(d, memory_limit_bytes=d.memory_estimate_bytes + SERIES_ROOM_BYTES)


# ---------------------------------------------------------------------------
# plain values
# ---------------------------------------------------------------------------

INTERESTING_NUMBERS = [0, 1, -1, 2, 511, 512, 4096, 10**6, 2**31, 2**32, 2**53, 2**62, 2**63 - 1, 2**63, 2**64 - 1, -(2**63)]
INTERESTING_TEXT = ["", " ", "0", "-1", "4k", "1000t", "64m", "1g", "75%", "150%", "-5%", "1e9", "0x10", "1.5", "nan", "inf",
                    "60s", "1000000000000", "5ms", "2h", "-1s", "0s", "4k/50:64k/50", "4k/", "4k/200", "randwrite", "true",
                    "ratio:0.5", "ratio:0", "zeros", "\u00e9", "a" * 300, "1" * 40]

numbers = st.one_of(st.sampled_from(INTERESTING_NUMBERS + [2**64, 2**80, -(2**80)]),
                    st.integers(min_value=-(2**63), max_value=2**64 - 1))
texts = st.one_of(st.sampled_from(INTERESTING_TEXT), st.text(string.printable, max_size=16), st.text(max_size=8),
                  numbers.map(str))
scalars = st.one_of(numbers, texts, st.floats(), st.booleans(), st.none(), st.just(b"4k"))
values = st.one_of(scalars, st.lists(scalars, max_size=3), st.dictionaries(st.text(max_size=6), scalars, max_size=3))


# ---------------------------------------------------------------------------
# drive descriptions
# ---------------------------------------------------------------------------


def _fields(cfg: Dict[str, Any]) -> List[Tuple[str, str]]:
    return [(sec, key) for sec, body in cfg.items() if isinstance(body, dict) for key in body]


BASES = {"small": SMALL, "preset": Drive.load("generic-mlc-120").config}


def _nudge(v: Any, draw: st.DrawFn) -> Any:
    """A small change of a value that often stays valid: the fuzz reaches
    the simulator as well as the validation."""
    if isinstance(v, bool):
        return not v
    if isinstance(v, int):
        how = draw(st.sampled_from(["scale", "scale", "plus", "minus"]))
        if how == "plus":
            return v + 1
        if how == "minus":
            return v - 1
        return v * draw(st.sampled_from([0, 1, 2, 3, 10, 1000, 10**6])) // draw(st.sampled_from([1, 2, 3, 10, 1000]))
    if isinstance(v, float):
        return v * draw(st.sampled_from([0.0, 0.5, 2.0, 1e6, -1.0]))
    return draw(values)


@st.composite
def mutated_drive(draw: st.DrawFn) -> Dict[str, Any]:
    cfg = json.loads(json.dumps(BASES[draw(st.sampled_from(sorted(BASES)))]))
    fields = _fields(cfg)
    for _ in range(draw(st.integers(1, 3))):
        action = draw(st.sampled_from(["nudge", "nudge", "nudge", "nudge", "set", "drop", "add", "section"]))
        sec, key = draw(st.sampled_from(fields))
        if sec not in cfg or not isinstance(cfg[sec], dict):
            continue
        if action == "nudge" and key in cfg[sec]:
            cfg[sec][key] = _nudge(cfg[sec][key], draw)
        elif action == "set":
            cfg[sec][key] = draw(values)
        elif action == "drop":
            cfg[sec].pop(key, None)
        elif action == "add":
            cfg[sec][draw(st.text(string.ascii_lowercase + "_", min_size=1, max_size=12))] = draw(values)
        elif action == "section":
            cfg[sec] = draw(values)
    return cfg


def _check_drive(d: Drive) -> None:
    """A drive that loads builds within a small limit (or says it needs more),
    stays within it and runs a short job."""
    with bounded_memory():
        sim = typed(lambda: Simulator(d, memory_limit_bytes=64 << 20))
        if sim is None:
            return
        assert sim.memory_in_use_bytes <= 64 << 20
        typed(lambda: sim.run(rw="randwrite", bs="4k", iodepth=8, number_ios=200))
        typed(lambda: sim.run(rw="read", bs="128k", iodepth=2, number_ios=20))
        assert sim.memory_in_use_bytes <= 64 << 20


@FUZZ
@given(cfg=mutated_drive())
def test_mutated_drive_descriptions_give_a_drive_or_a_typed_error(cfg: Dict[str, Any]) -> None:
    d = typed(lambda: Drive.load(cfg))
    if d is not None:
        _check_drive(d)


def _to_toml(cfg: Dict[str, Any]) -> str:
    """Sections of scalars as TOML (enough for drive files)."""
    out = []
    for sec, body in cfg.items():
        out.append(f"[{sec}]")
        for k, v in (body.items() if isinstance(body, dict) else []):
            out.append(f"{k} = {json.dumps(v, default=lambda b: b.decode())}")
    return "\n".join(out) + "\n"


@FUZZ
@given(cfg=mutated_drive(), fmt=st.sampled_from(["json", "toml"]),
       edits=st.lists(st.tuples(st.floats(0, 1), st.sampled_from(["cut", "flip", "insert", "delete"]), st.text(max_size=4)),
                      max_size=3))
def test_mutated_drive_files_give_a_drive_or_a_typed_error(tmp_path: Path, cfg: Dict[str, Any], fmt: str,
                                                         edits: List[Tuple[float, str, str]]) -> None:
    # a file holds text: bytes as their text; NaN and infinities as json writes them (not JSON: an error)
    text = json.dumps(cfg, default=lambda b: b.decode()) if fmt == "json" else _to_toml(cfg)
    for where, what, s in edits:
        i = int(where * len(text))
        if what == "cut":
            text = text[:i]
        elif what == "flip" and i < len(text):
            text = text[:i] + chr((ord(text[i]) + 1) % 0x250) + text[i + 1:]
        elif what == "insert":
            text = text[:i] + s + text[i:]
        else:
            text = text[:i] + text[i + len(s) + 1:]
    p = tmp_path / f"drive.{fmt}"
    p.write_text(text, encoding="utf-8", errors="surrogatepass")
    d = typed(lambda: Drive.load(str(p)))
    if d is not None:
        _check_drive(d)


# ---------------------------------------------------------------------------
# trace lines, every format
# ---------------------------------------------------------------------------

#: A few valid lines of each format, and how its fields are separated.
TRACE_SAMPLES: Dict[str, Tuple[Optional[str], List[str]]] = {
    "msr": (",", ["128166385295514663,hm,0,Read,8192,4096,2833", "128166385310514663,hm,0,Write,1048576,8192,100",
                  "128166385310514664,hm,1,Read,0,512,7"]),
    "systor17": (",", ["Timestamp,Response,IOType,LUN,Offset,Size", "1455591804.000000000,0.000283300,R,0,8192,4096",
                       "1455591805.500000000,0.000010000,W,0,1048576,8192", "1455591805.500000100,0.000000700,R,0,0,512"]),
    "umass": (",", ["0,16,4096,r,10.000000", "0,2048,8192,W,11.5", "1,0,512,R,11.5000001"]),
    "disksim": (None, ["1000 0 16 8 1", "1500001000 0 2048 16 0", "1500001100.4 0 0 1 1"]),
    "tencent": (",", ["1538323199,16,8,0,1058", "1538323200,2048,16,1,1058", "1538323200,0,1,0,1059"]),
    "blkparse": (None, ["  8,0    3        1     0.000000000  1234  Q   R 16 + 8 [fio]",
                        "  8,0    3        2     0.000001000  1234  D   R 16 + 8 [fio]",
                        "  8,0    3        3     1.500001000  1234  D   W 2048 + 16 [fio]",
                        "  8,0    3        5     1.600000000     0  C   R 0 + 1 [0]"]),
    "fio-iolog": (None, ["fio version 3 iolog", "0 /dev/sdb add", "0 /dev/sdb open", "5 /dev/sdb read 8192 4096",
                         "1500005 /dev/sdb write 1048576 8192", "1500006 /dev/sdb trim 0 4096", "1600000 /dev/sdb close"]),
    "csv": (",", ["time_ns,op,offset_bytes,length_bytes,iodepth,recorded_latency_ns,data_pattern",
                  "7,read,8192,4096,1,283300,incompressible", "1500000007,write,1048576,8192,2,10000,ratio:0.5",
                  "1500000107,sync,0,0,1,700,zeros"]),
}

tokens = st.one_of(st.sampled_from(INTERESTING_TEXT + ["R", "W", "Read", "Write", "read", "write", "D", "Q", "C", "+",
                                                       "18446744073709551615", "18446744073709551616",
                                                       "99999999999999999999.5", "180000000000000000", "0.000000001"]),
                   numbers.map(str), st.text(string.printable.replace("\n", "").replace("\r", ""), max_size=10))


@st.composite
def mutated_trace(draw: st.DrawFn, fmt: str) -> List[str]:
    sep, lines = TRACE_SAMPLES[fmt]
    lines = list(lines)
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["field", "field", "field", "line", "dup", "drop"]))
        if action == "field":
            parts = lines[i].split(sep) if sep else lines[i].split()
            j = draw(st.integers(0, len(parts) - 1)) if parts else 0
            if parts:
                parts[j] = draw(tokens)
            lines[i] = (sep or " ").join(parts)
        elif action == "line":
            lines.insert(i, draw(st.text(max_size=60).map(lambda s: s.replace("\n", " ").replace("\r", " "))))
        elif action == "dup":
            lines.insert(i, lines[i])
        elif len(lines) > 1:
            del lines[i]
    return lines


def _fuzz_trace(tmp_path: Path, fmt: str, lines: List[str], auto: bool, skip: bool) -> None:
    p = tmp_path / "t.trace"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    cap = SMALL["drive"]["user_capacity_bytes"]
    form = "auto" if auto else fmt
    with bounded_memory():
        typed(lambda: trace_stats(p, cap, format=form, skip_bad_lines=skip))
        sim = small_simulator()
        typed(lambda: sim.replay(p, format=form, skip_bad_lines=skip))
        typed(lambda: sim.replay(p, format=form, skip_bad_lines=skip, mode="as-fast-as-possible", iodepth=4))


def _trace_test(fmt: str) -> Callable[..., None]:
    @settings(FUZZ, max_examples=50)
    @given(data=st.data(), auto=st.booleans(), skip=st.booleans())
    def test(tmp_path: Path, data: st.DataObject, auto: bool, skip: bool) -> None:
        _fuzz_trace(tmp_path, fmt, data.draw(mutated_trace(fmt)), auto, skip)

    return test


@pytest.mark.parametrize("fmt", sorted(TRACE_SAMPLES))
def test_mutated_trace_lines_give_records_or_a_typed_error(tmp_path_factory: pytest.TempPathFactory, fmt: str) -> None:
    tmp = tmp_path_factory.mktemp(f"fuzz-{fmt}")
    _trace_test(fmt)(tmp)


# ---------------------------------------------------------------------------
# jobs and replay options
# ---------------------------------------------------------------------------

JOB_KEYS = ["name", "rw", "readwrite", "bs", "bssplit", "blockalign", "offset", "size", "io_size", "io_limit", "number_ios", "runtime",
            "time_based", "iodepth", "rwmixread", "rwmixwrite", "data_pattern", "refill_buffers", "scramble_buffers",
            "buffer_compress_percentage", "zero_buffers", "log_avg_msec", "randseed", "force", "depth", "qd", "pattern"]
RW = ["read", "write", "randread", "randwrite", "readwrite", "rw", "randrw", "trim", "randtrim"]


@st.composite
def job(draw: st.DrawFn) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    if draw(st.booleans()):
        out["rw"] = draw(st.sampled_from(RW))
    for key in draw(st.lists(st.sampled_from(JOB_KEYS), max_size=6, unique=True)):
        out[key] = draw(values)
    return out


@FUZZ
@given(j=job())
def test_random_jobs_parse_and_run_or_give_a_typed_error(j: Dict[str, Any]) -> None:
    sim = small_simulator()
    parsed = typed(lambda: sim.parse_job(j))
    if parsed is None:
        return
    # Run it, bounded to a few MB of transfer (the keys decide everything else).
    biggest = max(s["bytes"] for s in parsed["sizes"])
    bounded = {**parsed.given, "number_ios": max(1, min(200, (8 << 20) // biggest)), "force": parsed.given.get("force")}
    with bounded_memory():
        r = typed(lambda: sim.run(bounded))
    if r is not None:
        assert r.data["read"]["total_ios"] + r.data["write"]["total_ios"] + r.data["trim"]["total_ios"] <= bounded["number_ios"]


REPLAY_KEYS = ["mode", "iodepth", "idle_cap", "idle_cap_ns", "log_avg_msec", "number_ios", "runtime", "runtime_ns", "name",
               "lay_down_reads"]


@FUZZ
@given(opts=st.dictionaries(st.sampled_from(REPLAY_KEYS), scalars, max_size=4))
def test_random_replay_options_replay_or_give_a_typed_error(traces_dir: Path, opts: Dict[str, Any]) -> None:
    trace = traces_dir / "msr_cambridge_hm0_sample" / "msr-cambridge1-sample.csv"
    sim = small_simulator()
    with bounded_memory():
        typed(lambda: sim.replay(trace, **opts))
