"""The thin binding itself (``ssdlab._core``): plain data in (parsed once by
the engine), dicts and numpy arrays out, typed exceptions with the field
named."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from ssdlab import _core


def test_a_drive_is_parsed_once_into_a_value_with_its_json_hash_and_geometry(small_drive: dict) -> None:
    d = _core.DriveConfig.from_json(json.dumps(small_drive))
    assert _core.DriveConfig.from_json(d.json).json == d.json
    cfg = json.loads(d.json)
    assert cfg["nand"]["pe_cycles_rated"] == 3000  # defaults filled in
    g = d.geometry
    assert g["dies"] == 4 and g["raw_bytes"] == 4 * 64 * 64 * 4096
    assert g["user_bytes"] == small_drive["drive"]["user_capacity_bytes"] == d.capacity_bytes
    assert g["spare_fraction"] == pytest.approx(0.25, abs=0.001)
    assert len(d.hash) == 16 and d.id == "test-small"
    with pytest.raises(_core.ConfigError) as e:
        _core.DriveConfig.from_toml("[drive]\nid = 'x'\n")
    assert "missing" in str(e.value)
    doc = _core.drive_document("[drive]\nid = 'x'\n")
    assert doc == {"drive": {"id": "x"}}


def test_the_simulator_runs_phases_and_returns_dicts_and_uint64_arrays(small_drive: dict) -> None:
    drive = _core.DriveConfig.from_json(json.dumps(small_drive))
    sim = _core.Simulator(drive, seed=5, check=True, memory_limit_bytes=1 << 30)
    assert (sim.seed, sim.checking, sim.memory_limit_bytes, sim.now_ns) == (5, True, 1 << 30, 0)
    assert sim.geometry["dies"] == 4 and sim.drive.hash == drive.hash
    job = _core.parse_workload({"rw": "randwrite", "bs": "4k", "iodepth": 4, "runtime": "0.5s", "log_avg_msec": 100}, sim.capacity_bytes)
    d, series = sim.run(job)
    assert d["write"]["total_ios"] > 0 and d["interrupted"] is False and d["iodepth"] == 4
    assert set(series) >= {"time_ns", "read_ios", "write_ios", "trim_ios", "lat_p50_ns", "lat_max_ns"}
    assert all(isinstance(v, np.ndarray) and v.dtype == np.uint64 for v in series.values())
    assert int(series["write_ios"].sum()) == d["write"]["total_ios"]
    assert sim.now_ns == 500_000_000
    for out in (sim.idle(10**9), sim.trim(0, 1 << 20), sim.secure_erase()):
        assert out[0]["kind"] in ("idle", "trim", "secure_erase")
    sim.flush()
    sim.check()
    assert sim.smart()["mapped_bytes"] == 0
    for twin in (sim.clone(), copy.copy(sim), copy.deepcopy(sim)):
        assert twin.now_ns == sim.now_ns and twin is not sim
    assert "test-small" in repr(sim)


def test_replay_options_and_sources_are_parsed_by_the_engine(small_drive: dict) -> None:
    sim = _core.Simulator(_core.DriveConfig.from_json(json.dumps(small_drive)))
    with pytest.raises(_core.WorkloadError) as e:
        sim.replay({"generated": "typical-2010"}, {"queue_depth": 4})
    assert e.value.field == "queue_depth" and "'iodepth'" in str(e.value)  # type: ignore[attr-defined]
    with pytest.raises(_core.WorkloadError) as e:
        sim.replay({"generated": "typical-2010"}, {"idle_cap": "25ms", "idle_cap_ns": 25_000_000})
    assert e.value.field == "idle_cap_ns"  # type: ignore[attr-defined]
    with pytest.raises(_core.WorkloadError) as e:
        sim.replay({"generated": "typical-2011"})
    assert e.value.field == "generated"  # type: ignore[attr-defined]


def test_workload_parsing_and_size_and_time_units() -> None:
    w = _core.parse_workload({"rw": "write", "bs": "128k", "size": "1g"}, 10**10).to_dict()
    assert (w["rw"], w["size_bytes"], w["io_limit_bytes"]) == ("write", 1 << 30, 1 << 30)
    assert _core.parse_workload({"rw": "write", "iodepth": 7}, 10**10).iodepth == 7
    assert _core.parse_size_bytes("4k") == 4096 and _core.parse_size_bytes("120GB") == 120 * 2**30
    assert _core.parse_size_bytes("50%", 1000 * 512) == 500 * 512
    assert _core.parse_duration_ns("1.5ms") == 1_500_000 and _core.parse_duration_ns("2") == 2 * 10**9
    assert _core.parse_data_pattern("ratio:0.5") == "ratio:0.5"
    with pytest.raises(_core.WorkloadError) as e:
        _core.parse_size_bytes("lots", field="capacity")
    assert e.value.field == "capacity"  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match="plain data"):
        _core.parse_workload({"rw": object()}, 10**9)
    with pytest.raises(_core.WorkloadError) as e:
        _core.parse_workload({"rw": "write", "pattern": "zeros"}, 10**9)
    assert "'data_pattern'" in str(e.value)


def test_errors_in_the_core_module_are_one_hierarchy() -> None:
    assert _core.SsdlabError.__module__ == "ssdlab._core"
    for name in ("ConfigError", "WorkloadError", "MemoryLimitError", "IntegrityError", "TraceError", "DriveError"):
        assert issubclass(getattr(_core, name), _core.SsdlabError)
    assert _core.version() and _core.default_memory_limit_bytes() == 8 << 30 and _core.UNIT_BYTES == 4096
