"""Headless Chromium driven over the DevTools protocol (websocket-client), for the report tests.

:func:`find_chromium` locates the browser (``A2A_LAB_CHROMIUM``, else ``chromium`` /
``chromium-browser`` / ``google-chrome`` on PATH). :class:`Browser` starts it with a fresh
profile and the flags a closed, shared CI machine needs, opens one page with the network
emulated offline, and records what a test asserts on: console errors, uncaught exceptions,
JavaScript dialogs (``alert``) and every request the page made.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import websocket

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--disable-extensions",
    "--disable-dev-shm-usage",
    "--remote-debugging-port=0",
)


def find_chromium() -> str | None:
    """The Chromium executable, or None."""
    explicit = os.environ.get("A2A_LAB_CHROMIUM")
    if explicit:
        return explicit
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class Browser:
    """One headless Chromium with one page (use as a context manager)."""

    def __init__(self, executable: str, *, width: int = 1300, height: int = 900) -> None:
        self._profile = tempfile.TemporaryDirectory(prefix="a2a-chromium-")
        self._proc = subprocess.Popen(
            [
                executable,
                *FLAGS,
                f"--user-data-dir={self._profile.name}",
                f"--window-size={width},{height}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        port = self._port(Path(self._profile.name) / "DevToolsActivePort")
        targets = json.loads(
            urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30).read()
        )
        page = next(t for t in targets if t["type"] == "page")
        self._ws = websocket.create_connection(
            page["webSocketDebuggerUrl"], timeout=60, suppress_origin=True
        )
        self._ids = itertools.count(1)
        self.events: list[dict[str, Any]] = []
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")
        # the page may fetch nothing: the network is offline
        self.call(
            "Network.emulateNetworkConditions",
            offline=True,
            latency=0,
            downloadThroughput=0,
            uploadThroughput=0,
        )

    def _port(self, active: Path) -> int:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if active.exists() and active.read_text().strip():
                return int(active.read_text().split()[0])
            if self._proc.poll() is not None:
                raise RuntimeError(f"chromium exited with status {self._proc.returncode}")
            time.sleep(0.1)
        raise TimeoutError("chromium did not open its DevTools port")

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Send a DevTools command and return its result (events meanwhile go to :attr:`events`)."""
        ident = next(self._ids)
        self._ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self._ws.recv())
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            if "method" in message:
                self.events.append(message)
                if message["method"] == "Page.javascriptDialogOpening":
                    # an alert would block the page: record it (dialogs()) and dismiss it
                    self._ws.send(
                        json.dumps(
                            {
                                "id": next(self._ids),
                                "method": "Page.handleJavaScriptDialog",
                                "params": {"accept": False},
                            }
                        )
                    )

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (promises awaited)."""
        result = self.call(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:80]}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def open(self, url: str) -> None:
        """Navigate and wait for the load event."""
        self.call("Page.navigate", url=url)
        self.wait_for("document.readyState === 'complete'")

    def wait_for(self, expression: str, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.evaluate(f"Boolean({expression})"):
                return
            time.sleep(0.2)
        raise TimeoutError(f"waited {timeout} s for {expression}")

    def screenshot(self, path: Path) -> Path:
        """A PNG of the whole page."""
        size = self.call("Page.getLayoutMetrics")["cssContentSize"]
        data = self.call(
            "Page.captureScreenshot",
            format="png",
            captureBeyondViewport=True,
            clip={
                "x": 0,
                "y": 0,
                "width": size["width"],
                "height": min(size["height"], 16000),
                "scale": 1,
            },
        )["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def drain(self) -> list[dict[str, Any]]:
        """Events received so far (a cheap command flushes the socket first)."""
        self.call("Runtime.evaluate", expression="0")
        return self.events

    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions and error log entries, as text."""
        out = []
        for e in self.drain():
            p = e.get("params", {})
            if e["method"] == "Runtime.exceptionThrown":
                out.append(json.dumps(p["exceptionDetails"])[:400])
            elif e["method"] == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append(json.dumps(p.get("args"))[:400])
            elif e["method"] == "Log.entryAdded" and p["entry"]["level"] == "error":
                out.append(p["entry"].get("text", "")[:400])
        return out

    def dialogs(self) -> list[str]:
        return [
            e["params"].get("message", "")
            for e in self.drain()
            if e["method"] == "Page.javascriptDialogOpening"
        ]

    def requests(self) -> list[str]:
        return [
            e["params"]["request"]["url"]
            for e in self.drain()
            if e["method"] == "Network.requestWillBeSent"
        ]

    def close(self) -> None:
        try:
            self._ws.close()
        finally:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            self._profile.cleanup()

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
