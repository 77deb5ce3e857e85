"""``sim:late-reader``: follows an instruction only when it starts in the prompt's last
``tail`` share; earlier (or absent), it misses with probability ``miss`` (a draw fixed by
the prompt text). It reads the prompt like ``sim:perfect`` and never sees an answer key."""

from __future__ import annotations

import asyncio

import pytest

from ctxprobe.errors import CtxprobeError
from ctxprobe.models.base import GenerateRequest
from ctxprobe.sim.model import NOT_FOUND, make_sim
from ctxprobe.sim.instructions import instruction_phrases, last_instruction_at
from ctxprobe.families.aggregation import task as aggregation
from ctxprobe.families.documents import task as documents
from ctxprobe.families.multihop import task as multihop
from ctxprobe.families.niah import task as niah
from ctxprobe.families.vartrack import task as vartrack
from ctxprobe.haystack.layout import after_wording
from ctxprobe.families.phonebook.task import SYSTEM_PROMPT
from ctxprobe.tokenizers.base import Message

from word_tokenizer import WordTokenizer

TOK = WordTokenizer()
KEY, VALUE = "brisk-lantern-482", "4819203"
QUESTION = f"What is the special magic number for {KEY} mentioned in the text above? Answer with the number only."
PHRASE = instruction_phrases()["niah"]


def ask(spec: str, messages: list[Message]) -> str:
    return asyncio.run(make_sim(spec, TOK).generate(GenerateRequest(messages=messages, max_tokens=64))).text


def prompt(at: int, total: int, salt: int = 0) -> list[Message]:
    """One user message of ``total`` characters whose instruction phrase starts at ``at``."""
    tail = f"\n\n{QUESTION}"
    body = f"Filler {salt}. The special magic number for {KEY} is {VALUE}. "
    head = (body * (at // len(body) + 1))[:at]
    rest = PHRASE + ". "
    text = head + rest
    text += "x" * (total - len(text) - len(tail)) + tail
    assert len(text) == total and text.find(PHRASE) == at
    return [{"role": "user", "content": text}]


def test_every_phrase_is_in_its_familys_instruction_in_either_placement() -> None:
    texts = {"niah": niah.INSTRUCTION, "vartrack": vartrack.INSTRUCTION, "multihop": multihop.INSTRUCTION,
             "documents": documents.INSTRUCTION, "aggregation": aggregation.INSTRUCTION,
             "phonebook": SYSTEM_PROMPT}
    assert set(texts) == set(instruction_phrases())
    for family, phrase in instruction_phrases().items():
        assert phrase in texts[family] and phrase in after_wording(texts[family]), family


def test_the_tail_boundary_is_inclusive() -> None:
    # tail 0.25 of 800 characters: an instruction starting at 600 (= 0.75) is late, at 599 is not
    assert last_instruction_at(prompt(600, 800)[0]["content"]) == 0.75
    assert ask("sim:late-reader?miss=1", prompt(600, 800)) == VALUE
    assert ask("sim:late-reader?miss=1", prompt(599, 800)) == NOT_FOUND
    assert ask("sim:late-reader?miss=1&tail=0.5", prompt(400, 800)) == VALUE
    assert ask("sim:late-reader?miss=1&tail=0.5", prompt(399, 800)) == NOT_FOUND
    # miss 0: an early instruction costs nothing (reads like sim:perfect)
    assert ask("sim:late-reader?miss=0", prompt(100, 800)) == VALUE == ask("sim:perfect", prompt(100, 800))


def test_no_instruction_at_all_reads_as_early() -> None:
    messages: list[Message] = [{"role": "user", "content": f"The special magic number for {KEY} is {VALUE}.\n\n{QUESTION}"}]
    assert last_instruction_at(messages[0]["content"]) is None
    assert ask("sim:late-reader?miss=1", messages) == NOT_FOUND
    assert ask("sim:late-reader?miss=0", messages) == VALUE


def test_early_misses_follow_miss_and_are_fixed_by_the_prompt() -> None:
    early = [prompt(100, 1000, salt=i) for i in range(300)]
    answers = [ask("sim:late-reader?miss=0.3", m) for m in early]
    assert set(answers) == {VALUE, NOT_FOUND}
    share = answers.count(NOT_FOUND) / len(answers)
    assert 0.22 < share < 0.38  # 300 draws at p = 0.3: ±0.08 is over 3 standard deviations
    assert [ask("sim:late-reader?miss=0.3", m) for m in early[:20]] == answers[:20]  # deterministic
    other_seed = [ask("sim:late-reader?miss=0.3&seed=1", m) for m in early]
    assert other_seed != answers  # the seed is part of the draw
    late = [prompt(800, 1000, salt=i) for i in range(50)]
    assert all(ask("sim:late-reader?miss=0.9", m) == VALUE for m in late)


def test_the_instruction_is_found_in_any_message_as_the_sim_reads_them() -> None:
    # the phone book's own layout: the instruction opens the system turn (early); repeated
    # before the question in the last user turn it is late
    names = ["abcdefghijkl" + "".join("pqrstuvwxy"[int(d)] for d in f"{i:03d}") for i in range(200)]
    book = "\n".join(f"{name} : (555) 010-{i:04d}" for i, name in enumerate(names))
    question = f"Please find phone numbers for these names: {names[1]}"
    plain: list[Message] = [{"role": "system", "content": SYSTEM_PROMPT + "\n\n# Phone book\n\n" + book},
                            {"role": "user", "content": question}]
    repeat: list[Message] = [plain[0], {"role": "user", "content": SYSTEM_PROMPT + "\n\n" + question}]
    assert ask("sim:late-reader?miss=1", plain) == NOT_FOUND
    assert ask("sim:late-reader?miss=1", repeat) == f"{names[1]} : (555) 010-0001"


@pytest.mark.parametrize(("spec", "fragment"), [
    ("sim:late-reader?miss=1.5", "miss must be between 0 and 1"),
    ("sim:late-reader?tail=0", "tail must be above 0"),
    ("sim:late-reader?tail=1.2", "tail must be above 0"),
    ("sim:late-reader?cliff=3", "unknown parameter 'cliff'"),
    ("sim:late-reader?miss=lots", "not a valid float"),
])
def test_bad_parameters_are_one_line_errors(spec: str, fragment: str) -> None:
    with pytest.raises(CtxprobeError, match=fragment):
        make_sim(spec, TOK)
