"""ssdlab sweep / ssdlab.sweep(): spare area x GC policy on the consistency
test, in this process, on a LocalCluster and on a scheduler started by the
test, with identical tables; the settings' syntax; the files written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ssdlab
from conftest import assert_one_line_error, make_drive, run_cli
from ssdlab import Drive
from ssdlab.errors import SsdlabError
from ssdlab.sweep import apply_settings, parse_setting

SETTINGS = {"ftl.gc_policy": ["greedy", "cost-benefit"], "spare": [0.07, 0.12, 0.25]}


@pytest.fixture(scope="module")
def drive() -> Drive:
    return Drive.load(make_drive(dies=4, blocks=128, pages=64, drive_id="sweep-small"))


def test_spare_area_by_gc_policy_gives_one_table_in_process_on_a_local_cluster_and_on_a_scheduler(
        drive: Drive, scheduler_address: str, tmp_path: Path) -> None:
    here = ssdlab.sweep(drive, SETTINGS, test="consistency", scale="quick", jobs=1)
    local = ssdlab.sweep(drive, SETTINGS, test="consistency", scale="quick", jobs=2)
    remote = ssdlab.sweep(drive, SETTINGS, test="consistency", scale="quick", scheduler=scheduler_address,
                          out=tmp_path / "out")
    assert len(here) == 6
    assert here.equals(local) and here.equals(remote)
    assert list(here.columns[:4]) == ["run", "drive", "ftl.gc_policy", "spare"]
    assert here["spare_fraction"].round(3).tolist() == [0.07, 0.12, 0.25] * 2
    # more spare area, steadier random writes: the mean IOPS of the default run rises with it
    for policy in SETTINGS["ftl.gc_policy"]:
        iops = here[here["ftl.gc_policy"] == policy]["default: mean_iops (IOPS)"].tolist()
        assert iops == sorted(iops) and iops[-1] > 1.5 * iops[0], iops
    import pandas as pd

    back = pd.read_parquet(tmp_path / "out" / "sweep.parquet")
    assert back["default: mean_iops (IOPS)"].tolist() == remote["default: mean_iops (IOPS)"].tolist()
    csv = pd.read_csv(tmp_path / "out" / "sweep.csv")
    assert len(csv) == 6 and "25% OP: min_iops (IOPS)" in csv.columns
    page = (tmp_path / "out" / "index.html").read_text()
    # one chart per figure of the two consistency runs (5 each: the quick scale's 3 s rounds give no SNIA figure)
    assert page.count("<figure>") == 10 and "data:image/png;base64," in page and "http" not in page.split("<h2>")[0]


def test_settings_take_lists_ranges_units_and_percentages() -> None:
    assert parse_setting("ftl.gc_policy=greedy,cost-benefit") == ("ftl.gc_policy", ["greedy", "cost-benefit"])
    assert parse_setting("nand.tprog_ns=900us..2ms:5") == ("nand.tprog_ns", [900_000, 1_175_000, 1_450_000, 1_725_000, 2_000_000])
    assert parse_setting("spare=7%,12%,25%") == ("spare", [0.07, 0.12, 0.25])
    assert parse_setting("controller.write_buffer_bytes=1m,4m") == ("controller.write_buffer_bytes", [1 << 20, 4 << 20])
    assert parse_setting("controller.command_slots=1..3:3") == ("controller.command_slots", [1, 2, 3])
    for bad in ("nand.tprog_ns", "tprog=1", "spare=0%", "nand.tprog_ns=1ms,1ms", "nand.tprog_ns=fast..slow:3"):
        with pytest.raises(SsdlabError):
            parse_setting(bad)


def test_spare_sets_the_user_capacity_on_the_same_nand(drive: Drive) -> None:
    d = apply_settings(drive, {"spare": 0.12, "nand.tprog_ns": 1_200_000})
    assert d.geometry["raw_bytes"] == drive.geometry["raw_bytes"]
    assert d.geometry["spare_fraction"] == pytest.approx(0.12, abs=1e-3)
    assert d.config["nand"]["tprog_ns"] == 1_200_000


def test_the_sweep_command_writes_the_table_and_page(drive: Drive, tmp_path: Path) -> None:
    f = tmp_path / "d.json"
    f.write_text(json.dumps(drive.config))
    cp = run_cli("sweep", "--drive", str(f), "--set", "nand.tprog_ns=900us..1.8ms:2", "--test", "corners-seq-write-128k",
                 "--quick", "--out", str(tmp_path / "o"), "--jobs", "1", "--json", timeout=600)
    assert cp.returncode == 0, cp.stderr
    rows = json.loads(cp.stdout)
    assert [r["nand.tprog_ns"] for r in rows] == [900_000, 1_800_000]
    # slower programs, slower sequential writes
    col = next(k for k in rows[0] if k.startswith("incompressible"))
    assert rows[1][col] < rows[0][col]
    assert (tmp_path / "o" / "sweep.parquet").is_file() and (tmp_path / "o" / "index.html").is_file()
    assert_one_line_error(run_cli("sweep", "--drive", str(f), "--set", "nand.tprog_us=1", "--out", str(tmp_path / "x")),
                          "nand.tprog_us")
    assert_one_line_error(run_cli("sweep", "--set", "spare=1", "--test", "nope", "--out", str(tmp_path / "x")), "unknown test")
