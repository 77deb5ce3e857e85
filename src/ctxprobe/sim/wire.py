"""The OpenAI wire format spoken by the sim server: request validation and response shapes.

Pure functions, no I/O: :mod:`ctxprobe.sim.server` parses each request with them and
builds every JSON body and SSE chunk here. Malformed requests raise :class:`BadRequest`,
answered with OpenAI's error shape (``{"error": {"message", "type", "param", "code"}}``,
status 400), as the OpenAI API and vLLM do.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from ctxprobe.tokenizers.base import Message, split_prefill

DEFAULT_CHAT_MAX_TOKENS = 256
DEFAULT_COMPLETION_MAX_TOKENS = 16  # OpenAI's default for /v1/completions
MAX_STOP_SEQUENCES = 4  # OpenAI's limit
MAX_N = 128  # OpenAI's limit
_ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
_CONTENT_REQUIRED = frozenset({"system", "developer", "user", "tool"})


class BadRequest(Exception):
    """The client sent something an OpenAI server answers with 400."""

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


def error_body(message: str, kind: str = "invalid_request_error", param: str | None = None,
               code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


@dataclass(frozen=True)
class Params:
    """One validated chat or text completion request."""

    model: str
    messages: list[Message]
    max_tokens: int
    temperature: float
    top_p: float | None
    seed: int | None
    n: int
    stop: tuple[str, ...]
    stream: bool
    include_usage: bool
    prompt: str | None = None  # /v1/completions: the raw prompt (no chat template)
    echo: bool = False
    #: Thinking tokens the request allows, read as vLLM reads them (``thinking_token_budget``;
    #: ``chat_template_kwargs.enable_thinking: false`` is 0); None: not said. ``max_tokens``
    #: then caps thinking and answer together.
    reasoning_budget: int | None = None


def parse_messages(raw: object) -> list[Message]:
    if not isinstance(raw, list) or not raw:
        raise BadRequest("'messages' must be a non-empty array", "messages")
    messages: list[Message] = []
    calls: set[str] = set()
    for i, m in enumerate(raw):
        if not isinstance(m, dict) or not isinstance(m.get("role"), str):
            raise BadRequest(f"messages[{i}] needs a string 'role'", f"messages.[{i}].role")
        role = m["role"]
        if role not in _ROLES:
            raise BadRequest(f"messages[{i}].role '{role}' is not one of {', '.join(sorted(_ROLES))}",
                             f"messages.[{i}].role")
        if "content" not in m or (m["content"] is None and role in _CONTENT_REQUIRED):
            raise BadRequest(f"messages[{i}] ({role}) needs 'content'", f"messages.[{i}].content")
        content = m["content"] if m["content"] is not None else ""
        if isinstance(content, list):  # content parts: keep the text parts, as a text-only model does
            if not all(isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)
                       for p in content):
                raise BadRequest(f"messages[{i}].content parts must be text parts "
                                 "({'type': 'text', 'text': ...}): this server reads text only",
                                 f"messages.[{i}].content")
            content = "".join(p["text"] for p in content)
        if not isinstance(content, str):
            raise BadRequest(f"messages[{i}].content must be a string or an array of text parts",
                             f"messages.[{i}].content")
        message: Message = {"role": role, "content": content}
        if role == "assistant" and m.get("tool_calls"):
            message["content"] = m["content"]  # None stays None: the template renders a call as sent
            message["tool_calls"] = _tool_calls(i, m["tool_calls"])
            calls.update(c["id"] for c in message["tool_calls"])
        if role == "tool":
            call_id = m.get("tool_call_id")
            if not isinstance(call_id, str) or call_id not in calls:
                raise BadRequest(f"messages[{i}] (tool) needs the 'tool_call_id' of an earlier assistant tool call",
                                 f"messages.[{i}].tool_call_id")
            message["tool_call_id"] = call_id
        messages.append(message)
    return messages


def _tool_calls(i: int, raw: object) -> list[dict[str, Any]]:
    """An assistant message's ``tool_calls``, checked as OpenAI checks them."""
    if not isinstance(raw, list):
        raise BadRequest(f"messages[{i}].tool_calls must be an array", f"messages.[{i}].tool_calls")
    out = []
    for j, call in enumerate(raw):
        fn = call.get("function") if isinstance(call, dict) else None
        if (not isinstance(call, dict) or call.get("type") != "function" or not isinstance(call.get("id"), str)
                or not isinstance(fn, dict) or not isinstance(fn.get("name"), str)
                or not isinstance(fn.get("arguments"), str)):
            raise BadRequest(f"messages[{i}].tool_calls[{j}] must be {{id, type: function, function: {{name, arguments}}}}",
                             f"messages.[{i}].tool_calls.[{j}]")
        out.append({"id": call["id"], "type": "function",
                    "function": {"name": fn["name"], "arguments": fn["arguments"]}})
    return out


