"""``ctxprobe draft-questions``: a model drafts question/answer pairs from passages of the
user's documents; each pair is checked (:mod:`ctxprobe.natural.checks`) before it is kept.

Steps, in order:

1. *Passages*: each document's paragraphs, grouped in document order into passages of up
   to ``passage_words`` words (a longer paragraph is a passage of its own).
2. *Drafting*: one call per passage (:func:`ctxprobe.natural.prompts.draft_prompt`, up to
   ``per_passage`` pairs), passages in order (documents by name) until ``n`` distinct
   questions are drafted; a question drafted twice is kept once.
3. *Checks* of every pair: presence, uniqueness and overlap in the document; a closed-book
   call to the drafting model and to ``closed_book_model`` when named; the all-answers
   second pass with the document.
4. *Output*: the kept pairs as ``documents`` QA lines (``document``, ``question``,
   ``answer``, ``evidence``, ``checks``) in ``out``, the rejected ones with their
   ``reasons`` in ``out`` with ``.rejected.jsonl`` in place of ``.jsonl``.

Every call's reply is journalled (``out`` with ``.calls.jsonl``: one line per call, keyed
by the sha256 of the model, the messages and the output limit), so a rerun sends only the
calls not yet answered; a call that failed after its retries is not journalled and the
pair it was for is left out of both files, with a count, so a rerun completes it.
The plan (:func:`plan_drafting`) counts every call's prompt tokens before anything is sent
(the check calls as an upper bound: ``n`` pairs) and prices them like a sweep.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxprobe.errors import CtxprobeError
from ctxprobe.models import check_model_name, resolve_provider
from ctxprobe.models.base import GenerateRequest, Provider
from ctxprobe.natural.checks import DEFAULT_MAX_OVERLAP, Verdict, ambiguity_check, closed_book_check, document_checks
from ctxprobe.natural.prompts import Draft, all_answers_prompt, answer_lines, closed_book_prompt, draft_prompt, parse_pairs
from ctxprobe.prices.table import price_for
from ctxprobe.runner.client import CallPolicy, ModelClient
from ctxprobe.spec.names import parse_model
from ctxprobe.haystack.documents import read_documents
from ctxprobe.tokenizers import infer_tokenizer, resolve_tokenizer
from ctxprobe.tokenizers.base import Message, Tokenizer

CHECK_TOKENS = 64  # output limit of a closed-book or all-answers call
Progress = Callable[[str, int, int], None]  # (phase, done, total)


@dataclass(frozen=True)
class DraftConfig:
    docs: str
    model: str
    out: str
    n: int = 300
    closed_book_model: str | None = None
    tokenizer: str | None = None
    max_overlap: float = DEFAULT_MAX_OVERLAP
    per_passage: int = 8
    passage_words: int = 150
    draft_tokens: int = 768
    concurrency: int = 4
    retries: int = 4
    timeout: float = 600.0


@dataclass
class DraftResult:
    kept: int = 0
    rejected: int = 0
    reasons: dict[str, int] = field(default_factory=dict)
    unparsed_lines: int = 0
    failed_calls: int = 0
    calls_sent: int = 0
    calls_reused: int = 0
    kept_path: str = ""
    rejected_path: str = ""


@dataclass(frozen=True)
class DraftPlan:
    passages: int
    draft_calls: int
    draft_prompt_tokens: int
    check_calls: int  # upper bound: n pairs
    check_prompt_tokens: int
    output_tokens: int
    cost_usd: float | None  # None: no price known (a sim or a local model has none until a price file prices it)

    def line(self) -> str:
        cost = "unpriced" if self.cost_usd is None else f"≤ ${self.cost_usd:.4f}"
        return (f"{self.passages} passages: {self.draft_calls} drafting calls ({self.draft_prompt_tokens:,} prompt "
                f"tokens), ≤ {self.check_calls} check calls (≤ {self.check_prompt_tokens:,} prompt tokens), "
                f"≤ {self.output_tokens:,} output tokens, {cost}")


def side_path(out: str, suffix: str) -> Path:
    p = Path(out)
    stem = p.name[: -len(".jsonl")] if p.name.endswith(".jsonl") else p.name
    return p.with_name(stem + suffix)


def passages(documents: dict[str, str], words: int) -> list[tuple[str, str]]:
    """Step 1: (document name, passage), documents by name, paragraphs in order."""
    out: list[tuple[str, str]] = []
    for name in sorted(documents):
        chunk: list[str] = []
        size = 0
        for para in documents[name].split("\n"):
            w = len(para.split())
            if chunk and size + w > words:
                out.append((name, "\n".join(chunk)))
                chunk, size = [], 0
            chunk.append(para)
            size += w
        if chunk:
            out.append((name, "\n".join(chunk)))
    return out


class Journal:
    """Replies keyed by call; appended as they come, read back on a rerun."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.replies: dict[str, str] = {}
        if path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    obj = json.loads(line)
                    self.replies[str(obj["key"])] = str(obj["reply"])
                except (json.JSONDecodeError, KeyError, TypeError):
                    continue  # a line cut short by an interruption: that call is sent again

    @staticmethod
    def key(model: str, messages: list[Message], max_tokens: int) -> str:
        blob = json.dumps([model, messages, max_tokens], ensure_ascii=False, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()

    def add(self, key: str, model: str, reply: str) -> None:
        self.replies[key] = reply
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"key": key, "model": model, "reply": reply}, ensure_ascii=False) + "\n")


