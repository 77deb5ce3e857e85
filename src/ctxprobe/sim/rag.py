"""``sim:rag``: a simulated model with a stated effective length, distractor tolerance and
middle sag, the truth ``decide --rag`` must recover.

``sim:rag?cliff=4000&tolerance=10&sag=0.3&late=0&seed=0`` reads the prompt like the other
sims (the question's key, the context's ``KEY … NUMBER`` statements) and:

- answers wrong when the prompt holds more than ``cliff`` tokens (its effective length);
- answers a look-alike's value when the context states more than ``tolerance`` values of
  other keys of the asked key's form (its distractor tolerance);
- misses with probability ``sag`` when the asked key's statement sits in the middle of the
  context (its first character between 25% and 75% of the context text), and with
  probability ``late`` when it sits in the last quarter (so with ``late`` > 0 the start
  is the better edge); elsewhere it answers right.

A miss names another key's value when there is one, else "I could not find it.". Draws are
uniform numbers fixed by (seed, prompt), as ``sim:decay``'s: the same prompt always gets
the same answer. It never sees an answer key.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ctxprobe.sim.reader import Reader

__all__ = ["RAG_DEFAULTS", "RAG_TYPES", "rag_answer"]

RAG_DEFAULTS: dict[str, float | int] = {"cliff": 4096, "tolerance": 10, "sag": 0.0, "late": 0.0, "seed": 0}
RAG_TYPES: dict[str, type] = {"cliff": int, "tolerance": int, "sag": float, "late": float, "seed": int}
_MIDDLE = (0.25, 0.75)


def rag_answer(question: str, context: str, prompt_tokens: int, params: Mapping[str, float | int],
               draw: Callable[[str], float], reader: Reader, right: str | None) -> str | None:
    """The reply (None: nothing to say); ``right`` is what a perfect reader finds."""
    if right is None:
        return None
    asked = set(reader.keys_in(question))
    others = [v for key, values in reader.bindings(context).items() if key not in asked for v in values]
    lookalikes = len(others)
    wrong = others[int(draw("wrong") * len(others))] if others else None
    if prompt_tokens > int(params["cliff"]) or lookalikes > int(params["tolerance"]):
        return wrong
    at = min((context.find(k) for k in asked if k in context), default=-1)
    share = at / max(1, len(context))
    miss = (float(params["sag"]) if _MIDDLE[0] <= share <= _MIDDLE[1]
            else float(params["late"]) if share > _MIDDLE[1] else 0.0)
    if at >= 0 and draw("position") < miss:
        return wrong
    return right
