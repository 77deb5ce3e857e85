"""``sim:turns-forget`` and ``sim:tools-forget``: sims whose behaviour depends on the
message layout (docs/layouts.md). They read the conversation's messages as a model would
(never an answer key): ``turns-forget?n=N`` loses every message more than N messages back,
``tools-forget?k=K`` every tool result but the K most recent. Each rule is checked at its
boundary: the evidence exactly N back (read) and one further (lost)."""

from __future__ import annotations

import asyncio
import json

import pytest

from ctxprobe.errors import CtxprobeError
from ctxprobe.haystack.layout import turns_back
from ctxprobe.models.base import GenerateRequest
from ctxprobe.sim.model import NOT_FOUND, make_sim
from ctxprobe.tokenizers.base import Message

from word_tokenizer import WordTokenizer

TOK = WordTokenizer()
KEY, VALUE = "brisk-lantern-482", "4819203"
NEEDLE = f"The special magic number for {KEY} is {VALUE}."
QUESTION = f"What is the special magic number for {KEY} mentioned in the text above? Answer with the number only."


def ask(spec: str, messages: list[Message]) -> str:
    return asyncio.run(make_sim(spec, TOK).generate(GenerateRequest(messages=messages, max_tokens=64))).text


def chat(turns: int, at: int) -> list[Message]:
    """``turns`` alternating user/assistant filler turns, the needle in turn ``at``, the question last."""
    roles = ["user" if (turns - i) % 2 == 0 else "assistant" for i in range(turns)]
    out: list[Message] = [{"role": r, "content": f"Filler turn {i}. The weather was mild."} for i, r in enumerate(roles)]
    out[at] = {**out[at], "content": f"Filler turn {at}. {NEEDLE}"}
    return [*out, {"role": "user", "content": QUESTION}]


def agent(results: int, at: int) -> list[Message]:
    """A tools conversation: an opening user turn, ``results`` call/result pairs, the needle
    in result ``at`` (0-based, oldest first), the question last."""
    out: list[Message] = [{"role": "user", "content": "Read the notes, then answer."}]
    for i in range(results):
        call = {"id": f"call_{i:03d}", "type": "function",
                "function": {"name": "read_file", "arguments": json.dumps({"path": f"notes/part-{i:03d}.txt"})}}
        text = f"Part {i}. " + (NEEDLE if i == at else "Nothing of note happened.")
        out += [{"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": call["id"], "content": text}]
    return [*out, {"role": "user", "content": QUESTION}]


@pytest.mark.parametrize("n", [0, 1, 3, 8])
def test_turns_forget_reads_exactly_n_messages_back(n: int) -> None:
    total = n + 4
    for at in range(total):
        msgs = chat(total, at)
        back = turns_back(msgs, NEEDLE)
        assert back == total - at
        want = VALUE if back <= n else NOT_FOUND
        assert ask(f"sim:turns-forget?n={n}", msgs) == want, (n, back)


def test_turns_forget_boundary_one_turn_short_and_one_past() -> None:
    msgs_at = chat(12, 12 - 8)  # the needle 8 messages back
    msgs_past = chat(12, 12 - 9)  # 9 back
    assert turns_back(msgs_at, NEEDLE) == 8 and turns_back(msgs_past, NEEDLE) == 9
    assert ask("sim:turns-forget?n=8", msgs_at) == VALUE
    assert ask("sim:turns-forget?n=8", msgs_past) == NOT_FOUND
    assert ask("sim:turns-forget", msgs_at) == VALUE and ask("sim:turns-forget", msgs_past) == NOT_FOUND  # n=8 default


def test_turns_forget_reads_the_single_layout_whole() -> None:
    filler = " ".join(["The weather was mild."] * 400)
    for body in (f"{NEEDLE} {filler}", f"{filler} {NEEDLE}"):
        msgs: list[Message] = [{"role": "user", "content": f"{body}\n\n{QUESTION}"}]
        assert ask("sim:turns-forget?n=0", msgs) == VALUE


def test_turns_forget_counts_tool_messages_as_messages() -> None:
    msgs = agent(6, 3)  # result 3 of 0..5: two pairs after it, then the question
    back = turns_back(msgs, NEEDLE)
    assert back == 5
    assert ask("sim:turns-forget?n=5", msgs) == VALUE
    assert ask("sim:turns-forget?n=4", msgs) == NOT_FOUND


@pytest.mark.parametrize("k", [1, 2, 4])
def test_tools_forget_keeps_the_k_most_recent_results(k: int) -> None:
    results = k + 3
    for at in range(results):
        msgs = agent(results, at)
        recent = results - at  # 1: the last result
        assert turns_back(msgs, NEEDLE) == 2 * recent - 1
        want = VALUE if recent <= k else NOT_FOUND
        assert ask(f"sim:tools-forget?k={k}", msgs) == want, (k, recent)


def test_tools_forget_boundary_and_the_turns_it_keeps() -> None:
    assert ask("sim:tools-forget", agent(10, 10 - 4)) == VALUE  # the 4th most recent (k=4 default)
    assert ask("sim:tools-forget", agent(10, 10 - 5)) == NOT_FOUND  # the 5th
    assert ask("sim:tools-forget?k=0", agent(3, 2)) == NOT_FOUND  # k=0 reads no result at all
    # user and assistant turns are never cleared, however far back
    assert ask("sim:tools-forget?k=0", chat(30, 0)) == VALUE
    opening = agent(8, -1)
    opening[0] = {"role": "user", "content": f"{NEEDLE} Read the notes, then answer."}
    assert ask("sim:tools-forget?k=1", opening) == VALUE


def test_the_forgetting_sims_count_the_whole_prompt() -> None:
    msgs = agent(6, 0)
    sim = make_sim("sim:tools-forget?k=1", TOK)
    result = asyncio.run(sim.generate(GenerateRequest(messages=msgs, max_tokens=64)))
    assert result.text == NOT_FOUND and result.prompt_tokens == TOK.count_chat(msgs)  # cleared ≠ not sent


@pytest.mark.parametrize("spec, error", [
    ("sim:turns-forget?n=-1", "n and k must be >= 0"),
    ("sim:tools-forget?k=-2", "n and k must be >= 0"),
    ("sim:turns-forget?k=2", "unknown parameter 'k' for sim:turns-forget"),
    ("sim:tools-forget?n=2", "unknown parameter 'n' for sim:tools-forget"),
    ("sim:turns-forget?n=two", "is not a valid int"),
])
def test_bad_parameters_are_refused_in_one_line(spec: str, error: str) -> None:
    with pytest.raises(CtxprobeError, match=error):
        make_sim(spec, TOK)
