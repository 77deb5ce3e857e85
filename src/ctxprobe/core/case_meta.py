"""Typed case metadata: the keys of ``Case.meta`` that generic code reads, and the pieces
several families' meta types share.

A case's ``meta`` is a plain JSON object at runtime (stored in the ``meta_json`` column,
carried by instance packs, hashed into the content hash). ``TypedDict`` types name its keys
and their types, so every reader goes through a view and the type checker checks each key
it reads. Each family names its own meta type in its package (``families/<name>/task_meta.py``)
and builds its meta as that type; what sits here is what generic layers read of any family
(:class:`CaseMeta`) and what several families or a family and a generic reader share (the
filler keys, the haystack order, the published rows the importer writes and the family scores).

The views (:func:`case_meta`, a family's own ``niah_meta``...) are casts: nothing is copied,
added or checked at runtime, so stored JSON and run ids are what they were. Keys a family
added after runs were already stored are optional in its type (their readers keep a default);
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
    #: An imported published row scored by its original's rule (``longmemeval`` sends the
    #: reply to the judge with LongMemEval's own prompt).
    rule: str
    #: LongMemEval's question type (picks its judge prompt).
    question_type: str
    #: LongMemEval: an abstention question (``_abs`` in its question_id).
    abstention: bool


class OrderMeta(TypedDict, total=False):
    """What a case records of its haystack order (:func:`ctxprobe.haystack.order.order_meta`):
    the key only for ``haystack_order=shuffled`` (coherent cases keep their content hash)."""

    haystack_order: str
    #: How many messages before the last the evidence sits (a ``turns``/``tools`` layout
    #: only: :func:`ctxprobe.haystack.layout.turns_back`; absent in the default layout).
    turns_back: int | None
    #: multihop: the second fact's (likewise).
    second_turns_back: int | None
    #: vartrack: its asked chain's final assignment's (``turns_back`` is its first, the
    #: value's assignment: the furthest back).
    last_turns_back: int | None


class _Filler(OrderMeta):
    """Families that place evidence in filler text (:func:`ctxprobe.haystack.packer.pack`):
    the base of their meta types."""

    n_filler: int
    haystack_tokens: int
    encodes: int


# -- published rows (openai/graphwalks, openai/mrcr): read by their family's importer
#    (families/<name>/task_published.py), scored by the family ---------------------------

class GraphwalksScoring(TypedDict):
    """How a GraphWalks reply is scored: a generated case and a published row carry it."""

    parse: GraphwalksParse
    empty_gold: EmptyGold


class PublishedGraphwalksMeta(GraphwalksScoring):
    """A row of the published ``openai/graphwalks`` files (``import-published graphwalks``)."""

    source: Literal["openai/graphwalks"]
    file: str
    row: int
    problem_type: Any
    prompt_chars: Any
    tokens_to_generate: int


class MrcrCommon(TypedDict):
    """What a generated MRCR case and a published row both carry (what scoring reads)."""

    random_string_to_prepend: str
    n_needles: int
    desired_msg_index: int
    total_messages: int


class PublishedMrcrMeta(MrcrCommon):
    """A row of the published ``openai/mrcr`` files (``import-published mrcr``)."""

    source: Literal["openai/mrcr"]
    file: str
    row: int
    n_chars: Any
    tokens_to_generate: int


# -- the view -------------------------------------------------------------------------------

def case_meta(meta: Mapping[str, Any]) -> CaseMeta:
    """Any family's meta, as the generic layers read it."""
    return cast(CaseMeta, meta)


def published_mrcr_meta(meta: Mapping[str, Any]) -> PublishedMrcrMeta:
    return cast(PublishedMrcrMeta, meta)
