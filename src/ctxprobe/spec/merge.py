"""One spec from its sources, as ``ctxprobe run`` and ``plan`` make it: a YAML file, the
top-level keys given one by one (flags), a preset's families, a family list and
``FAMILY.KEY=VALUE`` parameters. Later sources win: flags over the file, ``params`` over
the families they set."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ctxprobe.errors import CtxprobeError
from ctxprobe.spec.fields import PromptLayout
from ctxprobe.spec.param_axis import expand_param_axes, parse_param_value
from ctxprobe.spec.schema import DEFAULT_FAMILY, Spec, load_spec, make_spec, spec_keys

#: Keys of the nested settings a flag may set one by one.
DECODING_KEYS = ("max_tokens", "temperature", "top_p")
LAYOUT_KEYS = ("instruction", "separator", "messages", "turn_tokens", "evidence_role")


def find_preset(name: str) -> Any:
    """A preset from the registry (a one-line error naming the known ones)."""
    from ctxprobe.core import registry

    found = registry.find("presets", name)
    if found is None:
        raise CtxprobeError(f"unknown preset '{name}': available: {', '.join(registry.names('presets'))}")
    return found.load()


def parse_params(items: Iterable[str]) -> dict[str, dict[str, Any]]:
    """``niah.distractors=3`` → ``{"niah": {"distractors": 3}}`` (values parsed as YAML scalars;
    ``niah.distractors=0,1,3`` → a list: a grid axis, :mod:`ctxprobe.spec.param_axis`)."""
    out: dict[str, dict[str, Any]] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        family, dot, name = key.partition(".")
        if not sep or not dot or not family or not name:
            raise CtxprobeError(f"bad --param {item!r}: use FAMILY.KEY=VALUE, e.g. niah.distractors=3")
        out.setdefault(family.strip(), {})[name.strip()] = parse_param_value(raw)
    return out


def merge_spec(path: str | Path | None = None, values: Mapping[str, Any] | None = None, *,
               family: str | None = None, preset: str | None = None,
               preset_options: Mapping[str, str | None] | None = None, params: Iterable[str] = (),
               distractors: int | None = None, variants: str | None = None) -> Spec:
    """The spec of the file at ``path`` (if any) with ``values`` over it (the spec's
    top-level keys, :func:`spec_keys`, and the decoding and layout keys
    :data:`DECODING_KEYS`, :data:`LAYOUT_KEYS`; None: not given), the families of
    ``preset`` (with its ``preset_options``) or the comma list ``family``, then the
    ``FAMILY.KEY=VALUE`` ``params`` and niah's ``distractors``."""
    given = {k: v for k, v in (values or {}).items() if v is not None}
    over = {k: given[k] for k in spec_keys() if k in given}
    decoding = {k: given[k] for k in DECODING_KEYS if k in given}
    layout = {k: given[k] for k in LAYOUT_KEYS if k in given}
    base: dict[str, Any] = load_spec(path).model_dump() if path else {}
    default = PromptLayout().model_dump()
    found = find_preset(preset) if preset else None
    if found is not None and found.keeps_layout and (layout or base.get("layout", default) != default):
        raise CtxprobeError(f"the {found.name} preset keeps {found.title}'s own prompt layout: drop --instruction/--separator/--layout "
                            "(and the spec's layout)")
    families: dict[str, dict[str, Any]] = dict(base.get("families") or {})
    if found is not None:
        families = found.families(dict(preset_options or {}))
    if family:
        names = [f.strip() for f in family.split(",") if f.strip()]
        families = {n: families.get(n, {}) for n in names}
    by_family = parse_params(params)
    if distractors is not None:
        by_family.setdefault(DEFAULT_FAMILY, {})["distractors"] = distractors
    for name, settings in by_family.items():
        if families and name not in families:
            raise CtxprobeError(f"--param {name}.…: family '{name}' is not in this sweep (families: {', '.join(families)})")
        families.setdefault(name, {}).update(settings)
    families = expand_param_axes(families)
    if variants:  # prompt variants as a grid axis: FAMILY~NAME labels on the same seeded content
        from ctxprobe.spec.variants import expand_variants, parse_variants

        families = expand_variants(families or {DEFAULT_FAMILY: {}}, parse_variants(variants))
    if families:
        over["families"] = families
    if path:
        data = {**base, **over}
        data["decoding"] = {**data["decoding"], **decoding}
        data["layout"] = {**data.get("layout", {}), **layout}
        return make_spec(data)
    if decoding:
        over["decoding"] = decoding
    if layout:
        over["layout"] = layout
    return make_spec(over)
