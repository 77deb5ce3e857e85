"""In-process llama.cpp models: ``local`` (the embedded SmolLM2) and ``llamacpp:/path.gguf``.

The prompt is sent as token ids — the exact ids the case was counted with (GGUF chat
template applied by our tokenizer) — so the model sees precisely the measured length.
llama.cpp keeps the KV cache of the longest common prefix between consecutive calls, so
cases that share filler before the needle are cheaper when sent in order.

Interruption: generation runs in a worker thread, which Python cannot stop; a cancelled
request (Ctrl-C, a timeout) sets the request's abort flag, which llama.cpp's abort
callback reads between the nodes of every compute graph, so the in-flight prefill or
decode step stops within milliseconds instead of running the prompt to its end. The
aborted call raises, nothing of it is stored, and the KV cache keeps only fully computed
batches (llama-cpp-python trims the rest on the next call), so the model stays usable.
"""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path
from typing import Any

from ctxprobe.embedded.llama import import_llama_cpp
from ctxprobe.errors import CtxprobeError
from ctxprobe.models.base import GenerateRequest, GenerateResult, PermanentError, ProviderBase
from ctxprobe.tokenizers.base import Tokenizer

DEFAULT_N_CTX = 16384


def kept_prefix(llm: Any, ids: list[int]) -> int | None:
    """Prompt tokens llama-cpp-python will keep from its KV cache for ``ids``, by its own
    rule (``Llama.generate``): the longest common prefix of the tokens it holds and the
    prompt, less one when that is the whole prompt (the last token is replayed to refresh
    the logits). ``None`` if this llama-cpp-python exposes no held tokens."""
    held = getattr(llm, "_input_ids", None)  # input_ids[:n_tokens]
    if held is None:
        return None
    n = 0
    for a, b in zip(held, ids):
        if int(a) != b:
            break
        n += 1
    return n - 1 if n and n == len(ids) else n


class GenerationAborted(Exception):
    """The request was cancelled and llama.cpp stopped computing it (never stored)."""


class LlamaCppProvider(ProviderBase):
    #: What it needs of a case's prompt ids (:func:`ctxprobe.models.ids_policy`): a real
    #: list (llama-cpp-python only takes a list of ints as a token prompt).
    ids_policy = "keep"
    max_concurrency: int | None = 1  # one in-process model computes one request at a time

    def __init__(self, name: str, path: Path, tokenizer: Tokenizer, *, n_ctx: int = DEFAULT_N_CTX,
                 n_threads: int | None = None, trained_context: int | None = None) -> None:
        self.name = name
        self.path = path
        self.tokenizer = tokenizer
        self.context_window: int | None = n_ctx
        #: The window the model was trained with (GGUF metadata); the default ``n_ctx``.
        self.trained_context = trained_context
        self._n_threads = n_threads or max(1, min(os.cpu_count() or 1, 8))
        self._llm: Any = None
        self._lock = threading.Lock()
        self._abort_callback: Any = None  # a ctypes callback; referenced so C's pointer stays valid
        self._current_abort: threading.Event | None = None  # the running request's abort flag

    def _load(self) -> Any:
        if self._llm is None:
            llama_cpp = import_llama_cpp(f"The model '{self.name}'")
            try:
                self._llm = llama_cpp.Llama(
                    model_path=str(self.path), n_ctx=self.context_window or DEFAULT_N_CTX,
                    n_threads=self._n_threads, n_batch=512, flash_attn=True, verbose=False, seed=0,
                )
            except (ValueError, RuntimeError) as err:
                raise CtxprobeError(f"llama.cpp could not load {self.path}: {err}") from None

            @llama_cpp.ggml_abort_callback
            def _should_abort(_data: Any) -> bool:
                flag = self._current_abort
                return flag is not None and flag.is_set()

            self._abort_callback = _should_abort
            llama_cpp.llama_set_abort_callback(self._llm._ctx.ctx, _should_abort, None)
        return self._llm

    def _generate_sync(self, request: GenerateRequest, abort: threading.Event | None = None) -> GenerateResult:
        abort = abort or threading.Event()
        with self._lock:
            if abort.is_set():  # cancelled while waiting for the model
                raise GenerationAborted()
            llm = self._load()
            ids = request.prompt_ids or self.tokenizer.encode_chat(request.messages)
            if len(ids) + request.max_tokens > (self.context_window or 0):
                raise PermanentError(f"prompt of {len(ids)} tokens + {request.max_tokens} output exceeds n_ctx")
            reused = kept_prefix(llm, ids)
            self._current_abort = abort
            try:
                out = llm.create_completion(
                    prompt=ids, max_tokens=request.max_tokens, temperature=request.temperature,
                    top_k=1 if request.temperature == 0 else 40, seed=request.seed if request.seed is not None else 0,
                    top_p=request.top_p if request.top_p is not None else 0.95,
                )
            except RuntimeError:
                if abort.is_set():
                    raise GenerationAborted() from None
                raise
            finally:
                self._current_abort = None
            if abort.is_set():  # the abort came after the last compute step: drop the result anyway
                raise GenerationAborted()
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        return GenerateResult(
            text=choice.get("text") or "", finish_reason=choice.get("finish_reason"),
            prompt_tokens=usage.get("prompt_tokens"), completion_tokens=usage.get("completion_tokens"),
            extra={"cached_prompt_tokens": reused} if reused is not None else {},
        )

    async def generate(self, request: GenerateRequest) -> GenerateResult:
        abort = threading.Event()
        try:
            return await asyncio.to_thread(self._generate_sync, request, abort)
        except asyncio.CancelledError:
            abort.set()  # the worker thread's llama.cpp call stops at its next graph node
            raise

    async def aclose(self) -> None:
        running = self._current_abort
        if running is not None:
            running.set()  # closing mid-request (e.g. after Ctrl-C): stop computing it first
        with self._lock:
            if self._llm is not None:
                close = getattr(self._llm, "close", None)
                if close:
                    close()
                self._llm = None
