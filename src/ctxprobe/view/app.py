"""The ``ctxprobe view`` web app: Starlette routes over a :class:`StoreSource`, every
page server-rendered (:mod:`ctxprobe.view.pages`), the runs page kept live by polling
``/api/runs``. Read-only: no route writes anything, and the store is opened ``mode=ro``.

Routes (stable, so a CI log can point at a failing cell):
``/``, ``/run/RUN_ID``, ``/run/RUN_ID/cases?outcome=…``, ``/run/RUN_ID/cell/FAMILY/LENGTH/DEPTH``,
``/case/RUN_ID/CASE_ID`` (the case id as stored, slashes and all), ``/compare/RUN_A/RUN_B``,
``/decide?run=…&run=…&prices=FILE``, ``/history``; JSON: ``/api/runs``, ``/api/run/RUN_ID``
(``report --json``), ``/api/history``."""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from ctxprobe.errors import CtxprobeError
from ctxprobe.report.redact import redact
from ctxprobe.view import pages
from ctxprobe.view.casefold import case_view
from ctxprobe.view.history import history_json, slices
from ctxprobe.view.links import ServerLinks
from ctxprobe.view.runs import run_rows
from ctxprobe.view.source import StoreSource

LINKS = ServerLinks()
#: pyplot's state is global: one decide page draws its Pareto plots at a time.
_PLOTTING = threading.Lock()
#: Sent with every response: nothing may frame the page, nothing sniffed, no referrer.
HEADERS = {"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer",
           "Cache-Control": "no-store"}


