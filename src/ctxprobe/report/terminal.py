"""The terminal report: what ``ctxprobe report RUN`` prints.

``print_report(load_report(run_id, store), console)`` prints exactly what the command
prints for one run (the header line, the profile summary, per family its table, interval
and outcomes, the noise floor, reasoning budgets, accuracy by turns back, RULER's headline, the lines a family's
report hooks add (``terminal_lines``), synthetic vs natural,
the notes) and writes the PNG plots it names. :func:`print_runs` is the whole command:
several runs (then synthetic vs natural across them), and runs of a family with a terminal
report of its own (its report hooks').
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import importlib.util
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ctxprobe.analysis.efflength import EffectiveLength
from ctxprobe.analysis.natural import RunCurves, natural_vs_synthetic
from ctxprobe.analysis.resolving import reps_clause
from ctxprobe.errors import CtxprobeError
from ctxprobe.report.answer import DETAILS_HINT, answer_table, reading_notes, short_header, table_title
from ctxprobe.report.budget_table import render_budget_table
from ctxprobe.report.floor.table import render_floor, summary_cell
from ctxprobe.report.format import DEFAULT_REPORT_DIR, fmt_tokens
from ctxprobe.report.hooks import FamilyReportHooks, family_hooks
from ctxprobe.report.load import load_report
from ctxprobe.report.natural_terminal import print_cross_run_block, print_natural_block, verdict_line
from ctxprobe.spec.threshold import Bar
from ctxprobe.report.plots.write import write_plots
from ctxprobe.report.rundata import family_names
from ctxprobe.report.runreport import Report
from ctxprobe.store import open_existing
from ctxprobe.report.table import render_outcomes_table, render_profile_table
from ctxprobe.report.turns_back_table import render_turns_back_table
from ctxprobe.haystack.layout import stored_layout_line

PLOTS_SKIPPED = "note: PNG plots skipped (pip install 'ctxprobe[plot]' for them; --no-plots hides this)"


def print_report(report: Report, console: Console | None = None, *, plots: bool = True,
                 out_dir: str | Path | None = None, details: bool = False) -> list[Path]:
    """Print ``report`` as ``ctxprobe report`` does and write its PNG plots (unless
    ``plots`` is False) under ``out_dir/RUN_ID`` (default ``./ctxprobe-report/RUN_ID``).

    By default the answer only (:mod:`ctxprobe.report.answer`: one table, the notes that
    change a reading, the answer lines); ``details`` (``--details``): every table and note.

    Without matplotlib and without ``out_dir`` the plots are skipped with a note (the
    tables are the report); an ``out_dir`` asks for them, and is refused in one line
    without the ``plot`` extra. Returns the paths written."""
    out = console if console is not None else Console()
    if not details:
        return _print_answer(report, out, plots=plots, out_dir=out_dir)
    run = report.run
    out.print(header_line(report), highlight=False)
    for line in report.incomplete:
        out.print(Text(line, style="bold magenta"))
    if len(report.profiles) > 1:
        out.print(profile_summary(report))
    for prof in report.profiles:
        render_profile_table(prof, out)
        interval = report.intervals.get(prof.family)
        if interval is not None:
            for line in interval_lines(interval, report.threshold):
                out.print(line, highlight=False)
        render_outcomes_table(prof, out)
        if (floor := report.floors.get(prof.family)) is not None:
            render_floor(floor, out)
    if report.budgets:
        render_budget_table(report.budgets, out)
    render_turns_back_table(report.turns_back, out)  # runs in a turns/tools layout only
    for name, found in report.headlines.items():
        strict = {p.family: p.effective_length for p in report.profiles} if report.scorer == "strict" else None
        family_hooks(name).print_headline(found, out, strict, report.threshold)
    for name, extra in report.family_extras.items():  # what a family adds: PI-LLM's curve, an output length…
        for line in family_hooks(name).terminal_lines(extra):
            out.print(line, highlight=False, markup=False)
    print_natural_block(report.profiles, out, family_names(run))
    for note in report.notes:
        out.print(Text.assemble(("note: ", "bold"), note))
    paths = _plots(report, out, plots, out_dir)
    for path in paths:
        out.print(f"wrote {path}")
    _print_answers(report, out)
    return paths


def _plots(report: Report, out: Console, plots: bool, out_dir: str | Path | None) -> list[Path]:
    """The run's PNGs written (none when ``plots`` is off or the report has no profile)."""
    if not plots or not report.profiles:
        return []
    if out_dir is None and importlib.util.find_spec("matplotlib") is None:
        # a plain install has no plotting: the tables above are the report; out_dir asks for PNGs
        out.print(PLOTS_SKIPPED, highlight=False, markup=False)
        return []
    return write_plots(report, Path(out_dir or DEFAULT_REPORT_DIR) / report.run.run_id)


