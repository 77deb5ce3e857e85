"""A reasoning budget as OpenAI-compatible servers take it (vLLM, SGLang, llama.cpp's
server): the request fields it is sent as, and the 400 a server answers when it cannot
take vLLM's budget field.

vLLM checks the field before anything is generated (``vllm/v1/engine/input_processor.py``,
``InputProcessor._validate_params``): with no reasoning config (no ``--reasoning-parser``
/ ``--reasoning-config``) it raises "thinking_token_budget is set but reasoning_config is
not configured. Please set --reasoning-parser and/or --reasoning-config to use
thinking_token_budget.", answered as HTTP 400 ``{"error": {"message", "type", "param",
"code"}}``.
"""

from __future__ import annotations

from typing import Any

#: vLLM's per-request cap on the thinking section: the one field a server may refuse.
BUDGET_FIELD = "thinking_token_budget"


def reasoning_fields(budget: int) -> dict[str, Any]:
    """Request fields (besides the raised ``max_tokens``) a reasoning budget is sent as."""
    fields: dict[str, Any] = {"chat_template_kwargs": {"enable_thinking": budget > 0}}
    if budget > 0:
        fields[BUDGET_FIELD] = budget
    return fields


def refuses_budget_field(status: int, message: str) -> bool:
    """A 400 whose error names the budget field: vLLM without a reasoning parser, or on a
    model runner that has no budget ("thinking_token_budget is not yet supported by the V2
    model runner")."""
    return status == 400 and BUDGET_FIELD in message


def reasoning_controls(body: dict[str, Any]) -> str:
    """Which reasoning controls a request carried, in the body's own terms."""
    sent = ["max_tokens"]
    kwargs = body.get("chat_template_kwargs")
    if isinstance(kwargs, dict) and "enable_thinking" in kwargs:
        sent.append("chat_template_kwargs.enable_thinking")
    if BUDGET_FIELD in body:
        sent.append(BUDGET_FIELD)
    return ", ".join(sent)
