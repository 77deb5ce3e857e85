"""The phone book's parts below the family: its prompt texts and parameters, the book itself
(names and numbers, counted in the model's tokens), its bins and the rendering of a prompt.
:mod:`ctxprobe.families.phonebook.task` puts them together as the ``phonebook`` family."""

from __future__ import annotations

import random
import string
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ctxprobe.haystack.packer import count_many
from ctxprobe.families.phonebook.score import format_number
from ctxprobe.tokenizers.base import Message, Tokenizer


#: The published system prompt (its "…" is written out as the list it stands for).
SYSTEM_PROMPT = (
    "You are a phone book assistant. You can help users find phone numbers for people. "
    "You will be given one or more name(s), and you should respond with the corresponding phone number(s). "
    "Return each name and phone number pair on a new line, in this format:\n"
    "NAME_1 : PHONE_NUMBER_1\nNAME_2 : PHONE_NUMBER_2\n...\n"
    "If you don't have the phone number for a given name, respond with 'NOT_FOUND' as the phone number."
)
BOOK_HEADER = "# Phone book"
#: What the original puts between the system text and the entries (and between entries: "\n").
POST_BOOK_HEADER = "\n\n# Phone book\n\n"
QUESTION = "Please find phone numbers for these names: {names}"
#: ctxprobe's wording of the chain-of-thought request (``cot: true``); the post's own
#: follow-up text is not in the published code we could read, so this wording is ours.
COT_PROMPT = ("Think step by step: for each name, first find its line in the phone book, then give every "
              "answer in the format above.")
_LAYOUT_DEFAULTS = {"book_in": "system", "system_role": True, "repeat_instructions": False, "examples": 0,
                    "shards": 1, "system_prompt": SYSTEM_PROMPT, "question": QUESTION}
#: The layout variants ``method: post`` takes: the post's next experiments (instructions
#: repeated at the end, worked examples, the book in the user turn) and its own fallback for
#: models without a system role (:func:`render_post`). Wording and sharding stay the post's.
POST_VARIANTS = ("book_in", "system_role", "repeat_instructions", "examples")
NAME_LETTERS = 15
_MAX_ROUNDS = 16


class PhonebookParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    method: Literal["ctxprobe", "post"] = Field(
        "ctxprobe", description="post: the original experiment's prompt bytes, bins and exact scoring")
    post_normalise: bool = Field(False, description="post: the original's extra reply normalisation (some providers)")
    cot: bool = Field(False, description="append a chain-of-thought request to the question")
    cot_prompt: str = Field(COT_PROMPT, description="the chain-of-thought request's wording")
    unit: Literal["tokens", "entries"] = Field("tokens", description="what the sweep's lengths count")
    needles: list[int] = Field(default_factory=lambda: [10], description="N values; reps cycle through them")
    system_prompt: str = Field(SYSTEM_PROMPT, description="instruction wording (default: as published)")
    question: str = Field(QUESTION, description="question wording; must contain {names}")
    system_role: bool = Field(True, description="False: no system message; the system text opens the first user "
                              "message (post: it is a first user message of its own, as the post's code sends it)")
    book_in: Literal["system", "user"] = "system"
    repeat_instructions: bool = False
    examples: int = Field(0, ge=0, le=5, description="worked question/answer turns before the question")
    shards: int = Field(1, ge=1, le=64, description="ask the N names against k sub-books, one request each")

    @field_validator("needles")
    @classmethod
    def _needles(cls, v: list[int]) -> list[int]:
        if not v or any(n < 1 for n in v) or len(set(v)) != len(v):
            raise ValueError("needles must be distinct positive counts, e.g. [10, 50, 100]")
        return v

    @field_validator("question")
    @classmethod
    def _question(cls, v: str) -> str:
        if "{names}" not in v or "\n\n" in v:
            raise ValueError("the question must contain {names} and be one paragraph")
        return v

    @model_validator(mode="after")
    def _post_layout(self) -> PhonebookParams:
        if self.method != "post":
            if self.post_normalise:
                raise ValueError("post_normalise applies to method=post only")
            return self
        changed = [k for k, default in _LAYOUT_DEFAULTS.items()
                   if k not in POST_VARIANTS and k in self.model_fields_set and getattr(self, k) != default]
        if changed:
            raise ValueError(f"method=post reproduces the original wording and one request per book; "
                             f"{', '.join(changed)} are ctxprobe's own variants: use method=ctxprobe (method=post "
                             f"takes {', '.join(POST_VARIANTS)} and cot)")
        return self

    def question_text(self, names: list[str]) -> str:
        question = self.question.format(names=", ".join(names))
        return question + " " + self.cot_prompt if self.cot else question


def decode_rep(rep: int, params: PhonebookParams) -> tuple[int, int, int]:
    """``rep`` → (run, N, shard); see the module docstring."""
    q, shard = divmod(rep, params.shards)
    run, i = divmod(q, len(params.needles))
    return run, params.needles[i], shard


