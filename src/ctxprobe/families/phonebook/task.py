"""``phonebook``: multi-query associative recall (the published "phone book" experiment).

A book of M entries ``name : (xxx) xxx-xxxx`` (15 random lowercase letters, 10 random
digits; names and numbers unique), split into N equal bins (sizes differ by at most one
entry); one random name per bin is asked for, all N in one user message. Each needle is
scored on its own (:mod:`ctxprobe.families.phonebook.score`); the case score is the fraction
of needles answered with the right number, and the per-needle results go to the response
detail for the per-bin analysis (:mod:`ctxprobe.families.phonebook.analysis`).

How the experiment maps onto the grid (Cell(family, length, depth) × rep):

- ``length`` is M: with ``unit: tokens`` (default) a token budget, and M is solved so the
  templated prompt is the largest that fits it (within one entry); with ``unit: entries``
  it is the number of entries itself (then the prompt's tokens are whatever they are).
- ``depth`` is unused: run phonebook with the single depth 0 (other depths are refused).
- ``rep`` carries run × N × shard: ``rep = (run * len(needles) + i) * shards + shard``
  with N = ``needles[i]``; so ``reps = runs * len(needles) * shards`` (see
  :func:`ctxprobe.families.phonebook.task_grid.phonebook_spec`). The book depends only on
  (seed, length, run): every N, shard and prompt layout of a run asks about the same book,
  which pairs them (NOI, layout comparisons). In token mode M is solved per prompt, so
  layouts and N may differ by a few entries at the end of the book.

Methods (param ``method``): ``post`` reproduces the original experiment's prompt bytes
(system text + "\n\n# Phone book\n\n" + entries joined by "\n"; the question as the user
message), its bins (``M // N`` entries each, a remainder at the end of the book never
asked) and its exact-match scoring (:func:`~ctxprobe.families.phonebook.score.post_matches`),
and takes the post's own variants on its strings (``POST_VARIANTS``,
:func:`~ctxprobe.families.phonebook.task_book.render_post`); ``ctxprobe`` (the family default,
ctxprobe's own) keeps the book directly under its header, splits M into N bins of
near-equal size, scores leniently and allows every layout variant.
Every needle records both verdicts (``outcome``: lenient, ``exact``: the post's rule); the
case score follows the method. ``cot`` appends a chain-of-thought request to the question.

Layout variants (params; ``method: post`` takes the first four, on its own strings): ``book_in`` system|user,
``system_role`` (False: the system text opens the first user message; under ``post`` it is
a user message of its own, the post's fallback), ``repeat_instructions`` (instructions again right before
the question), ``examples`` (worked question/answer turns about other names of the book),
``shards`` (the same N questions asked against k contiguous sub-books, one request each;
the analysis merges them and scores against the one long book).
"""

from __future__ import annotations

import random
from collections import OrderedDict
from typing import Any

from ctxprobe.errors import CtxprobeError
from ctxprobe.core.case import derive_seed, Case, Cell
from ctxprobe.families.phonebook.task_meta import PhonebookLayout, PhonebookMeta, phonebook_meta
from ctxprobe.core.family import FamilyBase
from ctxprobe.core.outcome import Outcome, Scored
from ctxprobe.haystack.context import BuildContext
from ctxprobe.families.phonebook.score import (
    book_numbers,
    case_outcome,
    format_number,
    needle_outcome,
    parse_reply,
    post_correct,
    post_matches,
)
from ctxprobe.tokenizers.base import Message

from ctxprobe.families.phonebook.task_book import (  # noqa: F401  (the family's public names)
    SYSTEM_PROMPT,
    BOOK_HEADER,
    POST_BOOK_HEADER,
    QUESTION,
    COT_PROMPT,
    _LAYOUT_DEFAULTS,
    NAME_LETTERS,
    _MAX_ROUNDS,
    PhonebookParams,
    decode_rep,
    bin_bounds,
    _Book,
    render,
)


