"""``ctxprobe view``: parses, then serves the store (or writes it as a static bundle)."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console

__all__ = ["add_view_parser", "cmd_view"]


def add_view_parser(sub: Any, default_store: str) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "view", help="every run of a store in the browser, live, down to each case (read-only local web app)",
        description="A read-only local web app over the store: runs (live while a sweep runs), each run's "
                    "heatmaps, curves and effective length as `report` gives them, cells, cases with the "
                    "evidence highlighted, compare, decide and history. Example: ctxprobe view --store "
                    "ctxprobe.sqlite  (then open http://127.0.0.1:7575/)")
    p.add_argument("--store", default=default_store, metavar="PATH", help="SQLite results file (default ./%(default)s)")
    p.add_argument("--port", type=int, default=7575, help="TCP port (default %(default)s)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default %(default)s: this machine only; another prints a warning)")
    p.add_argument("--prices", metavar="FILE", help="YAML price file the decide page uses unless it names another")
    p.add_argument("--bundle", metavar="DIR",
                   help="write the pages as a static site into DIR (opens from disk, no server) and exit")
    p.set_defaults(func=cmd_view)


def cmd_view(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ctxprobe.errors import CtxprobeError
    from ctxprobe.view import check_port, host_warning, make_app, run_app, write_bundle

    if args.bundle:
        index = write_bundle(args.store, args.bundle)
        out.print(f"wrote {index} (open it in a browser; no server needed)", highlight=False, markup=False)
        return 0
    if not 0 < args.port < 65536:
        raise CtxprobeError(f"--port {args.port}: give a TCP port between 1 and 65535")
    app = make_app(args.store, prices=args.prices)  # the store checked before anything is printed or bound
    check_port(args.host, args.port)
    if (warning := host_warning(args.host)) is not None:
        err.print(warning, highlight=False, markup=False, soft_wrap=True)
    err.print(f"serving {args.store} read-only at http://{args.host}:{args.port}/ (Ctrl-C stops)",
              highlight=False, markup=False, soft_wrap=True)
    run_app(app, host=args.host, port=args.port)
    return 0
