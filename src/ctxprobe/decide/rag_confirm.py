"""``decide --rag --confirm``: each recommended setting run on its model as retrieval-shaped
cases (:mod:`ctxprobe.decide.rag_cases`), in three paired arms: at k in the recommended
order, at 2k in the same order, and at k in the reversed order.

The setting **holds** when the k arm clears the bar with 95% confidence (its one-sided
Clopper–Pearson lower bound at alpha/2, the effective length's own rule). Each other arm
is compared with it case by case: the paired drop is the difference of accuracies, tested
by McNemar's exact test on the discordant pairs (a drop when p < 0.05 and more cases
are lost than gained). A setting that does not hold is retried at smaller k (halving,
down to 1) until one holds, and that one is named.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ctxprobe.analysis.binomial import cp_lower
from ctxprobe.analysis.exact_tests import mcnemar_exact
from ctxprobe.analysis.resolving import lower_level, shown_reliable
from ctxprobe.core.case import derive_seed
from ctxprobe.decide.rag import RagSetting
from ctxprobe.decide.rag_cases import RetrievalCase, build_case, score_answer
from ctxprobe.decide.rag_decide import RagDecision
from ctxprobe.errors import CtxprobeError
from ctxprobe.report.rag_confirmed import confirmation_line

__all__ = ["Arm", "Confirmation", "confirm_all", "confirm_setting"]

ALPHA = 0.05


@dataclass(frozen=True)
class Arm:
    name: str  # "k", "2k", "reversed"
    k: int
    scores: tuple[bool, ...]

    @property
    def mean(self) -> float:
        return sum(self.scores) / len(self.scores) if self.scores else 0.0

    def drop_against(self, ref: Arm) -> dict[str, Any]:
        """The paired drop from ``ref`` to this arm, McNemar's exact p."""
        lost = sum(a and not b for a, b in zip(ref.scores, self.scores))
        gained = sum(b and not a for a, b in zip(ref.scores, self.scores))
        p = mcnemar_exact(lost, gained)
        return {"arm": self.name, "k": self.k, "mean": self.mean, "drop": ref.mean - self.mean, "lost": lost,
                "gained": gained, "p": p, "drop_shown": p < ALPHA and lost > gained}


@dataclass(frozen=True)
class Confirmation:
    setting: RagSetting
    bar: float
    at_k: Arm
    at_2k: Arm
    reversed: Arm
    #: When the setting does not hold: the largest smaller k that does (None: none found).
    fallback: int | None = None

    @property
    def lower(self) -> float:
        n = len(self.at_k.scores)
        return cp_lower(sum(self.at_k.scores), n, lower_level(0.95)) if n else 0.0

    @property
    def held(self) -> bool:
        return shown_reliable(sum(self.at_k.scores), len(self.at_k.scores), self.bar, 0.95)

    def line(self) -> str:
        return confirmation_line(self.summary())

    def summary(self) -> dict[str, Any]:
        """The verdict and paired drops as JSON (what the store keeps; ``line`` reads it)."""
        return {"run_id": self.setting.run_id, "model": self.setting.model, "chunk_tokens": self.setting.chunk_tokens,
                "k": self.at_k.k, "bar": self.bar, "held": self.held, "n": len(self.at_k.scores),
                "hits": sum(self.at_k.scores), "accuracy": self.at_k.mean, "lower_bound": self.lower,
                "at_2k": self.at_2k.drop_against(self.at_k), "reversed": self.reversed.drop_against(self.at_k),
                "fallback_k": self.fallback}

    def to_dict(self) -> dict[str, Any]:
        return {**self.summary(), "line": self.line()}

    def stored_row(self, source: str) -> dict[str, Any]:
        """The row :meth:`ctxprobe.store.Store.save_rag_confirmation` takes (``source``:
        ``filler`` or the documents folder, :func:`ctxprobe.decide.rag_chunks.chunk_source`)."""
        s = self.setting
        return {"run_id": s.run_id, "model": s.model, "use": s.use, "chunk_tokens": s.chunk_tokens,
                "chunk_size": s.chunk_size, "k": s.k, "order_kind": s.order.kind, "first_edge": s.order.first_edge,
                "source": source, "bar": self.bar, "held": self.held, "result": self.summary(),
                "scores": {arm.name: [int(x) for x in arm.scores] for arm in (self.at_k, self.at_2k, self.reversed)}}


