"""A spec's families, made and their parameters validated: what every way of building a
sweep's cases starts from (the sweep, the build workers, sizing)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ctxprobe.core.baseline import PARAM as BASELINE_PARAM
from ctxprobe.core.family import Family
from ctxprobe.core.variant import pop_decoding, pop_layout
from ctxprobe.spec import Spec
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
        ctx = dataclasses.replace(ctx, layout=ctx.layout.model_copy(update=dict(layout)))
    pop_decoding(params)  # how the variant's cases are sampled: the runner's, not the family's
    return make_family(name, ctx), validate_params(name, params)


def check_families(spec: Spec) -> None:
    """Every label's family exists and takes its parameters, else the one-line error ``run``
    gives (a mistyped family, an unknown parameter); nothing is made, no tokenizer needed:
    what ``plan`` checks before it prints a grid no run could send."""
    for label, raw in spec.families.items():
        params = dict(raw)
        name = str(params.pop("family", label))
        params.pop(BASELINE_PARAM, None)
        pop_layout(params)
        pop_decoding(params)
        validate_params(name, params)


def build_families(spec: Spec, ctx: BuildContext) -> dict[str, tuple[Family, object]]:
    """Label → (family, validated params) for every label of the spec (one sweep can hold
    one family several times: RULER's niah_single_1/2/3 are all niah)."""
    return {label: make_labelled(label, params, ctx) for label, params in spec.families.items()}
