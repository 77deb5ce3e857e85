"""Sim skills are registered with their families (the family's declaration names its
``sim_skill``), a plugin's family brings one the same way, and the skills recognise
disjoint questions, so the order the sim asks them in decides nothing."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from ctxprobe.core import registry
from ctxprobe.core.case import Cell
from ctxprobe.errors import CtxprobeError
from ctxprobe.models import resolve_provider
from ctxprobe.models.base import GenerateRequest
from ctxprobe.sim.model import NOT_FOUND, view_prompt
from ctxprobe.sim.skills import answer, skills
from ctxprobe.core.family_lookup import family_names, make_family, validate_params
from ctxprobe.haystack.context import BuildContext
from ctxprobe.tokenizers import resolve_tokenizer


def test_every_built_in_family_registers_its_skill() -> None:
    builtin = [e.name for e in registry.entries("families") if e.origin == "ctxprobe"]
    assert len(builtin) >= 9
    found = dict(skills())
    for name in builtin:
        path = registry.get("families", name).declaration().sim_skill
        assert path == f"ctxprobe.families.{name}.sim:{name}_skill"  # in its own package
        assert found[name].__name__ == f"{name}_skill"  # loaded from its path


def _documents(tmp_path: Path) -> dict[str, Any]:
    (tmp_path / "vault.md").write_text("The access code is Kelvor-Dane. It is kept by the warden of the north vault.\n")
    qa = tmp_path / "qa.jsonl"
    qa.write_text(json.dumps({"document": "vault.md", "question": "What is the access code?",
                              "answer": "Kelvor-Dane"}) + "\n")
    return {"docs": str(tmp_path), "qa": str(qa)}


CASES: list[tuple[str, dict[str, Any], int, float]] = [
    ("niah", {}, 1024, 0.5), ("niah", {"variant": "multikey"}, 1024, 0.5),
    ("niah", {"variant": "multivalue"}, 1024, 0.5), ("niah", {"variant": "multiquery"}, 1024, 0.5),
    ("multihop", {}, 1024, 0.3), ("vartrack", {}, 1024, 0.5), ("aggregation", {}, 1024, 0.5),
    ("aggregation", {"variant": "common-words"}, 1024, 0.5), ("mrcr", {}, 2048, 0.5), ("graphwalks", {}, 2048, 0.5),
    ("phonebook", {"unit": "entries", "needles": [4]}, 40, 0.0),
    *[("ruler", {"task": task}, 1024, 0.5) for task in (
        "niah_single_1", "niah_single_2", "niah_single_3", "niah_multikey_1", "niah_multikey_2", "niah_multikey_3",
        "niah_multivalue", "niah_multiquery", "vt", "cwe", "fwe")],
    ("documents", {}, 512, 0.5), ("nolima", {}, 1024, 0.5),
    ("updates", {}, 1024, 0.5), ("longout", {"answer_tokens": [150]}, 2048, 0.5),
    ("instructions", {"count": [11], "placement": "both"}, 1024, 0.5),
]


def _needle_set(tmp_path: Path) -> dict[str, Any]:
    """A NoLiMa-layout needle set whose question shares its words with the needle: a
    lexical reader (the sim) finds it; a latent-hop needle it would miss."""
    entry = {"id": "0500", "system_prompt": "", "needle": "The vault code is {1}.",
             "questions": {"direct": "What is the vault code?"},
             "tests": {"T01": {"input_args": ["8812"], "gold_answers": ["8812"]}}}
    path = tmp_path / "needle_set.json"
    path.write_text(json.dumps([entry]))
    return {"needle_set": str(path)}


def _setup(family: str, tmp_path: Path) -> dict[str, Any]:
    return _documents(tmp_path) if family == "documents" else _needle_set(tmp_path) if family == "nolima" else {}


@pytest.mark.parametrize("family, params, length, depth", CASES)
def test_only_the_family_s_own_skill_recognises_its_question(family: str, params: dict[str, Any], length: int,
                                                             depth: float, tmp_path: Path) -> None:
    """Each family's prompt, read as the sim reads it: its own skill answers it (correctly),
    every other family's skill says it is not of its kind."""
    ctx = BuildContext(tokenizer=resolve_tokenizer("approx"), haystack=None)
    params = {**params, **_setup(family, tmp_path)}
    fam = make_family(family, ctx)
    for rep in range(2):
        case = fam.generate(Cell(family, length, depth), rep, seed=11 + rep, params=validate_params(family, params))
        view = view_prompt(case.messages)
        recognised = [name for name, skill in skills() if skill(view.question, view.context) is not None]
        assert recognised == [family]
        assert fam.score(case, answer(view.question, view.context) or "").score == 1.0


def test_the_family_list_covers_every_built_in_family() -> None:
    assert {family for family, *_ in CASES} == {e.name for e in registry.entries("families") if e.origin == "ctxprobe"}
    assert set(family_names()) >= {family for family, *_ in CASES}


class _Shout:
    """A plugin family's class (the sim never loads it: it reads the entry's skill)."""

    name = "shout"


def _shout_skill(question: str, context: str) -> str | None:
    if not question.startswith("Shout the word"):
        return None
    return context.split()[-1].upper()


def test_a_plugin_family_brings_its_skill_on_its_entry() -> None:
    """Registered in code with ``sim_skill=``: sim:perfect answers the family's question."""
    sim = resolve_provider("sim:perfect", resolve_tokenizer("approx"))
    request = GenerateRequest([{"role": "user", "content": "filler filler zebra\n\nShout the word above."}],
                              max_tokens=16)
    assert asyncio.run(sim.generate(request)).text == NOT_FOUND  # no family knows the question yet
    registry.register("families", "shout", _Shout, origin="test", sim_skill=_shout_skill)
    try:
        assert asyncio.run(sim.generate(request)).text == "ZEBRA"
    finally:
        registry.unregister("families", "shout")
    assert asyncio.run(sim.generate(request)).text == NOT_FOUND


def test_a_skill_that_cannot_be_loaded_is_one_line() -> None:
    registry.register("families", "broken", _Shout, origin="test", sim_skill="ctxprobe_no_such_module:skill")
    try:
        with pytest.raises(CtxprobeError, match=r"^family 'broken': its sim skill cannot be loaded from "
                                                r"ctxprobe_no_such_module:skill: .*$"):
            answer("any question", "any context")
    finally:
        registry.unregister("families", "broken")
