"""Where each page lives: stable URLs on the server (``/run/RUN_ID``,
``/run/RUN_ID/cell/FAMILY/LENGTH/DEPTH``, ``/case/RUN_ID/CASE_ID`` with the case id as
stored, slashes and all), flat relative file names in a ``--bundle`` (opened from disk,
no server: every link relative, no directory depth to get wrong)."""

from __future__ import annotations

import hashlib
from urllib.parse import quote, urlencode


def depth_text(depth: float) -> str:
    """A depth as a URL segment that reads back as the same float (``repr`` round-trips)."""
    return repr(float(depth))


def _h(*parts: object) -> str:
    return hashlib.sha256("\0".join(str(p) for p in parts).encode()).hexdigest()[:16]


class ServerLinks:
    """Absolute paths on the running server."""

    live = True
    bundle = False

    def runs(self) -> str:
        return "/"

    def run(self, run_id: str) -> str:
        return f"/run/{quote(run_id, safe='')}"

    def run_json(self, run_id: str) -> str:
        return f"/api/run/{quote(run_id, safe='')}"

    def cell(self, run_id: str, family: str, length: int, depth: float) -> str:
        return (f"/run/{quote(run_id, safe='')}/cell/{quote(family, safe='')}/{int(length)}/"
                f"{quote(depth_text(depth), safe='')}")

    def cases(self, run_id: str, outcome: str | None = None) -> str:
        return f"/run/{quote(run_id, safe='')}/cases" + (f"?{urlencode({'outcome': outcome})}" if outcome else "")

    def case(self, run_id: str, case_id: str) -> str:
        return f"/case/{quote(run_id, safe='')}/" + "/".join(quote(p, safe="") for p in case_id.split("/"))

    def history(self) -> str:
        return "/history"

    def compare(self, a: str, b: str) -> str:
        return f"/compare/{quote(a, safe='')}/{quote(b, safe='')}"

    def decide(self) -> str:
        return "/decide"

    def api_runs(self) -> str:
        return "/api/runs"


class BundleLinks(ServerLinks):
    """Relative file names of a static bundle (all pages side by side in one folder)."""

    live = False
    bundle = True

    def runs(self) -> str:
        return "index.html"

    def run(self, run_id: str) -> str:
        return f"run-{run_id}.html"

    def run_json(self, run_id: str) -> str:
        return f"run-{run_id}.json"

    def cell(self, run_id: str, family: str, length: int, depth: float) -> str:
        return f"cell-{run_id}-{_h(family, int(length), depth_text(depth))}.html"

    def cases(self, run_id: str, outcome: str | None = None) -> str:
        return f"cases-{run_id}.html" + (f"#{quote(outcome, safe='')}" if outcome else "")

    def case(self, run_id: str, case_id: str) -> str:
        return f"case-{run_id}-{_h(case_id)}.html"

    def history(self) -> str:
        return "history.html"

    def compare(self, a: str, b: str) -> str:
        return ""

    def decide(self) -> str:
        return ""

    def api_runs(self) -> str:
        return ""


Links = ServerLinks
