"""The report in a real browser (Debian's chromium, headless), driven through
the DevTools protocol by a small stdlib websocket client: the page loads
without console errors, every chart is present and loaded, the spare-area
buttons switch the consistency plots (the selected one marked), the verdict
is at the top, the page never scrolls sideways at 1400 px, and in every chart
(SVG geometry) no legend box covers a bar label and no text is cut off. The
same checks run on a 13-drive review (slow). Screenshots are saved under
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

from conftest import REPO, make_drive, run_cli

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


def _open(browser: DevTools, path: Path, width: int = 1400) -> None:
    """Load a file at a window width of ``width`` CSS pixels and wait for it."""
    for domain in ("Page", "Runtime", "Log"):
        browser.call(f"{domain}.enable")
    browser.call("Emulation.setDeviceMetricsOverride", width=width, height=1000, deviceScaleFactor=1, mobile=False)
    browser.events.clear()
    browser.call("Page.navigate", url=path.resolve().as_uri())
    browser.wait_event("Page.loadEventFired")


#: In a chart's SVG: legends and bar labels (ids set by ssdlab.report.charts),
#: whether one covers another, and texts outside the drawing (a clipped title).
_SVG_GEOMETRY = """(() => {
  const root = document.documentElement.getBoundingClientRect();
  const box = e => e.getBoundingClientRect();
  const legends = Array.from(document.querySelectorAll('[id^="legend_"]')).map(box);
  const labels = Array.from(document.querySelectorAll('[id^="barlabel_"]')).map(box);
  const hit = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
  let overlaps = 0;
  for (const l of legends) for (const b of labels) if (hit(l, b)) overlaps++;
  const texts = Array.from(document.querySelectorAll('[id^="text_"], [id^="legend_"], [id^="barlabel_"]'))
    .map(box).filter(r => r.width > 0 && r.height > 0);
  const outside = texts.filter(r => r.left < root.left - 1 || r.right > root.right + 1 ||
                                    r.top < root.top - 1 || r.bottom > root.bottom + 1).length;
  // no two texts on one another (a title on a panel title, crowded tick labels); rotated labels aside
  const plain = Array.from(document.querySelectorAll('[id^="text_"], [id^="barlabel_"]'))
    .filter(e => !e.querySelector('[transform*="rotate"]'));
  const rects = plain.map(box);
  const collisions = [];
  for (let i = 0; i < plain.length; i++) for (let j = i + 1; j < plain.length; j++) {
    if (plain[i].contains(plain[j]) || plain[j].contains(plain[i])) continue;
    const a = rects[i], b = rects[j];
    if (a.width > 0 && b.width > 0 && a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1)
      collisions.push([plain[i].id, plain[j].id]);
  }
  return {legends: legends.length, labels: labels.length, overlaps: overlaps, outside: outside, texts: texts.length,
          collisions: collisions.slice(0, 5), n_collisions: collisions.length};
})()"""


def _check_review_page(browser: DevTools, out: Path, n_drives: int) -> Dict[str, Any]:
    """The browser checks of a review page; returns what the SVG check saw."""
    _open(browser, out / "index.html")
    # the verdict at the top: the headline table with a row and a text per drive
    assert browser.eval("document.querySelector('h2').id") == "verdict"
    assert browser.eval("document.querySelectorAll('table.headline tr').length") == n_drives + 2
    assert browser.eval("document.querySelectorAll('.drive-takes p').length") == n_drives
    # every image loads
    imgs = browser.eval("Promise.all(Array.from(document.images).map(i => i.decode().then(() => [i.getAttribute('src'), "
                        "i.naturalWidth > 0], () => [i.getAttribute('src'), false])))")
    assert imgs and all(ok for _, ok in imgs), [s for s, ok in imgs if not ok]
    # no sideways scrolling of the page at 1400 px (wide tables scroll in their own box)
    widths = browser.eval("[document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], widths
    # the selected spare-area button is marked from the start
    assert browser.eval("Array.from(document.querySelectorAll('.buttons button.on')).map(b => b.textContent)") == ["default"]
    assert browser.console_errors() == []
    # every chart's SVG: no legend over a bar label, no text cut off
    svgs = sorted(browser.eval("Array.from(document.querySelectorAll('figcaption a')).map(a => a.href)"))
    seen = {"svgs": len(svgs), "legends": 0, "labels": 0}
    bad = []
    for url in svgs:
        path = Path(url[len("file://"):])
        _open(browser, path)
        g = browser.eval(_SVG_GEOMETRY)
        seen["legends"] += g["legends"]
        seen["labels"] += g["labels"]
        if g["overlaps"] or g["outside"] or g["n_collisions"]:
            bad.append((path.name, g))
    assert not bad, bad
    return seen


def _screenshot_top(browser: DevTools, out: Path, name: str) -> Path:
    """The top of the page (the verdict and the grid) as PNG in review-artifacts/."""
    _open(browser, out / "index.html")
    bottom = browser.eval("(() => { const g = document.querySelector('.cdm-grids') || document.getElementById('drives');"
                          " return g.getBoundingClientRect().bottom + window.scrollY + 16; })()")
    shot = browser.call("Page.captureScreenshot", format="png", captureBeyondViewport=True,
                        clip={"x": 0, "y": 0, "width": 1400, "height": float(bottom), "scale": 1})["data"]
    dest = REPO / "review-artifacts"
    dest.mkdir(exist_ok=True)
    (dest / name).write_bytes(base64.b64decode(shot))
    return dest / name


def test_report_loads_without_errors_and_buttons_switch_spare_area(quick_review: Path, browser: DevTools) -> None:
    seen = _check_review_page(browser, quick_review, 2)
    assert seen["legends"] > 10 and seen["labels"] > 100
    page = quick_review / "index.html"
    _open(browser, page, width=1100)
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


def test_the_contents_follow_the_scroll_and_test_sections_fold(quick_review: Path, browser: DevTools) -> None:
    _open(browser, quick_review / "index.html")
    toc = "document.querySelector('nav.toc')"
    groups = browser.eval(f"Array.from({toc}.querySelectorAll(':scope > ol > li > a')).map(a => a.textContent)")
    assert groups[0] == "Verdict" and "The drives" in groups and groups[-1] == "About these results"
    tests = browser.eval(f"{toc}.querySelectorAll('ol ol a').length")
    assert tests == browser.eval("document.querySelectorAll('details.test').length") > 10
    # far down the page the contents are still in view, and mark the section being read
    browser.eval("document.getElementById('consistency').scrollIntoView()")
    time.sleep(0.3)
    top = browser.eval(f"{toc}.getBoundingClientRect().top")
    assert 0 <= top < 5, top
    current = browser.eval(f"Array.from({toc}.querySelectorAll('a.current')).map(a => a.getAttribute('href'))")
    assert current in (["#consistency"], ["#consistency-group"]), current
    _shot(browser, "report-nav-scrolled.png")
    # fold every test, then follow a link: its section opens
    browser.eval(f"{toc}.querySelector('[data-fold=close]').click()")
    assert browser.eval("Array.from(document.querySelectorAll('details.test')).every(d => !d.open)")
    browser.eval("window.scrollTo(0, 0)")
    _shot(browser, "report-nav-top.png")
    browser.eval("document.getElementById('drives').scrollIntoView()")
    _shot(browser, "report-nav-folded.png")
    browser.eval(f"{toc}.querySelector('a[href=\"#as-ssd\"]').click()")
    assert browser.eval("document.getElementById('as-ssd').open") is True
    assert browser.console_errors() == []


def _shot(browser: DevTools, name: str) -> None:
    shot = browser.call("Page.captureScreenshot", format="png")["data"]
    out = REPO / "review-artifacts"
    out.mkdir(exist_ok=True)
    (out / name).write_bytes(base64.b64decode(shot))


def _thirteen_drives(tmp: Path) -> List[Path]:
    """13 small drives (each about 1.07 GB, so Storage Bench runs) of
    different geometry and timing, with product-like names of different
    lengths; two of them identical but for their name (lines that coincide)."""
    shapes = [(2, 640, 256), (4, 320, 256), (8, 160, 256), (16, 80, 256), (4, 640, 128), (8, 320, 128), (16, 160, 128)]
    paths = []
    for i in range(13):
        j = 1 if i == 12 else i  # the last drive is the second one under another name
        dies, blocks, pages = shapes[j % len(shapes)]
        d = make_drive(dies=dies, blocks=blocks, pages=pages, drive_id=f"lab-{i:02d}")
        d["nand"]["tprog_ns"] = 600_000 + 150_000 * (j % 5)
        if j % 4 == 3:
            d["host"]["link_bytes_per_s"] = 280_000_000  # a SATA 3Gbps drive
        d["drive"]["name"] = (f"Labworks {['Swift', 'Tortoise', 'Everlast Pro Max Ultra', 'Mid'][i % 4]} "
                              f"{d['drive']['user_capacity_bytes'] // 10**9}GB ({dies} dies, tPROG {d['nand']['tprog_ns'] // 1000} us)")
        p = tmp / f"lab-{i:02d}.json"
        p.write_text(json.dumps(d))
        paths.append(p)
    return paths


@pytest.fixture(scope="module")
def thirteen_drive_review(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("review13")
    drives = _thirteen_drives(tmp)
    out = tmp / "out"
    args = [a for p in drives for a in ("--drive", str(p))]
    cp = run_cli("review", *args, "--out", str(out), "--quick", timeout=3600)
    assert cp.returncode == 0, cp.stderr[-2000:]
    return out


@pytest.mark.slow
def test_a_13_drive_review_reads_in_a_browser(thirteen_drive_review: Path, browser: DevTools) -> None:
    """The browser checks pass on a 13-drive review."""
    seen = _check_review_page(browser, thirteen_drive_review, 13)
    assert seen["svgs"] > 40 and seen["legends"] > 20 and seen["labels"] > 13 * 40
    page = (thirteen_drive_review / "index.html").read_text()
    assert "Lines that coincide" in page  # lab-01 and lab-12 are the same drive
    shot = _screenshot_top(browser, thirteen_drive_review, "report-13-drives-top.png")
    assert shot.stat().st_size > 50_000
