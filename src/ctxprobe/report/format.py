"""Short, consistent labels for lengths, depths and accuracies.

Lengths are given to ctxprobe in binary units ('4k' = 4096 tokens), so they are printed
the same way: a length that is a whole number of 1024-token blocks reads back exactly as
the user wrote it ("4K"), and anything else shows one decimal ("4.9K" for 5000) so a
label never pretends to be a round length it is not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ctxprobe.spec.units import fmt_depth, fmt_length, fmt_tokens  # noqa: F401  (re-exported: report's callers use them)
from ctxprobe.core.outcome import Outcome

if TYPE_CHECKING:
    from ctxprobe.analysis.grid import Profile

#: Where PNG plots go when no directory is given.
DEFAULT_REPORT_DIR = "ctxprobe-report"


def fmt_score(value: float | None) -> str:
    """Accuracy with two decimals; "—" for an unmeasured value."""
    return "—" if value is None else f"{value:.2f}"


def fmt_interval(lo: float, hi: float) -> str:
    """Confidence interval as "[0.70–0.99]" (en dash: reads as a range, not a minus)."""
    return f"[{lo:.2f}–{hi:.2f}]"


def fmt_threshold(threshold: float) -> str:
    """Threshold without trailing zeros: 0.856 → "0.856", 0.5 → "0.5"."""
    return f"{threshold:g}"


def effective_length_line(profile: Profile) -> str:
    """The one-line verdict shown under every table and plot of a profile."""
    eff = profile.effective_length
    if eff is not None:
        return (
            f"effective length: {fmt_tokens(eff)} observed "
            f"(threshold {fmt_threshold(profile.threshold)}, mean ≥ threshold; its interval is below the table)"
        )
    if not profile.lengths:
        return "effective length: undetermined (no results)"
    shortest = min(profile.lengths, key=lambda s: s.length)
    if shortest.n == 0:
        return (
            f"effective length: undetermined (no scored cases at {fmt_tokens(shortest.length)}"
            ", only harness failures)"
        )
    return f"effective length: below {fmt_tokens(shortest.length)} (shortest length fails)"


def effective_length_note(profile: Profile) -> str | None:
    """Why the walk stopped where it did, when that is not an ordinary failure."""
    ordered = sorted(profile.lengths, key=lambda s: s.length)
    if profile.verdicts:  # adaptive: what the walk decided, not what the means say
        open_at = [fmt_tokens(k) for k, v in sorted(profile.verdicts.items()) if v == "open"]
        unsent = [fmt_tokens(k) for k, v in sorted(profile.verdicts.items()) if v == "untested"]
        parts = ([f"the adaptive walk left {', '.join(open_at)} open (not decided)"] if open_at else []) + (
            [f"never sent {', '.join(unsent)} (untested)"] if unsent else [])
        return "; ".join(parts) or None
    if not ordered or profile.effective_length is None:
        return None
    if profile.effective_length == ordered[-1].length:
        return "every tested length clears the bar: the real limit may be longer"
    nxt = next(s for s in ordered if s.length > profile.effective_length)
    if nxt.outcomes.get(Outcome.INPUT_TRUNCATED):
        return (f"stopped at {fmt_tokens(nxt.length)}: not measured there — {nxt.outcomes['input_truncated']} "
                "prompts truncated by the server")
    if nxt.n == 0:
        return (
            f"stopped at {fmt_tokens(nxt.length)}: no scored cases there "
            f"({nxt.n_excluded} harness failures)"
        )
    return None


def length_unit(spec: dict[str, Any] | None, family: str) -> str:
    """"entries" for a family sized in entries (phone books with ``unit: entries``), else "tokens"."""
    params = ((spec or {}).get("families") or {}).get(family) or {}
    return "entries" if isinstance(params, dict) and params.get("unit") == "entries" else "tokens"
