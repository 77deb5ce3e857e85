"""``endpoint:BASE_URL[?kind=…&model=…]``: count with the serving endpoint's own tokenizer.

The most exact option: the server that will read the prompt counts it, chat template
included. ``BASE_URL`` is the OpenAI base (``http://host:8000/v1``) or the server root;
``kind`` is detected on first use unless given. How the count of the FULLY templated
prompt is obtained, per server kind:

``vllm`` (also the ctxprobe sim server)
    ``POST {root}/tokenize`` with ``{"messages", "add_generation_prompt": true}`` (and a
    tools layout's ``tools``: vLLM's chat form takes them and its template renders them as
    for a chat request): vLLM applies the chat template server-side and tokenizes without
    adding special tokens (its chat default), exactly as for ``/v1/chat/completions``.
    Text: ``{"prompt", "add_special_tokens": false}``. The rendered chat (for
    :func:`~ctxprobe.core.tools.check_renders_tools`) is those ids sent to
    ``POST {root}/detokenize`` (``{"tokens"}`` → ``{"prompt"}``): the server's decode of
    what it counts.
``llama-server`` (llama.cpp's native server)
    ``POST {root}/apply-template`` with ``{"messages"}`` (and a tools layout's ``tools``:
    llama.cpp renders them with its jinja template as for a chat request) returns the
    rendered prompt; then
    ``POST {root}/tokenize`` with ``{"content", "add_special": true, "parse_special": true}``
    — the flags llama-server itself tokenizes chat prompts with (BOS per the vocabulary,
    special-token text parsed). Text: ``add_special``/``parse_special`` false.
``llama-cpp-python`` (``python -m llama_cpp.server``)
    Its only tokenizer routes are ``POST /extras/tokenize`` and ``/extras/tokenize/count``
    with ``{"input"}``, which tokenize raw text with BOS added (when the vocabulary wants
    it) and special tokens parsed; there is no template route. Text counts strip that BOS
    (learnt by tokenizing ``""``). Chat counts use the *probe* below.
``sglang``
    ``POST {root}/tokenize`` takes ``{"prompt": str | [str], "add_special_tokens"}`` only
    (no messages, no tools): text counts are batched in one request; chat counts use the
    probe.
probe (chat, for the last two)
    ``POST {base}/chat/completions`` with ``max_tokens: 1`` and ``temperature: 0``; the
    server's ``usage.prompt_tokens`` is by definition the count of the fully templated
    prompt. Exact, but costs one prefill per count (a prefix cache makes repeats cheap);
    token ids are unknown, so :meth:`encode_chat` returns ``count`` copies of
    :data:`UNKNOWN_ID` (lengths exact, needle positions unavailable).

Counts are cached per text and per message list; requests are plain sync ``httpx``.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit

import httpx

from ctxprobe.core.tools import declared_tools
from ctxprobe.errors import CtxprobeError
from ctxprobe.tokenizers.base import Message, TokenizerBase, split_prefill

KINDS = ("vllm", "llama-server", "llama-cpp-python", "sglang")
UNKNOWN_ID = -1
API_KEY_ENV_VARS = ("CTXPROBE_API_KEY", "OPENAI_API_KEY")
_PROBE_MESSAGES: list[Message] = [{"role": "system", "content": "S"}, {"role": "user", "content": "Hi"}]
_TEXT_CACHE_MAX = 500_000
_CHAT_CACHE_MAX = 64


def _canonical(messages: list[Message]) -> str:
    blob = json.dumps(messages, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class EndpointTokenizer(TokenizerBase):
    """The server's ``/tokenize`` (see the module docstring for each server kind)."""

    def __init__(self, base_url: str, *, kind: str | None = None, model: str | None = None,
                 name: str | None = None, timeout: float = 120.0, workers: int = 8) -> None:
        url = base_url.rstrip("/")
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise CtxprobeError(f"endpoint tokenizer needs an http(s) URL, got {base_url!r}")
        if kind is not None and kind not in KINDS:
            raise CtxprobeError(f"unknown endpoint kind '{kind}': use one of {', '.join(KINDS)}")
        self.base_url = url if url.endswith("/v1") else url + "/v1"
        self.root = self.base_url[: -len("/v1")]
        self.name = name or f"endpoint:{url}"
        self.model = model
        self._kind = kind
        self._api_key = next((os.environ[v].strip() for v in API_KEY_ENV_VARS if os.environ.get(v, "").strip()), None)
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        self._client = httpx.Client(timeout=httpx.Timeout(timeout, connect=10.0), headers=headers)
        self._workers = workers
        self._lock = threading.Lock()
        self._counts: OrderedDict[str, int] = OrderedDict()
        self._chats: OrderedDict[str, list[int]] = OrderedDict()
        self._bos: list[int] | None = None
        self._fingerprint: str | None = None
        #: The server's context window when its tokenize answer says it (vLLM, SGLang).
        self.max_model_len: int | None = None

    def __repr__(self) -> str:
        return f"EndpointTokenizer({self.name!r})"

    # -- HTTP -------------------------------------------------------------------------
    def _post(self, url: str, body: dict[str, Any], *, quiet: bool = False) -> dict[str, Any] | None:
        """JSON POST; ``quiet`` returns None on HTTP errors (used while detecting)."""
        try:
            response = self._client.post(url, json=body)
        except httpx.HTTPError as exc:
            raise CtxprobeError(f"cannot reach the tokenizer endpoint {url}: {type(exc).__name__}") from None
        if response.status_code != 200:
            if quiet:
                return None
            from ctxprobe.redaction import scrub

            text = " ".join(scrub(response.text, (self._api_key,)).split())[:160]
            raise CtxprobeError(f"tokenizer endpoint {url} answered HTTP {response.status_code}: {text}")
        try:
            data = response.json()
        except ValueError:
            if quiet:
                return None
            raise CtxprobeError(f"tokenizer endpoint {url} did not answer JSON") from None
        if isinstance(data, dict) and isinstance(data.get("max_model_len"), int):
            self.max_model_len = data["max_model_len"]
        return data if isinstance(data, dict) else None

    def _with_model(self, body: dict[str, Any]) -> dict[str, Any]:
        return {"model": self.model, **body} if self.model else body

    @staticmethod
    def _tokens(data: dict[str, Any] | None) -> list[int] | None:
        tokens = data.get("tokens") if data else None
        if isinstance(tokens, list) and tokens and all(isinstance(t, int) for t in tokens):
            return tokens
        return None

    # -- detection --------------------------------------------------------------------
    @property
    def kind(self) -> str:
        """The server kind, detected once by trying each kind's route (module docstring)."""
        if self._kind is None:
            with self._lock:
                if self._kind is None:
                    self._kind = self._detect()
        return self._kind

    def _detect(self) -> str:
        probe = self._with_model({"messages": _PROBE_MESSAGES, "add_generation_prompt": True})
        if self._tokens(self._post(f"{self.root}/tokenize", probe, quiet=True)):
            return "vllm"
        rendered = self._post(f"{self.root}/apply-template", {"messages": _PROBE_MESSAGES}, quiet=True)
        if rendered and isinstance(rendered.get("prompt"), str):
            return "llama-server"
        if self._tokens(self._post(f"{self.root}/extras/tokenize", self._with_model({"input": "Hi"}), quiet=True)):
            return "llama-cpp-python"
        if self._tokens(self._post(f"{self.root}/tokenize", self._with_model({"prompt": "Hi"}), quiet=True)):
            return "sglang"
        raise CtxprobeError(
            f"no tokenize route found at {self.root} (tried vLLM, llama.cpp, llama-cpp-python and SGLang "
            f"routes); give ?kind=… if it is one of {', '.join(KINDS)}, or use another tokenizer"
        )

    # -- text ---------------------------------------------------------------------------
    def _encode_remote(self, text: str) -> list[int]:
        kind = self.kind
        if kind in ("vllm", "sglang"):
            data = self._post(f"{self.root}/tokenize", self._with_model({"prompt": text, "add_special_tokens": False}))
        elif kind == "llama-server":
            data = self._post(f"{self.root}/tokenize", {"content": text, "add_special": False, "parse_special": False})
        else:  # llama-cpp-python: BOS is always requested; strip it
            data = self._post(f"{self.root}/extras/tokenize", self._with_model({"input": text}))
            ids = list((data or {}).get("tokens") or [])
            bos = self._bos_prefix()
            return ids[len(bos):] if bos and ids[: len(bos)] == bos else ids
        return list((data or {}).get("tokens") or [])

    def _bos_prefix(self) -> list[int]:
        if self._bos is None:
            data = self._post(f"{self.root}/extras/tokenize", self._with_model({"input": ""}))
            self._bos = list((data or {}).get("tokens") or [])
        return self._bos

    def encode(self, text: str) -> list[int]:
        """Plain-text ids, no BOS (llama-cpp-python parses special-token text regardless)."""
        ids = self._encode_remote(text)
        self._remember(text, len(ids))
        return ids

    def _remember(self, text: str, n: int) -> None:
        with self._lock:
            self._counts[text] = n
            if len(self._counts) > _TEXT_CACHE_MAX:
                self._counts.popitem(last=False)

    def count(self, text: str) -> int:
        with self._lock:
            cached = self._counts.get(text)
        return cached if cached is not None else len(self.encode(text))

    def count_many(self, texts: list[str]) -> list[int]:
        """Cached counts; misses batched in one request (SGLang) or sent concurrently."""
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._counts))
        if missing and self.kind == "sglang":
            data = self._post(f"{self.root}/tokenize", self._with_model({"prompt": missing, "add_special_tokens": False}))
            counts = (data or {}).get("count")
            if not (isinstance(counts, list) and len(counts) == len(missing)):
                raise CtxprobeError(f"tokenizer endpoint {self.root}/tokenize gave no count list for a batch")
            for t, n in zip(missing, counts):
                self._remember(t, int(n))
        elif missing:
            with ThreadPoolExecutor(max_workers=self._workers) as pool:
                list(pool.map(self.encode, missing))
        with self._lock:
            return [self._counts[t] for t in texts]

    # -- chat -----------------------------------------------------------------------------
    def encode_chat(self, messages: list[Message]) -> list[int]:
        key = _canonical(messages)
        with self._lock:
            cached = self._chats.get(key)
        if cached is not None:
            return list(cached)
        ids = self._encode_chat_remote(messages)
        with self._lock:
            self._chats[key] = ids
            if len(self._chats) > _CHAT_CACHE_MAX:
                self._chats.popitem(last=False)
        return list(ids)

    def _encode_chat_remote(self, messages: list[Message]) -> list[int]:
        kind = self.kind
        if kind == "vllm":
            # an answer prefix (trailing assistant message) is continued, not closed
            head, prefix = split_prefill(messages)
            prefill = prefix is not None
            body = self._with_model({"messages": messages, "add_generation_prompt": not prefill,
                                     **({"continue_final_message": True} if prefill else {})})
            if (tools := declared_tools(head)) is not None:
                body["tools"] = tools  # a tools layout's declaration, rendered as the server renders a request's
            return list((self._post(f"{self.root}/tokenize", body) or {}).get("tokens") or [])
        if kind == "llama-server":
            rendered = self.render_chat(messages)
            body = {"content": rendered, "add_special": True, "parse_special": True}
            return list((self._post(f"{self.root}/tokenize", body) or {}).get("tokens") or [])
        return [UNKNOWN_ID] * self._probe_count(messages)

    def _probe_count(self, messages: list[Message]) -> int:
        if not self.model:
            listing = self._client.get(f"{self.base_url}/models")
            entries = listing.json().get("data") if listing.status_code == 200 else None
            if not entries:
                raise CtxprobeError(f"{self.name}: give ?model=NAME (the server lists no models)")
            self.model = str(entries[0].get("id"))
        body = {"model": self.model, "messages": messages, "max_tokens": 1, "temperature": 0}
        data = self._post(f"{self.base_url}/chat/completions", body) or {}
        n = (data.get("usage") or {}).get("prompt_tokens")
        if not isinstance(n, int) or n <= 0:
            raise CtxprobeError(f"{self.base_url}/chat/completions reported no usage.prompt_tokens to count with")
        return n

    def render_chat(self, messages: list[Message]) -> str:
        if self.kind == "vllm":
            # vLLM returns no rendered text: the ids it counts (tools and prefill as counted),
            # decoded by the server — what its template kept, for check_renders_tools to probe
            data = self._post(f"{self.root}/detokenize", self._with_model({"tokens": self.encode_chat(messages)}))
            prompt = (data or {}).get("prompt")
            if not isinstance(prompt, str):
                raise CtxprobeError(f"tokenizer endpoint {self.root}/detokenize answered no 'prompt'")
            return prompt
        if self.kind == "llama-server":
            # an answer prefix follows the server's template verbatim (RULER's template + prefix)
            head, prefix = split_prefill(messages)
            body: dict[str, Any] = {"messages": head}
            if (tools := declared_tools(head)) is not None:
                body["tools"] = tools  # a tools layout's declaration, rendered as the server renders a request's
            rendered = (self._post(f"{self.root}/apply-template", body) or {}).get("prompt", "")
            return str(rendered) + (prefix or "")
        raise CtxprobeError(f"{self.name} ({self.kind}) renders the chat template server-side and does not return it")

    def count_chat(self, messages: list[Message]) -> int:
        return len(self.encode_chat(messages))

    @property
    def renders_tools(self) -> bool:
        """Whether counts and :meth:`render_chat` send a tools layout's declaration with its
        messages: llama-server's ``/apply-template`` and vLLM's chat ``/tokenize`` take
        OpenAI's ``tools``, rendered by the server's template as for a chat request
        (:func:`ctxprobe.core.tools.check_renders_tools` probes what it keeps). SGLang's
        ``/tokenize`` takes text only, and the chat probe's count cannot show what the
        template kept: refused."""
        return self.kind in ("vllm", "llama-server")

    @property
    def chat_template_hash(self) -> str | None:
        """A fingerprint of the server's template+tokenizer: ids of a fixed probe chat."""
        if self._fingerprint is None and self.kind in ("vllm", "llama-server"):
            try:
                ids = self.encode_chat(_PROBE_MESSAGES)
            except CtxprobeError:
                return None
            self._fingerprint = hashlib.sha256(json.dumps(ids).encode()).hexdigest()[:16]
        return self._fingerprint

    @property
    def trained_context(self) -> int | None:
        return None

    def close(self) -> None:
        self._client.close()