class Phonebook(FamilyBase):
    name = "phonebook"
    params_model = PhonebookParams
    per_case_accuracy = False  # recall per needle, in its own report

    def __init__(self, ctx: BuildContext) -> None:
        self.ctx = ctx
        self._books: OrderedDict[tuple[int, bool], _Book] = OrderedDict()
        #: Sizing results of the last few books, so the shards of one book solve it once.
        self._solved: dict[tuple[int, int, int, int, str], tuple[_Book, int, list[Message], list[int]]] = {}

    def _book(self, seed: int, counted: bool) -> _Book:
        key = (seed, counted)
        book = self._books.get(key)
        if book is None:
            book = self._books[key] = _Book(seed, self.ctx.tokenizer if counted else None)
            while len(self._books) > 3:
                self._books.popitem(last=False)
        self._books.move_to_end(key)
        return book

    def _choose(self, book: _Book, m: int, n: int, qseed: int, n_examples: int, method: str = "ctxprobe"
                ) -> tuple[list[int], list[tuple[list[str], list[str]]]]:
        """Queried entry per bin, and worked examples about other names; fixed by (qseed, M)."""
        rng = random.Random(qseed)
        picks = [rng.randrange(lo, hi) for lo, hi in bin_bounds(m, n, method)]
        others = sorted(set(range(m)) - set(picks)) if n_examples else []
        if len(others) < 2 * n_examples:
            raise CtxprobeError(f"phonebook: {m} entries are too few for {n} needles and {n_examples} examples")
        examples: list[tuple[list[str], list[str]]] = []
        for i, j in zip(*[iter(rng.sample(others, 2 * n_examples))] * 2):
            absent = book.fresh_name(rng)
            asked = [book.names[i], absent, book.names[j]]
            examples.append((asked, [book.line(i), f"{absent} : NOT_FOUND", book.line(j)]))
        return picks, examples

    def _prompt(self, p: PhonebookParams, book: _Book, m: int, n: int, qseed: int,
                shard: tuple[int, int] | None = None) -> tuple[list[Message], list[int]]:
        picks, examples = self._choose(book, m, n, qseed, p.examples, p.method)
        lo, hi = shard or (0, m)
        lines = [book.line(i) for i in range(lo, hi)]
        return render(p, lines, [book.names[i] for i in picks], examples), picks

    def _solve(self, p: PhonebookParams, book: _Book, target: int, n: int, qseed: int
               ) -> tuple[int, list[Message], list[int], int]:
        """Largest M (within one entry) whose full, unsharded prompt fits ``target`` tokens:
        (M, that prompt, its ids, full-prompt encodes spent). Entries are counted once
        (``"\n" + line``) and summed; each try is one encode, and the last good one is the
        case's own verifying encode when the book is not sharded."""
        key = (id(book), target, n, qseed, p.model_dump_json())
        cached = self._solved.get(key)
        if cached is not None and cached[0] is book:
            return cached[1], cached[2], cached[3], 0  # another shard of the same book: no new encode
        tok = self.ctx.tokenizer
        least = n + 2 * p.examples  # one entry per bin, two more per worked example
        book.extend(least)
        fixed = tok.count_chat(self._prompt(p, book, least, n, qseed)[0]) - book.prefix[least]
        m = max(least, book.fit(target - fixed))
        for _ in range(3):
            # the questions and worked examples name entries picked for M, so the prompt
            # around the book changes with M: recount it for this M over a short book (cheap)
            # until M settles, so the one full encode below usually is the last
            fixed = tok.count_chat(self._prompt(p, book, m, n, qseed, (0, least))[0]) - book.prefix[least]
            settled = max(least, book.fit(target - fixed))
            if settled == m:
                break
            m = settled
        best: tuple[int, list[Message], list[int]] | None = None
        tried: set[int] = set()
        encodes = 0
        for _ in range(_MAX_ROUNDS):
            tried.add(m)
            messages = self._prompt(p, book, m, n, qseed)[0]
            ids = tok.encode_chat(messages)
            encodes += 1
            actual = len(ids)
            if actual <= target:
                if best is None or m > best[0]:
                    best = (m, messages, ids)
                book.extend(m + 1)
                gap = target - actual
                if gap < book.prefix[m + 1] - book.prefix[m]:
                    break
                nxt = max(m + 1, book.fit(book.prefix[m] + gap))
            else:
                nxt = m - 1
                while nxt > least and book.prefix[m] - book.prefix[nxt] < actual - target:
                    nxt -= 1
                if nxt < least:
                    break
            if nxt in tried:
                break
            m = nxt
        if best is None:
            raise CtxprobeError(
                f"phonebook: length {target} tokens cannot hold {n} entries with {n} needles; "
                "use longer lengths or fewer needles")
        self._solved[key] = (book, *best)
        while len(self._solved) > 4:
            self._solved.pop(next(iter(self._solved)))
        return best[0], best[1], best[2], encodes

    @staticmethod
    def sized_in_tokens(params: PhonebookParams) -> bool:
        """Lengths are token budgets unless the books are sized in entries."""
        return params.unit == "tokens"

    @staticmethod
    def check_reps(params: PhonebookParams) -> list[int]:
        """Repetitions whose cases must build for a length to be usable: the first book with
        the largest N (the most entries it needs), every shard — checked before anything
        is stored, so an impossible N is refused up front."""
        i = max(range(len(params.needles)), key=lambda j: params.needles[j])
        return [i * params.shards + s for s in range(params.shards)]

    @staticmethod
    def prefix_period(params: PhonebookParams) -> int:
        """Every N and shard of a run asks about the same book: consecutive repetitions."""
        return len(params.needles) * params.shards

    def cell_tokens(self, length: int, params: PhonebookParams, *, seed: int) -> int:
        """Tokens of the largest case of a book of ``length`` entries: the first book, its
        largest N, every shard (other books differ by a few tokens of names)."""
        i = max(range(len(params.needles)), key=lambda j: params.needles[j])
        return max(self.generate(Cell(self.name, length, 0.0), i * params.shards + s, seed=seed, params=params).token_count
                   for s in range(params.shards))

    def generate(self, cell: Cell, rep: int, *, seed: int, params: PhonebookParams) -> Case:
        p = params
        if cell.depth != 0:
            raise CtxprobeError("phonebook has no evidence depth (needles sit in every bin): use --depths 0")
        run, n, shard = decode_rep(rep, p)
        book_seed = derive_seed(seed, self.name, cell.length, run)
        qseed = derive_seed(book_seed, "queries", n)
        book = self._book(book_seed, counted=p.unit == "tokens")
        solved: list[int] | None = None
        solved_messages: list[Message] = []
        encodes = 0
        if p.unit == "entries":
            m = cell.length
            if m < n:
                raise CtxprobeError(f"phonebook: {m} entries cannot hold {n} needles (one per bin)")
            book.extend(m)
        else:
            m, solved_messages, solved, encodes = self._solve(p.model_copy(update={"shards": 1}), book, cell.length, n, qseed)
        sub = (shard * m // p.shards, (shard + 1) * m // p.shards)
        messages, picks = self._prompt(p, book, m, n, qseed, sub if p.shards > 1 else None)
        names = [book.names[i] for i in picks]
        self._check(messages, book, m, names, sub)
        if solved is not None and p.shards == 1 and solved_messages == messages:
            ids = solved  # the sizing's last good encode is of exactly this prompt
        else:
            ids = self.ctx.tokenizer.encode_chat(messages)
            encodes += 1
        return Case(
            cell=cell, rep=rep, seed=book_seed, messages=messages,
            expected=[format_number(book.digits[i]) for i in picks],
            meta=PhonebookMeta(
                unit=p.unit, entries=m, needles=n, run=run, shard=shard, shards=p.shards,
                shard_range=list(sub), names=names, indices=picks, encodes=encodes,
                bins=[list(b) for b in bin_bounds(m, n, p.method)],
                method=p.method, cot=p.cot, post_normalise=p.post_normalise,
                layout=PhonebookLayout(book_in=p.book_in, system_role=p.system_role,
                                       repeat_instructions=p.repeat_instructions, examples=p.examples),
            ),
            token_count=len(ids), prompt_ids=ids,
        )

    @staticmethod
    def _check(messages: list[Message], book: _Book, m: int, names: list[str], sub: tuple[int, int]) -> None:
        """Every queried name is in the book once and asked once; its number occurs once.
        A failure is a generation bug, not a user error: fail loudly."""
        text = "\n".join(m_["content"] for m_ in messages)
        index = {name: i for i, name in enumerate(book.names[:m])}
        problems = []
        for name in names:
            i = index[name]
            in_prompt = 2 if sub[0] <= i < sub[1] else 1
            if text.count(name) != in_prompt or text.count(format_number(book.digits[i])) != in_prompt - 1:
                problems.append(name)
        if problems:
            raise CtxprobeError("phonebook generation check failed for " + ", ".join(problems))

    def score(self, case: Case, output: str) -> Scored:
        meta = phonebook_meta(case.meta)
        names = meta["names"]
        lo, hi = meta.get("shard_range", [0, meta["entries"]])
        m = meta["entries"]
        numbers = book_numbers(case.messages)
        answers = parse_reply(output, names)
        method = meta.get("method", "ctxprobe")
        exact_reading = post_matches(output, normalise=bool(meta.get("post_normalise")))
        needles: list[dict[str, Any]] = []
        for b, (name, index, expected) in enumerate(zip(names, meta["indices"], case.expected)):
            in_shard = lo <= index < hi
            want = "".join(ch for ch in expected if ch.isdigit()) if in_shard else None
            answer = answers[name]
            needles.append({
                "name": name, "bin": b, "index": index, "pos": round((index + 0.5) / m, 6),
                "relative_position": index / m,  # the post's own position measure
                "outcome": needle_outcome(answer, want, numbers), "returned": answer.number,
                "answered": answer.status, "in_shard": in_shard,
                "exact": post_correct(exact_reading, name, expected if in_shard else None),
            })
        outcomes = [d["outcome"] for d in needles]
        n_exact = sum(d["exact"] for d in needles)
        if method == "post":  # the post's verdict decides; a lenient-only success reads as wrong
            outcomes = [Outcome.CORRECT if d["exact"] else (Outcome.WRONG if d["outcome"] == Outcome.CORRECT else d["outcome"])
                        for d in needles]
        n_correct = outcomes.count(Outcome.CORRECT)
        return Scored(n_correct / len(needles), case_outcome(outcomes, output),
                      {"needles": needles, "n_correct": n_correct, "n_exact": n_exact, "method": method})
