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


# -- per-family bars ------------------------------------------------------------------------

#: Bars known by name: RULER's absolute 0.856 and NoLiMa's relative rule (85% of the
#: model's own score at its shortest length).
NAMED_BARS: dict[str, float | str] = {"ruler": 0.856, "nolima": "relative:0.85"}

Bar = float | str  # a number in (0, 1], or "relative:F" (F x the score at the shortest length)


def check_bar(value: object) -> Bar:
    """One family's bar in its canonical form: a float, or ``"relative:F"``.

    Accepts a number, a numeric string, ``ruler``, ``nolima``, ``relative`` or ``relative:F``."""
    if isinstance(value, str):
        text = value.strip().lower()
        named = NAMED_BARS.get(text)
        if named is not None:
            return named
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
