"""In-process llama.cpp models: ``local`` (the embedded SmolLM2) and ``llamacpp:/path.gguf``.

The engine is llama.cpp's native server from the prebuilt ``xllamacpp`` wheel
(:mod:`ctxprobe.embedded.xllama`), called in process. The prompt is sent as token ids —
the exact ids the case was counted with (chat template applied by our tokenizer) — so
the model sees precisely the measured length. llama.cpp's prompt cache keeps the longest
common prefix between consecutive requests (reported back as ``cached_tokens``), so cases
that share filler before the needle are cheaper when sent in order.

Interruption: the request is streamed with prompt-progress events, one per server step
(:data:`~ctxprobe.embedded.xllama.ABORT_BATCH` prompt tokens). A cancelled request
(Ctrl-C, a timeout) sets the request's abort flag; the next event returns "stop" to
llama.cpp, which drops the request at that step. The aborted call raises, nothing of it
is stored, and the slot keeps only fully computed steps, so the model stays usable.

Reasoning budgets: a GGUF whose chat template is a thinking model's
(:func:`~ctxprobe.embedded.gguf_meta.gguf_can_reason`) takes any budget B as a hard cap:
``max_tokens = answer budget + B``, its inline ``<think>…</think>`` kept apart from the
answer. Any other GGUF (the embedded SmolLM2 among them) cannot reason: budget 0 only.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from ctxprobe.embedded.xllama import DEFAULT_N_CTX, Engine, EngineConfig
from ctxprobe.models.base import GenerateRequest, GenerateResult, PermanentError, ProviderBase, TransientError
from ctxprobe.models.reasoning import finalize
from ctxprobe.tokenizers.base import Tokenizer


class GenerationAborted(Exception):
    """The request was cancelled and llama.cpp stopped computing it (never stored)."""


def _error_reason(chunk: Any) -> str:
    err = chunk.get("error") if isinstance(chunk, dict) else None
    if isinstance(err, dict):
        return f"{err.get('type', 'error')}: {err.get('message', '')}".strip()
    return str(chunk)[:200]


class LlamaCppProvider(ProviderBase):
    #: What it needs of a case's prompt ids (:func:`ctxprobe.models.ids_policy`): a real
    #: list (llama-cpp-python only takes a list of ints as a token prompt).
    ids_policy = "keep"
    max_concurrency: int | None = 1  # one in-process model computes one request at a time
    #: The prompt is its tokenizer's template rendering (tool calls, results and declaration
    #: included: a template that drops them is refused before building, ctxprobe.core.tools).
    sends_tool_messages = True
    #: The tokenizer the prompt is encoded with when a request carries no ids (never None here).
    tokenizer: Tokenizer

    def __init__(self, name: str, path: Path, tokenizer: Tokenizer, *, n_ctx: int = DEFAULT_N_CTX,
                 n_threads: int | None = None, trained_context: int | None = None) -> None:
        self.name = name
        self.path = path
        self.tokenizer = tokenizer
        self.context_window: int | None = n_ctx
        #: The window the model was trained with (GGUF metadata); the default ``n_ctx``.
        self.trained_context = trained_context
        self._n_threads = n_threads
        self._engine: Engine | None = None
        self._lock = threading.Lock()
        self._current_abort: threading.Event | None = None  # the running request's abort flag
        #: Prompt tokens processed by the last request before it ended or was aborted.
        self.last_progress: dict[str, int] = {}
        #: An aborted prefill leaves the slot's cache in a state the next prompt must not
        #: reuse (measured: the next answer changed); the next request recomputes from scratch.
        self._cache_dirty = False

    def _load(self) -> Engine:
        if self._engine is None:
            config = EngineConfig(path=self.path, n_ctx=self.context_window or DEFAULT_N_CTX, n_threads=self._n_threads)
            self._engine = Engine(config, purpose=f"The model '{self.name}'",
                                  extra="local" if self.name == "local" else "llamacpp")
        return self._engine

    def reasoning_refusal(self, budget: int) -> str | None:
        from ctxprobe.embedded.gguf_meta import gguf_can_reason

        if budget == 0 or gguf_can_reason(self.path):
            return None
        return (f"{self.name} cannot reason (its chat template has no thinking section), so a reasoning budget "
                f"of {budget:,} tokens would change nothing: give --reasoning-budgets 0 or drop the flag")

    def _body(self, request: GenerateRequest, ids: list[int], *, reuse_cache: bool = True) -> dict[str, Any]:
        greedy = request.temperature == 0
        return {
            "prompt": ids, "max_tokens": _output_cap(request), "temperature": request.temperature,
            "top_k": 1 if greedy else 40, "top_p": request.top_p if request.top_p is not None else 0.95,
            "seed": request.seed if request.seed is not None else 0,
            "stream": True, "return_progress": True, "cache_prompt": reuse_cache,
        }

    def _generate_sync(self, request: GenerateRequest, abort: threading.Event | None = None) -> GenerateResult:
        abort = abort or threading.Event()
        with self._lock:
            if abort.is_set():  # cancelled while waiting for the model
                raise GenerationAborted()
            engine = self._load()
            ids = [int(i) for i in (request.prompt_ids if request.prompt_ids is not None
                                    else self.tokenizer.encode_chat(request.messages))]
            if len(ids) + _output_cap(request) > (self.context_window or 0):
                raise PermanentError(f"prompt of {len(ids)} tokens + {_output_cap(request)} output exceeds n_ctx")
            text: list[str] = []
            state: dict[str, Any] = {}
            self.last_progress = {}

            def on_chunk(chunk: Any) -> bool:
                if not isinstance(chunk, dict):
                    return abort.is_set()
                if "error" in chunk:
                    state["error"] = chunk
                    return True
                progress = chunk.get("prompt_progress")
                if isinstance(progress, dict):
                    self.last_progress = {k: int(v) for k, v in progress.items() if isinstance(v, (int, float))}
                for choice in chunk.get("choices") or []:
                    text.append(choice.get("text") or "")
                    if choice.get("finish_reason"):
                        state["finish_reason"] = choice["finish_reason"]
                if isinstance(chunk.get("usage"), dict):
                    state["usage"] = chunk["usage"]
                return abort.is_set()  # True tells llama.cpp to drop the request now

            self._current_abort = abort
            reuse = not self._cache_dirty
            try:
                engine.server.handle_completions(self._body(request, ids, reuse_cache=reuse), on_chunk)
            finally:
                self._current_abort = None
            if abort.is_set():  # aborted mid-way, or right after the last step: drop it either way
                self._cache_dirty = True
                raise GenerationAborted()
            self._cache_dirty = False
        if "error" in state:
            err = state["error"].get("error") if isinstance(state["error"].get("error"), dict) else {}
            code = err.get("code") if isinstance(err, dict) else None
            reason = f"llama.cpp: {_error_reason(state['error'])}"
            if isinstance(code, int) and (code >= 500 or code == 429):
                raise TransientError(reason)
            raise PermanentError(reason)
        usage = state.get("usage") or {}
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
        extra: dict[str, object] = {"cached_prompt_tokens": int(cached)} if isinstance(cached, int) else {}
        if request.reasoning_budget:  # a thinking model's inline reasoning, kept apart from its answer
            return finalize("".join(text), state.get("finish_reason"), prompt_tokens=usage.get("prompt_tokens"),
                            completion_tokens=usage.get("completion_tokens"), extra=extra)
        return GenerateResult(
            text="".join(text), finish_reason=state.get("finish_reason"),
            prompt_tokens=usage.get("prompt_tokens"), completion_tokens=usage.get("completion_tokens"),
            extra=extra,
        )

    async def generate(self, request: GenerateRequest) -> GenerateResult:
        abort = threading.Event()
        try:
            return await asyncio.to_thread(self._generate_sync, request, abort)
        except asyncio.CancelledError:
            abort.set()  # llama.cpp drops the request at its next step (ABORT_BATCH tokens)
            raise

    async def aclose(self) -> None:
        running = self._current_abort
        if running is not None:
            running.set()  # closing mid-request (e.g. after Ctrl-C): stop computing it first
        await asyncio.to_thread(self._close_sync)

    def _close_sync(self) -> None:
        with self._lock:
            engine, self._engine = self._engine, None
            if engine is not None:
                engine.close()



def _output_cap(request: GenerateRequest) -> int:
    """Output tokens a request may take: the answer's limit plus its reasoning budget."""
    return request.max_tokens + (request.reasoning_budget or 0)
