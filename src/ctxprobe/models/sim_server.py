"""A loopback HTTP server that speaks the OpenAI chat API in front of any in-process Provider.

It lets the whole harness (HTTP client, retries, token accounting, truncation checks) be
tested against a real socket without a GPU: wrap a ``sim:*`` model and point
``openai-compat:NAME@URL`` at it. Endpoints, shaped like vLLM / llama.cpp:

- ``POST /v1/chat/completions``: OpenAI request → OpenAI response with ``usage``.
- ``GET /v1/models``: ``data[0]`` with ``id`` and ``max_model_len`` (when known).
- ``POST /tokenize`` (also ``/v1/tokenize``): ``{"messages": [...]}`` or
  ``{"content"|"prompt": str}`` → ``{"tokens": [...], "count": n}``.
- ``GET /health``.

``truncate_to=N`` turns it into a *faulty* server that silently left-truncates prompts
longer than N tokens (dropping leading characters of the last user message), answers from
what is left and reports the smaller prompt-token count: the fault ctxprobe must detect.

Stdlib only. Requests are accepted on threads; the provider runs on one private event loop
(a single loop for its whole life, as inside the runner). Binds 127.0.0.1 unless told.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ctxprobe.models.faults import FaultPlan
from ctxprobe.models.base import GenerateRequest, GenerateResult, PermanentError, Provider, TransientError
from ctxprobe.tokenizers.base import Message, Tokenizer, split_prefill

DEFAULT_MAX_TOKENS = 256


class _BadRequest(Exception):
    """The client sent something an OpenAI server would answer with 400."""


def _parse_messages(raw: object) -> list[Message]:
    if not isinstance(raw, list) or not raw:
        raise _BadRequest("'messages' must be a non-empty list")
    messages: list[Message] = []
    for m in raw:
        if not isinstance(m, dict) or not isinstance(m.get("role"), str):
            raise _BadRequest("each message needs a string 'role'")
        content = m.get("content", "")
        if isinstance(content, list):  # OpenAI content parts: keep the text parts
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        if not isinstance(content, str):
            raise _BadRequest("message 'content' must be a string or a list of text parts")
        messages.append({"role": m["role"], "content": content})
    return messages


def _messages_hash(messages: list[Message]) -> str:
    # Same canonical form as ctxprobe.tasks.case.prompt_hash, so tests can match cases.
    blob = json.dumps(messages, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def left_truncate(messages: list[Message], tokenizer: Tokenizer, limit: int) -> list[Message]:
    """Drop leading characters of the last user message until ``count_chat <= limit``.

    Mimics a server that keeps the tail of an over-long prompt. Bisection on the number of
    dropped characters keeps this to O(log n) tokenizer calls.
    """
    if tokenizer.count_chat(messages) <= limit:
        return messages
    idx = max((i for i, m in enumerate(messages) if m["role"] == "user"), default=len(messages) - 1)
    content = messages[idx]["content"]

    def with_drop(drop: int) -> list[Message]:
        out = [dict(m) for m in messages]
        out[idx]["content"] = content[drop:]
        return out

    lo, hi = 0, len(content)  # smallest drop that fits (or everything)
    while lo < hi:
        mid = (lo + hi) // 2
        if tokenizer.count_chat(with_drop(mid)) <= limit:
            hi = mid
        else:
            lo = mid + 1
    return with_drop(lo)


class SimServer:
    """An OpenAI-compatible server on 127.0.0.1 around ``provider``; see the module docstring."""

    def __init__(
        self,
        provider: Provider,
        tokenizer: Tokenizer | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        truncate_to: int | None = None,
        model_id: str | None = None,
        faults: FaultPlan | None = None,
    ) -> None:
        self.provider = provider
        #: Injected failures (see ctxprobe.models.faults); None serves every request cleanly.
        self.faults = faults
        #: The Authorization header of the latest chat request (tests check keys do arrive).
        self.last_authorization: str | None = None
        self.tokenizer = tokenizer if tokenizer is not None else getattr(provider, "tokenizer", None)
        if truncate_to is not None and self.tokenizer is None:
            raise ValueError("truncate_to needs a tokenizer")
        self.host = host
        self.port = port
        self.truncate_to = truncate_to
        self.model_id = model_id or provider.name
        #: Chat completions answered (successfully or with an error status).
        self.requests_served = 0
        #: Decoding settings of the last chat request, as received (what a client really sent).
        self.last_decoding: dict[str, Any] = {}
        #: How many times each prompt (hash of its messages) was received.
        self.prompt_counts: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._threads: list[threading.Thread] = []
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- lifecycle ----------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("server not started")
        return f"http://{self.host}:{self._httpd.server_address[1]}/v1"

    def start(self) -> str:
        """Bind, serve on background threads, and return the base URL (``.../v1``)."""
        if self._httpd is not None:
            return self.base_url
        self._loop = asyncio.new_event_loop()
        loop_thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        loop_thread.start()
        self._httpd = _Httpd((self.host, self.port), _Handler, self)
        http_thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)
        http_thread.start()
        self._threads = [loop_thread, http_thread]
        return self.base_url

    def stop(self) -> None:
        """Stop serving and release the port; idempotent."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._loop is not None:
            # Cancel in-flight generations so no handler thread waits forever on a dead loop.
            asyncio.run_coroutine_threadsafe(_cancel_all(), self._loop).result(timeout=5)
            self._loop.call_soon_threadsafe(self._loop.stop)
            for t in self._threads:
                t.join(timeout=5)
            self._loop.close()
            self._loop = None
        self._threads = []

    def __enter__(self) -> SimServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- request handling (called on handler threads) -----------------------------------

    def chat(self, body: dict[str, Any]) -> tuple[int, dict[str, Any], dict[str, str]]:
        """Answer one chat completion: (status, JSON body, extra headers)."""
        try:
            return self._chat(body)
        finally:
            with self._lock:
                self.requests_served += 1

    def _chat(self, body: dict[str, Any]) -> tuple[int, dict[str, Any], dict[str, str]]:
        try:
            messages = _parse_messages(body.get("messages"))
            max_tokens = body.get("max_completion_tokens", body.get("max_tokens")) or DEFAULT_MAX_TOKENS
            if not isinstance(max_tokens, int) or max_tokens <= 0:
                raise _BadRequest("'max_tokens' must be a positive integer")
            if split_prefill(messages)[1] is not None and body.get("continue_final_message") is not True:
                # vLLM would close that turn and start a new one: the prompt would differ
                # from the one counted, so say so instead of answering something else
                raise _BadRequest("a trailing assistant message (answer prefix) needs "
                                  "'continue_final_message': true")
            seed = body.get("seed")
            temperature = float(body.get("temperature", 0.0) or 0.0)
            top_p = body.get("top_p")
            if top_p is not None and not (isinstance(top_p, (int, float)) and 0 < top_p <= 1):
                raise _BadRequest("'top_p' must be a number in (0, 1]")
        except (_BadRequest, TypeError, ValueError) as exc:
            return 400, _error(str(exc), "invalid_request_error"), {}
        digest = _messages_hash(messages)
        with self._lock:
            self.prompt_counts[digest] += 1
            self.last_decoding = {k: body[k] for k in ("temperature", "top_p", "seed", "max_tokens") if k in body}
            fault = self.faults.next_fault(digest) if self.faults is not None else None
        if fault is not None and fault not in ("hang", "empty"):
            return _fault_response(fault, self.faults)  # type: ignore[arg-type]
        if fault == "hang":
            time.sleep(self.faults.hang_seconds)  # type: ignore[union-attr]
        if self.truncate_to is not None:
            assert self.tokenizer is not None
            messages = left_truncate(messages, self.tokenizer, self.truncate_to)
        request = GenerateRequest(
            messages=messages, max_tokens=max_tokens, temperature=temperature, seed=seed, top_p=top_p
        )
        try:
            assert self._loop is not None
            future = asyncio.run_coroutine_threadsafe(self.provider.generate(request), self._loop)
            result: GenerateResult = future.result()
        except TransientError as exc:
            headers = {"Retry-After": f"{exc.retry_after:g}"} if exc.retry_after is not None else {}
            return 503, _error(str(exc), "server_error"), headers
        except PermanentError as exc:
            return 400, _error(str(exc), "invalid_request_error"), {}
        except Exception as exc:  # a provider bug must still get an HTTP answer
            return 500, _error(f"internal error: {type(exc).__name__}", "server_error"), {}
        response = {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or self.model_id,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "" if fault == "empty" else result.text},
                    "finish_reason": result.finish_reason or "stop",
                }
            ],
            "usage": {
                "prompt_tokens": result.prompt_tokens,
                "completion_tokens": result.completion_tokens,
                "total_tokens": (result.prompt_tokens or 0) + (result.completion_tokens or 0),
            },
        }
        return 200, response, {}

    def models(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"id": self.model_id, "object": "model", "created": 0, "owned_by": "ctxprobe"}
        if self.provider.context_window is not None:
            entry["max_model_len"] = self.provider.context_window
        return {"object": "list", "data": [entry]}

    def tokenize(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if self.tokenizer is None:
            return 501, _error("this server has no tokenizer", "not_implemented")
        try:
            if "messages" in body:
                tokens = self.tokenizer.encode_chat(_parse_messages(body["messages"]))
            else:
                text = body.get("content", body.get("prompt"))
                if not isinstance(text, str):
                    raise _BadRequest("give 'messages', 'content' or 'prompt'")
                tokens = self.tokenizer.encode(text)
        except _BadRequest as exc:
            return 400, _error(str(exc), "invalid_request_error")
        out: dict[str, Any] = {"tokens": tokens, "count": len(tokens)}
        if self.provider.context_window is not None:
            out["max_model_len"] = self.provider.context_window
        return 200, out


async def _cancel_all() -> None:
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


class DropConnection(Exception):
    """Close the connection without answering (a fault)."""


def _fault_response(fault: str, plan: FaultPlan) -> tuple[int, Any, dict[str, str]]:
    if fault == "429":
        return 429, _error("rate limited (injected)", "rate_limit_error"), {"Retry-After": f"{plan.retry_after:g}"}
    if fault == "503":
        return 503, _error("overloaded (injected)", "server_error"), {}
    if fault == "malformed":
        return 200, RawBody(b'{"choices": [ {"message": '), {}
    if fault == "drop":
        raise DropConnection
    return 500, _error("internal error (injected)", "server_error"), {}  # "500" and "dead"


class RawBody(bytes):
    """A response body sent as-is (not JSON-encoded): for the malformed-JSON fault."""


def _error(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "code": None}}


