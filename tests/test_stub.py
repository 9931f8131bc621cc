"""The extension's type stub matches the extension (mypy.stubtest), and the
package type-checks against it. mypy is in the test extras; these tests fail,
not skip, when it is missing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def _mypy(args: list, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_the_core_stub_matches_the_extension(tmp_path: Path) -> None:
    cp = _mypy(["mypy.stubtest", "ssdlab._core"], tmp_path)
    assert cp.returncode == 0, cp.stdout + cp.stderr


def test_the_package_type_checks(tmp_path: Path) -> None:
    cp = _mypy(["mypy", "--cache-dir", str(tmp_path / "cache"), "-p", "ssdlab"], tmp_path)
    assert cp.returncode == 0, cp.stdout + cp.stderr
