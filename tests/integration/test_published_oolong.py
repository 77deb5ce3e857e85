"""Oolong's rows as a pack: messages as its eval_script_batched.py sends them, scored by its
rules (abertsch72/oolong src/eval/eval_helpers.py), checked against a re-implementation
written here from that file and against hand-worked values."""

from __future__ import annotations

import ast
import json
import re
from datetime import datetime
from pathlib import Path

import pytest
from dateutil import parser as dateparser

from ctxprobe.cli import main
from ctxprobe.errors import CtxprobeError
from ctxprobe.scores.oolong import dnd_score, synth_parse, synth_score
from ctxprobe.store import iter_export
from ctxprobe.sweep.packs import load_pack, run_pack
from ctxprobe.sweep.published import write_published_pack


def _their_synth(answer: str, answer_type: str, output: str) -> float:
    """synth_attempt_answer_parse + synth_process_response, from eval_helpers.py."""
    if ":" not in output:
        trimmed = output if len(output) < 20 else output.split()[-1]
    else:
        trimmed = output.split(":")[-1].strip().replace("*", "").replace("[", "").replace("]", "")
        if len(trimmed) >= 20:
            for phrase in ("more common", "less common", "same frequency"):
                if phrase in trimmed:
                    trimmed = phrase
                    break
    gold = (ast.literal_eval(answer)[0] if "datetime" not in answer
            else datetime.strptime(answer, "[datetime.date(%Y, %m, %d)]"))
    if str(trimmed) == str(gold):
        return 1
    if str(trimmed) in ["more common", "less common", "same frequency"]:
        return 1 if str(trimmed) in str(gold) else 0
    if answer_type == "ANSWER_TYPE.NUMERIC":
        try:
            return 0.75 ** abs(int(gold) - int(trimmed))
        except Exception:
            return 0
    if answer_type == "ANSWER_TYPE.DATE":
        try:
            return float(dateparser.parse(trimmed) == gold)
        except Exception:
            return 0
    return 0


def _their_dnd(answer, output: str) -> float:
    """dnd_parse_answer, dnd_parse_response, dnd_process_response, from eval_helpers.py."""
    def parse(a):
        try:
            return int(a)
        except ValueError:
            pass
        return [x.strip() for x in a.split(",") if x.strip()] if "," in a else a

    gold = parse(answer)
    m = re.search(r"\\boxed\{\\text\{([^}]*)\}\}", output) or re.search(r"\\boxed[\{]+([^}]*)[\}]+", output)
    got = parse(m.group(1)) if m else output
    if isinstance(gold, int) and isinstance(got, int):
        return 0.75 ** abs(gold - got)
    if isinstance(gold, str) and isinstance(got, str):
        return float(gold.strip().lower() == got.strip().lower())
    if isinstance(gold, list) and isinstance(got, list):
        return len(set(gold) & set(got)) / len(gold) if gold else 0.0
    return 0.0


