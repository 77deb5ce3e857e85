"""Lexical overlap per family, and the families whose overlap says more than they claim.

Every case of a family that records overlap stores ``meta.overlap``: per evidence sentence,
the share of the question's content words that sentence repeats
(:mod:`ctxprobe.haystack.overlap`). A case's overlap is its largest (over the sentences, or
over the sentences of one role). Per family this module gives the mean and the largest case
overlap and how many cases are above the family's limit.

Limits: a family whose results rest on low overlap declares its claim (its declaration's
``overlap``, :class:`ctxprobe.core.declaration.OverlapClaim`; :func:`claims` reads them):

- ``multihop`` claims that the question shares **no** content word with the second hop's
  fact (role ``second_hop``): any case above 0 is flagged;
- ``documents`` asks the user's own questions (hand-written, or drafted and checked one by
  one by ``draft-questions`` at its own ``--max-overlap``, 0.5): flagged when the mean case
  overlap is above 0.3 (the question repeats about a third of its
  content words in one evidence sentence, where NoLiMa found that literal matching starts
  carrying the score), whether or not each question passed its own check.

The other families (niah, vartrack, ...) ask for a key stated with the value, by design:
their overlap is shown, never flagged.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from ctxprobe.core import registry
from ctxprobe.core.declaration import OverlapClaim
from ctxprobe.core.records import CaseRecord
from ctxprobe.haystack.overlap import max_overlap

def claims() -> dict[str, OverlapClaim]:
    """Family name → the overlap claim it declares, for every registered family with one."""
    found = ((e.name, e.declaration().overlap) for e in registry.entries("families"))
    return {name: claim for name, claim in found if claim is not None}


@dataclass(frozen=True)
class OverlapStat:
    family: str  # the run's label
    name: str  # the family's name
    cases: int
    mean: float
    largest: float
    limit: float | None
    above: int  # cases above the limit (0 without one)
    flagged: bool
    role: str | None = None
    why: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def overlap_stats(records: Iterable[CaseRecord], names: Mapping[str, str] | None = None) -> list[OverlapStat]:
    """Per family label, from case records (``family`` label and ``meta``); ``names`` maps a
    label to its family name (a label is its name by default). Families whose cases store no
    overlap are left out."""
    by_claim = claims()
    by_family: dict[str, list[float]] = defaultdict(list)
    for rec in records:
        label = rec.family
        rows = (rec.meta or {}).get("overlap")
        if not isinstance(rows, list):
            continue
        claim = by_claim.get((names or {}).get(label, label))
        if claim is not None and claim.role is not None:
            rows = [r for r in rows if r.get("role") == claim.role]
        by_family[label].append(max_overlap(rows))
    out = []
    for label in sorted(by_family):
        values = by_family[label]
        name = (names or {}).get(label, label)
        claim = by_claim.get(name)
        mean = sum(values) / len(values)
        above = sum(v > claim.limit for v in values) if claim else 0
        flagged = claim is not None and (above > 0 if claim.rule == "any" else mean > claim.limit)
        out.append(OverlapStat(label, name, len(values), mean, max(values), claim.limit if claim else None, above,
                               flagged, claim.role if claim else None, claim.why if claim else None))
    return out
