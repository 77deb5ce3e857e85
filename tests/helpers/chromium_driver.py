"""Headless Chromium over the DevTools protocol (``--remote-debugging-pipe``: no
websocket client, no extra package, nothing downloaded), shared by the browser tests of the
HTML report, decide's page and ``ctxprobe view``. Install the browser with
scripts/system-deps.sh."""

from __future__ import annotations

import base64
import fcntl
import json
import os
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import Any


class Chromium:
    """Just enough of the DevTools protocol: commands, events, one page session."""

    def __init__(self, binary: str, user_data_dir: Path) -> None:
        cmd_r, self._cmd_w = os.pipe()
        self._res_r, res_w = os.pipe()

        def wire() -> None:
            # Move both ends above 4 first: a pipe end may itself be fd 3 or 4, and dup2 onto
            # itself would keep close-on-exec set.
            high_r, high_w = fcntl.fcntl(cmd_r, fcntl.F_DUPFD, 10), fcntl.fcntl(res_w, fcntl.F_DUPFD, 10)
            os.dup2(high_r, 3)
            os.dup2(high_w, 4)

        args = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--no-first-run", "--no-default-browser-check",
                "--disable-dev-shm-usage", "--hide-scrollbars", f"--user-data-dir={user_data_dir}",
                "--remote-debugging-pipe", "about:blank"]
        self.proc = subprocess.Popen(args, preexec_fn=wire, close_fds=False, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(cmd_r)
        os.close(res_w)
        self._id = 0
        self._inbox: queue.Queue[dict[str, Any]] = queue.Queue()
        self.events: list[dict[str, Any]] = []
        threading.Thread(target=self._read, daemon=True).start()
        self.session = ""

    def _read(self) -> None:
        buf = b""
        while chunk := os.read(self._res_r, 1 << 16):
            buf += chunk
            while b"\0" in buf:
                msg, buf = buf.split(b"\0", 1)
                self._inbox.put(json.loads(msg))

    def send(self, method: str, params: dict[str, Any] | None = None, timeout: float = 20.0) -> dict[str, Any]:
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if self.session and not method.startswith(("Target.", "Browser.")):
            msg["sessionId"] = self.session
        os.write(self._cmd_w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            item = self._inbox.get(timeout=max(0.01, deadline - time.monotonic()))
            if item.get("id") == self._id:
                assert "error" not in item, f"{method}: {item['error']}"
                return item["result"]
            self.events.append(item)

    def seen(self, method: str) -> int:
        """How many ``method`` events have arrived so far."""
        return sum(e.get("method") == method for e in self.events)

    def wait_for(self, method: str, timeout: float = 20.0, after: int = 0) -> None:
        """Until more than ``after`` ``method`` events have arrived (the timeout is a guard
        against a hang, not a measurement)."""
        deadline = time.monotonic() + timeout
        while self.seen(method) <= after:
            self.events.append(self._inbox.get(timeout=max(0.01, deadline - time.monotonic())))

    def open(self, url: str, width: int) -> str:
        """Open ``url`` in a new page and drive it; returns the page's target id."""
        before = self.seen("Page.loadEventFired")
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable")
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": 860, "deviceScaleFactor": 1, "mobile": False})
        self.send("Page.navigate", {"url": url})
        self.wait_for("Page.loadEventFired", after=before)
        return str(target)

    def js(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        assert "exceptionDetails" not in result, result
        return result["result"].get("value")

    def screenshot(self, path: Path, full: bool = False) -> None:
        params: dict[str, Any] = {"format": "png"}
        if full:
            size = self.send("Page.getLayoutMetrics")["cssContentSize"]
            params.update(captureBeyondViewport=True,
                          clip={"x": 0, "y": 0, "width": size["width"], "height": min(size["height"], 16000),
                                "scale": 1})
        path.write_bytes(base64.b64decode(self.send("Page.captureScreenshot", params)["data"]))

    def close(self) -> None:
        try:
            self.send("Browser.close", timeout=5)
            self.proc.wait(timeout=10)
        except Exception:  # noqa: BLE001 - a browser that will not close is killed
            self.proc.kill()
            self.proc.wait(timeout=10)
