"""Ctrl-C and SIGTERM stop a long command the same way.

Ctrl-C raises ``KeyboardInterrupt`` in the main thread; every long command
catches it, keeps what finished (phases, tests, trials, fio jobs), prints or
writes it marked INTERRUPTED and exits 130. :func:`sigterm_interrupts` makes
SIGTERM (``kill PID``, a job scheduler's time limit, ``docker stop``) raise
:class:`Terminated`, a ``KeyboardInterrupt``, so the same code keeps what
finished; the command then exits 143 (128 + SIGTERM) instead of 130.

The engine checks for signals about once per interval of simulated time (see
:mod:`ssdlab.sim`), so a phase stops within a fraction of a second of either.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from types import FrameType
from typing import Iterator, Optional

__all__ = ["EXIT_INTERRUPTED", "EXIT_TERMINATED", "Terminated", "sigterm_interrupts", "note_terminated", "terminated",
           "reset", "interrupted_exit_code"]

#: Exit status after Ctrl-C (128 + SIGINT).
EXIT_INTERRUPTED = 130
#: Exit status after SIGTERM (128 + SIGTERM).
EXIT_TERMINATED = 143

_terminated = False


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread as Ctrl-C is (caught wherever
    ``KeyboardInterrupt`` is)."""


def note_terminated() -> None:
    """Record that a SIGTERM arrived (for handlers of their own, e.g. the one
    that stops fio)."""
    global _terminated
    _terminated = True


def terminated() -> bool:
    """True once a SIGTERM arrived (since :func:`reset`)."""
    return _terminated


def reset() -> None:
    """Forget an earlier SIGTERM (a new command in the same process)."""
    global _terminated
    _terminated = False


def interrupted_exit_code() -> int:
    """143 after SIGTERM, else 130."""
    return EXIT_TERMINATED if _terminated else EXIT_INTERRUPTED


def _on_sigterm(signum: int, frame: Optional[FrameType]) -> None:
    note_terminated()
    raise Terminated()


@contextlib.contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`Terminated` in the main thread
    (a second SIGTERM raises again, as a second Ctrl-C does). Elsewhere than
    in the main thread signals are left alone."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)
