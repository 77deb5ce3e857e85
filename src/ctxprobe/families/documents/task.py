"""``documents``: the user's own natural cases, placed at a depth inside filler.

Synthetic needles say how far a model can retrieve planted facts; teams also need to know
how it does on *their* documents. Parameters:

- ``docs``: a folder of ``.txt`` / ``.md`` documents (searched recursively, hidden folders
  skipped); a document is named by its path relative to that folder, e.g. ``faq.md``.
- ``qa``: a JSONL file, one case per line:
  ``{"document": "faq.md", "question": "...", "answer": "...", "aliases": ["..."]}``
  (``aliases`` optional; ``evidence`` (a string) and ``checks`` (an object), which
  ``ctxprobe draft-questions`` writes, are kept but not read; blank lines ignored; any other
  key, bad JSON or an unknown document is a one-line error naming the file and line number).
  A multiple-choice line adds ``"choices": [A, B, C, D]`` (four strings) and its ``answer``
  is the letter; it is asked in LongBench v2's form and scored by LongBench v2's rule
  (:func:`ctxprobe.scores.originals.longbench_v2_extract`: the letter in ``The correct
  answer is (X)`` equals the answer), whatever ``match`` says. A case ``import-published``
  wrote from Oolong (``meta.rule``: ``oolong-synth`` / ``oolong-real``) is scored by
  Oolong's rule (:func:`ctxprobe.scores.oolong.oolong_scored`); one from LongMemEval
  (``longmemeval``, ``match: judge``) by the judge with LongMemEval's prompts.
- ``match`` (default ``contains``): ``contains`` = a normalised answer or alias occurs in
  the normalised output as whole words; ``exact`` = the normalised output equals one.
- ``filler`` (default ``haystack``): the spec's haystack (built-in prose, or the user's
  ``--haystack`` folder), ``other-documents``: sentences of the other documents in
  ``docs``, or ``documents``: the other documents themselves as distractors, each in
  ``<document name="...">`` ... ``</document>`` like the asked one (paragraphs joined by
  spaces in every document alike), whole paragraphs in document order, the documents in a seeded order (repeated, reshuffled, when the length
  needs more than there are). The asked document sits at the paragraph boundary nearest
  the cell's depth (which may fall between two paragraphs of a distractor document). Either
  way, filler sentences (paragraphs) containing the answer or an alias are dropped.

Normalisation (SQuAD-style, :mod:`ctxprobe.scores.answers`): lowercase; punctuation and
symbols deleted; the articles ``a``, ``an``, ``the`` removed; whitespace collapsed.

Case selection: repetition ``r`` asks question ``r mod n`` of the ``n`` lines of the QA
file, in file order; so ``reps = n`` covers every question once, and every depth and
length of a repetition asks the same question over the same filler (a paired design).

The answer's position is recorded: ``meta.answer_token_pos`` (the first token of the
answer's first occurrence in the document, searched as token ids inside the document's
span; None when the tokenizer merges it with its neighbours) and ``meta.answer_depth``
(that position over the prompt's tokens).

The document is one block at the cell's depth (at a sentence boundary of the filler); its
blank lines become single newlines so the prompt keeps its instruction / text / question
paragraphs. Paths are relative to the current directory.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ctxprobe.errors import CtxprobeError
from ctxprobe.haystack import filler_source, split_sentences
from ctxprobe.haystack.documents import QUESTION, read_documents
from ctxprobe.haystack.packer import FillerPool, Insert, LengthTooShort, find_subsequence, pack
from ctxprobe.core.case import derive_seed, Case, Cell
from ctxprobe.families.documents.task_meta import DocumentsMeta, documents_meta
from ctxprobe.core.family import FamilyBase
from ctxprobe.core.outcome import Outcome, Scored
from ctxprobe.haystack.nocontext import no_context_case
from ctxprobe.haystack.order import HaystackOrder, order_meta, shuffle_seed
from ctxprobe.haystack.context import BuildContext
from ctxprobe.spec import PromptLayout
from ctxprobe.haystack.layout import DEFAULT_LAYOUT, conversation, turns_back
from ctxprobe.scores.answers import contains_answer, normalize_answer
from ctxprobe.scores.classify import classify_miss
from ctxprobe.scores.oolong import oolong_scored
from ctxprobe.scores.originals import longbench_v2_extract
from ctxprobe.families.documents.task_sources import answer_token_pos, distractor_documents, other_documents, wrap_document
from ctxprobe.haystack.overlap import evidence_overlap
from ctxprobe.tokenizers.base import Message

INSTRUCTION = (
    "A long text follows. Somewhere in it is a document that answers the question at the "
    "end; the rest of the text is unrelated."
)
#: LongBench v2's choices block and answer format, in one paragraph (the question ends the prompt).
CHOICE_QUESTION = ("Question: {question}\nChoices:\n(A) {a}\n(B) {b}\n(C) {c}\n(D) {d}\n"
                   'Format your response as follows: "The correct answer is (insert answer here)".')
QA_KEYS = frozenset({"document", "question", "answer", "aliases", "choices", "evidence", "checks"})
LETTERS = ("A", "B", "C", "D")


class DocumentsParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    docs: str = Field(description="folder of .txt/.md documents")
    qa: str = Field(description="JSONL file of {document, question, answer, aliases}")
    #: ``judge`` grades open-ended answers with the sweep's calibrated judge (--judge); the
    #: family's own contains-match is the fallback score shown beside it.
    match: Literal["contains", "exact", "judge"] = "contains"
    filler: Literal["haystack", "other-documents", "documents"] = "haystack"
    haystack_order: HaystackOrder = Field("coherent", description="coherent filler, or the same sentences shuffled")


@dataclass(frozen=True)
class QAItem:
    document: str
    question: str
    answer: str
    aliases: tuple[str, ...]
    line: int
    choices: tuple[str, ...] = ()

    def prompt_question(self) -> str:
        """The question paragraph's text: the question, or LongBench v2's choices block."""
        if not self.choices:
            return QUESTION.format(question=self.question)
        a, b, c, d = self.choices
        return CHOICE_QUESTION.format(question=self.question, a=a, b=b, c=c, d=d)


@dataclass(frozen=True)
class DocumentSet:
    documents: dict[str, str]  # relative name → prepared text
    items: tuple[QAItem, ...]
    digest: str  # sha256 of every document and the QA file: what the results depend on


def _qa_item(path: Path, n: int, line: str, documents: dict[str, str]) -> QAItem:
    where = f"{path} line {n}"
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as err:
        raise CtxprobeError(f"{where}: not valid JSON ({err.msg}); each line must be one JSON object") from None
    if not isinstance(obj, dict):
        raise CtxprobeError(f"{where}: expected a JSON object with document, question, answer")
    unknown = sorted(set(obj) - QA_KEYS)
    if unknown:
        raise CtxprobeError(f"{where}: unknown key '{unknown[0]}' (accepted: {', '.join(sorted(QA_KEYS))})")
    for key in ("document", "question", "answer"):
        if not isinstance(obj.get(key), str) or not obj[key].strip():
            raise CtxprobeError(f"{where}: '{key}' must be a non-empty string")
    aliases = obj.get("aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(a, str) and a.strip() for a in aliases):
        raise CtxprobeError(f"{where}: 'aliases' must be a list of non-empty strings")
    if obj["document"] not in documents:
        raise CtxprobeError(f"{where}: document '{obj['document']}' is not in the documents folder")
    for value in (obj["answer"], *aliases):
        if not normalize_answer(value):
            raise CtxprobeError(f"{where}: answer or alias {value!r} is empty once normalised")
    choices = obj.get("choices", [])
    if "choices" in obj:
        if not isinstance(choices, list) or len(choices) != 4 or not all(isinstance(c, str) and c.strip() for c in choices):
            raise CtxprobeError(f"{where}: 'choices' must be a list of four non-empty strings (A, B, C, D)")
        if obj["answer"].strip() not in LETTERS:
            raise CtxprobeError(f"{where}: a multiple-choice 'answer' must be the letter A, B, C or D")
    question = " ".join(obj["question"].split())  # one paragraph: the question ends the prompt
    return QAItem(obj["document"], question, obj["answer"].strip(), tuple(a.strip() for a in aliases), n,
                  tuple(" ".join(c.split()) for c in choices))


@functools.lru_cache(maxsize=8)
def _load(docs: str, qa: str, _stamp: tuple[float, ...]) -> DocumentSet:
    documents = read_documents(Path(docs))
    path = Path(qa)
    try:
        raw = path.read_text(encoding="utf-8")
    except OSError as err:
        raise CtxprobeError(f"cannot read QA file {qa!r}: {err.strerror or err}") from None
    items = tuple(_qa_item(path, n, line, documents)
                  for n, line in enumerate(raw.splitlines(), start=1) if line.strip())
    if not items:
        raise CtxprobeError(f"QA file {qa!r} has no questions; add JSONL lines with document, question, answer")
    h = hashlib.sha256(raw.encode())
    for name in sorted(documents):
        h.update(f"\x00{name}\x00{documents[name]}".encode())
    return DocumentSet(documents, items, h.hexdigest()[:16])


def load_documents(docs: str, qa: str) -> DocumentSet:
    """The documents and questions (cached until a file changes)."""
    stamp = []
    for p in (Path(docs), Path(qa)):
        try:
            stamp.append(p.stat().st_mtime)
        except OSError:
            stamp.append(-1.0)
    return _load(str(Path(docs).expanduser().resolve()), str(Path(qa).expanduser()), tuple(stamp))


def _without_answers(source: Iterator[str], answers: tuple[str, ...]) -> Iterator[str]:
    """Filler never states the answer: a sentence containing it (normalised) is skipped."""
    for sentence in source:
        if not any(contains_answer(sentence, a) for a in answers):
            yield sentence


def render(haystack: str, question: str, layout: PromptLayout = DEFAULT_LAYOUT,
           question_text: str | None = None, evidence: tuple[str, ...] = ()) -> list[Message]:
    """The prompt; ``question_text`` (an item's :meth:`QAItem.prompt_question`) replaces the
    free-answer question paragraph; ``evidence`` (the document's sentences stating the
    answer) gives its turn the layout's evidence role in a ``turns`` layout."""
    asked = question_text if question_text is not None else QUESTION.format(question=question)
    return conversation(INSTRUCTION, haystack, asked, layout, evidence)


class Documents(FamilyBase):
    name = "documents"
    floor_kind = "no-context"
    natural = True
    params_model = DocumentsParams

    @classmethod
    def uses_judge(cls, params: Any) -> bool:
        return bool(params.match == "judge")

    def __init__(self, ctx: BuildContext) -> None:
        self.ctx = ctx
        self._pools: OrderedDict[int, FillerPool] = OrderedDict()
        self._checked: set[tuple[str, int]] = set()

    def _pool(self, group_seed: int, doc_set: DocumentSet, item: QAItem, params: DocumentsParams) -> FillerPool:
        pool = self._pools.get(group_seed)
        if pool is None:
            if params.filler == "other-documents":
                source = other_documents(doc_set.documents, item.document, group_seed)
            elif params.filler == "documents":
                source = distractor_documents(doc_set.documents, item.document, group_seed)
            else:
                source = filler_source(self.ctx.haystack, group_seed)
            kept_out = () if item.choices else (item.answer, *item.aliases)  # a letter is no answer to keep out
            pool = FillerPool(_without_answers(source, kept_out), self.ctx.tokenizer)
            self._pools[group_seed] = pool
            while len(self._pools) > 4:
                self._pools.popitem(last=False)
        self._pools.move_to_end(group_seed)
        return pool

    def _check_budget(self, doc_set: DocumentSet, length: int) -> None:
        """Every document must fit the length, checked once per length so the sweep's
        preflight (which builds the shortest case) refuses before anything is sent."""
        if (doc_set.digest, length) in self._checked:
            return
        tok, layout = self.ctx.tokenizer, self.ctx.layout
        doc_tokens = {name: tok.count(" " + text) for name, text in doc_set.documents.items()}
        def prompt_tokens(it: QAItem) -> int:
            return tok.count_chat(render("", it.question, layout, it.prompt_question()))

        worst = max(doc_set.items, key=lambda it: doc_tokens[it.document] + prompt_tokens(it))
        needed = doc_tokens[worst.document] + prompt_tokens(worst) + layout.separator
        if needed > length:
            raise CtxprobeError(
                f"document '{worst.document}' needs {needed} tokens with its prompt, more than length {length}; "
                f"use lengths of at least {needed} or a shorter document")
        self._checked.add((doc_set.digest, length))

    def generate(self, cell: Cell, rep: int, *, seed: int, params: BaseModel) -> Case:
        assert isinstance(params, DocumentsParams)
        doc_set = load_documents(params.docs, params.qa)
        self._check_budget(doc_set, cell.length)
        item = doc_set.items[rep % len(doc_set.items)]
        body = doc_set.documents[item.document]
        doc = wrap_document(item.document, body) if params.filler == "documents" else body
        asked = item.prompt_question()
        group_seed = derive_seed(seed, self.name, doc_set.digest, cell.length, rep)
        tok = self.ctx.tokenizer
        pool = self._pool(group_seed, doc_set, item, params)
        layout = self.ctx.layout
        if self.ctx.no_context:  # the noise floor: the question among filler only (answers kept out of the pool)
            return no_context_case(self.ctx, cell, rep, group_seed, lambda h: render(h, item.question, layout, asked), pool,
                                   [item.answer], absent=[],
                                   meta={"document": item.document, "qa_line": item.line, "question": item.question,
                                         "aliases": list(item.aliases), "match": params.match,
                                         **({"choices": list(item.choices)} if item.choices else {}),
                                         "corpus_digest": doc_set.digest, **order_meta(params)},
                                   shuffle_seed=shuffle_seed(params, group_seed))
        answers = (item.answer, *item.aliases) if not item.choices else ()
        evidence = [s for para in body.split("\n") for s in split_sentences(para)
                    if any(contains_answer(s, a) for a in answers)]
        try:
            packed = pack(tok, lambda h: render(h, item.question, layout, asked, tuple(evidence)), pool,
                          [Insert(doc, cell.depth, "target")],
                          cell.length, lead_tokens=layout.separator, shuffle_seed=shuffle_seed(params, group_seed))
        except LengthTooShort as err:
            raise CtxprobeError(f"document '{item.document}' needs {err.needed} tokens with its prompt, more than "
                                f"length {cell.length}; use lengths of at least {err.needed} or a shorter document") from None
        filler_text = packed.haystack.replace(doc, "", 1)
        leaks = [a for a in answers if contains_answer(filler_text, a)]
        if leaks:
            raise CtxprobeError(f"documents case generation check failed: answer {leaks[0]!r} occurs outside its document")
        pos = find_subsequence(packed.prompt_ids, tok.encode(" " + doc))
        if pos is None:
            pos = find_subsequence(packed.prompt_ids, tok.encode(doc))
        rest = packed.haystack_tokens - tok.count(" " + doc) - packed.lead_tokens
        realised = (packed.insert_offsets[0] - packed.lead_tokens) / rest if rest > 0 else 0.0
        answer_pos = None if pos is None else answer_token_pos(tok, packed.prompt_ids, pos, body, answers)
        meta: DocumentsMeta = {
            "document": item.document, "qa_line": item.line, "question": item.question,
            "aliases": list(item.aliases), "match": params.match,
            "answer_in_document": bool(evidence), "overlap": evidence_overlap(item.question, evidence),
            "document_tokens": tok.count(" " + doc), "corpus_digest": doc_set.digest,
            "answer_token_pos": answer_pos,
            "answer_depth": None if answer_pos is None else round(answer_pos / packed.token_count, 6),
            "n_filler": packed.n_filler, "haystack_tokens": packed.haystack_tokens, "encodes": packed.encodes,
        }
        if item.choices:
            meta["choices"] = list(item.choices)
        if params.filler == "documents":
            meta["distractor_documents"] = re.findall(r'<document name="([^"]+)">', packed.haystack.replace(doc, "", 1))
        meta.update(order_meta(params))
        if layout.messages != "single" and evidence:  # the sentence stating the answer (none: not recorded)
            meta["turns_back"] = next((b for b in (turns_back(packed.messages, e) for e in evidence) if b is not None),
                                      None)
        return Case(
            cell=cell, rep=rep, seed=group_seed, messages=packed.messages,
            expected=[item.answer],
            meta=meta,
            token_count=packed.token_count, needle_token_pos=pos, realised_depth=round(realised, 6),
            prompt_ids=packed.prompt_ids,
        )

    def score(self, case: Case, output: str) -> Scored:
        meta = documents_meta(case.meta)
        rule = meta.get("rule")
        if rule == "oolong-synth" or rule == "oolong-real":  # an imported Oolong row: Oolong's rule
            return oolong_scored(rule, case.expected[0], meta.get("answer_type"), output)
        if meta.get("choices"):  # LongBench v2's rule (module docstring)
            letter = longbench_v2_extract(output)
            if letter == case.expected[0]:
                return Scored(1.0, Outcome.CORRECT, {"choice": letter, "rule": "longbench-v2"})
            miss = Outcome.WRONG if letter is not None else classify_miss(output)
            return Scored(0.0, miss, {"choice": letter, "rule": "longbench-v2"})
        answers = [*case.expected, *meta.get("aliases", [])]
        norm = normalize_answer(output)
        exact = next((a for a in answers if normalize_answer(a) == norm), None)
        contained = next((a for a in answers if contains_answer(output, a)), None)
        hit = exact if meta.get("match") == "exact" else contained
        detail = {"exact": exact is not None, "contains": contained is not None}
        if hit is not None:
            return Scored(1.0, Outcome.CORRECT, {**detail, "matched": hit})
        return Scored(0.0, classify_miss(output), detail)

