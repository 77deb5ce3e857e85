"""hf:/path provider with a tiny random-weight Llama built locally (no hub): the provider
loads it offline, feeds the exact ids the hf: tokenizer counted, and decodes greedily.

Lives beside the tokenizer tests for their fixture that builds a real tokenizer.json from
the embedded SmolLM2 GGUF."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from ctxprobe.models import resolve_provider
from ctxprobe.models.base import GenerateRequest
from ctxprobe.tokenizers.hf import HFTokenizer

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def tiny_model_dir(hf_smollm_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    out = tmp_path_factory.mktemp("tiny_llama")
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(hf_smollm_dir / name, out / name)
    tok = HFTokenizer(out)
    vocab = tok._chat.get_vocab_size()
    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=vocab, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                      num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=512)
    transformers.LlamaForCausalLM(config).save_pretrained(out)
    return out


def test_hf_local_generates_offline_from_counted_ids(tiny_model_dir: Path) -> None:
    tok = HFTokenizer(tiny_model_dir)
    messages = [{"role": "user", "content": "The code is 4819203. What is the code?"}]
    ids = tok.encode_chat(messages)

    async def go() -> tuple:
        provider = resolve_provider(f"hf:{tiny_model_dir}?threads=1", tok)
        assert provider.max_concurrency == 1 and provider.context_window == 512
        try:
            a = await provider.generate(GenerateRequest(messages=messages, max_tokens=6, prompt_ids=ids))
            b = await provider.generate(GenerateRequest(messages=messages, max_tokens=6))  # apply_chat_template
            return a, b
        finally:
            await provider.aclose()

    first, second = asyncio.run(go())
    assert first.prompt_tokens == len(ids) == second.prompt_tokens  # same template, same ids
    assert first.text == second.text  # greedy: deterministic
    assert first.finish_reason in ("length", "stop") and first.completion_tokens <= 6


def test_hf_local_refuses_prompt_beyond_positions(tiny_model_dir: Path) -> None:
    from ctxprobe.models.base import PermanentError

    async def go() -> None:
        provider = resolve_provider(f"hf:{tiny_model_dir}", None)  # type: ignore[arg-type]
        try:
            await provider.generate(GenerateRequest(messages=[{"role": "user", "content": "x"}], max_tokens=8,
                                                    prompt_ids=[1] * 510))
        finally:
            await provider.aclose()

    with pytest.raises(PermanentError, match="exceeds"):
        asyncio.run(go())


@pytest.fixture(scope="module")
def tiny_long_model_dir(hf_smollm_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny Llama with a long window and no end-of-sequence token: left alone, it would
    generate every one of thousands of tokens it is asked for."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    out = tmp_path_factory.mktemp("tiny_llama_long")
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(hf_smollm_dir / name, out / name)
    vocab = HFTokenizer(out)._chat.get_vocab_size()
    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=vocab, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                      num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=16384,
                                      eos_token_id=None, bos_token_id=None, pad_token_id=0)
    model = transformers.LlamaForCausalLM(config)
    model.generation_config.eos_token_id = None
    model.save_pretrained(out)
    return out


def test_cancelling_an_hf_request_stops_generate_at_its_next_step(tiny_long_model_dir: Path) -> None:
    """Ctrl-C cancels the sweep's tasks: the worker thread's generate() sees the abort event
    in its stopping criteria and returns after the step it is in, long before the budget;
    nothing of it is returned, and the model answers the next request as a fresh one does."""
    import threading

    from ctxprobe.providers.hf.engine import GenerationAborted

    budget = 16000
    messages = [{"role": "user", "content": "Count to a very large number."}]
    short = GenerateRequest(messages=[{"role": "user", "content": "Say hello."}], max_tokens=5)

    async def scenario() -> tuple[int, str]:
        provider = resolve_provider(f"hf:{tiny_long_model_dir}?threads=1", None)  # type: ignore[arg-type]
        task = asyncio.create_task(provider.generate(GenerateRequest(messages=messages, max_tokens=budget)))
        while provider._current_abort is None:  # the worker thread is inside generate()
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        released = threading.Event()  # the worker leaves generate() and frees the model
        threading.Thread(target=lambda: (provider._lock.acquire(), provider._lock.release(), released.set())).start()
        while not released.is_set():
            await asyncio.sleep(0.01)
        steps = provider.last_steps
        after = await provider.generate(short)
        await provider.aclose()
        return steps, after.text

    steps, after = asyncio.run(scenario())
    assert 0 < steps < budget, "generate ran to its budget: the cancellation did not reach it"

    async def fresh() -> str:
        other = resolve_provider(f"hf:{tiny_long_model_dir}?threads=1", None)  # type: ignore[arg-type]
        out = await other.generate(short)
        await other.aclose()
        return out.text

    assert after == asyncio.run(fresh())  # greedy: the aborted request left nothing behind
    # a request cancelled while it waits for the model never starts
    provider = resolve_provider(f"hf:{tiny_long_model_dir}", None)  # type: ignore[arg-type]
    flag = threading.Event()
    flag.set()
    with pytest.raises(GenerationAborted):
        provider._generate_sync(short, flag)
