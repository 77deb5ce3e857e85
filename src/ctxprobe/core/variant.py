"""Prompt-variant labels, shared by the spec, the builder and the report.

``--variants`` runs every family of a sweep once per variant under the label
``FAMILY~NAME``: the family's own parameters plus the variant's (``repeat_instructions``,
``examples``, ``cot``, ``book_in``, ``system_role`` for the phone book…), and, under the key
:data:`LAYOUT_PARAM`, the prompt layout the variant changes (``{"instruction": "after"}``,
popped before the family validates its parameters). A variant changes how a case is asked,
never what it holds: families seed their content from their *name*, not the label, so every
variant of a (length, depth, repetition) holds the same filler, keys, books and needles,
and the variants are compared case by case (:mod:`ctxprobe.analysis.variants`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SEP = "~"
#: The key under which a variant's label carries its prompt-layout changes.
LAYOUT_PARAM = "variant_layout"


def variant_label(family: str, name: str) -> str:
    """``niah``, ``end`` → ``niah~end``."""
    return f"{family}{SEP}{name}"


def split_label(label: str) -> tuple[str, str | None]:
    """``niah~end`` → (``niah``, ``end``); a label without a variant → (label, None)."""
    base, sep, name = label.partition(SEP)
    return (base, name) if sep else (label, None)


def pop_layout(params: dict[str, Any]) -> Mapping[str, Any] | None:
    """Remove and return a variant's layout changes from a label's parameters (or None)."""
    value = params.pop(LAYOUT_PARAM, None)
    return value if isinstance(value, Mapping) else None
