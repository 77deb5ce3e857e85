"""Every request body ctxprobe put on the wire, and every body a fake answered, judged by the
providers' own SDK types (:mod:`sdk_contract`), chosen by the request's path.

Requests (what a loopback fake recorded):

- OpenAI ``/chat/completions``: ``openai.types.chat.completion_create_params.
  CompletionCreateParamsNonStreaming``; a Batch input line (https://platform.openai.com/docs/api-reference/batch/request-input:
  ``custom_id``, ``method``, ``url``, ``body``) with that body.
- OpenAI-compatible servers: the same type, plus only the fields vLLM's
  ``ChatCompletionRequest`` adds (``vllm/entrypoints/openai/protocol.py``:
  ``chat_template_kwargs``, ``continue_final_message``, ``add_generation_prompt``,
  ``thinking_token_budget``) and llama.cpp's server reads (``tools/server/README.md``,
  ``POST /completion`` options: ``id_slot``, ``cache_prompt``).
- Anthropic ``/v1/messages``: ``anthropic.types.message_create_params.
  MessageCreateParamsNonStreaming``; ``/v1/messages/count_tokens``:
  ``MessageCountTokensParams``; ``/v1/messages/batches``: ``batch_create_params.Request``.
  Nothing is let through that the type does not name: ``temperature``/``top_p`` fail where
  the installed SDK's type no longer has them (anthropic >= 2.0, whose
  ``anthropic-version: 2026-10-21`` rejects them).
- Gemini ``:generateContent``: ``contents`` each a ``types.Content``; ``generationConfig``
  with the top-level ``systemInstruction``/``cachedContent``/``tools`` a ``types.GenerateContentConfig``
  (the SDK's request converter splits the config that way); ``cachedContents``:
  ``types.CreateCachedContentConfig``; ``:batchGenerateContent``: each inlined request as
  a ``:generateContent`` body.

Responses: ``openai.types.chat.ChatCompletion``, ``anthropic.types.Message``,
``google.genai.types.GenerateContentResponse`` (``model_validate``).
"""

from __future__ import annotations

import re
from typing import Any

from sdk_contract import ContractError, check_genai, check_type, check_typed_dict

#: Fields OpenAI-compatible servers read beyond OpenAI's own (sources in the docstring).
SERVER_FIELDS: dict[str, Any] = {
    "chat_template_kwargs": dict[str, Any], "continue_final_message": bool, "add_generation_prompt": bool,
    "thinking_token_budget": int, "id_slot": int, "cache_prompt": bool,
}
#: The top-level fields of a REST GenerateContentRequest that the SDK's config carries.
_GEMINI_CONFIG_FIELDS = {"systemInstruction", "cachedContent", "system_instruction", "cached_content",
                         "continuationToken",  # GenerateContentConfig.continuation_token (automatic continuation)
                         "tools"}  # GenerateContentConfig.tools (a tools layout's declaration)


def openai_body(body: dict[str, Any], *, server_fields: bool = False) -> None:
    from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

    own = dict(body)
    if server_fields:
        for key, tp in SERVER_FIELDS.items():
            if key in own:
                check_type(tp, own.pop(key), f"$.{key}")
    check_typed_dict(CompletionCreateParamsNonStreaming, own)


def openai_responses_body(body: dict[str, Any]) -> None:
    """openai-python's ``ResponseCreateParamsNonStreaming``, every field (``input`` as its
    ``EasyInputMessageParam`` items)."""
    from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming

    check_typed_dict(ResponseCreateParamsNonStreaming, body)


def openai_batch_line(line: dict[str, Any]) -> None:
    if set(line) != {"custom_id", "method", "url", "body"}:
        raise ContractError(f"batch input line fields {sorted(line)}")
    if not (isinstance(line["custom_id"], str) and line["method"] == "POST"
            and line["url"] in ("/v1/chat/completions", "/v1/responses")):
        raise ContractError(f"batch input line envelope {dict((k, line[k]) for k in ('custom_id', 'method', 'url'))}")
    (openai_responses_body if line["url"] == "/v1/responses" else openai_body)(line["body"])


def anthropic_params(body: dict[str, Any], td: Any = None) -> None:
    from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

    check_typed_dict(td or MessageCreateParamsNonStreaming, body)


def anthropic_batch(body: dict[str, Any]) -> None:
    from anthropic.types.messages.batch_create_params import Request

    if set(body) != {"requests"}:
        raise ContractError(f"batch create fields {sorted(body)}")
    for item in body["requests"]:
        check_typed_dict(Request, item)