def parse_tools(raw: object) -> list[dict[str, Any]] | None:
    """A body's ``tools`` (None when absent), each ``{type: function, function: {name, ...}}``
    as OpenAI's and vLLM's ``ChatCompletionToolsParam`` require."""
    if raw is None:
        return None
    if not isinstance(raw, list) or not all(isinstance(t, dict) and t.get("type") == "function"
                                            and isinstance(t.get("function"), dict)
                                            and isinstance(t["function"].get("name"), str) for t in raw):
        raise BadRequest("'tools' must be an array of {type: function, function: {name, ...}}", "tools")
    return raw


def check_tools(body: dict[str, Any], messages: list[Message]) -> None:
    """Every tool an assistant message calls is declared in ``tools`` (OpenAI's rule, so a
    request that would fail there fails here too)."""
    tools = parse_tools(body.get("tools"))
    called = {c["function"]["name"] for m in messages for c in m.get("tool_calls") or []}
    if tools is None:
        if called:
            raise BadRequest(f"messages call tool(s) {', '.join(sorted(called))} but 'tools' declares none", "tools")
        return
    missing = called - {t["function"]["name"] for t in tools}
    if missing:
        raise BadRequest(f"messages call undeclared tool(s): {', '.join(sorted(missing))}", "tools")


def _number(body: dict[str, Any], key: str, low: float, high: float, default: float | None) -> float | None:
    value = body.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise BadRequest(f"'{key}' must be a number in [{low:g}, {high:g}]", key)
    return float(value)


def _positive_int(body: dict[str, Any], key: str, default: int, high: int | None = None) -> int:
    value = body.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 1 or (high is not None and value > high):
        bound = f" no larger than {high}" if high is not None else ""
        raise BadRequest(f"'{key}' must be a positive integer{bound}", key)
    return value


def _stop(raw: object) -> tuple[str, ...]:
    if raw is None:
        return ()
    stops = [raw] if isinstance(raw, str) else raw
    if not isinstance(stops, list) or not all(isinstance(s, str) and s for s in stops):
        raise BadRequest("'stop' must be a non-empty string or an array of them", "stop")
    if len(stops) > MAX_STOP_SEQUENCES:
        raise BadRequest(f"'stop' takes at most {MAX_STOP_SEQUENCES} sequences", "stop")
    return tuple(stops)


def parse_request(body: object, *, chat: bool) -> Params:
    """Validate a ``/v1/chat/completions`` (``chat``) or ``/v1/completions`` body."""
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise BadRequest("you must provide a model parameter", "model")
    prompt: str | None = None
    if chat:
        messages = parse_messages(body.get("messages"))
        check_tools(body, messages)
        if split_prefill(messages)[1] is not None and body.get("continue_final_message") is not True:
            # vLLM would close that turn and start a new one: the prompt would differ from the
            # one counted, so say so instead of answering something else
            raise BadRequest("a trailing assistant message (answer prefix) needs 'continue_final_message': true",
                             "continue_final_message")
    else:
        raw = body.get("prompt")
        if isinstance(raw, list) and len(raw) == 1 and isinstance(raw[0], str):
            raw = raw[0]
        if not isinstance(raw, str):
            raise BadRequest("'prompt' must be a string (one prompt per request here)", "prompt")
        prompt = raw
        messages = [{"role": "user", "content": raw}]
    if body.get("logprobs") or body.get("top_logprobs"):
        raise BadRequest("logprobs are not available from a simulated model", "logprobs")
    default_max = DEFAULT_CHAT_MAX_TOKENS if chat else DEFAULT_COMPLETION_MAX_TOKENS
    max_key = "max_completion_tokens" if chat and body.get("max_completion_tokens") is not None else "max_tokens"
    stream = body.get("stream", False)
    if not isinstance(stream, bool) and stream is not None:
        raise BadRequest("'stream' must be a boolean", "stream")
    options = body.get("stream_options")
    if options is not None and (not isinstance(options, dict) or not stream):
        raise BadRequest("'stream_options' is only allowed with stream=true and must be an object",
                         "stream_options")
    seed = body.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise BadRequest("'seed' must be an integer", "seed")
    top_p = _number(body, "top_p", 0.0, 1.0, None)
    if top_p == 0.0:
        raise BadRequest("'top_p' must be in (0, 1]", "top_p")
    echo = body.get("echo", False)
    if not chat and not isinstance(echo, bool):
        raise BadRequest("'echo' must be a boolean", "echo")
    kwargs = body.get("chat_template_kwargs")
    if kwargs is not None and not isinstance(kwargs, dict):
        raise BadRequest("'chat_template_kwargs' must be an object", "chat_template_kwargs")
    budget: int | None = None
    raw_budget = body.get("thinking_token_budget")
    if raw_budget is not None:
        plain_zero = raw_budget == 0 and not isinstance(raw_budget, bool)
        budget = 0 if plain_zero else _positive_int(body, "thinking_token_budget", 0)
    if (kwargs or {}).get("enable_thinking") is False:
        budget = 0
    return Params(
        model=model, messages=messages,
        max_tokens=_positive_int(body, max_key, default_max),
        temperature=_number(body, "temperature", 0.0, 2.0, 0.0) or 0.0,
        top_p=top_p, seed=seed,
        n=_positive_int(body, "n", 1, MAX_N),
        stop=_stop(body.get("stop")),
        stream=bool(stream), include_usage=bool((options or {}).get("include_usage")),
        prompt=prompt, echo=bool(echo) if not chat else False, reasoning_budget=budget,
    )


