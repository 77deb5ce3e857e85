"""What RULER adds to the reports: its own scorer (RULER's string match, for its headline
and ``report --scorer ruler``), its headline (task scores per length, their average, the
effective length under RULER's rule) in the terminal, the JSON (``ruler_headline``) and
its section of the HTML page."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Console

from ctxprobe.core.case_meta import case_meta
from ctxprobe.families.ruler.analysis import RulerHeadline, ruler_headline
from ctxprobe.families.ruler.task import TASKS, case_metric, match
from ctxprobe.core.records import CaseRecord
from ctxprobe.report.hooks import FamilyReportHooks
from ctxprobe.report.rundata import family_names

if TYPE_CHECKING:
    from ctxprobe.core.rows import ResultRow
    from ctxprobe.report.html.parts import PageSection
    from ctxprobe.store import RunRecord


class RulerHooks(FamilyReportHooks):
    rescores = True
    scorer_label = "RULER string match"

    def rescore(self, record: CaseRecord, family: str) -> float:
        refs = [*record.expected, *case_meta(record.meta).get("aliases", [])]
        return match(case_metric(family, record.meta), record.output or "", refs)

    def headline(self, rows: Sequence[ResultRow], run: RunRecord) -> RulerHeadline | None:
        """RULER's headline over the run's labels that are RULER's task names (a ``--preset
        ruler`` run), in RULER's order; None for a run with no ``ruler`` family."""
        if not any(name == "ruler" for name in family_names(run).values()):
            return None
        return ruler_headline(rows, list(TASKS))

    def print_headline(self, headline: Any, out: Console, strict_effective: Mapping[str, int | None] | None,
                       threshold: float | None) -> None:
        from ctxprobe.families.ruler.report_table import render_ruler_headline

        render_ruler_headline(headline, out, dict(strict_effective) if strict_effective else None, threshold)

    def html_headlines(self, runs: Sequence[tuple[str, Any]]) -> PageSection | None:
        from ctxprobe.families.ruler.report_html import ruler_section

        return ruler_section(runs)


HOOKS = RulerHooks()
