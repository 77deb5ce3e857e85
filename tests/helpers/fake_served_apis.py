"""Loopback fakes of two OpenAI-compatible servers, each answering as its source does.

- :func:`vllm_route`: vLLM's ``/v1/models`` and ``/v1/chat/completions``. Started without
  ``--reasoning-parser`` (``parser=False``), a request carrying ``thinking_token_budget``
  is refused before anything is generated, as ``vllm/v1/engine/input_processor.py``
  (``InputProcessor._validate_params``) refuses it: HTTP 400 with vLLM's error body
  ``{"error": {"message", "type", "param", "code"}}`` (``ErrorResponse``/``ErrorInfo`` in
  ``vllm/entrypoints/openai/protocol.py``, ``code`` the HTTP status).
- :func:`llamacpp_route`: upstream ``llama-server`` (``tools/server/server-context.cpp``):
  ``/v1/models`` whose ``meta`` is ``model_meta()`` (``n_ctx_train`` and no served
  window), ``/props`` with ``default_generation_settings.n_ctx`` (one slot's share of
  ``-c``) and ``total_slots``, ``/slots`` with each slot's ``id`` and ``n_ctx``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Reply = tuple[int, dict[str, Any] | list[Any], dict[str, str]]
Route = Callable[[str, str, dict[str, str], dict[str, Any]], Reply]

#: vLLM's text, word for word (vllm/v1/engine/input_processor.py).
VLLM_NO_REASONING_CONFIG = ("thinking_token_budget is set but reasoning_config is not configured. Please set "
                            "--reasoning-parser and/or --reasoning-config to use thinking_token_budget.")


def _completion(model: str, body: dict[str, Any], reasoning: str | None) -> Reply:
    message: dict[str, Any] = {"role": "assistant", "content": "The code is 4819203.", "tool_calls": []}
    usage: dict[str, Any] = {"prompt_tokens": 21, "completion_tokens": 9, "total_tokens": 30}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    return 200, {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": model,
                 "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": "stop"}],
                 "usage": usage}, {}


def vllm_route(*, parser: bool, model: str = "qwen3", max_model_len: int = 32768,
               seen: list[dict[str, Any]] | None = None) -> Route:
    def route(method: str, path: str, headers: dict[str, str], body: dict[str, Any]) -> Reply:
        if path.endswith("/models"):
            return 200, {"object": "list", "data": [{"id": model, "object": "model", "created": 1, "owned_by": "vllm",
                                                     "root": model, "max_model_len": max_model_len}]}, {}
        if seen is not None:
            seen.append(body)
        if "thinking_token_budget" in body and not parser:
            return 400, {"error": {"message": VLLM_NO_REASONING_CONFIG, "type": "BadRequestError", "param": None,
                                   "code": 400}}, {}
        thinking = body.get("chat_template_kwargs", {}).get("enable_thinking")
        return _completion(model, body, "Let me look for the code." if thinking else None)

    return route


def llamacpp_route(*, ctx: int, slots: int, trained: int = 8192, model: str = "model.gguf") -> Route:
    """llama-server started with ``-c ctx -np slots``: each slot gets ``ctx // slots``."""
    per_slot = ctx // slots

    def route(method: str, path: str, headers: dict[str, str], body: dict[str, Any]) -> Reply:
        if path == "/v1/models":
            meta = {"vocab_type": 2, "n_vocab": 49152, "n_ctx_train": trained, "n_embd": 576,
                    "n_params": 134515008, "size": 96576768}
            return 200, {"object": "list", "data": [{"id": model, "object": "model", "created": 1,
                                                     "owned_by": "llamacpp", "meta": meta}]}, {}
        if path == "/props":
            return 200, {"default_generation_settings": {"n_ctx": per_slot, "params": {"n_predict": -1}},
                         "total_slots": slots, "model_path": model}, {}
        if path == "/slots":
            return 200, [{"id": i, "n_ctx": per_slot, "is_processing": False} for i in range(slots)], {}
        return _completion(model, body, None)

    return route