def _print_answers(report: Report, out: Console) -> None:
    """The answer last: what a user may plan around, per family."""
    for prof in report.profiles:
        if (interval := report.intervals.get(prof.family)) is not None:
            out.print(Text.assemble(("answer: ", "bold"), f"{prof.family} {answer_line(interval)}"), highlight=False)


def _print_answer(report: Report, out: Console, *, plots: bool, out_dir: str | Path | None) -> list[Path]:
    """The default report: header, one table, the notes that change a reading, the answers."""
    out.print(short_header(report), highlight=False)
    for line in report.incomplete:
        out.print(Text(line, style="bold magenta"))
    if report.profiles:
        out.print(table_title(report), highlight=False, markup=False)
        out.print(answer_table(report))
    for name, found in report.headlines.items():  # a family's own answer (RULER's average)
        strict = {p.family: p.effective_length for p in report.profiles} if report.scorer == "strict" else None
        family_hooks(name).print_headline(found, out, strict, report.threshold)
    for note in reading_notes(report):
        out.print(Text.assemble(("note: ", "bold"), note))
    for agreement in natural_vs_synthetic(report.profiles, names=family_names(report.run)):
        out.print(verdict_line(agreement), highlight=False)  # natural vs synthetic: its verdict (tables: --details)
    paths = _plots(report, out, plots, out_dir)
    if paths:
        where = {str(p.parent) for p in paths}
        out.print(f"wrote {len(paths)} PNG plot{'s' if len(paths) != 1 else ''} to "
                  + ", ".join(sorted(where)), highlight=False)
    if report.profiles:
        out.print(DETAILS_HINT, highlight=False, markup=False, style="dim")
    _print_answers(report, out)  # the answer last, as in the whole report
    return paths


def print_runs(run_ids: list[str], store_path: str | Path, console: Console | None = None, *, plots: bool = True,
               out_dir: str | Path | None = None, threshold: float | None = None, scorer: str = "strict",
               bars: Mapping[str, Bar] | None = None, family_options: Mapping[str, Any] | None = None,
               details: bool = False) -> None:
    """What ``ctxprobe report RUN [RUN…]`` prints: each run's :func:`print_report`, or,
    when every run holds only one family whose report hooks have a terminal report of
    their own, that report of all of them (PNGs into ``out_dir``, default ``./ctxprobe-report``),
    drawn as ``family_options`` say (options of that family's report; refused for other runs).
    ``details``: every table and note of each run (``report --details``), and synthetic vs
    natural across them."""
    out = console if console is not None else Console()
    hooks = own_terminal(run_ids, store_path)
    if hooks is not None:
        hooks.print_runs(run_ids, store_path, out, Path(out_dir or DEFAULT_REPORT_DIR) if plots else None,
                         options=family_options)
        return
    if family_options:
        flags = ", ".join("--" + k.replace("_", "-") for k in family_options)
        raise CtxprobeError(f"{flags}: a report option of runs that hold one family with a report of its own "
                            "(the phone book's); these runs have none")
    runs: list[RunCurves] = []
    for run_id in run_ids:
        report = load_report(run_id, store_path, threshold, scorer, bars)
        print_report(report, out, plots=plots, out_dir=out_dir, details=details)
        runs.append(RunCurves(report.run.run_id, report.run.model, report.profiles,
                              family_names(report.run)))
    if details:
        print_cross_run_block(runs, out)


def own_terminal(run_ids: list[str], store_path: str | Path) -> FamilyReportHooks | None:
    """The report hooks that print these runs, when all of them hold one family only and
    its hooks have a terminal report of their own; else None."""
    names: set[str] = set()
    with open_existing(store_path) as store:
        for run_id in run_ids:
            run = store.require_run(run_id)
            labels = family_names(run)
            names |= {labels.get(label, label) for label in run.family.split(",")}
    if len(names) != 1:
        return None
    hooks = family_hooks(names.pop())
    return hooks if hooks.own_terminal else None


