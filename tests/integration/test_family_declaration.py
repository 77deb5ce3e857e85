"""A family is one declaration (core/declaration.py): its class, sim skill, report hooks,
command and presets, registered once through the registry; and one loader of
``"module:attr"`` paths (core/loader.py) serves every path the registry holds."""

from __future__ import annotations

import sys
import types

import pytest

from ctxprobe.core import registry
from ctxprobe.core.declaration import FIELDS, PARTS, FamilyDeclaration, declare
from ctxprobe.core.family import FamilyBase
from ctxprobe.core.loader import load_path, resolve
from ctxprobe.errors import CtxprobeError
from ctxprobe.families import nolima


def test_the_loader_reads_dotted_attributes_and_fails_in_one_line() -> None:
    assert load_path("ctxprobe.core.family:FamilyBase.sized_in_tokens", what="x") == FamilyBase.sized_in_tokens
    assert resolve(len, what="x") is len and resolve("ctxprobe.core.loader:resolve", what="x") is resolve
    for bad, why in (("ctxprobe_no_such:x", "No module named"), ("ctxprobe.core.loader:nope", "nope"),
                     ("ctxprobe.core.loader", "not a 'module:attr' path"), (":x", "not a 'module:attr' path")):
        with pytest.raises(CtxprobeError, match=rf"^the thing cannot be loaded from {bad}: .*{why}"):
            load_path(bad, what="the thing")


def test_a_moved_family_is_its_packages_declaration() -> None:
    entry = registry.get("families", "nolima")
    assert entry.target is nolima.FAMILY and entry.declaration() is nolima.FAMILY
    cls = entry.load()
    assert cls.__module__ == "ctxprobe.families.nolima.task" and cls.name == "nolima"
    assert nolima.FAMILY.load("sim_skill").__module__ == "ctxprobe.families.nolima.sim"
    assert nolima.FAMILY.load("report_hooks") is None and nolima.FAMILY.load("command") is None


def test_a_declarations_presets_are_registered_with_it() -> None:
    assert registry.get("presets", "ruler").load().name == "ruler"
    assert registry.get("families", "ruler").declaration().presets == {
        "ruler": "ctxprobe.families.ruler.task.preset:RULER_PRESET"}


class _Fam(FamilyBase):
    name = "declared-demo"


def test_registering_a_declaration_or_a_class_with_keywords_is_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("scratch_declared")
    module.PRESET = object()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "scratch_declared", module)
    declared = FamilyDeclaration("declared-demo", _Fam, sim_skill="scratch_declared:skill",
                                 presets={"declared-set": "scratch_declared:PRESET"})
    try:
        registry.register("families", "declared-demo", declared, origin="test")
        assert registry.load("families", "declared-demo") is _Fam
        assert registry.load("presets", "declared-set") is module.PRESET  # type: ignore[attr-defined]
        registry.register("families", "declared-demo", _Fam, origin="test", replace=True,
                          sim_skill="scratch_declared:skill")
        again = registry.get("families", "declared-demo").declaration()
        assert again == FamilyDeclaration("declared-demo", _Fam, sim_skill="scratch_declared:skill")
    finally:
        registry.unregister("families", "declared-demo")
        registry.unregister("presets", "declared-set")


def test_a_family_registered_by_path_alone_has_a_declaration_with_no_parts() -> None:
    try:
        registry.register("families", "by-path", "ctxprobe.families.niah.task:Niah", origin="test")
        assert registry.get("families", "by-path").declaration() == FamilyDeclaration(
            "by-path", registry.load("families", "niah").__mro__[0])
    finally:
        registry.unregister("families", "by-path")


def test_bad_declarations_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown part"):
        declare("x", _Fam, hooks="a:b")
    with pytest.raises(ValueError, match="declared as 'nolima' registered as 'other'"):
        declare("other", nolima.FAMILY)
    with pytest.raises(ValueError, match="give its parts on its declaration"):
        declare("nolima", nolima.FAMILY, sim_skill="a:b")
    with pytest.raises(ValueError, match="bad family name"):
        FamilyDeclaration(" x", _Fam)
    assert set(PARTS) == {"sim_skill", "report_hooks", "command", "presets", "sim_kinds", "published_sets"}
    assert set(FIELDS) == {"ability", "label_abilities", "prompt_layout", "instruction_phrase", "overlap", "named_bar",
                           "plain_retrieval", "task_defaults", "summary"}
    assert declare("x", _Fam, ability="reading", named_bar=0.5).named_bar == 0.5  # a field by keyword, as a part


def test_a_part_that_cannot_be_loaded_says_which_family_and_part() -> None:
    declared = FamilyDeclaration("ghost", "ctxprobe_no_such_module:Ghost", report_hooks="ctxprobe_no_such:HOOKS")
    with pytest.raises(CtxprobeError, match=r"^family 'ghost': its report hooks cannot be loaded from "
                                            r"ctxprobe_no_such:HOOKS: "):
        declared.load("report_hooks")


def _add_hello(sub: object) -> None:
    p = sub.add_parser("hello-family", help="a family's own command")  # type: ignore[attr-defined]
    p.add_argument("--who", default="world")
    p.set_defaults(func=lambda args, out, err: out.print(f"hello {args.who}") or 0)


def test_a_familys_command_is_a_subcommand_of_ctxprobe(capsys: pytest.CaptureFixture[str]) -> None:
    from ctxprobe.cli import build_parser, main

    assert "hello-family" not in build_parser().format_help()
    registry.register("families", "hello", FamilyDeclaration("hello", _Fam, command=_add_hello), origin="test")
    try:
        assert "hello-family" in build_parser().format_help()
        assert main(["hello-family", "--who", "nolima"]) == 0
        assert "hello nolima" in capsys.readouterr().out
    finally:
        registry.unregister("families", "hello")
    assert all(isinstance(d, FamilyDeclaration) for d in registry.declared_families())


def test_a_scorer_is_strict_or_a_family_with_a_scorer_of_its_own() -> None:
    from ctxprobe.report.hooks import check_scorer, family_hooks, rescoring_families

    assert rescoring_families() == ["ruler"] and family_hooks("ruler").rescores
    check_scorer("strict")
    check_scorer("ruler")
    for bad in ("phonebook", "rulr"):  # a family without a scorer of its own, a typo
        with pytest.raises(CtxprobeError, match=rf"^unknown scorer '{bad}': use strict \(default\) or ruler$"):
            check_scorer(bad)
