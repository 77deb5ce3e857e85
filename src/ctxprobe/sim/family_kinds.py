"""Sim kinds a family brings: ``sim:KIND?param=value`` whose behaviour is the family's own.

A family names them on its declaration (:class:`ctxprobe.core.declaration.FamilyDeclaration`),
``sim_kinds={KIND: "module:attr"}``, each a
:class:`SimKind`: its parameters (with defaults) and a function that answers one turn as
that simulated model would. Like every sim, it reads only the prompt (:class:`SimTurn`:
the question, the visible context, a deterministic uniform draw, a token counter and the
perfect reader's answer), never an answer key. The common parameters ``ctx``, ``latency``
and ``tnoise`` are accepted by every kind (:mod:`ctxprobe.sim.model`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ctxprobe.core import registry
from ctxprobe.core.loader import resolve
from ctxprobe.errors import CtxprobeError

COMMON = {"ctx": int, "latency": float, "tnoise": float}


@dataclass(frozen=True)
class SimTurn:
    """What a family's sim kind reads for one reply."""

    question: str
    context: str
    params: Mapping[str, float]
    #: A uniform number in [0, 1) fixed by (seed, salt, prompt): reproducible, answer-blind.
    draw: Callable[[str], float]
    #: Tokens of a text with the sim's tokenizer.
    count: Callable[[str], int]
    #: The perfect answer to (question, context) from the family skills, or None.
    perfect: Callable[[str, str], "str | None"]


@dataclass(frozen=True)
class SimKind:
    """A family's sim kind: its parameters (name → default) and its answer."""

    params: Mapping[str, float]  # must hold ``seed`` (the draws' seed)
    answer: Callable[[SimTurn], "str | None"]
    help: str = ""


def family_kinds() -> dict[str, tuple[str, object]]:
    """KIND → (family, its SimKind or "module:attr") for every registered family kind."""
    out: dict[str, tuple[str, object]] = {}
    for entry in registry.entries("families"):
        for kind, target in entry.declaration().sim_kinds.items():
            out[str(kind)] = (entry.name, target)
    return out


def find_kind(kind: str) -> SimKind | None:
    found = family_kinds().get(kind)
    if found is None:
        return None
    family, target = found
    obj = resolve(target, what=f"family '{family}': its sim kind '{kind}'")
    if not isinstance(obj, SimKind):
        raise CtxprobeError(f"family '{family}': its sim kind '{kind}' must be a ctxprobe.sim.family_kinds.SimKind")
    return obj


def checked_params(kind: str, params: Mapping[str, object], hint: str) -> dict[str, float | int]:
    """The parameters of family kind ``kind`` with its defaults, converted, or a one-line
    error (``hint`` names the kinds there are, for an unknown one)."""
    sim = find_kind(kind)
    if sim is None:
        raise CtxprobeError(f"unknown simulated model 'sim:{kind}': {hint}")
    out: dict[str, float | int] = dict(sim.params)
    for key, raw in params.items():
        if key not in sim.params and key not in COMMON:
            allowed = sorted({*sim.params, *COMMON})
            raise CtxprobeError(f"unknown parameter '{key}' for sim:{kind}: accepted are {', '.join(allowed)}")
        kind_type = COMMON.get(key, float)
        try:
            value = kind_type(raw)
        except (TypeError, ValueError):
            raise CtxprobeError(f"sim:{kind} parameter {key}={raw!r} is not a valid {kind_type.__name__}") from None
        if value < 0 or (key == "ctx" and value == 0):
            raise CtxprobeError(f"sim:{kind} parameter {key}={raw!r} must be {'above' if key == 'ctx' else 'at least'} 0")
        out[key] = value
    return out


def answer_turn(kind: str, question: str, context: str, params: Mapping[str, float],
                draw: Callable[[str], float], count: Callable[[str], int],
                perfect: Callable[[str, str], "str | None"]) -> str | None:
    """The reply of family kind ``kind`` to one turn (None: it has nothing to say)."""
    sim = find_kind(kind)
    if sim is None:
        raise CtxprobeError(f"unknown simulated model 'sim:{kind}'")
    return sim.answer(SimTurn(question, context, params, draw, count, perfect))
