"""What a ``documents`` case stores in ``Case.meta``, key by key (a ``TypedDict``: a cast
at runtime, checked by the type checker; see :mod:`ctxprobe.core.case_meta`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypedDict, cast

from ctxprobe.core.case_meta import Overlap, _Filler


class DocumentsOptionalMeta(TypedDict, total=False):
    """Keys a ``documents`` case has only sometimes."""

    choices: list[str]  # multiple choice (A-D): scored by LongBench v2's rule
    distractor_documents: list[str]  # filler "documents": the other documents shown, in order
    #: an imported published row scored by its original's rule (import-published)
    rule: Literal["longmemeval", "oolong-synth", "oolong-real"]
    question_type: str  # LongMemEval's question type (picks the judge prompt)
    abstention: bool  # LongMemEval: an abstention question (``_abs`` in its question_id)
    answer_type: str  # Oolong-synth's ANSWER_TYPE.*


class DocumentsMeta(_Filler, DocumentsOptionalMeta):
    document: str
    qa_line: int
    question: str
    aliases: list[str]
    match: Literal["contains", "exact", "judge"]
    answer_in_document: bool
    overlap: Overlap
    document_tokens: int
    corpus_digest: str
    answer_token_pos: int | None  # the answer's first token in the prompt (None: not found as ids)
    answer_depth: float | None  # answer_token_pos / prompt tokens


def documents_meta(meta: Mapping[str, Any]) -> DocumentsMeta:
    return cast(DocumentsMeta, meta)
