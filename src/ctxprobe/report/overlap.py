"""Lexical overlap in words: one line with every family's overlap, and one line per flagged
family (the statistic: :mod:`ctxprobe.analysis.overlap`; the numbers are the JSON's
``overlap``)."""

from __future__ import annotations

from ctxprobe.analysis.overlap import OverlapStat


def overlap_lines(stats: list[OverlapStat]) -> list[str]:
    if not stats:
        return []
    lines = ["lexical overlap (share of the question's content words repeated in one evidence sentence; "
             "mean / largest over cases): "
             + "; ".join(f"{s.family} {s.mean:.2f} / {s.largest:.2f}" + (f" ({s.role})" if s.role else "")
                         for s in stats)]
    for s in stats:
        if not s.flagged:
            continue
        if s.limit == 0.0:
            lines.append(f"overlap flagged ({s.family}): {s.above} of {s.cases} cases repeat question words in "
                         f"the {s.role or 'evidence'} (largest {s.largest:.2f}), although {s.why}: those cases "
                         "can be answered by string matching")
        else:
            lines.append(f"overlap flagged ({s.family}): mean {s.mean:.2f} is above {s.limit:g} ({s.why}; "
                         f"{s.above} of {s.cases} cases above): literal matching may carry the score — "
                         "reword the questions away from the evidence's words")
    return lines
