"""The sims' sampling noise (ctxprobe.sim.sampling): temperature as a known miss rate.

P(miss) = min(1, t × tnoise), drawn from the prompt and the request's seed; at temperature
0 the sims answer exactly as before, whatever the seed. The sim reads only the prompt."""

from __future__ import annotations

import asyncio
import math

import httpx
import pytest

from ctxprobe.errors import CtxprobeError
from ctxprobe.models.base import GenerateRequest
from ctxprobe.sim.model import NOT_FOUND, make_sim
from ctxprobe.sim.sampling import DEFAULT_TNOISE, choice_seed, p_miss
from ctxprobe.sim.server import SimServer

from word_tokenizer import WordTokenizer

TOK = WordTokenizer()
VALUE = "4819203"
PROMPT = [{"role": "user", "content": "A long text follows. The grey heron waits. The special magic number for "
                                      f"brisk-lantern-482 is {VALUE}. The mill turns.\n\n"
                                      "What is the special magic number for brisk-lantern-482?"}]


def ask(spec: str, temperature: float, seed: int | None) -> str:
    sim = make_sim(spec, TOK)
    return asyncio.run(sim.generate(GenerateRequest(PROMPT, max_tokens=16, temperature=temperature, seed=seed))).text


@pytest.mark.parametrize(("t", "tnoise", "p"), [(0.0, 0.25, 0.0), (0.7, 0.25, 0.175), (0.7, 0.5, 0.35),
                                                (2.0, 0.5, 1.0), (2.0, 1.0, 1.0), (1.0, 0.0, 0.0)])
def test_the_miss_probability(t: float, tnoise: float, p: float) -> None:
    assert math.isclose(p_miss(t, tnoise), p)
    assert DEFAULT_TNOISE == 0.25


def test_temperature_zero_is_deterministic_whatever_the_seed() -> None:
    assert {ask("sim:perfect?tnoise=1", 0.0, seed) for seed in (None, 0, 1, 99)} == {VALUE}


def test_same_prompt_and_seed_same_answer_and_the_rate_is_the_formula() -> None:
    assert ask("sim:perfect?tnoise=0.5", 0.7, 12) == ask("sim:perfect?tnoise=0.5", 0.7, 12)
    sim = make_sim("sim:perfect?tnoise=0.5", TOK)

    async def draws() -> list[str]:
        return [(await sim.generate(GenerateRequest(PROMPT, max_tokens=16, temperature=0.7, seed=s))).text
                for s in range(4000)]

    texts = asyncio.run(draws())
    assert set(texts) == {VALUE, NOT_FOUND}
    rate = texts.count(NOT_FOUND) / len(texts)
    assert abs(rate - 0.35) < 4 * math.sqrt(0.35 * 0.65 / len(texts))  # P(miss) = 0.7 x 0.5


def test_every_kind_takes_tnoise_and_a_negative_one_is_refused() -> None:
    assert ask("sim:blind-middle?tnoise=1", 1.0, 3) == NOT_FOUND  # P(miss) = 1
    assert ask("sim:decay?tnoise=0", 2.0, 3) == VALUE  # no sampling noise: decay's own curve only
    with pytest.raises(CtxprobeError, match="tnoise must be >= 0"):
        make_sim("sim:perfect?tnoise=-1", TOK)


def test_the_server_passes_the_seed_and_n_choices_are_n_samples() -> None:
    assert choice_seed(7, 0) == 7 and choice_seed(7, 1) != choice_seed(7, 2)
    with SimServer(make_sim("sim:perfect?tnoise=0.5", TOK), TOK) as server:
        url = server.start()
        body = {"model": "m", "messages": PROMPT, "temperature": 1.0, "seed": 5, "n": 12, "max_tokens": 16}
        choices = httpx.post(f"{url}/chat/completions", json=body, timeout=10).json()["choices"]
        again = httpx.post(f"{url}/chat/completions", json=body, timeout=10).json()["choices"]
    texts = [c["message"]["content"] for c in choices]
    assert set(texts) == {VALUE, NOT_FOUND}  # twelve draws at P(miss) = 0.5, not one answer twelve times
    assert texts == [c["message"]["content"] for c in again]  # the same seed: the same draws
    assert server.decodings[-1] == {"temperature": 1.0, "max_tokens": 16, "seed": 5}
