"""A stored run's noise-floor rows (``--baseline no-context``), kept apart from its accuracy.

Twin cases (labels ``FAMILY@no-context``) were sent and scored like any case; families
whose floor is computed (``floor_kind = "random-instance"``: MRCR) get one row per scored
case, the case's random-instance expectation, from the stored answer key. Rows of twins
never enter a family's accuracy: :func:`split_rows` separates them first.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ctxprobe.analysis.grid import is_harness_failure
from ctxprobe.core.baseline import baseline_label, is_baseline
from ctxprobe.core.case import Case, Cell
from ctxprobe.core.records import CaseRecord
from ctxprobe.core.outcome import Outcome
from ctxprobe.core.rows import ResultRow


def split_rows(rows: Iterable[ResultRow]) -> tuple[list[ResultRow], list[ResultRow]]:
    """(the run's own rows, its no-context twins' rows)."""
    main: list[ResultRow] = []
    twins: list[ResultRow] = []
    for r in rows:
        (twins if is_baseline(r.family) else main).append(r)
    return main, twins


def _family_classes(spec: dict[str, Any]) -> dict[str, Any]:
    """Family label → its family class (from the registry), for a run stored with a baseline
    (empty otherwise); a label whose family is not registered is left out."""
    if not spec.get("baseline"):
        return {}
    from ctxprobe.core import registry

    out = {}
    for label, params in (spec.get("families") or {}).items():
        if is_baseline(label):
            continue
        entry = registry.find("families", str((params or {}).get("family", label)))
        if entry is not None:
            out[label] = entry.load()
    return out


def floor_kinds(spec: dict[str, Any]) -> dict[str, str]:
    """Family label → its floor kind, for a run stored with a baseline (empty otherwise)."""
    return {label: str(cls.floor_kind) for label, cls in _family_classes(spec).items() if cls.floor_kind}


def computed_floor_rows(records: Iterable[CaseRecord], spec: dict[str, Any]) -> Iterator[ResultRow]:
    """Rows of the computed floors: for each scored case of a ``random-instance`` label,
    its family's expectation for the case (``FamilyBase.computed_floor``: MRCR's random
    instance)."""
    floors = {label: cls.computed_floor for label, cls in _family_classes(spec).items()
              if cls.floor_kind == "random-instance"}
    for r in records:
        floor = floors.get(r.family)
        if floor is None or r.outcome is None:
            continue
        row = ResultRow(r.family, r.length, r.depth, r.rep, r.outcome, r.score, r.token_count)
        if is_harness_failure(row):
            continue
        case = Case(Cell(r.family, r.length, r.depth), r.rep, r.seed, r.messages, r.expected,
                    r.distractors, r.meta, r.token_count)
        score = floor(case)
        yield ResultRow(baseline_label(r.family), r.length, r.depth, r.rep,
                        Outcome.CORRECT if score >= 1.0 else Outcome.PARTIAL, score, r.token_count)
