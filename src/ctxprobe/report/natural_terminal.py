"""Synthetic vs natural in the terminal: the block ``ctxprobe report`` and ``ctxprobe run``
print at the end of a run holding natural (``documents``) and synthetic families (like with
like: each variant and reasoning budget on its own), and
``ctxprobe report NATURAL_RUN SYNTHETIC_RUN`` after the runs it is given.

Per synthetic family, one table (length, natural accuracy and the synthetic family's,
each with its Wilson 95% interval, the test's p-value and whether that length differs),
then the verdict of :mod:`ctxprobe.analysis.natural` with both effective lengths. The
tables narrow (cases per side dropped, then tighter padding) until they read at the
console's width."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.console import Console
from rich.table import Table

from ctxprobe.analysis.grid import Profile
from ctxprobe.analysis.natural import FamilyAgreement, RunCurves, across_runs, natural_vs_synthetic, unpaired
from ctxprobe.report.format import fmt_interval, fmt_score, fmt_tokens
from ctxprobe.report.table import COMPACT, fitting

TITLE = "synthetic vs natural"


def _acc(mean: float | None, lo: float, hi: float) -> str:
    return fmt_score(mean) + ("" if mean is None else f" {fmt_interval(lo, hi)}")


def _name(family: str, label: str | None) -> str:
    return family if label is None else f"{family} ({label})"


def agreement_table(a: FamilyAgreement, *, natural_label: str | None = None,
                    synthetic_label: str | None = None, with_n: bool = True, compact: bool = False) -> Table:
    """One pair's per-length comparison (the title names the pair; lengths in tokens)."""
    table = Table(title=f"{TITLE}: {_name(a.natural, natural_label)} vs {_name(a.synthetic, synthetic_label)} "
                        "(accuracy [Wilson 95% CI])", title_justify="left", header_style="bold",
                  **(COMPACT if compact else {}))
    table.add_column("length", justify="right", style="bold", no_wrap=True)
    for name in (a.natural, a.synthetic):
        table.add_column(name, justify="right", no_wrap=True)
        if with_n:
            table.add_column("n", justify="right", no_wrap=True)
    table.add_column("p", justify="right", no_wrap=True)
    table.add_column("test", no_wrap=True)
    for c in a.lengths:
        nat = [_acc(c.natural_mean, c.natural_lo, c.natural_hi), *([str(c.natural_n)] if with_n else [])]
        syn = [_acc(c.synthetic_mean, c.synthetic_lo, c.synthetic_hi), *([str(c.synthetic_n)] if with_n else [])]
        p = "—" if c.p_value is None else "<1e-6" if c.p_value == 0 else f"{c.p_value:.2g}"
        table.add_row(fmt_tokens(c.length), *nat, *syn, p, "differs" if c.differs else "same")
    return table


def verdict_line(a: FamilyAgreement) -> str:
    """"documents vs niah: agree: …; effective length 2K vs below 1K (natural vs synthetic)"."""
    untested = (f"; not tested at {', '.join(fmt_tokens(L) for L in a.untested)} (no scored case on a side)"
                if a.untested else "")
    return (f"{a.natural} vs {a.synthetic}: {a.verdict()}; effective length {a.effective_lengths()} "
            f"(natural vs synthetic){untested}")


Pair = tuple[FamilyAgreement, str | None, str | None, str | None]


def render_agreements(found: Sequence[Pair], console: Console) -> None:
    """Each pair's table, verdict line and caution; ``found`` holds (agreement, natural
    label, synthetic label, caution), the labels naming runs when the pair spans two."""
    for a, nat_label, syn_label, caution in found:
        if a.lengths:
            console.print(fitting(console, [
                agreement_table(a, natural_label=nat_label, synthetic_label=syn_label),
                agreement_table(a, natural_label=nat_label, synthetic_label=syn_label, with_n=False),
                agreement_table(a, natural_label=nat_label, synthetic_label=syn_label, with_n=False, compact=True)]))
        console.print(verdict_line(a), highlight=False)
        if caution:
            console.print(caution, highlight=False)


def print_natural_block(profiles: list[Profile], console: Console, names: Mapping[str, str] | None = None) -> None:
    """The block for one run's profiles (nothing unless it holds natural and synthetic ones;
    ``names``: the run's labels → families, :func:`ctxprobe.analysis.natural.spec_family_names`)."""
    render_agreements([(a, None, None, None) for a in natural_vs_synthetic(profiles, names=names)], console)


def print_cross_run_block(runs: Sequence[RunCurves], console: Console) -> None:
    """The pairs that span two of the runs: a natural run and a synthetic run of the same
    model, say; a pair across models says so. Pairs within one run are printed with that run."""
    render_agreements([(p.agreement, p.natural_run, p.synthetic_run, p.note()) for p in across_runs(runs)], console)
    for line in unpaired(runs):
        console.print(line, highlight=False)
