"""Simulated models read hand-built niah prompts like a model would."""

from __future__ import annotations

import asyncio
import random
import re

import pytest

from ctxprobe.errors import CtxprobeError
from ctxprobe.models import resolve_provider
from ctxprobe.models.base import GenerateRequest, PermanentError, Provider
from ctxprobe.sim.model import NOT_FOUND, SimModel, make_sim, view_prompt
from ctxprobe.tokenizers.base import Message

from word_tokenizer import WordTokenizer


FILLER = [
    "The river bends slowly past the old mill.",
    "A grey heron waits in the shallow water near the reeds.",
    "Farmers in the valley plant barley before the autumn rains.",
    "The lighthouse keeper wrote letters every evening by lamplight.",
    "Clouds gathered over the hills and the wind turned cold.",
    "Children ran along the harbour wall chasing the gulls.",
    "The bakery on the corner opens before the sun rises.",
]
INTRO = (
    "A long text follows. Hidden in it are special magic numbers, each tied to a key. "
    "Find the one you are asked about."
)
KEY, VALUE = "brisk-lantern-482", "4819203"
DISTRACTORS = {"calm-river-117": "7730155", "amber-falcon-903": "2268841"}


def needle(key: str, value: str) -> str:
    return f"The special magic number for {key} is {value}."


def niah(
    n: int = 60,
    depth: float = 0.5,
    distractors: dict[str, str] | None = None,
    seed: int = 0,
    keys: tuple[str, ...] = (KEY,),
) -> list[Message]:
    rng = random.Random(seed)
    sentences = [rng.choice(FILLER) for _ in range(n)]
    for k, v in (distractors or {}).items():
        sentences.insert(rng.randrange(len(sentences) + 1), needle(k, v))
    sentences.insert(round(depth * len(sentences)), needle(KEY, VALUE))
    asked = " and ".join(keys)
    question = f"What is the special magic number for {asked} mentioned in the text above? Answer with the number only."
    return [{"role": "user", "content": f"{INTRO}\n\n{' '.join(sentences)}\n\n{question}"}]


def ask(model: Provider, messages: list[Message], max_tokens: int = 64, **kw: object):
    request = GenerateRequest(messages=messages, max_tokens=max_tokens, **kw)  # type: ignore[arg-type]
    return asyncio.run(model.generate(request))


TOK = WordTokenizer()


def test_view_prompt_splits_question_from_context() -> None:
    view = view_prompt([{"role": "system", "content": "Be brief."}, *niah(n=5)])
    assert view.question.startswith("What is the special magic number for brisk-lantern-482")
    assert view.context.startswith("Be brief.")
    assert needle(KEY, VALUE) in view.context and "What is" not in view.context


def test_perfect_finds_target_among_distractors() -> None:
    model = make_sim("sim:perfect", TOK)
    for depth in (0.0, 0.3, 0.5, 1.0):
        result = ask(model, niah(depth=depth, distractors=DISTRACTORS))
        assert result.text == VALUE
        assert result.finish_reason == "stop"
        assert result.prompt_tokens == TOK.count_chat(niah(depth=depth, distractors=DISTRACTORS))
        assert result.completion_tokens == 1


def test_perfect_says_not_found_when_key_absent() -> None:
    messages = niah()
    messages[0]["content"] = messages[0]["content"].replace(needle(KEY, VALUE), "")
    assert ask(make_sim("sim:perfect", TOK), messages).text == NOT_FOUND


def test_perfect_answers_every_asked_key() -> None:
    messages = niah(distractors=DISTRACTORS, keys=(KEY, "calm-river-117"))
    assert ask(make_sim("sim:perfect", TOK), messages).text == f"{VALUE}, 7730155"


def test_similar_key_is_not_confused() -> None:
    messages = niah(distractors={"brisk-lantern-4821": "1111111"})
    assert ask(make_sim("sim:perfect", TOK), messages).text == VALUE


def test_echo_returns_all_numbers_including_distractors() -> None:
    text = ask(make_sim("sim:echo", TOK), niah(distractors=DISTRACTORS)).text
    assert set(text.split(" ")) == {VALUE, *DISTRACTORS.values()}


