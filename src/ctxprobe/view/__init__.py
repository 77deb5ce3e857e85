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

__all__ = ["LOOPBACK", "check_port", "host_warning", "make_app", "run_app", "serve", "write_bundle"]

LOOPBACK = "127.0.0.1"


def make_app(store_path: str | Path, *, prices: str | None = None) -> Starlette:
    from ctxprobe.view.app import make_app as build

    return build(store_path, prices=prices)


def host_warning(host: str) -> str | None:
    """The one line printed when the app listens beyond this machine's loopback."""
    if host in (LOOPBACK, "localhost", "::1"):
        return None
    return (f"warning: listening on {host}: anyone who reaches it can read every prompt and output in the store "
            "(no login); the default --host 127.0.0.1 keeps it on this machine")


def serve(store_path: str | Path, *, host: str = LOOPBACK, port: int = 7575, prices: str | None = None) -> None:
    """Serve the app until interrupted (the store checked before the port is opened)."""
    run_app(make_app(store_path, prices=prices), host=host, port=port)


def check_port(host: str, port: int) -> None:
    """A port taken or an address not this machine's: one line, before uvicorn logs its own."""
    import socket

    from ctxprobe.errors import CtxprobeError

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        with socket.socket(infos[0][0], socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(infos[0][4])
    except OSError as err:
        raise CtxprobeError(f"cannot listen on {host}:{port}: {err.strerror or err}; pass another --port "
                            "(or --host)") from None


def run_app(app: Starlette, *, host: str = LOOPBACK, port: int = 7575) -> None:
    """uvicorn serving ``app`` until interrupted (a port taken is a one-line error)."""
    import uvicorn

    from ctxprobe.errors import CtxprobeError

    check_port(host, port)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning")
    server = uvicorn.Server(config)
    try:
        server.run()
    except SystemExit:  # uvicorn exits when it cannot bind (it logged why)
        raise CtxprobeError(f"cannot listen on {host}:{port} (in use, or not this machine's address); pass "
                            "another --port or --host") from None
    except OSError as err:
        raise CtxprobeError(f"cannot listen on {host}:{port}: {err.strerror or err}; pass another --port") from None
    if not server.started:
        raise CtxprobeError(f"cannot listen on {host}:{port} (in use?); pass another --port")
