"""Runs that cannot be compared fairly, named with what to do. Nothing is dropped silently:
every run stays among the candidates, and each caveat below says why its numbers may not
stand beside the others'."""

from __future__ import annotations

import json
from urllib.parse import quote

from ctxprobe.decide.runs import RunFacts

__all__ = ["caveats", "counts_as"]


def _scorer(run: RunFacts, family: str) -> str:
    params = (run.run.spec.get("families") or {}).get(family) or {}
    match = params.get("match") if isinstance(params, dict) else None
    judge = run.run.spec.get("judge")
    return f"judge {judge}" if match == "judge" and judge else f"{match or 'strict'}"


def caveats(runs: list[RunFacts], families: list[str], unit: str) -> list[str]:
    """One line per unfair comparison among ``runs``, each with what to do about it."""
    out: list[str] = []
    for family in families:
        have = [r for r in runs if family in r.families]
        lacking = [r for r in runs if family not in r.families]
        if have and lacking:
            out.append(f"{family}: not measured in {', '.join(r.run.run_id for r in lacking)} "
                       f"({', '.join(r.model for r in lacking)}): untested there; run it with --family {family}")
        params = {json.dumps(_params(r, family), sort_keys=True) for r in have}
        if len(params) > 1:
            out.append(f"{family}: parameters differ between runs ({'; '.join(sorted(params))}): they measure "
                       "different tasks; rerun with the same --param values")
        scorers = {_scorer(r, family) for r in have}
        if len(scorers) > 1:
            out.append(f"{family}: scored differently ({', '.join(sorted(scorers))}): rerun with one scorer")
        depths = {json.dumps(sorted(r.run.spec.get("depths") or [])) for r in have}
        if len(depths) > 1:
            out.append(f"{family}: depths differ between runs ({'; '.join(sorted(depths))}): a weakness at a depth "
                       "one run skipped is invisible there; rerun with the same --depths")
    for r in runs:
        if r.errors or r.truncated or r.unsent:
            parts = [f"{r.errors} `error` cases" if r.errors else "", f"{r.truncated} truncated prompts"
                     if r.truncated else "", f"{r.unsent} planned cases never sent" if r.unsent else ""]
            out.append(f"run {r.run.run_id} ({r.model}) has harness failures left ({', '.join(p for p in parts if p)}): "
                       "its lengths there are not measured; rerun the same `ctxprobe run` command to finish it")
        if not r.families:
            out.append(f"run {r.run.run_id} ({r.model}) has no scored case: it cannot be chosen; "
                       "`ctxprobe failures` shows why")
        out.extend(r.notes)
    priced = [r for r in runs if r.price is not None]
    unpriced = [r for r in runs if r.price is None]
    if priced and unpriced:
        out.append(f"no price for {', '.join(r.model for r in unpriced)}: ranked after every priced model; "
                   "give its USD per 1M tokens in a --prices file")
    if unit == "tokens" and len({counts_as(r) for r in runs}) > 1:
        out.append("the runs count tokens with different tokenizers ("
                   + ", ".join(sorted({r.run.tokenizer for r in runs}))
                   + "): the same text is a different number of tokens; compare in --unit words")
    approx = sorted({r.run.tokenizer for r in runs if r.run.tokenizer.startswith("approx")})
    if approx:
        out.append(f"tokenizer {', '.join(approx)} is approximate: lengths in tokens are estimates; "
                   "--unit words or chars counts the stored text itself")
    if any(r.adaptive for r in runs) and not all(r.adaptive for r in runs):
        out.append("some runs are adaptive and some fixed grids: each is read by the test valid for how it was "
                   "collected (the walk's always-valid verdict, or exact bounds); an adaptive run's unsent "
                   "lengths are untested")
    return out


def counts_as(run: RunFacts) -> str:
    """What decides how a run's tokens were counted. A server's tokenizer (``endpoint``,
    ``endpoint:URL``) counts by what the server is, not where it was reached: by its
    fingerprint (token ids of a fixed chat) where the run recorded one, else by its URL,
    the bare ``endpoint`` read as the model's own server (``endpoint:BASE_URL?model=NAME``,
    as :func:`ctxprobe.tokenizers.resolve_tokenizer` reads it). Other tokenizers by name."""
    name = run.run.tokenizer
    if name != "endpoint" and not name.startswith("endpoint:"):
        return name
    if run.run.meta.chat_template_hash:
        return f"endpoint#{run.run.meta.chat_template_hash}"
    if name == "endpoint" and run.model.base_url is not None:
        return f"endpoint:{run.model.base_url}?model={quote(run.model.name, safe='')}"
    return name


def _params(run: RunFacts, family: str) -> dict[str, object]:
    params = (run.run.spec.get("families") or {}).get(family) or {}
    return dict(params) if isinstance(params, dict) else {}