def _tokenizer(cfg: DraftConfig) -> Tokenizer:
    name = cfg.tokenizer or infer_tokenizer(cfg.model)
    return resolve_tokenizer(name, cfg.model)


def _check(cfg: DraftConfig) -> None:
    for model in (cfg.model, cfg.closed_book_model):  # a mistyped model is refused before the plan is shown
        if model:
            check_model_name(model)
    for flag, value in (("--n", cfg.n), ("--per-passage", cfg.per_passage), ("--draft-tokens", cfg.draft_tokens),
                        ("--concurrency", cfg.concurrency)):
        if value <= 0:
            raise CtxprobeError(f"{flag} must be at least 1 (got {value})")


def plan_drafting(cfg: DraftConfig, tokenizer: Tokenizer | None = None) -> DraftPlan:
    """What drafting will send, counted before anything is sent."""
    _check(cfg)
    tok = tokenizer or _tokenizer(cfg)
    documents = read_documents(Path(cfg.docs))
    chunks = passages(documents, cfg.passage_words)
    draft_tokens = sum(tok.count_chat(draft_prompt(name, text, cfg.per_passage)) for name, text in chunks)
    largest = max(tok.count_chat(all_answers_prompt(n, t, "x" * 80)) for n, t in documents.items())
    closed = tok.count_chat(closed_book_prompt("x" * 120))
    models = 2 if cfg.closed_book_model else 1
    check_calls = cfg.n * (models + 1)
    check_tokens = cfg.n * (closed * models + largest)
    output = len(chunks) * cfg.draft_tokens + check_calls * CHECK_TOKENS
    cost: float | None = None
    for model, inp, outp in ((cfg.model, draft_tokens + cfg.n * (closed + largest), len(chunks) * cfg.draft_tokens
                              + cfg.n * 2 * CHECK_TOKENS),
                             (cfg.closed_book_model, cfg.n * closed, cfg.n * CHECK_TOKENS)):
        price = price_for(parse_model(model)) if model else None
        if price is not None:
            cost = (cost or 0.0) + price.cost(inp, outp)
    return DraftPlan(len(chunks), len(chunks), draft_tokens, check_calls, check_tokens, output, cost)


class _Caller:
    def __init__(self, provider: Provider, policy: CallPolicy, journal: Journal, result: DraftResult) -> None:
        self.client = ModelClient(provider, policy)
        self.name = provider.name
        self.journal = journal
        self.result = result

    async def ask(self, messages: list[Message], max_tokens: int) -> str | None:
        key = Journal.key(self.name, messages, max_tokens)
        if key in self.journal.replies:
            self.result.calls_reused += 1
            return self.journal.replies[key]
        done = await self.client.call(GenerateRequest(messages, max_tokens=max_tokens, temperature=0.0))
        if done.result is None:
            self.result.failed_calls += 1
            return None
        self.result.calls_sent += 1
        self.journal.add(key, self.name, done.result.text)
        return done.result.text


@dataclass
class DraftModels:
    """The drafting model and the closed-book one, built (:func:`open_models`)."""

    drafter: Provider
    closed_book: Provider | None = None

    async def aclose(self) -> None:
        await self.drafter.aclose()
        if self.closed_book is not None:
            await self.closed_book.aclose()

    def close(self) -> None:
        """Close them when drafting will not (a refusal after they were built)."""
        asyncio.run(self.aclose())


def open_models(cfg: DraftConfig) -> DraftModels:
    """Both models built (an SDK imported, its key read, a local model loaded), so what they
    refuse, a missing API key say, is refused here: the CLI calls it before showing the plan."""
    _check(cfg)
    tok = _tokenizer(cfg)
    models = DraftModels(resolve_provider(cfg.model, tok))
    if cfg.closed_book_model:
        try:
            models.closed_book = resolve_provider(cfg.closed_book_model, tok)
        except BaseException:
            models.close()
            raise
    return models


