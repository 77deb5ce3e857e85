"""Optional members are declared once, with their defaults, and a plugin that does not
inherit the base class gets them at the boundary (registry load, resolve_provider,
resolve_tokenizer); the CLI reads spec keys and presets from the library."""

from __future__ import annotations

import pytest

from ctxprobe.core import registry
from ctxprobe.core.family import FamilyBase, with_family_defaults
from ctxprobe.errors import CtxprobeError
from ctxprobe.models.base import ProviderBase, with_provider_defaults
from ctxprobe.tokenizers.base import TokenizerBase, with_tokenizer_defaults


class BareFamily:  # a plugin family that inherits nothing
    name = "bare"

    def check_reps(self, params: object) -> list[int]:
        return [3]


class BareTokenizer:
    name = "bare"

    def encode(self, text: str) -> list[int]:
        return [len(w) for w in text.split()]

    def encode_chat(self, messages: list[dict[str, str]]) -> list[int]:
        return [0, *self.encode(" ".join(m["content"] for m in messages))]


class Slotted:
    __slots__ = ("name",)


def test_family_without_the_base_gets_the_defaults_and_keeps_its_own():
    cls = with_family_defaults(BareFamily)
    assert issubclass(cls, FamilyBase) and issubclass(cls, BareFamily) and cls.__name__ == "BareFamily"
    fam = cls()
    assert fam.check_reps(None) == [3]  # its own wins
    assert fam.sized_in_tokens(None) is True and fam.cell_tokens(77, None, seed=1) == 77
    assert cls.length_includes_output is False and cls.output_budget({}) is None and cls.answer_items({}) == 1
    assert with_family_defaults(FamilyBase) is FamilyBase  # an inheriting class is left as it is


def test_registry_load_fills_a_plugin_familys_defaults():
    registry.register("families", "bare-test", BareFamily, origin="test")
    try:
        loaded = registry.load("families", "bare-test")
        assert issubclass(loaded, FamilyBase) and loaded().uses_judge(None) is False
    finally:
        registry.unregister("families", "bare-test")


def test_tokenizer_without_the_base_gets_counts_from_its_encodes():
    tok = with_tokenizer_defaults(BareTokenizer())
    assert tok.count("ab cde") == 2 and tok.count_many(["a", "b c"]) == [1, 2]
    assert tok.count_segments(["a b c"]) == [3]
    assert list(tok.encode_chat_compact([{"role": "user", "content": "xy"}])) == [0, 2]
    assert tok.count_chat([{"role": "user", "content": "xy z"}]) == 3
    assert tok.is_approximate is False and tok.warning is None and tok.trained_context is None
    assert tok.observe("x", 3) is None


def test_provider_without_the_base_gets_its_defaults():
    class Bare:
        name = "bare"

    p = with_provider_defaults(Bare())
    assert p.ids_policy == "compact" and p.preflight is None and p.trained_context is None
    assert dict(p.served_model_info) == {} and p.tokenizer is None and p.max_concurrency is None


def test_an_object_that_cannot_take_the_defaults_is_a_one_line_error():
    with pytest.raises(CtxprobeError, match="inherit ctxprobe.models.base.ProviderBase"):
        with_provider_defaults(Slotted())
    with pytest.raises(CtxprobeError, match="inherit ctxprobe.tokenizers.base.TokenizerBase"):
        with_tokenizer_defaults(Slotted())


def test_builtins_inherit_their_bases():
    from ctxprobe.sim.model import SimModel
    from ctxprobe.core.family_lookup import family_class, family_names
    from ctxprobe.tokenizers.approx import ApproxTokenizer

    assert all(issubclass(family_class(n), FamilyBase) for n in family_names())
    assert issubclass(SimModel, ProviderBase) and issubclass(ApproxTokenizer, TokenizerBase)


