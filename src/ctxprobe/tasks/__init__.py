"""Task families: seeded case generation and strict scoring, one module per family."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError

from ctxprobe.errors import CtxprobeError
from ctxprobe.core.family import Family
from ctxprobe.tasks.base import BuildContext
from ctxprobe.tasks.niah import Niah
from ctxprobe.tasks.documents import Documents
from ctxprobe.tasks.multihop import Multihop
from ctxprobe.tasks.phonebook import Phonebook
from ctxprobe.tasks.vartrack import Vartrack
from ctxprobe.tasks.aggregation import Aggregation
from ctxprobe.tasks.ruler.family import Ruler

FAMILIES: dict[str, type] = {"niah": Niah, "multihop": Multihop, "documents": Documents, "phonebook": Phonebook,
                             "vartrack": Vartrack, "aggregation": Aggregation, "ruler": Ruler}

__all__ = ["BuildContext", "FAMILIES", "make_family", "validate_params"]


def _family_class(name: str) -> type:
    try:
        return FAMILIES[name]
    except KeyError:
        raise CtxprobeError(f"unknown family '{name}'; available: {', '.join(sorted(FAMILIES))}") from None


def validate_params(family: str, params: dict[str, Any]) -> BaseModel:
    model: type[BaseModel] = _family_class(family).params_model
    try:
        return model.model_validate(params)
    except ValidationError as err:
        e = err.errors()[0]
        where = ".".join(str(p) for p in e["loc"])
        if e["type"] == "extra_forbidden":
            known = ", ".join(model.model_fields)
            raise CtxprobeError(f"unknown parameter '{where}' for family {family} (known: {known})") from None
        raise CtxprobeError(f"bad parameter '{where}' for family {family}: {e['msg']}") from None


def make_family(name: str, ctx: BuildContext) -> Family:
    return _family_class(name)(ctx)
