"""A task family declared once: :class:`FamilyDeclaration`.

Everything a family brings beyond the generic pipeline is named on one declaration: its
family class (generation and scoring), how a simulated model answers it (its sim skill),
what it adds to the reports (its report hooks), a command of its own and its presets.
Each part is a ``"module:attr"`` path (or the object itself), imported only when it is
used (:mod:`ctxprobe.core.loader`), so declaring a family imports none of its layers.
Beside the parts, plain fields say what generic code asks of a family (its ability in the
report's words, whether the prompt layout moves its instruction, its instruction phrase for
the sims, its word-overlap claim, a bar known by its name...): generic code reads them from
the registry and names no family (``tests/integration/test_no_family_names.py``).

ctxprobe's own families are packages ``ctxprobe/families/<name>/`` whose ``__init__.py``
holds ``FAMILY = FamilyDeclaration(...)``; the parts are files named by role (``task.py``,
``sim.py``, ``report.py``..., docs/architecture.md). Every declaration is registered in
the registry's ``families`` group: ``registry.register("families", FAMILY.name, FAMILY)``
(:mod:`ctxprobe.core.builtins` does it for ctxprobe's own, one line each), or by an
entry point ``[project.entry-points."ctxprobe.families"] NAME = "pkg.module:FAMILY"``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from ctxprobe.core.loader import resolve


@dataclass(frozen=True)
class OverlapClaim:
    """What a family claims of the word overlap between its questions and its evidence,
    which the report's overlap check holds it to (:mod:`ctxprobe.analysis.overlap`)."""

    #: Only the evidence of this role counts (``meta.overlap`` entries' ``role``); None: every sentence.
    role: str | None
    #: The overlap above which it flags.
    limit: float
    #: ``"any"``: one case above the limit flags; ``"mean"``: the family's mean above it flags.
    rule: str
    #: Why the limit is what it is, in the report's words.
    why: str


@dataclass(frozen=True)
class FamilyDeclaration:
    """One family and its parts, each a ``"module:attr"`` path or the object itself."""

    #: The family's name (``--family NAME``, its spec key, its stored rows' ``family``).
    name: str
    #: The family class (:class:`ctxprobe.core.family.Family`): ``cls(ctx: BuildContext)``.
    family: str | type
    #: How a simulated model answers its question: ``skill(question, context) -> str | None``
    #: reading only prompt text (:mod:`ctxprobe.sim.skills`); None: the sims cannot find it.
    sim_skill: str | object | None = None
    #: What it adds to the reports: a ``ctxprobe.report.hooks.FamilyReportHooks``; None:
    #: nothing beyond the generic report.
    report_hooks: str | object | None = None
    #: A subcommand of its own: ``add(subparsers) -> None`` adding it to ``ctxprobe``'s parser
    #: (the phone book's ``ctxprobe phonebook``); None: none.
    command: str | object | None = None
    #: Named sets of families it brings (``--preset NAME``): name → a
    #: :class:`ctxprobe.core.preset.Preset` (or its path), registered with the declaration.
    presets: Mapping[str, str | object] = field(default_factory=dict)
    #: Simulated models it brings (``sim:KIND?param=value``): kind → a
    #: ``ctxprobe.sim.family_kinds.SimKind`` (or its path), found by :mod:`ctxprobe.sim.family_kinds`.
    sim_kinds: Mapping[str, str | object] = field(default_factory=dict)
    #: Published sets ``import-published`` reads as its cases: set name → a
    #: :class:`ctxprobe.haystack.published.PublishedSet` (or its path), loaded when the set is
    #: read (:mod:`ctxprobe.sweep.published`).
    published_sets: Mapping[str, str | object] = field(default_factory=dict)

    # -- what generic code asks of a family by name, declared here rather than listed there --

    #: What it measures, in the HTML summary's words ("retrieving one fact stated once");
    #: None: its name.
    ability: str | None = None
    #: The abilities of the labels its variants are usually given (``multikey`` for niah's
    #: ``variant: multikey``): label → ability, for a run whose label is not a family's name.
    label_abilities: Mapping[str, str] = field(default_factory=dict)
    #: Its prompt has an instruction line the prompt layout moves (``--instruction``,
    #: ``--separator``): the report names the layout of a run holding it.
    prompt_layout: bool = False
    #: A phrase of its instruction text that survives the layout's rewording: how
    #: ``sim:late-reader`` sees where its instruction starts (:mod:`ctxprobe.sim.instructions`);
    #: None: the sims see no instruction in its prompts.
    instruction_phrase: str | None = None
    #: The word-overlap claim the report checks its cases against; None: its cases' overlap
    #: is shown, never flagged.
    overlap: OverlapClaim | None = None
    #: A bar known by its name, for any family to use (``--bars niah=ruler``): a number, or
    #: ``"relative:F"``; None: its name is no bar.
    named_bar: float | str | None = None
    #: Plain retrieval: the family the profile compares every other family with (which give
    #: out before it, which hold as long).
    plain_retrieval: bool = False
    #: Task arguments another harness's task of this family takes by default (its inspect_ai
    #: task's ``-T``): the phone book asks no depth, ``{"depths": "0"}``.
    task_defaults: Mapping[str, str] = field(default_factory=dict)
    #: One line on what the family measures, for a harness's task list (its inspect_ai
    #: task's docstring); None: its ``ability``.
    summary: str | None = None

    def __post_init__(self) -> None:
        if not self.name or self.name != self.name.strip():
            raise ValueError(f"bad family name {self.name!r}")

    def load_published(self, name: str) -> Any:
        """Its published set ``name`` as an object, imported on first use."""
        return resolve(self.published_sets[name], what=f"family '{self.name}': its published set '{name}'")

    def load(self, part: str) -> Any:
        """The part ``part`` (``"family"``, ``"sim_skill"``, ``"report_hooks"``, ``"command"``)
        as an object, imported on first use; None when the family declares none."""
        target = getattr(self, part)
        if target is None:
            return None
        return resolve(target, what=f"family '{self.name}': its {part.replace('_', ' ')}")


#: The parts a declaration names, each loaded when used (:meth:`FamilyDeclaration.load`).
PARTS: tuple[str, ...] = ("sim_skill", "report_hooks", "command", "presets", "sim_kinds", "published_sets")
#: Its plain fields: what generic code asks of a family by name.
FIELDS: tuple[str, ...] = tuple(f.name for f in fields(FamilyDeclaration) if f.name not in ("name", "family", *PARTS))


def declare(name: str, target: object, **parts: Any) -> FamilyDeclaration:
    """``target`` as a declaration: itself when it is one, else the declaration of the family
    class (or path) ``target`` with ``parts`` and fields (``sim_skill=...``: the keyword form of
    ``registry.register("families", NAME, Cls, sim_skill=...)``)."""
    if isinstance(target, FamilyDeclaration):
        if parts:
            raise ValueError(f"family '{name}': give its parts on its declaration, not beside it ({', '.join(parts)})")
        if target.name != name:
            raise ValueError(f"family declared as '{target.name}' registered as '{name}'")
        return target
    unknown = sorted(set(parts) - set(PARTS) - set(FIELDS))
    if unknown:
        raise ValueError(f"family '{name}': unknown part(s) {', '.join(unknown)} (known: {', '.join(PARTS + FIELDS)})")
    if not isinstance(target, (str, type)):
        raise ValueError(f"family '{name}': a family is a class, a 'module:attr' path or a FamilyDeclaration")
    return FamilyDeclaration(name, target, **parts)
