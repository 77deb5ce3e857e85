"""The ``instructions`` family (IFEval under load): IFEval's rules, strict and loose, each
with its boundary; the sims' known behaviour (perfect follows all, ``sim:capacity`` the
first n); and the re-score: a run exported with ``export --jsonl`` is scored again by
IFEval's own checker (lm-evaluation-harness's ``ifeval`` task) with identical verdicts."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from ctxprobe.core.case import Cell
from ctxprobe.core.outcome import Outcome
from ctxprobe.families.instructions import score_checks as checks, task_catalog as catalog
from ctxprobe.families.instructions.analysis import by_count, capacity
from ctxprobe.families.instructions.sim import compose
from ctxprobe.report.load import report_json
from ctxprobe.spec import make_spec
from ctxprobe.store import Store
from ctxprobe.sweep.run import run_sweep
from ctxprobe.haystack.context import BuildContext
from ctxprobe.core.family_lookup import make_family, validate_params
from ctxprobe.tokenizers import resolve_tokenizer


def _sweep(store: Path, model: str, params: dict, lengths: str = "1k", reps: int = 3, **more) -> str:
    spec = make_spec({"model": model, "tokenizer": "local", "lengths": lengths, "depths": "0.5", "reps": reps,
                      "families": {"instructions": params}, **more})
    return run_sweep(spec, store, progress=False).run_id


# -- IFEval's rules, each at its boundary ---------------------------------------------------

def test_rules_at_their_boundaries() -> None:
    c = checks.CHECKS
    assert c["punctuation:no_comma"]("a b c", {}) and not c["punctuation:no_comma"]("a, b", {})
    assert c["detectable_format:title"]("<<x>>", {}) and not c["detectable_format:title"]("<< >>", {})
    assert not c["detectable_format:title"]("<<a\nb>>", {})  # a title is on one line
    ps = c["detectable_content:postscript"]
    assert ps("hi\nP.S. bye", {"postscript_marker": "P.S."}) and ps("hi\np. s. bye", {"postscript_marker": "P.S."})
    assert not ps("hi\nPS bye", {"postscript_marker": "P.S."}) and ps("x\nP.P.S y", {"postscript_marker": "P.P.S"})
    kw = c["keywords:existence"]
    assert kw("a velvets b tundra", {"keywords": ["velvet", "tundra"]})  # IFEval's search: inside a word counts
    assert not kw("a velvet b", {"keywords": ["velvet", "tundra"]})
    fq = c["keywords:frequency"]
    assert fq("ember ember", {"keyword": "ember", "frequency": 2, "relation": "at least"})
    assert not fq("ember", {"keyword": "ember", "frequency": 2, "relation": "at least"})  # one short
    assert fq("ember", {"keyword": "ember", "frequency": 2, "relation": "less than"})
    fb = c["keywords:forbidden_words"]
    assert fb("the ponds", {"forbidden_words": ["pond"]}) and not fb("the Pond.", {"forbidden_words": ["pond"]})
    bl = c["detectable_format:number_bullet_lists"]
    assert bl("* a\n* b\n- c", {"num_bullets": 3}) and not bl("* a\n* b", {"num_bullets": 3})
    assert not bl("** a\n* b\n* c", {"num_bullets": 3})  # '**' opens no bullet
    end = c["startend:end_checker"]
    assert end('"text. Any other questions?"', {"end_phrase": "Any other questions?"})
    assert not end("Any other questions? Thanks", {"end_phrase": "Any other questions?"})
    ph = c["detectable_content:number_placeholders"]
    assert ph("[a] [b]", {"num_placeholders": 2}) and not ph("[a]", {"num_placeholders": 2})
    hl = c["detectable_format:number_highlighted_sections"]
    assert hl("*a* and *b*", {"num_highlights": 2}) and not hl("*a* and * *", {"num_highlights": 2})
    # '**a**': the single-star pattern finds only the empty '**' pairs, the double one finds it once
    assert hl("**a**", {"num_highlights": 1}) and not hl("**a**", {"num_highlights": 2})
    qu = c["startend:quotation"]
    assert qu(' "x" ', {}) and not qu('"', {}) and not qu('"x', {})


def test_strict_and_loose_as_ifeval_defines_them() -> None:
    ids, kws = ["startend:quotation", "detectable_format:title"], [{}, {}]
    # a first line of chat around the answer: strict fails, loose (the first line removed) passes
    strict, loose = checks.verdicts(ids, kws, 'Sure here it is:\n"<<t>>\nbody"')
    assert strict == [False, True] and loose == [True, True]
    strict, loose = checks.verdicts(["punctuation:no_comma"], [{}], "   ")
    assert strict == [False] and loose == [False]  # an empty reply follows nothing
    # IFEval drops kwargs whose value is empty before building the instruction
    assert checks.verdicts(["punctuation:no_comma"], [{"keywords": None}], "a")[0] == [True]


def test_every_type_reads_back_from_its_description() -> None:
    rng = random.Random(1)
    for _ in range(20):
        ids, kwargs = catalog.draw(rng, len(catalog.TYPES), ["roses", "hedge", "pond"])
        text = "\n".join(catalog.describe(i, k) for i, k in zip(ids, kwargs))
        assert [(i, k) for _, i, k in catalog.find_instructions(text)] == sorted(
            zip(ids, kwargs), key=lambda p: text.index(catalog.describe(*p)))


def test_keywords_sit_inside_no_word_the_note_uses() -> None:
    words = {w for topic, things in catalog.TOPICS for w in (*topic.split(), *things)} | set(catalog.NAMES)
    note = compose("Dana", "the garden", ["roses", "hedge", "pond"], []).lower()
    for k in catalog.KEYWORDS:
        assert not any(k in w.lower() for w in words) and k not in note
        assert not any(k != o and k in o for o in catalog.KEYWORDS)


def test_plain_note_breaks_every_type_and_each_instruction_alone_is_met() -> None:
    rng = random.Random(5)
    for _ in range(30):
        ids, kwargs = catalog.draw(rng, len(catalog.TYPES), ["roses", "hedge", "pond"])
        plain = compose("Dana", "the garden", ["roses", "hedge", "pond"], [])
        assert checks.verdicts(ids, kwargs, plain) == ([False] * len(ids), [False] * len(ids))
        for i, k in zip(ids, kwargs):
            alone = compose("Dana", "the garden", ["roses", "hedge", "pond"], [(i, k)])
            assert checks.verdicts([i], [k], alone)[0] == [True]
        both = compose("Dana", "the garden", ["roses", "hedge", "pond"], list(zip(ids, kwargs)))
        assert checks.verdicts(ids, kwargs, both)[0] == [True] * len(ids)


# -- the family ----------------------------------------------------------------------------

def _case(params: dict, no_context: bool = False, length: int = 1024):
    ctx = BuildContext(tokenizer=resolve_tokenizer("approx"), haystack=None, no_context=no_context)
    fam = make_family("instructions", ctx)
    return fam, fam.generate(Cell("instructions", length, 0.5), 0, seed=2, params=validate_params("instructions", params))


def test_placement_puts_the_instructions_where_asked() -> None:
    for placement, in_system, in_user in (("start", True, False), ("end", False, True), ("both", True, True)):
        _, case = _case({"count": [4], "placement": placement})
        system, user = case.messages[0]["content"], case.messages[1]["content"]
        first = catalog.describe(case.meta["instruction_id_list"][0], case.meta["kwargs"][0])
        assert (first in system) == in_system and (first in user) == in_user
        assert user.rstrip().endswith(case.meta["prompt"])  # the request is the last paragraph
        assert case.messages[0]["role"] == "system"


def test_no_context_twin_has_no_instruction() -> None:
    fam, case = _case({"count": [6], "placement": "both"}, no_context=True)
    text = "\n".join(m["content"] for m in case.messages)
    assert catalog.find_instructions(text) == [] and case.meta["no_context"]
    assert len(case.meta["instruction_id_list"]) == 6


def test_perfect_follows_everything_from_1k_to_8k(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    run_id = _sweep(store, "sim:perfect", {"count": [1, 6, 11], "placement": "both"}, lengths="1k,2k,4k,8k")
    report = report_json([run_id], store)
    assert all(length["mean"] >= 0.99 for length in report["profiles"][0]["lengths"])
    points = report["instructions"]["instructions"]["points"]
    assert [p["instructions"] for p in points] == [1, 6, 11] and all(p["prompt_level_loose_acc"] == 1.0 for p in points)


def test_capacity_sim_s_truth_is_recovered(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    counts = [1, 2, 3, 5, 8]
    run_id = _sweep(store, "sim:capacity?n=3", {"count": counts}, lengths="1k,2k", reps=10)
    with Store(store) as s:
        points = by_count(s.iter_case_records(run_id))["instructions"]
    assert [p.count for p in points] == counts
    for p in points:
        assert p.inst_strict == pytest.approx(min(1.0, 3 / p.count))
        assert p.prompt_strict == (1.0 if p.count <= 3 else 0.0)
    assert capacity(points) == 3


def test_capacity_is_walked_at_the_report_s_bar() -> None:
    from ctxprobe.families.instructions.analysis import at_bars

    points = [{"instructions": n, "prompt_level_strict_acc": acc} for n, acc in ((1, 1.0), (3, 0.75), (6, 0.5))]
    extra = {"instructions": {"threshold": 0.856, "instruction_capacity": 1, "points": points}}
    for bar, cap in ((0.75, 3), (0.7501, 1), (0.5, 6), (1.0, 1), (1.0001, None)):
        got = at_bars(extra, {"instructions": bar})["instructions"]
        assert got["instruction_capacity"] == cap and got["threshold"] == bar and got["points"] == points
    assert at_bars(extra, {}) == extra  # a label without a bar keeps its own


def test_the_floor_is_chance_compliance(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    run_id = _sweep(store, "sim:perfect", {"count": [3]}, baseline="no-context")
    with Store(store) as s:
        floors = [r for r in s.iter_case_records(run_id) if r["family"].endswith("@no-context")]
    assert floors and all(r["score"] == 0.0 for r in floors)  # the plain note breaks every type


def _ifeval():  # lm-evaluation-harness's IFEval task: its registry of instruction classes and its checker
    pytest.importorskip("lm_eval")
    from lm_eval.tasks.ifeval import instructions_registry, utils  # needs langdetect, immutabledict, nltk (dev extra)

    return instructions_registry, utils


def test_descriptions_are_ifeval_s_own() -> None:
    """Every description a case states is what IFEval's own instruction class writes for
    the stored kwargs (its ``build_description``: word lists sorted, for one)."""
    registry, _ = _ifeval()
    rng = random.Random(4)
    for _ in range(40):
        ids, kwargs = catalog.draw(rng, len(catalog.TYPES), ["roses", "hedge", "pond", "shed", "lawn"])
        for iid, kw in zip(ids, kwargs):
            theirs = registry.INSTRUCTION_DICT[iid](iid).build_description(**{k: v for k, v in kw.items() if v})
            assert catalog.describe(iid, kw) == theirs, iid


def test_ifeval_s_own_checker_rescores_the_exported_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """lm-evaluation-harness's IFEval checker (its ``ifeval`` task: the registry of
    instruction classes and its strict/loose functions) re-scores ``ctxprobe export --jsonl``
    of runs from the case meta's IFEval fields alone: every stored verdict, strict and
    loose, of every instruction of every case is IFEval's; so are ours on damaged copies of
    each reply; and every instruction the prompt states is in IFEval's own words."""
    from ctxprobe.cli import main

    registry, ifeval = _ifeval()
    store = tmp_path / "s.sqlite"
    runs = [_sweep(store, "sim:capacity?n=2", {"count": [1, 3, 6, 11]}, reps=16, seed=4),
            _sweep(store, "sim:perfect", {"count": [4, 11], "placement": "end"}, reps=4, seed=5, baseline="no-context"),
            _sweep(store, "sim:echo", {"count": [5]}, reps=2)]
    lines = []
    for i, run_id in enumerate(runs):
        path = tmp_path / f"{i}.jsonl"
        assert main(["export", run_id, "--jsonl", "-o", str(path), "--store", str(store)]) == 0
        lines += [json.loads(line) for line in path.read_text().splitlines()]
    capsys.readouterr()
    assert len(lines) == 16 + 4 + 4 + 2  # the floor twins too
    rng = random.Random(9)
    stored = compared = 0
    for row in lines:
        meta, text = row["meta"], row["output"]
        inp = ifeval.InputExample(key=0, instruction_id_list=meta["instruction_id_list"], prompt=meta["prompt"],
                                  kwargs=meta["kwargs"])
        # the verdicts the run stored, instruction by instruction, against IFEval's on the stored reply
        strict = ifeval.test_instruction_following_strict(inp, text)
        loose = ifeval.test_instruction_following_loose(inp, text)
        assert row["detail"]["strict"] == strict.follow_instruction_list, text
        assert row["detail"]["loose"] == loose.follow_instruction_list, text
        assert row["detail"]["prompt_strict"] == strict.follow_all_instructions
        assert row["detail"]["prompt_loose"] == loose.follow_all_instructions
        stored += len(meta["instruction_id_list"])
        prompt = "\n".join(m["content"] for m in row["messages"])
        said = [registry.INSTRUCTION_DICT[i](i).build_description(**{k: v for k, v in kw.items() if v})
                for i, kw in zip(meta["instruction_id_list"], meta["kwargs"])]
        assert all((d in prompt) != bool(meta.get("no_context")) for d in said)
        # damaged copies of the reply: first or last line gone, a comma or star added, cut, chat around it
        for reply in (text.split("\n", 1)[-1], text.rsplit("\n", 1)[0], text.replace(".", ",", 1), "*" + text + "*",
                      text[: rng.randrange(len(text) + 1)], "Sure:\n" + text + "\nDone"):
            ours = checks.verdicts(meta["instruction_id_list"], meta["kwargs"], reply)
            assert ifeval.test_instruction_following_strict(inp, reply).follow_instruction_list == ours[0], reply
            assert ifeval.test_instruction_following_loose(inp, reply).follow_instruction_list == ours[1], reply
            compared += len(ours[0])
    assert stored > 150 and compared > 900
    assert {iid for row in lines for iid in row["meta"]["instruction_id_list"]} == set(catalog.TYPES)
    both = [v for row in lines for v in row["detail"]["strict"]]
    assert True in both and False in both  # the runs hold followed and broken instructions alike
    assert {row["outcome"] for row in lines} >= {Outcome.CORRECT, Outcome.PARTIAL}