def test_echo_output_is_cut_at_max_tokens() -> None:
    result = ask(make_sim("sim:echo", TOK), niah(distractors=DISTRACTORS), max_tokens=2)
    assert result.finish_reason == "length"
    assert result.completion_tokens is not None and result.completion_tokens <= 2


def test_blind_middle_misses_the_middle_only() -> None:
    model = make_sim("sim:blind-middle", TOK)
    assert ask(model, niah(depth=0.0)).text == VALUE
    assert ask(model, niah(depth=1.0)).text == VALUE
    assert ask(model, niah(depth=0.5)).text == NOT_FOUND
    assert ask(model, niah(depth=0.4)).text == NOT_FOUND


def test_decay_falls_past_the_cliff_and_is_deterministic() -> None:
    model = make_sim("sim:decay?cliff=300&width=400&seed=1", TOK)
    assert isinstance(model, SimModel)

    def accuracy(n_sentences: int) -> tuple[float, int]:
        prompts = [niah(n=n_sentences, depth=0.5, distractors=DISTRACTORS, seed=s) for s in range(60)]
        answers = [ask(model, p).text for p in prompts]
        assert all(a in {VALUE, *DISTRACTORS.values()} for a in answers)  # misses pick a distractor
        return sum(a == VALUE for a in answers) / len(answers), TOK.count_chat(prompts[0])

    short, short_tokens = accuracy(10)
    middle, middle_tokens = accuracy(45)
    long, long_tokens = accuracy(90)
    assert short_tokens <= 300 and short == 1.0
    assert 300 < middle_tokens < 700 and 0.15 < middle < 0.85
    assert long_tokens >= 700 and long == 0.0
    assert abs(model.p_correct(500) - 0.5) < 1e-9

    prompt = niah(n=45, distractors=DISTRACTORS, seed=3)
    assert {ask(model, prompt).text for _ in range(5)} == {ask(model, prompt).text}
    reseeded = make_sim("sim:decay?cliff=300&width=400&seed=2", TOK)
    prompts = [niah(n=45, distractors=DISTRACTORS, seed=s) for s in range(40)]
    assert [ask(model, p).text for p in prompts] != [ask(reseeded, p).text for p in prompts]


def test_decay_noise_below_cliff() -> None:
    model = make_sim("sim:decay?cliff=100000&noise=1.0", TOK)
    assert ask(model, niah(distractors=DISTRACTORS)).text != VALUE
    assert ask(model, niah()).text == NOT_FOUND  # no other number to offer


def test_prompt_ids_and_context_window() -> None:
    model = make_sim("sim:perfect?ctx=50", TOK)
    assert model.context_window == 50 and model.max_concurrency is None
    assert ask(model, niah(n=2), prompt_ids=list(range(40))).prompt_tokens == 40
    with pytest.raises(PermanentError, match="exceeds the context window of 50"):
        ask(model, niah(n=20))


@pytest.mark.parametrize(
    "spec, message",
    [
        ("sim:genius", "sim:perfect, sim:echo, sim:blind-middle, sim:decay"),
        ("sim:perfect?cliff=3", "unknown parameter 'cliff'"),
        ("sim:decay?cliff=abc", "not a valid int"),
        ("sim:decay?noise=2", "noise must be between 0 and 1"),
        ("sim:decay?cliff", "bad sim spec"),
    ],
)
def test_bad_specs_are_one_line_errors(spec: str, message: str) -> None:
    with pytest.raises(CtxprobeError, match=re.escape(message)) as info:
        make_sim(spec, TOK)
    assert "\n" not in str(info.value)


def test_resolve_provider() -> None:
    model = resolve_provider("sim:decay?cliff=10", TOK)
    assert isinstance(model, Provider) and model.name == "sim:decay?cliff=10"
    with pytest.raises(CtxprobeError, match="openai-compat:NAME@BASE_URL"):
        resolve_provider("nope:thing", TOK)
