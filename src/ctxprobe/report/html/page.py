"""``ctxprobe report RUN [RUN…] --html out.html``: one self-contained page to share.

The people who read this page often never ran the tool, so it opens with the verdict in
words (per family, the longest length that meets the bar and what that means as a limit),
then the evidence for it. The file stands alone: plots are PNGs inlined as data: URIs,
the CSS is inline, there is no script at all, and a Content-Security-Policy forbids any
network fetch — so it opens the same from an e-mail attachment, offline, years later.
The markup lives in jinja2 templates (``report/templates``, package data) rendered with
autoescaping: model output and prompt text are untrusted and reach the page only as text.
The sections come from the registry (``report_sections``: ctxprobe's own in
:mod:`ctxprobe.report.html.builtin`, then plugins'), each rendered on its own.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from markupsafe import Markup

from ctxprobe._version import __version__
from ctxprobe.core import registry
from ctxprobe.errors import CtxprobeError
from ctxprobe.report.hooks import family_hooks
from ctxprobe.report.html.parts import PageSection, ReportSection, page_section, render
from ctxprobe.report.html.sections import PageViews, RunView, slug
from ctxprobe.report.redact import redact
from ctxprobe.report.rundata import family_names
from ctxprobe.report.rundetails import RunDetails
from ctxprobe.spec.threshold import Bar
from ctxprobe.report.runreport import Report
from ctxprobe.store import iter_records

Intervals = dict[str, tuple[int | None, int | None]]
#: Where plugins' sections go among ctxprobe's own (a built-in entry's ``order``; plugins have none).
PLUGIN_ORDER = 500


def run_label(report: Report) -> str:
    """"model · run id" with secrets removed: the name a run goes by on the page."""
    return f"{redact(report.run.model)} · {report.run.run_id}"


def render_html(reports: Sequence[Report], details: Sequence[RunDetails | None] | None = None, *,
                intervals: Sequence[Intervals | None] | None = None, png_dir: str | Path | None = None,
                title: str | None = None, family_data: Mapping[str, Mapping[str, Any]] | None = None) -> str:
    """The report page for one or more runs (``ctxprobe.report.load.Report``), as a string.

    ``details`` (from :func:`ctxprobe.report.rundetails.collect_details`) adds the audit,
    latency and failure sections; ``intervals`` gives, per run, the effective-length
    interval of each family (default: the intervals the Report carries). PNGs are written to
    ``png_dir`` (kept, for slides) or a temporary directory, and inlined either way.
    ``family_data`` maps a family's name to what its report hooks loaded per run label
    (:func:`run_label`; :func:`family_data` reads it from a store): the family's sentence
    in the summary and its own section (the phone book's).
    """
    if not reports:
        raise CtxprobeError("nothing to report: give at least one run id")
    given = list(intervals) if intervals is not None else [_report_intervals(r) for r in reports]
    views = [RunView(r, (details or [None] * len(reports))[i], run_label(r), dict(given[i] or {}))
             for i, r in enumerate(reports)]
    if png_dir is not None:
        return _page(PageViews(views, Path(png_dir), family_data), title)
    with tempfile.TemporaryDirectory(prefix="ctxprobe-html-") as tmp:
        return _page(PageViews(views, Path(tmp), family_data), title)


def _report_intervals(report: Report) -> Intervals:
    """(lo, hi) per family from the effective-length intervals a loaded Report carries."""
    return {fam: (iv.lo, iv.hi) for fam, iv in report.intervals.items()}


def write_html(reports: Sequence[Report], path: str | Path, details: Sequence[RunDetails | None] | None = None,
               **kwargs: Any) -> Path:
    """``render_html`` written to ``path`` (UTF-8); returns the path."""
    out = Path(path)
    page = render_html(reports, details, **kwargs)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(page, encoding="utf-8")
    except OSError as err:
        raise CtxprobeError(f"cannot write {out}: {err.strerror or err}") from None
    return out


def build_html_report(run_ids: Sequence[str], store_path: str | Path, out_path: str | Path, *,
                      threshold: float | None = None, png_dir: str | Path | None = None,
                      failures: int = 20, scorer: str = "strict", bars: Mapping[str, Bar] | None = None,
                      family_options: Mapping[str, Any] | None = None) -> Path:
    """Load runs from a store and write their report: what ``ctxprobe report --html`` calls
    (``bars``: per-family bars over the runs' own; ``family_options``: a family's own report
    flags, such as the phone book's ``x_axis``, for the families whose page parts take them,
    refused in one line when none on the page does)."""
    from ctxprobe.report.load import load_report
    from ctxprobe.report.rundetails import collect_details

    reports = [load_report(rid, store_path, threshold, scorer, bars) for rid in run_ids]
    seen = [r.run.run_id for r in reports]
    if len(set(seen)) != len(seen):
        raise CtxprobeError("the same run is given twice; give each run id once")
    details = [collect_details(iter_records(r.run.run_id, store_path), failures=failures) for r in reports]
    data = family_data(reports, store_path, family_options)
    return write_html(reports, out_path, details, png_dir=png_dir, family_data=data)


def family_data(reports: Sequence[Report], store_path: str | Path,
                options: Mapping[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """Family name → run label → what the family's report hooks load for the page, for
    each run of the family that gives them something (``options``: the families' own
    report flags, handed to the hooks that take them)."""
    out: dict[str, dict[str, Any]] = {}
    taken: set[str] = set()
    for r in reports:
        names = family_names(r.run)
        for family in dict.fromkeys(names.get(p.family, p.family) for p in r.profiles):
            hooks = family_hooks(family)
            mine = {k: v for k, v in (options or {}).items() if k in hooks.html_options}
            taken |= set(mine)
            data = hooks.html_run_data(iter_records(r.run.run_id, store_path), r.run, mine)
            if data is not None:
                data = hooks.at_bars(data, {p.family: p.threshold for p in r.profiles})
                out.setdefault(family, {})[run_label(r)] = data
    if unused := [k for k in (options or {}) if k not in taken]:
        flags = ", ".join("--" + k.replace("_", "-") for k in unused)
        raise CtxprobeError(f"{flags}: a report option of runs of a family whose report takes it (the phone "
                            "book's); no run on this page is one")
    return out


def _page(views: PageViews, title: str | None) -> str:
    families = sorted({p.family for v in views for p in v.profiles})
    heading = title or ("ctxprobe report · " + ", ".join(v.label for v in views))
    sections = page_sections(views)
    scorers = ", ".join(sorted({v.report.scorer for v in views}))
    sub = (f"{len(views)} run(s) · {len(families)} task famil{'y' if len(families) == 1 else 'ies'}"
           f" · scorer {scorers} · lengths in tokens"
           f" · generated {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')} by ctxprobe {__version__}")
    return render("page.html.j2", heading=heading, toc=[t for s in sections for t in s.toc], sub=sub,
                  version=__version__, sections=[Markup(s.html) for s in sections])  # noqa: S704  (rendered, escaped)


def page_sections(views: PageViews) -> list[PageSection]:
    """Every section of the page, from the registry's ``report_sections`` group, by their
    ``order`` (ctxprobe's own: ``core/builtins.py``; a plugin's, unless it registers one:
    after the reasoning budgets), then name. A section function returning None is left
    out. A plugin's section that raises is shown as its error in one line, so a plugin's
    bug never costs the page."""
    out: list[PageSection] = []
    for entry in sorted(registry.entries("report_sections"), key=lambda e: (e.meta.get("order", PLUGIN_ORDER), e.name)):
        if entry.origin == "ctxprobe":  # ours: a failure is a bug, raised
            section = entry.load()(views)
        else:
            try:
                section = entry.load()(views)
            except Exception as err:  # a plugin's failure is shown on the page, not raised
                why = " ".join(str(err).split())[:200]
                section = ReportSection(entry.name, (), f"this section could not be built ({entry.origin}): "
                                                        f"{type(err).__name__}: {why}")
        if isinstance(section, ReportSection):
            anchor = f"section-{slug(entry.name)}"
            section = page_section("plugin_section.html.j2", [(anchor, section.title)], anchor=anchor, s=section)
        if section is not None:
            out.append(section)
    return out
