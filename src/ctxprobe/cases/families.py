"""A spec's families, made and their parameters validated: what every way of building a
sweep's cases starts from (the sweep, the build workers, sizing)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ctxprobe.core.baseline import PARAM as BASELINE_PARAM
from ctxprobe.errors import CtxprobeError
from ctxprobe.core.family import Family
from ctxprobe.core.variant import pop_decoding, pop_layout
from ctxprobe.spec import Spec, changed_layout
from ctxprobe.haystack.context import BuildContext
from ctxprobe.core.family_lookup import make_family, validate_params


def make_labelled(label: str, params: Mapping[str, Any], ctx: BuildContext) -> tuple[Family, object]:
    """One label's family and validated parameters. A label is the family's name, or any
    name whose parameters say ``family: NAME``; a no-context twin (``LABEL@no-context``,
    whose parameters carry the baseline marker) is made with ``ctx.no_context`` set."""
    params = dict(params)
    name = str(params.pop("family", label))
    if params.pop(BASELINE_PARAM, None) is not None:
        ctx = dataclasses.replace(ctx, no_context=True)
    if (layout := pop_layout(params)) is not None:  # a prompt variant's layout (ctxprobe.core.variant)
        ctx = dataclasses.replace(ctx, layout=changed_layout(ctx.layout, dict(layout), label))
    pop_decoding(params)  # how the variant's cases are sampled: the runner's, not the family's
    if ctx.layout.messages != "single":
        check_messages_layout(label, name, ctx.layout.messages, ctx.tokenizer)
    return make_family(name, ctx), validate_params(name, params)


def check_messages_layout(label: str, name: str, messages: str, tokenizer: Any = None) -> None:
    """Refuse (one line, before anything is built or sent) a ``turns``/``tools`` layout for a
    family that builds no conversation, or ``tools`` with a tokenizer that cannot count tool
    messages (:func:`ctxprobe.core.tools.check_renders_tools`)."""
    from ctxprobe.core import registry

    found = registry.find("families", name)
    if found is not None and not found.declaration().prompt_layout:
        raise CtxprobeError(f"{label}: --layout {messages} is built for niah, multihop, vartrack, aggregation and "
                            f"documents only; {name} sends its prompt as it is (use --layout single for it)")
    if messages == "tools" and tokenizer is not None:
        from ctxprobe.core.tools import check_renders_tools

        check_renders_tools(tokenizer)


def check_families(spec: Spec) -> None:
    """Every label's family exists and takes its parameters, else the one-line error ``run``
    gives (a mistyped family, an unknown parameter); nothing is made, no tokenizer needed:
    what ``plan`` checks before it prints a grid no run could send."""
    for label, raw in spec.families.items():
        params = dict(raw)
        name = str(params.pop("family", label))
        params.pop(BASELINE_PARAM, None)
        layout = spec.layout
        if (changes := pop_layout(params)) is not None:
            layout = changed_layout(spec.layout, dict(changes), label)
        if layout.messages != "single":
            check_messages_layout(label, name, layout.messages)
        pop_decoding(params)
        validate_params(name, params)


def build_families(spec: Spec, ctx: BuildContext) -> dict[str, tuple[Family, object]]:
    """Label → (family, validated params) for every label of the spec (one sweep can hold
    one family several times: RULER's niah_single_1/2/3 are all niah)."""
    return {label: make_labelled(label, params, ctx) for label, params in spec.families.items()}
