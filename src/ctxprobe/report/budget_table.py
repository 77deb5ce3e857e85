"""The reasoning-budget table: per family and budget, what the budget bought."""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table

from ctxprobe.analysis.reasoning import BudgetStat, budget_label
from ctxprobe.report.format import fmt_interval, fmt_score, fmt_tokens


def budget_rows(stats: list[BudgetStat]) -> list[list[str]]:
    """One row of text cells per (family, budget): the same cells in the terminal and HTML."""
    rows = []
    for s in stats:
        ci = fmt_interval(s.lo, s.hi).strip("[]") if s.mean is not None else "—"
        eff = fmt_tokens(s.effective_length) if s.effective_length is not None else "below 1st"
        cut = f"{s.cut_off}/{s.answered} {s.cut_share:.0%}" if s.cut_share is not None else "—"
        mean = s.mean_reasoning_tokens
        rows.append([s.family, budget_label(s.budget), fmt_score(s.mean), ci, str(s.n), eff, cut,
                     "n/a" if mean is None else f"{mean:,.0f}"])
    return rows


HEADERS = ["family", "budget", "accuracy", "95% CI", "n", "effective length", "cut off thinking",
           "reasoning tokens per answer"]
#: The same headers folded onto two lines for an 80-column terminal.
_SHORT = ["family", "budget", "accuracy", "95% CI", "n", "effective\nlength", "cut off\nthinking",
          "reasoning\ntokens"]


def render_budget_table(stats: list[BudgetStat], console: Console) -> None:
    """Print the table (nothing for a run without reasoning budgets)."""
    if not stats:
        return
    table = Table(title="reasoning budgets (each budget's curve: profile FAMILY@thinkBUDGET above)",
                  box=box.SIMPLE_HEAD, title_justify="left", pad_edge=False)
    for i, header in enumerate(_SHORT):
        table.add_column(header, justify="left" if i == 0 else "right", overflow="fold")
    for row in budget_rows(stats):
        table.add_row(*row)
    console.print(table)
    console.print("cut off thinking = the output cap was reached before any answer (output_truncated): left out "
                  "of accuracy, never scored as wrong; reasoning tokens: billed per answer, as the provider "
                  "reported them (n/a: not reported)", highlight=False, style="dim")
