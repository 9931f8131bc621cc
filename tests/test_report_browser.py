"""The report in a real browser (Debian's chromium, headless), driven through
the DevTools protocol by a small stdlib websocket client: the page loads
without console errors, every chart is present and loaded, and the spare-area
buttons switch the consistency plots. A screenshot is saved under
review-artifacts/ (gitignored)."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

from conftest import REPO

pytestmark = pytest.mark.browser


def _chromium() -> Optional[str]:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    return None


class DevTools:
    """A minimal Chrome DevTools Protocol client over one websocket (RFC 6455)."""

    def __init__(self, ws_url: str) -> None:
        m = re.match(r"ws://([^:/]+):(\d+)(/.*)", ws_url)
        assert m, ws_url
        self.sock = socket.create_connection((m.group(1), int(m.group(2))), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            (f"GET {m.group(3)} HTTP/1.1\r\nHost: {m.group(1)}:{m.group(2)}\r\nUpgrade: websocket\r\n"
             f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode()
        )
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            assert chunk, "devtools closed the connection during the handshake"
            head += chunk
        assert b" 101 " in head.split(b"\r\n", 1)[0], head
        self.next_id = 0
        self.events: List[Dict[str, Any]] = []

    def _recv_exact(self, n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            assert chunk, "devtools connection closed"
            buf += chunk
        return buf

    def _send(self, text: str) -> None:
        data = text.encode()
        head = bytes([0x81])
        n = len(data)
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 1 << 16:
            head += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        self.sock.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def _recv(self) -> Dict[str, Any]:
        payload = b""
        while True:
            b0, b1 = self._recv_exact(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._recv_exact(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._recv_exact(8))[0]
            payload += self._recv_exact(n)
            if b0 & 0x80:
                return json.loads(payload.decode())

    def call(self, method: str, **params: Any) -> Dict[str, Any]:
        self.next_id += 1
        self._send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            msg = self._recv()
            if msg.get("id") == self.next_id:
                assert "error" not in msg, (method, msg["error"])
                return msg.get("result", {})
            self.events.append(msg)

    def wait_event(self, method: str, timeout_s: float = 30) -> Dict[str, Any]:
        end = time.monotonic() + timeout_s
        for e in self.events:
            if e.get("method") == method:
                return e
        while time.monotonic() < end:
            msg = self._recv()
            self.events.append(msg)
            if msg.get("method") == method:
                return msg
        raise AssertionError(f"no {method} within {timeout_s} s")

    def close(self) -> None:
        self.sock.close()

    def eval(self, expr: str) -> Any:
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
        assert "exceptionDetails" not in r, r
        return r["result"].get("value")

    def console_errors(self) -> List[str]:
        errs = []
        for e in self.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.exceptionThrown":
                errs.append(json.dumps(p.get("exceptionDetails", {}))[:300])
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                errs.append(json.dumps(p.get("args", []))[:300])
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                errs.append(p["entry"].get("text", "")[:300] + " " + p["entry"].get("url", ""))
        return errs


@pytest.fixture
def browser() -> Any:
    exe = _chromium()
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed, and CI must run the browser test (.ci/run installs it)")
        pytest.skip("chromium is not installed (apt-get install -y chromium); .ci/run installs it")
    profile = tempfile.mkdtemp(prefix="ssdlab-chromium-")
    proc = subprocess.Popen(
        [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
         "--remote-debugging-port=0", f"--user-data-dir={profile}", "--window-size=1100,1400", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    try:
        ws = None
        end = time.monotonic() + 30
        assert proc.stderr is not None
        while time.monotonic() < end:
            line = proc.stderr.readline()
            if not line and proc.poll() is not None:
                break
            m = re.search(r"DevTools listening on (ws://\S+)", line)
            if m:
                ws = m.group(1)
                break
        assert ws, "chromium did not start its DevTools endpoint"
        # the browser endpoint: open a page target and attach to it
        port = int(re.match(r"ws://[^:]+:(\d+)/", ws).group(1))  # type: ignore[union-attr]
        import urllib.request

        with urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}/json/new?about:blank", method="PUT"), timeout=10) as r:
            page = json.loads(r.read())
        dt = DevTools(page["webSocketDebuggerUrl"])
        try:
            yield dt
        finally:
            dt.close()
    finally:
        if proc.stderr is not None:
            proc.stderr.close()
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(profile, ignore_errors=True)


def test_report_loads_without_errors_and_buttons_switch_spare_area(quick_review: Path, browser: DevTools) -> None:
    page = quick_review / "index.html"
    for domain in ("Page", "Runtime", "Log"):
        browser.call(f"{domain}.enable")
    browser.call("Page.navigate", url=page.resolve().as_uri())
    browser.wait_event("Page.loadEventFired")
    # every chart in charts/ that the page names is present and decoded
    imgs = browser.eval("Array.from(document.images).map(i => [i.getAttribute('src'), i.complete && i.naturalWidth > 0])")
    assert imgs and all(ok for _, ok in imgs), [s for s, ok in imgs if not ok]
    pngs_on_disk = {p.name for p in (quick_review / "charts").glob("*.png")}
    shown = {Path(s).name for s, _ in imgs}
    switched = {n for n in pngs_on_disk if ".v1." in n}
    assert pngs_on_disk - switched == shown, sorted((pngs_on_disk - switched) ^ shown)
    # no network: every src is a relative file
    assert all(not s.startswith(("http:", "https:", "//")) for s, _ in imgs)
    # the spare-area buttons switch all three consistency plots
    buttons = browser.eval("Array.from(document.querySelectorAll('.buttons button')).map(b => b.textContent)")
    assert buttons == ["default", "25% OP"]
    cons = "Array.from(document.querySelectorAll('img.consistency'))"
    assert browser.eval(f"{cons}.length") == 3
    assert browser.eval(f"{cons}.every(i => i.getAttribute('src').endsWith('.v0.png'))")
    browser.eval("document.querySelectorAll('.buttons button')[1].click()")
    assert browser.eval(f"{cons}.every(i => i.getAttribute('src').endsWith('.v1.png'))")
    loaded = browser.eval(
        f"Promise.all({cons}.map(i => i.decode().then(() => i.naturalWidth > 0, () => false))).then(a => a.every(x => x))"
    )
    assert loaded
    assert browser.eval("document.querySelectorAll('.buttons button.on')[0].textContent") == "25% OP"
    browser.eval("document.querySelectorAll('.buttons button')[0].click()")
    assert browser.eval(f"{cons}.every(i => i.getAttribute('src').endsWith('.v0.png'))")
    assert browser.console_errors() == []
    # screenshot artifact
    browser.eval("document.getElementById('consistency').scrollIntoView()")
    shot = browser.call("Page.captureScreenshot", format="png")["data"]
    out = REPO / "review-artifacts"
    out.mkdir(exist_ok=True)
    (out / "report-consistency.png").write_bytes(base64.b64decode(shot))
    full = browser.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)["data"]
    (out / "report.png").write_bytes(base64.b64decode(full))
    assert (out / "report.png").stat().st_size > 10_000
