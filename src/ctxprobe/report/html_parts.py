"""The old path of :mod:`ctxprobe.report.html.parts`, kept for plugins: a report section
written against it (``from ctxprobe.report.html_parts import ReportSection, Table``, as
docs showed before the report's sub-packages) still imports. New code imports
:mod:`ctxprobe.report.html.parts`."""

from ctxprobe.report.html.parts import Figure, ReportSection, Table

__all__ = ["Figure", "ReportSection", "Table"]
