"""Constants and help-text helpers shared by the command modules."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

from ctxprobe.report.format import DEFAULT_REPORT_DIR
from ctxprobe.store.db import DEFAULT_STORE

__all__ = ["CHECK_EPILOG", "DEFAULT_REPORT_DIR", "DEFAULT_STORE", "EXAMPLES", "FamilyCommand", "OneLineErrors",
           "check_family_grids", "family_commands", "family_report_flags", "preset_flags", "show_default",
           "spec_default"]

EXAMPLES = """examples:
  ctxprobe run --model sim:perfect --lengths 1k,2k   # a simulated model, no key
  ctxprobe run --model local --lengths 1k,2k,4k,8k,12k --depths 0,0.5,1 \\
      --reps 1 --distractors 3
  ctxprobe run spec.yaml --reps 5          # flags override the file
  ctxprobe plan --model openai/gpt-4o --lengths 8k,16k   # nothing sent
  ctxprobe runs
  ctxprobe report RUN_ID                   # table + PNG heatmap and curve
  ctxprobe report RUN_ID --json            # machine-readable, for CI
  ctxprobe export RUN_ID --jsonl -o cases.jsonl
  ctxprobe serve-sim --model sim:blind-middle --port 8000

exit codes: 0 ok · 1 check found a regression · 2 user error (one line says
  what to do) · 3 run incomplete: `error` cases left after retries, prompts
  truncated by the server, or cases left unsent at the --max-cost cap ·
  4 check INCONCLUSIVE: the slice could not have shown a drop of --max-drop ·
  130 interrupted
"""


def spec_default(key: str) -> str:
    """The Spec's default of ``key`` as a flag's help shows it (``decoding`` and ``layout``
    keys by their own name: ``max_tokens``, ``instruction``...): the one source of the
    defaults the help text names."""
    from ctxprobe.spec import Decoding, PromptLayout, Spec

    for model in (Spec, Decoding, PromptLayout):
        found = model.model_fields.get(key)
        if found is not None:
            return show_default(found.get_default(call_default_factory=True))
    raise KeyError(key)


def show_default(value: object) -> str:
    """A default as help text shows it: ``0.25`` not ``0.250``, ``600`` not ``600.0``, lists
    and family maps as comma lists."""
    if isinstance(value, dict):
        return ",".join(str(k) for k in value)
    if isinstance(value, (list, tuple)):
        return ",".join(show_default(v) for v in value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


@dataclass(frozen=True)
class FamilyCommand:
    """What a family adds to the command line, named by its declaration's ``command``
    (:class:`ctxprobe.core.declaration.FamilyDeclaration`). Calling it adds the family's
    own subcommand(s), so a plain function ``add(subparsers)`` declares a command too."""

    #: ``add(subparsers) -> None``: the family's subcommand(s).
    add: Callable[[Any], None]
    #: ``flags(report_parser) -> dests``: the family's own ``report`` flags (they reach its
    #: report hooks as ``options``; refused for runs of other families), their dest names.
    report_flags: Callable[[argparse.ArgumentParser], tuple[str, ...]] | None = None
    #: ``check(spec, command) -> None``: raises a one-line error for a ``run``/``plan`` grid
    #: (``command``) the family cannot be measured in.
    check_grid: Callable[[Any, str], None] | None = None

    def __call__(self, sub: Any) -> None:
        self.add(sub)


def family_commands() -> list[FamilyCommand]:
    """The command-line parts of every family that declares some, in family-name order."""
    from ctxprobe.core import registry

    found = [declared.load("command") for declared in registry.declared_families()]
    return [c if isinstance(c, FamilyCommand) else FamilyCommand(c) for c in found if c is not None]


def family_report_flags(report: argparse.ArgumentParser) -> tuple[str, ...]:
    """Add every family's own ``report`` flags to ``report``; their dest names."""
    return tuple(dest for c in family_commands() if c.report_flags is not None for dest in c.report_flags(report))


def preset_flags(p: argparse.ArgumentParser) -> None:
    """``--preset`` and every registered preset's own flags (``--NAME-KEY``, each help its
    ``option_help``), as the presets declare them."""
    from ctxprobe.core import registry

    presets = [registry.get("presets", name).load() for name in registry.names("presets")]
    p.add_argument("--preset", help="a named set of families: " + "; ".join(
        f"{preset.name} ({getattr(preset, 'summary', None) or preset.title})" for preset in presets))
    for preset in presets:  # a preset written before option_help existed: each flag named by its key
        helps = getattr(preset, "option_help", None) or {}
        for key in preset.options:
            p.add_argument(f"--{preset.name}-{key}".replace("_", "-"), help=f"{preset.name} preset: {helps.get(key, key)}")


def check_family_grids(spec: Any, command: str) -> None:
    """Every family's refusal of a ``run``/``plan`` grid it cannot be measured in."""
    for c in family_commands():
        if c.check_grid is not None:
            c.check_grid(spec, command)


CHECK_EPILOG = """exit codes: 0 pass · 1 regression (the responsible tests printed) ·
  2 user error · 4 INCONCLUSIVE: no regression found, but some family's pairs
  could not have shown a drop of --max-drop (pass it with --allow-inconclusive)

examples:
  ctxprobe check RUN --baseline BASE --max-drop 0.05
  ctxprobe check --plan ci/regression-slice.yaml --drop 0.1
  ctxprobe check --plan --lengths 32k,64k --depths 0,0.5,1 --reps 20 --drop 0.1
"""


class OneLineErrors(argparse.ArgumentParser):
    """A bad flag gets one line (what is wrong, where the help is), not the whole usage text;
    every subcommand's parser is of this class too (argparse makes them of the parent's)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")
