"""The one thin provider protocol.

A provider turns a chat request into one model reply. Retries, concurrency, timeouts,
caching and accounting live once, in the runner: a provider only raises
:class:`TransientError` (worth retrying) or :class:`PermanentError`.
"""

from __future__ import annotations

import types
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, TypeVar, runtime_checkable

from ctxprobe.core.optional import fill_defaults
from ctxprobe.core.case import IdsPolicy
from ctxprobe.core.prefix import CacheHint
from ctxprobe.tokenizers.base import Message, Tokenizer


@dataclass(frozen=True)
class GenerateRequest:
    messages: list[Message]
    max_tokens: int
    temperature: float = 0.0
    seed: int | None = None
    top_p: float | None = None  # None: not sent (the server's default)
    #: Token ids of the templated prompt when the caller already has them; in-process
    #: providers use them as-is so the model sees exactly what was counted.
    prompt_ids: list[int] | None = None
    #: Reasoning (thinking) tokens allowed on top of ``max_tokens`` (0: no thinking); None:
    #: the sweep has no budget axis, the provider's own default (or its ``thinking`` option).
    reasoning_budget: int | None = None
    #: Where this prompt shares its prefix with others of its group (prompt caching); None:
    #: ask for no caching (a provider that caches by itself still may).
    cache: CacheHint | None = None
    #: The server slot (prefix cache) this request should use, from the runner's prefix-aware
    #: scheduling: the cases of one chain share a prefix and all go to one slot. Providers
    #: that can pin a slot (llama.cpp's ``id_slot``) do; the others ignore it.
    slot: int | None = None


@dataclass
class GenerateResult:
    text: str
    finish_reason: str | None = None  # "stop" | "length" | ...
    prompt_tokens: int | None = None  # as reported by the server / runtime
    completion_tokens: int | None = None
    extra: dict[str, object] = field(default_factory=dict)


def cached_prompt_tokens(data: object) -> int | None:
    """Prompt tokens the server says it served from its prefix/prompt cache, if it says.

    Read from whichever field the API uses: OpenAI, vLLM, SGLang and recent llama.cpp
    ``usage.prompt_tokens_details.cached_tokens``; llama.cpp's ``timings.cache_n``;
    Anthropic ``usage.cache_read_input_tokens``; Gemini ``cached_content_token_count``.
    ``None`` when the response carries none of them (not the same as 0)."""
    if not isinstance(data, dict):
        return None
    usage = u if isinstance(u := data.get("usage"), dict) else {}
    details = usage.get("prompt_tokens_details")
    candidates = [
        details.get("cached_tokens") if isinstance(details, dict) else None,
        t.get("cache_n") if isinstance(t := data.get("timings"), dict) else None,
        usage.get("cache_read_input_tokens"),
        m.get("cached_content_token_count") if isinstance(m := data.get("usage_metadata"), dict) else None,
    ]
    for value in candidates:
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
    return None