def bin_bounds(m: int, n: int, method: str = "ctxprobe") -> list[tuple[int, int]]:
    """N contiguous bins over M entries: sizes differing by at most one (ctxprobe), or the
    post's ``M // N`` entries each from the start, the remainder never asked (post)."""
    if method == "post":
        size = m // n
        return [(b * size, b * size + size) for b in range(n)]
    return [(b * m // n, (b + 1) * m // n) for b in range(n)]


class _Book:
    """The seeded stream of entries of one (seed, length, run); extended on demand."""

    def __init__(self, seed: int, tokenizer: Tokenizer | None) -> None:
        self._rng = random.Random(seed)
        self._tokenizer = tokenizer
        self.names: list[str] = []
        self.digits: list[str] = []
        self.prefix: list[int] = [0]  # summed token counts of "\n" + line
        self._taken_names: set[str] = set()
        self._taken_numbers: set[str] = set()

    def line(self, i: int) -> str:
        return f"{self.names[i]} : {format_number(self.digits[i])}"

    def extend(self, n: int) -> None:
        start = len(self.names)
        while len(self.names) < n:
            name = "".join(self._rng.choices(string.ascii_lowercase, k=NAME_LETTERS))
            number = "".join(self._rng.choices(string.digits, k=10))
            if name in self._taken_names or number in self._taken_numbers:
                continue
            self._taken_names.add(name)
            self._taken_numbers.add(number)
            self.names.append(name)
            self.digits.append(number)
        if self._tokenizer is not None and len(self.names) > start:
            counts = count_many(self._tokenizer, ["\n" + self.line(i) for i in range(start, len(self.names))])
            for c in counts:
                self.prefix.append(self.prefix[-1] + c)

    def fit(self, budget: int) -> int:
        """Largest M whose entries' summed counts are within ``budget`` tokens."""
        while self.prefix[-1] <= budget:
            self.extend(len(self.names) + 256)
        lo, hi = 0, len(self.prefix) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if self.prefix[mid] <= budget else (lo, mid - 1)
        return lo

    def fresh_name(self, rng: random.Random) -> str:
        """A name in no entry of the book (for the absent name of a worked example)."""
        while True:
            name = "".join(rng.choices(string.ascii_lowercase, k=NAME_LETTERS))
            if name not in self._taken_names:
                return name


def render(p: PhonebookParams, lines: list[str], names: list[str],
           examples: list[tuple[list[str], list[str]]]) -> list[Message]:
    """The chat for one prompt: book, optional worked examples, the question."""
    if p.method == "post":
        return render_post(p, lines, names, examples)
    book = BOOK_HEADER + "".join("\n" + line for line in lines)
    system = p.system_prompt + ("\n\n" + book if p.book_in == "system" else "")
    question = p.question_text(names)
    if p.repeat_instructions:
        question = p.system_prompt + "\n\n" + question
    users = [p.question.format(names=", ".join(q)) for q, _ in examples] + [question]
    if p.book_in == "user":
        users[0] = book + "\n\n" + users[0]
    if not p.system_role:
        users[0] = system + "\n\n" + users[0]
    messages: list[Message] = [{"role": "system", "content": system}] if p.system_role else []
    for i, user in enumerate(users):
        messages.append({"role": "user", "content": user})
        if i < len(examples):
            messages.append({"role": "assistant", "content": "\n".join(examples[i][1])})
    return messages


def render_post(p: PhonebookParams, lines: list[str], names: list[str],
                examples: list[tuple[list[str], list[str]]]) -> list[Message]:
    """The post's chat, and its variants built on the post's own strings.

    As published: ``system`` = prompt text + ``"\n\n# Phone book\n\n"`` + the entries
    joined by ``"\n"``; ``user`` = the question. Without a system role (``system_role:
    false``) the post's code sends that same system text as a message of role ``user``, and
    the question as a second ``user`` message (its path for a model with neither system nor
    developer role). The rest are the post's next experiments, which it names but does
    not write out (docs/anchors.md): ``repeat_instructions`` puts the prompt text again
    before the question (``text + "\n\n" + question``); ``book_in: user`` leaves the
    prompt text alone in the system turn and opens the first user turn with ``"# Phone
    book\n\n"`` + the entries + ``"\n\n"``; ``examples`` adds worked turns before the
    question (a question about three names, one not in the book, and the answer lines in
    the prompt's format)."""
    book = POST_BOOK_HEADER + "\n".join(lines)
    system = p.system_prompt + (book if p.book_in == "system" else "")
    question = p.question_text(names)
    if p.repeat_instructions:
        question = p.system_prompt + "\n\n" + question
    users = [p.question.format(names=", ".join(asked)) for asked, _ in examples] + [question]
    if p.book_in == "user":
        users[0] = book.lstrip("\n") + "\n\n" + users[0]
    messages: list[Message] = [{"role": "system" if p.system_role else "user", "content": system}]
    for i, user in enumerate(users):
        messages.append({"role": "user", "content": user})
        if i < len(examples):
            messages.append({"role": "assistant", "content": "\n".join(examples[i][1])})
    return messages
