"""The accuracy bar's one rule, shared by every command that takes one (run, plan, report,
compare, the adaptive sweep): a fraction in (0, 1].

A bar above 1 can never be cleared (a perfect model would be reported "below" its
shortest length); a bar of 0 or below is cleared by a model that answers nothing. Both
are refused with the same one-line message wherever they are given.
"""

from __future__ import annotations

import math

from ctxprobe.core import registry
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


# -- per-family bars ------------------------------------------------------------------------

Bar = float | str  # a number in (0, 1], or "relative:F" (F x the score at the shortest length)


def named_bars() -> dict[str, Bar]:
    """Bars known by a family's name (its declaration's ``named_bar``): RULER's absolute 0.856
    and NoLiMa's relative rule (85% of the model's own score at its shortest length)."""
    found = ((e.name, e.declaration().named_bar) for e in registry.entries("families"))
    return {name: bar for name, bar in found if bar is not None}


def check_bar(value: object) -> Bar:
    """One family's bar in its canonical form: a float, or ``"relative:F"``.

    Accepts a number, a numeric string, ``ruler``, ``nolima``, ``relative`` or ``relative:F``."""
    if isinstance(value, str):
        text = value.strip().lower()
        kind, sep, raw = text.partition(":")
        if kind in ("relative", "rel"):
            try:
                fraction = float(raw) if sep else 0.85
            except ValueError:
                fraction = math.nan
            return f"relative:{check_threshold(fraction):g}"
        try:
            value = float(text)
        except ValueError:
            named = named_bars().get(text)  # a name (ruler, nolima): the registry is read only for one
            if named is not None:
                return named
            raise CtxprobeError(f"bad bar {value!r}: use a number such as 0.9, ruler (0.856), nolima "
                                f"(85% of the shortest length's score) or relative:F") from None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return check_threshold(value)
    raise CtxprobeError(f"bad bar {value!r}: use a number such as 0.9, ruler, nolima or relative:F")


def parse_bars(text: str) -> dict[str, Bar]:
    """``niah=0.9,vartrack=nolima`` → {"niah": 0.9, "vartrack": "relative:0.85"}."""
    out: dict[str, Bar] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        family, sep, value = part.partition("=")
        if not sep or not family.strip() or not value.strip():
            raise CtxprobeError(f"bad --bars entry {part!r}: use FAMILY=BAR, e.g. niah=0.9,vartrack=nolima")
        out[family.strip()] = check_bar(value)
    return out


# -- the grid that can answer ---------------------------------------------------------------

#: The confidence a run's verdict is read at by default (the report's 95%).
DEFAULT_CONFIDENCE = 0.95
#: Past this many cases a length, a bar is not worth deriving a grid for (a bar of 1 never clears).
_MAX_DERIVED_CASES = 10_000
#: The repetitions of a grid whose bar no practical grid can show (a bar of 1).
FALLBACK_REPS = 3


def all_correct_cases(bar: float, confidence: float = DEFAULT_CONFIDENCE) -> int | None:
    """The fewest cases a length, all correct, that show accuracy ≥ ``bar`` with ``confidence``
    under the effective-length verdict's rule: the exact (Clopper–Pearson) lower bound at
    (1 − confidence) / 2, which for n of n is ((1 − confidence) / 2)^(1/n), clears the bar
    (up to the same float slack). ``ctxprobe.analysis.resolving.cases_to_show`` is the rule
    at any rate; a test keeps the two equal. None: no grid below 10,000 cases can."""
    alpha = (1.0 - confidence) / 2
    target = bar - 1e-12  # the slack of ctxprobe.analysis.grid.clears
    n = max(1, math.ceil(math.log(alpha) / math.log(target))) if 0.0 < target < 1.0 else 1
    if n > _MAX_DERIVED_CASES:
        return None
    while n > 1 and alpha ** (1.0 / (n - 1)) >= target:  # float rounding of the closed form
        n -= 1
    while alpha ** (1.0 / n) < target:
        if n >= _MAX_DERIVED_CASES:
            return None
        n += 1
    return n


def derived_reps(bars: list[float], depths: int, confidence: float = DEFAULT_CONFIDENCE) -> int:
    """The repetitions of the smallest grid in which a model with no misses clears every bar
    in ``bars`` at every length (``depths`` cases a repetition); :data:`FALLBACK_REPS` when
    no practical grid can."""
    need = [all_correct_cases(b, confidence) for b in bars]
    if not need or any(n is None for n in need):
        return FALLBACK_REPS
    return math.ceil(max(n for n in need if n is not None) / max(1, depths))
