"""Reader for a local copy of LongBench v2's JSON (``THUDM/LongBench-v2``'s ``data.json``:
a list of objects with ``_id``, ``domain``, ``sub_domain``, ``difficulty``, ``length``,
``question``, ``choice_A`` .. ``choice_D``, ``answer``, ``context``).

Each item becomes one ``documents`` case of an instance pack, its prompt built exactly as
LongBench v2's ``pred.py`` builds it from ``prompts/0shot.txt`` (the context and each field
stripped, substituted into the template) and sent unchanged; it is scored by LongBench v2's
rule (:func:`ctxprobe.scores.originals.longbench_v2_extract`: the extracted letter equals
``answer``), through the ``documents`` family's multiple-choice path (``meta.choices``).
Nothing is downloaded. LongBench v2 truncates a prompt longer than the model's window to its
first and last halves; ctxprobe does not: the cell's length is the power-of-two bin holding
the prompt's tokens (as for MRCR), and a prompt over the window is refused before sending.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ctxprobe.core.case import Case, Cell
from ctxprobe.errors import CtxprobeError
from ctxprobe.haystack.published import bin_edge

#: LongBench v2's ``prompts/0shot.txt``.
TEMPLATE_0SHOT = (
    "Please read the following text and answer the question below.\n\n<text>\n$DOC$\n</text>\n\n"
    "What is the correct answer to this question: $Q$\nChoices:\n(A) $C_A$\n(B) $C_B$\n(C) $C_C$\n(D) $C_D$\n\n"
    'Format your response as follows: "The correct answer is (insert answer here)".')
FIELDS = ("_id", "question", "choice_A", "choice_B", "choice_C", "choice_D", "answer", "context")
MAX_NEW_TOKENS = 128  # pred.py's output limit without chain of thought


def longbench_prompt(item: dict[str, Any]) -> str:
    """pred.py's substitution, in its order."""
    return (TEMPLATE_0SHOT.replace("$DOC$", item["context"].strip()).replace("$Q$", item["question"].strip())
            .replace("$C_A$", item["choice_A"].strip()).replace("$C_B$", item["choice_B"].strip())
            .replace("$C_C$", item["choice_C"].strip()).replace("$C_D$", item["choice_D"].strip()))


def read_longbench_v2(path: str | Path) -> list[dict[str, Any]]:
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except OSError as err:
        raise CtxprobeError(f"cannot read {p}: {err.strerror or err}") from None
    except json.JSONDecodeError as err:
        raise CtxprobeError(f"{p} is not LongBench v2's JSON ({err.msg}): a list of items") from None
    if not isinstance(data, list):
        raise CtxprobeError(f"{p} is not LongBench v2's JSON: expected a list of items")
    for i, item in enumerate(data):
        missing = [k for k in FIELDS if not isinstance(item, dict) or not isinstance(item.get(k), str)]
        if missing:
            raise CtxprobeError(f"{p} item {i}: lacks the field(s) {', '.join(missing)} of LongBench v2's layout")
        if item["answer"] not in ("A", "B", "C", "D"):
            raise CtxprobeError(f"{p} item {i}: answer {item['answer']!r} is not A, B, C or D")
    return data


def longbench_v2_cases(path: str | Path, tokenizer: Any) -> Iterator[Case]:
    for i, item in enumerate(read_longbench_v2(path)):
        messages = [{"role": "user", "content": longbench_prompt(item)}]
        tokens = tokenizer.count_chat(messages)
        meta = {"source": "THUDM/LongBench-v2", "file": Path(path).name, "row": i, "_id": item["_id"],
                "domain": item.get("domain"), "sub_domain": item.get("sub_domain"),
                "difficulty": item.get("difficulty"), "length": item.get("length"),
                "question": item["question"].strip(),
                "choices": [item[f"choice_{k}"].strip() for k in "ABCD"], "aliases": [],
                "tokens_to_generate": MAX_NEW_TOKENS}
        yield Case(Cell("documents", bin_edge(tokens), 0.0), i, 0, messages, [item["answer"]], meta=meta,
                   token_count=tokens, max_tokens=MAX_NEW_TOKENS)
