"""Where the phone book's needles sit in the prompt, in tokens, and the model's window.

A needle's position is stored as a share of the book's entries (``pos``). In tokens: the
run's tokenizer counts the prompt before the book's first line (``pre``, chat template
included) and the text after its last line (``post``); the book holds the rest of the
case's ``token_count`` (the prompt's tokens as the run's tokenizer counted them when the
case was built: what the grid's lengths and ``plan`` count), spread over its characters —
every book line has the same shape (``"NAME : (xxx) xxx-xxxx"``), so within the book
characters and tokens grow in step. A needle's entry then starts at
``pre + (book tokens) × (its line's character offset in the book) / (the book's characters)``.
Only a tokenizer that counts on this machine is used (never a server's or a provider's
counting API); without one the whole prompt's tokens are spread over its characters, an
estimate the plot's axis label states (the instructions before the book count more
characters per token than the book's random names: the first positions read late).

A book split into shards (``shards > 1``) has no single prompt: no token position.

The window: what the run recorded (the server's window found by the pre-run probe, else
the provider's window at run time: a local server's served context, a sim's ``ctx=``, a
hosted model's catalog window), else the catalog's window for the model (runs recorded
before the window was). None when nothing knows it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ctxprobe.families.phonebook.task_meta import phonebook_meta
from ctxprobe.core.catalog import context_window
from ctxprobe.core.records import CaseRecord
from ctxprobe.core.runmeta import RunMeta
from ctxprobe.core.variant import split_label
from ctxprobe.errors import CtxprobeError
from ctxprobe.families.phonebook.score import ENTRY
from ctxprobe.spec.names import as_ref
from ctxprobe.tokenizers.base import Tokenizer

FAMILY = "phonebook"


@dataclass(frozen=True)
class LightRecord:
    """A stored case without its prompt (a book is large; the analysis needs none of it),
    carrying in its place each asked name's token offset (``offsets``; None: not a
    one-request phone book) and whether the text around the book was counted by the run's
    tokenizer (``counted``; False: estimated by characters)."""

    record: CaseRecord
    offsets: list[float] | None = None
    counted: bool = False


def needle_token_offsets(messages: Sequence[Mapping[str, Any]], names: list[str], token_count: int | None,
                         tokenizer: Tokenizer | None = None) -> list[float] | None:
    """Token offset of each asked name's book line in the prompt (see the module's
    docstring); None when the prompt has no count or a name has no book line in it."""
    if not token_count:
        return None
    texts = [str(m.get("content") or "") for m in messages]
    found = [(i, ("\n" + t).find(f"\n{names[0]} : (")) for i, t in enumerate(texts)] if names else []
    book = next((i for i, at in found if at >= 0), None)
    if book is None:
        return None
    text = texts[book]
    lines = [m.span() for m in ENTRY.finditer(text)]
    start, end = lines[0][0], lines[-1][1]  # the book's first and last lines
    ats = [("\n" + text).find(f"\n{name} : (") for name in names]
    if any(at < 0 for at in ats):
        return None
    if tokenizer is None:  # characters and tokens in step over the whole prompt
        before = sum(len(t) + 1 for t in texts[:book])
        total = sum(len(t) + 1 for t in texts) - 1
        return [token_count * (before + at) / total for at in ats]
    pre = tokenizer.count_chat([*messages[:book], {**messages[book], "content": text[:start]}])  # type: ignore[list-item]
    post = tokenizer.count(text[end:]) + sum(tokenizer.count(t) for t in texts[book + 1:])
    per_char = max(0, token_count - pre - post) / max(1, end - start)
    return [pre + per_char * (at - start) for at in ats]


def offline_tokenizer(name: str) -> Tokenizer | None:
    """The run's tokenizer when it counts on this machine (never one that asks a server or
    a provider's counting API); None otherwise, or when it cannot be loaded here."""
    if name.startswith(("endpoint", "anthropic-count:", "gemini-count:")):
        return None
    from ctxprobe.tokenizers import resolve_tokenizer

    try:
        return resolve_tokenizer(name)
    except (CtxprobeError, OSError, ImportError):
        return None


