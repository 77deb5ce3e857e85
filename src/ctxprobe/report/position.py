"""Position bias in words: one sentence per family for the terminal, the HTML page and the
JSON notes (the numbers themselves are the JSON's ``position_bias``; the statistic is
:mod:`ctxprobe.analysis.position`)."""

from __future__ import annotations

from collections.abc import Iterable

from ctxprobe.analysis.position import ALPHA, PositionBias, position_bias
from ctxprobe.core.rows import ResultRow
from ctxprobe.spec.units import fmt_depth, fmt_tokens


def position_report(rows: Iterable[ResultRow], units: dict[str, str] | None = None, *,
                    adaptive: bool = False) -> tuple[list[PositionBias], list[str]]:
    """The statistic per family and its sentences (``units``: family → ``tokens``/``entries``).

    ``adaptive``: the run's cells were sized by the walk of ``run --adaptive`` (a cell got
    more cases while its own results were unclear), so an interval for a fixed count of
    cases does not hold over them: none is stated, and one line says why."""
    found = position_bias(rows)
    if adaptive:
        return [], [ADAPTIVE_LINE.format(family=", ".join(b.family for b in found))] if found else []
    return found, [position_line(b, (units or {}).get(b.family, "tokens")) for b in found]


ADAPTIVE_LINE = ("position ({family}): not stated for an adaptive run: its cells were sized by their own results, "
                 "so an interval for a fixed number of cases would not hold; a run without --adaptive measures it")


def _depths(depths: Iterable[float]) -> str:
    return ", ".join(fmt_depth(d) for d in depths)


def position_line(bias: PositionBias, unit: str = "tokens") -> str:
    """"position (niah): the middle (25%, 50%, 75%) is weaker than the edges (0%, 100%) at 4K
    by 0.40 [0.21, 0.58]; ... the sag grows with length (+0.12 per doubling, p = 0.003)"."""
    label = fmt_tokens if unit == "tokens" else (lambda n: f"{n:,} entries")
    weaker = [d for d in bias.lengths if d.verdict == "weaker"]
    stronger = [d for d in bias.lengths if d.verdict == "stronger"]
    head = f"position ({bias.family}): the middle ({_depths(bias.middle)}) "
    parts = []
    if weaker:
        parts.append("is weaker than the edges (" + _depths(bias.edges) + ") at "
                     + "; ".join(f"{label(d.length)} by {d.deficit:.2f} [{d.lo:.2f}, {d.hi:.2f}]" for d in weaker))
    if stronger:
        parts.append("is stronger than the edges at "
                     + "; ".join(f"{label(d.length)} by {-d.deficit:.2f} [{-d.hi:.2f}, {-d.lo:.2f}]" for d in stronger))
    rest = [d for d in bias.lengths if d.verdict == "no difference"]
    if rest:
        widest = max(rest, key=lambda d: d.hi - d.lo)
        parts.append(("shows no difference from the edges" if not parts else "no difference") + " at "
                     + ", ".join(label(d.length) for d in rest)
                     + f" (95% intervals include 0; widest [{widest.lo:.2f}, {widest.hi:.2f}])")
    text = head + "; ".join(parts)
    g = bias.growth
    if g is None:
        return text + " (one length: whether the sag grows is not tested)"
    if g.grows:
        return text + f"; the sag grows with length ({g.slope:+.2f} per doubling, p = {g.p_value:.3g})"
    return text + (f"; the sag is not shown to grow with length ({g.slope:+.2f} per doubling, p = {g.p_value:.2g}"
                   f" ≥ {ALPHA:g})")
