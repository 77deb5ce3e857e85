"""Arranging a family's prompt by the run's :class:`~ctxprobe.spec.PromptLayout`.

Every family with an instruction line (niah, multihop, vartrack, aggregation, documents)
builds its user message here, so one spec setting moves the line for all of them:

``before`` (default)  instruction · haystack · question   — byte-identical to the prompts
                                                            built before layouts existed
``after``             haystack · instruction · question
``both``              instruction · haystack · instruction · question
``none``              haystack · question

``layout.messages`` says how the context is sent (:func:`conversation`, docs/layouts.md):
``single`` (default) the one user message above; ``turns`` the haystack split at sentence
boundaries into prior user/assistant turns of about ``turn_tokens`` tokens, the instruction
in the first user turn and the question as the last; ``tools`` each chunk the result of an
earlier call of the declared read-a-file tool (:mod:`ctxprobe.core.tools`), the question
last. The haystack is the same text in every layout: only where it is cut differs.

An instruction read after the text cannot say "a long text follows": its opening is
reworded to point back ("The long text is above."); the rest of the line is unchanged, so
the two placements ask the same thing. The depth-0 separator is applied by the packer
(:func:`ctxprobe.haystack.packer.pack`'s ``lead_tokens``).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from typing import Any

from ctxprobe.core import registry
from ctxprobe.core.tools import tool_call
from ctxprobe.spec import PromptLayout, describe_layout
from ctxprobe.tokenizers.base import Message

DEFAULT_LAYOUT = PromptLayout()

#: Openings that point forward, and how they read once the instruction follows the text.
_AFTER_OPENINGS = {
    "A long text follows.": "The long text is above.",
    "Below is a list of made-up words.": "Above is a list of made-up words.",
}


def after_wording(instruction: str) -> str:
    """The instruction as it reads after the haystack."""
    for before, after in _AFTER_OPENINGS.items():
        if instruction.startswith(before):
            return after + instruction[len(before):]
    return instruction


def arrange(instruction: str, haystack: str, question: str, layout: PromptLayout = DEFAULT_LAYOUT) -> str:
    """The user message: instruction, haystack and question joined by blank lines."""
    parts = [instruction] if layout.instruction in ("before", "both") else []
    parts.append(haystack)
    if layout.instruction in ("after", "both"):
        parts.append(after_wording(instruction))
    parts.append(question)
    return "\n\n".join(parts)


#: Characters a turn's token budget is estimated at (the cut is whole sentences, "about"
#: ``turn_tokens``; the conversation's total is counted exactly by the packer).
CHARS_PER_TOKEN = 4
#: Where a chunk may end: after a sentence's closing punctuation, or at a blank line.
_SPACE = re.compile(r"\s+")
_BOUNDARY = re.compile(r"(?<=[.!?\"')\]])[ \t]+|\n\s*")


#: While :func:`pinned_turns` is active: the turn count the first full render chose (None
#: until then), and whether the next render records it.
_PIN: ContextVar[dict[str, Any] | None] = ContextVar("ctxprobe_pinned_turns", default=None)


@contextlib.contextmanager
def pinned_turns() -> Iterator[dict[str, Any]]:
    """Within it, the number of turns a conversation is cut into is the one of the first
    render made with ``state["record"]`` set (the packer's first full prompt), kept for every
    later render: the packer's budget corrections then change the turns' text, never how
    many turns wrap it (each wrapping costs tokens: a turn more or less would jump the
    count by that much, past the packer's tolerance)."""
    state: dict[str, Any] = {"n": None, "record": False}
    token = _PIN.set(state)
    try:
        yield state
    finally:
        _PIN.reset(token)


def split_turns(haystack: str, turn_tokens: int, n: int | None = None) -> list[str]:
    """``haystack`` cut at sentence boundaries (or blank lines) into ``n`` chunks of about
    equal size — by default as many as make chunks of about ``turn_tokens`` tokens
    (estimated from characters) — each cut at the boundary nearest its share; the
    whitespace at a cut is dropped, nothing else."""
    want = max(1, turn_tokens * CHARS_PER_TOKEN)
    if n is None:
        state = _PIN.get()
        n = max(1, round(len(haystack) / want))
        if state is not None:
            if state["n"] is not None:
                n = state["n"]
            elif state["record"]:
                state["n"] = n
    cuts = [(m.start(), m.end()) for m in _BOUNDARY.finditer(haystack)]
    if len(cuts) < n - 1:  # a list of words (aggregation), not sentences: any space is a boundary
        cuts = [(m.start(), m.end()) for m in _SPACE.finditer(haystack)]
    chunks: list[str] = []
    start, j = 0, 0
    for i in range(1, n):
        aim = len(haystack) * i / n
        while j < len(cuts) and cuts[j][0] < start:
            j += 1
        best = None
        while j < len(cuts) and cuts[j][0] <= aim:
            best = j
            j += 1
        if j < len(cuts) and (best is None or cuts[j][0] - aim < aim - cuts[best][0]):
            best = j
        if best is None or cuts[best][0] <= start:
            continue
        chunks.append(haystack[start:cuts[best][0]])
        start = cuts[best][1]
        j = best + 1
    chunks.append(haystack[start:])
    return [c for c in chunks if c.strip()] or [haystack]


def _evidence_chunk(chunks: Sequence[str], evidence: Sequence[str]) -> int | None:
    for text in evidence:
        for i, chunk in enumerate(chunks):
            if text and text in chunk:
                return i
    return None


def conversation(instruction: str, haystack: str, question: str, layout: PromptLayout = DEFAULT_LAYOUT,
                 evidence: Sequence[str] = ()) -> list[Message]:
    """The messages of a case in the run's layout (module docstring). ``evidence``: the
    text(s) the answer rests on, the first found choosing the role of its turn (``turns``:
    the turns alternate so that one takes ``layout.role``)."""
    if layout.messages == "single":
        return [{"role": "user", "content": arrange(instruction, haystack, question, layout)}]
    head = [instruction] if layout.instruction in ("before", "both") else []
    tail = [after_wording(instruction)] if layout.instruction in ("after", "both") else []
    chunks = split_turns(haystack, layout.turn_tokens)
    out: list[Message] = []
    if layout.messages == "tools":
        if head:
            out.append({"role": "user", "content": "\n\n".join(head)})
        for i, chunk in enumerate(chunks):
            call = tool_call(i)
            out.append({"role": "assistant", "content": None, "tool_calls": [call]})
            out.append({"role": "tool", "tool_call_id": call["id"], "content": chunk})
        out.append({"role": "user", "content": "\n\n".join([*tail, question])})
        return out
    at = _evidence_chunk(chunks, evidence)
    anchor, role = (len(chunks) - 1, "assistant") if at is None else (at, layout.role)
    other = "assistant" if role == "user" else "user"
    roles = [role if (i - anchor) % 2 == 0 else other for i in range(len(chunks))]
    if roles[0] == "user":
        out.append({"role": "user", "content": "\n\n".join([*head, chunks[0]])})
    else:
        if head:
            out.append({"role": "user", "content": "\n\n".join(head)})
        out.append({"role": "assistant", "content": chunks[0]})
    out += [{"role": r, "content": c} for r, c in zip(roles[1:], chunks[1:])]
    if roles[-1] == "user":  # the question closes the last user turn (no two user turns in a row)
        out[-1] = {"role": "user", "content": "\n\n".join([str(out[-1]["content"]), *tail, question])}
    else:
        out.append({"role": "user", "content": "\n\n".join([*tail, question])})
    return out


def per_turn_tokens(tokenizer: Any, render: Any, layout: PromptLayout) -> int:
    """Tokens one more turn (or tool call and result) costs beyond its text: a haystack of two
    turns' worth counted against one (0 in the ``single`` layout)."""
    if layout.messages == "single":
        return 0
    chunk = " ".join(["Note."] * (layout.turn_tokens * CHARS_PER_TOKEN // 6 + 1))
    one = tokenizer.count_chat(render(chunk))
    two = tokenizer.count_chat(render(chunk + " " + chunk))
    return max(0, two - one - int(tokenizer.count(" " + chunk)))


def turns_back(messages: Sequence[dict[str, Any]], text: str) -> int | None:
    """How many messages before the last one the first message holding ``text`` sits (0: in
    the last message, as in the ``single`` layout); None when no message holds it."""
    for i, m in enumerate(messages):
        content = m.get("content")
        if isinstance(content, str) and text and text in content:
            return len(messages) - 1 - i
    return None


def conversation_text(messages: Sequence[dict[str, Any]]) -> str:
    """Every message's text content joined (what a family checks for stray or doubled values)."""
    return "\n\n".join(str(m.get("content") or "") for m in messages)


def layout_families() -> frozenset[str]:
    """The families whose prompt has an instruction line the layout moves (their declaration's
    ``prompt_layout``; the phone book keeps the phone-book post's own prompt, RULER RULER's)."""
    return frozenset(e.name for e in registry.entries("families") if e.declaration().prompt_layout)


def stored_layout_line(spec: dict[str, object]) -> str | None:
    """The prompt layout of a stored run in words, or None when no family of it has an
    instruction line (runs from before layouts existed read as the default); prompt
    variants that send their context in another message layout are named after it
    (``variants' messages: chat: turns, agent: tools``)."""
    from ctxprobe.core.variant import LAYOUT_PARAM, split_label

    families = spec.get("families") or {}
    names = {str((params or {}).get("family", label)) if isinstance(params, dict) else str(label)
             for label, params in (families.items() if isinstance(families, dict) else [])}
    if not names & layout_families():
        return None
    line = describe_layout(spec.get("layout"))
    own: dict[str, str] = {}
    for label, params in (families.items() if isinstance(families, dict) else []):
        changes = params.get(LAYOUT_PARAM) if isinstance(params, dict) else None
        if isinstance(changes, dict) and "messages" in changes:
            own.setdefault(split_label(str(label))[1] or str(label), str(changes["messages"]))
    if own:
        line += "; variants' messages: " + ", ".join(f"{name}: {messages}" for name, messages in own.items())
    return line
