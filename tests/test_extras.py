"""A command that needs an optional package says so before any work, with
the install line for how ssdlab was installed."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any, Optional

import pytest

from conftest import assert_one_line_error, cli_in_process
from ssdlab import extras


def _without(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, package: Optional[str] = None) -> Any:
        return None if name in modules else real(name, package)

    monkeypatch.setattr(extras.importlib.util, "find_spec", find_spec)


@pytest.mark.parametrize("args, missing, extra", [
    (["sweep", "--drive", "generic-mlc-120", "--set", "spare=0.1,0.2", "--test", "as-ssd"], "pandas", "sweep"),
    (["fit", "--probe", "nowhere"], "optuna", "twin"),
    (["fit", "--profile", "sf-2281"], "optuna", "fit"),
    (["twin-report", "nowhere", "--quick"], "pandas", "twin"),
    (["calibrate", "--cross-validate"], "cmaes", "fit"),
])
def test_a_missing_package_is_named_before_any_work_with_the_install_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                          args: list, missing: str, extra: str) -> None:
    _without(monkeypatch, missing)
    out = ["--out", str(tmp_path / "o")] if args[0] == "sweep" else []
    cp = cli_in_process(*args, *out, timeout=30)
    line = assert_one_line_error(cp, missing, f"[{extra}]'")
    assert "internal error" not in line and "please report" not in line
    assert "pip install '" in line


def test_the_install_line_names_the_directory_ssdlab_was_installed_from(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extras, "_local_source", lambda: "/home/me/ssdlab")
    assert extras.install_hint("twin") == "pip install '/home/me/ssdlab[twin]'"
    monkeypatch.setattr(extras, "_local_source", lambda: None)
    assert extras.install_hint("sweep") == "pip install 'ssdlab[sweep]'"
