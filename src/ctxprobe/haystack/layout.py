"""Arranging a family's prompt by the run's :class:`~ctxprobe.spec.PromptLayout`.

Every family with an instruction line (niah, multihop, vartrack, aggregation, documents)
builds its user message here, so one spec setting moves the line for all of them:

``before`` (default)  instruction · haystack · question   — byte-identical to the prompts
                                                            built before layouts existed
``after``             haystack · instruction · question
``both``              instruction · haystack · instruction · question
``none``              haystack · question

An instruction read after the text cannot say "a long text follows": its opening is
reworded to point back ("The long text is above."); the rest of the line is unchanged, so
the two placements ask the same thing. The depth-0 separator is applied by the packer
(:func:`ctxprobe.haystack.packer.pack`'s ``lead_tokens``).
"""

from __future__ import annotations

from ctxprobe.core import registry
from ctxprobe.spec import PromptLayout, describe_layout

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


def layout_families() -> frozenset[str]:
    """The families whose prompt has an instruction line the layout moves (their declaration's
    ``prompt_layout``; the phone book keeps the phone-book post's own prompt, RULER RULER's)."""
    return frozenset(e.name for e in registry.entries("families") if e.declaration().prompt_layout)


def stored_layout_line(spec: dict[str, object]) -> str | None:
    """The prompt layout of a stored run in words, or None when no family of it has an
    instruction line (runs from before layouts existed read as the default)."""
    families = spec.get("families") or {}
    names = {str((params or {}).get("family", label)) if isinstance(params, dict) else str(label)
             for label, params in (families.items() if isinstance(families, dict) else [])}
    if not names & layout_families():
        return None
    return describe_layout(spec.get("layout"))
