"""A loopback OpenAI-compatible server in front of any in-process Provider (``serve-sim``).

It lets the whole harness (HTTP client, retries, token accounting, truncation checks) and
any OpenAI client be tested against a real socket without a GPU: wrap a ``sim:*`` model and
point ``openai-compat:NAME@URL`` (or the ``openai`` SDK) at it. Built on Starlette + uvicorn.
Endpoints, shaped like the OpenAI API / vLLM / llama.cpp:

- ``POST /v1/chat/completions`` and ``POST /v1/completions``: ``n``, ``stop``, ``seed``,
  ``temperature``, ``top_p``, ``max_tokens``/``max_completion_tokens``; ``stream=true``
  answers with SSE chunks (``stream_options.include_usage`` adds the usage chunk) and
  ``data: [DONE]``. Malformed requests get OpenAI-shaped 400s (:mod:`.sim_wire`).
- ``GET /v1/models`` and ``GET /v1/models/{id}``: ``id`` and ``max_model_len`` (when known).
- ``POST /tokenize`` (also ``/v1/tokenize``): ``{"messages": [...], "tools": [...]}`` (the
  ``tools`` rendered by the tokenizer's chat template, as vLLM renders them; a tokenizer
  without one answers 400 to ``tools``) or ``{"content"|"prompt": str}`` →
  ``{"tokens": [...], "count": n}``.
- ``POST /detokenize`` (also ``/v1/detokenize``): ``{"tokens": [...]}`` → ``{"prompt": text}``
  (vLLM's; special tokens shown).
- ``GET /health``.

``truncate_to=N`` turns it into a *faulty* server that silently left-truncates prompts
longer than N tokens (dropping leading characters of the last user message), answers from
what is left and reports the smaller prompt-token count: the fault ctxprobe must detect.
``faults`` injects the failures of :mod:`ctxprobe.sim.faults`.

The server runs on its own thread with one event loop for its whole life; the provider's
``generate`` runs on that loop, as inside the runner. Binds 127.0.0.1 unless told.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import hashlib
import json
import logging
import socket
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from typing import Any

from ctxprobe.errors import CtxprobeError
from ctxprobe.sim import wire
from ctxprobe.models.base import GenerateRequest, GenerateResult, PermanentError, Provider, TransientError
from ctxprobe.sim.faults import FaultPlan
from ctxprobe.sim.sampling import choice_seed
from ctxprobe.sim.wire import BadRequest, Choice, Params, RawBody, Reply, error_body
from ctxprobe.tokenizers.base import Message, Tokenizer
from ctxprobe.tokenizers.chat_template import ChatTemplate

DEFAULT_MAX_TOKENS = wire.DEFAULT_CHAT_MAX_TOKENS


def _messages_hash(messages: list[Message]) -> str:
    # Same canonical form as ctxprobe.core.case.prompt_hash, so tests can match cases.
    blob = json.dumps(messages, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _prompt_hash(prompt: str) -> str:
    # A raw /v1/completions prompt: hashed apart from a chat with the same text.
    return hashlib.sha256(json.dumps({"prompt": prompt}, ensure_ascii=False).encode("utf-8")).hexdigest()


def _drop_until(count: Callable[[int], int], length: int, limit: int) -> int:
    """Smallest number of leading characters to drop so that ``count(drop) <= limit``."""
    lo, hi = 0, length
    while lo < hi:  # bisection: O(log n) tokenizer calls
        mid = (lo + hi) // 2
        if count(mid) <= limit:
            hi = mid
        else:
            lo = mid + 1
    return lo


def left_truncate(messages: list[Message], tokenizer: Tokenizer, limit: int) -> list[Message]:
    """Drop leading characters of the last user message until ``count_chat <= limit``.

    Mimics a server that keeps the tail of an over-long prompt."""
    if tokenizer.count_chat(messages) <= limit:
        return messages
    idx = max((i for i, m in enumerate(messages) if m["role"] == "user"), default=len(messages) - 1)
    content = messages[idx]["content"]

    def with_drop(drop: int) -> list[Message]:
        out = [dict(m) for m in messages]
        out[idx]["content"] = content[drop:]
        return out

    return with_drop(_drop_until(lambda d: tokenizer.count_chat(with_drop(d)), len(content), limit))


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
        #: Injected failures (see ctxprobe.sim.faults); None serves every request cleanly.
        self.faults = faults
        #: The Authorization header of the latest completion request (tests check keys do arrive).
        self.last_authorization: str | None = None
        self.tokenizer = tokenizer if tokenizer is not None else getattr(provider, "tokenizer", None)
        if truncate_to is not None and self.tokenizer is None:
            raise ValueError("truncate_to needs a tokenizer")
        self.host = host
        self.port = port
        self.truncate_to = truncate_to
        self.model_id = model_id or provider.name
        #: Completion requests (chat or text) answered, successfully or with an error status.
        self.requests_served = 0
        #: Decoding settings of the last completion request, as received (every one: ``decodings``).
        self.last_decoding: dict[str, Any] = {}
        self.decodings: list[dict[str, Any]] = []
        #: (max_tokens, reasoning budget) of every completion request that named a budget.
        self.reasoning_requests: list[tuple[int, int]] = []
        #: How many times each prompt (hash of its messages) was received.
        self.prompt_counts: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._server: Any = None  # uvicorn.Server
        self._thread: threading.Thread | None = None
        self._port: int | None = None

    # -- lifecycle ----------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        if self._server is None or self._port is None:
            raise RuntimeError("server not started")
        return f"http://{self.host}:{self._port}/v1"

    def start(self) -> str:
        """Bind, serve on a background thread, and return the base URL (``.../v1``).

        A port already in use raises a one-line :class:`CtxprobeError`."""
        if self._server is not None:
            return self.base_url
        import uvicorn

        from ctxprobe.sim.app import build_app

        sock = _bind(self.host, self.port)
        self._port = sock.getsockname()[1]
        logging.getLogger("uvicorn.error").setLevel(logging.CRITICAL)  # errors are answered, not logged
        config = uvicorn.Config(build_app(self), log_config=None, log_level="critical", access_log=False,
                                lifespan="off", timeout_keep_alive=60)
        server = uvicorn.Server(config)
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(server.serve(sockets=[sock]))
            except BaseException as exc:  # noqa: BLE001 - reported by start()
                failure.append(exc)
            finally:
                pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
                for task in pending:  # in-flight generations (a hang fault): cancelled, not awaited forever
                    task.cancel()
                if pending:
                    loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
                loop.close()
                sock.close()

        self._server = server
        self._thread = threading.Thread(target=run, name=f"sim-server-{self._port}", daemon=True)
        self._thread.start()
        while not server.started and self._thread.is_alive():
            time.sleep(0.01)
        if not server.started:
            self._server = None
            raise RuntimeError(f"the sim server did not start: {failure[0] if failure else 'unknown error'}")
        return self.base_url

    def stop(self) -> None:
        """Stop serving and release the port; idempotent."""
        if self._server is not None:
            self._server.should_exit = True
            self._server.force_exit = True  # do not wait for hung requests: they are cancelled
            if self._thread is not None:
                self._thread.join(timeout=10)
        self._server = None
        self._thread = None

    def __enter__(self) -> SimServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- hooks ----------------------------------------------------------------------------

    def observe_prompt(self, messages: list[Message]) -> dict[str, Any]:
        """Called once per valid chat request before it is answered; returns extra ``usage`` fields."""
        return {}

    @contextlib.asynccontextmanager
    async def holding(self, messages: list[Message], body: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        """Around one valid chat request's answer (``body`` as received): yields extra
        ``usage`` fields. A server with slots holds one here while it answers."""
        yield self.observe_prompt(messages)

    def props(self) -> Reply:
        """llama.cpp's ``GET /props``; a server without slots has none (404, like vLLM)."""
        return Reply(404, error_body("no route GET /props", "not_found"))

    def slot_list(self) -> Reply:
        """llama.cpp's ``GET /slots``."""
        return Reply(404, error_body("no route GET /slots", "not_found"))

    # -- completions (run on the server's event loop) --------------------------------------

    def _record(self, params: Params, authorization: str | None, chat: bool) -> tuple[str, str | None]:
        digest = _messages_hash(params.messages) if chat else _prompt_hash(params.prompt or "")
        with self._lock:
            self.prompt_counts[digest] += 1
            self.last_authorization = authorization
            self.last_decoding = {"temperature": params.temperature, "max_tokens": params.max_tokens,
                                  **({"top_p": params.top_p} if params.top_p is not None else {}),
                                  **({"seed": params.seed} if params.seed is not None else {})}
            self.decodings.append(self.last_decoding)
            if params.reasoning_budget is not None:
                self.reasoning_requests.append((params.max_tokens, params.reasoning_budget))
            fault = self.faults.next_fault(digest) if self.faults is not None else None
        return digest, fault

    async def complete(self, body: object, authorization: str | None, *, chat: bool) -> Reply:
        """Answer one chat (``chat``) or text completion request."""
        try:
            return await self._complete(body, authorization, chat)
        finally:
            with self._lock:
                self.requests_served += 1

    async def _complete(self, body: object, authorization: str | None, chat: bool) -> Reply:
        try:
            params = wire.parse_request(body, chat=chat)
        except BadRequest as exc:
            return Reply(400, error_body(str(exc), param=exc.param))
        async with (self.holding(params.messages, body) if chat and isinstance(body, dict)
                    else _no_usage()) as extra_usage:
            return await self._answer(params, authorization, chat, extra_usage)

    async def _answer(self, params: Params, authorization: str | None, chat: bool,
                      extra_usage: dict[str, Any]) -> Reply:
        _, fault = self._record(params, authorization, chat)
        plan = self.faults  # a fault only ever comes from the plan
        if fault is not None and plan is not None and fault not in ("hang", "empty"):
            return _fault_reply(fault, plan)
        if fault == "hang" and plan is not None:
            await asyncio.sleep(plan.hang_seconds)
        messages, prompt_ids = self._prompt(params, chat)
        budget = params.reasoning_budget
        if budget is not None and budget >= params.max_tokens:
            return Reply(400, error_body(f"max_tokens ({params.max_tokens}) must exceed thinking_token_budget "
                                         f"({budget}): room is needed for the answer", param="max_tokens"))
        # max_tokens caps thinking and answer together: the model's answer limit is what is left
        request = GenerateRequest(messages=messages, max_tokens=params.max_tokens - (budget or 0),
                                  temperature=params.temperature, seed=params.seed, top_p=params.top_p,
                                  prompt_ids=prompt_ids, reasoning_budget=budget)
        try:
            results: list[GenerateResult] = [await self.provider.generate(replace(request, seed=choice_seed(
                params.seed, i))) for i in range(params.n)]  # n choices: n samples (sim/sampling.py)
        except TransientError as exc:
            headers = {"Retry-After": f"{exc.retry_after:g}"} if exc.retry_after is not None else {}
            return Reply(503, error_body(str(exc), "server_error"), headers)
        except PermanentError as exc:
            code = "context_length_exceeded" if "context window" in str(exc) else None
            return Reply(400, error_body(str(exc), code=code))
        except Exception as exc:  # noqa: BLE001 - a provider bug must still get an HTTP answer
            return Reply(500, error_body(f"internal error: {type(exc).__name__}", "server_error"))
        choices = [self._choice(r, params, empty=fault == "empty") for r in results]
        usage = wire.usage(results[0].prompt_tokens, choices, extra_usage)
        if params.stream:
            return Reply(200, wire.stream_chunks(params, choices, usage, chat=chat), stream=True)
        return Reply(200, wire.response_body(params, choices, usage, chat=chat))

    def _prompt(self, params: Params, chat: bool) -> tuple[list[Message], list[int] | None]:
        """What the model sees: the messages (left-truncated if so configured) and, for a raw
        text prompt, its token ids (no chat template applied)."""
        if chat:
            if self.truncate_to is not None:
                assert self.tokenizer is not None
                return left_truncate(params.messages, self.tokenizer, self.truncate_to), None
            return params.messages, None
        prompt = params.prompt or ""
        if self.tokenizer is None:
            return params.messages, None
        if self.truncate_to is not None:
            tok = self.tokenizer
            prompt = prompt[_drop_until(lambda d: tok.count(prompt[d:]), len(prompt), self.truncate_to):]
        return [{"role": "user", "content": prompt}], self.tokenizer.encode(prompt)

    def _choice(self, result: GenerateResult, params: Params, *, empty: bool) -> Choice:
        if empty:
            return Choice("", "stop", 0)
        text, stopped = wire.apply_stop(result.text, params.stop)
        tokens = result.completion_tokens
        if stopped:
            tokens = self.tokenizer.count(text) if self.tokenizer is not None and text else 0
        reasoning = result.extra.get("reasoning")
        spent = result.extra.get("reasoning_tokens")
        return Choice(text, "stop" if stopped else (result.finish_reason or "stop"), tokens,
                      str(reasoning) if reasoning else None, spent if isinstance(spent, int) else None)

    # -- other endpoints --------------------------------------------------------------------

    def model_entry(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"id": self.model_id, "object": "model", "created": 0, "owned_by": "ctxprobe"}
        if self.provider.context_window is not None:
            entry["max_model_len"] = self.provider.context_window
        return entry

    def models(self) -> dict[str, Any]:
        return {"object": "list", "data": [self.model_entry()]}

    def tokenize(self, body: object) -> Reply:
        if self.tokenizer is None:
            return Reply(501, error_body("this server has no tokenizer", "not_implemented"))
        try:
            if not isinstance(body, dict):
                raise BadRequest("the request body must be a JSON object")
            if "messages" in body:
                tokens = self._chat_tokens(wire.parse_messages(body["messages"]), wire.parse_tools(body.get("tools")))
            else:
                text = body.get("content", body.get("prompt"))
                if not isinstance(text, str):
                    raise BadRequest("give 'messages', 'content' or 'prompt'")
                tokens = self.tokenizer.encode(text)
        except BadRequest as exc:
            return Reply(400, error_body(str(exc), param=exc.param))
        out: dict[str, Any] = {"tokens": tokens, "count": len(tokens)}
        if self.provider.context_window is not None:
            out["max_model_len"] = self.provider.context_window
        return Reply(200, out)

    def _chat_tokens(self, messages: list[Message], tools: list[dict[str, Any]] | None) -> list[int]:
        """vLLM's chat form of ``/tokenize``: the messages and the body's ``tools`` (only
        those: none when it sends none) through the tokenizer's chat template. A tokenizer
        without a template rendered here (``tiktoken:``, ``approx``) counts the messages
        its own way, and cannot take ``tools``."""
        tok = self.tokenizer
        assert tok is not None
        template = getattr(tok, "template", None)
        encode = getattr(tok, "encode_rendered", None)
        if isinstance(template, ChatTemplate) and callable(encode):
            try:
                return list(encode(template.render_with_tools(messages, tools)))
            except CtxprobeError as exc:  # a template that raises on these messages
                raise BadRequest(str(exc), "messages") from None
        if tools is not None:
            raise BadRequest(f"this server's tokenizer ({tok.name}) has no chat template to render 'tools' with",
                             "tools")
        return tok.encode_chat(messages)

    def detokenize(self, body: object) -> Reply:
        """vLLM's ``POST /detokenize``: ``{"tokens": [...]}`` → ``{"prompt": text}``."""
        decode = getattr(self.tokenizer, "decode", None)
        if not callable(decode):
            return Reply(501, error_body("this server's tokenizer cannot decode", "not_implemented"))
        tokens = body.get("tokens") if isinstance(body, dict) else None
        if not isinstance(tokens, list) or not all(isinstance(t, int) and not isinstance(t, bool) and t >= 0
                                                   for t in tokens):
            return Reply(400, error_body("'tokens' must be an array of token ids (non-negative integers)",
                                         param="tokens"))
        try:
            text = decode(tokens)
        except Exception as exc:  # noqa: BLE001 - the Rust decoder raises bare exceptions on bad ids
            return Reply(400, error_body(f"cannot decode these tokens: {' '.join(str(exc).split())[:120]}",
                                         param="tokens"))
        return Reply(200, {"prompt": str(text)})


