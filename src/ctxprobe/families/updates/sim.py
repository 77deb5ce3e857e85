"""How a simulated model answers ``updates``.

The skill (a perfect reader) recognises PI-LLM's question, reads the stream in text order
(``KEY: VALUE;``) and answers every asked key's last value, one PI-LLM answer line each:
``The current value of KEY is VALUE.``; a key it never saw updated gets no line.

``sim:interference?slope=S&seed=0`` (:data:`INTERFERENCE`) has a stated interference
rate: for each asked key it counts the updates it read for that key (n) and answers the
last value with probability max(0, 1 − S × ln n), else an earlier value of that key drawn
uniformly (a ``stale`` answer). So accuracy falls log-linearly in the updates per key with
slope −S (PI-LLM's curve), the truth the report's fit must recover. Draws are
deterministic in (seed, key, prompt).
"""

from __future__ import annotations

import math

from ctxprobe.families.updates.task_stream import PROBE, QUESTION_RE, read_stream
from ctxprobe.sim.family_kinds import SimKind, SimTurn


def _asked(question: str) -> list[str] | None:
    found = QUESTION_RE.search(question)
    return [k.strip() for k in found.group(1).split(",")] if found else None


def _lines(answers: list[tuple[str, str]]) -> str:
    return "\n".join(f"The {PROBE} value of {key} is {value}." for key, value in answers)


def updates_skill(question: str, context: str) -> str | None:
    keys = _asked(question)
    if keys is None:
        return None
    seen = read_stream(context)
    return _lines([(k, seen[k][-1]) for k in keys if k in seen])


def _interference(turn: SimTurn) -> str | None:
    keys = _asked(turn.question)
    if keys is None:
        return turn.perfect(turn.question, turn.context)
    seen = read_stream(turn.context)
    slope = float(turn.params["slope"])
    answers: list[tuple[str, str]] = []
    for key in keys:
        values = seen.get(key)
        if not values:
            continue
        p = max(0.0, 1.0 - slope * math.log(len(values)))
        if len(values) == 1 or turn.draw(f"key:{key}") < p:
            answers.append((key, values[-1]))
        else:
            earlier = values[:-1]
            answers.append((key, earlier[int(turn.draw(f"stale:{key}") * len(earlier))]))
    return _lines(answers)


INTERFERENCE = SimKind({"slope": 0.15, "seed": 0}, _interference,
                       "per key P(final value) = max(0, 1 - slope * ln(updates read)), else a stale value")
