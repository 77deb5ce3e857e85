"""The data-heavy sections of the HTML report: per-family plots and outcome tables,
token-count audit, cost and latency, and the failure browser.

Each function returns a complete ``<section>`` (or ``<article>``) of escaped markup; with
several runs each section shows the runs side by side (columns of one table, or one
figure per run in a grid) so differences line up.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ctxprobe.analysis.grid import Profile
from ctxprobe.report.evidence import Failure
from ctxprobe.report.format import (effective_length_line, effective_length_note, fmt_depth, fmt_tokens,
                                    length_unit)
from ctxprobe.report.html_parts import badge, esc, excerpt_html, img, score_cell, table, td
from ctxprobe.report.redact import redact
from ctxprobe.report.rundetails import RunDetails
from ctxprobe.tasks.case import HARNESS_OUTCOMES, OUTCOMES

_OPEN_CELLS = 30  # outcome tables up to this many cells start expanded


@dataclass
class RunView:
    """One run as the page shows it."""

    report: object  # ctxprobe.results.Report (typed loosely: report never imports results)
    details: RunDetails | None
    label: str  # "model · run id", secrets removed
    #: effective-length interval per family (lo, hi) when the analysis computed one
    intervals: dict[str, tuple[int | None, int | None]]

    @property
    def run(self):  # type: ignore[no-untyped-def]
        return self.report.run  # type: ignore[attr-defined]

    @property
    def profiles(self) -> list[Profile]:
        return self.report.profiles  # type: ignore[attr-defined,no-any-return]


def slug(text: str) -> str:
    """A safe id / file name fragment (family names are ours, but be strict anyway)."""
    return re.sub(r"[^a-z0-9_-]+", "-", text.lower()).strip("-") or "x"


def _figure(path: Path, alt: str, caption: str) -> str:
    return f"<figure>{img(path, alt)}<figcaption>{esc(caption)}</figcaption></figure>"


def family_article(family: str, views: list[RunView], png_dir: Path) -> str:
    """Heatmap and curve per run (+ an overlay when several runs), verdict, outcomes per cell."""
    from ctxprobe.report.plots import curve_png, heatmap_png
    from ctxprobe.report.plots_multi import runs_curve_png

    parts = [f'<article id="family-{slug(family)}" class="family"><h3>{esc(family)}</h3>']
    present = [(v, p) for v in views for p in v.profiles if p.family == family]
    if present and all(length_unit(v.run.spec, family) == "entries" for v, _ in present):
        # a book's size is in entries and its one "depth" is a placeholder: a token-axis heatmap
        # and curve would mislabel it; the phone-book section shows it in its own terms
        parts.append('<p class="note">Book sizes are in entries, not tokens: recall by position, the M-sweep and '
                     'the metrics are in the <a href="#phonebook">Phone book</a> section.</p></article>')
        return "".join(parts)
    if len(present) > 1:
        path = runs_curve_png(family, [(v.label, p) for v, p in present],
                              png_dir / f"compare-{slug(family)}-curve.png")
        caption = "All runs on one chart: accuracy over all depths, Wilson 95% bands, ring = effective length."
        parts.append(f'<div class="wide">{_figure(path, f"{family}: runs compared", caption)}</div>')
    figures = []
    for v, prof in present:
        base = png_dir / slug(v.run.run_id)
        trained = v.run.meta.get("trained_context") if length_unit(v.run.spec, family) == "tokens" else None
        heat = heatmap_png(prof, base / f"{slug(family)}-heatmap.png", v.label, trained)
        curve = curve_png(prof, base / f"{slug(family)}-curve.png", v.label, trained)
        verdict = effective_length_line(prof)
        figures.append(_figure(heat, f"{family} heatmap, {v.label}",
                               f"{v.label}: accuracy by length × depth (0 red → 1 green). {verdict}."))
        figures.append(_figure(curve, f"{family} curve, {v.label}",
                               f"{v.label}: accuracy vs length with Wilson 95% band, threshold and effective length."))
    parts.append(f'<div class="grid">{"".join(figures)}</div>')
    for v, prof in present:
        note = effective_length_note(prof)
        who = f"{v.label}: " if len(present) > 1 else ""
        parts.append(f'<p class="verdict">{esc(who + effective_length_line(prof))}</p>')
        if note:
            parts.append(f'<p class="note">{esc(note)}</p>')
        parts.append(_outcome_table(prof, v.label if len(present) > 1 else ""))
    parts.append("</article>")
    return "".join(parts)


def _outcome_table(prof: Profile, label: str) -> str:
    """The outcome taxonomy per (length, depth) cell, next to the cell's accuracy."""
    seen = {o for c in prof.cells for o in c.outcomes}
    columns = [o for o in OUTCOMES if o in seen] + sorted(seen - set(OUTCOMES))
    headers = ["length", "depth", "accuracy", "95% CI", "n", *[o + ("*" if o in HARNESS_OUTCOMES else "")
                                                               for o in columns]]
    rows = []
    for c in prof.cells:
        ci = f"{c.lo:.2f}–{c.hi:.2f}" if c.mean is not None else "—"
        rows.append([td(fmt_tokens(c.length), "num"), td(fmt_depth(c.depth), "num"),
                     score_cell(c.mean, c.lo, c.hi, c.n), td(ci, "num"), td(c.n, "num"),
                     *[td(c.outcomes.get(o, 0) or "·", "num") for o in columns]])
    caption = (f"{label + ': ' if label else ''}outcomes per cell ({len(prof.cells)} cells)"
               + ("; * harness failure, excluded from accuracy" if seen & HARNESS_OUTCOMES else ""))
    opened = " open" if len(prof.cells) <= _OPEN_CELLS else ""
    return (f"<details class=\"outcomes\"{opened}><summary>{esc(caption)}</summary>"
            f"{table(headers, rows, cls='outcomes', raw_rows=True)}</details>")


