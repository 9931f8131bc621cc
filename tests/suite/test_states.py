"""Preconditioning states are data (ssdlab.suite.states): the simulator, the
suite runner and the fio export run the same phases, and only the states of
the methodology are accepted."""

from __future__ import annotations

from typing import Any, Dict

import pytest

from conftest import assert_one_line_error, make_drive, run_cli
from ssdlab import Simulator, WorkloadError
from ssdlab.backends import SuiteRunner
from ssdlab.suite import QUICK
from ssdlab.suite.fio import to_fio_jobfile
from ssdlab.suite.states import STATES, phases


def _names(state: Any) -> list:
    return [p.name for p in phases(state)]


def test_each_state_builds_on_the_one_before() -> None:
    assert STATES == ("clean", "filled", "dirty", "tortured", "trimmed")
    erase, fill = "precondition: secure erase", "precondition: sequential fill 128KB QD32"
    assert _names("clean") == [erase]
    assert _names("filled") == [erase, fill]
    assert _names("dirty") == [erase, fill, "precondition: second sequential pass"]
    assert _names("tortured") == [erase, fill, "precondition: torture 4KB random QD32"]
    assert _names("trimmed") == _names("dirty") + ["precondition: TRIM"]
    assert _names({"state": "trimmed", "from": "filled"}) == [erase, fill, "precondition: TRIM"]
    repeated = phases({"state": "dirty", "data_pattern": "repeated"})
    assert repeated[1].job["data_pattern"] == "repeated" and repeated[1].name == f"{fill} (repeated)"
    assert repeated[2].job["data_pattern"] == "incompressible"  # the second pass is always incompressible


@pytest.mark.parametrize("bad", ["fill", "shiny", {"state": "trimmed", "from": "fill"}])
def test_only_the_methodology_states_are_accepted(small_drive: Dict[str, Any], bad: Any) -> None:
    with pytest.raises(WorkloadError, match="precondition") as e:
        Simulator(small_drive).precondition(bad)
    assert "allowed: clean, filled, dirty, tortured, trimmed" in str(e.value)


def test_the_cli_rejects_fill_and_lists_the_states() -> None:
    cp = run_cli("run", "--rw", "write", "--precondition", "fill")
    assert_one_line_error(cp, "--precondition", "'filled'", "'trimmed'")


def test_the_simulator_runs_the_phases_the_state_lists(small_drive: Dict[str, Any]) -> None:
    sim = Simulator(small_drive)
    done = sim.precondition("tortured", torture_runtime="1s")
    assert [p.name for p in done] == _names("tortured")
    assert [p.kind for p in done] == ["secure_erase", "workload", "workload"]
    assert done[1].data["write"]["io_bytes"] == sim.capacity_bytes  # one whole pass
    assert done[2].duration_s == 1.0
    trimmed = Simulator(small_drive).precondition({"state": "trimmed", "from": "filled"}, span="8m")
    assert [p.kind for p in trimmed] == ["secure_erase", "workload", "trim"]
    assert trimmed[1].data["write"]["io_bytes"] == trimmed[2].data["trim"]["io_bytes"] == 8 << 20


def test_the_runner_reaches_the_same_state_as_the_simulator() -> None:
    drive = make_drive()
    runner = SuiteRunner(drive, scale=QUICK)
    state = {"state": "dirty", "data_pattern": "repeated"}
    via_runner, _ = runner.state(state)
    direct = Simulator(drive)
    direct.precondition(state)
    assert via_runner.now_ns == direct.now_ns and via_runner.smart() == direct.smart()


def test_the_fio_export_has_a_section_per_phase() -> None:
    test = {"id": "t", "title": "t", "runs": [{"state": {"state": "trimmed", "span": "1g"},
                                               "steps": [{"rw": "read", "bs": "4k", "iodepth": 1, "measure": "m"}]}]}
    text = to_fio_jobfile(test)  # type: ignore[arg-type]
    sections = [line[len("[run0-"):-1] for line in text.splitlines() if line.startswith("[run0-")]
    # The secure erase is not an fio job: the file says where to do it, in a comment.
    assert sections == [p.fio_section for p in phases("trimmed") if p.kind != "secure_erase"] + ["m"]
    assert "; [run0-secure-erase] secure-erase the drive here" in text and "hdparm" in text and "nvme format" in text
    # a named device gets the command of its interface only
    nvme = to_fio_jobfile(test, device="/dev/nvme0n1")  # type: ignore[arg-type]
    sata = to_fio_jobfile(test, device="/dev/sdb")  # type: ignore[arg-type]
    assert "nvme format /dev/nvme0n1" not in nvme and "nvme format DEV --ses=1" in nvme and "hdparm" not in nvme
    assert "ATA SECURITY ERASE" in sata and "nvme format" not in sata
    assert "runtime=1200s" not in text and "size=1g" in text and "exec_prerun" not in text and "filename" not in text
