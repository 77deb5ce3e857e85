"""sim:reasoner at the edges of its rule (written from the documented rule, not the code):
it needs ceil(prompt tokens / rate) thinking tokens; a budget of exactly that answers, one
token less is cut off while thinking at budget + max_tokens."""

from __future__ import annotations

import asyncio
import math

import pytest

from ctxprobe.errors import CtxprobeError
from ctxprobe.models import resolve_provider
from ctxprobe.models.base import GenerateRequest, GenerateResult
from ctxprobe.sim.model import NOT_FOUND
from ctxprobe.tokenizers import resolve_tokenizer

KEY, VALUE = "brisk-lantern-482", "4819203"
FILLER = "The river bends slowly past the old mill. A grey heron waits in the shallow water near the reeds. "


def prompt(depth: float) -> list[dict[str, str]]:
    sentences = [FILLER] * 24
    sentences.insert(round(depth * len(sentences)), f"The special magic number for {KEY} is {VALUE}. ")
    question = f"What is the special magic number for {KEY} mentioned in the text above? Answer with the number only."
    return [{"role": "user", "content": "A long text follows.\n\n" + "".join(sentences) + "\n\n" + question}]


@pytest.fixture(scope="module")
def tok():  # type: ignore[no-untyped-def]
    return resolve_tokenizer("local")


def ask(model: str, tok, messages, budget: int | None, max_tokens: int = 20) -> GenerateResult:  # type: ignore[no-untyped-def]
    provider = resolve_provider(model, tok)
    return asyncio.run(provider.generate(GenerateRequest(messages, max_tokens=max_tokens, reasoning_budget=budget)))


@pytest.mark.parametrize("budget", [None, 0])
def test_without_thinking_it_sees_like_blind_middle(tok, budget: int | None) -> None:  # type: ignore[no-untyped-def]
    assert ask("sim:reasoner", tok, prompt(0.5), budget).text == NOT_FOUND
    edge = ask("sim:reasoner", tok, prompt(0.0), budget)
    assert edge.text == VALUE and "reasoning" not in edge.extra


@pytest.mark.parametrize("rate", [8.0, 3.0])
def test_a_budget_of_exactly_the_need_answers(tok, rate: float) -> None:  # type: ignore[no-untyped-def]
    messages = prompt(0.5)
    need = math.ceil(tok.count_chat(messages) / rate)
    result = ask(f"sim:reasoner?rate={rate:g}", tok, messages, need)
    assert result.text == VALUE and result.finish_reason == "stop"
    assert VALUE in str(result.extra["reasoning"])  # it names the value while thinking; the answer is apart
    assert result.extra["reasoning_tokens"] == need
    assert result.completion_tokens == need + tok.count(VALUE)


def test_one_token_less_is_cut_off_while_thinking(tok) -> None:  # type: ignore[no-untyped-def]
    messages = prompt(0.5)
    need = math.ceil(tok.count_chat(messages) / 8)
    result = ask("sim:reasoner", tok, messages, need - 1, max_tokens=20)
    assert result.text == "" and result.finish_reason == "length"
    assert result.extra["reasoning_tokens"] == result.completion_tokens == need - 1 + 20  # its hard cap
    assert VALUE not in str(result.extra["reasoning"])


def test_only_the_reasoner_takes_a_budget(tok) -> None:  # type: ignore[no-untyped-def]
    assert resolve_provider("sim:reasoner", tok).reasoning_refusal(4096) is None
    for kind in ("perfect", "blind-middle", "decay"):
        sim = resolve_provider(f"sim:{kind}", tok)
        assert sim.reasoning_refusal(0) is None
        assert "cannot reason" in (sim.reasoning_refusal(1) or "")
    with pytest.raises(CtxprobeError, match="rate must be > 0"):
        resolve_provider("sim:reasoner?rate=0", tok)