@contextlib.asynccontextmanager
async def _no_usage() -> AsyncIterator[dict[str, Any]]:
    yield {}


def _fault_reply(fault: str, plan: FaultPlan) -> Reply:
    if fault == "429":
        return Reply(429, error_body("rate limited (injected)", "rate_limit_error"),
                     {"Retry-After": f"{plan.retry_after:g}"})
    if fault == "503":
        return Reply(503, error_body("overloaded (injected)", "server_error"))
    if fault == "malformed":
        return Reply(200, RawBody(b'{"choices": [ {"message": '))
    if fault == "drop":
        return Reply(200, None, drop=True)
    return Reply(500, error_body("internal error (injected)", "server_error"))  # "500" and "dead"


def _bind(host: str, port: int) -> socket.socket:
    """A listening socket, or a one-line error (port in use, bad host)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named: asyncio sets TCP_NODELAY only on connections whose socket says TCP, and
    # accepted ones inherit this proto. With 0, Nagle held each response's body until the
    # client's delayed ACK of its headers: 40 ms a request on a kept-alive connection.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise CtxprobeError(f"port {port} on {host} is already in use: stop what is using it or "
                                "choose another with --port (0 = any free port)") from None
        if exc.errno == errno.EACCES:
            raise CtxprobeError(f"no permission to bind {host}:{port}: use a port above 1023") from None
        raise CtxprobeError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.setblocking(False)
    return sock


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
    """Serve until interrupted (Ctrl-C); ``on_ready`` gets the base URL once listening."""
    server = SimServer(provider, tokenizer, host=host, port=port, truncate_to=truncate_to, model_id=model_id)
    url = server.start()
    try:  # Ctrl-C from here on (even while announcing) is a clean stop
        if on_ready is not None:
            on_ready(url)
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
