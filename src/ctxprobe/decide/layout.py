"""``decide --layout single|turns|tools``: a product limit for the message layout the
product sends (docs/layouts.md, docs/decide.md). Each run keeps only the family labels
whose cases were sent in that layout — a variant's own (``--variants
"one:layout=single, chat:layout=turns"``), else the run's — and a variant kept alone for
its family is named by its family (``niah~chat`` → ``niah``), so ``--use niah`` names the
same need in a run of one layout and in a run of several. A run with no family in the
layout is refused in one line."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ctxprobe.core.variant import LAYOUT_PARAM, split_label
from ctxprobe.decide.runs import RunFacts
from ctxprobe.errors import CtxprobeError

LAYOUTS = ("single", "turns", "tools")


def label_messages(spec: Mapping[str, Any], label: str) -> str:
    """The message layout a family label's cases were sent in: its variant's, else the
    run's (``single`` when the spec names none, as every run before layouts)."""
    families = spec.get("families") or {}
    params = families.get(label) if isinstance(families, dict) else None
    changes = params.get(LAYOUT_PARAM) if isinstance(params, dict) else None
    if isinstance(changes, dict) and "messages" in changes:
        return str(changes["messages"])
    layout = spec.get("layout") or {}
    return str(layout.get("messages", "single")) if isinstance(layout, dict) else "single"


def in_layout(run: RunFacts, messages: str) -> tuple[RunFacts, dict[str, str]]:
    """The run with only its families sent in ``messages`` (renamed as the module says),
    and which label each kept name stands for."""
    if messages not in LAYOUTS:
        raise CtxprobeError(f"--layout {messages}: use one of {', '.join(LAYOUTS)}")
    spec = run.run.spec
    kept = [label for label in run.families if label_messages(spec, label) == messages]
    if not kept:
        found = sorted({label_messages(spec, label) for label in run.families})
        raise CtxprobeError(f"--layout {messages}: run {run.run.run_id} sent no family in the {messages} layout "
                            f"(its layouts: {', '.join(found) or 'none'}); measure it with --layout {messages} or "
                            f"--variants \"NAME:layout={messages}\"")
    bases = Counter(split_label(label)[0] for label in kept)
    names = {label: split_label(label)[0] if bases[split_label(label)[0]] == 1 else label for label in kept}
    families = {names[label]: replace(run.families[label], family=names[label]) for label in kept}
    return replace(run, families=families), {name: label for label, name in names.items()}
