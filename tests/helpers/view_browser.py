"""Headless Chromium for ``ctxprobe view``'s browser tests: the shared driver
(tests/helpers/chromium_driver.py) plus clicks that navigate, a second tab, the requests made and
the page's console problems."""

from __future__ import annotations

import json
import queue
from typing import Any

import chromium_driver


class Chromium(chromium_driver.Chromium):
    """The shared driver, with navigation, tabs and the page's problems."""

    def tab(self, url: str, width: int = 1300) -> tuple[str, str]:
        """Open ``url`` in a second tab and drive it (the first keeps running, its page
        untouched); returns (the previous session, the new tab's target) for :meth:`back`."""
        previous = self.session
        self.session = ""
        return previous, self.open(url, width)

    def back(self, previous: str, target: str) -> None:
        """Close the tab :meth:`tab` opened and drive the previous one again."""
        self.send("Target.closeTarget", {"targetId": target})
        self.session = previous

    def requests(self) -> list[str]:
        """Every URL the pages asked for so far (the Network domain's requests)."""
        self.drain()
        return [e["params"]["request"]["url"] for e in self.events if e.get("method") == "Network.requestWillBeSent"]

    def click_and_wait(self, selector: str) -> None:
        """Click the first element matching ``selector`` and wait for the page it opens."""
        before = self.seen("Page.loadEventFired")
        found = self.js(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); "
                        "if (!e) return false; e.click(); return true; })()")
        assert found, f"nothing matches {selector} on {self.js('location.href')}"
        self.wait_for("Page.loadEventFired", after=before)

    def goto(self, url: str, width: int = 1300) -> None:
        if not self.session:  # the first page of this browser
            self.open(url, width)
            return
        before = self.seen("Page.loadEventFired")
        self.send("Page.navigate", {"url": url})
        self.wait_for("Page.loadEventFired", after=before)

    def drain(self) -> None:
        """Take in the events that arrived meanwhile (console messages, dialogs)."""
        while True:
            try:
                self.events.append(self._inbox.get_nowait())
            except queue.Empty:
                return

    def problems(self) -> list[dict[str, Any]]:
        """Exceptions, console errors, log errors (CSP violations, failed loads) and dialogs."""
        self.drain()
        out = []
        for e in self.events:
            m, p = e.get("method"), e.get("params", {})
            if m in ("Runtime.exceptionThrown", "Page.javascriptDialogOpening"):
                out.append(e)
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert", "warning"):
                out.append(e)
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") in ("error", "warning"):
                out.append(e)
        return out
