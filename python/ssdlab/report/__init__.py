"""The review report: one self-contained HTML page (inline CSS and JS, no
network fetches) with the charts as PNG and SVG files beside it in
``charts/``; built from results documents only, so ``ssdlab report`` rebuilds
it from saved results without simulating.

The page (:mod:`.page`) opens with the verdict (:mod:`.verdict`: headline
figures, a text per drive, a take per test) and the CrystalDiskMark-style
grids, then the drives (with launch prices, :mod:`.prices`), the spec sheet
against the measurements and every test, and the seed reviews' claims that
concern the report's drives (:mod:`.stories`). The charts (:mod:`.charts`) need
matplotlib, a dependency of the package: :func:`require_matplotlib` says so
in one line when it is missing, before anything runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Sequence

from ..errors import SsdlabError
from .labels import chart_values, drive_label

__all__ = ["build_report", "chart_values", "drive_label", "require_matplotlib"]


def require_matplotlib() -> None:
    """Raise SsdlabError (one line from the command) when matplotlib cannot be imported."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as e:
        raise SsdlabError(
            f"the report needs matplotlib, which cannot be imported here ({e}); it is a dependency of ssdlab: "
            "reinstall it (pip install ssdlab, or pip install 'matplotlib>=3.6')"
        ) from None


def build_report(docs: Sequence[Dict[str, Any]], out_dir: str, command: str = "") -> Path:
    """Write OUT/index.html, OUT/charts/*.png|svg and OUT/figures.csv from results documents."""
    require_matplotlib()
    from .page import build_report as _build

    return _build(docs, out_dir, command=command)
