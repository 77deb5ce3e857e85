"""OpenAI's Responses API (``responses.create``) for its reasoning models: the request
body, the answer, and the effort levels each model takes.

OpenAI recommends Responses for its reasoning models, and its pro models are served there
only (openai-python lists ``o1-pro``, ``o3-pro``, ``gpt-5-pro``, ``gpt-5.5-pro`` in
``types/shared/responses_model.py``, not in ``chat_model.py``). Fields, as openai-python's
``ResponseCreateParams`` (installed SDK) declares them: ``input`` (a list of
``EasyInputMessageParam``: role and a string content; the system prompt is a ``system``
message, as chat completions sends it; a tools layout's calls and results as
``function_call``/``function_call_output`` items, the tool in ``tools`` as a
``FunctionToolParam``), ``max_output_tokens`` (answer + thinking, a hard
cap), ``reasoning.effort``, ``prompt_cache_key``, ``store: false`` (nothing is kept at
OpenAI for later turns). The answer is a ``Response``: ``output`` items of type
``message`` (``output_text`` parts) and ``reasoning`` (``summary_text`` parts); ``usage``
has ``input_tokens``, ``output_tokens``, ``input_tokens_details.cached_tokens`` and
``output_tokens_details.reasoning_tokens``; ``status: "incomplete"`` with
``incomplete_details.reason == "max_output_tokens"`` is an output cut at the cap
(finish reason ``length``, scored ``output_truncated``).
"""

from __future__ import annotations

import re
from typing import Any, get_args

from ctxprobe.core.tools import declared_tools
from ctxprobe.models.base import GenerateRequest, GenerateResult, PermanentError
from ctxprobe.models.reasoning import finalize
from ctxprobe.tokenizers.base import Message, fold_prefill

__all__ = ["ENDPOINT", "EFFORT_TABLE", "INCOMPLETE", "cache_write_tokens", "efforts_for", "has_efforts", "is_pro", "nearest_effort", "options_refusal", "parse_response",
           "responses_body", "responses_input", "responses_only", "responses_tools"]

ENDPOINT = "/v1/responses"
#: openai-python's ``ReasoningEffort`` literals, lowest first.
ORDER = ("none", "minimal", "low", "medium", "high", "xhigh", "max")
_SDK = "openai-python 3.60's Reasoning.effort docstring (\"Not all reasoning models support every value\")"

#: (pattern on the model name, effort levels it takes, source); first match wins.
EFFORT_TABLE: tuple[tuple[str, tuple[str, ...], str], ...] = (
    (r"^(o1-pro|o3-pro|gpt-5(\.\d+)?-pro)", ("high",),
     "OpenAI's GPT-5 pro model page: it \"defaults to (and only supports) reasoning.effort: high\" "
     "(read 2026-12; openai-python 2.x's Reasoning.effort docstring said the same of gpt-5-pro)"),
    (r"^gpt-5\.1(?!\d)", ("none", "low", "medium", "high"), "gpt-5.1 added none and dropped minimal; " + _SDK),
    (r"^gpt-5\.[2-4](?!\d)", ("none", "low", "medium", "high", "xhigh"), "gpt-5.2 added xhigh; " + _SDK),
    (r"^(gpt-5\.([5-9]|\d\d)|gpt-[6-9])", ORDER[:1] + ORDER[2:],
     "the SDK's newest values (xhigh, max) taken for gpt-5.5 and later: which models take max is not "
     "stated by the SDK, so it is sent where asked and an API refusal is the model's word; " + _SDK),
    (r"^gpt-5(?![.\d])", ("minimal", "low", "medium", "high"), "gpt-5's launch values; " + _SDK),
    (r"^o\d", ("low", "medium", "high"), "the o-series' values (no none: reasoning cannot be turned off)"),
)


def _bare(model: str) -> str:
    return model.lower().split("/")[-1]


def is_pro(model: str) -> bool:
    return bool(re.match(EFFORT_TABLE[0][0], _bare(model)))


def has_efforts(model: str) -> bool:
    """Whether the table has a row for ``model`` (a reasoning family)."""
    name = _bare(model)
    return any(re.match(pattern, name) for pattern, _, _ in EFFORT_TABLE)


