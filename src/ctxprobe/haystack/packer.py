"""Exact token-budget packing: fill a prompt with filler up to a target length.

Building to budget does not re-tokenize the prompt per search step (RULER binary-searches
the haystack size, re-encoding everything each step). Each filler sentence is counted once,
as ``' ' + sentence`` — the way it tokenizes inside the joined text — and counts are
summed; one encode of the final, fully chat-templated prompt then verifies the case and
corrects the rare tokenizer where the sum does not hold exactly. Building is linear in the
length.

Contract of :func:`pack`: the templated prompt counts ``<= target`` tokens and, with any
haystack (built-in prose or a user's text), no more than ``max(0.5% of target, 16 tokens)``
below it (:func:`~ctxprobe.haystack.fill.fill_tolerance`): when whole sentences leave a
gap, shorter later sentences fill it, then one sentence trimmed at a word boundary
(:mod:`ctxprobe.haystack.fill`). Filler sentences are counted from cached word counts
(:mod:`ctxprobe.haystack.counting`).
"""

from __future__ import annotations

import array
import bisect
import contextlib
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ctxprobe.errors import CtxprobeError
from ctxprobe.haystack.counting import count_many
from ctxprobe.haystack.fill import Filler, fill_tolerance, select
from ctxprobe.haystack.layout import pinned_turns
from ctxprobe.haystack.pool import FillerPool
from ctxprobe.tokenizers.base import Message, Tokenizer

#: Whether prompts are encoded into compact 4-byte arrays (set in build workers, whose cases
#: cross a process boundary; in-process callers keep lists).
_COMPACT = False
#: Held around each full-prompt encode when set (build workers share a semaphore of half
#: the cores: a 1M-token llama.cpp encode needs ~150 MB while it runs).
_ENCODE_GUARD: Any = None


def compact_ids(on: bool = True, guard: Any = None) -> None:
    """Encode prompts as ``array('i')`` where the tokenizer can (``encode_chat_compact``),
    each encode inside ``guard`` (a lock or semaphore) when given."""
    global _COMPACT, _ENCODE_GUARD
    _COMPACT, _ENCODE_GUARD = on, guard


def _encode(tokenizer: Tokenizer, messages: list[Message]) -> Sequence[int]:
    guard = _ENCODE_GUARD if _ENCODE_GUARD is not None else contextlib.nullcontext()
    with guard:
        return tokenizer.encode_chat_compact(messages) if _COMPACT else tokenizer.encode_chat(messages)


#: How many sentences to count in one batched tokenizer call.
_MAX_ROUNDS = 12


@dataclass(frozen=True)
class Insert:
    """A sentence placed into the haystack at a depth (0 = start, 1 = end)."""

    text: str
    depth: float
    tag: str  # "target", "distractor", or a family-specific role


@dataclass
class Packed:
    messages: list[Message]
    prompt_ids: list[int]
    token_count: int
    haystack: str
    #: Haystack-relative token offset (from summed counts) of each insert, in insert order.
    insert_offsets: list[int]
    haystack_tokens: int
    n_filler: int
    encodes: int  # full-prompt encodes spent (1 in the common case)
    insert_counts: list[int] = field(default_factory=list)  # tokens of each insert (as ' ' + text)
    #: Filler tokens kept before depth 0 (the layout's separator, rounded up to whole sentences).
    lead_tokens: int = 0


class LengthTooShort(CtxprobeError):
    def __init__(self, target: int, needed: int) -> None:
        super().__init__(
            f"length {target} is below the {needed} tokens this prompt needs before any filler; "
            f"use lengths of at least {needed}"
        )
        self.needed = needed


def lead_sentences(pool: FillerPool, lead_tokens: int, n: int) -> int:
    """Fewest leading filler sentences that hold at least ``lead_tokens`` tokens, capped at
    n (a length that barely fits the separator may keep up to one sentence less)."""
    if lead_tokens <= 0:
        return 0
    return min(pool.fit(lead_tokens - 1) + 1, n)


