"""What every task family provides: parameters, seeded case generation, strict scoring.

A family class is constructed with the build context (``tasks.base.BuildContext``: the
tokenizer, the haystack, the prompt layout) and is found by name in the registry
(:mod:`ctxprobe.core.registry`, group ``families``).

Beside the required members (:class:`Family`), a family may answer a few optional
questions the generic layers ask (how its lengths are sized, what output budget its cases
fix, how many items its longest answer lists). :class:`FamilyBase` declares each of them
once, with its default; ctxprobe's own families inherit it, and a plugin family that does
not is given the defaults when the registry loads it (:func:`with_family_defaults`), so
no caller ever probes for a member.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Protocol

from pydantic import BaseModel

from ctxprobe.core.baseline import FloorKind
from ctxprobe.core.case import Case, Cell
from ctxprobe.core.outcome import Scored


class Family(Protocol):
    name: str
    params_model: type[BaseModel]
    #: Optional members (defaults in :class:`FamilyBase`).
    length_includes_output: bool
    long_output: bool

    def generate(self, cell: Cell, rep: int, *, seed: int, params: BaseModel) -> Case:
        """Build one case to its exact token budget. Deterministic in its arguments."""
        ...

    def score(self, case: Case, output: str) -> Scored:
        """Strict score of a model output. Reads only the case's answer fields."""
        ...

    def sized_in_tokens(self, params: Any) -> bool: ...

    def cell_tokens(self, length: int, params: Any, *, seed: int) -> int: ...

    def check_reps(self, params: Any) -> list[int]: ...

    def uses_judge(self, params: Any) -> bool: ...

    def prefix_period(self, params: Any) -> int: ...


class FamilyBase:
    """The optional members of a family, each with its default. Inherit it (ctxprobe's own
    families do) and override what differs; the names are listed in :data:`OPTIONAL`.

    The rules read from parameters alone are class-level (override them as classmethods
    or staticmethods: :mod:`ctxprobe.cases.sizing` and the spec ask the class, before any
    family is built); :meth:`cell_tokens` builds cases, so it is asked of an instance."""

    #: The family's lengths already include the output (RULER: prompt + generation <= L),
    #: so the window check and the trained-context warning add no output tokens.
    length_includes_output: ClassVar[bool] = False

    #: How ``--baseline no-context`` makes this family's noise floor
    #: (:mod:`ctxprobe.core.baseline`): ``"no-context"`` builds the evidence-free twin of
    #: each case (``BuildContext.no_context``), ``"random-instance"`` computes it from each
    #: case, None: no floor.
    floor_kind: ClassVar[FloorKind | None] = None

    #: Its answers are long (a document's worth): a reply cut at the output limit is
    #: ``output_truncated`` whatever it holds, and left out of accuracy: the cut, not the
    #: model, ended it (:mod:`ctxprobe.scores.outcome`).
    long_output: ClassVar[bool] = False

    #: Its cases are natural (the user's own documents, or a published natural set imported
    #: as its cases), not planted: the synthetic-vs-natural comparison
    #: (:mod:`ctxprobe.analysis.natural`) holds them against every family that is not.
    natural: ClassVar[bool] = False

    #: Its accuracy is one score per case, what a length's interval counts (``run``'s and
    #: ``plan``'s "what the grid can show" line); False: its own report reads it per item
    #: (the phone book's recall per needle), and that line leaves it out.
    per_case_accuracy: ClassVar[bool] = True

    #: Output tokens every case of this family asks for, when the family fixes them
    #: (RULER's per-task ``tokens_to_generate``); None: the sweep's ``decoding.max_tokens``.
    @classmethod
    def output_budget(cls, params: Mapping[str, Any]) -> int | None:
        """From the spec's raw parameters (no validation: ``plan`` and reports read stored specs)."""
        return None

    @classmethod
    def answer_items(cls, params: Mapping[str, Any]) -> int:
        """How many items the longest correct answer lists, from the raw parameters (the
        spec's default output limit makes room for them)."""
        return 1

    @classmethod
    def sized_in_tokens(cls, params: Any) -> bool:
        """Whether a length is a token budget (else the family sizes cases in its own units
        and answers :meth:`cell_tokens`)."""
        return True

    def cell_tokens(self, length: int, params: Any, *, seed: int) -> int:
        """Tokens of the largest case of ``length`` (only asked when not sized in tokens)."""
        return length

    @classmethod
    def check_reps(cls, params: Any) -> list[int]:
        """Repetitions whose cases must build for a length to be usable (built before a run
        is stored, so an impossible setting is refused up front)."""
        return [0]

    @classmethod
    def uses_judge(cls, params: Any) -> bool:
        """Whether its cases are graded by the LLM judge with these (validated) parameters."""
        return False

    @classmethod
    def computed_floor(cls, case: Case) -> float:
        """The noise floor's score for ``case`` when the family computes it (:attr:`floor_kind`
        ``"random-instance"``: MRCR's expected score of a reply that finds the key but not
        the ordinal), from the case's stored answer key; asked of no other family."""
        raise NotImplementedError(f"{cls.__name__} computes no noise floor (floor_kind {cls.floor_kind!r})")

    @classmethod
    def prefix_period(cls, params: Any) -> int:
        """How many consecutive repetitions build on one shared text (with every depth of
        them): 1 (each repetition has its own filler); the phone book's questions about
        one book, k. Prompt caching and the plan's cached price read it."""
        return 1


#: The optional members :class:`FamilyBase` declares (what a plugin family may leave out).
OPTIONAL: tuple[str, ...] = ("length_includes_output", "long_output", "output_budget", "answer_items", "sized_in_tokens",
                             "cell_tokens", "check_reps", "uses_judge", "floor_kind", "computed_floor",
                             "natural", "per_case_accuracy", "prefix_period")


def with_family_defaults(cls: type) -> type:
    """``cls`` with every optional member it lacks taken from :class:`FamilyBase`: the class
    itself when it inherits the base, else a subclass of both (``cls`` first, so whatever
    it defines wins). Applied once, where the registry loads a family."""
    if not isinstance(cls, type) or issubclass(cls, FamilyBase):
        return cls
    return type(cls.__name__, (cls, FamilyBase), {"__module__": cls.__module__, "__qualname__": cls.__qualname__,
                                                  "__doc__": cls.__doc__})
