"""What the report shows beyond accuracy: token-count audit, latency, failure sample.

All of it is computed in one streaming pass over a run's case records
(``Store.iter_case_records``), so a run with million-token prompts is never held in memory:
per record only a few numbers and, for sampled failures, a short excerpt are kept.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ctxprobe.report.evidence import DEFAULT_WINDOW, Failure, FailureSampler
from ctxprobe.core.outcome import Outcome
from ctxprobe.core.records import CaseRecord


@dataclass(frozen=True)
class AuditRow:
    """Target vs built vs server-reported prompt tokens at one (family, length)."""

    family: str
    length: int  # target
    n: int
    built_min: int
    built_max: int
    reported_n: int  # cases where the server reported a prompt token count
    reported_min: int | None
    reported_max: int | None
    max_gap: int | None  # largest built - reported (positive: server saw fewer tokens)
    truncated: int  # cases labelled input_truncated


@dataclass(frozen=True)
class LatencyRow:
    family: str
    length: int
    n: int
    median_s: float
    p90_s: float
    max_s: float
    retried: int  # cases that needed more than one attempt


@dataclass
class RunDetails:
    audit: list[AuditRow]
    latency: list[LatencyRow]
    failures: list[Failure]
    failure_counts: dict[str, int]
    n_failures: int
    prompt_tokens: int  # server-reported, summed
    completion_tokens: int
    answered: int
    extra: dict[str, Any] = field(default_factory=dict)
    #: Server-reported prompt tokens served from its prefix cache, summed over the
    #: responses that reported it (``cached_reported`` of them, whose prompts summed
    #: ``cached_of`` tokens). 0 responses: the server reports no cache figures.
    cached_tokens: int = 0
    cached_reported: int = 0
    cached_of: int = 0

    def cache_line(self) -> str | None:
        """"12,345 of 40,960 prompt tokens (30.1%) reused from the prefix cache …", or None."""
        if not self.cached_reported or not self.cached_of:
            return None
        share = self.cached_tokens / self.cached_of
        return (f"{self.cached_tokens:,} of {self.cached_of:,} prompt tokens ({share:.1%}) reused from the "
                f"model's prefix cache ({self.cached_reported} responses reported it)")


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    pos = q * (len(ordered) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


@dataclass
class _Group:
    built: list[int] = field(default_factory=list)
    reported: list[int] = field(default_factory=list)
    gaps: list[int] = field(default_factory=list)
    truncated: int = 0
    latency: list[float] = field(default_factory=list)
    retried: int = 0


def collect_details(records: Iterable[CaseRecord], *, failures: int = 20, outcome: str | None = None,
                    window: int = DEFAULT_WINDOW) -> RunDetails:
    """Audit, latency and a failure sample from a run's case records, in one pass."""
    groups: dict[tuple[str, int], _Group] = defaultdict(_Group)
    sampler = FailureSampler(failures, outcome, window)
    prompt_tokens = completion_tokens = answered = 0
    cached = cached_n = cached_of = 0
    for rec in records:
        g = groups[(rec.family, rec.length)]
        built = int(rec.token_count or 0)
        g.built.append(built)
        reported = rec.reported_prompt_tokens
        if reported is not None:
            g.reported.append(int(reported))
            g.gaps.append(built - int(reported))
            prompt_tokens += int(reported)
        completion_tokens += int(rec.completion_tokens or 0)
        if rec.cached_prompt_tokens is not None:
            cached += int(rec.cached_prompt_tokens)
            cached_n += 1
            cached_of += int(reported if reported is not None else built)
        if rec.outcome == Outcome.INPUT_TRUNCATED:
            g.truncated += 1
        if rec.outcome is not None:
            answered += 1
            if rec.latency_s is not None and rec.outcome != Outcome.ERROR:
                g.latency.append(float(rec.latency_s))
            if (rec.attempts or 1) > 1:
                g.retried += 1
        sampler.add(rec)
    audit = [AuditRow(fam, length, len(g.built), min(g.built), max(g.built), len(g.reported),
                      min(g.reported) if g.reported else None, max(g.reported) if g.reported else None,
                      max(g.gaps) if g.gaps else None, g.truncated)
             for (fam, length), g in sorted(groups.items())]
    latency = [LatencyRow(fam, length, len(g.latency), statistics.median(g.latency), _quantile(g.latency, 0.9),
                          max(g.latency), g.retried)
               for (fam, length), g in sorted(groups.items()) if g.latency]
    return RunDetails(audit, latency, sampler.sample(), dict(sampler.counts), sampler.total,
                      prompt_tokens, completion_tokens, answered, cached_tokens=cached, cached_reported=cached_n,
                      cached_of=cached_of)
