"""Score one response and store it: the step every way of running cases ends with.

The sweep, instance packs and the benchmarks' bare runner all call this, so a response is
labelled and stored the same way whichever path sent it.
"""

from __future__ import annotations

from ctxprobe.redaction import scrub
from ctxprobe.runner.execute import Attempted
from ctxprobe.scores.outcome import score_response
from ctxprobe.store import Store, StoredResponse
from ctxprobe.core.family import Family
from ctxprobe.core.outcome import Scored


def record_response(store: Store, run_id: str, family: Family, item: Attempted, *, judged: Scored | None = None,
                    cost_usd: float | None = None, exact_counts: bool = False) -> tuple[float | None, Scored]:
    """Score ``item`` with its family (or a judge's grade) and store it; return the score.
    ``exact_counts``: preflight showed exact token-count agreement (any shortfall is truncation).

    Whatever a server sent is scrubbed of API keys (whole, fragments, masked forms) before
    it is scored (and the store scrubs whatever it writes): a key echoed in an error or a
    reply never reaches the store."""
    r = item.result
    text = scrub(r.text) if r and r.text is not None else None
    reasoning = r.extra.get("reasoning") if r else None
    spent = r.extra.get("reasoning_tokens") if r else None
    reasoning_tokens = spent if isinstance(spent, int) and not isinstance(spent, bool) else None
    if (reasoning_tokens is None and r is not None and item.case.cell.reasoning_budget is not None and not reasoning
            and not r.extra.get("reasoning_redacted")):
        reasoning_tokens = 0  # a budget was given and no reasoning came back, counted or shown
    error = scrub(item.error) if item.error else item.error
    score, scored = score_response(
        family, item.case, text=text, finish_reason=r.finish_reason if r else None,
        reported_prompt_tokens=r.prompt_tokens if r else None, error=error, judged=judged,
        exact_counts=exact_counts, thought=bool(reasoning) or bool(reasoning_tokens))
    cached = r.extra.get("cached_prompt_tokens") if r else None
    written = r.extra.get("cache_write_tokens") if r else None
    store.save_response(run_id, item.case.case_id, StoredResponse(
        output=text, finish_reason=r.finish_reason if r else None,
        reported_prompt_tokens=r.prompt_tokens if r else None, completion_tokens=r.completion_tokens if r else None,
        latency_s=round(item.latency_s, 4), attempts=item.attempts, error=error, score=score,
        outcome=scored.outcome, detail=scored.detail, reasoning=str(reasoning) if reasoning else None,
        cost_usd=cost_usd, cached_prompt_tokens=cached if isinstance(cached, int) else None,
        reasoning_tokens=reasoning_tokens, cache_write_tokens=written if isinstance(written, int) else None))
    return score, scored
