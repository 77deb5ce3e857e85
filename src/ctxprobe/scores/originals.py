"""The published scoring rules of OpenAI MRCR, Google MRCR v2 and OpenAI GraphWalks.

Each function reproduces one rule as its source states it (see
docs/tasks-mrcr-graphwalks.md for the sources and how they differ), so a score ctxprobe
computes can stand beside a published one. Nothing here knows about cases: strings and
lists in, floats out.
"""

from __future__ import annotations

import difflib
import re

from ctxprobe.core.case_meta import EmptyGold, GraphwalksParse

# GraphwalksParse: how the last line of a GraphWalks reply is read (see :func:`graphwalks_parse`);
# EmptyGold: what an empty gold set scores when the parsed answer is empty too. Both are the
# values a case's meta holds (core.case_meta).
__all__ = ["EmptyGold", "GraphwalksParse", "graphwalks_parse", "longbench_v2_extract", "mrcr_v2_grade", "openai_mrcr_grade", "set_f1"]

_CARD_LIST = re.compile(r"Final Answer: ?\[.*\]")
_GROUP_LIST = re.compile(r"Final Answer:\s*\[(.*)\]")


def openai_mrcr_grade(response: str, answer: str, prefix: str) -> float:
    """OpenAI MRCR (the ``openai/mrcr`` dataset card): 0 unless ``response`` starts with
    ``prefix``; else the :class:`difflib.SequenceMatcher` ratio of the response and the
    answer, each with the prefix removed once from its start. The response is the first
    sequence, the answer the second (the ratio is not symmetric: junk heuristics apply to
    the second)."""
    if not response.startswith(prefix):
        return 0.0
    return float(difflib.SequenceMatcher(None, response.removeprefix(prefix), answer.removeprefix(prefix)).ratio())


def mrcr_v2_grade(prediction: str, target: str, hash_len: int = 12) -> float:
    """Google MRCR v2 (``google-deepmind/eval_hub``, ``mrcr_v2/run_evaluation.py``,
    ``mrcr_v2_metric``): the target is stripped and split into its first ``hash_len``
    characters (the random string) and the rest (stripped); the prediction is stripped
    and read from just after the *last* occurrence of the string (0 when it never
    occurs), stripped again; the score is ``SequenceMatcher(a=target_rest,
    b=prediction_rest).ratio()``. MRCR v2 uses 12-character strings; OpenAI-shaped cases
    pass their own string's length."""
    if not isinstance(prediction, str) or not prediction:
        return 0.0
    target = target.strip()
    if len(target) < hash_len:
        return 0.0
    random_hash, target_ref = target[:hash_len], target[hash_len:].strip()
    prediction = prediction.strip()
    at = prediction.rfind(random_hash)
    if at == -1:
        return 0.0
    rest = prediction[at + hash_len:].strip()
    return float(difflib.SequenceMatcher(a=target_ref, b=rest).ratio())


def graphwalks_parse(response: str, style: GraphwalksParse = "lm-eval") -> tuple[list[str], bool]:
    """``(nodes, parse_error)`` from a GraphWalks reply's last line.

    ``card``
        The ``openai/graphwalks`` dataset card's ``get_list`` verbatim: the last line
        after ``split("\\n")`` (a trailing newline leaves it empty), which must hold
        ``Final Answer:``; the whole match of ``Final Answer: ?\\[.*\\]`` stripped of
        brackets at its ends and split on commas. The match keeps its ``Final Answer: [``
        head, so the first listed node is read as ``Final Answer: [node``.
    ``lm-eval`` (default)
        lm-evaluation-harness ``tasks/graphwalks`` (strict): trailing newlines removed,
        the last line, the capture group of ``Final Answer:\\s*\\[(.*)\\]``, split on
        commas, each item stripped of spaces and quotes.
    ``nemo``
        NVIDIA NeMo-Skills ``evaluator/graphwalks.py``: the last non-empty line, the same
        capture group, items stripped of spaces.
    """
    if style == "card":
        line = response.split("\n")[-1]
        if "Final Answer:" not in line:
            return [], True
        m = _CARD_LIST.search(line)
        if not m:
            return [], True
        return [item.strip() for item in m.group(0).strip("[]").split(",") if item.strip()], False
    if style == "nemo":
        lines = [ln for ln in response.strip().split("\n") if ln.strip()]
        if not lines:
            return [], True
        m = _GROUP_LIST.search(lines[-1])
        if not m:
            return [], True
        return [item.strip() for item in m.group(1).split(",") if item.strip()], False
    line = response.rstrip("\n").split("\n")[-1]
    if "Final Answer:" not in line:
        return [], True
    m = _GROUP_LIST.search(line)
    if not m:
        return [], True
    if not m.group(1).strip():
        return [], False
    return [item.strip().strip("'\"") for item in m.group(1).split(",") if item.strip()], False


def set_f1(predicted: list[str], gold: list[str], empty_gold: EmptyGold = "zero") -> float:
    """Set F1 of the distinct predicted nodes against the gold set.

    With an empty gold set: ``zero`` scores 0 whatever was answered (the card and
    lm-evaluation-harness: recall and precision are 0 when their denominator is);
    ``one`` scores 1 when the answer is empty too, else 0 (NeMo-Skills)."""
    sampled, truth = set(predicted), set(gold)
    if not truth:
        return 1.0 if empty_gold == "one" and not sampled else 0.0
    overlap = len(sampled & truth)
    recall = overlap / len(truth)
    precision = overlap / len(sampled) if sampled else 0.0
    return 2 * recall * precision / (recall + precision) if recall + precision > 0 else 0.0


_LONGBENCH_PAREN = re.compile(r"The correct answer is \(([A-D])\)")
_LONGBENCH_BARE = re.compile(r"The correct answer is ([A-D])")


def longbench_v2_extract(response: str) -> str | None:
    """LongBench v2's answer extraction (``pred.py``'s ``extract_answer`` in THUDM/LongBench):
    asterisks deleted, then the first ``The correct answer is (X)``, else the first
    ``The correct answer is X``, X in A-D (case-sensitive); None when neither occurs. A
    case is correct when the extracted letter equals the answer letter (``judge``)."""
    text = response.replace("*", "")
    m = _LONGBENCH_PAREN.search(text) or _LONGBENCH_BARE.search(text)
    return m.group(1) if m else None
