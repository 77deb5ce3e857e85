"""``openai-compat:NAME@BASE_URL``: any server that speaks the OpenAI chat API.

vLLM, SGLang, TGI, llama.cpp's ``llama-server``, Ollama, LM Studio, OpenRouter and the
ctxprobe sim server all accept ``POST {base}/chat/completions``. This provider is plain
``httpx`` (no SDK) and does one request per call; retries, timeouts and concurrency belong
to the runner, so failures are only *classified* here:

- 429, 408, 5xx, connection errors, timeouts → :class:`TransientError` (with
  ``retry_after`` from ``Retry-After`` / ``retry-after-ms`` when the server sends it);
- other 4xx (e.g. prompt longer than the server's window) → :class:`PermanentError`;
- a 2xx that is not valid JSON or has no ``choices`` → :class:`PermanentError`.

The API key comes from ``CTXPROBE_API_KEY`` or ``OPENAI_API_KEY`` (optional for local
servers) and is sent as a Bearer token; it is redacted from every error message.

A reasoning budget from the sweep's grid (``GenerateRequest.reasoning_budget``) is sent
as the controls these servers share (:func:`reasoning_fields`): ``max_tokens = answer
budget + N`` (the hard cap every server enforces), ``chat_template_kwargs.enable_thinking
= N > 0`` (the switch of Qwen3-style templates, passed to the template by vLLM, SGLang and
llama.cpp's server) and, for N > 0, ``thinking_token_budget: N`` (vLLM's per-request cap
on the thinking section). Which of them a server honours depends on the server and the
model, so it is never assumed: the report says when a non-zero budget saw no reasoning.
Reasoning comes back in ``reasoning_content``/``reasoning`` or inline ``<think>`` tags.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

import httpx

from ctxprobe.errors import CtxprobeError
from ctxprobe.spec.names import ModelRef, parse_model
from ctxprobe.redaction import register_secret, scrub
from ctxprobe.models.base import (
    GenerateRequest,
    GenerateResult,
    PermanentError,
    SHARED_CACHE,
    ProviderBase,
    TransientError,
    cached_prompt_tokens,
)
from ctxprobe.providers.openai_compat import served_window as served
from ctxprobe.providers.openai_compat.reasoning import BUDGET_FIELD, reasoning_controls, reasoning_fields, refuses_budget_field
from ctxprobe.models._sdk import parse_retry_after
from ctxprobe.models.reasoning import finalize
from ctxprobe.core.tools import declared_tools
from ctxprobe.tokenizers.base import split_prefill

API_KEY_ENV_VARS: tuple[str, ...] = ("CTXPROBE_API_KEY", "OPENAI_API_KEY")
PREFIX = "openai-compat:"
_MAX_REASON = 200


def api_key_from_env() -> str | None:
    for var in API_KEY_ENV_VARS:
        value = os.environ.get(var, "").strip()
        if value:
            return value
    return None


def _server_message(response: httpx.Response) -> str:
    """The server's own error text: ``error.message`` / ``error`` / ``detail`` / raw body."""
    try:
        data = response.json()
    except ValueError:
        return response.text.strip()
    if isinstance(data, dict):
        err = data.get("error")
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
        for key in ("error", "detail", "message"):
            if data.get(key):
                return str(data[key])
    return str(data)


