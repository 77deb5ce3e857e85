"""The phone-book result in the terminal: what the HTML report's phone-book section says.

The verdict in words, recall per (book, N) with its interval and by position in the book,
and how many answers the output limit cut off (``output_truncated``: a harness setting,
not the model; with the limit that would have fit them). Fits 80 columns.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ctxprobe.families.phonebook.analysis import FAMILY, PhonebookAnalysis
from ctxprobe.families.phonebook.analysis_axes import muc_tokens
from ctxprobe.families.phonebook.task_meta import phonebook_meta
from ctxprobe.core.records import CaseRecord
from ctxprobe.report.table import COMPACT, fitting

#: Every acronym of the phone-book metrics, defined where they are shown (terminal and HTML).
PHONEBOOK_LEGEND = (
    "N = needles asked per book; N_ref = the largest N. "
    "CSI: drop in recall from the smallest book to this one, at N_ref. "
    "ADI: drop from the best to the weakest later position in the book, at N_ref. "
    "NOI: drop in recall from the fewest needles to N_ref. "
    "RRS: 1 − the mean of CSI, ADI and NOI. LCRDS: 100 × recall at N_ref × RRS. "
    "MUC: the largest book whose every position bin clears 0.8 at N_ref."
)

#: Position ranges of the recall table: fifths of the book.
POSITION_GROUPS = 5
_ROUND = 32  # a suggested output limit is rounded up to this


@dataclass
class AnswerStats:
    """Case-level answers of one (book size, N): how many, how many were cut off."""

    answers: int = 0
    cut: int = 0
    suggested: int = 0  # an output limit that would have fit the longest cut-off answer (0: none cut)
    ran_on: int = 0  # stopped by the limit after naming every asked name: the model went on by itself
    outcomes: dict[str, int] = field(default_factory=dict)


def tally_answers(records: Iterable[CaseRecord], max_tokens: int | None) -> dict[tuple[int, int], AnswerStats]:
    """Per (length, N): answers stored and those cut off by the output limit.

    A cut-off answer that listed ``k`` of its ``N`` names in ``max_tokens`` tokens needs about
    ``max_tokens × N / k`` (twice the limit when it listed none: all preamble)."""
    out: dict[tuple[int, int], AnswerStats] = {}
    for rec in records:
        if rec.family != FAMILY or rec.outcome is None:
            continue
        key = (rec.length, int(phonebook_meta(rec.meta)["needles"]))
        st = out.setdefault(key, AnswerStats())
        st.answers += 1
        st.outcomes[rec.outcome] = st.outcomes.get(rec.outcome, 0) + 1
        # output_truncated (nothing right, stopped by the limit), or a partial list stopped by it
        stopped = rec.finish_reason == "length" and rec.outcome != "correct"
        if rec.outcome != "output_truncated" and not stopped:
            continue
        needles = (rec.detail or {}).get("needles") or []
        listed = sum(1 for d in needles if d.get("returned") is not None)
        if needles and listed == len(needles):
            st.ran_on += 1  # every name answered, then more text: a larger limit changes nothing
            continue
        st.cut += 1
        limit = rec.completion_tokens or max_tokens or 0
        need = 2 * limit if listed == 0 else math.ceil(limit * key[1] / listed)
        st.suggested = max(st.suggested, _ROUND * math.ceil(need / _ROUND))
    return out


def _book(an: PhonebookAnalysis, length: int) -> str:
    entries = an.entries.get(length, 0)
    if round(entries) == length:
        return f"{length:,}"
    from ctxprobe.report.format import fmt_tokens

    return f"{fmt_tokens(length)}≈{entries:,.0f}"


def _groups(an: PhonebookAnalysis, length: int, needles: int) -> list[str]:
    """Recall in each fifth of the book (needle-weighted over its bins), '·' where none sits."""
    sums = [0.0] * POSITION_GROUPS
    counts = [0] * POSITION_GROUPS
    for b in an.bins:
        if b.length == length and b.needles == needles and b.n and b.mean is not None:
            g = min(POSITION_GROUPS - 1, int(b.x * POSITION_GROUPS))
            sums[g] += b.mean * b.n
            counts[g] += b.n
    return [f"{s / c:.2f}" if c else "·" for s, c in zip(sums, counts)]


def _recall_table(an: PhonebookAnalysis, answers: Mapping[tuple[int, int], AnswerStats], title: str,
                  compact: bool) -> Table:
    table = Table(title=title, title_justify="left", caption_justify="left", header_style="bold",
                  **COMPACT if compact else {})
    in_entries = all(round(an.entries.get(L, 0)) == L for L in an.lengths)
    table.add_column("book" if in_entries else "tokens≈M", justify="right", no_wrap=True)
    table.add_column("N", justify="right", no_wrap=True)
    table.add_column("recall [95%]", justify="right", no_wrap=True)
    step = 100 // POSITION_GROUPS
    for g in range(POSITION_GROUPS):
        table.add_column(f"{g * step}-{(g + 1) * step}%", justify="right", no_wrap=True)
    table.add_column("cut off", justify="right", no_wrap=True)
    for L in an.lengths:
        for n in an.needles:
            acc = an.accuracy.get((L, n))
            if acc is None:
                continue
            p, lo, hi = acc
            st = answers.get((L, n), AnswerStats())
            cut = f"{st.cut}/{st.answers}" if st.answers else "·"
            table.add_row(_book(an, L), str(n), "n/a" if math.isnan(p) else f"{p:.2f} [{lo:.2f}, {hi:.2f}]",
                          *_groups(an, L, n), f"[yellow]{cut}[/]" if st.cut else cut)
    table.caption = ("recall: share of asked needles answered correctly, 95% interval with a book's needles as "
                     "one cluster; columns by position in the book (0 = first entry); cut off: answers the "
                     "output limit stopped before they ended, of all answers")
    return table


def ran_on_line(answers: Mapping[tuple[int, int], AnswerStats]) -> str | None:
    """Answers that named every asked name and kept writing to the limit (a small model
    repeating itself): not cut short, so not a setting to change."""
    ran_on = sum(s.ran_on for s in answers.values())
    if not ran_on:
        return None
    total = sum(s.answers for s in answers.values())
    return (f"{ran_on} of {total} answers named every asked name, then kept writing until the output limit (the "
            "model does not stop by itself): their recall is as scored; a larger --max-tokens would not change it")


def truncation_line(answers: Mapping[tuple[int, int], AnswerStats], max_tokens: int | None) -> str | None:
    """The one line that says answers were cut off, and the limit that would fit them."""
    cut = sum(s.cut for s in answers.values())
    if not cut:
        return None
    total = sum(s.answers for s in answers.values())
    need = max(s.suggested for s in answers.values())
    limit = f"--max-tokens {max_tokens}" if max_tokens else "the output limit"
    return (f"{cut} of {total} answers were cut off by {limit} before they ended (output_truncated: the "
            f"unlisted needles count as misses of this setting, not of the model); rerun with --max-tokens {need} "
            "or more")


def _size(an: PhonebookAnalysis, length: int) -> str:
    entries = an.entries.get(length)
    if entries is not None and round(entries) == length:
        return f"{length:,} entries"
    return f"{length:,} tokens (≈{entries or 0:,.0f} entries)"


def muc_prompt_tokens(an: PhonebookAnalysis) -> float | None:
    """The MUC book size in prompt tokens (its cases at the reference N), when known."""
    return muc_tokens(an.metric("MUC", "robust", None).value, an.n_ref, an.tokens)


def _muc_size(an: PhonebookAnalysis, muc: int) -> str:
    tokens = muc_prompt_tokens(an)
    return _size(an, muc) + (f" ≈ {tokens:,.0f} prompt tokens at N={an.n_ref}" if tokens is not None else "")


def phonebook_sentence(an: PhonebookAnalysis) -> str:
    """The plain-language verdict: accuracy at the largest book, and the largest book that
    holds everywhere (MUC, in entries and prompt tokens). Plain text (the template escapes it)."""
    longest = an.lengths[-1]
    acc = an.accuracy.get((longest, an.n_ref))
    muc = an.metric("MUC", "robust", None).value
    parts = [f"at the largest book ({_size(an, longest)}, N={an.n_ref})"]
    if acc is not None:
        parts.append(f" {acc[0]:.0%} of needles were recalled (95% {acc[1]:.0%}–{acc[2]:.0%}, needles of one book counted as one cluster)")
    if muc is None:
        parts.append("; no tested book size keeps every position above 0.8 — recall already degrades somewhere "
                     "in the smallest book.")
    elif int(muc) == longest:
        parts.append(f"; every tested book keeps every position above 0.8 (MUC: {_muc_size(an, longest)}) — test "
                     "larger books to find the limit.")
    else:
        parts.append(f"; books up to {_muc_size(an, int(muc))} keep every position above 0.8 (MUC); past that, "
                     "recall depends on where in the book an entry sits.")
    return "".join(parts)


def render_phonebook_terminal(analyses: Mapping[str, PhonebookAnalysis],
                              answers: Mapping[str, Mapping[tuple[int, int], AnswerStats]],
                              max_tokens: Mapping[str, int | None], console: Console) -> None:
    """Per run: the verdict line, the recall table and the output-limit line."""
    for label, an in analyses.items():
        counts = answers.get(label, {})
        tables = [_recall_table(an, counts, f"phonebook recall · {escape(label)}", compact)
                  for compact in (False, True)]
        console.print(fitting(console, tables))
        sentence = phonebook_sentence(an)
        console.print(escape(f"{label}: {sentence[0].upper()}{sentence[1:]}"), highlight=False)
        for line in (truncation_line(counts, max_tokens.get(label)), ran_on_line(counts)):
            if line:
                console.print("[bold yellow]note:[/] " + escape(line), highlight=False)