def cache_write_tokens(details: object) -> int | None:
    """``cache_write_tokens`` of a usage's token details (openai 3.60: the Responses API's
    ``input_tokens_details`` and chat's ``prompt_tokens_details``): prompt tokens written to
    the cache, billed at the cache-write price (gpt-5.6 and gpt-6: 1.25x input in genai-prices)."""
    value = details.get("cache_write_tokens") if isinstance(details, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


#: ``incomplete_details.reason`` (openai 3.60's ``IncompleteDetails``) → finish reason: each
#: one an output cut short of the model's own end, scored ``output_truncated``, save a filter.
INCOMPLETE: dict[str, str] = {"max_output_tokens": "length", "max_messages": "length", "steered": "length",
                              "content_filter": "content_filter"}


def efforts_for(model: str) -> tuple[tuple[str, ...], str]:
    """The effort levels ``model`` takes and where that was read (every SDK value when the
    table has no row for it)."""
    name = _bare(model)
    for pattern, efforts, source in EFFORT_TABLE:
        if re.match(pattern, name):
            return efforts, source
    return ORDER, "not in ctxprobe's table: every value the SDK has"


def nearest_effort(model: str, wanted: str) -> str:
    """``wanted`` where the model takes it, else the taken level nearest to it (pro: high)."""
    efforts, _ = efforts_for(model)
    if wanted in efforts:
        return wanted
    rank = ORDER.index(wanted)
    return min(efforts, key=lambda e: (abs(ORDER.index(e) - rank), -ORDER.index(e)))


def responses_only(model: str) -> bool:
    """Whether openai-python lists ``model`` for the Responses API but not for chat
    completions: the names its ``ResponsesModel`` type adds to ``ChatModel``
    (types/shared/responses_model.py), read from the installed SDK so a new release's list
    is the one used; without the SDK, a pro model counts as Responses-only."""
    try:
        from openai.types.shared.chat_model import ChatModel
        from openai.types.shared.responses_model import ResponsesModel
    except ImportError:
        return is_pro(model)
    chat = set(_literals(ChatModel))
    return _bare(model) in {name for name in _literals(ResponsesModel) if name not in chat}


def _literals(alias: Any) -> list[str]:
    """Every string of the ``Literal`` types inside ``alias`` (a Union or a Literal)."""
    out: list[str] = []
    for arg in get_args(alias) or ():
        if isinstance(arg, str):
            out.append(arg)
        elif get_args(arg):
            out += _literals(arg)
    return out


def options_refusal(model: str, effort: str | None, api: str | None) -> str | None:
    """Why ``?reasoning_effort`` / ``?api`` cannot be sent to ``model`` (None: they can)."""
    if api == "chat" and responses_only(model):
        return f"{model} is served through the Responses API only: drop ?api=chat"
    efforts, source = efforts_for(model)
    if effort is not None and effort not in efforts:
        return f"{model} takes reasoning effort {'|'.join(efforts)}, not {effort} ({source.split(';')[0]})"
    return None


def responses_input(messages: list[Message]) -> list[dict[str, Any]]:
    """Chat messages → ``input`` items: each message an ``EasyInputMessageParam`` (role and
    its text); a tools layout's assistant ``tool_calls`` as ``function_call`` items
    (``ResponseFunctionToolCallParam``: call_id, name, arguments) and each ``tool`` result a
    ``function_call_output`` item (call_id, output: the chunk's text)."""
    items: list[dict[str, Any]] = []
    for m in messages:
        if m.get("tool_calls"):
            if m.get("content"):
                items.append({"role": m["role"], "content": m["content"]})
            items += [{"type": "function_call", "call_id": c["id"], "name": c["function"]["name"],
                       "arguments": c["function"]["arguments"]} for c in m["tool_calls"]]
        elif m["role"] == "tool":
            items.append({"type": "function_call_output", "call_id": m["tool_call_id"], "output": m["content"]})
        else:
            items.append({"role": m["role"], "content": m["content"]})
    return items


def responses_tools(messages: list[Message]) -> list[dict[str, Any]] | None:
    """The tools a tools layout's conversation declares, as Responses ``FunctionToolParam``
    s (``strict: false``: the schema is chat completions' own, and the calls are given, not
    generated)."""
    declared = declared_tools(messages)
    if declared is None:
        return None
    return [{"type": "function", "name": t["function"]["name"], "description": t["function"]["description"],
             "parameters": t["function"]["parameters"], "strict": False} for t in declared]


def responses_body(model: str, request: GenerateRequest, *, effort: str | None, budget: int,
                   cache_key: bool) -> dict[str, Any]:
    """The keyword arguments of ``responses.create`` for one request."""
    messages = fold_prefill(list(request.messages))  # no prefill: an answer prefix joins the user turn
    body: dict[str, Any] = {"model": model, "input": responses_input(messages),
                            "max_output_tokens": request.max_tokens + budget, "store": False}
    if (tools := responses_tools(messages)) is not None:
        body["tools"] = tools  # a tools layout's conversation: the tool its calls name, declared
    if effort is not None:
        body["reasoning"] = {"effort": effort}
    if request.cache is not None and cache_key:
        body["prompt_cache_key"] = request.cache.key
    return body


def parse_response(data: dict[str, Any]) -> GenerateResult:
    """A ``Response`` (as a dict) → GenerateResult, reasoning summaries kept apart."""
    output = data.get("output")
    if not isinstance(output, list):
        raise PermanentError("malformed response from openai: no output list")
    if data.get("status") == "failed":
        error = e if isinstance(e := data.get("error"), dict) else {}
        raise PermanentError(f"openai response failed: {error.get('code', '?')}: {error.get('message', '')}")
    text, summary, refusal = [], [], []
    called = False  # a function_call item (ResponseFunctionToolCall): the model called the declared tool
    for item in output:
        if not isinstance(item, dict):
            continue
        called = called or item.get("type") == "function_call"
        for part in item.get("content") or [] if item.get("type") == "message" else []:
            if isinstance(part, dict) and part.get("type") == "output_text":
                text.append(str(part.get("text", "")))
            elif isinstance(part, dict) and part.get("type") == "refusal":
                refusal.append(str(part.get("refusal", "")))
        if item.get("type") == "reasoning":
            summary += [str(s.get("text", "")) for s in item.get("summary") or [] if isinstance(s, dict)]
    usage = u if isinstance(u := data.get("usage"), dict) else {}
    extra: dict[str, object] = {k: data[k] for k in ("id", "model") if data.get(k)}
    out_details = d if isinstance(d := usage.get("output_tokens_details"), dict) else {}
    in_details = d if isinstance(d := usage.get("input_tokens_details"), dict) else {}
    if isinstance(out_details.get("reasoning_tokens"), int):
        extra["reasoning_tokens"] = out_details["reasoning_tokens"]
    if isinstance(in_details.get("cached_tokens"), int):
        extra["cached_prompt_tokens"] = in_details["cached_tokens"]
    if (written := cache_write_tokens(in_details)) is not None:
        extra["cache_write_tokens"] = written
    if refusal:
        extra["refusal"] = " ".join(refusal)
    finish = "tool_calls" if called and not text else "stop"  # chat completions' finish reason for it
    if data.get("status") == "incomplete":
        reason = (data.get("incomplete_details") or {}).get("reason")
        finish = INCOMPLETE.get(str(reason), str(reason or "incomplete"))
        if reason:
            extra["incomplete_reason"] = str(reason)
    return finalize("".join(text), finish,
                    prompt_tokens=_int(usage.get("input_tokens")), completion_tokens=_int(usage.get("output_tokens")),
                    api_reasoning="\n".join(s for s in summary if s) or None, extra=extra)


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def sdk_shutdowns() -> dict[str, str]:
    """Model → announced shutdown date (ISO), from the "Deprecated values" the installed
    openai SDK writes under its ``ChatModel`` list (types/shared/chat_model.py); {} without
    the SDK or that note."""
    try:
        from openai.types.shared import chat_model
    except ImportError:
        return {}
    try:
        text = open(chat_model.__file__, encoding="utf-8").read()  # the note is a string after the alias
    except OSError:
        return {}
    note = text.split('"""Deprecated values:', 1)[-1] if '"""Deprecated values:' in text else ""
    out: dict[str, str] = {}
    for entry in re.split(r"\n\s*-\s+", note):
        date = re.search(r"shutdown\s+date:\s*(\d{4}-\d{2}-\d{2})", entry)
        if date:
            for name in re.findall(r'"([^"]+)"', entry.split("Announced")[0]):
                out[name] = date.group(1)
    return out


def sdk_facts(model: str, today: str) -> tuple[dict[str, Any], str | None, str | None]:
    """What the installed openai SDK says of ``model``: (facts stored with the run, a
    refusal when its announced shutdown date has passed, a warning when one is announced)."""
    try:
        from openai import __version__ as version
        from openai.types.shared.chat_model import ChatModel
        from openai.types.shared.responses_model import ResponsesModel
    except ImportError:
        return {"source": "no openai SDK installed: ctxprobe's table"}, None, None
    name = _bare(model)
    chat, responses = set(_literals(ChatModel)), set(_literals(ResponsesModel))
    efforts, source = efforts_for(model)
    shutdown = sdk_shutdowns().get(name)
    facts: dict[str, Any] = {
        "source": f"openai {version}'s ChatModel/ResponsesModel lists; effort levels: {source.split(';')[0]}",
        "listed": "chat" if name in chat else "responses" if name in responses else None,
        "responses_only": name in responses and name not in chat, "efforts": list(efforts),
        "shutdown": shutdown}
    if shutdown and shutdown <= today:
        return facts, (f"openai:{name} is retired (the openai SDK {version} gives its shutdown date as {shutdown}): "
                       "requests naming it fail; choose a current model"), None
    if shutdown:
        return facts, None, f"openai:{name} is deprecated (openai SDK {version}): shutdown {shutdown}"
    return facts, None, None
