"""Dask underneath the runner: connecting to a scheduler (with a handshake
check first), stopping a LocalCluster's workers, and the task function the
workers run."""


from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from typing import Any, Iterator, List, Optional

from ..errors import SsdlabError
from .plan import RunResult, Task, execute_task


@contextlib.contextmanager
def _sigint_ignored() -> Iterator[None]:
    """SIGINT ignored while child processes start (only from the main thread)."""
    try:
        old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


def _distributed() -> Any:
    """The ``distributed`` package (Dask's cluster runtime; untyped)."""
    import importlib

    try:
        return importlib.import_module("distributed")
    except ImportError:  # pragma: no cover - a dependency of ssdlab
        raise RuntimeError("running on Dask needs the distributed package: pip install 'dask[distributed]'") from None


#: Seconds to reach a scheduler given by address.
_CONNECT_TIMEOUT_S = 10


#: The largest first message a Dask scheduler sends (its handshake is a few hundred bytes).
_HANDSHAKE_MAX_BYTES = 1 << 20


def _handshake_problem(sock: Any) -> Optional[str]:
    """None when the peer speaks Dask's TCP protocol, else what it did
    instead. A Dask server writes its handshake as soon as a connection
    opens: 8 bytes (little-endian) giving the length of the frames that
    follow. Anything else (an HTTP server waits for a request; a silent
    port never answers) would make Dask's client read a length out of
    foreign bytes (and try to allocate it) or wait for ever."""
    import socket
    import struct

    head = b""
    try:
        while len(head) < 8:
            chunk = sock.recv(8 - len(head))
            if not chunk:
                return "it closed the connection without a word" if not head else f"it sent {len(head)} bytes and closed"
            head += chunk
    except socket.timeout:
        return f"no handshake within {_CONNECT_TIMEOUT_S} s"
    except OSError as e:
        return f"the connection failed: {e.strerror or e}"
    (n,) = struct.unpack("<Q", head)
    if not 0 < n <= _HANDSHAKE_MAX_BYTES:
        shown = head.decode("ascii", "replace") if all(32 <= b < 127 for b in head) else head.hex()
        return f"its first bytes {shown!r} are not a Dask handshake"
    return None


def _connect(dd: Any, address: str) -> Any:
    """A client of the scheduler at ``address``, or one error saying why not
    (a malformed address, nothing listening, no answer in 10 s)."""
    import socket

    from distributed.comm.addressing import get_address_host_port

    where = f"scheduler {address}"
    try:
        host, port = get_address_host_port(address)
    except (ValueError, TypeError) as e:
        raise SsdlabError(f"{where}: not a scheduler address ({e}); give tcp://HOST:PORT (e.g. tcp://10.0.0.5:8786) "
                          "or 'sync'") from None
    try:  # fail in a moment when nothing listens (Dask would retry for its whole timeout)
        sock = socket.create_connection((host, port), timeout=_CONNECT_TIMEOUT_S)
    except OSError as e:
        raise SsdlabError(f"{where}: cannot reach the scheduler: {e.strerror or e}") from None
    with sock:
        problem = _handshake_problem(sock)
    if problem:
        raise SsdlabError(f"{where}: not a Dask scheduler ({problem}); give the address 'dask scheduler' printed "
                          "(tcp://HOST:8786 by default)")
    try:
        return dd.Client(address, timeout=_CONNECT_TIMEOUT_S)
    except (OSError, TimeoutError, ValueError) as e:
        raise SsdlabError(f"{where}: cannot connect to the scheduler: {e}") from None


#: Seconds a LocalCluster worker gets to stop when a run is interrupted, then
#: its process is killed (a task in the engine cannot be cancelled).
_STOP_GRACE_S = 0.5


def _stop_workers(cluster: Any) -> None:
    """Stop every worker process of a LocalCluster now (their tasks were
    cancelled: nobody waits for them); errors are left to ``close``."""

    async def stop() -> None:
        await asyncio.gather(*(w.close(timeout=_STOP_GRACE_S) for w in list(cluster.workers.values())),
                             return_exceptions=True)

    with contextlib.suppress(Exception):
        cluster.sync(stop)


def _quiet_shutdown() -> None:
    """In a LocalCluster's worker, before the cluster closes: nothing is left
    to report, and a heartbeat racing the scheduler's shutdown would print a
    connection traceback on the user's terminal."""
    logging.getLogger("distributed").setLevel(logging.CRITICAL)


def _execute_remote(task: Task) -> List[RunResult]:
    return execute_task(task)
