"""Scores: the family's strict score plus one label from the outcome taxonomy.

Harness failures (the request failed, or the server saw fewer tokens than we built) are
labelled as such and carry no score: they are never counted as the model's misses.
"""

from __future__ import annotations

from ctxprobe.core.family import Family
from ctxprobe.core.outcome import CUT_MISSES, Outcome, Scored
from ctxprobe.core.case import Case


def truncation_tolerance(token_count: int, *, exact: bool = False) -> int:
    """A reported prompt more than this many tokens short of what we built counts as truncated.

    ``exact``: preflight showed the server counts the same chat exactly as we do, so any
    shortfall is the server dropping tokens (a cut of 100 tokens can remove a depth-0
    needle): no tolerance. Otherwise max(4, 0.5%) absorbs tokenizer/template drift.
    """
    if exact:
        return 0
    return max(4, int(0.005 * token_count))


def score_response(
    family: Family,
    case: Case,
    *,
    text: str | None,
    finish_reason: str | None,
    reported_prompt_tokens: int | None,
    error: str | None = None,
    judged: Scored | None = None,
    exact_counts: bool = False,
    thought: bool = False,
) -> tuple[float | None, Scored]:
    """(score or None for harness failures, label and detail). ``judged`` is a calibrated
    judge's grade, used instead of the family's own scorer for open-ended answers.
    ``exact_counts``: the server's token counts agreed exactly at preflight (no tolerance).
    ``thought``: the reply spent tokens reasoning (reasoning text or reasoning tokens came
    back); with no answer and the output limit hit, it was cut off while thinking: labelled
    ``output_truncated`` with no score, left out of accuracy like a harness failure (the
    budget ran out, the model did not answer wrong)."""
    if error is not None or text is None:
        return None, Scored(0.0, Outcome.ERROR, {"error": error or "no output"})
    tolerance = truncation_tolerance(case.token_count, exact=exact_counts)
    if reported_prompt_tokens is not None and reported_prompt_tokens < case.token_count - tolerance:
        return None, Scored(0.0, Outcome.INPUT_TRUNCATED, {
            "built": case.token_count, "reported": reported_prompt_tokens, "tolerance": tolerance})
    if thought and finish_reason == "length" and not text.strip():
        return None, Scored(0.0, Outcome.OUTPUT_TRUNCATED, {"while_thinking": True})
    scored = judged if judged is not None else family.score(case, text)
    if scored.outcome == Outcome.ERROR:  # the judge could not grade: a harness failure
        return None, scored
    if finish_reason == "length" and family.long_output:  # a long answer cut by the cap
        return None, Scored(0.0, Outcome.OUTPUT_TRUNCATED, {**scored.detail, "cut_score": scored.score})
    if scored.outcome in CUT_MISSES and finish_reason == "length":
        scored = Scored(scored.score, Outcome.OUTPUT_TRUNCATED, scored.detail)
    return scored.score, scored
