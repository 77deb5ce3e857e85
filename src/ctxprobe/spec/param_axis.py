"""A family parameter given several values (``--param niah.distractors=0,1,3,10,30``) is a
grid axis: the family runs once per value, under the labels ``niah~distractors0`` …
``niah~distractors30``, the first value the reference the others are compared with.

The labels are prompt variants (:mod:`ctxprobe.spec.variants`) whose setting is the
parameter: families seed their content from their *name*, not the label, so the cases of
one (length, depth, repetition) share filler and keys across the values wherever the
parameter leaves them (``niah`` draws its target needle before its distractors: the
same asked key and value, at the same depth, with 0, 1, 3… look-alikes around it), and the
report pairs them case by case. One family takes one such axis, not with ``--variants``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxprobe.errors import CtxprobeError

__all__ = ["axis_values", "expand_param_axes", "parse_param_value"]


def parse_param_value(raw: str) -> Any:
    """A ``--param`` value: a YAML scalar, or, given as ``a,b,c``, the list of them."""
    import yaml

    parts = [p.strip() for p in raw.split(",")]
    if len(parts) > 1 and all(parts) and not raw.strip().startswith(("[", "{", "'", '"')):
        return [_scalar(p, yaml) for p in parts]
    return _scalar(raw, yaml)


def _scalar(raw: str, yaml: Any) -> Any:
    try:
        return yaml.safe_load(raw)
    except yaml.YAMLError:
        return raw


def _takes_list(label: str, params: Mapping[str, Any], key: str) -> bool:
    """Whether the family's own parameters take ``key`` as a list (``updates.updates=3,10``
    is the updates family's own axis, read inside one run of it): then it stays as given."""
    from pydantic import BaseModel, ValidationError

    from ctxprobe.core import registry
    from ctxprobe.core.variant import split_label

    name = str(params.get("family") or split_label(label)[0])
    if registry.find("families", name) is None:
        return False
    try:
        model: type[BaseModel] = registry.load("families", name, what="family").params_model
    except Exception:  # a plugin that cannot load: its run says why; here, no opinion
        return False
    try:
        model.model_validate({key: params[key]})
    except ValidationError as err:
        return not any(tuple(e["loc"])[:1] == (key,) for e in err.errors())
    return True


def axis_values(params: Mapping[str, Any], label: str | None = None) -> tuple[str, list[Any]] | None:
    """(key, values) of a family's parameter given as a list that the family does not take
    as a list itself (``label``: the family's label, to ask it), or None."""
    lists = [(k, v) for k, v in params.items()
             if isinstance(v, list) and not (label is not None and _takes_list(label, params, k))]
    if len(lists) > 1:
        raise CtxprobeError(f"--param: one parameter per family may take several values "
                            f"(got {', '.join(k for k, _ in lists)}): run one axis at a time")
    return lists[0] if lists else None


def expand_param_axes(families: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Every family with a list-valued parameter becomes one label per value
    (``FAMILY~KEYVALUE``), the others stay as they are."""
    from ctxprobe.spec.variants import expand_variants

    out: dict[str, dict[str, Any]] = {}
    for label, params in families.items():
        found = axis_values(params, label)
        if found is None:
            out[label] = dict(params)
            continue
        key, values = found
        if len(values) < 2 or len(set(map(str, values))) != len(values):
            raise CtxprobeError(f"--param {label}.{key}: give two different values or more, e.g. "
                                f"{label}.{key}=0,1,3")
        names = [f"{key}{str(v).replace('.', 'p').replace('-', 'm')}" for v in values]
        base = {k: v for k, v in params.items() if k != key}
        out.update(expand_variants({label: base}, [(n, {key: v}) for n, v in zip(names, values)]))
    return out