def without_prompts(records: Iterable[CaseRecord], tokenizer: Tokenizer | None = None
                    ) -> Iterator[LightRecord]:
    """Case records without their prompts, each one-request phone-book record carrying its
    needles' token offsets (the text around the book counted by ``tokenizer``; without
    one, by characters)."""
    for rec in records:
        light = LightRecord(rec.without_prompt())
        if split_label(rec.family)[0] == FAMILY and rec.messages:
            meta = phonebook_meta(rec.meta or {})
            if meta.get("shards", 1) == 1 and meta.get("names"):
                offsets = needle_token_offsets(rec.messages, list(meta["names"]), rec.token_count, tokenizer)
                light = LightRecord(light.record, offsets, tokenizer is not None)
        yield light


@dataclass(frozen=True)
class TokenAxis:
    """The phone book in prompt tokens, from a run's stored cases.

    ``prompt``: (length, N) → mean prompt tokens of its cases; ``offsets``: (length, N,
    bin) → mean token offset of that bin's entry over the run's books; ``reason``: why
    there are none (empty maps)."""

    prompt: dict[tuple[int, int], float] = field(default_factory=dict)
    offsets: dict[tuple[int, int, int], float] = field(default_factory=dict)
    reason: str | None = None
    #: The text around the book counted by the run's tokenizer (False: estimated by characters).
    counted: bool = True

    def prompt_tokens(self, length: int, needles: int) -> float | None:
        return self.prompt.get((length, needles))


def token_axis(records: Iterable[LightRecord]) -> TokenAxis:
    """:class:`TokenAxis` of a run's phone-book records (light ones from
    :func:`without_prompts`; their ``family`` as :func:`~ctxprobe.families.phonebook.analysis.needle_results`
    reads it). Every stored case counts, answered or not: a position is the prompt's."""
    counts: dict[tuple[int, int], list[int]] = defaultdict(list)
    sums: dict[tuple[int, int, int], list[float]] = defaultdict(list)
    sharded = missing = 0
    counted = True
    for light in records:
        rec, offsets = light.record, light.offsets
        if rec.family != FAMILY:
            continue
        meta = phonebook_meta(rec.meta or {})
        if meta.get("shards", 1) > 1:
            sharded += 1
            continue
        if not offsets or not rec.token_count:
            missing += 1
            continue
        counted = counted and light.counted
        key = (rec.length, int(meta["needles"]))
        counts[key].append(rec.token_count)
        for b, offset in enumerate(offsets):
            sums[(key[0], key[1], b)].append(float(offset))
    if sharded:
        return TokenAxis(reason="the books are split into shards, one request each: a needle has no single "
                                "prompt to be placed in")
    if missing or not counts:
        return TokenAxis(reason="the stored prompts do not give every needle's place in tokens")
    return TokenAxis({k: sum(v) / len(v) for k, v in counts.items()},
                     {k: sum(v) / len(v) for k, v in sums.items()}, counted=counted)


def muc_tokens(muc: float | None, n_ref: int, axis: TokenAxis | None) -> float | None:
    """The MUC book size in prompt tokens: the mean prompt of its cases at N = ``n_ref``
    (the N the MUC is measured at). None: no MUC, or no token count."""
    if muc is None or not muc or axis is None:
        return None
    return axis.prompt_tokens(int(muc), n_ref)


@dataclass(frozen=True)
class Window:
    tokens: int
    source: str  # where it was read: "served" (preflight), "run" (recorded at run time), "catalog"


def run_window(model: str, meta: RunMeta | None) -> Window | None:
    """The model's window as this run knows it (the module's docstring), or None."""
    if meta is not None:
        served = meta.preflight.context_window if meta.preflight is not None else None
        if served:
            return Window(served, "served, found by the pre-run probe")
        if meta.context_window:
            return Window(meta.context_window, "recorded with the run")
    known = context_window(as_ref(model))
    return Window(known, "catalog") if known else None
