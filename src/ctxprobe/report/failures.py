"""``ctxprobe failures RUN [--outcome distractor] [--n 10]``: failed cases in the terminal.

Each case shows the prompt around its evidence with the target highlighted (and any
distractor values in another colour), the question, and the full model output. Model
output and prompt text are built into :class:`rich.text.Text` objects piece by piece and
never parsed as console markup: a reply containing ``[bold]`` or ``[/]`` prints as is.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console, Group
from rich.panel import Panel
from rich.text import Text

from ctxprobe.errors import CtxprobeError
from ctxprobe.report.evidence import Excerpt, Failure
from ctxprobe.report.format import fmt_depth, fmt_tokens
from ctxprobe.report.redact import redact
from ctxprobe.core.outcome import HARNESS_OUTCOMES, OUTCOMES, Outcome

EVIDENCE_STYLE = "bold black on green3"
DISTRACTOR_STYLE = "bold black on dark_orange"


def check_outcome(outcome: str | None) -> None:
    if outcome is not None and outcome not in OUTCOMES:
        raise CtxprobeError(f"unknown outcome '{outcome}': use one of {', '.join(OUTCOMES)}")
    if outcome == Outcome.CORRECT:
        raise CtxprobeError("'correct' cases are not failures: pick another --outcome")


def excerpt_text(ex: Excerpt) -> Text:
    """The excerpt as rich Text, evidence and distractors styled, nothing interpreted."""
    text = Text()
    if ex.start > 0:
        text.append("…", style="dim")
    for chunk, kind in ex.segments:
        style = EVIDENCE_STYLE if kind == "evidence" else DISTRACTOR_STYLE if kind == "distractor" else ""
        text.append(chunk, style=style)
    if ex.start + sum(len(c) for c, _ in ex.segments) < ex.prompt_chars:
        text.append("…", style="dim")
    return text


def failure_panel(f: Failure) -> Panel:
    outcome_style = "magenta" if f.outcome in HARNESS_OUTCOMES else "bold red"
    head = Text.assemble((f.outcome, outcome_style), f"  {f.case_id}  ",
                         (f"{fmt_tokens(f.length)} · depth {fmt_depth(f.depth)} · rep {f.rep}", "dim"))
    parts: list[Text] = [
        Text.assemble(("expected  ", "bold"), (", ".join(f.expected), "green")),
        Text.assemble(("distract. ", "bold"), (", ".join(f.distractors) or "none", "dark_orange")),
    ]
    if f.question:
        parts.append(Text.assemble(("question  ", "bold"), f.question))
    reported = f"{f.reported_prompt_tokens:,}" if f.reported_prompt_tokens is not None else "n/a"
    parts.append(Text.assemble(("tokens    ", "bold"), f"built {f.token_count:,}, server-reported {reported}"))
    if f.error:
        parts.append(Text.assemble(("error     ", "bold"), (redact(f.error), "magenta")))
    for ex in f.excerpts:
        parts.append(Text(f"\nprompt around the {ex.label} (located by {ex.located_by}):", style="bold"))
        parts.append(excerpt_text(ex))
    if not f.excerpts:
        parts.append(Text("\nthe evidence could not be located in the prompt", style="dim"))
    parts.append(Text(f"\nmodel output ({f.finish_reason or 'no finish reason'}):", style="bold"))
    parts.append(Text(f.output if f.output is not None else "(no output)"))
    return Panel(Group(*parts), title=head, title_align="left", border_style=outcome_style)


def render_failures(run_id: str, store_path: str | Path, console: Console, *, outcome: str | None = None,
                    n: int = 10) -> int:
    """Print up to ``n`` failures of a run, spread over its grid; returns how many were shown."""
    from ctxprobe.report.evidence import FailureSampler
    from ctxprobe.store import iter_records

    check_outcome(outcome)
    if n < 1:
        raise CtxprobeError("--n must be at least 1")
    sampler = FailureSampler(n, outcome)
    for rec in iter_records(run_id, store_path):
        sampler.add(rec)
    shown = sampler.sample()
    what = f"'{outcome}' failures" if outcome else "failures"
    if not shown:
        console.print(Text(f"no {what} in run {run_id}", style="green"))
        return 0
    counts = ", ".join(f"{k} {v}" for k, v in sorted(sampler.counts.items()))
    console.print(Text(f"{sampler.total} {what} in run {run_id} ({counts}); showing {len(shown)}", style="bold"))
    for f in shown:
        console.print(failure_panel(f))
    return len(shown)