async def _scores(client: Any, cases: list[RetrievalCase], max_tokens: int) -> tuple[bool, ...]:
    from ctxprobe.models.base import GenerateRequest

    async def one(c: RetrievalCase) -> bool:
        got = await client.call(GenerateRequest(messages=c.messages, max_tokens=max_tokens))
        if got.result is None:
            raise CtxprobeError(f"--confirm: {client.name} failed a case: {got.error}")
        return score_answer(c, got.result.text)

    return tuple(await asyncio.gather(*(one(c) for c in cases)))


async def _arm(client: Any, setting: RagSetting, name: str, k: int, reps: int, count: Any,
               docs: tuple[str, ...], *, extra: int = 0, reverse: bool = False) -> Arm:
    cases = [build_case(derive_seed("rag-confirm", setting.chunk_tokens, k, rep), k, setting.chunk_tokens,
                        setting.order.kind, setting.order.first_edge, count, reverse=reverse, extra=extra, docs=docs)
             for rep in range(reps)]
    return Arm(name, k + extra, await _scores(client, cases, setting.budgets.answer))


def confirm_setting(setting: RagSetting, *, tokenizer: str, bar: float, reps: int = 40,
                    docs: tuple[str, ...] = ()) -> Confirmation:
    """Run the three arms of ``setting`` on its model (and smaller k when it does not hold)."""
    if reps < 1:
        raise CtxprobeError("--confirm-reps must be 1 or more")
    return asyncio.run(_confirm(setting, tokenizer, bar, reps, docs))


async def _confirm(setting: RagSetting, tokenizer: str, bar: float, reps: int, docs: tuple[str, ...]) -> Confirmation:
    from ctxprobe.models import resolve_provider
    from ctxprobe.runner.client import ModelClient
    from ctxprobe.tokenizers import resolve_tokenizer

    tok = resolve_tokenizer(tokenizer, setting.model)
    provider = resolve_provider(setting.model, tok)
    try:
        client = ModelClient(provider)
        k = max(1, setting.k)
        found = Confirmation(setting, bar, await _arm(client, setting, "k", k, reps, tok.count, docs),
                             await _arm(client, setting, "2k", k, reps, tok.count, docs, extra=k),
                             await _arm(client, setting, "reversed", k, reps, tok.count, docs, reverse=True))
        smaller = k // 2 if not found.held else 0
        while smaller >= 1:
            arm = await _arm(client, setting, "k", smaller, reps, tok.count, docs)
            if shown_reliable(sum(arm.scores), len(arm.scores), bar, 0.95):
                return replace(found, fallback=smaller)
            smaller = smaller // 2 if smaller > 1 else 0
        return found
    finally:
        await provider.aclose()


def confirm_all(res: RagDecision, *, reps: int = 40, chunks_from: str | Path | None = None,
                store_path: str | Path | None = None) -> RagDecision:
    """Every setting of ``res`` confirmed on its run's model (bar: the use's weakest family's);
    with ``store_path``, each result is stored in that store as soon as it is known (a
    stopped confirmation keeps the settings already confirmed)."""
    from ctxprobe.decide.rag_chunks import chunk_source, paragraphs
    from ctxprobe.store import open_existing

    docs = tuple(paragraphs(chunks_from)) if chunks_from else ()
    found = []
    for ev in res.evidence:
        bar = min(ev.run.families[f].bar for f in ev.labels)
        for s in (s for s in res.settings if s.run_id == ev.run.run.run_id):
            conf = confirm_setting(s, tokenizer=ev.run.run.tokenizer, bar=bar, reps=reps, docs=docs)
            if store_path is not None:
                with open_existing(store_path) as store:
                    store.save_rag_confirmation(conf.stored_row(chunk_source(chunks_from)))
            found.append(conf)
    return replace(res, confirmations=found, confirmed=[])
