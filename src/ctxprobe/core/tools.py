"""The one tool a ``tools`` layout declares, and what a conversation of tool results needs.

A case built with ``layout: {messages: tools}`` (:mod:`ctxprobe.haystack.layout`) holds its
context as the results of earlier calls of :data:`READ_TOOL`: an assistant message with
``tool_calls`` (OpenAI chat shape), then a ``tool`` message with its ``tool_call_id``. The
declaration is implied by the messages — :func:`declared_tools` — so the tokenizer that
counts a prompt and the provider that sends it declare the same tool, and a case's
messages alone say what was sent.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ctxprobe.errors import CtxprobeError

#: The read-a-file tool the model is told it called (OpenAI's ``tools`` entry shape).
READ_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "read_file",
        "description": "Read one part of the shared notes and return its text.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string", "description": "the part to read, e.g. notes/part-001.txt"}},
            "required": ["path"],
        },
    },
}
TOOL_NAME = READ_TOOL["function"]["name"]


def tool_call(i: int) -> dict[str, Any]:
    """The ``i``-th call of :data:`READ_TOOL` (0-based), in OpenAI chat shape."""
    return {"id": f"call_{i + 1:03d}", "type": "function",
            "function": {"name": TOOL_NAME, "arguments": json.dumps({"path": f"notes/part-{i + 1:03d}.txt"})}}


def has_tool_calls(messages: Sequence[dict[str, Any]]) -> bool:
    return any(m.get("tool_calls") or m.get("role") == "tool" for m in messages)


def declared_tools(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """The tools a request with these messages declares: :data:`READ_TOOL` when any message
    calls a tool or answers one, None otherwise (nothing sent, nothing counted)."""
    return [READ_TOOL] if has_tool_calls(messages) else None


def anthropic_turns(messages: Sequence[dict[str, Any]]) -> tuple[str | None, list[dict[str, Any]]]:
    """System messages → the ``system`` parameter; the rest stay in order. A tools layout's
    conversation (docs/layouts.md) in Anthropic's shape: an assistant's ``tool_calls`` as
    ``tool_use`` blocks, each ``tool`` result a ``tool_result`` block of the next user turn,
    the question that follows the last result a text block of that same turn."""
    system = [m["content"] for m in messages if m["role"] == "system"]
    rest: list[dict[str, Any]] = []
    for m in messages:
        last = rest[-1] if rest else None
        if m["role"] == "system":
            continue
        if m.get("tool_calls"):
            blocks = [{"type": "text", "text": m["content"]}] if m.get("content") else []
            blocks += [{"type": "tool_use", "id": c["id"], "name": c["function"]["name"],
                        "input": json.loads(c["function"]["arguments"] or "{}")} for c in m["tool_calls"]]
            rest.append({"role": "assistant", "content": blocks})
        elif m["role"] == "tool":
            result = {"type": "tool_result", "tool_use_id": m["tool_call_id"], "content": m["content"]}
            if last is not None and last["role"] == "user" and isinstance(last["content"], list):
                last["content"].append(result)
            else:
                rest.append({"role": "user", "content": [result]})
        elif m["role"] == "user" and last is not None and last["role"] == "user" and isinstance(last["content"], list):
            last["content"].append({"type": "text", "text": m["content"]})
        else:
            rest.append({"role": m["role"], "content": m["content"]})
    return ("\n\n".join(system) if system else None), rest


def anthropic_tools(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """The tools a tools layout's conversation declares, as Anthropic's ``ToolParam``."""
    declared = declared_tools(messages)
    if declared is None:
        return None
    return [{"name": t["function"]["name"], "description": t["function"]["description"],
             "input_schema": t["function"]["parameters"]} for t in declared]


#: A probe conversation: one call and its result, each with a marker a renderer must keep.
_PROBE_ARG = "notes/part-probe.txt"
_PROBE_RESULT = "probe-result-7f3a"


def _probe() -> list[dict[str, Any]]:
    call = {"id": "call_probe", "type": "function",
            "function": {"name": TOOL_NAME, "arguments": json.dumps({"path": _PROBE_ARG})}}
    return [{"role": "user", "content": "Read the notes."},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_probe", "content": _PROBE_RESULT},
            {"role": "user", "content": "What did they say?"}]


def check_renders_tools(tokenizer: Any) -> None:
    """Refuse (one line) a tokenizer whose counts would leave out a tool call, a tool result
    or the tool declaration: a chat template (``hf:``) rendered once with a probe call must
    show each of them; a provider's counting API that is sent them says so
    (``counts_tool_messages``: ``anthropic-count:``)."""
    template = getattr(tokenizer, "template", None)
    name = getattr(tokenizer, "name", type(tokenizer).__name__)
    if getattr(tokenizer, "counts_tool_messages", False):
        return  # a provider's counting API, sent the conversation as the request sends it
    if template is None or not hasattr(template, "render"):
        raise CtxprobeError(f"--layout tools: tokenizer {name} cannot count tool calls and tool declarations "
                            "(only a chat template can: use --tokenizer hf:DIR with a template that renders tools)")
    try:
        rendered = str(template.render(_probe()))
    except CtxprobeError as exc:
        raise CtxprobeError(f"--layout tools: the chat template of {name} cannot render tool messages ({exc})") from None
    missing = [what for what, mark in (("the tool call", _PROBE_ARG), ("the tool result", _PROBE_RESULT),
                                       ("the tool declaration", READ_TOOL["function"]["description"]))
               if mark not in rendered]
    if missing:
        raise CtxprobeError(f"--layout tools: the chat template of {name} drops {', '.join(missing)}: its counts "
                            "would not be the server's; use a template that renders tools (or --layout turns)")
