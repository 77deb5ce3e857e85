"""Strict scoring of answers that are sets (several values, variables or words).

Shared by the set-answer families (``niah`` multivalue/multiquery, ``vartrack``,
``aggregation``) so that "partial" means the same thing everywhere:

- the *answered* set is every candidate of the family's form found in the output (numbers
  for niah, ``VAR_`` names for vartrack, list words for aggregation), so an answer that
  lists every candidate is judged on all of them, not just on the ones it got right;
- the case score is the F1 of answered against expected: missing items lower recall,
  extra items lower precision, so listing everything never earns full credit;
- ``exact`` (answered == expected) is stored beside it;
- the outcome is ``correct`` when exact, ``partial`` when some but not all of the expected
  items are given (or extras come with them), otherwise a miss label.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ctxprobe.core.outcome import Outcome, Scored
from ctxprobe.scores.classify import classify_miss


@dataclass(frozen=True)
class SetMatch:
    expected: tuple[str, ...]
    answered: tuple[str, ...]  # distinct candidates in the output, in order of appearance

    @property
    def hits(self) -> list[str]:
        got = set(self.answered)
        return [e for e in self.expected if e in got]

    @property
    def extras(self) -> list[str]:
        want = set(self.expected)
        return [a for a in self.answered if a not in want]

    @property
    def exact(self) -> bool:
        return set(self.answered) == set(self.expected)

    @property
    def precision(self) -> float:
        return len(self.hits) / len(self.answered) if self.answered else 0.0

    @property
    def recall(self) -> float:
        return len(self.hits) / len(self.expected) if self.expected else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def detail(self) -> dict[str, Any]:
        return {
            "exact": self.exact,
            "f1": round(self.f1, 6),
            "precision": round(self.precision, 6),
            "recall": round(self.recall, 6),
            "hits": self.hits,
            "missing": [e for e in self.expected if e not in set(self.answered)],
            "extras": self.extras,
        }


def match_set(expected: Iterable[str], answered: Iterable[str]) -> SetMatch:
    return SetMatch(tuple(dict.fromkeys(expected)), tuple(dict.fromkeys(answered)))


def score_set(match: SetMatch, output: str, distractors: Iterable[str] = (), **extra: Any) -> Scored:
    """F1 score and outcome label (see module docstring). ``distractors`` only label a
    miss: an answer made only of other keys' items is a ``distractor`` outcome."""
    detail = {**match.detail(), **extra}
    if match.exact:
        return Scored(1.0, Outcome.CORRECT, detail)
    if match.hits:
        return Scored(round(match.f1, 6), Outcome.PARTIAL, detail)
    known = set(distractors)
    if any(x in known for x in match.extras):
        return Scored(0.0, Outcome.DISTRACTOR, detail)
    if match.extras:
        return Scored(0.0, Outcome.WRONG, detail)
    return Scored(0.0, classify_miss(output), detail)


def count_exact(text: str, item: str) -> int:
    """Occurrences of ``item`` not glued to a longer key, name or number."""
    return len(re.findall(rf"(?<![\w-]){re.escape(item)}(?![\w-])", text))