NUMERIC = "ANSWER_TYPE.NUMERIC"
SYNTH = [  # (answer field, answer type, reply, hand-worked score)
    ("[12]", NUMERIC, "Answer: 12", 1.0),
    ("[12]", NUMERIC, "Answer: 13", 0.75),  # off by one
    ("[12]", NUMERIC, "Answer: 10", 0.5625),  # off by two
    ("[1]", NUMERIC, "Answer: 12", 0.75 ** 11),  # the gold inside a longer number: read as 12
    ("[1000]", NUMERIC, "Answer: 1,000", 0.0),  # a formatted number is no int
    ("[1000]", NUMERIC, "Answer: 1_000", 1.0),  # Python's int reads underscores
    ("[1000]", NUMERIC, "Answer: 1000.0", 0.0),
    ("[3]", NUMERIC, "The answer is **3**", 0.0),  # no colon, 20+ characters: the last word, stars kept
    ("[3]", NUMERIC, "Answer: **3**", 1.0),  # OpenAI models bold the answer
    ("[3]", NUMERIC, "Answer: [3]", 1.0),  # Anthropic models put it in []
    ("[3]", NUMERIC, "3", 1.0),  # short, no colon: kept whole
    ("[3]", NUMERIC, "There are 3", 0.0),  # under 20 characters, no colon: kept whole, no int
    ("[3]", NUMERIC, "After counting all of them, 3", 1.0),  # long, no colon: its last word
    ("[3]", NUMERIC, "Answer: 3 instances", 0.0),
    ("[3]", NUMERIC, "Count: 5. Answer: 3", 1.0),  # after the last colon
    ("[3]", NUMERIC, "", 0.0),
    ("['spam']", "ANSWER_TYPE.LABEL", "Label: spam", 1.0),
    ("['spam']", "ANSWER_TYPE.LABEL", "Label: Spam", 0.0),  # labels are case-sensitive
    ("['spam']", "ANSWER_TYPE.LABEL", "Label: spam.", 0.0),
    ("['more common than ham']", "ANSWER_TYPE.COMPARISON",
     "Answer: spam is more common than ham in the data", 1.0),  # 20+ characters: cut to the phrase
    ("['less common than']", "ANSWER_TYPE.COMPARISON", "Answer: more common", 0.0),
    ("['more common than']", "ANSWER_TYPE.COMPARISON", "Answer: more common", 1.0),  # inside the gold
    ("[datetime.date(2023, 5, 1)]", "ANSWER_TYPE.DATE", "Date: 2023-05-01", 1.0),
    ("[datetime.date(2023, 5, 1)]", "ANSWER_TYPE.DATE", "Date: May 1, 2023", 1.0),
    ("[datetime.date(2023, 5, 1)]", "ANSWER_TYPE.DATE", "Date: 2023-05-02", 0.0),
    ("[datetime.date(2023, 5, 1)]", "ANSWER_TYPE.DATE", "Date: the first of May", 0.0),
    ("['2023-05-01']", "ANSWER_TYPE.USER", "User: 2023-05-01", 1.0),
]


@pytest.mark.parametrize("answer,answer_type,reply,score", SYNTH)
def test_synth_rule(answer: str, answer_type: str, reply: str, score: float) -> None:
    ours = synth_score(answer, answer_type, reply)[0]
    assert ours == pytest.approx(score)
    assert ours == pytest.approx(_their_synth(answer, answer_type, reply))


def test_synth_parse_confidence() -> None:
    assert synth_parse("3") == ("3", "low")
    assert synth_parse("Answer: 3") == ("3", "vhigh")
    assert synth_parse("Result: a label of some length") == ("a label of some length", "med")
    assert synth_parse("Answer: it is more common than the other") == ("more common", "high")


DND = [  # (answer, reply, hand-worked score)
    ("7", "So the total is \\boxed{7}.", 1.0),
    ("7", "\\boxed{8}", 0.75),
    (7, "\\boxed{{5}}", 0.5625),
    ("7", "The answer is 7", 0.0),  # no box: the reply is a string, the gold an int
    ("Fireball", "\\boxed{\\text{fireball }}", 1.0),
    ("Fireball", "fireball", 1.0),  # no box, but the whole reply equals a string gold
    ("Fireball", "\\boxed{Fire Bolt}", 0.0),
    ("Jester, Fjord, Caleb", "\\boxed{\\text{Caleb, Jester}}", 2 / 3),
    ("Jester, Fjord", "\\boxed{Jester, Fjord, Beau}", 1.0),
    ("Jester, Fjord", "\\boxed{Jester}", 0.0),  # a string against a list
]


@pytest.mark.parametrize("answer,reply,score", DND)
def test_real_rule(answer, reply: str, score: float) -> None:
    ours = dnd_score(answer, reply)[0]
    assert ours == pytest.approx(score)
    assert ours == pytest.approx(_their_dnd(answer, reply))


