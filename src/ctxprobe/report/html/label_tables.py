"""Report hooks of a family whose addition is one JSON object per family label, shown on
the HTML page as one table per run and label under one section (``longout``'s output
effective length, ``instructions``' capacity, ``updates``' interference slope), and
optionally drawn as one PNG per label (:meth:`LabelTableHooks.plot_data`): the JSON extra,
the page's data, the section with its figures and the PNGs ``run``/``report`` write, once;
a family names its section and writes its analysis, its table and its plot's data."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxprobe.core.records import CaseRecord
from ctxprobe.report.hooks import FamilyReportHooks
from ctxprobe.report.html.parts import Figure, PageSection, ReportSection, Table, figure, page_section, plotted
from ctxprobe.report.html.sections import slug

if TYPE_CHECKING:
    from ctxprobe.report.plots.points import PointsPlot


class LabelTableHooks(FamilyReportHooks):
    """Subclass it with the section's ``title``, ``note`` and ``anchor``, and override
    :meth:`label_extras` and :meth:`table`; for a PNG per label, :meth:`plot_data` and
    ``png_name``."""

    title: str = ""
    note: str = ""
    anchor: str = ""
    #: The file name of a label's PNG after the label's ("by-answer-length": ``<label>-by-answer-length.png``).
    png_name: str = "plot"  # never "curve": <family>-curve.png is the generic accuracy-vs-length PNG

    def label_extras(self, records: Iterable[CaseRecord]) -> Mapping[str, dict[str, Any]]:
        """Label → the object the JSON report carries for it (labels without one left out)."""
        raise NotImplementedError

    #: What the terminal's second line per label walks ("by answer length").
    points_title: str = ""

    def table(self, run: str, label: str, data: Mapping[str, Any]) -> Table:
        """The table of one label's object (``data``) in one run."""
        raise NotImplementedError

    def label_headline(self, data: Mapping[str, Any]) -> str:
        """One label's result in a phrase (the terminal's first line per label)."""
        raise NotImplementedError

    def point_text(self, point: Mapping[str, Any]) -> str:
        """One of a label's ``points`` as the terminal prints it."""
        raise NotImplementedError

    def terminal_lines(self, extra: Mapping[str, Any]) -> list[str]:
        lines = []
        for label, data in extra.items():
            lines.append(f"{label}: {self.label_headline(data)}")
            lines.append(f"  {self.points_title}: " + "; ".join(self.point_text(p) for p in data["points"]))
        return lines

    def plot_data(self, title: str, label: str, data: Mapping[str, Any]) -> PointsPlot | None:
        """What one label's PNG draws, from its object (``data``, at the report's bar):
        every number on it read from that object, nothing computed while drawing; ``title``
        names the run. None (the default): the family draws no plot."""
        return None

    def caption(self, run: str, label: str, data: Mapping[str, Any]) -> str:
        """The figure's caption and alt text on the page."""
        return f"{run} · {label}: {self.title}"

    def json_extra(self, records: Iterable[CaseRecord]) -> dict[str, Any] | None:
        return dict(self.label_extras(records)) or None

    def html_data(self, records: Iterable[CaseRecord]) -> Any | None:
        return self.json_extra(records)

    def write_pngs(self, extra: Mapping[str, Any], out_dir: Path, title: str) -> list[Path]:
        from ctxprobe.report.plots.points import points_png

        paths = []
        for label, data in extra.items():
            plot = self.plot_data(title, label, data)
            if plot is not None:
                paths.append(points_png(plot, out_dir / f"{slug(label)}-{self.png_name}.png"))
        return paths

    def html_section(self, data: Mapping[str, Any], png_dir: Path) -> PageSection | None:
        tables = [self.table(run, label, d) for run, labels in data.items() for label, d in (labels or {}).items()]
        if not tables:
            return None
        figures = [fig for run, labels in data.items() for label, d in (labels or {}).items()
                   for fig in [self._figure(run, label, d, png_dir)] if fig is not None]
        section = ReportSection(self.title, tables, self.note, figures)
        return page_section("plugin_section.html.j2", [(self.anchor, section.title)], anchor=self.anchor, s=section)

    def _figure(self, run: str, label: str, data: Mapping[str, Any], png_dir: Path) -> Figure | None:
        """One label's PNG of one run (``run``: "model · run id"; into the run's folder,
        beside its heatmaps), inlined with its caption as alt text; None: no plot."""
        from ctxprobe.report.plots.points import points_png

        plot = self.plot_data(run, label, data)
        if plot is None:
            return None
        path = png_dir / slug(run.rsplit(" · ", 1)[-1]) / f"{slug(label)}-{self.png_name}.png"
        text = self.caption(run, label, data)
        return figure(plotted(lambda: points_png(plot, path)), text, text)
