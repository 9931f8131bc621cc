"""Block I/O traces: statistics of real trace files and of the generated
Storage Bench traces, side by side with the published figures.

Import and generation stream inside the engine in flat memory; Python sees
only the summaries (dicts with a unit in every key).
"""

from __future__ import annotations

import os
import tempfile
from typing import Any, Dict, List, Optional, Union

from . import _core
from ._args import path_text, whole
from .errors import SsdlabError
from .outputs import OutputError, check_file, replace_into

__all__ = [
    "TRACE_FORMATS",
    "trace_stats",
    "generated_stats",
    "published_stats",
    "write_generated_trace",
    "storage_bench_traces",
]

TRACE_FORMATS = ("auto", "msr", "systor17", "umass", "disksim", "tencent", "blkparse", "fio-iolog", "csv")

#: Capacity used when none is given: the generic 120GB preset's 120e9 B.
DEFAULT_CAPACITY_BYTES = 120_000_000_000


def trace_stats(
    path: Union[str, "os.PathLike[str]"],
    capacity_bytes: int = DEFAULT_CAPACITY_BYTES,
    *,
    format: str = "auto",
    device: Optional[str] = None,
    device_mapping: str = "merge",
    device_region_bytes: Optional[int] = None,
    out_of_range: str = "fold",
    skip_bad_lines: bool = False,
    data_pattern: Optional[str] = None,
    compare_with: Optional[str] = None,
    reorder_window_records: Optional[int] = None,
    memory_limit_bytes: Optional[int] = None,
) -> Dict[str, Any]:
    """Import a trace file (gzip/bzip2/xz detected) and summarise it.

    Returns ``{"file", "stats", "import"}`` (plus ``"published"`` and
    ``"comparison"`` with ``compare_with`` = a Storage Bench id).
    ``reorder_window_records`` (default 65536) must fit in
    ``memory_limit_bytes`` (default 8 GiB). Raises TraceError naming the
    file, line and field of a bad record."""
    opts: Dict[str, Any] = {
        "capacity_bytes": whole(capacity_bytes, "capacity_bytes", low=1),
        "format": format,
        "device": device,
        "device_mapping": device_mapping,
        "device_region_bytes": device_region_bytes,
        "out_of_range": out_of_range,
        "skip_bad_lines": skip_bad_lines,
        "data_pattern": data_pattern,
        "compare_with": compare_with,
        "reorder_window_records": reorder_window_records,
        "memory_limit_bytes": memory_limit_bytes,
    }
    opts = {k: v for k, v in opts.items() if v is not None}
    return dict(_core.trace_stats(path_text(path, "file"), opts))


def generated_stats(bench: str, capacity_bytes: int = DEFAULT_CAPACITY_BYTES, seed: int = 1) -> Dict[str, Any]:
    """Generate a Storage Bench trace (streamed, not stored) and summarise it:
    ``{"bench", "name", "capacity_bytes", "seed", "stats", "published", "comparison"}``."""
    return dict(_core.generated_trace_stats(bench, whole(capacity_bytes, "capacity_bytes", low=1), whole(seed, "seed")))


def published_stats(bench: str) -> Dict[str, Any]:
    """The published figures of a Storage Bench trace (docs/storage-bench.md)."""
    return dict(_core.published_stats(bench))


def storage_bench_traces() -> List[Dict[str, Any]]:
    """``[{"id", "name", "records", "duration_s"}]`` for every Storage Bench trace."""
    return list(_core.storage_bench_traces())


def write_generated_trace(
    bench: str,
    path: Union[str, "os.PathLike[str]"],
    capacity_bytes: int = DEFAULT_CAPACITY_BYTES,
    seed: int = 1,
    format: Optional[str] = None,
) -> int:
    """Write a generated trace: ``fio-iolog`` (fio iolog v3, replayable with
    ``fio --read_iolog=FILE --replay_redirect=/dev/sdX``) or ``csv`` (every
    field: time_ns, op, offset_bytes, length_bytes, iodepth,
    recorded_latency_ns, data_pattern; ``trace_stats`` and replays read it
    back as format ``csv``). ``format`` None takes it from the extension:
    ``.csv``, or ``.iolog`` / ``.log`` for fio-iolog; another extension is a
    TraceError listing them. Returns the number of records."""
    p = path_text(path, "path")
    cap, sd = whole(capacity_bytes, "capacity_bytes", low=1), whole(seed, "seed")
    real = check_file(p, "trace output")
    # the engine writes a hidden file beside the real one (same extension: it names the format), renamed when whole
    fd, tmp = tempfile.mkstemp(prefix=f".{real.name}-", suffix=real.suffix, dir=real.parent)
    os.close(fd)
    try:
        n = int(_core.write_generated_trace(bench, cap, sd, tmp, format))
        replace_into(tmp, real, "trace output")
    except SsdlabError as e:
        err = type(e)(str(e).replace(tmp, p))
        err.__dict__.update({k: (v.replace(tmp, p) if isinstance(v, str) else v) for k, v in vars(e).items()})
        raise err from None
    except OSError as e:
        raise OutputError(f"cannot write {p}: {e.strerror or e}; nothing was written to it") from None
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)
    return n
