"""Report hooks of a family whose addition is one JSON object per family label, shown on
the HTML page as one table per run and label under one section (``longout``'s output
effective length, ``instructions``' capacity, ``updates``' interference slope): the JSON
extra, the page's data and the section written once; a family names its section and
writes its analysis and its table."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ctxprobe.core.records import CaseRecord
from ctxprobe.report.hooks import FamilyReportHooks
from ctxprobe.report.html.parts import PageSection, ReportSection, Table, page_section


class LabelTableHooks(FamilyReportHooks):
    """Subclass it with the section's ``title``, ``note`` and ``anchor``, and override
    :meth:`label_extras` and :meth:`table`."""

    title: str = ""
    note: str = ""
    anchor: str = ""

    def label_extras(self, records: Iterable[CaseRecord]) -> Mapping[str, dict[str, Any]]:
        """Label → the object the JSON report carries for it (labels without one left out)."""
        raise NotImplementedError

    def table(self, run: str, label: str, data: Mapping[str, Any]) -> Table:
        """The table of one label's object (``data``) in one run."""
        raise NotImplementedError

    def json_extra(self, records: Iterable[CaseRecord]) -> dict[str, Any] | None:
        return dict(self.label_extras(records)) or None

    def html_data(self, records: Iterable[CaseRecord]) -> Any | None:
        return self.json_extra(records)

    def html_section(self, data: Mapping[str, Any], png_dir: Path) -> PageSection | None:
        tables = [self.table(run, label, d) for run, labels in data.items() for label, d in (labels or {}).items()]
        if not tables:
            return None
        section = ReportSection(self.title, tables, self.note)
        return page_section("plugin_section.html.j2", [(self.anchor, section.title)], anchor=self.anchor, s=section)