def _synth_rows() -> list[dict]:
    window = "\n".join(f"Date: Jan {d}, 2023 || User: {u} || Instance: {t}" for d, u, t in
                       [(1, 11, "win a free phone now"), (2, 12, "see you at lunch"), (3, 11, "cheap pills here")])
    base = {"context_window_id": 70, "context_window_text": window, "context_len": 1200, "dataset": "spam",
            "task_group": "counting", "input_subset": "False", "num_labels": 2}
    return [
        {**base, "id": 1, "question": "How many data points are labelled spam? Answer: number", "answer": "[2]",
         "answer_type": NUMERIC, "task": "TASK_TYPE.COUNT"},
        {**base, "id": 2, "question": "Which label is most common? Label: answer", "answer": "['spam']",
         "answer_type": "ANSWER_TYPE.LABEL", "task": "TASK_TYPE.MOST_FREQ"},
        {**base, "id": 3, "question": "On which date was the last spam message? Date: answer",
         "answer": "[datetime.date(2023, 1, 3)]", "answer_type": "ANSWER_TYPE.DATE", "task": "TASK_TYPE.DATE"},
    ]


@pytest.mark.parametrize("fmt", ["jsonl", "json", "parquet"])
def test_a_synth_file_runs_and_scores_like_its_rule(tmp_path: Path, fmt: str) -> None:
    rows = _synth_rows()
    data = tmp_path / f"oolong-synth.{fmt}"
    if fmt == "parquet":
        pa = pytest.importorskip("pyarrow")
        pytest.importorskip("pyarrow.parquet").write_table(pa.Table.from_pylist(rows), data)
    else:
        data.write_text("\n".join(json.dumps(r) for r in rows) if fmt == "jsonl" else json.dumps(rows))
    pack = tmp_path / "pack.jsonl"
    assert main(["import-published", "oolong-synth", str(data), "-o", str(pack), "--tokenizer", "local"]) == 0
    cases = [pc.case for pc in load_pack(pack)]
    assert cases[0].messages == [
        {"role": "system", "content": "You are a helpful assistant.\n\n" + rows[0]["context_window_text"]},
        {"role": "user", "content": rows[0]["question"]}]
    assert [c.expected for c in cases] == [["[2]"], ["['spam']"], ["[datetime.date(2023, 1, 3)]"]]
    assert cases[1].meta["rule"] == "oolong-synth" and cases[1].meta["task"] == "TASK_TYPE.MOST_FREQ"
    assert cases[1].meta["source"] == "oolongbench/oolong-synth" and cases[1].meta["id"] == "2"
    store = tmp_path / "s.sqlite"
    result = run_pack(str(pack), model="sim:perfect", store_path=store, progress=False)
    stored = list(iter_export(result.run_id, store))
    assert len(stored) == 3
    types = {c.case_id: c.meta["answer_type"] for c in cases}
    for row in stored:
        assert row["score"] == pytest.approx(_their_synth(row["expected"][0], types[row["case_id"]], row["output"]))


def test_a_real_file_scores_like_its_rule(tmp_path: Path) -> None:
    rows = [{"id": "a", "context_window_id": "w", "context_window_text": "Return the final answer in \\boxed{}.\n\n"
             "TRAVIS: I cast Fireball.", "question": "How many spells were cast?", "answer": 1},
            {"id": "b", "context_window_id": "w", "context_window_text": "x", "question": "Who cast spells?",
             "answer": "Travis, Laura"}]
    data = tmp_path / "dnd.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in rows))
    pack = tmp_path / "pack.jsonl"
    assert write_published_pack("oolong-real", data, pack, "local") == 2
    cases = [pc.case for pc in load_pack(pack)]
    assert [c.expected for c in cases] == [["1"], ["Travis, Laura"]]
    from ctxprobe.families.documents.task import Documents
    from ctxprobe.haystack.context import BuildContext
    from ctxprobe.tokenizers import resolve_tokenizer

    family = Documents(BuildContext(tokenizer=resolve_tokenizer("local"), haystack=None))
    scored = family.score(cases[0], "\\boxed{2}")
    assert scored.score == 0.75 and scored.outcome == "partial" and scored.detail["parse_confidence"] == "high"
    assert family.score(cases[1], "\\boxed{Laura}").outcome == "wrong"  # a string against a list
    assert family.score(cases[1], "\\boxed{Laura, Sam}").score == 0.5
    assert family.score(cases[0], "").outcome == "empty"
    assert family.score(cases[0], "\\boxed{1}").outcome == "correct"


