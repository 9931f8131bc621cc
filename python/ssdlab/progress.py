"""A progress bar on stderr, in simulated time (or bytes for size-bounded phases).

Shown only when the stream is a terminal unless forced; redrawn at most every
``min_interval_s`` of wall time; never writes to stdout, so ``--json`` output
stays clean. One bar serves one phase (``Simulator.run(progress=bar)``) or a
sequence of phases, relabelled as each starts (:meth:`ProgressBar.phase`, the
suite runner's ``progress``).
"""

from __future__ import annotations

import sys
import time
from typing import Optional, TextIO

__all__ = ["ProgressBar"]

_WIDTH = 28


def _gb(b: int) -> str:
    return f"{b / 1e9:.2f} GB"


class ProgressBar:
    """A callable for ``Simulator.run(progress=...)``:
    ``bar(done_ns, total_ns, done_bytes, total_bytes)``."""

    def __init__(
        self,
        label: str,
        stream: Optional[TextIO] = None,
        force: Optional[bool] = None,
        min_interval_s: float = 0.1,
    ) -> None:
        self.label = label
        self.stream: TextIO = stream if stream is not None else sys.stderr
        if force is None:
            isatty = getattr(self.stream, "isatty", None)
            self.enabled = bool(isatty and isatty())
        else:
            self.enabled = force
        self.min_interval_s = min_interval_s
        self._last_draw: Optional[float] = None
        self._drawn = False
        self._start = time.monotonic()
        self.calls = 0

    def __call__(self, done_ns: int, total_ns: int, done_bytes: int, total_bytes: int) -> bool:
        self.calls += 1
        if not self.enabled:
            return True
        now = time.monotonic()
        if self._last_draw is not None and now - self._last_draw < self.min_interval_s:
            return True
        self._last_draw = now
        if total_ns > 0:
            frac = min(done_ns / total_ns, 1.0)
            text = f"{done_ns / 1e9:,.1f} of {total_ns / 1e9:,.1f} s simulated"
        elif total_bytes > 0:
            frac = min(done_bytes / total_bytes, 1.0)
            text = f"{_gb(done_bytes)} of {_gb(total_bytes)} (GB = 1e9 B), {done_ns / 1e9:,.1f} s simulated"
        else:
            frac = -1.0
            text = f"{done_ns / 1e9:,.1f} s simulated"
        wall = now - self._start
        if frac >= 0:
            filled = int(frac * _WIDTH)
            bar = "[" + "#" * filled + "." * (_WIDTH - filled) + f"] {frac * 100:5.1f}% "
        else:
            bar = ""
        line = f"\r{self.label}: {bar}{text}, {wall:.1f} s wall"
        self.stream.write(line + "\x1b[K")
        self.stream.flush()
        self._drawn = True
        return True

    def count(self, done: int, total: int, what: str, wall_s: float) -> None:
        """Draw ``done`` of ``total`` items (``what``: "tasks", "runs", ...)
        finished: the bar of many simulations at once (``ssdlab.cluster``)."""
        self.calls += 1
        if not self.enabled:
            return
        frac = min(done / total, 1.0) if total > 0 else 1.0
        filled = int(frac * _WIDTH)
        bar = "[" + "#" * filled + "." * (_WIDTH - filled) + f"] {frac * 100:5.1f}% "
        label = f"{self.label}: " if self.label else ""
        self.stream.write(f"\r{label}{bar}{done} of {total} {what} done, {wall_s:.1f} s wall\x1b[K")
        self.stream.flush()
        self._drawn = True

    def phase(self, label: str) -> "ProgressBar":
        """The bar for the next phase, under a new label (wall time from now)."""
        self.label = label
        self._start = time.monotonic()
        return self

    def close(self) -> None:
        """Erase the bar (the summary follows on its own lines)."""
        if self.enabled and self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._drawn = False
