"""Prompt layout: the instruction line's position and the depth-0 separator, for every
family that has an instruction line; recorded in the run identity (only when not the
default) and shown in the report. Expected prompts are written out here by hand."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import ctxprobe
from ctxprobe.errors import CtxprobeError
from ctxprobe.haystack import split_sentences
from ctxprobe.report.load import load_report
from ctxprobe.spec import PromptLayout, make_spec
from ctxprobe.sweep.run import run_sweep
from ctxprobe.core.case import Cell
from ctxprobe.haystack.context import BuildContext
from ctxprobe.core.family_lookup import make_family, validate_params
from ctxprobe.tokenizers import resolve_tokenizer

# The instructions as the families state them before the text, and as they must read after it.
BEFORE = {
    "niah": "A long text follows. Hidden in it are special magic numbers, each tied to a key. "
            "Find the one you are asked about.",
    "multihop": "A long text follows. Some of its sentences say who works where and where places of "
                "work are. Combine them to answer the question at the end.",
    "vartrack": "A long text follows. Hidden in it are variable assignments: each variable is set "
                "either to a number or to another variable, and then holds that variable's value.",
    "aggregation": "Below is a list of made-up words. Some words occur more often than others; "
                   "keep track of how often each one occurs.",
    "documents": "A long text follows. Somewhere in it is a document that answers the question at the "
                 "end; the rest of the text is unrelated.",
}
AFTER = {
    "niah": "The long text is above. Hidden in it are special magic numbers, each tied to a key. "
            "Find the one you are asked about.",
    "multihop": "The long text is above. Some of its sentences say who works where and where places of "
                "work are. Combine them to answer the question at the end.",
    "vartrack": "The long text is above. Hidden in it are variable assignments: each variable is set "
                "either to a number or to another variable, and then holds that variable's value.",
    "aggregation": "Above is a list of made-up words. Some words occur more often than others; "
                   "keep track of how often each one occurs.",
    "documents": "The long text is above. Somewhere in it is a document that answers the question at the "
                 "end; the rest of the text is unrelated.",
}
DOC = "The access code for the north vault is Kelvor-Dane. Staff rotate the code every season."


@pytest.fixture(scope="module")
def tok():
    return resolve_tokenizer("local")


def _params(family: str, tmp_path_factory) -> dict:
    if family == "documents":
        d = tmp_path_factory.mktemp("docs")
        (d / "vault.md").write_text(DOC + "\n")
        qa = d.parent / f"{d.name}-qa.jsonl"
        qa.write_text(json.dumps({"document": "vault.md", "question": "What is the access code for the north vault?",
                                  "answer": "Kelvor-Dane"}) + "\n")
        return {"docs": str(d), "qa": str(qa)}
    return {"vartrack": {"hops": 2, "chains": 2}, "multihop": {"distractors": 1}}.get(family, {})


def _case(tok, family: str, layout: PromptLayout, params: dict, length: int = 1024, depth: float = 0.5):
    fam = make_family(family, BuildContext(tok, None, layout))
    return fam.generate(Cell(family, length, depth), 0, seed=3, params=validate_params(family, params))


@pytest.mark.parametrize("family", sorted(BEFORE))
def test_every_family_places_its_instruction_where_the_layout_says(tok, family, tmp_path_factory) -> None:
    params = _params(family, tmp_path_factory)
    built = {pos: _case(tok, family, PromptLayout(instruction=pos), params) for pos in ("before", "after", "both", "none")}
    before = built["before"].messages[-1]["content"]
    question = before.rsplit("\n\n", 1)[1]
    # the default is the prompt as it was built before layouts existed: instruction, text, question
    assert before.startswith(BEFORE[family] + "\n\n") and AFTER[family] not in before
    for pos, case in built.items():
        content = case.messages[-1]["content"]
        head = {"before": BEFORE[family] + "\n\n", "both": BEFORE[family] + "\n\n"}.get(pos, "")
        tail = {"after": f"\n\n{AFTER[family]}", "both": f"\n\n{AFTER[family]}"}.get(pos, "") + f"\n\n{question}"
        assert content.startswith(head) and content.endswith(tail), pos
        hay = content[len(head): -len(tail)]
        # the text between holds no instruction, and (but aggregation's list) is filler and evidence only
        assert BEFORE[family] not in hay and AFTER[family] not in hay and hay.strip() == hay and hay
        assert case.messages[-1]["content"] == "\n\n".join(
            ([BEFORE[family]] if pos in ("before", "both") else []) + [hay]
            + ([AFTER[family]] if pos in ("after", "both") else []) + [question])
        assert tok.count_chat(case.messages) == case.token_count <= 1024
        assert case.expected == built["before"].expected  # same facts: only the frame moved


@pytest.mark.parametrize("family", ["niah", "multihop", "vartrack", "documents"])
def test_separator_keeps_filler_before_depth_zero(tok, family, tmp_path_factory) -> None:
    params = _params(family, tmp_path_factory)
    sep = 300
    plain = _case(tok, family, PromptLayout(instruction="none"), params, depth=0.0)
    case = _case(tok, family, PromptLayout(instruction="none", separator=sep), params, depth=0.0)
    needle = {"niah": lambda c: c.meta["needle"], "multihop": lambda c: c.meta["needle"],
              "vartrack": lambda c: f"{c.expected[0]} = {c.meta['value']}.", "documents": lambda c: DOC}[family]
    # without a separator the depth-0 evidence opens the text
    assert plain.messages[-1]["content"].startswith(needle(plain))
    content = case.messages[-1]["content"]
    lead = content[: content.index(needle(case))].strip()
    sentences = split_sentences(lead)
    # at least `sep` tokens of filler come first, and one sentence fewer would be short of it
    assert tok.count(" " + " ".join(sentences)) >= sep > tok.count(" " + " ".join(sentences[:-1]))
    assert case.realised_depth == 0.0
    assert tok.count_chat(case.messages) == case.token_count <= 1024


def test_separator_depths_span_the_text_after_it(tok) -> None:
    sep = 400
    layout = PromptLayout(instruction="none", separator=sep)
    for depth in (0.5, 1.0):
        case = _case(tok, "niah", layout, {}, length=2048, depth=depth)
        content = case.messages[-1]["content"]
        hay = content.rsplit("\n\n", 1)[0]
        at = hay.index(case.meta["needle"])
        sentences = split_sentences(hay[:at])
        lead = next(i for i in range(len(sentences) + 1) if tok.count(" " + " ".join(sentences[:i])) >= sep)
        before = tok.count(" " + " ".join(sentences[lead:]))
        after = tok.count(" " + hay[at + len(case.meta["needle"]):].strip())
        assert abs(before / (before + after) - depth) < 0.03
        assert abs(case.realised_depth - depth) < 0.03


def test_a_separator_that_leaves_no_room_is_a_one_line_error(tok) -> None:
    with pytest.raises(CtxprobeError, match="use lengths of at least"):
        _case(tok, "niah", PromptLayout(separator=1000), {}, length=1024)
    _case(tok, "niah", PromptLayout(separator=900), {}, length=1024)  # fits


def test_layout_is_in_the_run_identity_only_when_not_default() -> None:
    base = {"model": "sim:perfect", "tokenizer": "local", "lengths": "512"}
    default = make_spec(base)
    explicit = make_spec({**base, "layout": {"instruction": "before", "separator": 0}})
    assert "layout" not in default.identity(tokenizer="local", version="x")  # older run ids stay valid
    assert explicit.run_id(tokenizer="local", version="x") == default.run_id(tokenizer="local", version="x")
    ids = {make_spec({**base, "layout": lay}).run_id(tokenizer="local", version="x")
           for lay in ({"instruction": "after"}, {"instruction": "none"}, {"instruction": "both"}, {"separator": 64},
                       {"separator": "1k"})}
    assert len(ids) == 5 and default.run_id(tokenizer="local", version="x") not in ids
    assert make_spec({**base, "layout": {"separator": "1k"}}).layout.separator == 1024
    with pytest.raises(CtxprobeError, match="layout.instruction"):
        make_spec({**base, "layout": {"instruction": "middle"}})
    with pytest.raises(CtxprobeError, match="unknown spec key 'layout.position'"):
        make_spec({**base, "layout": {"position": "after"}})


@pytest.mark.parametrize("instruction", ["after", "none", "both"])
def test_sims_read_every_layout_and_the_report_states_it(tmp_path, instruction) -> None:
    spec = make_spec({"model": "sim:perfect", "tokenizer": "local", "lengths": "1k", "depths": "0,1", "reps": 1,
                      "families": {"niah": {"distractors": 2}, "multihop": {}, "vartrack": {}, "aggregation": {}},
                      "layout": {"instruction": instruction, "separator": 64}})
    store = tmp_path / "s.sqlite"
    result = run_sweep(spec, store, progress=False)
    report = load_report(result.run_id, store)
    assert len(report.profiles) == 4
    assert all(c.mean == 1.0 for p in report.profiles for c in p.cells)
    words = {"after": "instruction after the haystack", "none": "no instruction line",
             "both": "instruction before and after the haystack"}[instruction]
    assert report.to_dict()["prompt_layout"] == f"{words}, 64-token filler separator before depth 0"


def _cli(*args: str, cwd) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(Path(ctxprobe.__file__).parents[1])}  # the package under test
    return subprocess.run([sys.executable, "-m", "ctxprobe.cli", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300, env=env)


def test_cli_flags_record_the_layout_and_the_report_header_shows_it(tmp_path) -> None:
    run = _cli("run", "--details", "--model", "sim:perfect", "--tokenizer", "local", "--lengths", "512", "--depths", "0",
               "--reps", "1", "--instruction", "after", "--separator", "128", "--store", "s.sqlite", "--no-plots",
               "--no-progress", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "instruction after the haystack, 128-token filler separator before depth 0" in " ".join(run.stdout.split())
    run_id = json.loads(_cli("runs", "--json", "--store", "s.sqlite", cwd=tmp_path).stdout)[0]["run_id"]
    html = _cli("report", run_id, "--store", "s.sqlite", "--html", "r.html", cwd=tmp_path)
    assert html.returncode == 0, html.stderr
    page = (tmp_path / "r.html").read_text()
    assert "prompt layout" in page and "instruction after the haystack, 128-token filler separator" in page
    default = _cli("run", "--details", "--model", "sim:perfect", "--tokenizer", "local", "--lengths", "512", "--depths", "0",
                   "--reps", "1", "--store", "s.sqlite", "--no-plots", "--no-progress", cwd=tmp_path)
    assert "instruction before the haystack" in " ".join(default.stdout.split())
    ruler = _cli("run", "--details", "--model", "sim:perfect", "--preset", "ruler", "--instruction", "after", "--store", "r.sqlite",
                 cwd=tmp_path)
    assert ruler.returncode == 2 and "RULER's own prompt layout" in ruler.stderr and "Traceback" not in ruler.stderr
    (tmp_path / "spec.yaml").write_text("model: sim:perfect\nlayout: {instruction: none}\n")
    from_file = _cli("run", "--details", "spec.yaml", "--preset", "ruler", "--store", "r.sqlite", cwd=tmp_path)
    assert from_file.returncode == 2 and "RULER's own prompt layout" in from_file.stderr


def test_parallel_building_carries_the_layout() -> None:
    """Worker processes rebuild the families from BuildSettings: the layout must travel."""
    from ctxprobe.plan.grid import planned_cases
    from ctxprobe.cases.builder import build_cases

    spec = make_spec({"model": "sim:perfect", "tokenizer": "local", "lengths": "512,1k", "depths": "0,1", "reps": 1,
                      "families": {"niah": {}}, "layout": {"instruction": "after", "separator": 64}})
    planned = list(planned_cases(spec))
    serial = [c.messages for c in build_cases(spec, planned, workers=1)]
    parallel = [c.messages for c in build_cases(spec, planned, workers=2, lookahead=1)]
    assert parallel == serial
    assert all(m[-1]["content"].count(AFTER["niah"]) == 1 and BEFORE["niah"] not in m[-1]["content"] for m in parallel)
