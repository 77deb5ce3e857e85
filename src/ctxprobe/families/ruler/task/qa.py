"""RULER's QA tasks (``qa.py``): a question over SQuAD or HotpotQA paragraphs, each gold
paragraph a separate ``Document i:`` among distractor paragraphs from the same dataset.

ctxprobe ships neither dataset: the user passes RULER's files (SQuAD v2.0 dev JSON for
``qa_1``, HotpotQA dev "distractor" JSON for ``qa_2``), read here exactly as RULER reads
them. Sampling follows RULER: the question's own paragraphs first, then other paragraphs
of the same article (SQuAD), then any others; the list is shuffled with RULER's fixed seed.
Sample ``i`` (repetition ``i``) asks the file's ``i``-th answerable question, as in RULER.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ctxprobe.errors import CtxprobeError
from ctxprobe.families.ruler.task import constants as C
from ctxprobe.families.ruler.task.render import RULER_SEED, Rendered


@dataclass(frozen=True)
class QASet:
    qas: tuple[dict[str, Any], ...]
    docs: tuple[str, ...]


def _read_squad(data: Any) -> QASet:
    docs = sorted({p["context"] for d in data["data"] for p in d["paragraphs"]})
    index = {c: i for i, c in enumerate(docs)}
    qas = []
    for d in data["data"]:
        more = [index[p["context"]] for p in d["paragraphs"]]
        for p in d["paragraphs"]:
            for qa in p["qas"]:
                if not qa["is_impossible"]:
                    qas.append({"query": qa["question"], "outputs": [a["text"] for a in qa["answers"]],
                                "context": [index[p["context"]]],
                                "more_context": [i for i in more if i != index[p["context"]]]})
    return QASet(tuple(qas), tuple(docs))


def _read_hotpot(data: Any) -> QASet:
    docs = sorted({f"{t}\n{''.join(p)}" for d in data for t, p in d["context"]})
    index = {c: i for i, c in enumerate(docs)}
    qas = [{"query": d["question"], "outputs": [d["answer"]],
            "context": [index[f"{t}\n{''.join(p)}"] for t, p in d["context"]]} for d in data]
    return QASet(tuple(qas), tuple(docs))


@lru_cache(maxsize=4)
def load_qa(path: str, dataset: str) -> QASet:
    """RULER's reading of its QA file; one-line errors for a missing or malformed file."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        out = _read_squad(data) if dataset == "squad" else _read_hotpot(data)
    except OSError as err:
        raise CtxprobeError(f"cannot read RULER {dataset} file {path}: {err.strerror or err}") from None
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        want = "SQuAD v2.0 JSON (data → paragraphs → qas)" if dataset == "squad" else \
            "HotpotQA JSON (a list of {question, answer, context})"
        raise CtxprobeError(f"{path} is not {want}: {type(err).__name__} {err}") from None
    if not out.qas:
        raise CtxprobeError(f"{path} holds no answerable question")
    return out


class QuestionAnswering:
    """RULER's sample ``i`` asks the ``i``-th question (``generate_input_output(index, …)``):
    here repetition ``i`` of a length asks question ``i``. Depth does not place anything in
    QA; each depth of a repetition asks the same question over its own seeded draw of the
    other documents (sweep one depth to have RULER's sample set)."""

    def __init__(self, qa: QASet, seed: int, sample: int, path: str = "the QA file") -> None:
        if not 0 <= sample < len(qa.qas):
            raise CtxprobeError(f"RULER's QA asks question i for sample i: repetition {sample} needs question "
                                f"{sample + 1}, and {path} holds {len(qa.qas)} answerable questions; "
                                f"use --reps {len(qa.qas)} or fewer")
        self.qa = qa
        self.rng_seed = seed
        self.index = sample
        item = qa.qas[self.index]
        self.min_n = len(item["context"])

    def render(self, n: int) -> Rendered:
        rng = random.Random(self.rng_seed)
        item = self.qa.qas[self.index]
        docs, gold, more = self.qa.docs, list(item["context"]), list(item.get("more_context", []))
        if n < len(docs):
            if n - len(gold) > len(more):
                taken = set(gold + more)
                addition = [i for i in range(len(docs)) if i not in taken]
                chosen = gold + more + rng.sample(addition, max(0, n - len(gold) - len(more)))
            else:
                chosen = gold + rng.sample(more, n - len(gold))
            texts = [docs[i] for i in chosen]
        else:
            texts = list(docs * ((n + len(docs) - 1) // len(docs)))[:n]
        random.Random(RULER_SEED).shuffle(texts)
        context = "\n\n".join(C.QA_DOCUMENT.format(i=i + 1, document=d) for i, d in enumerate(texts))
        text = C.QA_TEMPLATE.format(context=context, query=item["query"])
        return Rendered(text, C.QA_PREFIX, list(item["outputs"]), [],
                        {"qa_index": self.index, "query": item["query"], "n_docs": n})