DROP = object()


@pytest.mark.parametrize("split,change,message", [
    ("oolong-synth", {"answer_type": DROP}, "lacks the field.s. answer_type"),
    ("oolong-synth", {"answer": "two"}, "neither a Python list nor"),
    ("oolong-synth", {"answer": 2}, "is not a string"),
    ("oolong-real", {"answer": None}, "neither a string nor an integer"),
    ("oolong-real", {"answer": [1]}, "neither a string nor an integer"),
    ("oolong-real", {"question": DROP}, "lacks the field.s. question"),
])
def test_bad_rows_are_one_line_errors(tmp_path: Path, split: str, change: dict, message: str) -> None:
    row = {**_synth_rows()[0], **change}
    row = {k: v for k, v in row.items() if v is not DROP}
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps(row))
    with pytest.raises(CtxprobeError, match=message):
        write_published_pack(split, data, tmp_path / "p.jsonl", "local")


def test_the_cli_offers_every_set_the_writer_reads() -> None:
    import argparse

    from ctxprobe.cli.imports import add_import_parsers
    from ctxprobe.sweep.published import published_set, set_names

    sub = argparse.ArgumentParser().add_subparsers()
    add_import_parsers(sub)
    (choices,) = [a.choices for a in sub.choices["import-published"]._actions if a.dest == "set"]
    assert tuple(choices) == set_names()
    assert {published_set(name)[0] for name in set_names()} == {"documents", "graphwalks", "mrcr"}
    with pytest.raises(CtxprobeError, match="unknown published set 'oolong'"):
        write_published_pack("oolong", "x.jsonl", "p.jsonl", "local")


def test_replies_from_a_served_model_score_by_the_rule(tmp_path: Path) -> None:
    """An OpenAI-compatible loopback server (tests/helpers/fake_llm_apis.py, the published
    response shape) answers each question from a script; the request carries the
    original's messages and the stored scores are Oolong's."""
    from fake_llm_apis import FakeServer, openai_route

    script = {"How many": "I count them.\nAnswer: 3", "Which label": "Label: **spam**",
              "On which date": "Date: January 3, 2023"}
    seen: list[dict] = []

    def route(method: str, path: str, headers: dict, body: dict):
        status, payload, extra = openai_route(method, path, headers, {**body, "model": "ok"})
        question = str((body.get("messages") or [{}])[-1].get("content", ""))
        reply = next((v for k, v in script.items() if question.startswith(k)), None)
        if reply is not None:  # a case (the sweep's probe gets the server's plain answer)
            seen.append(body)
            payload["choices"][0]["message"]["content"] = reply
            # usage is optional (openai.types.chat.ChatCompletion.usage: Optional); the fake's fixed
            # counts would read as a truncated prompt
            del payload["usage"]
        return status, payload, extra

    rows = _synth_rows()
    data = tmp_path / "oolong-synth.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in rows))
    pack = tmp_path / "pack.jsonl"
    write_published_pack("oolong-synth", data, pack, "local")
    with FakeServer(route) as server:
        result = run_pack(str(pack), model=f"openai-compat:oolong@{server.url}/v1", store_path=tmp_path / "s.sqlite",
                          progress=False)
    assert len(seen) == 3
    assert [{"role": "system", "content": "You are a helpful assistant.\n\n" + rows[0]["context_window_text"]},
            {"role": "user", "content": rows[0]["question"]}] in [b["messages"] for b in seen]
    scores = {r["output"]: (r["score"], r["outcome"]) for r in iter_export(result.run_id, tmp_path / "s.sqlite")}
    assert scores == {"I count them.\nAnswer: 3": (0.75, "partial"), "Label: **spam**": (1.0, "correct"),
                      "Date: January 3, 2023": (1.0, "correct")}
