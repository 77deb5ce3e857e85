"""How a simulated model answers ``longout``.

The skill (a perfect reader) finds the rule in the question (``whose COLUMN is "VALUE"``),
reads the table's rows in page order and writes every matching one as TSV after the
header, fenced as the question asks.

``sim:out-budget?tokens=B`` (:data:`OUT_BUDGET`) has a known output budget: it writes the
same answer row by row while the reply (fences included) stays within B tokens of its
tokenizer, then closes the fence and stops of its own accord (finish ``stop``): answers of
up to B tokens are whole, longer ones lose their last rows (a recall miss, the model's).
"""

from __future__ import annotations

from ctxprobe.families.longout.task_page import HEADER, QUESTION_RE, fenced, read_page, tsv
from ctxprobe.sim.family_kinds import SimKind, SimTurn


def _rows(question: str, context: str) -> list[list[str]] | None:
    asked = QUESTION_RE.search(question)
    if asked is None or asked.group(1) not in (h.lower() for h in HEADER):
        return None
    column = [h.lower() for h in HEADER].index(asked.group(1))
    return [r for r in read_page(context) if len(r) == len(HEADER) and r[column] == asked.group(2)]


def longout_skill(question: str, context: str) -> str | None:
    rows = _rows(question, context)
    return None if rows is None else fenced(tsv(rows))


def _out_budget(turn: SimTurn) -> str | None:
    rows = _rows(turn.question, turn.context)
    if rows is None:
        return turn.perfect(turn.question, turn.context)
    budget = int(turn.params["tokens"])
    kept: list[list[str]] = []
    used = turn.count(fenced(tsv([])))
    for row in rows:
        used += turn.count("\n" + "\t".join(row))
        if used > budget:
            break
        kept.append(row)
    return fenced(tsv(kept))


OUT_BUDGET = SimKind({"tokens": 2000, "seed": 0}, _out_budget, "writes at most `tokens` tokens of answer, then stops")
