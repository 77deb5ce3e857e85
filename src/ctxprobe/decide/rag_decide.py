"""``ctxprobe decide RUN... --rag --use FAMILIES``: the runs read as for a decision, then
per run the use's limit, distractor tolerance and depth profile turned into retrieval
settings per chunk size (:mod:`ctxprobe.decide.rag`), optionally confirmed on the model
(:mod:`ctxprobe.decide.rag_confirm`)."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxprobe.decide.decision import Decision, decide
from ctxprobe.decide.rag import Budgets, RagSetting, RunEvidence, rag_settings, read_evidence
from ctxprobe.decide.rag_chunks import DEFAULT_SIZES, ChunkSet, chunk_source, doc_chunks, paragraphs, token_chunks
from ctxprobe.errors import CtxprobeError
from ctxprobe.report.rag_confirmed import stored_confirmation_line
from ctxprobe.store.confirmations import latest_confirmations
from ctxprobe.spec.threshold import Bar

__all__ = ["RagDecision", "decide_rag"]


@dataclass(frozen=True)
class RagDecision:
    decision: Decision
    evidence: list[RunEvidence]
    settings: list[RagSetting]
    use: list[str]
    #: ``--confirm``: one result per setting confirmed (:class:`ctxprobe.decide.rag_confirm.Confirmation`).
    confirmations: list[Any] = field(default_factory=list)
    #: Stored confirmations (``store.confirmations`` rows) of exactly these settings: the
    #: latest per setting, read when this decision did not confirm them itself.
    confirmed: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"use": self.use, "rag": [s.to_dict() for s in self.settings],
                "limits": [e.limit.to_dict() for e in self.evidence],
                "distractor_tolerance": [{"run_id": e.run.run.run_id, **e.tolerance.to_dict()} for e in self.evidence],
                "confirm": [c.to_dict() for c in self.confirmations],
                "confirmed": [{**{k: v for k, v in r.items() if k != "scores"}, "line": stored_confirmation_line(r)}
                              for r in self.confirmed],
                "caveats": self.decision.caveats,
                "rule": "k = the most chunks whose prompt (instruction + k chunks + question + answer budget, in the "
                        "model's tokens) stays within the use's reliable length (interval's lower end) and whose k-1 "
                        "near-misses stay within the distractor tolerance's lower end; order from the depth profile "
                        "at the reliable length (middle weaker than the edges, 95%: top-ranked at the edges)"}

    def confirmed_for(self, s: RagSetting) -> list[dict[str, Any]]:
        """The stored confirmation of setting ``s`` (none or one)."""
        return [r for r in self.confirmed if r["run_id"] == s.run_id and _matches(r, s, r["source"])]

    def lines(self) -> list[str]:
        out = [f"retrieval settings for {'+'.join(self.use)} (95% confidence; lengths in each model's tokens):"]
        for i, ev in enumerate(self.evidence):
            letter = chr(ord("A") + i)
            out.append(f"{letter}  {ev.run.model} · run {ev.run.run.run_id}")
            for text in (ev.limit.line(), f"distractor tolerance: {ev.tolerance.line()}",
                         f"order: {ev.order.text()}"):
                out += textwrap.wrap(text, 80, initial_indent="   ", subsequent_indent="     ", break_on_hyphens=False)
            for s in (s for s in self.settings if s.run_id == ev.run.run.run_id):
                out += textwrap.wrap(s.line(), 80, initial_indent="   ", subsequent_indent="     ",
                                     break_on_hyphens=False)
                for r in self.confirmed_for(s):
                    out += textwrap.wrap(stored_confirmation_line(r), 80, initial_indent="     ",
                                         subsequent_indent="       ", break_on_hyphens=False)
            for c in (c for c in self.confirmations if c.setting.run_id == ev.run.run.run_id):
                out += textwrap.wrap(c.line(), 80, initial_indent="   ", subsequent_indent="     ",
                                     break_on_hyphens=False)
        if self.settings:
            b = self.settings[0].budgets
            out.append(f"budgets: instruction {b.instruction:,}, question {b.question:,}, answer {b.answer:,} tokens")
        for note in self.decision.caveats:
            out += textwrap.wrap(f"caveat: {note}", 80, subsequent_indent="  ", break_on_hyphens=False)
        return out


def decide_rag(run_ids: list[str], store_path: str | Path = "ctxprobe.sqlite", *, use: list[str],
               chunks: list[int] | None = None, chunks_from: str | Path | None = None,
               budgets: Budgets | None = None, bars: Mapping[str, Bar] | None = None,
               threshold: float | None = None, prices: str | Path | None = None,
               stored: bool = True) -> RagDecision:
    """Retrieval settings per run and chunk size for ``use`` (see :mod:`ctxprobe.decide.rag`);
    with ``stored``, each setting's latest stored ``--confirm`` result beside it (one
    confirmed on the same use, chunk size, k, order and chunk source)."""
    if not use:
        raise CtxprobeError("decide --rag needs --use FAMILIES: the families the product's prompts need, "
                            "e.g. --use niah")
    budgets = budgets or Budgets()
    decision = decide(run_ids, store_path, bars=bars, threshold=threshold, prices=prices)
    paras = paragraphs(chunks_from) if chunks_from is not None else None
    sizes = list(chunks or DEFAULT_SIZES)
    evidence, settings = [], []
    for run in decision.runs:
        ev = read_evidence(run, store_path, use)
        evidence.append(ev)
        settings += rag_settings(ev, _chunks(run.run.tokenizer, run.run.model, sizes, paras), budgets)
    found = _stored(settings, store_path, chunk_source(chunks_from)) if stored else []
    return RagDecision(decision, evidence, settings, list(use), confirmed=found)


def _matches(row: dict[str, Any], s: RagSetting, source: str) -> bool:
    return (row["use"], row["chunk_tokens"], row["k"], row["order_kind"], row["first_edge"], row["source"]) == (
        s.use, s.chunk_tokens, s.k, s.order.kind, s.order.first_edge, source)


def _stored(settings: list[RagSetting], store_path: str | Path, source: str) -> list[dict[str, Any]]:
    from ctxprobe.store import open_existing

    with open_existing(store_path) as store:
        rows = {rid: latest_confirmations(store.rag_confirmations(rid)) for rid in {s.run_id for s in settings}}
    return [r for s in settings for r in rows[s.run_id] if _matches(r, s, source)]


def _chunks(tokenizer: str, model: str, sizes: list[int], paras: list[str] | None) -> list[ChunkSet]:
    if paras is None:
        return token_chunks(sizes)
    from ctxprobe.tokenizers import resolve_tokenizer

    return doc_chunks(paras, sizes, resolve_tokenizer(tokenizer, model).count)
