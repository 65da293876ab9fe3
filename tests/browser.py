"""A real Chromium for tests: the flags every test starts it with, and a page driven over the DevTools protocol.

``--dump-dom`` shows a page after its scripts ran, which is enough for a static page (the report). A web app that
signs a visitor in, routes on the client and opens dialogs on a click (Airflow's UI) needs a page that stays open:
:class:`Page` starts Chromium headless with a debugging port on loopback, and speaks the protocol over its websocket
(``Page.navigate``, ``Runtime.evaluate``). Only what the tests need, no browser-automation framework.
"""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

#: How every test starts Chromium: no sandbox (root in a container), nothing that reaches the network on its own.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
#: Debian's chromium (``./bin/setup --dev`` installs it, as root), or None.
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class Page:
    """One tab of a headless Chromium with its own profile, driven over the DevTools protocol; close it when done."""

    def __init__(self, profile: Path, width: int = 1400, height: int = 1000, start_timeout_s: float = 60.0) -> None:
        from websockets.sync.client import connect

        assert CHROMIUM is not None, "chromium not installed (./bin/setup --dev installs it as root)"
        profile.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [
                CHROMIUM,
                *FLAGS,
                f"--user-data-dir={profile}",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
                f"--window-size={width},{height}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + start_timeout_s
        while not (port_file.is_file() and port_file.read_text().strip()):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise RuntimeError(
                    f"chromium did not open its debugging port: {self.proc.stderr.read()[-2000:] if self.proc.stderr else ''}"
                )
            time.sleep(0.1)
        port = port_file.read_text().split()[0]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as r:
            tabs = [t for t in json.load(r) if t.get("type") == "page"]
        self.ws = connect(tabs[0]["webSocketDebuggerUrl"], max_size=None, open_timeout=10)
        self._ids = itertools.count(1)

    def call(self, method: str, timeout_s: float = 60.0, **params: Any) -> dict[str, Any]:
        """Send one protocol command and return its result (events that arrive meanwhile are dropped)."""
        n = next(self._ids)
        self.ws.send(json.dumps({"id": n, "method": method, "params": params}))
        deadline = time.monotonic() + timeout_s
        while True:
            msg = json.loads(self.ws.recv(timeout=max(deadline - time.monotonic(), 0.1)))
            if msg.get("id") == n:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return dict(msg.get("result", {}))

    def goto(self, url: str) -> None:
        self.call("Page.navigate", url=url)

    def eval(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (promises awaited); a thrown error raises."""
        res = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in res:
            raise RuntimeError(
                f"{expression[:80]}: {res['exceptionDetails'].get('exception', {}).get('description', res['exceptionDetails'])}"
            )
        return res.get("result", {}).get("value")

    def wait_for(self, expression: str, timeout_s: float = 90.0, what: str = "") -> Any:
        """Evaluate ``expression`` until it is truthy and return that value; on timeout, fail with the page's text."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                value = self.eval(expression)
            except RuntimeError:
                value = None  # a page between two navigations
            if value:
                return value
            if time.monotonic() > deadline:
                text = self.eval("document.body ? document.body.innerText : ''") or ""
                raise AssertionError(
                    f"timed out waiting for {what or expression}; the page ({self.eval('location.href')}) shows:\n{text[:3000]}"
                )
            time.sleep(0.25)

    def text(self) -> str:
        return str(self.eval("document.body ? document.body.innerText : ''") or "")

    def screenshot(self, path: Path) -> None:
        import base64

        path.write_bytes(base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"]))

    def close(self) -> None:
        try:
            if getattr(self, "ws", None) is not None:
                self.ws.close()
        finally:
            if self.proc.poll() is None:
                self.proc.terminate()
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