class _Httpd(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = False

    def __init__(self, address: tuple[str, int], handler: type, sim: SimServer) -> None:
        self.sim = sim
        super().__init__(address, handler)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as clients expect from real servers
    timeout = 60  # idle keep-alive connections end by themselves
    server: _Httpd

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
        return None  # quiet: tests and the CLI print what matters

    def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = bytes(payload) if isinstance(payload, RawBody) else json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> dict[str, Any] | None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length > 0 else b""
        try:
            body = json.loads(raw or b"null")
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None
        return body if isinstance(body, dict) else None

    def _path(self) -> str:
        return self.path.split("?", 1)[0].rstrip("/")

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        path = self._path()
        if path in ("/health", "/v1/health"):
            self._send(200, {"status": "ok"})
        elif path == "/v1/models":
            self._send(200, self.server.sim.models())
        else:
            self._send(404, _error(f"no route GET {path}", "not_found"))

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        path = self._path()
        body = self._body()
        if path not in ("/v1/chat/completions", "/tokenize", "/v1/tokenize"):
            self._send(404, _error(f"no route POST {path}", "not_found"))
        elif body is None:
            self._send(400, _error("request body must be a JSON object", "invalid_request_error"))
        elif path == "/v1/chat/completions":
            self.server.sim.last_authorization = self.headers.get("Authorization")
            try:
                self._send(*self.server.sim.chat(body))
            except DropConnection:
                self.close_connection = True  # no response at all: the client sees a dropped connection
        else:
            self._send(*self.server.sim.tokenize(body))


def serve_forever(
    provider: Provider,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    tokenizer: Tokenizer | None = None,
    truncate_to: int | None = None,
    model_id: str | None = None,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Serve until interrupted (Ctrl-C); ``on_ready`` gets the base URL once bound."""
    server = SimServer(
        provider, tokenizer, host=host, port=port, truncate_to=truncate_to, model_id=model_id
    )
    url = server.start()
    if on_ready is not None:
        on_ready(url)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
