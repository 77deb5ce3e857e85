"""A spec's families, made and their parameters validated: what every way of building a
sweep's cases starts from (the sweep, the build workers, sizing)."""

from __future__ import annotations

from ctxprobe.spec import Spec
from ctxprobe.tasks import BuildContext, make_family, validate_params
from ctxprobe.core.family import Family


def build_families(spec: Spec, ctx: BuildContext) -> dict[str, tuple[Family, object]]:
    """Label → (family, validated params). A label is the family's name, or any name whose
    parameters say ``family: NAME`` — so one sweep can hold one family several times (RULER's
    niah_single_1/2/3 are all niah)."""
    out: dict[str, tuple[Family, object]] = {}
    for label, params in spec.families.items():
        params = dict(params)
        name = str(params.pop("family", label))
        out[label] = (make_family(name, ctx), validate_params(name, params))
    return out
