"""Every default a flag's help names is the one that applies: the Spec's field default
for a flag that sets a spec key, the flag's own argparse default otherwise. The help text
reads them from there, so a changed default cannot leave a stale number behind."""

from __future__ import annotations

import argparse
import re

import pytest

from ctxprobe.cli import build_parser
from ctxprobe.cli.common import show_default, spec_default
from ctxprobe.spec import Decoding, PromptLayout, Spec

#: A flag's destination → the spec key it sets, where the names differ.
SPEC_KEY = {"family": "families"}
SPEC_FIELDS = {*Spec.model_fields, *Decoding.model_fields, *PromptLayout.model_fields}
SHOWN = re.compile(r"default:? (?:the run's, else )?([^\s);]+)")


def _actions() -> list[tuple[str, argparse.Action, str]]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    out = []
    for name, parser in sub.choices.items():
        for action in parser._actions:
            if action.help and not isinstance(action, argparse._HelpAction):
                text = action.help % dict(vars(action), prog=parser.prog)  # as argparse expands it
                out.append((name, action, text))
    return out


def _spec_key(command: str, action: argparse.Action) -> str | None:
    key = SPEC_KEY.get(action.dest, action.dest)
    # run and plan set spec keys; phonebook's --concurrency/--timeout/--retries and
    # report's --threshold are the Spec's too
    spec_commands = {"run", "plan"} | ({"phonebook"} if key in ("concurrency", "timeout", "retries") else set()) \
        | ({"report"} if key == "threshold" else set())
    switch = action.nargs == 0  # --batch, --no-share-prefix: the help says what the switch changes
    return key if command in spec_commands and key in SPEC_FIELDS and action.default is None and not switch else None


def test_every_shown_default_is_the_one_that_applies() -> None:
    checked = 0
    for command, action, text in _actions():
        shown = [m.rstrip(",:") for m in SHOWN.findall(text)]
        key = _spec_key(command, action)
        if key is not None and shown and spec_default(key) != "None":  # None: the help says what happens, in words
            assert spec_default(key) in shown, (command, action.option_strings, text)
            checked += 1
        elif action.default not in (None, False, argparse.SUPPRESS) and shown and action.dest != "store":
            assert show_default(action.default) in shown, (command, action.option_strings, text)
            checked += 1
    assert checked >= 30  # the run/plan spec flags and the commands' own defaults


@pytest.mark.parametrize(("key", "shown"), [("seed", "0"), ("depths", "0,0.25,0.5,0.75,1"), ("timeout", "600"),
                                            ("families", "niah"), ("max_tokens", "48"), ("instruction", "before")])
def test_spec_defaults_are_shown_as_a_user_types_them(key: str, shown: str) -> None:
    assert spec_default(key) == shown


def test_a_changed_spec_default_changes_the_help(monkeypatch: pytest.MonkeyPatch) -> None:
    field = Spec.model_fields["seed"]
    monkeypatch.setattr(field, "default", 7)
    (text,) = [t for c, a, t in _actions() if c == "run" and a.dest == "seed"]
    assert "(default 7)" in text


def test_the_reps_help_says_how_the_unset_default_is_derived() -> None:
    """--reps has no fixed default: the help names the rule (spec/threshold.py::derived_reps)."""
    (text,) = [t for c, a, t in _actions() if c == "run" and a.dest == "reps"]
    assert "unset: the smallest grid in which an all-correct length clears the bar at 95%" in text
    assert "ceil(24 / depths) at 0.856" in text
