"""Typed case metadata: what each family stores in ``Case.meta``, key by key.

A case's ``meta`` is a plain JSON object at runtime (stored in the ``meta_json`` column,
carried by instance packs, hashed into the content hash). The ``TypedDict`` types below
name its keys and their types per family, so every reader goes through a view and the type
checker checks each key it reads, and each family builds its meta as its own type.

The views (:func:`niah_meta`, :func:`case_meta`, ...) are casts: nothing is copied, added
or checked at runtime, so stored JSON and run ids are what they were. Keys a family added
after runs were already stored are optional in its type (their readers keep a default);
``tests/unit/test_case_meta.py`` builds a case of every built-in family and checks its meta
has every required key of the family's type and no key the type does not name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypedDict, cast

#: How a GraphWalks reply's last line is read (``ctxprobe.scores.originals.graphwalks_parse``).
GraphwalksParse = Literal["lm-eval", "card", "nemo"]
#: The score of an empty answer to an empty gold set (``ctxprobe.scores.originals.set_f1``).
EmptyGold = Literal["zero", "one"]
#: Per-evidence-sentence overlap with the question (``ctxprobe.haystack.overlap.evidence_overlap``).
Overlap = list[dict[str, Any]]


# -- keys several families share, as the generic layers read them ---------------------------

class CaseMeta(TypedDict, total=False):
    """The keys generic layers (judge, evidence, exports, packs, the session, reports)
    read from a case of any family; each is optional, as a family may not write it."""

    #: The question asked (judge, evidence).
    question: str
    #: The evidence sentence, located in the prompt by its text (evidence view).
    needle: str
    #: Accepted variants of the answer (documents, RULER QA): the judge and RULER's metric.
    aliases: list[str]
    #: documents' matching rule; ``"judge"`` sends the reply to the judge.
    match: str
    #: Output tokens the case asks for (RULER, published rows): exports, packs.
    tokens_to_generate: int
    #: The RULER task a case is from (RULER's own export layout).
    ruler_task: str
    #: RULER's metric for the case (``string_match_all`` / ``string_match_part``).
    metric: str
    #: A published set's name (``openai/mrcr``, ``openai/graphwalks``) for read rows.
    source: str


class OrderMeta(TypedDict, total=False):
    """What a case records of its haystack order (:func:`ctxprobe.haystack.order.order_meta`):
    the key only for ``haystack_order=shuffled`` (coherent cases keep their content hash)."""

    haystack_order: str


class _Filler(OrderMeta):
    """Families that place evidence in filler text (:func:`ctxprobe.haystack.packer.pack`)."""

    n_filler: int
    haystack_tokens: int
    encodes: int


# -- niah -------------------------------------------------------------------------------

class NiahNeedle(TypedDict):
    """A key/value needle placed at a depth."""

    key: str
    value: str
    depth: float


class NiahTarget(NiahNeedle):
    """An asked needle (multivalue, multiquery) with where its text starts in the prompt."""

    token_offset: int


class _NiahMeta(_Filler):
    variant: Literal["single", "multikey", "multivalue", "multiquery"]
    key: str
    needle: str
    distractor_needles: list[NiahNeedle]
    question: str
    overlap: Overlap


class NiahMeta(_NiahMeta, total=False):
    keys: list[str]  # multivalue, multiquery: the keys asked
    needles: list[NiahTarget]  # multivalue, multiquery: every asked needle


# -- vartrack, aggregation, documents, multihop ------------------------------------------

class VartrackMeta(_Filler):
    value: str
    question: str
    statements: list[str]
    statement_token_offsets: list[int]
    other_chains: list[dict[str, Any]]  # {"names", "value", "start"}
    overlap: Overlap


class AggregationMeta(TypedDict):
    variant: Literal["common-words", "frequent-words"]
    top: int
    question: str
    ranked: list[list[Any]]  # [word, count], most common first
    distinct_words: int
    list_items: int
    window_items: list[int]
    haystack_tokens: int
    encodes: int


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


class MultihopMeta(_Filler):
    question: str
    person: str
    org: str
    needle: str
    second_fact: str
    second_depth: float
    second_token_pos: int | None
    second_realised_depth: float
    distractor_chains: list[dict[str, Any]]  # {"person", "org", "city", "first", "second", "depths"}
    overlap: Overlap
    name_attempt: int


# -- graphwalks ---------------------------------------------------------------------------

class _GraphwalksScoring(TypedDict):
    parse: GraphwalksParse
    empty_gold: EmptyGold


class GraphwalksMeta(_GraphwalksScoring):
    """A generated GraphWalks case."""

    problem: Literal["bfs", "parents"]
    node: str
    bfs_depth: int | None
    operation: str
    edges: int
    nodes: int
    evidence_edges: int


class PublishedGraphwalksMeta(_GraphwalksScoring):
    """A row of the published ``openai/graphwalks`` files (:mod:`ctxprobe.sweep.published`)."""

    source: Literal["openai/graphwalks"]
    file: str
    row: int
    problem_type: Any
    prompt_chars: Any
    tokens_to_generate: int


# -- mrcr ---------------------------------------------------------------------------------

class _MrcrCommon(TypedDict):
    random_string_to_prepend: str
    n_needles: int
    desired_msg_index: int
    total_messages: int


class MrcrMeta(_MrcrCommon):
    """A generated MRCR case."""

    format: str
    topic: str
    ordinal: int
    turns: int
    question: str
    rule: Literal["openai", "last-occurrence"]
    answer_tokens: int


class PublishedMrcrMeta(_MrcrCommon):
    """A row of the published ``openai/mrcr`` files (:mod:`ctxprobe.sweep.published`)."""

    source: Literal["openai/mrcr"]
    file: str
    row: int
    n_chars: Any
    tokens_to_generate: int


# -- the views -----------------------------------------------------------------------------

def case_meta(meta: Mapping[str, Any]) -> CaseMeta:
    """Any family's meta, as the generic layers read it."""
    return cast(CaseMeta, meta)


def niah_meta(meta: Mapping[str, Any]) -> NiahMeta:
    return cast(NiahMeta, meta)


def documents_meta(meta: Mapping[str, Any]) -> DocumentsMeta:
    return cast(DocumentsMeta, meta)


def multihop_meta(meta: Mapping[str, Any]) -> MultihopMeta:
    return cast(MultihopMeta, meta)


def graphwalks_meta(meta: Mapping[str, Any]) -> GraphwalksMeta | PublishedGraphwalksMeta:
    """A generated case's meta or a published row's (both carry the scoring keys)."""
    return cast("GraphwalksMeta | PublishedGraphwalksMeta", meta)


def mrcr_meta(meta: Mapping[str, Any]) -> MrcrMeta:
    return cast(MrcrMeta, meta)


def published_mrcr_meta(meta: Mapping[str, Any]) -> PublishedMrcrMeta:
    return cast(PublishedMrcrMeta, meta)


#: The meta type of each family still in ``tasks/`` (the published readers'
#: rows: ``PUBLISHED_META_TYPES``); a family in a package of its own names its meta type
#: there (``families/phonebook/task_meta.py``, ``families/ruler/task/meta.py``,
#: ``families/nolima/task_meta.py``).
META_TYPES: dict[str, type] = {
    "niah": NiahMeta, "vartrack": VartrackMeta, "aggregation": AggregationMeta, "documents": DocumentsMeta,
    "multihop": MultihopMeta, "graphwalks": GraphwalksMeta, "mrcr": MrcrMeta,
}
PUBLISHED_META_TYPES: dict[str, type] = {"graphwalks": PublishedGraphwalksMeta, "mrcr": PublishedMrcrMeta}
