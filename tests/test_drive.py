"""Drive descriptions: presets, files, dicts, "what if" changes; the engine
validates every one and names the field it rejects."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ssdlab
from conftest import run_cli
from ssdlab import ConfigError, Drive, SsdlabError


def test_the_generic_preset_is_shipped_with_its_description() -> None:
    ids = [p.id for p in Drive.presets()]
    assert "generic-mlc-120" in ids
    p = next(p for p in Drive.presets() if p.id == "generic-mlc-120")
    assert p.user_capacity_bytes == 120_000_000_000
    assert p.dies == 16
    assert "SATA" in p.description


def test_a_120GB_drive_has_16_dies_and_about_14_percent_spare() -> None:
    d = Drive.load("generic-mlc-120")
    g = d.geometry
    assert (d.id, d.capacity_bytes) == ("generic-mlc-120", 120_000_000_000)
    assert g["dies"] == 16 and g["channels"] == 8
    assert g["raw_bytes"] == 128 * 2**30
    assert 0.14 < g["spare_fraction"] < 0.15
    assert 100 * 2**20 < d.memory_estimate_bytes < 1 * 2**30
    assert d.memory_estimate_check_bytes > d.memory_estimate_bytes
    assert len(d.hash) == 16 and d.hash == Drive.load("generic-mlc-120").hash


def test_dict_toml_and_json_files_load_to_the_same_drive(tmp_path: Path, small_drive: dict) -> None:
    a = Drive.load(small_drive)
    jf = tmp_path / "d.json"
    jf.write_text(json.dumps(small_drive))
    b = Drive.load(jf)
    lines = []
    for section, fields in small_drive.items():
        lines.append(f"[{section}]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in fields.items()]
    tf = tmp_path / "d.toml"
    tf.write_text("\n".join(lines))
    c = Drive.load(str(tf))
    assert a == b == c
    assert a.hash == b.hash == c.hash
    assert Drive.load(a) is a


def test_unknown_preset_lists_the_presets() -> None:
    with pytest.raises(ConfigError) as e:
        Drive.load("no-such-drive")
    assert "generic-mlc-120" in str(e.value)
    assert e.value.field == "drive"  # type: ignore[attr-defined]


def test_a_bad_drive_file_names_the_file_and_the_field(tmp_path: Path, small_drive: dict) -> None:
    small_drive["nand"]["channels"] = 0
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(small_drive))
    with pytest.raises(ConfigError) as e:
        Drive.load(f)
    assert str(f) in str(e.value) and "nand.channels" in str(e.value)
    assert e.value.field == "nand.channels"  # type: ignore[attr-defined]


def test_a_missing_field_and_a_wrong_unit_are_named(small_drive: dict) -> None:
    del small_drive["nand"]["tr_ns"]
    with pytest.raises(ConfigError, match="tr_ns"):
        Drive.load(small_drive)
    small_drive["nand"]["tr_us"] = 50
    with pytest.raises(ConfigError, match="wrong unit.*tr_ns"):
        Drive.load(small_drive)


def test_with_changes_makes_a_new_validated_drive(small_drive: dict) -> None:
    d = Drive.load(small_drive)
    slow = d.with_changes({"nand.tprog_ns": 1_800_000, "ftl.gc_policy": "fifo"})
    assert slow.config["nand"]["tprog_ns"] == 1_800_000
    assert slow.config["ftl"]["gc_policy"] == "fifo"
    assert d.config["nand"]["tprog_ns"] == 900_000  # the original is unchanged
    assert slow.hash != d.hash
    assert slow.changes == {"nand.tprog_ns": 1_800_000, "ftl.gc_policy": "fifo"}


@pytest.mark.parametrize(
    "key, value, field",
    [
        ("nand.tprog_us", 5, "nand.tprog_us"),
        ("nand.tprog_ns", "fast", "nand.tprog_ns"),
        ("nand.tprog_ns", 0, "nand.tprog_ns"),
        ("ftl.gc_policy", "lru", "ftl.gc_policy"),
        ("nandx.tprog_ns", 5, "nandx"),
        ("tprog_ns", 5, "tprog_ns"),
    ],
)
def test_with_changes_rejects_a_bad_key_or_value_naming_it(small_drive: dict, key: str, value: object, field: str) -> None:
    with pytest.raises(ConfigError) as e:
        Drive.load(small_drive).with_changes({key: value})
    assert e.value.field == field  # type: ignore[attr-defined]
    assert field in str(e.value)
    assert "line 1 column" not in str(e.value)


def test_a_bad_change_to_a_library_value_says_it_came_from_the_change_and_what_is_allowed() -> None:
    with pytest.raises(ConfigError) as e:
        Drive.load("vertex3-480").with_changes({"ftl.max_map_entries": -1})
    msg = str(e.value)
    assert "value from the change (over profile sf-2281: 67108864)" in msg, msg
    assert "expected a whole number >= 0" in msg and "u64" not in msg, msg
    with pytest.raises(ConfigError) as e:
        Drive.load("vertex3-480").with_changes({"nand.raise": 3})
    assert "expected true or false" in str(e.value), str(e.value)


def test_errors_are_typed_value_errors() -> None:
    for cls in (
        ssdlab.ConfigError,
        ssdlab.WorkloadError,
        ssdlab.MemoryLimitError,
        ssdlab.IntegrityError,
        ssdlab.TraceError,
        ssdlab.DriveError,
    ):
        assert issubclass(cls, SsdlabError) and issubclass(cls, ValueError)
    from ssdlab import errors

    assert errors.ConfigError is ssdlab._core.ConfigError


def test_a_preset_is_a_profile_a_part_and_counts_and_says_where_each_value_comes_from() -> None:
    d = Drive.load("vertex3-120")
    assert d.config["drive"]["controller"] == "sf-2281" and d.config["drive"]["nand_part"] == "imft-25nm-l74a"
    p = d.provenance
    assert p["nand.tprog_ns"] == "part imft-25nm-l74a"
    assert p["controller.command_cost_write_ns"] == "profile sf-2281"
    assert p["nand.channels"] == "drive file"
    assert d.overrides == []
    # A what-if on a library value is an override, shown as a change.
    slow = d.with_changes({"nand.tprog_ns": 1_800_000})
    assert slow.provenance["nand.tprog_ns"] == "change (over part imft-25nm-l74a: 1300000)"
    assert [o[0] for o in slow.overrides] == ["nand.tprog_ns"]
    # Swapping the part keeps the counts and takes the new part's values.
    other = d.with_changes({"drive.nand_part": "toshiba-24nm-toggle"})
    assert other.config["nand"]["tprog_ns"] == 1_000_000 and other.config["nand"]["channels"] == 8


def test_an_unknown_profile_or_part_names_the_field_and_the_known_ids() -> None:
    with pytest.raises(ConfigError) as e:
        Drive.load("vertex3-120").with_changes({"drive.controller": "sf-9999"})
    assert e.value.field == "drive.controller" and "sf-2281" in str(e.value)


def test_drive_parts_lists_the_library_with_the_presets_that_use_it() -> None:
    out = run_cli("drive", "parts")
    assert out.returncode == 0, out.stderr
    assert "sf-2281" in out.stdout and "vertex3-120" in out.stdout and "imft-25nm-l74a" in out.stdout
    one = run_cli("drive", "parts", "imft-25nm-l74a")
    assert one.returncode == 0 and "tprog_ns = 1_300_000" in one.stdout
    shown = run_cli("drive", "show", "vertex3-120")
    assert "# part imft-25nm-l74a" in shown.stdout and "# profile sf-2281" in shown.stdout
