"""One pack line type (core/pack.py) written by export and import-published and read by
run --cases: a line round-trips exactly, a variant's sample survives it (the exporter once
dropped it, so a sampled case read back as edited), and one changed character is caught."""

from __future__ import annotations

import json

import pytest

from ctxprobe.core.case import Case, Cell
from ctxprobe.core.pack import PACK_FORMAT, PackLine


def _case(sample: int | None = None, budget: int | None = None) -> Case:
    return Case(Cell("niah", 1024, 0.5, budget), 2, 77, [{"role": "user", "content": "The key is 4417. Key?"}],
                ["4417"], ["9001"], {"question": "Key?"}, token_count=12, needle_token_pos=3, realised_depth=0.5,
                sample=sample)


@pytest.mark.parametrize("sample,budget", [(None, None), (0, None), (3, 1024)])
def test_a_line_round_trips_and_is_not_edited(sample: int | None, budget: int | None) -> None:
    case = _case(sample, budget)
    line = PackLine.of_case(case, tokenizer="approx", spec={"model": "m"}, chat_template_hash="abc",
                            ctxprobe_version="9")
    written = json.loads(json.dumps(line.to_json(), sort_keys=True))
    assert written["pack_format"] == PACK_FORMAT and written["case_id"] == case.case_id
    assert ("sample" in written) == (sample is not None)
    back = PackLine.from_json(written)
    assert back.case == case and back.edited() is None
    assert (back.tokenizer, back.spec, back.chat_template_hash, back.ctxprobe_version) == ("approx", {"model": "m"},
                                                                                          "abc", "9")
    assert back.to_json() == written


def test_an_edit_of_one_character_or_a_missing_hash_is_named() -> None:
    written = PackLine.of_case(_case(), tokenizer="approx", spec={}, chat_template_hash=None).to_json()
    for key, value, why in ((("expected",), ["4418"], "content_hash"),
                            (("messages",), [{"role": "user", "content": "The key is 4417. Key!"}], "prompt_hash"),
                            (("rep",), 3, "not its case_id"), (("content_hash",), None, "no content_hash")):
        edited = {**written, key[0]: value}
        assert why in (PackLine.from_json(edited).edited() or ""), key
    for bad, why in (({**written, "pack_format": 2}, "pack_format 1 expected"),
                     ({k: v for k, v in written.items() if k != "spec"}, "missing spec"),
                     ({**written, "rep": "two"}, "malformed case"), ([], "not a ctxprobe pack line")):
        with pytest.raises(ValueError, match=why):
            PackLine.from_json(bad)


def test_a_registered_published_set_is_written_through_the_one_pack_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A family declares its published sets; the one writer finds a plugin's as it finds
    ctxprobe's, and the pack names the declaring family."""
    from ctxprobe.core import registry
    from ctxprobe.core.declaration import FamilyDeclaration
    from ctxprobe.haystack.published import PublishedSet
    from ctxprobe.sweep.packs import load_pack
    from ctxprobe.sweep.published import set_names, write_published_pack

    assert set_names() == ("longbench-v2", "longmemeval", "oolong-synth", "oolong-real", "graphwalks", "mrcr")
    demo = PublishedSet("demo-set", lambda path, tok, options: iter([_case(sample=1)]), natural=True)
    registry.register("families", "demo-docs", FamilyDeclaration("demo-docs", "ctxprobe.families.documents.task:Documents",
                                                                 published_sets={"demo-set": demo}), origin="test")
    try:
        assert "demo-set" in set_names()
        n = write_published_pack("demo-set", tmp_path / "rows.json", tmp_path / "p.jsonl", "approx")
        (read,) = load_pack(tmp_path / "p.jsonl")
        assert n == 1 and read.case == _case(sample=1) and not read.edited and read.source_run_id is None
        assert read.spec["families"] == {"demo-docs": {"docs": str(tmp_path), "qa": str(tmp_path / "rows.json")}}
    finally:
        registry.unregister("families", "demo-docs")


def test_a_sampled_variants_export_runs_back_as_exported(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A variant sent k times per case exports each sample as its own line; the pack reads
    back unedited, each sample its own case id (the exporter once left the sample out)."""
    from ctxprobe.report.export import write_pack
    from ctxprobe.spec import make_spec
    from ctxprobe.spec.variants import expand_variants, parse_variants
    from ctxprobe.sweep.packs import load_pack
    from ctxprobe.sweep.run import run_sweep

    families = expand_variants({"niah": {}}, parse_variants("t0:temperature=0, t07:temperature=0.7+samples=2"))
    spec = make_spec({"model": "sim:perfect", "tokenizer": "approx", "lengths": "512", "depths": "0",
                      "reps": 1, "families": families})
    run_id = run_sweep(spec, tmp_path / "s.sqlite", progress=False).run_id
    assert write_pack(run_id, tmp_path / "s.sqlite", tmp_path / "p.jsonl") == 3
    read = load_pack(tmp_path / "p.jsonl")
    assert sorted(c.case.sample for c in read if c.case.sample is not None) == [0, 1]
    assert not any(c.edited for c in read) and len({c.case.case_id for c in read}) == 3
