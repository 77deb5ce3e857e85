"""The hooks an exported lm-eval task calls (its ``utils.py`` imports them from here).

``load_cases``: the task's cases from the JSONL beside its YAML, as a ``datasets``
``DatasetDict`` with one ``test`` split (lm-eval's ``custom_dataset`` contract).
``process_results``: one answer scored by ctxprobe's strict family scorer, the case read
from the doc itself; lm-eval reports neither a finish reason nor usage, so an answer cut
at the output limit is scored as what it says (``ctxprobe import-lm-eval`` labels it the
same way), and an empty answer is a miss, as in ``ctxprobe run`` (lm-eval stops the
evaluation on a request that keeps failing). ``scored_mean``: accuracy over scored
answers (a doc with no answer at all is a harness failure, left out).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from ctxprobe.core.family import Family
from ctxprobe.core.records import CaseRecord
from ctxprobe.harnesses.cases import Reply, score_reply
from ctxprobe.harnesses.stored import scoring_family


def load_cases(utils_file: str, cases: str, **_: Any) -> Any:
    try:
        import datasets
    except ImportError:
        from ctxprobe.errors import CtxprobeError

        raise CtxprobeError("lm-eval tasks need lm-eval: pip install 'ctxprobe[lm-eval]'") from None
    path = Path(utils_file).with_name(cases)
    with open(path, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(rows)})


@lru_cache(maxsize=64)
def _family(label: str, params_json: str) -> Family:
    return scoring_family(label, json.loads(params_json))


def score_doc(doc: dict[str, Any], output: str | None) -> tuple[float | None, str]:
    """(score or None for a harness failure, outcome label) of ``output`` to ``doc``'s case."""
    # the doc's case_json holds the case's fields; its id and prompt hash sit beside it
    case = CaseRecord.from_json({**json.loads(doc["case_json"]), "case_id": doc["case_id"],
                                 "prompt_hash": doc["prompt_hash"]}).to_case()
    reply = Reply(doc["case_id"], output, error=None if output is not None else "no answer")
    score, scored = score_reply(_family(doc["family"], doc["family_params_json"]), case, reply)
    return score, str(scored.outcome)


def process_results(doc: dict[str, Any], results: Sequence[str]) -> dict[str, Any]:
    score, _ = score_doc(doc, results[0] if results else None)
    return {"strict_accuracy": score, "harness_failures": int(score is None)}


def scored_mean(items: Sequence[float | None]) -> float:
    values = [v for v in items if v is not None]
    return sum(values) / len(values) if values else float("nan")


def total(items: Sequence[int]) -> int:
    """Harness failures: a count (lm-eval registers no ``sum`` aggregation)."""
    return int(sum(items))
