"""The Case type shared by every stage: a cell of the grid, one built case, its id and hashes."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from ctxprobe.core.prefix import CacheHint

#: What a provider needs of a case's prompt ids (its ``ids_policy``), so what
#: :func:`ctxprobe.cases.memory.slim_case` keeps of them: all, a compact array, or none.
IdsPolicy = Literal["drop", "compact", "keep"]

#: One chat message: {"role": "system" | "user" | "assistant" | "tool", "content": "...", ...}
#: (an assistant message of a tools layout also holds "tool_calls", a tool message "tool_call_id").
Message = dict[str, Any]


@dataclass(frozen=True)
class Cell:
    """A coordinate of the sweep grid. Length and depth are first-class, never names."""

    family: str
    length: int  # target length in model tokens (fully templated prompt)
    depth: float  # evidence depth as a fraction of the haystack, 0 = start, 1 = end
    #: Reasoning (thinking) tokens the model may spend on top of the answer's output
    #: limit; None: the sweep has no reasoning-budget axis (the provider's default).
    reasoning_budget: int | None = None


@dataclass
class Case:
    cell: Cell
    rep: int
    seed: int  # the case's own seed, derived from (spec seed, cell, rep)
    messages: list[Message]
    #: Values that must appear in the answer.
    expected: list[str]
    #: Same-form values bound to other keys; any of them in the answer is a distractor hit.
    distractors: list[str] = field(default_factory=list)
    #: Family-specific facts: keys, needle texts, per-needle depths, question, ... (a plain
    #: dict, never changed once built; its keys per family: ``core.case_meta``).
    meta: Mapping[str, Any] = field(default_factory=dict)
    token_count: int = 0  # fully templated prompt, counted with the named tokenizer
    needle_token_pos: int | None = None  # token index where the target evidence starts
    realised_depth: float | None = None  # share of the other haystack tokens before the needle
    #: Ids of the templated prompt from the build (kept in memory only, never stored):
    #: in-process providers feed them to the model so it sees exactly what was counted.
    prompt_ids: list[int] | None = field(default=None, repr=False, compare=False)
    #: Output tokens this case asks for, when its family fixes them (RULER's per-task
    #: ``tokens_to_generate``); None: the sweep's ``decoding.max_tokens``.
    max_tokens: int | None = None
    #: Where this prompt shares its prefix with others of its group (set just before it is
    #: sent, :mod:`ctxprobe.cases.prefixes`; in memory only, never stored or hashed).
    cache_hint: CacheHint | None = field(default=None, repr=False, compare=False)
    #: Which of a prompt variant's k samples this is (``samples=k``, :mod:`ctxprobe.core.variant`):
    #: the same prompt sent k times at that variant's decoding; None: the case is sent once.
    sample: int | None = None

    @property
    def case_id(self) -> str:
        """Stable id: the same cell, repetition (and sample) of the same run always map here."""
        return make_case_id(self.cell, self.rep, self.sample)

    @property
    def prompt_hash(self) -> str:
        return prompt_hash(self.messages)

    @property
    def content_hash(self) -> str:
        """Hash of everything that decides this case's score (see :func:`content_hash`)."""
        return content_hash(self.cell.family, self.messages, self.expected, self.distractors, self.meta,
                            self.token_count)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("prompt_ids", None)
        if self.cell.reasoning_budget is None:  # no budget axis: the dict older exports had
            d["cell"].pop("reasoning_budget", None)
        d.pop("cache_hint", None)
        if self.sample is None:  # sent once: the dict older exports had
            d.pop("sample", None)
        d["case_id"] = self.case_id
        d["prompt_hash"] = self.prompt_hash
        return d


def make_case_id(cell: Cell, rep: int, sample: int | None = None) -> str:
    base = f"{cell.family}/L{cell.length}/d{cell.depth:g}/r{rep}"
    # the budget and the sample join the id only when the sweep has them: older ids are unchanged
    if cell.reasoning_budget is not None:
        base = f"{base}/b{cell.reasoning_budget}"
    return base if sample is None else f"{base}/s{sample}"


def sample_of_id(case_id: str) -> int | None:
    """The sample index a case id ends with (``…/r3/s4`` → 4; None: sent once)."""
    head, sep, tail = case_id.rpartition("/s")
    return int(tail) if sep and head and tail.isdigit() else None


def prompt_hash(messages: list[Message]) -> str:
    blob = json.dumps(messages, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def content_hash(family: str, messages: list[Message], expected: list[str], distractors: list[str],
                 meta: Mapping[str, Any], token_count: int) -> str:
    """Hash of everything that decides a case's score: the prompt, the answer key, the
    distractors, the scorer's parameters (in ``meta``), the family that scores it and the
    token count truncation is judged against. Instance packs carry it per line, so an
    edited answer key is caught before anything is sent."""
    blob = json.dumps({"family": family, "messages": messages, "expected": [str(v) for v in expected],
                       "distractors": [str(v) for v in distractors], "meta": meta, "token_count": int(token_count)},
                      ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def derive_seed(*parts: object) -> int:
    """A stable 64-bit seed from any parts (never Python's salted ``hash``)."""
    blob = "/".join(str(p) for p in parts).encode()
    return int.from_bytes(hashlib.sha256(blob).digest()[:8], "big") >> 1  # fits SQLite INTEGER