def apply_stop(text: str, stops: tuple[str, ...]) -> tuple[str, bool]:
    """Cut ``text`` before the earliest stop sequence (which is not returned, as OpenAI does)."""
    cut = min((i for i in (text.find(s) for s in stops) if i >= 0), default=-1)
    return (text[:cut], True) if cut >= 0 else (text, False)


@dataclass
class Choice:
    text: str
    finish_reason: str
    completion_tokens: int | None
    reasoning: str | None = None  # sent as ``message.reasoning_content`` (vLLM's field)
    reasoning_tokens: int | None = None


def usage(prompt_tokens: int | None, choices: list[Choice], extra: dict[str, Any]) -> dict[str, Any]:
    completion = sum(c.completion_tokens or 0 for c in choices)
    out: dict[str, Any] = {"prompt_tokens": prompt_tokens or 0, "completion_tokens": completion,
                           "total_tokens": (prompt_tokens or 0) + completion}
    thought = [c.reasoning_tokens for c in choices if c.reasoning_tokens is not None]
    if thought:
        out["completion_tokens_details"] = {"reasoning_tokens": sum(thought)}
    out.update(extra)
    return out


def new_id(chat: bool) -> str:
    return f"{'chatcmpl' if chat else 'cmpl'}-{uuid.uuid4().hex[:24]}"


def response_body(params: Params, choices: list[Choice], usage_: dict[str, Any], *, chat: bool) -> dict[str, Any]:
    head = {"id": new_id(chat), "object": "chat.completion" if chat else "text_completion",
            "created": int(time.time()), "model": params.model}
    if chat:
        body_choices: list[dict[str, Any]] = [
            {"index": i, "message": {"role": "assistant", "content": c.text,
                                     **({"reasoning_content": c.reasoning} if c.reasoning else {})},
             "logprobs": None, "finish_reason": c.finish_reason} for i, c in enumerate(choices)]
    else:
        prefix = params.prompt if params.echo and params.prompt is not None else ""
        body_choices = [{"index": i, "text": prefix + c.text, "logprobs": None, "finish_reason": c.finish_reason}
                        for i, c in enumerate(choices)]
    return {**head, "choices": body_choices, "usage": usage_}


_PIECE = re.compile(r"\s*\S+|\s+")


def pieces(text: str) -> list[str]:
    """Split a reply into stream deltas (a word with its leading space each); joined, they are ``text``."""
    return _PIECE.findall(text)


def stream_chunks(params: Params, choices: list[Choice], usage_: dict[str, Any], *, chat: bool) -> list[dict[str, Any]]:
    """The SSE chunks of a streamed answer, in order (without the final ``[DONE]``).

    Chat: a role delta, content deltas, then an empty delta with ``finish_reason`` per
    choice; with ``stream_options.include_usage`` every chunk has ``usage: null`` and one
    last chunk with empty ``choices`` carries the usage — the OpenAI API's shape."""
    cid, created = new_id(chat), int(time.time())
    obj = "chat.completion.chunk" if chat else "text_completion"
    chunks: list[dict[str, Any]] = []

    def add(choice: dict[str, Any]) -> None:
        chunk: dict[str, Any] = {"id": cid, "object": obj, "created": created, "model": params.model,
                                 "choices": [choice]}
        if params.include_usage:
            chunk["usage"] = None
        chunks.append(chunk)

    for i, c in enumerate(choices):
        if chat:
            add({"index": i, "delta": {"role": "assistant", "content": ""}, "logprobs": None, "finish_reason": None})
            for piece in pieces(c.text):
                add({"index": i, "delta": {"content": piece}, "logprobs": None, "finish_reason": None})
            add({"index": i, "delta": {}, "logprobs": None, "finish_reason": c.finish_reason})
        else:
            if params.echo and params.prompt:
                add({"index": i, "text": params.prompt, "logprobs": None, "finish_reason": None})
            for piece in pieces(c.text):
                add({"index": i, "text": piece, "logprobs": None, "finish_reason": None})
            add({"index": i, "text": "", "logprobs": None, "finish_reason": c.finish_reason})
    if params.include_usage:
        chunks.append({"id": cid, "object": obj, "created": created, "model": params.model, "choices": [],
                       "usage": usage_})
    return chunks


class Reply:
    """One HTTP answer: status, JSON body (or SSE chunks, or raw bytes), extra headers."""

    def __init__(self, status: int, body: Any, headers: dict[str, str] | None = None, *,
                 stream: bool = False, drop: bool = False) -> None:
        self.status, self.body, self.headers, self.stream, self.drop = status, body, headers or {}, stream, drop

    async def sse(self) -> AsyncIterator[bytes]:
        for chunk in self.body:
            yield f"data: {json.dumps(chunk)}\n\n".encode()
        yield b"data: [DONE]\n\n"


class RawBody(bytes):
    """A response body sent as-is (not JSON-encoded): for the malformed-JSON fault."""
