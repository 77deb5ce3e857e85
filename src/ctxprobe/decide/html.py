"""The decision as HTML: a section (tables and the Pareto plot per family) that stands
alone (``decide --html FILE``) or sits in the HTML report (registry group
``report_sections``, name ``decide``: the report's runs at the bar and prices they carry)."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ctxprobe.analysis.efflength import EffectiveLength
from ctxprobe.decide.decision import Decision
from ctxprobe.decide.render import band_text
from ctxprobe.errors import CtxprobeError
from ctxprobe.report.html.parts import Figure, ReportSection, Table, figure, plotted, render

__all__ = ["decision_section", "report_section", "write_decision_html"]


def _usd(x: float | None) -> str:
    return "unpriced" if x is None else f"${x:,.2f}"


def _verdict(interval: EffectiveLength) -> str:
    """The run's effective-length line, and for each length it left open the cases (and
    ``--reps``) that would settle it, as ``decide``'s text and JSON say."""
    return " ".join([interval.line(), *(s.line() + "." for _, s in sorted(interval.settle.items()))])


def decision_section(d: Decision, png_dir: Path) -> ReportSection:
    """Choices, runs, limits, the runs' natural checks and caveats as tables, and one Pareto
    plot per family."""
    from ctxprobe.decide.plot import left_out, pareto_png

    choices = Table(["need", "band", "choice", "price / 1M", "maybe", "untested", "fails"], [
        [c.family, band_text(c.start, c.band, c.unit),
         c.choice.model if c.choice else ("none tested meets it" if c.meets == "no" else "none shown to meet it"),
         _usd(c.choice.price) if c.choice else "—",
         ", ".join(x.model for x in c.candidates if x.status == "maybe") or "—",
         ", ".join(x.model for x in c.candidates if x.status == "untested") or "—",
         ", ".join(x.model for x in c.candidates if x.status == "no") or "—"] for c in d.choices],
        caption="cheapest run meeting the bar with 95% confidence, per need and band")
    runs = Table(["model", "run", "family", "bar", "effective length", "input / 1M", "run cost"], [
        [r.model, r.run.run_id, fam, f"{facts.bar:g}", _verdict(facts.interval),
         _usd(r.price.input if r.price else None), f"{_usd(r.cost()[0])} ({r.cost()[1]})"]
        for r in d.runs for fam, facts in r.families.items()], caption="runs")
    limits = Table(["model", "product limit"], [[lim.model, lim.line()] for lim in d.limits],
                   caption="product limits: the lowest effective length among a use's families")
    tables = [choices, runs, limits]
    natural = [[r.model, r.run.run_id, f"{a.natural} vs {a.synthetic}", a.verdict(),
                a.effective_lengths()]
               for r in d.runs for a in r.natural]
    if natural:
        tables.append(Table(["model", "run", "natural vs synthetic", "natural check", "effective length"], natural,
                            caption="natural check: each run's natural cases against its synthetic families "
                                    "(same variant and budget; two-proportion test per length)"))
    if d.caveats:
        tables.append(Table(["caveat"], [[c] for c in d.caveats], caption="comparisons that are not fair"))
    from ctxprobe.decide.plot import pareto_points

    families = sorted({c.family for c in d.choices if "+" not in c.family})
    figures: list[Figure] = []
    points = {fam: pareto_points(d, fam) for fam in families}
    unpriced = [fam for fam in families if all(price is None for *_, price in points[fam])]
    unplaced = [fam for fam in families if fam not in unpriced
                and all(point is None for _, _, point, _, _ in points[fam])]
    for fam in families:
        if fam in unpriced or fam in unplaced:
            continue  # an empty plot says nothing (the note below says why there is none)

        def draw(fam: str = fam) -> Path:
            return pareto_png(d, fam, png_dir / f"pareto-{fam}.png")

        missing = left_out(d, fam)
        figures.append(figure(plotted(draw), f"{fam} Pareto plot",
                              f"{fam}: input price per 1M {d.unit} against effective length (bars: 95% interval); "
                              "stars: chosen for a band"
                              + (f"; not plotted: {'; '.join(missing)}" if missing else "")))
    note = f"bands in {d.unit}; a band longer than a run's tested lengths is untested, never a pass"
    if unpriced:
        note += (f"; no price plot for {', '.join(unpriced)}: none of its runs has a price (name the models in a "
                 "--prices file, or see `ctxprobe prices`)")
    if unplaced:
        note += (f"; no price plot for {', '.join(unplaced)}: every run of it is below the shortest tested length "
                 "(nothing to place on the effective-length axis)")
    return ReportSection("Decision: which model for which need", tables, note, figures)


def write_decision_html(d: Decision, path: str | Path) -> Path:
    from ctxprobe._version import __version__

    out = Path(path)
    with tempfile.TemporaryDirectory() as tmp:
        section = decision_section(d, Path(tmp))
        page = render("decide.html.j2", heading="ctxprobe decide", anchor="decide", s=section, version=__version__,
                      sub=", ".join(r.model for r in d.runs))
    try:
        out.write_text(page, encoding="utf-8")
    except OSError as err:
        raise CtxprobeError(f"cannot write {out}: {err.strerror}") from None
    return out


def report_section(views: Sequence[Any]) -> ReportSection | None:
    """The report page's decide section: its runs (two or more) compared at their stored
    bars and the price table (the user's file, else the built-ins), bands = every tested
    length; families sized in tokens only (a phone book in entries has its own section)."""
    from ctxprobe.decide.decision import decide_runs
    from ctxprobe.decide.runs import facts_from_report

    from ctxprobe.prices.table import load_prices

    table = load_prices(None)
    runs = [f for v in views if (f := facts_from_report(v.report, table)) is not None and f.families]
    if len(runs) < 2:
        return None  # a decision compares models: one run has nothing to choose between
    with tempfile.TemporaryDirectory() as tmp:
        return decision_section(decide_runs(runs, table), Path(tmp))