class OpenAICompatProvider(ProviderBase):
    """Chat completions over HTTP against an OpenAI-compatible server."""

    #: What it needs of a case's prompt ids (:func:`ctxprobe.models.ids_policy`): none,
    #: the server tokenizes.
    ids_policy = "drop"
    sends_tool_messages = True  # OpenAI chat shape: tool_calls, role tool, tools declared

    def __init__(
        self,
        model: str,
        base_url: str,
        *,
        api_key: str | None = None,
        timeout: float = 600.0,
        connect_timeout: float = 30.0,
        max_concurrency: int | None = None,
        context_window: int | None = None,
        extra_body: dict[str, Any] | None = None,
    ) -> None:
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.name = f"{PREFIX}{model}@{self.base_url}"
        self.max_concurrency = max_concurrency
        self.context_window = context_window
        self.extra_body = dict(extra_body or {})
        self._api_key = api_key if api_key is not None else api_key_from_env()
        register_secret(self._api_key)  # scrubbed from everything stored or shown, masked forms too
        self._timeout = httpx.Timeout(timeout, connect=min(connect_timeout, timeout))
        self._client: httpx.AsyncClient | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self._window_fetched = context_window is not None
        self.served_model_info: dict[str, Any] = {}
        #: The model's trained window when the server reports it (llama.cpp: ``meta.n_ctx_train``).
        self.trained_context: int | None = None
        #: Position-scaling settings the server reports (RoPE/YaRN keys), None when it reports none.
        self.position_scaling: dict[str, Any] | None = None
        #: Parallel prefix-cache slots the server reports (see :meth:`fetch_slots`).
        self.slots: int | None = None
        #: The server pins a request to a slot (llama.cpp's ``id_slot``): set by :meth:`fetch_slots`.
        self.pins_slots = False
        #: Whether the server takes ``thinking_token_budget``: None until a request with a
        #: budget is answered, False once it refused the field (not sent again this run).
        self.takes_budget_field: bool | None = None
        self._server_json: dict[str, object] = {}  # GET path -> its JSON (None: no answer)

    @classmethod
    def from_spec(cls, spec: str | ModelRef, **kwargs: Any) -> OpenAICompatProvider:
        """The provider of ``openai-compat:NAME@BASE_URL``, read by the one model parser."""
        ref = spec if isinstance(spec, ModelRef) else parse_model(spec)
        if ref.provider != PREFIX[:-1] or ref.base_url is None:
            raise CtxprobeError(f"bad model spec '{ref.raw}': expected openai-compat:NAME@BASE_URL, "
                                "e.g. openai-compat:qwen2.5@http://127.0.0.1:8000/v1")
        return cls(ref.name, ref.base_url, **kwargs)

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAICompatProvider({self.name!r})"

    # -- plumbing -----------------------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    def _client_for_loop(self) -> httpx.AsyncClient:
        """One pooled client per event loop (a client cannot outlive the loop it ran on)."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop or self._client.is_closed:
            # The runner bounds concurrency; the pool must not add a second, hidden limit.
            limits = httpx.Limits(max_connections=None, max_keepalive_connections=64)
            self._client = httpx.AsyncClient(timeout=self._timeout, limits=limits)
            self._client_loop = loop
        return self._client

    def _redact(self, text: str) -> str:
        return scrub(text, (self._api_key,))

    def _reason(self, text: str) -> str:
        text = " ".join(self._redact(text).split())
        return text if len(text) <= _MAX_REASON else text[: _MAX_REASON - 1] + "…"

    async def _send(self, method: str, path: str, body: dict[str, Any] | None = None) -> httpx.Response:
        url = f"{self.base_url}{path}"
        try:
            return await self._client_for_loop().request(method, url, json=body, headers=self._headers())
        except httpx.TimeoutException as exc:
            raise TransientError(f"timeout talking to {self.base_url}: {type(exc).__name__}") from None
        except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
            raise PermanentError(f"bad URL {url}: {self._reason(str(exc))}") from None
        except httpx.TransportError as exc:
            detail = self._reason(str(exc)) or type(exc).__name__
            raise TransientError(f"connection error talking to {self.base_url}: {detail}") from None

    # -- Provider -----------------------------------------------------------------------

    async def generate(self, request: GenerateRequest) -> GenerateResult:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": request.messages,
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            **self.extra_body,
        }
        if (tools := declared_tools(request.messages)) is not None:
            body["tools"] = tools  # a tools layout's conversation: the tool its calls name, declared
        if request.reasoning_budget is not None:
            body["max_tokens"] = request.max_tokens + request.reasoning_budget
            for key, value in reasoning_fields(request.reasoning_budget).items():
                body[key] = {**value, **body.get(key, {})} if isinstance(value, dict) else value
            if self.takes_budget_field is False:
                body.pop(BUDGET_FIELD, None)
        if split_prefill(request.messages)[1] is not None:
            # an answer prefix (trailing assistant message) is continued, not closed: vLLM
            # and SGLang need these flags; llama.cpp's server continues it by itself
            body["continue_final_message"] = True
            body["add_generation_prompt"] = False
        if request.seed is not None:
            body["seed"] = request.seed
        if request.top_p is not None:
            body["top_p"] = request.top_p
        if request.slot is not None and self.pins_slots:
            # llama.cpp: this chain's slot, and reuse what that slot's cache holds
            body["id_slot"] = request.slot % (self.slots or 1)
            body["cache_prompt"] = True
        response = await self._send("POST", "/chat/completions", body)
        if BUDGET_FIELD in body and refuses_budget_field(response.status_code, _server_message(response)):
            # vLLM without --reasoning-parser: sent again without the field, and never again
            self.takes_budget_field = False
            body.pop(BUDGET_FIELD)
            response = await self._send("POST", "/chat/completions", body)
        self._raise_for_status(response)
        result = self._parse(response)
        if BUDGET_FIELD in body:
            self.takes_budget_field = True
        if request.reasoning_budget is not None:
            result.extra["reasoning_controls"] = reasoning_controls(body)
            if self.takes_budget_field is False and request.reasoning_budget > 0:
                result.extra["reasoning_note"] = (
                    f"{self.base_url} refuses {BUDGET_FIELD} (a vLLM server started without --reasoning-parser): "
                    f"reasoning budgets reach the model as {result.extra['reasoning_controls']} only, so the "
                    "thinking itself is not capped; start the server with --reasoning-parser to cap it")
        return result

    def _raise_for_status(self, response: httpx.Response) -> None:
        status = response.status_code
        if 200 <= status < 300:
            return
        reason = f"HTTP {status} from {self.base_url}: {self._reason(_server_message(response))}"
        if status in (408, 429) or status >= 500:
            raise TransientError(reason, retry_after=parse_retry_after(response.headers))
        raise PermanentError(reason)

    def _parse(self, response: httpx.Response) -> GenerateResult:
        def malformed(why: str) -> PermanentError:
            return PermanentError(f"malformed response from {self.base_url}: {why}")

        try:
            data = response.json()
        except ValueError:
            # a cut or garbled body is a transport glitch (proxies, dropped streams): retry it
            raise TransientError(
                f"malformed response from {self.base_url}: not JSON ({self._reason(response.text[:80])!r})"
            ) from None
        if not isinstance(data, dict):
            raise malformed("not a JSON object")
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise malformed("no choices")
        message = choices[0].get("message")
        if not isinstance(message, dict):
            raise malformed("choice has no message")
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            raise malformed("message content is not a string")
        usage = u if isinstance(u := data.get("usage"), dict) else {}
        extra: dict[str, object] = {k: data[k] for k in ("id", "model") if k in data}
        reasoning = message.get("reasoning_content") or message.get("reasoning")
        details = usage.get("completion_tokens_details")
        spent = _int_or_none(details.get("reasoning_tokens")) if isinstance(details, dict) else None
        if spent is not None:
            extra["reasoning_tokens"] = spent
        if (cached := cached_prompt_tokens(data)) is not None:
            extra["cached_prompt_tokens"] = cached
        if isinstance(t := data.get("timings"), dict):  # llama.cpp: the server's own time for this request
            ms = [v for k in ("prompt_ms", "predicted_ms") if isinstance(v := t.get(k), (int, float))]
            if ms:
                extra["server_ms"] = float(sum(ms))
        # reasoning in its own field or inline as <think>…</think>: kept apart from the answer
        return finalize(content or "", choices[0].get("finish_reason"),
                        prompt_tokens=_int_or_none(usage.get("prompt_tokens")),
                        completion_tokens=_int_or_none(usage.get("completion_tokens")),
                        api_reasoning=reasoning if isinstance(reasoning, str) and reasoning else None, extra=extra)

    def reasoning_refusal(self, budget: int) -> str | None:
        """Any budget is sent: whether the served model reasons is the server's to say
        (the report names a non-zero budget under which no reasoning came back)."""
        return None

    async def preflight(self) -> None:
        """Before a sweep: is anything answering at the base URL? One-line error if not.

        Any HTTP answer (even 404 for servers without ``/models``) proves the endpoint is
        up; only an unreachable or unusable URL stops the sweep before it starts."""
        try:
            await self._send("GET", "/models")
        except TransientError as err:
            raise CtxprobeError(f"cannot reach {self.base_url} ({err}); start the server or fix its URL "
                                "(--base-url, a *_BASE_URL variable, or the one after @ in --model)") from None
        except PermanentError as err:
            raise CtxprobeError(f"cannot use {self.base_url}: {err}") from None
        await self.fetch_context_window()
        await self.fetch_slots()

    async def _get_json(self, path: str) -> object:
        """GET ``path`` from the server's root (``base_url`` less ``/v1``) once: its JSON on
        200, else None. Never raises."""
        if path not in self._server_json:
            root = self.base_url.removesuffix("/v1")
            try:
                response = await self._client_for_loop().get(root + path, headers=self._headers())
                self._server_json[path] = response.json() if response.status_code == 200 else None
            except (httpx.HTTPError, ValueError):
                self._server_json[path] = None
        return self._server_json[path]

    async def fetch_slots(self) -> int | None:
        """Best effort: how many prompts the server caches in parallel. llama.cpp's server
        reports ``total_slots`` at ``/props`` (and lists its slots at ``/slots``) and takes
        ``id_slot`` per request; vLLM and SGLang (``owned_by`` in ``/v1/models``) share one
        prefix cache among all requests (:data:`SHARED_CACHE`). Never raises."""
        for path, read in (("/props", served.total_slots), ("/slots", served.slot_count)):
            found = read(await self._get_json(path))
            if found:
                self.slots, self.pins_slots = found, True
                return found
        if str(self.served_model_info.get("owned_by", "")).lower() in ("vllm", "sglang"):
            self.slots = SHARED_CACHE
        return self.slots

    async def fetch_context_window(self) -> int | None:
        """Best effort: the served window, cached once found (:mod:`served_window`).

        llama.cpp's ``/props`` ``default_generation_settings.n_ctx`` (one slot's share of
        ``-c``) comes first, then its ``/slots``' ``n_ctx``, then what ``GET {base}/models``
        states (vLLM's and SGLang's ``max_model_len``, ``context_length``, ``meta.n_ctx``).
        ``meta.n_ctx_train`` is the *trained* window (:attr:`trained_context`), never the
        served one. Never raises: a missing window is not an error."""
        if self._window_fetched:
            return self.context_window
        try:
            response = await self._send("GET", "/models")
            data = response.json() if response.status_code == 200 else {}
        except (TransientError, PermanentError, ValueError):
            return self.context_window
        self._window_fetched = True
        entry = served.models_entry(data, self.model)
        window = None
        if entry is not None:
            self.served_model_info = entry  # what the endpoint says it serves (recorded with the run)
            self.trained_context = served.entry_trained(entry) or self.trained_context
            self.position_scaling = served.position_scaling(entry)
            window = served.entry_window(entry)
        if self.model_is_llamacpp(entry):
            window = (served.props_window(await self._get_json("/props"))
                      or served.slots_window(await self._get_json("/slots")) or window)
        if window is not None:
            self.context_window = window
        return self.context_window

    @staticmethod
    def model_is_llamacpp(entry: dict[str, Any] | None) -> bool:
        """Whether ``/props`` and ``/slots`` are worth asking: llama.cpp's ``/models``
        entries say ``owned_by: llamacpp`` or carry its ``meta``; an unknown server is asked
        too (a 404 costs nothing), vLLM and SGLang are not."""
        owner = str((entry or {}).get("owned_by", "")).lower()
        return owner not in ("vllm", "sglang")

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None and not client.is_closed:
            try:
                await client.aclose()
            except RuntimeError:  # its loop is gone; the sockets went with it
                pass


_int_or_none = served.int_or_none


def make_provider(ref: ModelRef, **_: Any) -> OpenAICompatProvider:
    """The factory the declaration names: the server's provider, ``openai-compat:NAME@BASE_URL``
    (``vllm/NAME``, ``sglang/NAME`` and ``openai-api/NAME`` are read as that by the model parser)."""
    return OpenAICompatProvider.from_spec(ref)
