"""Terminal tables of a profile (rich).

One row per length, one column per depth, so the two coordinates read the way the sweep
was designed: down the rows is "does it hold up as the context grows", across is "does
it matter where the evidence sits". The pooled column and the verdict line under the
table are what the effective length is computed from.
"""

from __future__ import annotations

from collections import Counter
from typing import TypedDict

from rich import box
from rich.box import Box
from rich.cells import cell_len
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from ctxprobe.analysis.grid import CellStat, LengthStat, Profile, clears
from ctxprobe.report.format import (
    effective_length_line,
    effective_length_note,
    fmt_depth,
    fmt_interval,
    fmt_score,
    fmt_threshold,
    fmt_tokens,
)
from ctxprobe.core.outcome import HARNESS_OUTCOMES, OUTCOMES, Outcome

# Red → amber → green, picked to stay legible as foreground on dark and light terminals.
_STOPS = ((0.0, (215, 48, 39)), (0.5, (215, 160, 0)), (1.0, (26, 160, 70)))


def score_color(mean: float | None, truecolor: bool = True) -> str:
    """Rich colour for an accuracy: red at 0, amber at 0.5, green at 1.

    Without truecolor, rich maps an RGB value to the nearest palette entry, which turns
    the amber middle grey and dark red yellow; there three named colours say it better.
    """
    if mean is None:
        return "grey50"
    x = min(max(mean, 0.0), 1.0)
    if not truecolor:
        return "red" if x < 0.5 else "yellow" if x < 0.8 else "green"
    for (x0, c0), (x1, c1) in zip(_STOPS, _STOPS[1:]):
        if x <= x1:
            t = (x - x0) / (x1 - x0)
            r, g, b = (round(a + (b_ - a) * t) for a, b_ in zip(c0, c1))
            return f"rgb({r},{g},{b})"
    return "rgb({},{},{})".format(*_STOPS[-1][1])  # unreachable: x <= 1.0


def _typical_n(stats: list[CellStat] | list[LengthStat]) -> str | None:
    """The most common n (``20×5``: cases × samples when sampled), so only cells that
    differ from it need to show theirs."""
    counts = Counter(s.n_label for s in stats)
    return counts.most_common(1)[0][0] if counts else None


def _stat_text(
    stat: CellStat | LengthStat, typical_n: str | None, truecolor: bool, interval: bool
) -> Text:
    colour = score_color(stat.mean, truecolor)
    text = Text(fmt_score(stat.mean), style=f"bold {colour}")
    if interval and stat.mean is not None:
        text.append(" " + fmt_interval(stat.lo, stat.hi), style=colour)
    if stat.n_label != typical_n:
        text.append(f" n={stat.n_label}", style="dim")
    if stat.n_excluded:
        text.append(f" {stat.n_excluded} excl", style="magenta")
    return text


def render_profile_table(profile: Profile, console: Console) -> None:
    """Print accuracy per length × depth with Wilson 95% intervals and the verdict.

    When the full table would not fit the console (many depths), per-depth cells drop
    their intervals rather than wrap into unreadable fragments; the pooled column, which
    the verdict rests on, always keeps its interval.
    """
    truecolor = console.color_system == "truecolor"
    if profile.verdicts:  # adaptively sampled: fixed-n intervals do not hold, the walk's verdicts do
        console.print(fitting(console, [_profile_table(profile, truecolor, cell_intervals=False),
                                        _profile_table(profile, truecolor, cell_intervals=False, compact=True)]))
        return
    # Narrower and narrower layouts until one fits (80 columns, CI logs): never cut a cell.
    tables = [_profile_table(profile, truecolor, cell_intervals=True),
              _profile_table(profile, truecolor, cell_intervals=False),
              _profile_table(profile, truecolor, cell_intervals=False, compact=True)]
    console.print(fitting(console, tables))


def fitting(console: Console, tables: list[Table]) -> Table:
    """The first table whose natural width fits the console, else the last (narrowest)."""
    unbounded = console.options.update(max_width=10_000)  # measure the natural width
    chosen = next((t for t in tables if Measurement.get(console, unbounded, t).maximum <= console.width), tables[-1])
    # A title or caption line longer than the table widens it up to the console's width, rather
    # than wrap at the table's edge mid-phrase ("[Wilson 95%" / "CI])") with the console wider.
    texts = [chosen.title, chosen.caption]
    lines = [line for t in texts if t is not None for line in (t.plain if isinstance(t, Text) else str(t)).splitlines()]
    longest = max((cell_len(line) for line in lines), default=0)
    chosen.min_width = min(console.width, max(longest, chosen.min_width or 0))
    return chosen


