"""Optional packages, checked before a command does any work.

The fit, twin and sweep packages (Optuna, cmaes, pandas, pyarrow) are part of
the default install; an environment can still lack one (a trimmed install, a
vendored copy), so each command that needs them asks here first and gets one
error with the exact install line for how ssdlab was installed: the clone's
path for an install from a directory, the package name otherwise.

API: :func:`require` ``(extra, what)``; :func:`install_hint` ``(extra) -> str``.
"""

from __future__ import annotations

import importlib.util
import json
from typing import Dict, Optional, Tuple
from urllib.parse import unquote, urlparse

from .errors import SsdlabError

__all__ = ["EXTRAS", "MissingExtraError", "install_hint", "require"]

#: The modules each extra of pyproject.toml brings.
EXTRAS: Dict[str, Tuple[str, ...]] = {
    "fit": ("optuna", "cmaes"),
    "sweep": ("pandas", "pyarrow"),
    "twin": ("optuna", "cmaes", "pandas", "pyarrow"),
}


class MissingExtraError(SsdlabError):
    """A command needs a package this environment lacks."""


def _local_source() -> Optional[str]:
    """The directory ssdlab was installed from (pip's direct_url.json), if any."""
    try:
        from importlib.metadata import PackageNotFoundError, distribution
    except ImportError:  # pragma: no cover - Python < 3.8
        return None
    try:
        text = distribution("ssdlab").read_text("direct_url.json")
    except PackageNotFoundError:
        return None
    if not text:
        return None
    try:
        url = json.loads(text).get("url", "")
    except ValueError:
        return None
    parsed = urlparse(url)
    return unquote(parsed.path) if parsed.scheme == "file" else None


def install_hint(extra: str) -> str:
    """The pip command that installs ``extra`` for this installation."""
    src = _local_source()
    return f"pip install '{src}[{extra}]'" if src else f"pip install 'ssdlab[{extra}]'"


def require(extra: str, what: str) -> None:
    """Raise MissingExtraError (naming the missing modules and the install
    line) unless every module of ``extra`` can be imported."""
    missing = [m for m in EXTRAS[extra] if importlib.util.find_spec(m) is None]
    if missing:
        raise MissingExtraError(f"{what} needs {', '.join(missing)}, which this Python lacks: {install_hint(extra)}")
