"""Trace statistics on the sample real traces (tests/data/traces), the
generated Storage Bench traces against their published figures, and written
traces read back."""

from __future__ import annotations

from pathlib import Path

import pytest

from ssdlab import TraceError, WorkloadError
from ssdlab.trace import (
    generated_stats,
    published_stats,
    storage_bench_traces,
    trace_stats,
    write_generated_trace,
)

SAMPLE_TRACES = {
    # file, format, records, reads, writes
    "msr_cambridge_hm0_sample/msr-cambridge1-sample.csv": ("msr", 1000, 508, 492),
    "snia_systor17_sample/systor17-traces-sample.csv.gz": ("systor17", 999, 826, 173),
    "snia_systor17_sample/systor17-additional-sample.csv.gz": ("systor17", 999, 700, 299),
    "tencent_cbs_sample/cloud_storage-sample.bz2": ("tencent", 50_000, 24_521, 25_479),
    "umass_financial1_first10k/example.ascii": ("disksim", 10_000, 4_078, 5_922),
    "umass_websearch_mqsim_small/wsrch-small.trace": ("disksim", 24_783, 24_779, 4),
}


@pytest.mark.parametrize("name", sorted(SAMPLE_TRACES))
def test_every_sample_trace_is_read_whole_with_its_published_counts(traces_dir: Path, name: str) -> None:
    fmt, records, reads, writes = SAMPLE_TRACES[name]
    res = trace_stats(traces_dir / name, 2**40)
    imp, s = res["import"], res["stats"]
    assert imp["format"] == fmt
    assert (imp["records"], s["reads"], s["writes"]) == (records, reads, writes)
    assert imp["skipped_lines"] == 0
    assert imp["lines"] == imp["records"] + imp["non_io_lines"] + imp["filtered_other_devices"]
    assert sum(s["size_mix_percent"].values()) == pytest.approx(100.0)


def test_msr_response_times_give_busy_time_and_iodepth(traces_dir: Path) -> None:
    s = trace_stats(traces_dir / "msr_cambridge_hm0_sample/msr-cambridge1-sample.csv")["stats"]
    assert s["busy_time_ns"] == pytest.approx(0.534e9, rel=0.01)  # README: union of [issue, issue+ResponseTime]
    assert s["iodepth_source"] == "from_latencies"
    assert s["duration_ns"] == pytest.approx(127.2e9, rel=0.001)


def test_device_selection_and_folding(traces_dir: Path) -> None:
    f = traces_dir / "tencent_cbs_sample/cloud_storage-sample.bz2"
    whole = trace_stats(f, 2**40)
    assert whole["import"]["devices_seen"] == 2038
    dev = whole["import"]["device_names"][0]
    one = trace_stats(f, 2**40, device=dev)
    assert 0 < one["import"]["records"] < 50_000
    assert one["import"]["filtered_other_devices"] == 50_000 - one["import"]["records"]
    small = trace_stats(f, 10**9)
    assert small["import"]["folded"] > 0
    assert small["stats"]["highest_end_bytes"] <= 10**9
    with pytest.raises(TraceError, match="reject"):
        trace_stats(f, 10**9, out_of_range="reject")


def test_a_bad_line_is_named_with_file_line_and_field(tmp_path: Path) -> None:
    f = tmp_path / "bad.csv"
    f.write_text(
        "128166385295514663,hm,0,Write,9056014336,2048,2833\n"
        "128166385295514700,hm,0,Write,nine,2048,2833\n"
        "128166385295514800,hm,0,Read,9056014336,4096,2833\n"
    )
    with pytest.raises(TraceError) as e:
        trace_stats(f, format="msr")
    assert (e.value.file, e.value.line, e.value.field) == (str(f), 2, "Offset")  # type: ignore[attr-defined]
    assert str(e.value).startswith(f"{f}:2: field 'Offset'")
    ok = trace_stats(f, format="msr", skip_bad_lines=True)
    assert ok["import"]["skipped_lines"] == 1 and ok["stats"]["records"] == 2
    assert ok["import"]["skipped_examples"][0]["line"] == 2


def test_a_missing_file_and_bad_options_raise_typed_errors(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match="nope"):
        trace_stats(tmp_path / "nope.csv")
    with pytest.raises(WorkloadError, match="format"):
        trace_stats(tmp_path / "nope.csv", format="csv-ish")
    with pytest.raises(WorkloadError, match="out_of_range"):
        trace_stats(tmp_path / "nope.csv", out_of_range="wrap")
    with pytest.raises(WorkloadError, match="data_pattern"):
        trace_stats(tmp_path / "nope.csv", data_pattern="lumpy")


def test_generated_typical_2010_matches_every_published_figure() -> None:
    res = generated_stats("typical-2010", 120_000_000_000, seed=5)
    assert res["comparison"] and all(c["ok"] for c in res["comparison"]), res["comparison"]
    assert res["stats"]["reads"] == 37_501 and res["stats"]["writes"] == 20_268
    pub = published_stats("typical-2010")
    assert pub["iodepth_mean"]["value"] == 6.09 and pub["bench"] == "typical-2010"
    assert {w["id"] for w in storage_bench_traces()} >= {"heavy-2011", "light-2011", "destroyer-2013"}


def test_generation_is_deterministic_per_seed() -> None:
    a = generated_stats("gaming-2010", 64 * 10**9, seed=1)["stats"]
    b = generated_stats("gaming-2010", 64 * 10**9, seed=1)["stats"]
    c = generated_stats("gaming-2010", 64 * 10**9, seed=2)["stats"]
    assert a == b
    assert a != c


def test_generation_refuses_unknown_traces_and_tiny_drives() -> None:
    with pytest.raises(WorkloadError, match="heavy-2011") as e:
        generated_stats("heavy-2012")
    assert e.value.field == "bench"  # type: ignore[attr-defined]
    with pytest.raises(WorkloadError, match="capacity_bytes"):
        generated_stats("heavy-2011", 10**8)


@pytest.mark.parametrize("fmt", ["fio-iolog", "csv"])
def test_a_written_trace_reads_back_with_the_same_mix(tmp_path: Path, fmt: str) -> None:
    path = tmp_path / ("t.csv" if fmt == "csv" else "t.iolog")
    n = write_generated_trace("typical-2010", path, 120_000_000_000, seed=3)
    assert n == 37_501 + 20_268
    text = path.read_text().splitlines()
    if fmt == "csv":
        assert text[0] == "time_ns,op,offset_bytes,length_bytes,iodepth,recorded_latency_ns,data_pattern"
        assert len(text) == n + 1
        return
    assert text[0] == "fio version 3 iolog"
    back = trace_stats(path, 120_000_000_000, compare_with="typical-2010")
    assert back["import"]["format"] == "fio-iolog" and back["import"]["records"] == n
    gen = generated_stats("typical-2010", 120_000_000_000, seed=3)["stats"]
    assert back["stats"]["size_mix_percent"] == gen["size_mix_percent"]
    assert back["stats"]["sequential_share_percent"] == gen["sequential_share_percent"]
    by_figure = {c["figure"]: c["ok"] for c in back["comparison"]}
    assert by_figure["reads"] and by_figure["writes"] and by_figure["size_mix_percent[32KB]"]
