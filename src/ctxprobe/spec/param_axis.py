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


def axis_values(params: Mapping[str, Any]) -> tuple[str, list[Any]] | None:
    """(key, values) of a family's parameter given as a list, or None."""
    lists = [(k, v) for k, v in params.items() if isinstance(v, list)]
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
        found = axis_values(params)
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
