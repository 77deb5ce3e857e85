"""Shared prefixes measured on the built prompts: the hints prompt caching is asked with,
and the plan's cached price.

A *prefix group* is the cases one family builds from one shared text: every depth of a
(length, repetition) — and, for a family whose ``prefix_period(params)`` is k > 1, k
consecutive repetitions (the phone book's questions about one book). The cases of a group
are built and sent one after another (the plan's order), so :func:`mark_prefix_groups`
holds a group's cases until the group is complete, compares their prompts, and gives each
case a :class:`~ctxprobe.core.prefix.CacheHint`: the points (message, character) up to which
it is byte-identical to another member. Points are moved back to a whitespace, so a cache
boundary never splits a word; a point shorter than ``min_tokens`` (the smallest any
provider caches, 1,024) is dropped.

:func:`plan_cached` builds the first group of every (family, length) and prices the grid
under a provider's rules (:mod:`ctxprobe.plan.caching`): every group of a family and
length has the same shape (the same depths, filler of the same length), so one group
measured stands for all of them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Hashable, Iterator, Mapping

from ctxprobe.core import registry
from ctxprobe.core.case import Case, Cell
from ctxprobe.core.catalog import provider_info
from ctxprobe.core.prefix import CacheHint, PrefixMark
from ctxprobe.plan.caching import CachedTotals, CacheRules, Member, bill_group
from ctxprobe.plan.grid import PlannedCase, samples_per_case
from ctxprobe.spec import Spec
from ctxprobe.tokenizers.base import Message, Tokenizer

#: The shortest prefix any provider caches (OpenAI, Anthropic's Sonnet/Opus, Gemini Flash).
MIN_CACHE_TOKENS = 1024
Point = tuple[int, int]  # (message index, characters of its content)


def _common(a: str, b: str) -> int:
    """Length of the longest common prefix of two strings (binary search on slices)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def shared_point(a: list[Message], b: list[Message]) -> Point:
    """Where two prompts stop being identical, moved back to a whitespace (or a message's
    end); ``(i, len(content))`` for a point at the end of message ``i``."""
    for i, (x, y) in enumerate(zip(a, b)):
        if x["role"] != y["role"]:
            return _end_of(a, i - 1)
        cx, cy = _text(x), _text(y)
        if cx == cy and x.get("tool_calls") == y.get("tool_calls"):
            continue
        n = _common(cx, cy)
        if n < len(cx) and n < len(cy):
            cut = max(cx.rfind(" ", 0, n), cx.rfind("\n", 0, n))
            n = cut + 1 if cut >= 0 else 0
        return (i, n) if n > 0 else _end_of(a, i - 1)
    return _end_of(a, min(len(a), len(b)) - 1)


def _text(message: Message) -> str:
    """A message's text (a tools layout's tool-call message has none: ``""``)."""
    return str(message.get("content") or "")


def _end_of(messages: list[Message], i: int) -> Point:
    return (i, len(_text(messages[i]))) if i >= 0 else (0, 0)


def _prefix_text(messages: list[Message], point: Point) -> list[str]:
    i, offset = point
    return [_text(m) for m in messages[:i]] + [_text(messages[i])[:offset]] if messages else []


def group_hints(prompts: list[list[Message]], count: Callable[[str], int],
                min_tokens: int = MIN_CACHE_TOKENS, explicit: bool = False) -> list[CacheHint | None]:
    """One hint per prompt of a group (in sending order); None where it shares no prefix
    of at least ``min_tokens`` with another member."""
    n = len(prompts)
    pair: dict[tuple[int, int], Point] = {}
    for i in range(n):
        for j in range(i + 1, n):
            pair[(i, j)] = pair[(j, i)] = shared_point(prompts[i], prompts[j])
    tokens: dict[Point, int] = {}
    owner: dict[Point, int] = {}
    for (i, _), p in pair.items():
        owner.setdefault(p, i)
    for p, i in owner.items():
        tokens[p] = sum(count(t) for t in _prefix_text(prompts[i], p) if t)
    points = sorted(p for p in owner if tokens[p] >= min_tokens)
    marks: list[list[Point]] = []
    for i in range(n):
        # a boundary is inside member i's shared part when i is identical, up to it, to a
        # member that has it as its own boundary
        mine = [p for p in points if any(pair[(i, j)] >= p for j in range(n) if j != i)]
        marks.append(mine)
    if not points:
        return [None] * n
    members = [i for i in range(n) if marks[i]]
    root = min(p for i in members for p in marks[i])
    blob = json.dumps(_prefix_text(prompts[owner[root]], root), ensure_ascii=False)
    key = "ctxprobe-" + hashlib.sha256(blob.encode("utf-8")).hexdigest()[:24]
    out: list[CacheHint | None] = []
    for i in range(n):
        if not marks[i]:
            out.append(None)
            continue
        earlier = [tokens[pair[(i, j)]] for j in range(i) if pair[(i, j)] in tokens]
        reads = max((t for t in earlier if t >= min_tokens), default=0)
        out.append(CacheHint(key=key, marks=tuple(PrefixMark(p[0], p[1], tokens[p]) for p in marks[i]),
                             reads=reads, first=i == members[0], size=len(members), explicit=explicit))
    return out