def assemble(filler: Filler | FillerPool, n: int, inserts: list[Insert], insert_counts: list[int],
             lead: int = 0) -> tuple[str, list[int], int]:
    """Join n filler sentences with each insert at the sentence boundary nearest its depth.

    Depth is RULER's and :func:`locate`'s: the share of the haystack *other than the insert
    itself* that precedes it — 0 nothing before, 1 nothing after. The other inserts count
    as haystack, so a target at depth 0.5 sits with half the rest's tokens before it however
    many distractors precede it. The first ``lead`` sentences (the layout's separator) come
    before depth 0: depths span the rest."""
    base = filler.tokens(lead)
    total = filler.tokens(n) - base + sum(insert_counts)
    order = sorted(range(len(inserts)), key=lambda j: inserts[j].depth)
    boundary: dict[int, int] = {}
    before = 0  # tokens of inserts placed before the current one
    lo = lead
    prefix = filler._prefix
    for j in order:
        want = base + inserts[j].depth * (total - insert_counts[j]) - before
        # nearest filler boundary i >= lo with filler.tokens(i) closest to want
        i = bisect.bisect_left(prefix, want, lo, n + 1)
        if i > n or (i > lo and want - prefix[i - 1] <= prefix[i] - want):
            i -= 1
        i = min(max(i, lo), n)
        boundary[j] = lo = i
        before += insert_counts[j]
    slots: dict[int, list[int]] = {}
    for j in order:
        slots.setdefault(boundary[j], []).append(j)
    parts: list[str] = []
    offsets = [0] * len(inserts)
    tok = 0
    for i in range(n + 1):
        for j in slots.get(i, ()):
            offsets[j] = tok
            parts.append(inserts[j].text)
            tok += insert_counts[j]
        if i < n:
            parts.append(filler.sentences[i])
            tok += filler.counts[i]
    return " ".join(parts), offsets, tok


def shuffled(filler: Filler, lead: int, seed: int) -> Filler:
    """``filler`` with its sentences after the first ``lead`` in a seeded random order
    (each sentence keeps its count, so the summed budget is unchanged)."""
    order = list(range(lead, len(filler.sentences)))
    random.Random(seed).shuffle(order)
    order = list(range(lead)) + order
    return Filler([filler.sentences[i] for i in order], [filler.counts[i] for i in order], filler.n, filler.trimmed)


def pack(
    tokenizer: Tokenizer,
    render: Callable[[str], list[Message]],
    pool: FillerPool,
    inserts: list[Insert],
    target: int,
    *,
    lead_tokens: int = 0,
    shuffle_seed: int | None = None,
) -> Packed:
    """Build ``render(haystack)`` to ``target`` tokens (see module docstring), with at least
    ``lead_tokens`` of filler before the first insert position (depth 0). ``shuffle_seed``
    permutes the chosen filler sentences after the separator (the same sentences, the same
    counted budget, their order no longer coherent); None keeps the source's order."""
    with pinned_turns() as pin:
        return _pack(tokenizer, render, pool, inserts, target, lead_tokens, shuffle_seed, pin)


