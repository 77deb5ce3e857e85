"""How many tokens the cases of each (family, length) hold, before any is sent.

For most families a length *is* a token count: cases are built to it. A family that sizes
its cases in other units (the phone book with ``unit: entries``) says so with
``sized_in_tokens(params) -> False`` and answers ``cell_tokens(length, params, seed=)`` by
building that length's largest case. The window check, an in-process model's context and
the plan's token and cost totals all read these sizes, so a length that cannot fit is a
one-line error before the first request, not a failure mid-run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxprobe.spec import Spec

Sizes = dict[tuple[str, int], int]  # (family label, length) -> tokens of its largest case


def needs_building(spec: Spec) -> bool:
    """Whether any family of the spec sizes its cases in units other than tokens."""
    from ctxprobe.core import registry
    from ctxprobe.tasks import validate_params

    for label, params in spec.families.items():
        params = dict(params)
        name = str(params.pop("family", label))
        entry = registry.find("families", name)
        if entry is None:
            continue
        cls = entry.load()
        sized = getattr(cls, "sized_in_tokens", None)
        if sized is not None and not sized(validate_params(name, params)):
            return True
    return False


def case_sizes(spec: Spec, families: Mapping[str, tuple[Any, object]]) -> Sizes:
    """(label, length) → tokens, for every family and length of the spec."""
    out: Sizes = {}
    for label, (family, params) in families.items():
        sized = getattr(family, "sized_in_tokens", None)
        for length in spec.lengths:
            if sized is not None and not sized(params):
                out[(label, length)] = int(family.cell_tokens(length, params, seed=spec.seed))
            else:
                out[(label, length)] = length
    return out


def plan_sizes(spec: Spec) -> Sizes | None:
    """Sizes for ``ctxprobe plan``: None when every length is already a token count (no
    tokenizer is loaded then); otherwise the families are built and asked."""
    if not needs_building(spec):
        return None
    from ctxprobe.cases.families import build_families
    from ctxprobe.tasks import BuildContext
    from ctxprobe.tokenizers import infer_tokenizer, resolve_tokenizer

    name = spec.tokenizer or infer_tokenizer(spec.model)
    ctx = BuildContext(tokenizer=resolve_tokenizer(name, model=spec.model), haystack=spec.haystack,
                       layout=spec.layout)
    return case_sizes(spec, build_families(spec, ctx))