def gemini_generate(body: dict[str, Any], *, with_model: bool = False) -> None:
    from google.genai import types

    allowed = {"contents", "generationConfig", "generation_config"} | _GEMINI_CONFIG_FIELDS | (
        {"model"} if with_model else set())
    unknown = set(body) - allowed
    if unknown:
        raise ContractError(f"$: a generateContent request has no field {sorted(unknown)}")
    for i, content in enumerate(body.get("contents") or []):
        check_genai(types.Content, content, f"$.contents[{i}]")
    config = dict(body.get("generationConfig") or body.get("generation_config") or {})
    config.update({k: v for k, v in body.items() if k in _GEMINI_CONFIG_FIELDS})
    check_genai(types.GenerateContentConfig, config, "$.generationConfig")


def gemini_cache(body: dict[str, Any]) -> None:
    from google.genai import types

    rest = {k: v for k, v in body.items() if k != "model"}
    if not isinstance(body.get("model"), str):
        raise ContractError("$.model: a cachedContents request names its model")
    check_genai(types.CreateCachedContentConfig, rest, "$")


def gemini_batch(body: dict[str, Any]) -> None:
    if set(body) != {"batch"}:
        raise ContractError(f"batch create fields {sorted(body)}")
    batch = body["batch"]
    requests = batch["inputConfig"]["requests"]["requests"]
    for i, item in enumerate(requests):
        if set(item) - {"request", "metadata"}:
            raise ContractError(f"$.requests[{i}]: fields {sorted(item)}")
        gemini_generate(item["request"], with_model=True)
        meta = item.get("metadata")
        check_type(dict[str, str], meta, f"$.requests[{i}].metadata")


def check_request(path: str, body: Any, *, server_fields: bool = False) -> str:
    """Validate one recorded request by its path; returns what it was checked as."""
    path = path.split("?")[0]
    if path.endswith("/chat/completions"):
        openai_body(body, server_fields=server_fields)
        return "openai chat completion"
    if path.endswith("/v1/responses") or path == "/responses":
        openai_responses_body(body)
        return "openai response"
    if path.endswith("/v1/responses/input_tokens"):
        from openai.types.responses.input_token_count_params import InputTokenCountParams

        check_typed_dict(InputTokenCountParams, body)
        return "openai input_tokens count"
    if path == "/v1/batches":
        from openai.types.batch_create_params import BatchCreateParams

        check_typed_dict(BatchCreateParams, body)
        return "openai batch"
    if path == "/v1/messages":
        anthropic_params(body)
        return "anthropic message"
    if path == "/v1/messages/count_tokens":
        from anthropic.types.message_count_tokens_params import MessageCountTokensParams

        check_typed_dict(MessageCountTokensParams, body)
        return "anthropic count_tokens"
    if path == "/v1/messages/batches":
        anthropic_batch(body)
        return "anthropic batch"
    if re.search(r"/models/[^/:]+:generateContent$", path):
        gemini_generate(body)
        return "gemini generateContent"
    if re.search(r"/models/[^/:]+:batchGenerateContent$", path):
        gemini_batch(body)
        return "gemini batch"
    if re.search(r"/cachedContents$", path):
        gemini_cache(body)
        return "gemini cachedContents"
    if re.search(r"/models/[^/:]+:countTokens$", path):
        from google.genai import types

        if set(body) != {"contents"}:
            raise ContractError(f"$: countTokens fields {sorted(body)}")
        for i, content in enumerate(body["contents"]):
            check_genai(types.Content, content, f"$.contents[{i}]")
        return "gemini countTokens"
    return ""


def check_response(path: str, status: int, payload: Any) -> str:
    """Validate one answer a fake gave with the SDK's response model (2xx bodies only)."""
    path = path.split("?")[0]
    if not 200 <= status < 300:
        return ""
    if path.endswith("/chat/completions"):
        from openai.types.chat import ChatCompletion

        ChatCompletion.model_validate(payload)
        return "openai chat completion"
    if path.endswith("/v1/responses"):
        from openai.types.responses import Response

        Response.model_validate(payload)
        return "openai response"
    if path == "/v1/messages":
        from anthropic.types import Message

        Message.model_validate(payload)
        return "anthropic message"
    if re.search(r"/models/[^/:]+:generateContent$", path):
        from google.genai import types

        check_genai(types.GenerateContentResponse, payload)
        return "gemini generateContent"
    return ""