def _html(body: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(body, status_code=status, headers=HEADERS)


def _json(data: Any, status: int = 200) -> JSONResponse:
    return JSONResponse(data, status_code=status, headers=HEADERS)


async def _guarded(request: Request, build: Callable[[], Response]) -> Response:
    """``build`` in a worker thread; a CtxprobeError (an unknown run, a bad price file) is a
    page saying it in one line, never a traceback."""
    try:
        return await run_in_threadpool(build)
    except CtxprobeError as err:
        if request.url.path.startswith("/api/"):
            return _json({"error": redact(str(err))}, status=404)
        return _html(pages.error_page(str(err), LINKS), status=404)


def _float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise CtxprobeError(f"depth '{text}' is not a number") from None


def make_app(store_path: str | Path, *, prices: str | None = None) -> Starlette:
    """The app over one store (checked first: a missing or unreadable store raises the
    one-line CtxprobeError before anything is served)."""
    source = StoreSource(store_path)
    source.check()

    async def runs(request: Request) -> Response:
        return await _guarded(request, lambda: _html(pages.runs_page(run_rows(source), LINKS, store=str(source.path))))

    async def api_runs(request: Request) -> Response:
        return await _guarded(request, lambda: _json({"runs": [r.to_json() for r in run_rows(source)]}))

    async def run(request: Request) -> Response:
        rid = request.path_params["run_id"]
        return await _guarded(request, lambda: _html(pages.run_page(source.loaded(rid), LINKS)))

    async def api_run(request: Request) -> Response:
        rid = request.path_params["run_id"]
        return await _guarded(request, lambda: _json(source.loaded(rid).json))

    async def cell(request: Request) -> Response:
        p = request.path_params

        def build() -> Response:
            loaded = source.loaded(p["run_id"])
            length, depth = int(p["length"]), _float(p["depth"])
            records = [r for r in source.records(loaded.report.run.run_id)
                       if r.family == p["family"] and r.length == length and r.depth == depth]
            if not records:
                raise CtxprobeError(f"run {loaded.report.run.run_id} has no case in {p['family']} at length "
                                    f"{length}, depth {depth:g}")
            return _html(pages.cell_page(loaded, p["family"], length, depth, records, LINKS))
        return await _guarded(request, build)

    async def cases(request: Request) -> Response:
        rid = request.path_params["run_id"]
        outcome = request.query_params.get("outcome")

        def build() -> Response:
            loaded = source.loaded(rid)
            return _html(pages.cases_page(loaded, source.records(loaded.report.run.run_id), outcome, LINKS))
        return await _guarded(request, build)

    async def case(request: Request) -> Response:
        rid, cid = request.path_params["run_id"], request.path_params["case_id"]

        def build() -> Response:
            loaded = source.loaded(rid)
            rec = next((r for r in source.records(loaded.report.run.run_id) if r.case_id == cid), None)
            if rec is None:
                raise CtxprobeError(f"run {loaded.report.run.run_id} has no case '{cid}'")
            return _html(pages.case_page(loaded, case_view(rec), LINKS))
        return await _guarded(request, build)

    async def compare(request: Request) -> Response:
        a, b = request.path_params["run_a"], request.path_params["run_b"]

        def build() -> Response:
            from ctxprobe.report.compare_runs import compare_runs

            comparison = source.read(lambda: compare_runs(a, b, source.path))
            models = (source.run(comparison.run_a).model, source.run(comparison.run_b).model)
            return _html(pages.compare_page(comparison, models, LINKS))
        return await _guarded(request, build)

    async def decide(request: Request) -> Response:
        run_ids = [r for r in request.query_params.getlist("run") if r]
        price_file = request.query_params.get("prices") or prices or ""

        def build() -> Response:
            from ctxprobe.decide import decide as choose
            from ctxprobe.decide.html import decision_section

            if len(run_ids) < 2:
                raise CtxprobeError("decide compares runs: select two or more on the runs page")
            if price_file and not price_file.endswith((".yaml", ".yml")):
                # a page asks the server to read this path: only price files, never any file it names
                raise CtxprobeError(f"prices '{price_file}': give a YAML price file (.yaml or .yml)")
            decision = source.read(lambda: choose(run_ids, source.path, prices=price_file or None))
            with _PLOTTING, tempfile.TemporaryDirectory(prefix="ctxprobe-view-") as tmp:
                section = decision_section(decision, Path(tmp))
            return _html(pages.decide_page(section, run_ids, price_file, LINKS))
        return await _guarded(request, build)

    async def rag(request: Request) -> Response:
        """``decide --rag`` as a page: ``?run=ID`` (one or more), ``use=FAMILIES``, ``chunks=256,512``,
        the budgets as ``instruction=``, ``question=``, ``answer=`` (tokens). Read-only: no
        ``--confirm`` here (that sends cases to a model)."""
        q = request.query_params
        run_ids = [r for r in q.getlist("run") if r]

        def build() -> Response:
            from ctxprobe.decide.rag import Budgets
            from ctxprobe.decide.rag_decide import decide_rag
            from ctxprobe.decide.rag_html import rag_section
            from ctxprobe.spec import parse_lengths

            if not run_ids:
                raise CtxprobeError("decide --rag reads runs: give one or more ?run=RUN_ID and use=FAMILIES")
            try:
                budgets = Budgets(*(int(q.get(k, d)) for k, d in (("instruction", 100), ("question", 50),
                                                                   ("answer", 50))))
            except ValueError:
                budgets = Budgets(-1)
            if min(budgets.instruction, budgets.question, budgets.answer) < 0:
                raise CtxprobeError("instruction=, question= and answer= are token counts (0 or more)")
            use = [u.strip() for u in q.get("use", "").split(",") if u.strip()]
            chunks = list(parse_lengths(q["chunks"])) if q.get("chunks") else None
            res = source.read(lambda: decide_rag(run_ids, source.path, use=use, chunks=chunks, budgets=budgets))
            return _html(pages.decide_page(rag_section(res), run_ids, "", LINKS))
        return await _guarded(request, build)

    async def history(request: Request) -> Response:
        return await _guarded(request, lambda: _html(pages.history_page(slices(source), LINKS)))

    async def api_history(request: Request) -> Response:
        return await _guarded(request, lambda: _json(history_json(slices(source))))

    routes = [
        Route("/", runs), Route("/api/runs", api_runs), Route("/api/run/{run_id}", api_run),
        Route("/api/history", api_history), Route("/run/{run_id}", run), Route("/run/{run_id}/cases", cases),
        Route("/run/{run_id}/cell/{family}/{length:int}/{depth}", cell),
        Route("/case/{run_id}/{case_id:path}", case), Route("/compare/{run_a}/{run_b}", compare),
        Route("/decide", decide), Route("/decide/rag", rag), Route("/history", history),
    ]

    async def not_found(request: Request, exc: Exception) -> Response:
        """A URL no route matches: the same one-line page (or JSON) as an unknown run."""
        message = f"no page at {request.url.path}; the runs are at /"
        if request.url.path.startswith("/api/"):
            return _json({"error": message}, status=404)
        return _html(pages.error_page(message, LINKS), status=404)

    return Starlette(routes=routes, exception_handlers={404: not_found})
