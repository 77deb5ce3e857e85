"""Per-provider options, given in the model spec string or as a mapping from the spec file.

Options ride on the model spec as a query string, so one string names everything that
changes a model's answers and a sweep is reproducible from it alone::

    openai:gpt-4o-mini?reasoning_effort=low
    anthropic:claude-sonnet-4-5?thinking=2048
    gemini:gemini-2.5-flash?thinking=0
    hf:/models/qwen3-0.6b?dtype=bfloat16&thinking=512

Each provider validates its options with a pydantic model (``extra="forbid"``, as simonw/llm
does), so a typo is a one-line error listing the accepted names instead of a silently
ignored setting. Values arrive as strings and are coerced by pydantic's lax mode
(``"2048"`` → 2048, ``"true"`` → True).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar
from urllib.parse import parse_qsl

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ctxprobe.errors import CtxprobeError
from ctxprobe.spec.names import as_ref

T = TypeVar("T", bound="ProviderOptions")


class ProviderOptions(BaseModel):
    """Options every API provider shares; subclasses add their own."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: Token budget for reasoning, *on top of* the answer's ``max_tokens``: a thinking
    #: model must not eat the answer budget, or a wrong-looking empty answer is really a
    #: budget set too low. ``None``: the provider's default (no explicit thinking).
    thinking: int | None = Field(default=None, ge=0)
    #: Seconds the SDK waits for one response (the runner's own timeout still applies).
    timeout: float = Field(default=600.0, gt=0)
    #: Another endpoint for the same API (a proxy, a gateway); env vars are read otherwise.
    base_url: str | None = None


def split_options(spec: str) -> tuple[str, dict[str, str]]:
    """``provider:name?k=v&k2=v2`` → (``provider:name``, ``{k: v, k2: v2}``): the options the
    model parser cut (:class:`ctxprobe.spec.names.ModelRef`), checked here (none given twice,
    each ``name=value``)."""
    ref = as_ref(spec)
    base, query = ref.located, ref.query
    if not query:
        return base, {}
    pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=False)
    options: dict[str, str] = {}
    for key, value in pairs:
        if key in options:
            raise CtxprobeError(f"bad model spec '{spec}': option '{key}' given twice")
        options[key] = value
    if not pairs and query:
        raise CtxprobeError(f"bad model spec '{spec}': options must look like ?name=value&name2=value2")
    return base, options


def parse_options(
    cls: type[T] | type[BaseModel],
    spec: str,
    query: Mapping[str, Any],
    extra: Mapping[str, Any] | None = None,
) -> Any:
    """Validate options (spec-file mapping overridden by the spec string) into ``cls``.

    Errors are one line: which option, what is wrong, which names are accepted."""
    merged = {**dict(extra or {}), **dict(query)}
    try:
        return cls(**merged)
    except ValidationError as exc:
        first = exc.errors()[0]
        name = ".".join(str(p) for p in first.get("loc", ())) or "?"
        accepted = ", ".join(cls.model_fields)
        if first.get("type") == "extra_forbidden":
            why = f"unknown option '{name}'"
        else:
            why = f"option '{name}': {first.get('msg', 'invalid value')}"
        raise CtxprobeError(f"bad model spec '{spec}': {why} (accepted: {accepted})") from None


def check_options(cls: type[ProviderOptions]) -> Any:
    def check(ref: Any) -> None:
        """The provider's options checked from the name alone (no SDK, no key): ``plan`` refuses
        what ``run`` would, in the same one line."""
        parse_options(cls, ref.raw or ref.spec, ref.options)

    return check