def test_family_rules_come_from_the_family():
    from ctxprobe.plan.grid import family_output_budget
    from ctxprobe.spec import answer_items

    assert family_output_budget("ruler", {"task": "vt"}) == 30  # RULER's tokens_to_generate for variable tracking
    assert family_output_budget("ruler", {"task": "niah_single_1"}) == 128
    assert family_output_budget("ruler", {"task": "no-such-task"}) is None
    assert family_output_budget("niah", {}) is None and family_output_budget("no-such-family", {}) is None
    assert answer_items("niah", {"variant": "multivalue"}) == 4 and answer_items("niah", {}) == 1
    assert answer_items("vartrack", {"hops": 2}) == 3 and answer_items("aggregation", {"variant": "frequent-words"}) == 3
    assert answer_items("no-such-family", {}) == 1


def test_spec_keys_are_the_specs_fields_and_each_has_a_run_flag():
    from ctxprobe.cli import build_parser
    from ctxprobe.spec import Spec, spec_keys

    keys = spec_keys()
    # too_short: what the families as built need (set by the sweep, not a flag)
    assert set(keys) == set(Spec.model_fields) - {"families", "decoding", "layout", "too_short"}
    args = build_parser().parse_args(["run", "--model", "sim:perfect"])
    assert [k for k in keys if not hasattr(args, k)] == []


def test_ruler_preset_is_registered_beside_its_family():
    preset = registry.load("presets", "ruler")
    fams = preset.families({"docs": None, "qa_squad": None, "qa_hotpot": None})
    assert len(fams) == 11 and {f["family"] for f in fams.values()} == {"ruler"}
    assert preset.keeps_layout and "qa_1" in (preset.notice({}) or "")


def test_report_hooks_are_the_familys_and_default_to_nothing():
    from ctxprobe.report.hooks import NO_HOOKS, FamilyReportHooks, family_hooks

    assert family_hooks("bare-unknown") is NO_HOOKS
    assert family_hooks("niah") is NO_HOOKS  # the generic report says all niah needs
    book = family_hooks("phonebook")
    assert isinstance(book, FamilyReportHooks) and book.own_terminal and not book.ruler_predictions
    assert NO_HOOKS.json_extra([{"family": "x"}]) is None and NO_HOOKS.html_data([]) is None




def test_a_plugin_familys_hooks_reach_the_json_report(tmp_path, monkeypatch):
    """A plugin family names its hooks by path on its declaration; the loader asks them,
    generic code never names the family."""
    import sys
    import types

    import ctxprobe
    from ctxprobe.report.hooks import FamilyReportHooks
    from ctxprobe.core.declaration import FamilyDeclaration
    from ctxprobe.families.niah.task import Niah

    class Counts(FamilyReportHooks):
        def json_extra(self, records):  # type: ignore[no-untyped-def]
            return {"cases": sum(1 for _ in records)}

    module = types.ModuleType("scratch_hooks")
    module.HOOKS = Counts()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "scratch_hooks", module)
    counted = type("Counted", (Niah,), {"name": "counted"})
    registry.register("families", "counted", FamilyDeclaration("counted", counted, report_hooks="scratch_hooks:HOOKS"),
                      origin="test")
    try:
        spec = ctxprobe.make_spec({"model": "sim:perfect", "families": {"counted": {}}, "lengths": "1k",
                                   "depths": "0,1", "reps": 2})
        run_id = ctxprobe.run_sweep(spec, tmp_path / "s.sqlite", progress=False).run_id
        as_json = ctxprobe.load_report(run_id, tmp_path / "s.sqlite").to_dict()
        assert as_json["counted"] == {"cases": 4}
        module.HOOKS = object()  # type: ignore[attr-defined]  # not a FamilyReportHooks: one line
        with pytest.raises(CtxprobeError, match="must be a ctxprobe.report.hooks.FamilyReportHooks"):
            ctxprobe.load_report(run_id, tmp_path / "s.sqlite")
    finally:
        registry.unregister("families", "counted")
