"""Where the phone book's needles sit in the prompt, in tokens, and the model's window.

A needle's position is stored as a share of the book's entries (``pos``). In tokens, the
entry of a needle starts ``token_count × c / C`` tokens into the prompt, where ``c`` is
the character offset of its book line (``"NAME : (xxx) xxx-xxxx"`` at a line's start) in
the prompt's messages joined by newlines and ``C`` their length: the book's lines all
have the same shape, so characters and tokens grow in step (the chat template's few
role tokens are the error). ``token_count`` is the prompt's tokens as the run's tokenizer
counted them when the case was built (what the grid's lengths and ``plan`` count).

A book split into shards (``shards > 1``) has no single prompt: no token position.

The window: what the run recorded (the server's window found by the pre-run probe, else
the provider's window at run time: a local server's served context, a sim's ``ctx=``, a
hosted model's catalog window), else the catalog's window for the model (runs recorded
before the window was). None when nothing knows it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ctxprobe.core.case_meta import phonebook_meta
from ctxprobe.core.catalog import context_window
from ctxprobe.core.runmeta import RunMeta
from ctxprobe.core.variant import split_label

FAMILY = "phonebook"
#: What a light record carries in place of its messages: each asked name's token offset.
OFFSETS = "needle_tokens"


def needle_token_offsets(messages: list[Mapping[str, Any]], names: list[str], token_count: int | None
                         ) -> list[float] | None:
    """Token offset of each asked name's book line in the prompt (see the module's
    docstring); None when the prompt has no count or a name has no book line in it."""
    text = "\n".join(str(m.get("content") or "") for m in messages)
    if not text or not token_count:
        return None
    lined = "\n" + text  # a book line starts a line: the first one too
    out = []
    for name in names:
        i = lined.find(f"\n{name} : (")
        if i < 0:
            return None
        out.append(token_count * i / len(text))
    return out


def without_prompts(records: Iterable[Mapping[str, Any]]) -> Iterator[dict[str, Any]]:
    """Case records without their prompts (a book is large; the analysis needs none of
    it), each phone-book record carrying its needles' token offsets under ``OFFSETS``."""
    for rec in records:
        light = {k: v for k, v in rec.items() if k != "messages"}
        if split_label(str(rec.get("family", "")))[0] == FAMILY and "messages" in rec:
            meta = phonebook_meta(rec.get("meta") or {})
            if meta.get("shards", 1) == 1 and meta.get("names"):
                light[OFFSETS] = needle_token_offsets(rec["messages"], list(meta["names"]), rec.get("token_count"))
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

    def prompt_tokens(self, length: int, needles: int) -> float | None:
        return self.prompt.get((length, needles))


def token_axis(records: Iterable[Mapping[str, Any]]) -> TokenAxis:
    """:class:`TokenAxis` of a run's phone-book records (light ones from
    :func:`without_prompts`; their ``family`` as :func:`~ctxprobe.analysis.phonebook.needle_results`
    reads it). Every stored case counts, answered or not: a position is the prompt's."""
    counts: dict[tuple[int, int], list[int]] = defaultdict(list)
    sums: dict[tuple[int, int, int], list[float]] = defaultdict(list)
    sharded = missing = 0
    for rec in records:
        if rec.get("family") != FAMILY:
            continue
        meta = phonebook_meta(rec.get("meta") or {})
        if meta.get("shards", 1) > 1:
            sharded += 1
            continue
        offsets = rec.get(OFFSETS)
        if not offsets or not rec.get("token_count"):
            missing += 1
            continue
        key = (int(rec["length"]), int(meta["needles"]))
        counts[key].append(int(rec["token_count"]))
        for b, offset in enumerate(offsets):
            sums[(key[0], key[1], b)].append(float(offset))
    if sharded:
        return TokenAxis(reason="the books are split into shards, one request each: a needle has no single "
                                "prompt to be placed in")
    if missing or not counts:
        return TokenAxis(reason="the stored prompts do not give every needle's place in tokens")
    return TokenAxis({k: sum(v) / len(v) for k, v in counts.items()},
                     {k: sum(v) / len(v) for k, v in sums.items()})


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
    known = context_window(model)
    return Window(known, "catalog") if known else None
