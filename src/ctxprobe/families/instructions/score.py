"""Scoring ``instructions`` by IFEval's rules (:mod:`ctxprobe.families.instructions.score_checks`).

The case score is IFEval's instruction-level *strict* accuracy of the reply (the share of
its instructions followed); ``detail`` holds every instruction's strict and loose verdict
(``strict``, ``loose``, in the order of ``instruction_id_list``) and the prompt-level
verdicts (``prompt_strict``, ``prompt_loose``: all followed). Outcome ``correct`` when every
instruction is followed (strict), ``partial`` when some are, ``empty`` for an empty reply,
else ``wrong``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ctxprobe.core.outcome import Outcome, Scored
from ctxprobe.families.instructions.score_checks import verdicts


def score_instructions(ids: Sequence[str], kwargs: Sequence[Mapping[str, Any]], output: str) -> Scored:
    strict, loose = verdicts(ids, kwargs, output)
    n = sum(strict)
    if not output.strip():
        outcome = Outcome.EMPTY
    else:
        outcome = Outcome.CORRECT if n == len(ids) else Outcome.PARTIAL if n else Outcome.WRONG
    return Scored(n / len(ids), outcome, {"strict": strict, "loose": loose, "prompt_strict": all(strict),
                                          "prompt_loose": all(loose), "loose_score": sum(loose) / len(ids)})
