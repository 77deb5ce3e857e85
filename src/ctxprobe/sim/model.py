"""Simulated models (``sim:*``) with known behaviour, for testing the harness end to end.

A sim reads the prompt the way a model would and never sees an answer key: the *question* is the last
paragraph (text after the last blank line) of the last user message, and the *context* is everything before it
(earlier messages, then the rest of that message). A :class:`Reader` finds the key(s) the question asks about
(``[a-z]+-[a-z]+-\\d+`` for ``niah``), the sentences of the context that mention each key, and the first
number after the key in each such sentence.

Kinds (spec ``sim:KIND`` or ``sim:KIND?param=value&...``):

``sim:perfect``
    Answers the value(s) of the asked key(s), comma-separated, if the context states them; otherwise ``I could
    not find it.``
``sim:echo``
    Returns every distinct run of 5 or more digits in the whole prompt, space-separated (so strict scoring with
    distractors gives 0). Empty text if there is none.
``sim:blind-middle``
    Cannot see the middle half of the context (characters from 25% to 75% of the context text are invisible to
    it); otherwise perfect. Produces the U shape over depth.
``sim:first-half``
    Sees only the first half of the context (characters before 50% of the context text); otherwise perfect.
    Fails any family whose evidence is in the second half (e.g. a multihop chain with one fact past the middle,
    or aggregation over the whole text).
``sim:decay?cliff=4096&width=2048&noise=0.0&seed=0``
    Counts the prompt's tokens (``count_chat`` of the messages). P(correct) is ``1 - noise`` up to ``cliff``
    tokens, then falls linearly to 0 at ``cliff + width``. The draw is deterministic: a uniform number from
    sha256(seed + full prompt text), so the same prompt always gets the same answer. On a miss it answers
    another number from the context (the value of another key when there is one) or ``I could not find it.``
    With ``slope=S`` (multi-line ``NAME : VALUE`` answers, e.g. ``phonebook``) each line is drawn on its own:
    P(line correct) = p_len × max(0, 1 − S × p), p = the name's first character offset in the context / the
    context's length; a missed line reads ``NAME : NOT_FOUND``. A known position slope for checking position
    metrics. With ``load=L`` (same per-line answers) each line's probability is further multiplied by max(0, 1 −
    L × n), n = the number of names the question asks: accuracy falls with the number of needles, a known truth
    for the needle-overload metrics (NOI).
``sim:late-reader?miss=0.5&tail=0.25&seed=0``
    Follows an instruction only when it has just read it: it finds the task's instruction in the prompt by its
    wording (:mod:`ctxprobe.sim.instructions`) and, when no instruction starts in the prompt's last
    ``tail`` share of characters (messages joined as it reads them), misses with probability ``miss``: ``I could
    not find it.`` The draw is deterministic, from sha256(seed + the messages), as ``decay``'s. Otherwise it
    answers like ``perfect``. A known prompt-variant effect: instructions repeated or moved to the end beat
    instructions at the start only.
``sim:rag?cliff=4096&tolerance=10&sag=0&late=0&seed=0``
    A stated effective length (``cliff`` tokens), distractor tolerance (``tolerance``
    look-alike statements) and middle sag (a miss with probability ``sag`` in the middle
    half, ``late`` in the last quarter): :mod:`ctxprobe.sim.rag`.
``sim:turns-forget?n=8``
    Loses what was said more than ``n`` messages back: a message with more than ``n`` messages after it
    (its *turns back*, the unit of a case's ``meta.turns_back``, docs/layouts.md) is invisible to it; the
    rest it reads like ``perfect``. In the ``single`` layout everything is in the last message: it is perfect
    there. A known per-layout truth: accuracy 1 where the evidence sits at most ``n`` messages back, 0 beyond.
``sim:tools-forget?k=4``
    Reads only the ``k`` most recent tool results (``tool`` messages) of a conversation: the older ones are
    cleared, as an agent harness clears old tool output; every other message it reads like ``perfect``. Past
    the ``k``-th result counted back from the question a fact is lost, so in the ``tools`` layout (a call and
    its result per chunk) accuracy is 1 where the evidence is at most ``2k - 1`` messages back, 0 beyond; in
    ``single`` and ``turns`` it is perfect.
``sim:reasoner?rate=8``
    A reasoning model with a known budget curve. Sent no reasoning budget (0, or a sweep without the axis) it
    answers at once and sees like ``blind-middle``. Given a budget of B tokens it first thinks
    (``<think>…</think>``) through the whole context, one thinking token per ``rate`` prompt tokens: when that
    need, ceil(prompt tokens / rate), fits in B it answers like ``perfect`` (its thinking names the value it
    found, so an answer read from the thinking would be caught); when it does not, it is cut off while thinking
    at its hard output cap (B + ``max_tokens``): an empty answer, ``finish_reason="length"``. It reports its
    reasoning tokens. Every other kind cannot reason and refuses a non-zero budget.

Every kind honours the request's temperature: at 0 it answers as above; at t > 0 each answer is "I could not
find it." with probability min(1, t × ``tnoise``) (default 0.25), drawn from the prompt and the request's
``seed`` (:mod:`ctxprobe.sim.sampling`).
Every kind also takes ``latency=SECONDS`` (each reply waits that long, as a slow server would) and ``ctx=N``:
the context window it reports; a prompt longer than N tokens is rejected with :class:`PermanentError`, as a
real server rejects it with HTTP 400. A reply longer than ``max_tokens`` is cut to fit and finishes with
``"length"``. A family may bring kinds of its own (``sim:interference``, ``sim:out-budget``, ``sim:capacity``:
:mod:`ctxprobe.sim.family_kinds`). ``prompt_tokens`` is ``len(prompt_ids)`` when given, else the tokenizer's
``count_chat``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from ctxprobe.core.profiles.local import sim_kinds
from ctxprobe.errors import CtxprobeError
from ctxprobe.models.base import GenerateRequest, GenerateResult, PermanentError, ProviderBase
from ctxprobe.models.reasoning import finalize
from ctxprobe.sim.rag import RAG_DEFAULTS, RAG_TYPES, rag_answer
from ctxprobe.sim.sampling import DEFAULT_TNOISE, misses
from ctxprobe.sim.reader import NIAH_READER, Reader
from ctxprobe.spec.names import ModelRef, as_ref
from ctxprobe.tokenizers.base import Message, Tokenizer, split_prefill

NOT_FOUND = "I could not find it."
_COMMON_PARAMS = {"ctx", "latency", "tnoise"}
_KIND_PARAMS: dict[str, set[str]] = {
    "perfect": _COMMON_PARAMS,
    "echo": _COMMON_PARAMS,
    "blind-middle": _COMMON_PARAMS,
    "first-half": _COMMON_PARAMS,
    "decay": _COMMON_PARAMS | {"cliff", "width", "noise", "seed", "slope", "load"},
    "reasoner": _COMMON_PARAMS | {"rate"},
    "late-reader": _COMMON_PARAMS | {"miss", "tail", "seed"},
    "rag": _COMMON_PARAMS | set(RAG_TYPES),
    "turns-forget": _COMMON_PARAMS | {"n"},
    "tools-forget": _COMMON_PARAMS | {"k"},
}
_PARAM_TYPES: dict[str, type] = {"ctx": int, "latency": float, "cliff": int, "width": int, "noise": float, "seed": int, "slope": float,
                                 "load": float, "rate": float, "tnoise": float, "miss": float, "tail": float,
                                 "n": int, "k": int, **RAG_TYPES}
_DECAY_DEFAULTS: dict[str, float | int] = {"cliff": 4096, "width": 2048, "noise": 0.0, "seed": 0}
_DEFAULTS: dict[str, dict[str, float | int]] = {"decay": _DECAY_DEFAULTS,
                                                "late-reader": {"miss": 0.5, "tail": 0.25, "seed": 0},
                                                "rag": RAG_DEFAULTS,
                                                "turns-forget": {"n": 8}, "tools-forget": {"k": 4}}
_LONG_NUMBER = re.compile(r"\d{5,}")
_THINK_STEP = " reading"  # one thinking token of sim:reasoner (its usage reports the count)


@dataclass(frozen=True)
class PromptView:
    """What a model reads: the question, and the context the question is about."""

    context: str
    question: str
    full_text: str


def view_prompt(messages: list[Message]) -> PromptView:
    """Split a chat into context and question (the last paragraph of the last user turn).

    A chat ending in an answer prefix (a trailing assistant message, RULER's layout) is read
    as such a model reads it: the question is the last *line* of the user turn, followed by
    the prefix the answer continues."""
    head, prefix = split_prefill(messages)
    if prefix is not None and head and head[-1].get("role") == "user":
        body = str(head[-1].get("content") or "").rstrip()
        before, _, last_line = body.rpartition("\n")
        contents = [str(m.get("content") or "") for m in head]
        context = "\n\n".join([*contents[:-1], before]).strip("\n")
        return PromptView(context=context, question=(last_line.strip() + prefix).strip(),
                          full_text="\n\n".join([*contents, prefix]))
    contents = [m.get("content", "") or "" for m in messages]
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    if last_user < 0:
        return PromptView(context="\n\n".join(contents), question="", full_text="\n\n".join(contents))
    body = contents[last_user].rstrip()
    lead, sep, question = body.rpartition("\n\n")
    if not sep:
        lead, question = "", body
    context = "\n\n".join([*contents[:last_user], lead]).strip("\n")
    return PromptView(context=context, question=question.strip(), full_text="\n\n".join(contents))


def parse_sim_spec(spec: str) -> tuple[str, dict[str, str]]:
    """``sim:decay?cliff=4096`` (or ``decay?…``) → ``("decay", {"cliff": "4096"})`` by the model parser."""
    ref = as_ref(spec if isinstance(spec, ModelRef) or spec.startswith("sim:") else f"sim:{spec}")
    kind, query = ref.name, ref.query
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=True) if query else []
    except ValueError:
        raise CtxprobeError(
            f"bad sim spec '{spec}': parameters must look like sim:decay?cliff=4096&width=2048"
        ) from None
    params: dict[str, str] = {}
    for key, value in pairs:
        if key in params:
            raise CtxprobeError(f"bad sim spec '{spec}': parameter '{key}' given twice")
        params[key] = value
    return kind, params


def _kinds_hint() -> str:
    return "use one of " + ", ".join(f"sim:{k}" for k in sim_kinds())  # the families' own kinds too


def _checked_params(kind: str, params: Mapping[str, object]) -> dict[str, float | int]:
    if kind not in _KIND_PARAMS:  # a family's own kind (ctxprobe.sim.family_kinds), or unknown
        from ctxprobe.sim.family_kinds import checked_params
        return checked_params(kind, params, _kinds_hint())
    return _convert_params(kind, params)


def _convert_params(kind: str, params: Mapping[str, object]) -> dict[str, float | int]:
    allowed = _KIND_PARAMS[kind]
    out: dict[str, float | int] = dict(_DEFAULTS.get(kind, {}))
    for key, raw in params.items():
        if key not in allowed:
            raise CtxprobeError(
                f"unknown parameter '{key}' for sim:{kind}: accepted are {', '.join(sorted(allowed))}"
            )
        try:
            value = _PARAM_TYPES[key](raw)
        except (TypeError, ValueError):
            raise CtxprobeError(
                f"sim:{kind} parameter {key}={raw!r} is not a valid {_PARAM_TYPES[key].__name__}"
            ) from None
        out[key] = value
    if out.get("ctx", 1) <= 0 or out.get("cliff", 0) < 0 or out.get("width", 0) < 0:
        raise CtxprobeError(f"sim:{kind}: ctx must be > 0, cliff and width must be >= 0")
    if out.get("n", 0) < 0 or out.get("k", 0) < 0:
        raise CtxprobeError(f"sim:{kind}: n and k must be >= 0 (messages back, tool results kept)")
    if out.get("tnoise", 0.0) < 0:
        raise CtxprobeError(f"sim:{kind}: tnoise must be >= 0 (miss probability per unit of temperature)")
    if out.get("rate", 1.0) <= 0:
        raise CtxprobeError(f"sim:{kind}: rate must be > 0 (prompt tokens read per thinking token)")
    for share in ("noise", "miss"):
        if not 0.0 <= out.get(share, 0.0) <= 1.0:
            raise CtxprobeError(f"sim:{kind}: {share} must be between 0 and 1")
    if not 0.0 < out.get("tail", 1.0) <= 1.0:
        raise CtxprobeError(f"sim:{kind}: tail must be above 0 and at most 1 (the prompt's last share it reads closely)")
    return out


class SimModel(ProviderBase):
    """One simulated model; see the module docstring for each kind's behaviour."""

    max_concurrency: int | None = None
    sends_tool_messages = True  # it reads every message, tool results included (view_prompt)
    #: A simulated model always counts and reads with a tokenizer (never None, unlike remote ones).
    tokenizer: Tokenizer

    def __init__(
        self,
        kind: str,
        tokenizer: Tokenizer,
        params: Mapping[str, object] | None = None,
        reader: Reader = NIAH_READER,
    ) -> None:
        self.kind = kind
        self.tokenizer = tokenizer
        self.reader = reader
        self.params = _checked_params(kind, params or {})
        ctx = self.params.get("ctx")
        self.context_window: int | None = int(ctx) if ctx is not None else None
        given = {k: v for k, v in (params or {}).items()}
        query = "&".join(f"{k}={v}" for k, v in given.items())
        self.name = f"sim:{kind}" + (f"?{query}" if query else "")

    @classmethod
    def from_spec(cls, spec: str, tokenizer: Tokenizer) -> SimModel:
        kind, params = parse_sim_spec(spec)
        return cls(kind, tokenizer, params)

    def __repr__(self) -> str:
        return f"SimModel({self.name!r}, tokenizer={self.tokenizer.name!r})"

    async def generate(self, request: GenerateRequest) -> GenerateResult:
        if request.prompt_ids is not None:
            prompt_tokens = len(request.prompt_ids)
        else:
            prompt_tokens = self.tokenizer.count_chat(request.messages)
        if self.context_window is not None and prompt_tokens > self.context_window:
            raise PermanentError(
                f"prompt of {prompt_tokens} tokens exceeds the context window of "
                f"{self.context_window} tokens"
            )
        latency = self.params.get("latency")
        if latency:
            await asyncio.sleep(float(latency))
        view = view_prompt(self.remembered(request.messages))
        miss = misses(request.messages, request.temperature, request.seed,
                      float(self.params.get("tnoise", DEFAULT_TNOISE)))  # sampling noise (sim/sampling.py)
        if self.kind == "reasoner" and request.reasoning_budget:
            return self._reason(view if not miss else PromptView(view.context, "", view.full_text), request,
                                prompt_tokens)
        text = NOT_FOUND if miss else self._answer(view, request.messages, prompt_tokens)
        text, finish = self._fit(text, request.max_tokens)
        return GenerateResult(
            text=text,
            finish_reason=finish,
            prompt_tokens=prompt_tokens,
            completion_tokens=self.tokenizer.count(text),
            extra={"sim_kind": self.kind},
        )

    async def aclose(self) -> None:
        return None

    def reasoning_refusal(self, budget: int) -> str | None:
        if self.kind == "reasoner":
            return None
        return super().reasoning_refusal(budget)

    def thinking_needed(self, prompt_tokens: int) -> int:
        """Thinking tokens ``sim:reasoner`` spends reading a prompt of this many tokens."""
        return math.ceil(prompt_tokens / float(self.params.get("rate", 8.0)))

    def _reason(self, view: PromptView, request: GenerateRequest, prompt_tokens: int) -> GenerateResult:
        """Think through the context, then answer; cut off while thinking when the budget
        is too small (see the module docstring)."""
        budget = int(request.reasoning_budget or 0)
        need = self.thinking_needed(prompt_tokens)
        step = _THINK_STEP
        if need > budget:  # still reading when the hard cap (budget + answer limit) stops it
            spent = budget + request.max_tokens
            text, finish = "<think>" + step * spent, "length"
            answer_tokens = 0
        else:
            found = self._lookup(view.question, view.context)
            answer, finish = self._fit(found or NOT_FOUND, request.max_tokens)
            note = f" found {found}." if found else " nothing found."
            spent = need
            text = "<think>" + step * need + note + "</think>\n" + answer
            answer_tokens = self.tokenizer.count(answer)
        return finalize(text, finish, prompt_tokens=prompt_tokens, completion_tokens=spent + answer_tokens,
                        extra={"sim_kind": self.kind, "reasoning_tokens": spent})

    # -- behaviours ---------------------------------------------------------------------

    def remembered(self, messages: list[Message]) -> list[Message]:
        """The messages as this sim reads them: ``turns-forget`` blanks every message more
        than ``n`` messages back, ``tools-forget`` every tool result but the ``k`` most recent
        (their roles and order kept); the other kinds read every message."""
        if self.kind == "turns-forget":
            keep = int(self.params["n"])
            return [m if len(messages) - 1 - i <= keep else {**m, "content": ""} for i, m in enumerate(messages)]
        if self.kind == "tools-forget":
            results = [i for i, m in enumerate(messages) if m.get("role") == "tool"]
            k = int(self.params["k"])
            cleared = set(results[:-k] if k else results)
            return [{**m, "content": ""} if i in cleared else m for i, m in enumerate(messages)]
        return messages

    def _answer(self, view: PromptView, messages: list[Message], prompt_tokens: int) -> str:
        if self.kind == "echo":
            return " ".join(dict.fromkeys(_LONG_NUMBER.findall(view.full_text)))
        if self.kind in ("blind-middle", "reasoner"):  # a reasoner not thinking sees like blind-middle
            n = len(view.context)
            seen = view.context[: n // 4] + "\n\n" + view.context[(3 * n) // 4 :]
            return self._lookup(view.question, seen) or NOT_FOUND
        if self.kind == "first-half":
            return self._lookup(view.question, view.context[: len(view.context) // 2]) or NOT_FOUND
        if self.kind == "decay":
            return self._decay(view, messages, prompt_tokens)
        if self.kind == "rag":  # stated length, look-alike tolerance and middle sag (ctxprobe.sim.rag)
            return rag_answer(view.question, view.context, prompt_tokens, self.params,
                              lambda salt: self._draw(messages, salt), self.reader,
                              self._lookup(view.question, view.context)) or NOT_FOUND
        if self.kind == "late-reader" and self._misses_early_instruction(view, messages):
            return NOT_FOUND
        if self.kind not in _KIND_PARAMS:  # a family's own kind (ctxprobe.sim.family_kinds)
            from ctxprobe.sim.family_kinds import answer_turn
            return answer_turn(self.kind, view.question, view.context, self.params,
                               lambda salt: self._draw(messages, salt), self.tokenizer.count, self._lookup) or NOT_FOUND
        return self._lookup(view.question, view.context) or NOT_FOUND

    def _lookup(self, question: str, context: str) -> str | None:
        """The perfect answer from what is visible (see ctxprobe.sim.skills), or None."""
        from ctxprobe.sim.skills import answer

        return answer(question, context) or None

    def _misses_early_instruction(self, view: PromptView, messages: list[Message]) -> bool:
        """``sim:late-reader``: no instruction in the prompt's last ``tail`` share, and the
        draw falls under ``miss``."""
        from ctxprobe.sim.instructions import last_instruction_at

        at = last_instruction_at(view.full_text)
        late = at is not None and at >= 1.0 - float(self.params["tail"])
        return not late and self._draw(messages, "late") < float(self.params["miss"])

    def p_correct(self, prompt_tokens: int) -> float:
        """Probability that ``sim:decay`` answers correctly at this prompt length."""
        base = 1.0 - float(self.params["noise"])
        cliff, width = int(self.params["cliff"]), int(self.params["width"])
        if prompt_tokens <= cliff:
            return base
        if width == 0:
            return 0.0
        return base * max(0.0, 1.0 - (prompt_tokens - cliff) / width)

    def _draw(self, messages: list[Message], salt: str) -> float:
        """A uniform in [0, 1) fixed by (seed, salt, prompt): reproducible, answer-blind."""
        prompt = json.dumps(messages, ensure_ascii=False, sort_keys=True)
        digest = hashlib.sha256(f"{self.params['seed']}\x00{salt}\x00{prompt}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64

    def _decay(self, view: PromptView, messages: list[Message], prompt_tokens: int) -> str:
        right = self._lookup(view.question, view.context)
        if right is None:
            return NOT_FOUND
        if "slope" in self.params or "load" in self.params:  # per-line (see the module docstring)
            return self._decay_lines(right, view.context, messages, self.p_correct(prompt_tokens))
        if self._draw(messages, "correct") < self.p_correct(prompt_tokens):
            return right
        asked = set(self.reader.keys_in(view.question))
        true_values = set(right.split(", "))
        others = [
            v
            for key, values in self.reader.bindings(view.context).items()
            if key not in asked
            for v in values
            if v not in true_values
        ]
        if not others:
            others = [v for v in _LONG_NUMBER.findall(view.context) if v not in true_values]
        if not others:
            return NOT_FOUND
        return others[int(self._draw(messages, "wrong") * len(others))]

    def _decay_lines(self, right: str, context: str, messages: list[Message], p_len: float) -> str:
        slope, lines = float(self.params.get("slope", 0.0)), right.split("\n")
        overload = max(0.0, 1.0 - float(self.params.get("load", 0.0)) * len(lines))
        for i, line in enumerate(lines):
            name, sep, value = line.partition(" : ")
            at = context.find(name) if sep and value != "NOT_FOUND" else -1
            p = p_len * max(0.0, 1.0 - slope * at / len(context)) * overload
            if at >= 0 and self._draw(messages, f"line{i}") >= p:
                lines[i] = f"{name} : NOT_FOUND"
        return "\n".join(lines)

    def _fit(self, text: str, max_tokens: int) -> tuple[str, str]:
        """Cut a reply to ``max_tokens`` at a word boundary, as generation would stop."""
        if self.tokenizer.count(text) <= max_tokens:
            return text, "stop"
        words = text.split(" ")
        lo, hi = 0, len(words)  # largest prefix of words that fits, by bisection
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.tokenizer.count(" ".join(words[:mid])) <= max_tokens:
                lo = mid
            else:
                hi = mid - 1
        return " ".join(words[:lo]), "length"


def make_sim(spec: str, tokenizer: Tokenizer) -> SimModel:
    """Build a simulated model from its spec string (``sim:KIND?param=value``)."""
    return SimModel.from_spec(spec, tokenizer)


def check_sim(ref: ModelRef) -> None:
    """The ``sim`` provider's name check (no tokenizer needed): the error
    :func:`make_sim_provider` would raise for a bad kind or parameter."""
    _checked_params(*parse_sim_spec(ref))


def make_sim_provider(ref: ModelRef, *, tokenizer: Tokenizer, **_: Any) -> SimModel:
    """The ``sim`` provider's factory (registered in :mod:`ctxprobe.core.builtins`)."""
    return make_sim(ref, tokenizer)
