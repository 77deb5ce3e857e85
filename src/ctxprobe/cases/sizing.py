"""How many tokens the cases of each (family, length) hold, before any is sent.

For most families a length *is* a token count: cases are built to it. A family that sizes
its cases in other units (the phone book with ``unit: entries``) says so with
``sized_in_tokens(params) -> False`` (default True: :class:`ctxprobe.core.family.FamilyBase`)
and answers ``cell_tokens(length, params, seed=)`` by
building that length's largest case. The window check, an in-process model's context and
the plan's token and cost totals all read these sizes, so a length that cannot fit is a
one-line error before the first request, not a failure mid-run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from ctxprobe.core.family import Family
from ctxprobe.errors import CtxprobeError
from ctxprobe.spec import Spec
from ctxprobe.core.baseline import PARAM as BASELINE_PARAM
from ctxprobe.core.variant import pop_decoding, pop_layout
from ctxprobe.tokenizers.base import Tokenizer

Sizes = dict[tuple[str, int], int]  # (family label, length) -> tokens of its largest case


class KnowsTrainedContext(Protocol):
    """What the trained-window check reads of a provider (``ctxprobe.models.base.Provider``
    has it; the models sit a layer above cases, so the check names only this)."""

    @property
    def trained_context(self) -> int | None: ...


def needs_building(spec: Spec) -> bool:
    """Whether any family of the spec sizes its cases in units other than tokens."""
    from ctxprobe.core import registry
    from ctxprobe.core.family_lookup import validate_params

    for label, params in spec.families.items():
        params = dict(params)
        name = str(params.pop("family", label))
        params.pop(BASELINE_PARAM, None)  # a no-context twin's marker (ctxprobe.core.baseline)
        pop_layout(params)  # a prompt variant's layout (ctxprobe.core.variant)
        pop_decoding(params)
        entry = registry.find("families", name)
        if entry is None:
            continue
        if not entry.load().sized_in_tokens(validate_params(name, params)):
            return True
    return False


def case_sizes(spec: Spec, families: Mapping[str, tuple[Family, object]]) -> Sizes:
    """(label, length) → tokens, for every family and length of the spec."""
    out: Sizes = {}
    for label, (family, params) in families.items():
        in_tokens = family.sized_in_tokens(params)
        for length in spec.lengths_of(label):
            out[(label, length)] = length if in_tokens else int(family.cell_tokens(length, params, seed=spec.seed))
    return out


def plan_sizes(spec: Spec) -> Sizes | None:
    """Sizes for ``ctxprobe plan``: None when every length is already a token count (no
    tokenizer is loaded then); otherwise the families are built and asked."""
    if not needs_building(spec):
        return None
    from ctxprobe.cases.families import build_families
    from ctxprobe.haystack.context import BuildContext
    from ctxprobe.tokenizers import infer_tokenizer, resolve_tokenizer

    name = spec.tokenizer or infer_tokenizer(spec.model)
    ctx = BuildContext(tokenizer=resolve_tokenizer(name, model=spec.model), haystack=spec.haystack,
                       layout=spec.layout)
    return case_sizes(spec, build_families(spec, ctx))


def plan_mean_sizes(spec: Spec) -> Sizes | None:
    """Mean tokens of a case per (label, length), for the plan's token and price totals of
    families not sized in tokens: every case of the first prefix period (the phone book's
    first book: each N and shard) at every depth is built and averaged, so a grid whose
    questions differ in length (N = 10 vs 100 names) is not priced at its largest case.
    Other books differ from the first by a few tokens of names. None when every length is
    already a token count."""
    if not needs_building(spec):
        return None
    from ctxprobe.cases.builder import generation_seed
    from ctxprobe.cases.families import build_families
    from ctxprobe.core.case import Cell
    from ctxprobe.haystack.context import BuildContext
    from ctxprobe.tokenizers import infer_tokenizer, resolve_tokenizer

    name = spec.tokenizer or infer_tokenizer(spec.model)
    ctx = BuildContext(tokenizer=resolve_tokenizer(name, model=spec.model), haystack=spec.haystack,
                       layout=spec.layout)
    out: Sizes = {}
    for label, (family, params) in build_families(spec, ctx).items():
        for length in spec.lengths_of(label):
            if family.sized_in_tokens(params):
                out[(label, length)] = length
                continue
            counts = [family.generate(cell, rep, seed=generation_seed(spec.seed, cell, spec.share_prefix),
                                      params=params).token_count  # type: ignore[arg-type]
                      for cell in (Cell(label, length, d) for d in spec.depths)
                      for rep in range(min(spec.reps, family.prefix_period(params)))]
            out[(label, length)] = round(sum(counts) / len(counts))
    return out


def beyond_trained_warning(spec: Spec, provider: KnowsTrainedContext | None, tokenizer: Tokenizer, sizes: Sizes,
                           families: Mapping[str, tuple[Any, object]] | None = None) -> str | None:
    """A warning (said before anything is sent) when some cases pass the model's trained
    context: those lengths measure extrapolation, not the window the model was built for.
    The trained context is the provider's when it knows one, else the tokenizer's (a GGUF's
    or a config's); ``provider`` None (``ctxprobe plan``: nothing is resolved) reads the
    tokenizer's only."""
    trained = (provider.trained_context if provider is not None else None) or tokenizer.trained_context
    if not trained:
        return None

    def output(label: str) -> int:  # as in check_lengths: some families' lengths include the output
        family = (families or {}).get(label, (None, None))[0]  # None: not a known family (plan)
        return 0 if family is not None and family.length_includes_output else spec.decoding.max_tokens

    beyond = sorted({length for (label, length), tokens in sizes.items() if tokens + output(label) > trained})
    if not beyond:
        return None
    shown = ", ".join(f"{n:,}" for n in beyond)
    return (f"length(s) {shown} (+ {spec.decoding.max_tokens} output tokens) pass {spec.model}'s trained context of "
            f"{trained:,} tokens: results there measure the model beyond its training")


def plan_beyond_trained(spec: Spec, sizes: Sizes | None) -> str | None:
    """``ctxprobe plan``'s trained-window warning, from the tokenizer alone (no model is
    loaded, nothing is sent). Silent when the tokenizer cannot be loaded here or knows no
    trained context: the plan only counts; ``run`` checks the window for real."""
    from ctxprobe.core.family_lookup import family_class, family_names
    from ctxprobe.tokenizers import infer_tokenizer, resolve_tokenizer

    try:
        tokenizer = resolve_tokenizer(spec.tokenizer or infer_tokenizer(spec.model), model=spec.model)
        if not tokenizer.trained_context:
            return None
    except CtxprobeError:
        return None
    known = set(family_names())
    classes = {label: (family_class(name) if (name := str(params.get("family", label))) in known else None, None)
               for label, params in spec.families.items()}
    if sizes is None:
        sizes = {(label, length): length for label in spec.families for length in spec.lengths_of(label)}
    return beyond_trained_warning(spec, None, tokenizer, sizes, classes)