def _pack(tokenizer: Tokenizer, render: Callable[[str], list[Message]], pool: FillerPool, inserts: list[Insert],
          target: int, lead_tokens: int, shuffle_seed: int | None, pin: dict[str, Any]) -> Packed:
    insert_counts = count_many(tokenizer, [" " + i.text for i in inserts])
    # the prompt around the filler, measured with one real sentence in place (an empty
    # haystack would let the template's blank lines merge into fewer tokens)
    first = pool.count(0)
    one = render(pool.sentences[0])
    fixed = tokenizer.count_chat(one) - first
    needed = fixed + sum(insert_counts)
    if needed + lead_tokens > target:
        needed = min(needed, tokenizer.count_chat(render("")) + sum(insert_counts))
        if needed + lead_tokens > target:
            raise LengthTooShort(target, needed + lead_tokens)
    tol = fill_tolerance(target)
    budget = target - needed
    best: Packed | None = None
    tried: set[int] = set()
    encodes = 0
    rising: int | None = None  # the prompt's count after a round that aimed higher (None after any other)
    for _ in range(_MAX_ROUNDS):
        tried.add(budget)
        filler = select(pool, tokenizer, budget, tol)
        n = len(filler.sentences)
        lead = lead_sentences(pool, lead_tokens, min(n, filler.n))
        if shuffle_seed is not None:
            filler = shuffled(filler, lead, shuffle_seed)
        text, offsets, hay_tokens = assemble(filler, n, inserts, insert_counts, lead)
        pin["record"] = True  # a conversation layout keeps the turn count of this first render
        messages = render(text)
        pin["record"] = False
        ids = _encode(tokenizer, messages)
        encodes += 1
        actual = len(ids)
        predicted = needed + filler.total
        if actual <= target:
            if best is None or actual > best.token_count:
                # compact ids (a build worker's array) where Packed.prompt_ids says list[int]
                best = Packed(messages, ids, actual, text, offsets, hay_tokens, n, encodes, insert_counts,  # type: ignore[arg-type]
                              filler.tokens(lead))
            if len(messages) != len(one) and target - actual > tol:
                # a conversation layout (ctxprobe.haystack.layout): each turn's wrapping grows
                # with the haystack, so a correction downwards can drop a turn too many: aim higher
                nxt = budget + (target - actual)
            elif actual >= predicted or actual == target:
                break  # the counts held (or erred short): what is left is below one sentence
            elif rising is not None and actual <= rising and target - actual <= tol:
                break  # aiming higher gained nothing and the prompt is within the tolerance: stop
            else:
                # the counts overestimated: aim higher by what they missed, but never by more than
                # the prompt is short of the target (counts that overestimate every sentence, as
                # approx's rounding up does, miss more the more filler they hold: aiming by
                # their whole gap overshot, and the rounds see-sawed to the cap)
                nxt = budget + min(predicted - actual, target - actual)
            rising = actual
        else:
            nxt = budget - (actual - target)  # at least one lower: actual > target
            if nxt < 0:
                raise LengthTooShort(target, actual - filler.total)
            rising = None
        while nxt in tried and nxt < budget:  # already tried lower: go lower still
            nxt -= 1
        if nxt in tried:
            break
        budget = nxt
    if best is None:
        raise LengthTooShort(target, needed)
    best.encodes = encodes
    return best


def find_subsequence(ids: Sequence[int], needle: Sequence[int], start: int = 0) -> int | None:
    """Index of the first occurrence of ``needle`` in ``ids`` at or after ``start``
    (``ids`` a list, or a compact ``array`` from a build worker)."""
    if not needle:
        return None
    if isinstance(ids, array.array) and not isinstance(needle, array.array):
        needle = array.array(ids.typecode, needle)
    first, k = needle[0], len(needle)
    i = start
    try:
        while True:
            i = ids.index(first, i)
            if ids[i : i + k] == needle:
                return i
            i += 1
    except ValueError:
        return None


def locate(tokenizer: Tokenizer, packed: Packed, index: int, text: str) -> tuple[int | None, float]:
    """Token position of insert ``index`` (whose text is ``text``) in the prompt, and its
    realised depth: the share of the rest of the haystack after the separator that precedes
    it (0 = first, 1 = last). Exact: the insert's ids are searched in the prompt's ids."""
    # mid-text an insert follows a space; at the very start of the haystack it does not
    pos = find_subsequence(packed.prompt_ids, tokenizer.encode(" " + text))
    if pos is None:
        pos = find_subsequence(packed.prompt_ids, tokenizer.encode(text))
    rest = packed.haystack_tokens - packed.insert_counts[index] - packed.lead_tokens
    return pos, ((packed.insert_offsets[index] - packed.lead_tokens) / rest if rest > 0 else 0.0)
