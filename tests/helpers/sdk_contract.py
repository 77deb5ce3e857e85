"""A strict check of a JSON value against an SDK's own request type (a ``TypedDict`` of
``openai`` or ``anthropic``, or a pydantic model of ``google-genai``), so a request body
ctxprobe builds is judged by the provider's types, not by our reading of its docs.

:func:`check_typed_dict` walks the ``TypedDict``'s annotations: a key the type does not
declare is an error (the SDKs' own ``TypedDict`` s are open to anything at runtime), as
is a missing required key, a value of the wrong type, a ``Literal`` value not listed, and
the same inside every nested ``TypedDict``, list and union. :func:`check_genai` validates
with google-genai's pydantic models, which forbid unknown fields themselves.
"""

from __future__ import annotations

import collections.abc
import types
import typing
from typing import Any

import typing_extensions

_WRAPPERS = {typing_extensions.Required, typing_extensions.NotRequired, typing_extensions.ReadOnly,
             getattr(typing, "Required", None), getattr(typing, "NotRequired", None),
             getattr(typing, "ReadOnly", None)} - {None}
_SEQUENCES = (collections.abc.Iterable, collections.abc.Sequence, list, tuple, collections.abc.Collection)


class ContractError(AssertionError):
    pass


def _strip(tp: Any) -> Any:
    while True:
        origin = typing_extensions.get_origin(tp)
        if origin is typing_extensions.Annotated:
            tp = typing_extensions.get_args(tp)[0]
        elif origin in _WRAPPERS:
            tp = typing_extensions.get_args(tp)[0]
        else:
            return tp


def _required(hint: Any) -> bool:
    """``Required[...]`` (under ``Annotated`` or not): string annotations hide it from
    ``__required_keys__`` on some Pythons, the resolved hint does not."""
    while typing_extensions.get_origin(hint) is typing_extensions.Annotated:
        hint = typing_extensions.get_args(hint)[0]
    return typing_extensions.get_origin(hint) in {typing_extensions.Required, getattr(typing, "Required", None)} - {None}


def check_typed_dict(td: Any, value: Any, path: str = "$") -> None:
    """``value`` is exactly a ``td``: no undeclared key, every required key, each value of
    its declared type. Raises :class:`ContractError` naming the path."""
    if not isinstance(value, dict):
        raise ContractError(f"{path}: expected an object for {td.__name__}, got {type(value).__name__}")
    hints = typing_extensions.get_type_hints(td, include_extras=True)
    unknown = sorted(set(value) - set(hints))
    if unknown:
        raise ContractError(f"{path}: {td.__name__} has no field {', '.join(map(repr, unknown))}")
    required = set(td.__required_keys__) | {k for k, h in hints.items() if _required(h)}
    missing = sorted(required - set(value))
    if missing:
        raise ContractError(f"{path}: {td.__name__} requires {', '.join(map(repr, missing))}")
    for key, item in value.items():
        check_type(hints[key], item, f"{path}.{key}")


def check_type(tp: Any, value: Any, path: str) -> None:
    tp = _strip(tp)
    if tp is Any or tp is object:
        return
    if typing_extensions.is_typeddict(tp):
        check_typed_dict(tp, value, path)
        return
    origin = typing_extensions.get_origin(tp)
    args = typing_extensions.get_args(tp)
    if origin is typing.Union or origin is types.UnionType:
        errors = []
        for option in args:
            try:
                check_type(option, value, path)
                return
            except ContractError as exc:
                errors.append(str(exc))
        raise ContractError(f"{path}: matches no member of the union ({'; '.join(errors)})")
    if origin is typing_extensions.Literal or origin is typing.Literal:
        if value not in args or isinstance(value, bool) != any(isinstance(a, bool) for a in args if a == value):
            raise ContractError(f"{path}: {value!r} is not one of {list(args)}")
        return
    if tp is type(None):
        if value is not None:
            raise ContractError(f"{path}: expected null, got {value!r}")
        return
    if origin in (dict, collections.abc.Mapping) or tp in (dict, collections.abc.Mapping):
        if not isinstance(value, dict):
            raise ContractError(f"{path}: expected an object, got {type(value).__name__}")
        if args:
            for key, item in value.items():
                check_type(args[0], key, f"{path}[key]")
                check_type(args[1], item, f"{path}.{key}")
        return
    if origin in _SEQUENCES or (isinstance(origin, type) and "Sequence" in origin.__name__):
        if not isinstance(value, list):
            raise ContractError(f"{path}: expected a list, got {type(value).__name__}")
        for i, item in enumerate(value):
            check_type(args[0] if args else Any, item, f"{path}[{i}]")
        return
    if tp is bool:
        ok = isinstance(value, bool)
    elif tp is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif tp is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif tp is str:
        ok = isinstance(value, str)
    else:
        raise ContractError(f"{path}: the check does not know the type {tp!r}")
    if not ok:
        raise ContractError(f"{path}: expected {tp.__name__}, got {value!r}")


def check_genai(model: Any, value: Any, path: str = "$") -> Any:
    """``value`` (REST JSON, camelCase or snake_case) validated by a google-genai pydantic
    model; its models forbid unknown fields, so an undeclared one fails here too."""
    if model.model_config.get("extra") != "forbid":
        raise ContractError(f"{model.__name__} does not forbid unknown fields: the check would be lax")
    try:
        return model.model_validate(value)
    except Exception as exc:  # pydantic.ValidationError, whatever its version
        raise ContractError(f"{path}: not a {model.__name__}: {exc}") from None