async def adraft(cfg: DraftConfig, progress: Progress | None = None, models: DraftModels | None = None) -> DraftResult:
    """Steps 1-4 of the module docstring (``models``: built by :func:`open_models`, closed here)."""
    try:
        _check(cfg)
        documents = read_documents(Path(cfg.docs))
        chunks = passages(documents, cfg.passage_words)
        result = DraftResult(kept_path=cfg.out, rejected_path=str(side_path(cfg.out, ".rejected.jsonl")))
        journal = Journal(side_path(cfg.out, ".calls.jsonl"))
        policy = CallPolicy(concurrency=cfg.concurrency, retries=cfg.retries, timeout=cfg.timeout)
        models = models if models is not None else open_models(cfg)
        main = _Caller(models.drafter, policy, journal, result)
        other = _Caller(models.closed_book, policy, journal, result) if models.closed_book is not None else None
        drafts = await _draft_all(cfg, chunks, main, result, progress)
        rows = await _check_all(cfg, documents, drafts, main, other, progress)
    finally:
        if models is not None:
            await models.aclose()
    _write(cfg, rows, result)
    return result


async def _draft_all(cfg: DraftConfig, chunks: list[tuple[str, str]], main: _Caller, result: DraftResult,
                     progress: Progress | None) -> list[tuple[str, Draft]]:
    drafts: list[tuple[str, Draft]] = []
    seen: set[str] = set()
    step = max(1, main.client.width)
    done = 0
    for start in range(0, len(chunks), step):
        batch = chunks[start:start + step]
        replies = await asyncio.gather(*(main.ask(draft_prompt(name, text, cfg.per_passage), cfg.draft_tokens)
                                         for name, text in batch))
        for (name, _), reply in zip(batch, replies):
            if reply is None:
                continue
            pairs, bad = parse_pairs(reply)
            result.unparsed_lines += bad
            for pair in pairs:
                norm = " ".join(pair.question.lower().split())
                if norm not in seen and len(drafts) < cfg.n:
                    seen.add(norm)
                    drafts.append((name, pair))
        done += len(batch)
        if progress:
            progress("draft", done, len(chunks))
        if len(drafts) >= cfg.n:
            break
    return drafts


async def _check_all(cfg: DraftConfig, documents: dict[str, str], drafts: list[tuple[str, Draft]], main: _Caller,
                     other: _Caller | None, progress: Progress | None) -> list[tuple[str, Draft, Verdict] | None]:
    counter = [0]

    async def one(name: str, d: Draft) -> tuple[str, Draft, Verdict] | None:
        text = documents[name]
        v = document_checks(d.question, d.answer, d.evidence, text, cfg.max_overlap)
        callers = [c for c in (main, other) if c is not None]
        closed = await asyncio.gather(*(c.ask(closed_book_prompt(d.question), CHECK_TOKENS) for c in callers))
        every = await main.ask(all_answers_prompt(name, text, d.question), CHECK_TOKENS)
        counter[0] += 1
        if progress:
            progress("check", counter[0], len(drafts))
        if every is None or any(r is None for r in closed):
            return None  # a failed call: left for a rerun
        closed_book_check(v, d.answer, {c.name: str(r) for c, r in zip(callers, closed)})
        ambiguity_check(v, d.answer, answer_lines(every))
        return name, d, v

    return list(await asyncio.gather(*(one(name, d) for name, d in drafts)))


def _write(cfg: DraftConfig, rows: list[tuple[str, Draft, Verdict] | None], result: DraftResult) -> None:
    kept: list[str] = []
    rejected: list[str] = []
    for row in rows:
        if row is None:
            continue
        name, d, v = row
        line: dict[str, Any] = {"document": name, "question": d.question, "answer": d.answer, "evidence": d.evidence}
        if v.kept:
            kept.append(json.dumps({**line, "checks": v.detail}, ensure_ascii=False))
        else:
            for r in v.reasons:
                result.reasons[r] = result.reasons.get(r, 0) + 1
            rejected.append(json.dumps({**line, "reasons": v.reasons, "checks": v.detail}, ensure_ascii=False))
    result.kept, result.rejected = len(kept), len(rejected)
    for path, lines in ((Path(cfg.out), kept), (Path(result.rejected_path), rejected)):
        path.write_text("".join(x + "\n" for x in lines), encoding="utf-8")


def draft_questions(cfg: DraftConfig, progress: Progress | None = None,
                    models: DraftModels | None = None) -> DraftResult:
    """Sync entry point of :func:`adraft` (not from inside a running event loop)."""
    return asyncio.run(adraft(cfg, progress, models))
