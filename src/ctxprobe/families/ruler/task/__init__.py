"""RULER compatibility: its tasks rendered as RULER renders them, and its scorers.

Why: results are easier to trust when they can be set beside published RULER tables.
:func:`ruler_families` maps RULER's 13 tasks onto sweep families (the ``ruler`` family for
the 11 synthetic ones); :mod:`.metrics` holds RULER's ``string_match_all`` /
``string_match_part``. Every remaining difference is listed in the README.
"""

from __future__ import annotations

from collections.abc import Mapping

from ctxprobe.core.case import Case
from ctxprobe.core.case_meta import case_meta
from ctxprobe.families.ruler.task.constants import RULER_BAR, SYNTHETIC, TASKS
from ctxprobe.families.ruler.task.metrics import (
    STRING_MATCH_ALL,
    STRING_MATCH_PART,
    match,
    postprocess_pred,
    string_match_all,
    string_match_all_batch,
    string_match_part,
    string_match_part_batch,
    task_score,
)
from ctxprobe.families.ruler.task.preset import ruler_families, skipped_line, skipped_tasks

__all__ = [
    "RULER_BAR", "STRING_MATCH_ALL", "STRING_MATCH_PART", "SYNTHETIC", "TASKS", "case_metric", "match",
    "postprocess_pred", "ruler_families", "ruler_references", "ruler_score", "skipped_line", "skipped_tasks",
    "string_match_all", "string_match_all_batch", "string_match_part", "string_match_part_batch", "task_score",
]


def ruler_references(case: Case) -> list[str]:
    """What RULER would score a case against: the expected values, plus accepted aliases."""
    return [*case.expected, *case_meta(case.meta).get("aliases", [])]


def case_metric(family: str, meta: Mapping[str, object]) -> str:
    """RULER's metric for a stored case: its own when the ruler family set one, else
    string_match_part for documents (QA), string_match_all for everything else."""
    metric = case_meta(meta).get("metric")
    if metric in (STRING_MATCH_ALL, STRING_MATCH_PART):
        return str(metric)
    return STRING_MATCH_PART if family == "documents" else STRING_MATCH_ALL


def ruler_score(case: Case, output: str, metric: str) -> float:
    """A case scored the RULER way (an alternative to the family's strict score)."""
    return match(metric, output, ruler_references(case))
