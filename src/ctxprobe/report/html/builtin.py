"""ctxprobe's own sections of the HTML page, registered in the registry's
``report_sections`` group like a plugin's (``core/builtins.py``, each with its ``order``
on the page: plugins' sections come after the reasoning budgets, by name). Each is
``section(views) -> PageSection | None`` of the page's runs (:class:`PageViews`)."""

from __future__ import annotations

from collections.abc import Callable

from ctxprobe.report.hooks import family_hooks
from ctxprobe.report.html.budgets import budget_runs
from ctxprobe.report.html.overview import all_families, metadata, profile_section, summary
from ctxprobe.report.html.parts import PageSection, page_section
from ctxprobe.report.html.sections import (PageViews, audit_tables, cost_table, failure_runs, family_article,
                                           latency_tables, slug)

def summary_section(views: PageViews) -> PageSection:
    return page_section("summary.html.j2", [("summary", "Summary")], summary=summary(views))


def runs_section(views: PageViews) -> PageSection:
    return page_section("runs.html.j2", [("metadata", "Runs")], runs=metadata(views))


def profile(views: PageViews) -> PageSection:
    return page_section("profile.html.j2", [("profile", "Profile")], profile=profile_section(views))


def all_families_section(views: PageViews) -> PageSection:
    return page_section("all_families.html.j2", [("all-families", "All families")],
                        all_families=all_families(views, views.png_dir))


def families(views: PageViews) -> PageSection:
    """Per family: heatmap and curve per run, verdict, outcomes per cell."""
    names = sorted({p.family for v in views for p in v.profiles})
    return page_section("families.html.j2", [(f"family-{slug(f)}", f) for f in names],
                        articles=[family_article(f, views, views.png_dir) for f in names])


def family_sections(views: PageViews) -> PageSection | None:
    """What each family's report hooks add (the phone book's recall by position, M-sweep
    and metrics), in family name order."""
    parts = [part for name, by_run in sorted(views.family_data.items()) if by_run
             for part in [family_hooks(name).html_section(by_run, views.png_dir)] if part is not None]
    if not parts:
        return None
    return PageSection(tuple(t for p in parts for t in p.toc), "".join(p.html for p in parts))


def headlines(views: PageViews) -> PageSection | None:
    """Each family's section of its headlines (its own scorer's: RULER's), in name order."""
    names = sorted({name for v in views for name in v.report.headlines})
    parts = [part for name in names
             for part in [family_hooks(name).html_headlines([(v.label, v.report.headlines[name]) for v in views
                                                              if name in v.report.headlines])] if part is not None]
    if not parts:
        return None
    return PageSection(tuple(t for p in parts for t in p.toc), "".join(p.html for p in parts))


def budgets(views: PageViews) -> PageSection | None:
    found = budget_runs(views)
    return page_section("budgets.html.j2", [("reasoning-budgets", "Reasoning budgets")], budgets=found) \
        if found else None


def audit(views: PageViews) -> PageSection:
    return _details(views, "audit.html.j2", ("audit", "Token audit"), audit=audit_tables)


def cost_latency(views: PageViews) -> PageSection:
    return _details(views, "cost_latency.html.j2", ("cost-latency", "Cost & latency"), cost=cost_table,
                    latency=latency_tables)


def failures(views: PageViews) -> PageSection:
    return _details(views, "failures.html.j2", ("failures", "Failures"), failures=failure_runs)


def _details(views: PageViews, template: str, toc: tuple[str, str], **parts: Callable[[PageViews], object]) -> PageSection:
    """A section of the runs' details (audit, cost, failures): in the contents always,
    on the page when some run has details."""
    if not any(v.details for v in views):
        return PageSection((toc,), "")
    details = {key: make(views) for key, make in parts.items()}
    return page_section(template, [toc], details=details)