class TransientError(Exception):
    """A failure worth retrying (429, 5xx, dropped connection, timeout)."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class PermanentError(Exception):
    """A failure that retrying will not fix (4xx other than 429, bad response)."""


@runtime_checkable
class Provider(Protocol):
    #: The model spec string, e.g. ``sim:perfect`` or ``openai-compat:qwen@http://...``.
    name: str
    #: Largest number of requests the provider can usefully take at once (None: no limit).
    max_concurrency: int | None
    #: The model's context window if known (prompt + output tokens).
    context_window: int | None
    # Optional members, with their defaults on ProviderBase (every resolved provider has
    # them: ctxprobe's inherit the base, a plugin's is given them by resolve_provider).
    # read-only in the protocol: a provider may declare them as class attributes, narrower
    # literals or instance attributes alike
    @property
    def trained_context(self) -> int | None: ...
    @property
    def ids_policy(self) -> IdsPolicy: ...
    @property
    def preflight(self) -> Callable[..., Awaitable[None]] | None: ...
    @property
    def served_model_info(self) -> Mapping[str, Any]: ...
    @property
    def tokenizer(self) -> Tokenizer | None: ...
    @property
    def position_scaling(self) -> Mapping[str, Any] | None: ...
    @property
    def slots(self) -> int | None: ...

    def reasoning_refusal(self, budget: int) -> str | None: ...

    def sampling_refusal(self, temperature: float, top_p: float | None, thinking: bool = False) -> str | None: ...

    def layout_refusal(self, messages: str) -> str | None: ...

    async def generate(self, request: GenerateRequest) -> GenerateResult: ...

    async def aclose(self) -> None: ...


class ProviderBase:
    """The optional members of a provider, each declared once with its default. ctxprobe's
    providers inherit it; a plugin's provider that does not is given the defaults it lacks
    where it is made (:func:`with_provider_defaults`, called by
    :func:`ctxprobe.models.resolve_provider`), so callers read plain attributes."""

    max_concurrency: int | None = None
    context_window: int | None = None
    #: The context the model was trained for, when the provider knows it (a GGUF's
    #: metadata); None: the tokenizer's, if it knows one.
    trained_context: int | None = None
    #: What it needs of a case's prompt ids: remote ones "drop" them, llama.cpp "keep"s
    #: them; "compact" (sims read len(); hf_local copies with list()).
    ids_policy: IdsPolicy = "compact"
    #: A remote provider's reachability check (also learns the served window), run once
    #: before a sweep; None: in process, nothing to probe.
    preflight: ClassVar[Callable[..., Awaitable[None]] | None] = None
    #: What the endpoint says it serves (recorded with the run); filled by ``preflight``.
    served_model_info: Mapping[str, Any] = types.MappingProxyType({})
    #: The tokenizer an in-process or simulated model counts and reads with (None: remote).
    tokenizer: Tokenizer | None = None
    #: Position scaling (RoPE/YaRN) the server reports for the model, if any; None: none
    #: reported (a served window past the trained one is then named at preflight).
    position_scaling: Mapping[str, Any] | None = None
    #: How many prompts the server keeps prefix caches for in parallel, when it says
    #: (llama.cpp: ``/props`` ``total_slots``; :data:`SHARED_CACHE` for a cache every request
    #: shares, vLLM's and SGLang's); filled by ``preflight``. None: unknown, and the runner
    #: sends case by case as before.
    slots: int | None = None

    def reasoning_refusal(self, budget: int) -> str | None:
        """Why this model cannot be sent reasoning budget ``budget`` (one line), or None
        when it can. Default: a model that cannot reason takes budget 0 only (sent as a
        plain request); a non-zero budget would be a silent no-op, so it is refused."""
        if budget == 0:
            return None
        name = getattr(self, "name", type(self).__name__)  # every provider has a name; the base declares none
        return (f"{name} cannot reason, so a reasoning budget of {budget:,} tokens would change nothing: "
                "give --reasoning-budgets 0 or drop the flag")

    def sampling_refusal(self, temperature: float, top_p: float | None, thinking: bool = False) -> str | None:
        """Why this model's requests cannot carry this temperature and top_p as sent (one
        line: a prompt variant's decoding would be changed or dropped), or None. Asked of
        each decoding variant before anything is sent; ``thinking``: the sweep's reasoning
        budgets include one above 0. Default: every setting is sent."""
        return None

    #: It sends a ``tools`` layout's conversation as the model's API takes it (assistant
    #: ``tool_calls``, ``tool`` results, the tool declared: docs/layouts.md).
    sends_tool_messages: ClassVar[bool] = False

    def layout_refusal(self, messages: str) -> str | None:
        """Why this model cannot be sent a case in message layout ``messages`` (one line),
        or None. Asked before anything is sent. Default: ``single`` and ``turns`` (plain
        user/assistant turns) go everywhere; ``tools`` where :attr:`sends_tool_messages`."""
        if messages != "tools" or self.sends_tool_messages:
            return None
        name = getattr(self, "name", type(self).__name__)
        return (f"{name} does not send tool calls and tool results yet: --layout tools goes to openai, "
                "anthropic, gemini, openai-compat servers, llamacpp and sims; use --layout turns here")

    async def aclose(self) -> None:
        return None


#: The optional members :class:`ProviderBase` declares.
PROVIDER_OPTIONAL: tuple[str, ...] = ("max_concurrency", "context_window", "trained_context", "ids_policy",
                                      "preflight", "served_model_info", "tokenizer", "position_scaling", "aclose",
                                      "reasoning_refusal", "sampling_refusal", "slots",
                                      "sends_tool_messages", "layout_refusal")

#: ``slots`` of a server whose prefix cache all requests share (vLLM's automatic prefix
#: caching, SGLang's radix cache): any number of chains may be in flight; the concurrency decides.
SHARED_CACHE = 1024

_T = TypeVar("_T")


def with_provider_defaults(provider: _T) -> _T:
    return fill_defaults(provider, ProviderBase, PROVIDER_OPTIONAL, "provider")
