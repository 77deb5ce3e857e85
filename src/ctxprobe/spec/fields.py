"""The parts a sweep spec is made of: how its values are written (lengths such as ``4k``,
depths, reasoning budgets), the per-family default output limit, and the nested settings
models (:class:`Decoding`, :class:`PromptLayout`). The :class:`~ctxprobe.spec.schema.Spec`
model that assembles and validates them is in :mod:`ctxprobe.spec.schema`.

Lengths are model tokens of the fully chat-templated prompt. ``4k`` means 4,096 tokens
(``k`` = 1,024, ``m`` = 1,048,576); write ``4000`` for exactly four thousand.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_serializer, model_validator

from ctxprobe.errors import CtxprobeError


_LENGTH_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*$")
_UNITS = {"": 1, "k": 1024, "m": 1024 * 1024}


def parse_length(value: str | int) -> int:
    """``"4k"`` → 4096, ``"1.5k"`` → 1536, ``"1m"`` → 1048576, ``"4000"`` → 4000."""
    if isinstance(value, bool):
        raise CtxprobeError(f"bad length {value!r}: use a token count such as 4096 or 4k")
    if isinstance(value, int):
        n = value
    else:
        m = _LENGTH_RE.match(str(value))
        if not m:
            raise CtxprobeError(f"bad length {value!r}: use a token count such as 4096, 4k or 1m")
        n = int(float(m.group(1)) * _UNITS[m.group(2).lower()])
    if n <= 0:
        raise CtxprobeError(f"bad length {value!r}: lengths must be positive")
    return n


def parse_lengths(text: str | list[Any]) -> list[int]:
    items = text.split(",") if isinstance(text, str) else list(text)
    return [parse_length(x) for x in items if str(x).strip()]


def parse_depths(text: str | list[Any]) -> list[float]:
    items = text.split(",") if isinstance(text, str) else list(text)
    out: list[float] = []
    for x in items:
        if str(x).strip() == "":
            continue
        try:
            out.append(float(x))
        except (TypeError, ValueError):
            raise CtxprobeError(f"bad depth {x!r}: depths are fractions between 0 and 1") from None
    return out


def parse_budgets(text: str | int | list[Any]) -> list[int]:
    """Reasoning budgets in tokens: ``"0,1k,4k"`` → [0, 1024, 4096] (``0`` = no thinking)."""
    items = text.split(",") if isinstance(text, str) else [text] if isinstance(text, int) else list(text)
    out: list[int] = []
    for x in items:
        if str(x).strip() == "":
            continue
        if str(x).strip() == "0" or x == 0:
            out.append(0)
            continue
        try:
            out.append(parse_length(x))
        except CtxprobeError:
            raise CtxprobeError(f"bad reasoning budget {x!r}: use a token count such as 0, 1024 or 1k") from None
    return out


#: Output tokens per answer item (a 7-digit value, a VAR_ name or a word, with its separator:
#: 7-9 tokens measured with SmolLM2's tokenizer, which spells numbers digit by digit) and for
#: the words around the answer ("The special magic numbers for … are"); the old flat 48 stays
#: the floor so single-answer runs keep their run ids. tests/unit/test_output_limits.py checks
#: every family's real default answers against these.
OUTPUT_TOKENS_PER_ITEM = 10
OUTPUT_LEAD_IN = 32
OUTPUT_FLOOR = 48


def answer_items(family: str, params: dict[str, Any]) -> int:
    """How many items a family's longest correct answer lists, from its (raw) parameters:
    the family's own rule (``answer_items``, :class:`ctxprobe.core.family.FamilyBase`),
    found in the registry; 1 for a name no family has (validation refuses it later)."""
    from ctxprobe.core import registry

    entry = registry.find("families", str(family))
    return int(entry.load().answer_items(params)) if entry is not None else 1


def default_output_limit(family: str, params: dict[str, Any]) -> int:
    """The default ``max_tokens`` for one family: its longest correct answer plus a short lead-in."""
    return max(OUTPUT_FLOOR, OUTPUT_LEAD_IN + OUTPUT_TOKENS_PER_ITEM * answer_items(str(family), params))


class Decoding(BaseModel):
    """Decoding settings: greedy by default. These change results, so they are hashed."""

    model_config = ConfigDict(extra="forbid")
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(48, ge=1, le=32768)
    seed: int | None = None
    #: Nucleus sampling; None (default) sends nothing and leaves the server's default.
    top_p: float | None = Field(None, gt=0.0, le=1.0)


InstructionPosition = Literal["before", "after", "both", "none"]


MessagesLayout = Literal["single", "turns", "tools"]
EvidenceRole = Literal["user", "assistant", "tool"]
#: The turn size a ``turns``/``tools`` layout aims at when none is given (about; whole sentences).
DEFAULT_TURN_TOKENS = 500
#: The fields added with message layouts: left out of a layout's hashed form at their defaults,
#: so a run id from before they existed (``instruction: after``...) stays valid.
_MESSAGE_FIELDS = ("messages", "turn_tokens", "evidence_role")


class PromptLayout(BaseModel):
    """Where a family's instruction line sits, how much filler shields depth 0 from it, and
    how the context is sent: as one user message, as earlier chat turns, or as tool results.

    The instruction position is a variable of every depth curve: a line read directly
    before a depth-0 needle helps a small model find it (measured with the multihop family), so it is recorded with
    the run and shown in its report. ``before`` with no separator is the default: it is
    RULER's arrangement (instruction, context, question) and keeps older run ids valid.
    ``messages`` (``single`` default, ``turns``, ``tools``: docs/layouts.md) splits the same
    haystack into prior turns of about ``turn_tokens`` tokens, the evidence's turn taking
    ``evidence_role`` where the layout allows (default: ``user`` for turns, ``tool`` for tools).
    """

    model_config = ConfigDict(extra="forbid")
    #: before the haystack (default), after it (just before the question), both, or none.
    instruction: InstructionPosition = "before"
    #: Tokens of filler (whole sentences, at least this many) between the start of the
    #: haystack and the first position a needle can take: depth 0 sits after them.
    separator: int = Field(0, ge=0, le=1_000_000)
    #: How the context is sent: one user message, prior user/assistant turns, or tool results.
    messages: MessagesLayout = "single"
    #: About how many tokens each prior turn (or tool result) holds (whole sentences).
    turn_tokens: int = Field(DEFAULT_TURN_TOKENS, ge=16, le=1_000_000)
    #: The role of the turn holding the evidence (None: ``user`` for turns, ``tool`` for tools).
    evidence_role: EvidenceRole | None = None

    @field_validator("separator", mode="before")
    @classmethod
    def _separator(cls, v: Any) -> int:
        return 0 if v in (0, "0") else parse_length(v)

    @field_validator("turn_tokens", mode="before")
    @classmethod
    def _turn_tokens(cls, v: Any) -> int:
        return parse_length(v)

    @model_validator(mode="after")
    def _role_fits(self) -> PromptLayout:
        role = self.evidence_role
        if role is None:
            return self
        allowed = {"single": ("user",), "turns": ("user", "assistant"), "tools": ("tool",)}[self.messages]
        if role not in allowed:
            # not a ValueError: pydantic would bury it under a location-less message
            raise CtxprobeError(f"layout: evidence_role={role} does not fit messages={self.messages} "
                                f"(it takes {' or '.join(allowed)})")
        return self

    @property
    def role(self) -> str:
        """The evidence turn's role (the default for the layout when none is given)."""
        return self.evidence_role or {"single": "user", "turns": "user", "tools": "tool"}[self.messages]

    def is_default(self) -> bool:
        return self == PromptLayout()

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> dict[str, Any]:
        """The message fields only where they differ from their defaults: a stored spec, a
        report and a run id from before they existed read the same (``single`` is what
        every earlier run sent)."""
        d: dict[str, Any] = handler(self)
        for key in _MESSAGE_FIELDS:
            if key in d and d[key] == PromptLayout.model_fields[key].default:
                d.pop(key)
        return d

    def hashed(self) -> dict[str, Any]:
        """The layout as a run's identity holds it (:meth:`_dump`: defaults of the message
        fields left out, so run ids from before they existed stay valid)."""
        return self.model_dump()

    def describe(self) -> str:
        where = {"before": "instruction before the haystack", "after": "instruction after the haystack",
                 "both": "instruction before and after the haystack", "none": "no instruction line"}[self.instruction]
        text = where + (f", {self.separator:,}-token filler separator before depth 0" if self.separator else "")
        if self.messages == "turns":
            text += f", context as prior chat turns of ~{self.turn_tokens:,} tokens (evidence in a {self.role} turn)"
        elif self.messages == "tools":
            text += f", context as tool results of ~{self.turn_tokens:,} tokens"
        return text


def changed_layout(base: PromptLayout, changes: dict[str, Any], label: str = "") -> PromptLayout:
    """``base`` with a variant's layout ``changes`` over it, validated (a one-line error)."""
    try:
        return PromptLayout.model_validate({**base.model_dump(), **changes})
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err.get("loc", ()))
        raise CtxprobeError(f"{label or 'layout'}: bad layout {where}={err.get('input')!r}: {err.get('msg')}") from None


def describe_layout(stored: object) -> str:
    """A stored spec's ``layout`` (absent in runs from before it existed: the default) in words."""
    try:
        return PromptLayout.model_validate(stored or {}).describe()
    except (ValidationError, CtxprobeError):
        return "unknown layout"
