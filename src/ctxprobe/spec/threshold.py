"""The accuracy bar's one rule, shared by every command that takes one (run, plan, report,
compare, the adaptive sweep): a fraction in (0, 1].

A bar above 1 can never be cleared (a perfect model would be reported "below" its
shortest length); a bar of 0 or below is cleared by a model that answers nothing. Both
are refused with the same one-line message wherever they are given.
"""

from __future__ import annotations

import math

from ctxprobe.errors import CtxprobeError


def threshold_problem(value: float) -> str | None:
    """The one-line refusal for a bar outside (0, 1], or None when it is a valid bar."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or not 0.0 < value <= 1.0:
        return f"threshold {value!r} is outside (0, 1]: the accuracy bar is a fraction such as 0.856"
    return None


def check_threshold(value: float) -> float:
    """``value`` when it is a valid bar; a :class:`CtxprobeError` with the shared message otherwise."""
    problem = threshold_problem(value)
    if problem:
        raise CtxprobeError(problem)
    return float(value)
