"""Terminal tables of ``ctxprobe compare``: one per family, readable at 80 columns."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from ctxprobe.report.format import fmt_depth, fmt_tokens
from ctxprobe.report.table import COMPACT, fitting

__all__ = ["compare_table", "fitting"]


def compare_table(fam: Any, run_a: str, run_b: str, *, compact: bool = False) -> Table:
    """McNemar per (length, depth) cell of one family, then each length's depths pooled
    (depth "all"), then the family pooled.

    The family is in the title, so the cell columns carry only length and depth; ``*``
    marks cells significant after Holm's correction."""
    test = ("needles paired, exact sign-flip test over cases per cell" if fam.pooled.by_needle
            else "McNemar exact per cell")
    table = Table(title=f"{fam.family}: {run_a} (A) vs {run_b} (B), {test}", title_justify="left",
                  caption="* significant after Holm's correction", caption_justify="left", header_style="bold",
                  **(COMPACT if compact else {}))
    for name in ("length", "depth"):
        table.add_column(name, justify="right", no_wrap=True)
    for name in ("pairs", "mean A", "mean B", "A only", "B only", "p", "p Holm", "sig"):
        table.add_column(name, justify="right", no_wrap=True)
    for c in fam.tests:
        length = fmt_tokens(c.length) if c.length is not None else "all"
        depth = fmt_depth(c.depth) if c.depth is not None else "all"
        table.add_row(length, depth, str(c.n_pairs), f"{c.mean_a:.2f}", f"{c.mean_b:.2f}", str(c.a_only),
                      str(c.b_only), f"{c.p_value:.3g}", f"{c.p_adjusted:.3g}", "*" if c.significant else "")
    return table
