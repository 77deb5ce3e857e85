"""Reader for a local copy of LongMemEval's JSON (``xiaowu0162/LongMemEval``:
``longmemeval_s_cleaned.json``, ``longmemeval_oracle.json``...: a list of objects with
``question_id``, ``question_type``, ``question``, ``answer``, ``question_date``,
``haystack_dates``, ``haystack_session_ids``, ``haystack_sessions`` (each session a list of
``{"role", "content"}`` turns, evidence turns marked ``has_answer``) and
``answer_session_ids``).

Each item becomes one ``documents`` case of an instance pack, its prompt built as
LongMemEval's long-context baseline builds it (``src/generation/run_generation.py``,
``prepare_prompt`` with ``full-history-session``, every session kept, ``useronly`` false):
the sessions sorted by their date string (a stable sort), ``has_answer`` dropped from the
turns, each session written ``\\n### Session N:\\nSession Date: D\\nSession Content:\\n`` then
its turns (``json``: a newline and ``json.dumps`` of the turn list; ``nl``: ``\\n\\nrole:
content`` per turn, content stripped), and the history, ``question_date`` and ``question``
put into the reading template (``con``: step by step, the README's recommendation;
``direct``: plain). The reply is graded by LongMemEval's judge prompt for the question's
type and read yes/no (:mod:`ctxprobe.scores.longmemeval`) through the sweep's judge
(``--judge MODEL``; ``match: judge``). Nothing is downloaded.

Cells: the length is the power-of-two bin holding the prompt's tokens (as for MRCR),
depth 0; LongMemEval truncates a history over the model's window, ctxprobe refuses such a
prompt before sending.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from ctxprobe.core.case import Case, Cell
from ctxprobe.errors import CtxprobeError
from ctxprobe.scores.longmemeval import QUESTION_TYPES, is_abstention
from ctxprobe.haystack.published import bin_edge, read_json_rows

HistoryFormat = Literal["json", "nl"]
Reading = Literal["con", "direct"]

#: ``prepare_prompt``'s reading templates (no key expansion), by ``cot``.
TEMPLATES: dict[str, str] = {
    "con": ("I will give you several history chats between you and a user. Please answer the question based on the "
            "relevant chat history. Answer the question step by step: first extract all the relevant information, "
            "and then reason over the information to get the answer.\n\n\nHistory Chats:\n\n{}\n\nCurrent Date: "
            "{}\nQuestion: {}\nAnswer (step by step):"),
    "direct": ("I will give you several history chats between you and a user. Please answer the question based on "
               "the relevant chat history.\n\n\nHistory Chats:\n\n{}\n\nCurrent Date: {}\nQuestion: {}\nAnswer:"),
}
#: ``run_generation.py``'s ``gen_length``: 800 tokens with ``cot``, 500 without.
MAX_NEW_TOKENS = {"con": 800, "direct": 500}
FIELDS = ("question_id", "question_type", "question", "answer", "question_date", "haystack_dates",
          "haystack_sessions")


def history(item: dict[str, Any], history_format: HistoryFormat = "json") -> str:
    """The ``History Chats`` block of one item."""
    chunks = [(date, [{k: v for k, v in turn.items() if k != "has_answer"} for turn in session])
              for date, session in zip(item["haystack_dates"], item["haystack_sessions"])]
    chunks.sort(key=lambda chunk: chunk[0])
    out = ""
    for i, (date, session) in enumerate(chunks):
        if history_format == "json":
            text = "\n" + json.dumps(session)
        else:
            text = "".join("\n\n{}: {}".format(turn["role"], turn["content"].strip()) for turn in session)
        out += "\n### Session {}:\nSession Date: {}\nSession Content:\n{}\n".format(i + 1, date, text)
    return out


def longmemeval_prompt(item: dict[str, Any], history_format: HistoryFormat = "json", reading: Reading = "con") -> str:
    return TEMPLATES[reading].format(history(item, history_format), item["question_date"], item["question"])


def _check(p: Path, i: int, item: Any) -> None:
    if not isinstance(item, dict):
        raise CtxprobeError(f"{p} item {i}: not an object of LongMemEval's layout")
    missing = [k for k in FIELDS if k not in item]
    if missing:
        raise CtxprobeError(f"{p} item {i}: lacks the field(s) {', '.join(missing)} of LongMemEval's layout")
    if not isinstance(item["question_id"], str) or not isinstance(item["question"], str):
        raise CtxprobeError(f"{p} item {i}: question_id and question must be strings")
    if item["question_type"] not in QUESTION_TYPES:
        raise CtxprobeError(f"{p} item {i}: question_type {item['question_type']!r} is not one of LongMemEval's "
                            f"({', '.join(QUESTION_TYPES)})")
    dates, sessions = item["haystack_dates"], item["haystack_sessions"]
    if not isinstance(dates, list) or not isinstance(sessions, list) or len(dates) != len(sessions) or not sessions:
        raise CtxprobeError(f"{p} item {i}: haystack_dates and haystack_sessions must be lists of one length, "
                            "not empty")
    for s, session in enumerate(sessions):
        if not isinstance(dates[s], str) or not isinstance(session, list) or not all(
                isinstance(t, dict) and isinstance(t.get("role"), str) and isinstance(t.get("content"), str)
                for t in session):
            raise CtxprobeError(f"{p} item {i} session {s}: a date string and a list of {{role, content}} turns")


def read_longmemeval(path: str | Path) -> list[dict[str, Any]]:
    p = Path(path)
    data = read_json_rows(p, "LongMemEval's JSON: a list of items")  # evaluate_qa.py also reads JSON lines
    if not isinstance(data, list):
        raise CtxprobeError(f"{p} is not LongMemEval's JSON: expected a list of items")
    for i, item in enumerate(data):
        _check(p, i, item)
    return data


def longmemeval_cases(path: str | Path, tokenizer: Any, *, history_format: HistoryFormat = "json",
                      reading: Reading = "con") -> Iterator[Case]:
    for i, item in enumerate(read_longmemeval(path)):
        messages = [{"role": "user", "content": longmemeval_prompt(item, history_format, reading)}]
        tokens = tokenizer.count_chat(messages)
        budget = MAX_NEW_TOKENS[reading]
        meta = {"source": "xiaowu0162/LongMemEval", "file": Path(path).name, "row": i,
                "question_id": item["question_id"], "question_type": item["question_type"],
                "abstention": is_abstention(item["question_id"]), "question_date": item["question_date"],
                "answer_session_ids": item.get("answer_session_ids"), "sessions": len(item["haystack_sessions"]),
                "question": item["question"], "aliases": [], "match": "judge", "rule": "longmemeval",
                "history_format": history_format, "reading": reading, "tokens_to_generate": budget}
        yield Case(Cell("documents", bin_edge(tokens), 0.0), i, 0, messages, ["{}".format(item["answer"])],
                   meta=meta, token_count=tokens, max_tokens=budget)
