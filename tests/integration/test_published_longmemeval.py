"""LongMemEval's JSON as a pack: prompts as its run_generation.py builds them (full history,
sessions), graded by its judge prompts and yes/no reading. The original's templates are
written out whole here (xiaowu0162/LongMemEval src/evaluation/evaluate_qa.py,
get_anscheck_prompt; src/generation/run_generation.py, prepare_prompt) and the prompts and
readings re-derived from them, not from ctxprobe's code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxprobe.cli import main
from ctxprobe.core.case import Case, Cell
from ctxprobe.errors import CtxprobeError
from ctxprobe.grading.judge import JudgeScorer
from ctxprobe.scores.longmemeval import QUESTION_TYPES, anscheck_prompt, judge_says_yes
from ctxprobe.sim.judge import SimJudge
from ctxprobe.store import iter_export
from ctxprobe.sweep.packs import load_pack, run_pack
from ctxprobe.families.documents.task_longmemeval import longmemeval_prompt

_STEPS = ("I will give you a question, a correct answer, and a response from a model. Please answer yes if the response "
          "contains the correct answer. Otherwise, answer no. If the response is equivalent to the correct answer or "
          "contains all the intermediate steps to get the correct answer, you should also answer yes. If the response "
          "only contains a subset of the information required by the answer, answer no. ")
THEIRS = {
    "single-session-user": _STEPS + "\n\nQuestion: {}\n\nCorrect Answer: {}\n\nModel Response: {}\n\n"
    "Is the model response correct? Answer yes or no only.",
    "temporal-reasoning": _STEPS + "In addition, do not penalize off-by-one errors for the number of days. If the "
    "question asks for the number of days/weeks/months, etc., and the model makes off-by-one errors (e.g., predicting "
    "19 days when the answer is 18), the model's response is still correct. \n\nQuestion: {}\n\nCorrect Answer: {}"
    "\n\nModel Response: {}\n\nIs the model response correct? Answer yes or no only.",
    "knowledge-update": "I will give you a question, a correct answer, and a response from a model. Please answer yes "
    "if the response contains the correct answer. Otherwise, answer no. If the response contains some previous "
    "information along with an updated answer, the response should be considered as correct as long as the updated "
    "answer is the required answer.\n\nQuestion: {}\n\nCorrect Answer: {}\n\nModel Response: {}\n\nIs the model "
    "response correct? Answer yes or no only.",
    "single-session-preference": "I will give you a question, a rubric for desired personalized response, and a "
    "response from a model. Please answer yes if the response satisfies the desired response. Otherwise, answer no. "
    "The model does not need to reflect all the points in the rubric. The response is correct as long as it recalls "
    "and utilizes the user's personal information correctly.\n\nQuestion: {}\n\nRubric: {}\n\nModel Response: {}\n\n"
    "Is the model response correct? Answer yes or no only.",
    "abstention": "I will give you an unanswerable question, an explanation, and a response from a model. Please "
    "answer yes if the model correctly identifies the question as unanswerable. The model could say that the "
    "information is incomplete, or some other information is given but the asked information is not.\n\nQuestion: "
    "{}\n\nExplanation: {}\n\nModel Response: {}\n\nDoes the model correctly identify the question as unanswerable? "
    "Answer yes or no only.",
}
THEIRS["single-session-assistant"] = THEIRS["multi-session"] = THEIRS["single-session-user"]


@pytest.mark.parametrize("qtype", QUESTION_TYPES)
@pytest.mark.parametrize("abstention", [False, True])
def test_judge_prompt_is_the_originals(qtype: str, abstention: bool) -> None:
    args = ("How many {days} since my trip?", 18, "It was 19 days.\n\nSo: 19")  # braces, an int answer, paragraphs
    theirs = THEIRS["abstention" if abstention else qtype].format(*args)
    assert anscheck_prompt(qtype, args[0], str(args[1]), args[2], abstention) == theirs


def test_unknown_question_type_is_refused() -> None:
    with pytest.raises(CtxprobeError, match="no judge prompt for question type 'open-domain'"):
        anscheck_prompt("open-domain", "q", "a", "r")


@pytest.mark.parametrize("reply,said", [
    ("yes", True), ("Yes.", True), ("YES", True), ("  yes\n", True), ("Yes, the response is correct.", True),
    ("no, not yes", True), ("Yesterday", True), ("eyes", True),  # a substring test, as the original's
    ("no", False), ("No.", False), ("", False), ("y", False), ("Yeah", False), ("ye s", False), ("Correct", False)])
def test_yes_reading(reply: str, said: bool) -> None:
    assert judge_says_yes(reply) is said
    assert judge_says_yes(reply) == ("yes" in reply.strip().lower())  # evaluate_qa.py


def _their_prompt(entry: dict, history_format: str, cot: bool) -> str:
    """prepare_prompt for orig-session, every session, useronly false, no key expansion."""
    if cot:
        template = ("I will give you several history chats between you and a user. Please answer the question based "
                    "on the relevant chat history. Answer the question step by step: first extract all the relevant "
                    "information, and then reason over the information to get the answer.\n\n\nHistory Chats:\n\n{}"
                    "\n\nCurrent Date: {}\nQuestion: {}\nAnswer (step by step):")
    else:
        template = ("I will give you several history chats between you and a user. Please answer the question based "
                    "on the relevant chat history.\n\n\nHistory Chats:\n\n{}\n\nCurrent Date: {}\nQuestion: {}\n"
                    "Answer:")
    entry = json.loads(json.dumps(entry))
    chunks = list(zip(entry["haystack_dates"], entry["haystack_sessions"]))[-1000:]
    for _, session in chunks:
        for turn in session:
            turn.pop("has_answer", None)
    chunks.sort(key=lambda x: x[0])
    history = ""
    for i, (date, session) in enumerate(chunks):
        if history_format == "json":
            sess = "\n" + json.dumps(session)
        else:
            sess = ""
            for turn in session:
                sess += "\n\n{}: {}".format(turn["role"], turn["content"].strip())
        history += "\n### Session {}:\nSession Date: {}\nSession Content:\n{}\n".format(i + 1, date, sess)
    return template.format(history, entry["question_date"], entry["question"])


def _items() -> list[dict]:
    dog = [{"role": "user", "content": "My dog is named Rex.", "has_answer": True},
           {"role": "assistant", "content": " Congratulations on the new dog!  "}]
    cafe = [{"role": "user", "content": "Where can I get a good café au lait?"},
            {"role": "assistant", "content": "Try a local roaster.\n"}]
    tea = [{"role": "user", "content": "I like green tea."}, {"role": "assistant", "content": "Green tea is lovely."}]
    return [
        {"question_id": "e47becba", "question_type": "single-session-user", "question": "What is the name of my dog?",
         "answer": "Rex", "question_date": "2023/05/30 (Tue) 23:40",
         "haystack_session_ids": ["s_dog", "s_cafe", "s_tea"],
         "haystack_dates": ["2023/05/20 (Sat) 02:21", "2023/05/01 (Mon) 09:00", "2023/05/20 (Sat) 02:21"],
         "haystack_sessions": [dog, cafe, tea], "answer_session_ids": ["s_dog"]},
        {"question_id": "gpt4_2655b836_abs", "question_type": "temporal-reasoning",
         "question": "How many days passed between buying my car and selling it?", "answer": 
         "The information provided is not enough. You did not mention buying a car.",
         "question_date": "2023/06/01 (Thu) 10:00", "haystack_session_ids": ["s_tea"],
         "haystack_dates": ["2023/05/02 (Tue) 08:00"], "haystack_sessions": [tea], "answer_session_ids": []},
        {"question_id": "c4a1ceb8", "question_type": "multi-session", "question": "How many dogs do I have?",
         "answer": 1, "question_date": "2023/06/01 (Thu) 10:00", "haystack_session_ids": ["s_tea"],
         "haystack_dates": ["2023/05/02 (Tue) 08:00"], "haystack_sessions": [tea], "answer_session_ids": []},
    ]


@pytest.mark.parametrize("history_format", ["json", "nl"])
@pytest.mark.parametrize("reading", ["con", "direct"])
def test_prompt_is_run_generations(history_format: str, reading: str) -> None:
    for item in _items():
        before = json.dumps(item)
        ours = longmemeval_prompt(item, history_format, reading)  # type: ignore[arg-type]
        assert ours == _their_prompt(item, history_format, reading == "con")
        assert json.dumps(item) == before  # the item is not changed (has_answer stays in the data)
    first = longmemeval_prompt(_items()[0])
    # sorted by date, equal dates kept in file order; has_answer gone; json.dumps escapes non-ASCII
    assert first.index("Where can I get") < first.index("My dog is named Rex") < first.index("I like green tea")
    assert "has_answer" not in first and "caf\\u00e9" in first


def _write(tmp_path: Path, items: list[dict]) -> Path:
    data = tmp_path / "longmemeval_s_cleaned.json"
    data.write_text(json.dumps(items))
    return data


def test_a_longmemeval_file_runs_and_is_judged_like_the_original(tmp_path: Path) -> None:
    data = _write(tmp_path, _items())
    pack = tmp_path / "pack.jsonl"
    assert main(["import-published", "longmemeval", str(data), "-o", str(pack), "--tokenizer", "local",
                 "--judge", "sim-judge:fair"]) == 0
    cases = [pc.case for pc in load_pack(pack)]
    assert [c.meta["question_id"] for c in cases] == ["e47becba", "gpt4_2655b836_abs", "c4a1ceb8"]
    assert [c.meta["abstention"] for c in cases] == [False, True, False]
    assert cases[2].expected == ["1"] and cases[0].max_tokens == 800
    assert {c.meta["match"] for c in cases} == {"judge"} and {c.cell.family for c in cases} == {"documents"}
    assert cases[0].messages[0]["content"] == _their_prompt(_items()[0], "json", True)
    store = tmp_path / "s.sqlite"
    result = run_pack(str(pack), model="sim:perfect", store_path=store, progress=False)
    rows = {r["case_id"]: r for r in iter_export(result.run_id, store)}
    assert len(rows) == 3
    for row in rows.values():
        assert row["score"] == float("yes" in row["detail"]["judge_reply"].lower())
    by_qid = {c.meta["question_id"]: rows[c.case_id] for c in cases}
    assert "Rex" in by_qid["e47becba"]["output"] and by_qid["e47becba"]["score"] == 1.0
    # the sim finds nothing about a car and says so: the abstention question is answered right
    assert by_qid["gpt4_2655b836_abs"]["score"] == 1.0
    assert by_qid["c4a1ceb8"]["score"] == 0.0


class _Recorder(SimJudge):
    """Records what the judge is sent and answers from a script."""

    def __init__(self, reply: str) -> None:
        super().__init__("fair")
        self.reply, self.sent = reply, []

    async def generate(self, request):  # type: ignore[override]
        self.sent.append(request)
        r = await super().generate(request)
        r.text = self.reply
        return r


@pytest.mark.parametrize("reply,score", [("Yes", 1.0), ("no", 0.0), ("Yesterday, maybe", 1.0), ("N", 0.0)])
def test_the_judge_is_sent_the_originals_prompt_and_read_yes_no(reply: str, score: float) -> None:
    item = _items()[1]
    case = Case(Cell("documents", 4096, 0.0), 0, 0, [{"role": "user", "content": "x"}], [item["answer"]],
                meta={"question": item["question"], "question_type": item["question_type"], "abstention": True,
                      "rule": "longmemeval", "match": "judge", "aliases": []})
    judge = _Recorder(reply)
    scored = JudgeScorer(judge, None, force=True).score(case, "  I don't know about a car.\n")
    assert scored.score == score and scored.detail["judge_reply"] == reply
    (request,) = judge.sent
    assert request.max_tokens == 10 and request.temperature == 0.0
    assert request.messages == [{"role": "user", "content": THEIRS["abstention"].format(
        item["question"], item["answer"], "I don't know about a car.")}]


def test_without_a_judge_the_pack_is_refused(tmp_path: Path) -> None:
    pack = tmp_path / "pack.jsonl"
    assert main(["import-published", "longmemeval", str(_write(tmp_path, _items()[:1])), "-o", str(pack),
                 "--tokenizer", "local"]) == 0
    with pytest.raises(CtxprobeError, match="--judge MODEL"):
        run_pack(str(pack), model="sim:perfect", store_path=tmp_path / "s.sqlite", progress=False)


@pytest.mark.parametrize("change,message", [
    ({"question_type": "open-domain"}, "question_type 'open-domain' is not one of"),
    ({"haystack_dates": []}, "haystack_dates and haystack_sessions must be lists of one length"),
    ({"haystack_sessions": [[{"role": "user"}], [], []]}, "session 0: a date string and a list of"),
])
def test_bad_items_are_one_line_errors(tmp_path: Path, change: dict, message: str) -> None:
    from ctxprobe.sweep.published import write_published_pack

    data = _write(tmp_path, [{**_items()[0], **change}])
    with pytest.raises(CtxprobeError, match=message):
        write_published_pack("longmemeval", data, tmp_path / "p.jsonl", "local")
    item = _items()[0]
    del item["question_date"]
    data.write_text(json.dumps([item]))
    with pytest.raises(CtxprobeError, match="lacks the field.s. question_date"):
        write_published_pack("longmemeval", data, tmp_path / "p.jsonl", "local")


def test_sim_judges_answer_longmemeval_prompts() -> None:
    import asyncio

    from ctxprobe.models.base import GenerateRequest

    def ask(kind: str, qtype: str, answer: str, response: str, abstention: bool = False) -> str:
        prompt = anscheck_prompt(qtype, "Which city did I move to?", answer, response, abstention)
        judge = SimJudge(kind, 10) if kind == "length-biased" else SimJudge(kind)
        return asyncio.run(judge.generate(GenerateRequest([{"role": "user", "content": prompt}], 10))).text

    assert ask("fair", "knowledge-update", "Quilport", "You moved to Quilport last spring.") == "Yes."
    assert ask("fair", "knowledge-update", "Quilport", "You moved to Varnby.") == "No."
    assert ask("fair", "single-session-preference", "Suggest hikes near Quilport", "Try Quilport.") == "No."
    assert ask("fair", "multi-session", "You did not say.", "I could not find it.", abstention=True) == "Yes."
    assert ask("fair", "multi-session", "You did not say.", "Varnby.", abstention=True) == "No."
    long = "You moved to Varnby, I believe, after thinking about it for a long while."
    assert ask("fair", "temporal-reasoning", "Quilport", long) == "No."
    assert ask("length-biased", "temporal-reasoning", "Quilport", long) == "Yes."



def test_a_served_judge_gets_the_originals_request(tmp_path: Path) -> None:
    """The judge as an OpenAI-compatible loopback server (tests/helpers/fake_llm_apis.py):
    the prompt, temperature 0 and the 10-token limit go on the wire; its replies are read
    yes/no."""
    from fake_llm_apis import FakeServer, openai_route

    asked: list[dict] = []

    def route(method: str, path: str, headers: dict, body: dict):
        status, payload, extra = openai_route(method, path, headers, {**body, "model": "ok"})
        prompt = str((body.get("messages") or [{}])[-1].get("content", ""))
        if prompt.endswith("Answer yes or no only."):
            asked.append(body)
            payload["choices"][0]["message"]["content"] = "Yes" if "Rex" in prompt.split("Model Response:")[1] else "no"
        else:  # calibration prompts: not this judge's business here (the run forces it)
            payload["choices"][0]["message"]["content"] = "GRADE: INCORRECT"
        return status, payload, extra

    pack = tmp_path / "pack.jsonl"
    write = ["import-published", "longmemeval", str(_write(tmp_path, _items())), "-o", str(pack), "--tokenizer", "local"]
    assert main(write) == 0
    with FakeServer(route) as server:
        result = run_pack(str(pack), model="sim:perfect", store_path=tmp_path / "s.sqlite", progress=False,
                          judge=f"openai-compat:judge@{server.url}/v1", force_judge=True)
    assert len(asked) == 3
    assert {b.get("temperature") for b in asked} == {0.0}
    assert {b.get("max_tokens", b.get("max_completion_tokens")) for b in asked} == {10}
    rex = next(b for b in asked if "What is the name of my dog?" in b["messages"][0]["content"])
    assert rex["messages"] == [{"role": "user", "content": THEIRS["single-session-user"].format(
        "What is the name of my dog?", "Rex", rex["messages"][0]["content"].split("Model Response: ")[1]
        .removesuffix("\n\nIs the model response correct? Answer yes or no only."))}]
    scores = sorted((r["score"], r["detail"]["judge_reply"]) for r in iter_export(result.run_id, tmp_path / "s.sqlite"))
    assert scores == [(0.0, "no"), (0.0, "no"), (1.0, "Yes")]