def header_line(report: Report) -> Text:
    """"run ID · model … · tokenizer … · N/M planned cases answered · status · scorer …"."""
    run = report.run
    sharing = run.meta.prefix_sharing
    layout = stored_layout_line(run.spec)
    return Text.assemble((f"run {run.run_id}", "bold"), f" · model {run.model} · tokenizer {run.tokenizer} · "
                         f"{run.n_final}/{run.n_planned} planned cases answered · {run.status} · "
                         f"scorer {report.scorer}"
                         + (f" ({family_hooks(report.scorer).scorer_label}, re-scored)" if report.scorer != "strict"
                            else "")
                         + " · lengths in tokens"
                         + (f" · filler {sharing} across depths" if sharing else "")
                         + (f" · {layout}" if layout else ""))


def interval_lines(iv: EffectiveLength, threshold: float) -> list[str]:
    """The family's effective-length interval, what may be relied on, and P(clears the bar) per length."""
    lines = [f"{iv.family}: {iv.line()}", f"  {reliable_line(iv)}"]
    lines += [f"  {s.line()}" for _, s in sorted(iv.settle.items())]
    clears = ", ".join(f"{fmt_tokens(k)}: {v:.2f}" for k, v in sorted(iv.p_clear.items()) if k not in iv.not_measured)
    if clears:
        pct = f"{iv.confidence * 100:g}%"
        lines.append(f"  Bayesian posterior P(accuracy ≥ {threshold:g}) by length (Jeffreys prior per cell; a "
                     f"probability, not the {pct} confidence above: docs/statistics.md): {clears}")
    return lines


def reliable_line(iv: EffectiveLength) -> str:
    """What a user may plan around: only lengths that clear the bar with the stated confidence."""
    pct = f"{iv.confidence * 100:g}%"
    if iv.reliable_up_to is not None:
        more = "" if iv.exact else f"; it may reach {iv.label(iv.hi)} — add repetitions to tell"
        return f"reliable up to {fmt_tokens(iv.reliable_up_to)} tokens ({pct} confidence{more})"
    if iv.hi is None:
        return f"fails the bar already at the shortest length ({pct} confidence)"
    return (f"not shown reliable at any tested length: too few cases to clear the bar with {pct} confidence "
            f"(it may reach {iv.label(iv.hi)}); add repetitions")


def answer_line(iv: EffectiveLength) -> str:
    """The run's answer for one family in one line: ``reliable up to 2K (95% confidence)``,
    or what it could not show and the repetitions that would settle each open length, fewest
    first (:func:`ctxprobe.analysis.resolving.reps_clause`, the settle lines' own counts)."""
    pct = f"{iv.confidence * 100:g}%"
    if iv.reliable_up_to is not None:
        text = f"reliable up to {iv.label(iv.reliable_up_to)} ({pct} confidence)"
        text += "" if iv.exact else f"; it may reach {iv.label(iv.hi)}"
    elif iv.hi is None:
        text = f"fails the bar already at the shortest length, {iv.label(min(iv.lengths))} ({pct} confidence)"
    else:
        text = f"not shown reliable at any tested length ({pct} confidence)"
    settles = reps_clause((iv.label(L), s) for L, s in sorted(iv.settle.items())) if not iv.states else ""
    return text + (f"; {settles}" if settles else "")


def profile_summary(report: Report) -> Table:
    """One row per family: the profile at a glance, before the per-family detail."""
    columns = ["family", "observed effective length", "95% interval", "accuracy at shortest", "accuracy at longest"]
    table = Table(*columns, *(["above floor"] if report.floors else []),
                  title=f"profile (bar: mean ≥ {report.threshold:g}; scorer {report.scorer}; lengths in tokens)")
    table.columns[0].no_wrap = True  # a family's name is never cut (the floor column narrows the rest)
    for prof in report.profiles:
        iv = report.intervals.get(prof.family)
        measured = [s for s in prof.lengths if s.mean is not None]
        first = f"{measured[0].mean:.2f} at {fmt_tokens(measured[0].length)}" if measured else "–"
        last = f"{measured[-1].mean:.2f} at {fmt_tokens(measured[-1].length)}" if measured else "–"
        eff = fmt_tokens(prof.effective_length) if prof.effective_length else "below the shortest"
        interval = iv.interval_text() if iv is not None else "–"
        table.add_row(prof.family, eff, interval, first, last,
                      *([summary_cell(report.floors.get(prof.family))] if report.floors else []))
    return table
