"""The default terminal report: the answer, said once.

What ``run`` and ``report`` print without ``--details``: a short header, one profile table
for every family (effective length with its 95% interval, the accuracy at the shortest and
the longest length, a verdict), the notes that change how that table reads (a truncation, a
harness failure, a position sag or a question/evidence overlap that is significant, a
length some family cannot be built at), and the ``answer:`` lines, which carry the
``--reps`` that would settle an open length. Everything else — the per-family grids,
outcome tables, Bayesian P(clears the bar), every note — is ``--details``
(:func:`ctxprobe.report.terminal.print_report`), and the JSON, HTML and ``view``.
"""

from __future__ import annotations

from rich import box
from rich.table import Table
from rich.text import Text

from ctxprobe.analysis.efflength import EffectiveLength
from ctxprobe.analysis.grid import Profile
from ctxprobe.report.floor.table import summary_cell
from ctxprobe.report.format import fmt_tokens
from ctxprobe.report.hooks import family_hooks
from ctxprobe.report.position import position_line
from ctxprobe.report.runreport import Report

#: The last line of the default report: where everything else is.
DETAILS_HINT = "more: --details (grids, outcomes, every note), report --json or --html, view"


def short_header(report: Report) -> Text:
    """"run ID · model M · N/M planned cases answered · status" (the full one is --details')."""
    run = report.run
    return Text.assemble((f"run {run.run_id}", "bold"), f" · model {run.model} · {run.n_final}/{run.n_planned} "
                         f"planned cases answered · {run.status}")


def table_title(report: Report) -> str:
    """The line above the table: what a row is measured against."""
    scorer = report.scorer
    if scorer != "strict":
        scorer += f" ({family_hooks(scorer).scorer_label}, re-scored)"
    return (f"profile · bar: mean ≥ {report.threshold:g} · scorer {scorer} · lengths in tokens; "
            "accuracy at the shortest and longest length")


def verdict(iv: EffectiveLength | None, prof: Profile) -> str:
    """What the interval says about the tested lengths, in a few words."""
    measured = [s.length for s in prof.lengths if s.mean is not None]
    if iv is None or not measured:
        return "not measured"
    if iv.hi is None:
        return f"fails at {iv.label(min(iv.lengths))}"
    if iv.exact:
        return "clears all lengths" if iv.lo == max(measured) else f"fails past {iv.label(iv.lo)}"
    if iv.lo is None:
        return "not shown reliable"
    return f"reliable to {iv.label(iv.lo)}, open above"


def answer_table(report: Report) -> Table:
    """One row per family: what the run found, read across."""
    floors = bool(report.floors)
    table = Table("family", "effective", "95% interval", "shortest", "longest", "verdict",
                  *(["above floor"] if floors else []), box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False,
                  collapse_padding=True)
    table.columns[0].no_wrap = True
    for prof in report.profiles:
        iv = report.intervals.get(prof.family)
        measured = [s for s in prof.lengths if s.mean is not None]
        first = f"{measured[0].mean:.2f} ({fmt_tokens(measured[0].length)})" if measured else "–"
        last = f"{measured[-1].mean:.2f} ({fmt_tokens(measured[-1].length)})" if measured else "–"
        eff = (iv.label(iv.point) if iv is not None else
               fmt_tokens(prof.effective_length) if prof.effective_length else "below the shortest")
        table.add_row(prof.family, eff, iv.interval_text() if iv is not None else "–", first, last,
                      verdict(iv, prof), *([summary_cell(report.floors.get(prof.family))] if floors else []))
    shown = {p.family for p in report.profiles}
    for label, need in (report.run.spec.get("too_short") or {}).items():  # a family sent at no length
        if label not in shown:
            table.add_row(label, "–", "–", "–", "–", f"too short (needs ≥ {fmt_tokens(int(need))})",
                          *(["–"] if floors else []))
    return table


def reading_notes(report: Report) -> list[str]:
    """The notes that change how the table reads, each once: the report's own (truncation,
    a window, a template mismatch), lengths never sent, a significant position effect, a
    flagged overlap."""
    notes = list(report.key_notes)
    for family, iv in report.intervals.items():  # an adaptive walk that stopped below a length
        if iv.untested:
            notes.append(f"{family}: untested at {', '.join(iv.label(x) for x in iv.untested)} (never sent)")
    for bias in report.position:
        grows = bias.growth is not None and bias.growth.grows
        if grows or any(d.verdict != "no difference" for d in bias.lengths):
            notes.append(position_line(bias))
    notes += [line for line in report.notes if line.startswith("overlap flagged")]
    return notes
