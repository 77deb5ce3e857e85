"""The Starlette routes of the sim server (:mod:`ctxprobe.sim.server`)."""

from __future__ import annotations

import json
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from ctxprobe.sim.wire import RawBody, Reply, error_body

_NOT_JSON = object()


async def _json(request: Request) -> Any:
    try:
        return json.loads(await request.body() or b"null")
    except (json.JSONDecodeError, UnicodeDecodeError):
        return _NOT_JSON


def _not_json() -> JSONResponse:
    return JSONResponse(error_body("the request body is not valid JSON"), status_code=400)


class _Dropped(Exception):
    """Raised after the response head is sent: uvicorn then closes the connection mid-answer."""


async def _respond(reply: Reply) -> Response:
    if reply.drop:
        async def broken() -> Any:  # the head promises a body that never comes
            raise _Dropped
            yield b""  # pragma: no cover - makes this an async generator
        return StreamingResponse(broken(), status_code=200, headers={"Content-Length": "64"})
    if reply.stream:
        return StreamingResponse(reply.sse(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", **reply.headers})
    if isinstance(reply.body, RawBody):
        return Response(bytes(reply.body), status_code=reply.status, media_type="application/json",
                        headers=reply.headers)
    return JSONResponse(reply.body, status_code=reply.status, headers=reply.headers)


def build_app(sim: Any) -> Starlette:
    """Routes onto ``sim`` (a :class:`ctxprobe.sim.server.SimServer`; typed loosely so
    this module does not import the server that imports it)."""
    async def chat(request: Request) -> Response:
        body = await _json(request)
        if body is _NOT_JSON:
            return _not_json()
        return await _respond(await sim.complete(body, request.headers.get("authorization"), chat=True))

    async def completions(request: Request) -> Response:
        body = await _json(request)
        if body is _NOT_JSON:
            return _not_json()
        return await _respond(await sim.complete(body, request.headers.get("authorization"), chat=False))

    async def models(request: Request) -> Response:
        return JSONResponse(sim.models())

    async def model(request: Request) -> Response:
        wanted = request.path_params["model_id"]
        if wanted != sim.model_id:
            return JSONResponse(error_body(f"The model '{wanted}' does not exist", param="model",
                                           code="model_not_found"), status_code=404)
        return JSONResponse(sim.model_entry())

    async def tokenize(request: Request) -> Response:
        body = await _json(request)
        if body is _NOT_JSON:
            return _not_json()
        return await _respond(sim.tokenize(body))

    async def detokenize(request: Request) -> Response:
        body = await _json(request)
        if body is _NOT_JSON:
            return _not_json()
        return await _respond(sim.detokenize(body))

    async def props(request: Request) -> Response:
        return await _respond(sim.props())

    async def slots(request: Request) -> Response:
        return await _respond(sim.slot_list())

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def http_error(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        message = (f"no route {request.method} {request.url.path}" if status in (404, 405)
                   else getattr(exc, "detail", "internal error"))
        kind = "not_found" if status == 404 else "invalid_request_error"
        return JSONResponse(error_body(message, kind), status_code=status)

    routes = [
        Route("/v1/chat/completions", chat, methods=["POST"]),
        Route("/v1/completions", completions, methods=["POST"]),
        Route("/v1/models", models, methods=["GET"]),
        Route("/v1/models/{model_id:path}", model, methods=["GET"]),
        Route("/tokenize", tokenize, methods=["POST"]),
        Route("/v1/tokenize", tokenize, methods=["POST"]),
        Route("/detokenize", detokenize, methods=["POST"]),
        Route("/v1/detokenize", detokenize, methods=["POST"]),
        Route("/props", props, methods=["GET"]),
        Route("/slots", slots, methods=["GET"]),
        Route("/health", health, methods=["GET"]),
        Route("/v1/health", health, methods=["GET"]),
    ]
    return Starlette(routes=routes, exception_handlers={HTTPException: http_error})
