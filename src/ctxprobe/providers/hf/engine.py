"""``hf:/path/to/model[?options]``: a local Hugging Face model run in process by transformers.

Offline by construction: everything loads with ``local_files_only=True`` from a directory
(config.json, weights, tokenizer files), so a missing file is a one-line error, never a
download. The prompt is the case's own token ids when given (the ``hf:`` tokenizer renders
the same template), else ``apply_chat_template(add_generation_prompt=True)``, so the model
sees exactly the counted prompt. Decoding is greedy at temperature 0.

Like ``llamacpp:``, generation runs in a worker thread behind a lock: one in-process model
computes one request at a time (``max_concurrency = 1``). Python cannot stop a thread, so a
cancelled request (Ctrl-C) sets an event that a ``StoppingCriteria`` reads after every
decode step: ``generate`` returns at its next token, the result is dropped (never stored),
and the model is free for the next request.

Options: ``dtype`` (float32 default: CPU-friendly and exact), ``thinking`` (extra new
tokens for reasoning on top of the answer budget), ``enable_thinking`` (passed to
templates such as Qwen3's), ``threads`` (torch intra-op threads).
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from ctxprobe.errors import CtxprobeError, MissingExtraError
from ctxprobe.models.base import GenerateRequest, GenerateResult, PermanentError, ProviderBase
from ctxprobe.models.options import parse_options, split_options
from ctxprobe.providers.hf.options import HFModelOptions
from ctxprobe.spec.names import ModelRef, as_ref
from ctxprobe.models.reasoning import finalize
from ctxprobe.tokenizers.base import split_prefill

PREFIX = "hf:"


def _import_backend() -> tuple[Any, Any]:
    try:
        import torch
        import transformers
    except ImportError:
        raise MissingExtraError("transformers and torch", "hf-model", "Local Hugging Face models (hf:)") from None
    return torch, transformers


def model_path_from_spec(spec: str) -> tuple[Path, dict[str, str]]:
    _, query = split_options(spec)
    path = Path(as_ref(spec).name).expanduser()
    if not (path / "config.json").is_file():
        raise CtxprobeError(f"no Hugging Face model at {path}: hf: needs a local folder holding config.json and weights")
    return path, query


class GenerationAborted(Exception):
    """The request was cancelled and ``generate`` stopped at its next step (never stored)."""


def _abort_criteria(transformers: Any, torch: Any, abort: threading.Event, steps: list[int]) -> Any:
    """A ``StoppingCriteria`` that ends generation once ``abort`` is set (and counts steps)."""

    class _Abort(transformers.StoppingCriteria):
        def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
            steps[0] += 1
            return torch.full((input_ids.shape[0],), abort.is_set(), dtype=torch.bool, device=input_ids.device)

    return transformers.StoppingCriteriaList([_Abort()])


class HFLocalProvider(ProviderBase):
    max_concurrency: int | None = 1  # one in-process model computes one request at a time

    def __init__(self, path: Path, options: HFModelOptions, *, name: str | None = None) -> None:
        self.path = path
        self.options = options
        self.name = name or f"{PREFIX}{path}"
        self.context_window: int | None = _context_window(path)
        self._model: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()
        self._current_abort: threading.Event | None = None  # the running request's abort flag
        #: Decode steps of the last request (its stopping criteria's calls); read by tests.
        self.last_steps = 0

    @classmethod
    def from_spec(cls, spec: str, options: dict[str, Any] | None = None) -> HFLocalProvider:
        path, query = model_path_from_spec(spec)
        return cls(path, parse_options(HFModelOptions, spec, query, options), name=spec)

    def __repr__(self) -> str:
        return f"HFLocalProvider({self.name!r})"

    def _load(self) -> tuple[Any, Any, Any]:
        torch, transformers = _import_backend()
        if self._model is None:
            if self.options.threads:
                torch.set_num_threads(self.options.threads)
            dtype = "auto" if self.options.dtype == "auto" else getattr(torch, self.options.dtype)
            try:
                self._tokenizer = transformers.AutoTokenizer.from_pretrained(str(self.path), local_files_only=True)
                model = transformers.AutoModelForCausalLM.from_pretrained(
                    str(self.path), local_files_only=True, dtype=dtype)
            except (OSError, ValueError) as exc:
                first = " ".join(str(exc).split())[:200]
                raise CtxprobeError(f"transformers could not load {self.path}: {first}") from None
            model.eval()
            self._model = model
        return torch, self._model, self._tokenizer

    def reasoning_refusal(self, budget: int) -> str | None:
        """A model folder whose chat template has a thinking section takes any budget (a
        hard cap on new tokens: answer limit + budget); any other, budget 0 only."""
        from ctxprobe.embedded.gguf_meta import THINKING_MARKERS

        if budget == 0:
            return None
        texts = [f.read_text(encoding="utf-8", errors="replace") for f in
                 (self.path / "tokenizer_config.json", self.path / "chat_template.jinja") if f.is_file()]
        if any(m in t for t in texts for m in THINKING_MARKERS):
            return None
        return (f"{self.name} cannot reason (its chat template has no thinking section), so a reasoning budget "
                f"of {budget:,} tokens would change nothing: give --reasoning-budgets 0 or drop the flag")

    def _prompt_ids(self, tokenizer: Any, request: GenerateRequest) -> list[int]:
        if request.prompt_ids is not None:
            return list(request.prompt_ids)
        kwargs: dict[str, Any] = {}
        if self.options.enable_thinking is not None:
            kwargs["enable_thinking"] = self.options.enable_thinking
        head, prefix = split_prefill(request.messages)  # an answer prefix follows the template
        out = tokenizer.apply_chat_template(
            head, add_generation_prompt=True, tokenize=True, return_dict=False, **kwargs)
        ids = list(out["input_ids"] if isinstance(out, dict) or hasattr(out, "keys") else out)
        return ids + (tokenizer.encode(prefix, add_special_tokens=False) if prefix else [])

    def _generate_sync(self, request: GenerateRequest, abort: threading.Event | None = None) -> GenerateResult:
        abort = abort or threading.Event()
        with self._lock:
            if abort.is_set():  # cancelled while waiting for the model
                raise GenerationAborted()
            torch, model, tokenizer = self._load()
            ids = self._prompt_ids(tokenizer, request)
            thinking = request.reasoning_budget if request.reasoning_budget is not None else (self.options.thinking or 0)
            budget = request.max_tokens + thinking
            if self.context_window is not None and len(ids) + budget > self.context_window:
                raise PermanentError(
                    f"prompt of {len(ids)} tokens + {budget} output exceeds the model's {self.context_window} positions")
            greedy = request.temperature <= 0
            kwargs: dict[str, Any] = {"max_new_tokens": budget, "do_sample": not greedy}
            if not greedy:
                kwargs["temperature"] = request.temperature
                if request.top_p is not None:
                    kwargs["top_p"] = request.top_p
                if request.seed is not None:
                    torch.manual_seed(request.seed)
            eos = _eos_ids(model, tokenizer)
            pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (eos[0] if eos else 0)
            _, transformers = _import_backend()
            steps = [0]
            self._current_abort = abort
            try:
                with torch.inference_mode():
                    input_ids = torch.tensor([ids], dtype=torch.long)
                    output = model.generate(input_ids, attention_mask=torch.ones_like(input_ids), pad_token_id=pad,
                                            stopping_criteria=_abort_criteria(transformers, torch, abort, steps),
                                            **kwargs)
            finally:
                self._current_abort = None
                self.last_steps = steps[0]
            if abort.is_set():  # stopped by the cancellation (or it came after the last step): drop it
                raise GenerationAborted()
            new = output[0, len(ids):].tolist()
        stopped = bool(new) and new[-1] in eos
        if stopped:
            new = new[:-1]
        finish = "stop" if stopped or len(new) < budget else "length"
        text = tokenizer.decode(new, skip_special_tokens=True)
        return finalize(text, finish, prompt_tokens=len(ids), completion_tokens=len(new) + int(stopped))

    async def generate(self, request: GenerateRequest) -> GenerateResult:
        abort = threading.Event()
        try:
            return await asyncio.to_thread(self._generate_sync, request, abort)
        except asyncio.CancelledError:
            abort.set()  # the worker thread's generate() stops after its current step
            raise

    async def aclose(self) -> None:
        running = self._current_abort
        if running is not None:
            running.set()  # closing mid-request (e.g. after Ctrl-C): stop computing it first
        with self._lock:
            self._model = None
            self._tokenizer = None


def _eos_ids(model: Any, tokenizer: Any) -> list[int]:
    """EOS ids from the generation config (may be a list) and the tokenizer."""
    found: list[int] = []
    cfg = getattr(model, "generation_config", None)
    for value in (getattr(cfg, "eos_token_id", None), tokenizer.eos_token_id):
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, int) and v not in found:
                found.append(v)
    return found


def _context_window(path: Path) -> int | None:
    """``max_position_embeddings`` from config.json (or its ``text_config``)."""
    import json

    try:
        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    for section in (config, config.get("text_config") or {}):
        value = section.get("max_position_embeddings") if isinstance(section, dict) else None
        if isinstance(value, int) and value > 0:
            return value
    return None


def make_provider(ref: ModelRef, *, options: dict[str, object] | None = None, **_: Any) -> HFLocalProvider:
    """The factory the declaration names: ``hf:/path/to/model-folder[?dtype=...]``, in process."""
    return HFLocalProvider.from_spec(ref.spec, dict(options or {}))