def audit_section(views: list[RunView]) -> str:
    parts = ['<section id="audit"><h2>Token-count audit</h2><p class="sub">Every case is built to its '
             "target length with the model's tokenizer and chat template; the server's own prompt token "
             "count is compared with it. A server that saw fewer tokens truncated the prompt silently: "
             "those cases are labelled <code>input_truncated</code> and left out of accuracy.</p>"]
    for v in views:
        if v.details is None:
            continue
        rows = []
        for a in v.details.audit:
            reported = "not reported"
            if a.reported_min is not None:
                reported = f"{a.reported_min:,}" + (f"–{a.reported_max:,}" if a.reported_max != a.reported_min else "")
            built = f"{a.built_min:,}" if a.built_min == a.built_max else f"{a.built_min:,}–{a.built_max:,}"
            rows.append([a.family, f"{fmt_tokens(a.length)} ({a.length:,})", str(a.n), built, reported,
                         "—" if a.max_gap is None else f"{a.max_gap:+,}", str(a.truncated)])
        parts.append(table(["family", "target", "cases", "built", "server-reported", "max built − reported",
                            "input_truncated"], rows, caption=v.label))
    parts.append("</section>")
    return "".join(parts)


def cost_latency_section(views: list[RunView]) -> str:
    parts = ['<section id="cost-latency"><h2>Cost and latency</h2>']
    summary_rows = []
    for v in views:
        d = v.details
        cost = v.run.meta.get("cost")
        row = [v.label, str(d.answered) if d else "—", f"{d.prompt_tokens:,}" if d else "—",
               f"{d.completion_tokens:,}" if d else "—"]
        if any(x.run.meta.get("cost") is not None for x in views):
            row.append(redact(str(cost)) if cost is not None else "—")
        summary_rows.append(row)
    headers = ["run", "answered", "prompt tokens (server)", "completion tokens"]
    if any(v.run.meta.get("cost") is not None for v in views):
        headers.append("cost")
    parts.append(table(headers, summary_rows))
    for v in views:
        if not v.details or not v.details.latency:
            continue
        rows = [[a.family, fmt_tokens(a.length), str(a.n), f"{a.median_s:.3f}", f"{a.p90_s:.3f}",
                 f"{a.max_s:.3f}", str(a.retried)] for a in v.details.latency]
        parts.append(table(["family", "length", "answered", "median s", "p90 s", "max s", "retried"], rows,
                           caption=f"{v.label}: request latency (successful requests, including retries)"))
    parts.append("</section>")
    return "".join(parts)


def failures_section(views: list[RunView]) -> str:
    parts = ['<section id="failures"><h2>Failures</h2><p class="sub">A sample spread over the grid '
             "(longest lengths first within each cell). Open a case for the prompt around its evidence "
             '(<mark class="ev">target</mark>, <mark class="dis">distractors</mark>) and the full model '
             "output, shown as plain text.</p>"]
    for v in views:
        d = v.details
        if d is None:
            continue
        counts = ", ".join(f"{k}: {n}" for k, n in sorted(d.failure_counts.items()))
        tally = esc(" — " + counts) if counts else ""
        parts.append(f"<h3>{esc(v.label)}</h3><p>{d.n_failures} failed case(s){tally}; showing {len(d.failures)}.</p>")
        parts += [_failure_html(f) for f in d.failures]
    parts.append("</section>")
    return "".join(parts)


def _failure_html(f: Failure) -> str:
    answer = (f.output or "").strip().replace("\n", " ")
    short = answer[:80] + ("…" if len(answer) > 80 else "")
    head = (f"{badge(f.outcome)} {esc(f.family)} · {esc(fmt_tokens(f.length))} · depth {esc(fmt_depth(f.depth))}"
            f" · rep {f.rep} — expected <code>{esc(', '.join(f.expected))}</code>, answered "
            f"<code>{esc(short) if f.output is not None else '<i>no output</i>'}</code>")
    kv = [("case", f.case_id), ("expected", ", ".join(f.expected)),
          ("distractors", ", ".join(f.distractors) or "none"), ("question", f.question or "—"),
          ("prompt tokens", f"built {f.token_count:,}, server-reported "
                            + (f"{f.reported_prompt_tokens:,}" if f.reported_prompt_tokens is not None else "n/a")),
          ("finish reason", f.finish_reason or "—")]
    if f.error:
        kv.append(("error", redact(f.error)))
    body = ['<dl class="kv">' + "".join(f"<dt>{esc(k)}</dt><dd>{esc(val)}</dd>" for k, val in kv) + "</dl>"]
    for ex in f.excerpts:
        end = ex.start + sum(len(t) for t, _ in ex.segments)
        body.append(f'<div class="note">Prompt around the {esc(ex.label)} (located by {esc(ex.located_by)}; '
                    f"characters {ex.start:,}–{end:,} of {ex.prompt_chars:,})</div>{excerpt_html(ex)}")
    if not f.excerpts:
        body.append('<div class="note">The evidence could not be located in the prompt.</div>')
    body.append('<div class="note">Model output (full, as returned):</div>'
                f'<pre class="output">{esc(f.output) if f.output is not None else "(no output)"}</pre>')
    return f'<details class="failure"><summary>{head}</summary><div class="fbody">{"".join(body)}</div></details>'
