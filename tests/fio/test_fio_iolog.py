"""Storage Bench iologs a real target can replay: written by ssdlab (nothing
else writes them), fitted to the target (no file grown to 118 GB), aligned,
bounded by the file itself (fio 3.33 ignores number_ios on replay), TRIMs
handled for fios that skip them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import List

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ssdlab.fio import iolog
from ssdlab.fio import run as fio_run
from ssdlab.fio.errors import FioOutputError
from ssdlab.fio.iolog import rewrite_iolog, scale_offset, write_storage_bench_iolog

needs_fio = pytest.mark.skipif(fio_run.shutil.which("fio") is None, reason="fio is not installed (.ci/run installs Debian's fio)")

GB = 1_000_000_000


def records(path: Path) -> List[List[str]]:
    return [line.split() for line in path.read_text().splitlines()[1:]]


@settings(max_examples=300, deadline=None)
@given(
    offset=st.integers(0, 120 * GB),
    length=st.integers(1, 8 << 20),
    target=st.integers(GB // 8, 64 * GB),
    align=st.sampled_from([512, 4096]),
    mode=st.sampled_from(["scale", "fold"]),
)
@example(offset=120 * GB - 512, length=8 << 20, target=GB // 8, align=4096, mode="scale")
@example(offset=GB // 8 - 4096, length=1 << 20, target=GB // 8, align=512, mode="fold")
@example(offset=5 * GB, length=3584, target=GB // 8, align=4096, mode="fold")
def test_a_moved_io_is_aligned_and_inside_the_target(offset: int, length: int, target: int, align: int, mode: str) -> None:
    off, ln = scale_offset(offset, length, 120 * GB, target, align_bytes=align, mode=mode)
    assert off % align == 0 and ln % align == 0 and ln >= length
    assert 0 <= off and off + ln <= target


def test_scaling_keeps_runs_inside_a_chunk_sequential() -> None:
    base = 7 * (1 << 30)
    moved = [scale_offset(base + i * 4096, 4096, 120 * GB, 12 * GB)[0] for i in range(256)]  # one MiB-chunk
    assert [b - a for a, b in zip(moved, moved[1:])] == [4096] * 255
    assert moved[0] == pytest.approx(base / 10, rel=0.01)


def test_the_iolog_is_written_for_the_target_bounded_and_renamed(tmp_path: Path) -> None:
    out = tmp_path / "light.iolog"
    s = write_storage_bench_iolog("light-2011", out, target_bytes=2 * GB, filename="/dev/sdz", align_bytes=4096, max_ios=5000)
    assert s.truncated and s.records == 5000 == s.reads + s.writes + s.trims
    lines = out.read_text().splitlines()
    assert lines[0] == "fio version 3 iolog"
    recs = records(out)
    assert all(r[1] == "/dev/sdz" for r in recs)
    assert recs[0][2] == "add" and recs[-1][2] == "close"
    ios = [r for r in recs if len(r) == 5]
    assert len(ios) == 5000
    assert all(int(r[3]) % 4096 == 0 and int(r[4]) % 4096 == 0 and int(r[3]) + int(r[4]) <= 2 * GB for r in ios)
    assert max(int(r[3]) + int(r[4]) for r in ios) == s.max_end_bytes
    times = [int(r[0]) for r in recs]
    assert times == sorted(times) and int(recs[-1][0]) == s.duration_us
    t = write_storage_bench_iolog("light-2011", tmp_path / "t.iolog", target_bytes=2 * GB, max_time_us=10_000_000)
    assert t.truncated and t.duration_us <= 10_000_000 and 0 < t.records < s.records


def test_an_iolog_for_a_big_drive_is_scaled_onto_a_small_target(tmp_path: Path) -> None:
    from ssdlab.trace import write_generated_trace

    big = tmp_path / "big.iolog"
    write_generated_trace("typical-2010", big, capacity_bytes=120 * GB, seed=1, format="fio-iolog")
    assert max(int(r[3]) + int(r[4]) for r in records(big) if len(r) == 5) > 50 * GB
    small = tmp_path / "small.iolog"
    s = rewrite_iolog(big, small, target_bytes=2 * GB, source_bytes=120 * GB, align_bytes=4096)
    assert s.max_end_bytes <= 2 * GB and s.adjusted > 0 and not s.truncated
    assert s.records == sum(1 for r in records(big) if len(r) == 5)


def test_trims_are_kept_dropped_or_refused(tmp_path: Path) -> None:
    src = tmp_path / "t.iolog"
    src.write_text("fio version 3 iolog\n0 /dev/x add\n0 /dev/x open\n5 /dev/x write 0 4096\n9 /dev/x trim 0 4096\n"
                   "12 /dev/x read 0 4096\n12 /dev/x close\n")
    kept = rewrite_iolog(src, tmp_path / "k.iolog", target_bytes=GB)
    assert (kept.records, kept.trims, kept.dropped_trims) == (3, 1, 0)
    dropped = rewrite_iolog(src, tmp_path / "d.iolog", target_bytes=GB, trims="drop")
    assert (dropped.records, dropped.trims, dropped.dropped_trims) == (2, 0, 1)
    assert "trim" not in (tmp_path / "d.iolog").read_text()
    with pytest.raises(FioOutputError) as ei:
        rewrite_iolog(src, tmp_path / "e.iolog", target_bytes=GB, trims="error")
    assert ei.value.line == 5 and "3.34" in str(ei.value)


@pytest.mark.parametrize(
    "text,line",
    [("fio version 2 iolog\n/dev/x add\n", 1), ("fio version 3 iolog\n0 /dev/x write 0\n", 2),
     ("fio version 3 iolog\n0 /dev/x write zero 4096\n", 2)],
)
def test_a_bad_iolog_names_the_line(tmp_path: Path, text: str, line: int) -> None:
    src = tmp_path / "bad.iolog"
    src.write_text(text)
    with pytest.raises(FioOutputError) as ei:
        rewrite_iolog(src, tmp_path / "o.iolog", target_bytes=GB)
    assert ei.value.line == line


def test_main_writes_an_iolog_or_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "g.iolog"
    assert iolog.main(["gaming-2010", "--target-bytes", "2g", "--out", str(out), "--max-ios", "100", "--align", "4k"]) == 0
    assert "100 I/Os" in capsys.readouterr().out and len(records(out)) == 103
    assert iolog.main(["gaming-2010", "--target-bytes", "100m", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "1 GB" in err


@needs_fio
def test_real_fio_replays_the_bounded_iolog_on_a_test_file_without_growing_it(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    r = iolog.replay_on_target("typical-2010", target, size_bytes=GB, max_ios=2000, no_stall=True, workdir=tmp_path / "w")
    assert r.iolog.records == 2000 and r.iolog.max_end_bytes <= GB
    res = r.fio.result
    assert res is not None and not r.fio.interrupted
    job = res.jobs[0]
    # Exactly the bounded iolog was replayed: fio's own counts match it.
    assert (job.read.total_ios, job.write.total_ios) == (r.iolog.reads, r.iolog.writes)
    assert any("bounded" in n for n in r.notes)
    assert list(target.iterdir()) == [], "the test file is removed"
    assert not any(p.name.endswith(".dat") for p in (tmp_path / "w").rglob("*")), "no stray data file"
    assert os.path.getsize(tmp_path / "w" / "typical-2010.iolog") > 0
