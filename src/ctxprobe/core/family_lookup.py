"""The registered families, found by name (the registry's group ``families``): a family's
class, its parameters validated, the family made for a build context.

The families themselves live in ``ctxprobe/families/<name>/`` (ctxprobe's own) or in a
plugin; the context they are built with is :class:`ctxprobe.haystack.context.BuildContext`
(typed ``Any`` here: the core sits below the haystack layer)."""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel, ValidationError

from ctxprobe.errors import CtxprobeError
from ctxprobe.core import registry
from ctxprobe.core.declaration import FamilyDeclaration
from ctxprobe.core.family import Family

__all__ = ["family_class", "family_declaration", "family_names", "make_family", "validate_params"]


def family_names() -> list[str]:
    """Every registered family: ctxprobe's own and installed plugins'."""
    return registry.names("families")


class FamilyClass(Protocol):
    """A family's class: its parameters' model, and a constructor from the build context."""

    params_model: type[BaseModel]

    def __call__(self, ctx: Any) -> Family: ...  # ctx: a haystack.context.BuildContext

    def prefix_period(self, params: Any) -> int: ...


def family_declaration(name: str) -> FamilyDeclaration:
    """A registered family's declaration (nothing of it imported), or a one-line error."""
    entry = registry.find("families", name)
    if entry is None:
        raise CtxprobeError(f"unknown family '{name}' (known: {', '.join(family_names())})")
    return entry.declaration()


def family_class(name: str) -> FamilyClass:
    """A family's class from the registry (imported on first use), or a one-line error."""
    return registry.load("families", name, what="family")


def validate_params(family: str, params: dict[str, Any]) -> BaseModel:
    model: type[BaseModel] = family_class(family).params_model
    try:
        return model.model_validate(params)
    except ValidationError as err:
        e = err.errors()[0]
        where = ".".join(str(p) for p in e["loc"])
        if e["type"] == "extra_forbidden":
            known = ", ".join(model.model_fields)
            raise CtxprobeError(f"unknown parameter '{where}' for family {family} (known: {known})") from None
        raise CtxprobeError(f"bad parameter '{where}' for family {family}: {e['msg']}") from None


def make_family(name: str, ctx: Any) -> Family:
    """The family ``name`` made for ``ctx`` (a :class:`ctxprobe.haystack.context.BuildContext`)."""
    return family_class(name)(ctx)
