"""``ctxprobe view``: every run of a store in a browser, live, down to the case.

A local, read-only web app (Starlette, served by uvicorn) over the SQLite store:
:func:`make_app` builds it, :func:`serve` runs it on 127.0.0.1 (another ``host`` only
when asked, with a warning), :func:`write_bundle` writes the same pages as a static site.
Pages are built from the report's own objects (``report --json``'s numbers, by
construction); the store is opened read-only and never migrated."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ctxprobe.view.bundle import write_bundle

if TYPE_CHECKING:
    from starlette.applications import Starlette

__all__ = ["LOOPBACK", "make_app", "serve", "write_bundle"]

LOOPBACK = "127.0.0.1"


def make_app(store_path: str | Path, *, prices: str | None = None) -> Starlette:
    from ctxprobe.view.app import make_app as build

    return build(store_path, prices=prices)


def host_warning(host: str) -> str | None:
    """The one line printed when the app listens beyond this machine's loopback."""
    if host in (LOOPBACK, "localhost", "::1"):
        return None
    return (f"warning: listening on {host}: anyone who can reach this address can read every prompt and output "
            "in the store (no login); the default --host 127.0.0.1 keeps it on this machine")


def serve(store_path: str | Path, *, host: str = LOOPBACK, port: int = 7575, prices: str | None = None) -> None:
    """Serve the app until interrupted (the store checked before the port is opened)."""
    import uvicorn

    app = make_app(store_path, prices=prices)
    uvicorn.run(app, host=host, port=port, log_level="warning")
