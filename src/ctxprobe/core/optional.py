"""Optional members at the plugin boundary: one place where a missing member is looked for.

Each kind of plugin (family, provider, tokenizer) has a base class declaring its optional
members with their defaults (:class:`ctxprobe.core.family.FamilyBase`,
:class:`ctxprobe.models.base.ProviderBase`, :class:`ctxprobe.tokenizers.base.TokenizerBase`).
An object that does not inherit its base gets the defaults it lacks here, once, where the
registry's factory hands it over; everywhere else members are plain attribute reads.
"""

from __future__ import annotations

import types
from typing import TypeVar

from ctxprobe.errors import CtxprobeError

_T = TypeVar("_T")


def fill_defaults(obj: _T, base: type, members: tuple[str, ...], what: str) -> _T:
    """``obj`` with every member of ``members`` it lacks set from ``base`` (methods bound
    to ``obj``, a property's value read once). An instance of ``base`` is returned as it is; one that cannot take
    attributes (``__slots__``) is a one-line error asking to inherit ``base``."""
    if isinstance(obj, base):
        return obj
    for name in members:
        if hasattr(obj, name):
            continue
        default = base.__dict__[name]
        if isinstance(default, property):  # a read-only default (a constant): its value
            value = default.__get__(obj, type(obj))
        elif isinstance(default, types.FunctionType):
            value = types.MethodType(default, obj)
        else:
            value = default
        try:
            setattr(obj, name, value)
        except (AttributeError, TypeError):
            raise CtxprobeError(f"{what} {type(obj).__qualname__} lacks '{name}' and cannot be given its default: "
                                f"inherit {base.__module__}.{base.__qualname__}") from None
    return obj