def _profile_table(profile: Profile, truecolor: bool, cell_intervals: bool, compact: bool = False) -> Table:
    depths = profile.depths
    cell_n = _typical_n(profile.cells)
    length_n = _typical_n(profile.lengths)
    by_coord = {(c.length, c.depth): c for c in profile.cells}

    ci = "95% CI clustered by case" if profile.sampled else "Wilson 95% CI"
    what = f"mean [{ci}]" if cell_intervals else f"mean; pooled: mean [{ci}]"
    verdicts = profile.verdicts
    if verdicts:
        what = "mean; adaptively sampled: the verdict is the walk's always-valid test"
    table = Table(
        title=f"{profile.family}: accuracy by length × depth  ({what})",
        title_justify="left",
        caption_justify="left",
        header_style="bold",
        **COMPACT if compact else {},
    )
    # Compact headers ("25%" under a "length \\ depth" corner) keep narrow columns unwrapped.
    corner, prefix = ("length", "depth ") if cell_intervals else ("length \\ depth", "")
    table.add_column(corner, justify="right", style="bold", no_wrap=True)
    for depth in depths:
        table.add_column(f"{prefix}{fmt_depth(depth)}", justify="center", no_wrap=True)
    table.add_column("all depths", justify="center", no_wrap=True)
    table.add_column(f"≥ {fmt_threshold(profile.threshold)}", justify="center", no_wrap=True)

    for stat in sorted(profile.lengths, key=lambda s: s.length):
        marker = " ◀" if stat.length == profile.effective_length else ""
        row: list[Text] = [Text(fmt_tokens(stat.length) + marker)]
        for depth in depths:
            cell = by_coord.get((stat.length, depth))
            row.append(
                _stat_text(cell, cell_n, truecolor, cell_intervals)
                if cell
                else Text("·", style="dim")
            )
        row.append(_stat_text(stat, length_n, truecolor, interval=not verdicts))
        if verdicts:
            state = verdicts.get(stat.length, "open")
            row.append(Text({"fail": "FAIL"}.get(state, state),
                            style={"pass": "green", "fail": "bold red"}.get(state, "yellow")))
        elif stat.outcomes.get(Outcome.INPUT_TRUNCATED):
            row.append(Text("n/m", style="magenta"))  # the server cut prompts: neither pass nor fail
        elif stat.n == 0:
            row.append(Text("n/a", style="grey50"))
        elif clears(stat.mean, profile.threshold):
            row.append(Text("pass", style="green"))
        else:
            row.append(Text("FAIL", style="bold red"))
        table.add_row(*row)

    caption = Text(effective_length_line(profile), style="bold")
    note = effective_length_note(profile)
    if note:
        caption.append(f"\n{note}", style="italic")
    scored = "cases × samples" if profile.sampled else "scored cases"
    legend = f"\nn = {cell_n} {scored} per cell" if cell_n is not None else ""
    legend += f", {length_n} per length" if length_n is not None else ""
    legend += " unless shown"
    if profile.effective_length is not None:
        legend += "; ◀ marks the effective length"
    if any(s.n_excluded for s in profile.lengths):
        legend += ("\nexcl = left out of accuracy: harness failures (input_truncated, error) and answers cut by "
                   "the output limit while thinking or, for long answers, before they ended (output_truncated)")
    if any(s.outcomes.get(Outcome.INPUT_TRUNCATED) for s in profile.lengths):
        legend += "\nn/m = not measured: the server truncated prompts there (neither pass nor fail)"
    if profile.sampled and not verdicts:
        legend += "\neach case sent k times: its samples are one cluster in the interval"
    if verdicts:
        legend += "\npass/FAIL/open: the adaptive walk's always-valid test at 95%; open = not decided"
    elif not cell_intervals:
        legend += "\nper-depth intervals omitted to fit the terminal; widen it or use --json"
    caption.append(legend, style="dim")
    table.caption = caption
    return table


def render_outcomes_table(profile: Profile, console: Console) -> None:
    """Print outcome counts per length: which way the model fails, and harness noise."""
    seen = {o for s in profile.lengths for o in s.outcomes}
    columns = [o for o in OUTCOMES if o in seen] + sorted(seen - set(OUTCOMES))

    console.print(fitting(console, [_outcomes_table(profile, columns, compact=False),
                                    _outcomes_table(profile, columns, compact=True)]))


def _outcomes_table(profile: Profile, columns: list[str], compact: bool) -> Table:
    table = Table(
        title=f"{profile.family}: outcomes by length",
        title_justify="left",
        caption_justify="left",
        header_style="bold",
        **COMPACT if compact else {},
    )
    table.add_column("length", justify="right", style="bold", no_wrap=True)
    for outcome in columns:
        harness = outcome in HARNESS_OUTCOMES
        # compact: "output_truncated" folds at its underscore into two short header lines
        label = outcome.replace("_", "_\n") if compact else outcome
        header = Text(label + ("*" if harness else ""), style="magenta" if harness else "")
        table.add_column(header, justify="right", no_wrap=True)
    table.add_column("total", justify="right", style="bold", no_wrap=True)

    for stat in sorted(profile.lengths, key=lambda s: s.length):
        counts = [stat.outcomes.get(o, 0) for o in columns]
        cells = [
            Text(str(c), style=_outcome_style(o)) if c else Text("·", style="dim")
            for o, c in zip(columns, counts)
        ]
        table.add_row(fmt_tokens(stat.length), *cells, str(sum(counts)))

    if any(o in HARNESS_OUTCOMES for o in columns):
        table.caption = Text("* harness failure: excluded from accuracy", style="dim")
    return table


class TableLook(TypedDict, total=False):
    """The keyword arguments of rich's ``Table`` that set its look."""

    box: Box | None
    show_edge: bool
    pad_edge: bool
    collapse_padding: bool


#: The narrow layout: no outer frame or vertical rules, one space between columns.
COMPACT: TableLook = {"box": box.SIMPLE_HEAD, "show_edge": False, "pad_edge": False, "collapse_padding": True}


def _outcome_style(outcome: str) -> str:
    if outcome == Outcome.CORRECT:
        return "green"
    if outcome in HARNESS_OUTCOMES:
        return "magenta"
    return ""