def remote_counters() -> set[str]:
    """Tokenizer schemes that count by calling a server, as the providers declare them
    (:attr:`ctxprobe.core.catalog.ProviderInfo.remote_counter`)."""
    return {info.remote_counter.split(":", 1)[0] for info in (provider_info(e.name) for e in registry.entries("providers"))
            if info.remote_counter}


def prefix_counter(name: str, tokenizer: Tokenizer) -> Callable[[str], int]:
    """How prefixes are counted for cache marks: the run's tokenizer, or ~4 characters a
    token for one that would ask a server per prefix (the marks only need to know which
    prefixes pass a provider's minimum)."""
    if name.split(":", 1)[0] in remote_counters():
        return lambda text: (len(text) + 3) // 4
    return tokenizer.count


def group_of(case: Case, periods: Mapping[str, int]) -> Hashable:
    """The prefix group of a case: (family, length, repetition // the family's period)."""
    return (case.cell.family, case.cell.length, case.rep // max(1, periods.get(case.cell.family, 1)))


def mark_prefix_groups(cases: Iterator[Case], periods: Mapping[str, int], count: Callable[[str], int],
                       min_tokens: int = MIN_CACHE_TOKENS, explicit: bool = False) -> Iterator[Case]:
    """``cases`` in the same order, each with its cache hint; a group's cases are held until
    its last one is built (a group is a few cases: every depth of one length)."""
    held: list[Case] = []
    key: Hashable = None
    for case in cases:
        k = group_of(case, periods)
        if held and k != key:
            yield from _hinted(held, count, min_tokens, explicit)
            held = []
        key = k
        held.append(case)
    if held:
        yield from _hinted(held, count, min_tokens, explicit)


def _hinted(cases: list[Case], count: Callable[[str], int], min_tokens: int, explicit: bool) -> Iterator[Case]:
    if len(cases) < 2:
        yield from cases
        return
    for case, hint in zip(cases, group_hints([c.messages for c in cases], count, min_tokens, explicit)):
        case.cache_hint = hint
        yield case


def members_of(cases: list[Case], count: Callable[[str], int]) -> list[tuple[int, Member]]:
    """(repetition, measured member) for the cases of one group, in sending order."""
    hints = group_hints([c.messages for c in cases], count, min_tokens=1) if len(cases) > 1 else [None] * len(cases)
    return [(c.rep, Member(c.token_count, tuple(m.tokens for m in h.marks) if h else (), h.reads if h else 0))
            for c, h in zip(cases, hints)]


def first_group(spec: Spec, label: str, length: int, period: int) -> list[PlannedCase]:
    """The planned cases of the first prefix group of (family, length), in sending order."""
    return [PlannedCase(Cell(label, length, depth), rep) for rep in range(min(period, spec.reps))
            for depth in sorted(spec.depths, reverse=True)]


def plan_cached(spec: Spec, rules: CacheRules, build: Callable[[PlannedCase], Case], periods: Mapping[str, int],
                count: Callable[[str], int], output_tokens: int) -> CachedTotals:
    """The grid's prompt tokens by price under ``rules``, from its built first groups."""
    totals = CachedTotals(output=output_tokens)
    for label in spec.families:
        period = max(1, periods.get(label, 1))
        full, rest = divmod(spec.reps, period)
        # a variant's k samples resend each group's prompts: priced as k groups (an upper
        # bound, the repeats' cache reads are not counted)
        k = samples_per_case(spec, label)
        for length in spec.lengths_of(label):
            measured = members_of([build(p) for p in first_group(spec, label, length, period)], count)
            members = [m for _, m in measured]
            totals.add(bill_group(members, rules), full * k)
            totals.groups += full * k
            if rest:
                totals.add(bill_group([m for r, m in measured if r < rest], rules), k)
                totals.groups += k
    return totals
