"""What a simulated model knows how to do: one *skill* per task family.

A *skill* reads a question and the context visible to the sim and returns the answer a
perfect reader would give, or None when the question is not of its kind. Skills never
see an answer key: only prompt text. Sim kinds (``perfect``, ``blind-middle``, ``decay``)
decide what part of the context is visible and whether the answer survives; skills decide
what the answer is.

A family brings its skill on its registry entry, ``sim_skill`` (a ``"module:attr"`` path,
imported when a sim first answers, or the function itself): ctxprobe's own families name
theirs in :mod:`ctxprobe.core.builtins` (one module here each), a plugin's family
registered in code the same way::

    registry.register("families", "echo", Echo, sim_skill=echo_skill)

The sim asks every registered family's skill, in family-name order, and takes the first
answer. The skills recognise disjoint questions (each family's prompts are recognised by
its own skill only: ``tests/models/test_sim_skills.py``), so the order decides nothing.

Beside the skills, :mod:`ctxprobe.sim.skills.instructions` says how a sim recognises a
family's instruction text (``sim:late-reader`` reads where it stands).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import cast

from ctxprobe.core import registry
from ctxprobe.errors import CtxprobeError

Skill = Callable[[str, str], "str | None"]  # (question, visible context) -> answer

_LOADED: dict[str, Skill] = {}


def _load(family: str, target: object) -> Skill:
    if not isinstance(target, str):
        if not callable(target):
            raise CtxprobeError(f"family '{family}': its sim_skill must be a function (question, context) "
                                f"-> answer or a 'module:attr' path, not {type(target).__name__}")
        return cast(Skill, target)
    if target not in _LOADED:
        module, _, attr = target.partition(":")
        try:
            obj: object = importlib.import_module(module)
            for part in filter(None, attr.split(".")):
                obj = getattr(obj, part)
        except (ImportError, AttributeError) as exc:
            raise CtxprobeError(f"family '{family}': its sim skill cannot be loaded from {target}: {exc}") from None
        _LOADED[target] = cast(Skill, obj)
    return _LOADED[target]


def skills() -> list[tuple[str, Skill]]:
    """(family name, skill) of every registered family that declares a sim skill, in name order."""
    return [(entry.name, _load(entry.name, entry.meta["sim_skill"]))
            for entry in registry.entries("families") if entry.meta.get("sim_skill") is not None]


def answer(question: str, context: str) -> str | None:
    """The first skill's answer that recognises the question, or None."""
    for _, skill in skills():
        result = skill(question, context)
        if result is not None:
            return result
    return None
