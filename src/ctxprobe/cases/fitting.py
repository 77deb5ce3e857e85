"""Which lengths each family can be built at, found before anything is sent.

A family whose fixed prompt parts need more tokens than a length holds (``longout``'s
instruction and room for its long answers need about 2.4K) cannot be built there. Instead
of stopping the whole sweep, the family runs at the lengths that hold it: the spec records
the tokens it needs (:attr:`ctxprobe.spec.Spec.too_short`), every part of the sweep asks
:meth:`ctxprobe.spec.Spec.lengths_of`, ``plan`` and ``run`` say it before sending, and the
report marks the lengths left out "too short for `FAMILY` (needs ≥ N)".
"""

from __future__ import annotations

from collections.abc import Mapping

from ctxprobe.core.case import Cell
from ctxprobe.core.family import Family
from ctxprobe.errors import CtxprobeError
from ctxprobe.haystack.packer import LengthTooShort
from ctxprobe.spec import Spec
from ctxprobe.spec.units import fmt_tokens


def fit_lengths(spec: Spec, families: Mapping[str, tuple[Family, object]]) -> Spec:
    """``spec`` with :attr:`~ctxprobe.spec.Spec.too_short` set for each family that cannot be
    built at its shortest lengths: each length is tried from the shortest up until one builds
    (the first repetitions the family names, as ``run``'s length check builds them). When no
    family fits any length, the shortest family's one-line error is raised as before."""
    short: dict[str, int] = {}
    first: LengthTooShort | None = None
    for label, (family, params) in families.items():
        for length in sorted(spec.lengths):
            try:
                for rep in family.check_reps(params):
                    family.generate(Cell(label, length, spec.depths[0]), rep, seed=spec.seed,
                                    params=params)  # type: ignore[arg-type]  # params typed object
            except LengthTooShort as err:
                first = first or err
                short[label] = max(short.get(label, 0), err.needed, length + 1)
                continue
            break
    if first is not None and all(not spec.model_copy(update={"too_short": short}).lengths_of(label)
                                 for label in families):
        raise first  # nothing can be sent: the error of the first length that failed, as it was
    return spec.model_copy(update={"too_short": short}) if short else spec


def too_short_lines(spec: Spec) -> list[str]:
    """One line per family left out at some lengths, as ``plan`` and ``run`` say it."""
    return [too_short_line(label, need, spec.lengths) for label, need in spec.too_short.items()]


def too_short_line(label: str, need: int, lengths: list[int]) -> str:
    """"too short for `longout` (needs ≥ 2.3K): 1K, 2K not sent; it runs at 4K only"."""
    left = [n for n in lengths if n < need]
    runs = [n for n in lengths if n >= need]
    at = (f"it runs at {', '.join(fmt_tokens(n) for n in runs)} only" if runs
          else f"it runs at no length of this sweep (add one of at least {need:,} tokens)")
    return f"too short for `{label}` (needs ≥ {fmt_tokens(need)}): {', '.join(fmt_tokens(n) for n in left)} not sent; {at}"


def fitted_spec(spec: Spec) -> Spec:
    """:func:`fit_lengths` with the families built by the spec's own tokenizer (what ``plan``
    asks); the spec as it is when that tokenizer cannot be loaded here (``run`` finds out)."""
    from ctxprobe.cases.families import build_families
    from ctxprobe.haystack.context import BuildContext
    from ctxprobe.tokenizers import infer_tokenizer, resolve_tokenizer

    try:
        tokenizer = resolve_tokenizer(spec.tokenizer or infer_tokenizer(spec.model), model=spec.model)
    except CtxprobeError:
        return spec
    ctx = BuildContext(tokenizer=tokenizer, haystack=spec.haystack, layout=spec.layout)
    return fit_lengths(spec, build_families(spec, ctx))
