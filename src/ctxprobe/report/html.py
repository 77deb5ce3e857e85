"""``ctxprobe report RUN [RUN…] --html out.html``: one self-contained page to share.

The people who read this page often never ran the tool, so it opens with the verdict in
words (per family, the longest length that meets the bar and what that means as a limit),
then the evidence for it. The file stands alone: plots are PNGs inlined as data: URIs,
the CSS is inline, there is no script at all, and a Content-Security-Policy forbids any
network fetch — so it opens the same from an e-mail attachment, offline, years later.
The markup lives in jinja2 templates (``report/templates``, package data) rendered with
autoescaping: model output and prompt text are untrusted and reach the page only as text.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ctxprobe._version import __version__
from ctxprobe.analysis.grid import Profile, clears
from ctxprobe.errors import CtxprobeError
from ctxprobe.report.format import (effective_length_note, fmt_interval, fmt_length, fmt_threshold, fmt_tokens,
                                    length_unit)
from ctxprobe.report.html_floor import floor_table
from ctxprobe.report.html_parts import Cell, Figure, Table, figure, plotted, render, score_cell, td
from ctxprobe.report.html_sections import (
    RunView,
    audit_tables,
    cost_table,
    failure_runs,
    family_article,
    latency_tables,
    plugin_sections,
    slug,
)
from ctxprobe.report.redact import endpoint_of, redact, redact_obj
from ctxprobe.report.rundetails import RunDetails
from ctxprobe.report.runreport import Report
from ctxprobe.tasks.layout import stored_layout_line
from ctxprobe.core.outcome import Outcome

#: The ability each family measures, in the words the summary uses.
ABILITY = {
    "niah": "retrieving one fact stated once", "multikey": "retrieving one fact among look-alikes",
    "multivalue": "retrieving every value of one key", "multiquery": "retrieving several facts at once",
    "phonebook": "associative recall of many entries", "vartrack": "tracking a chain of references",
    "aggregation": "aggregating information spread over the whole context",
    "multihop": "combining two facts placed far apart", "documents": "answering from your own documents",
    "mrcr": "telling apart repeated requests in a long conversation",
    "graphwalks": "following the edges of a graph listed in the context",
}
Intervals = dict[str, tuple[int | None, int | None]]


def run_label(report: Report) -> str:
    """"model · run id" with secrets removed: the name a run goes by on the page."""
    return f"{redact(report.run.model)} · {report.run.run_id}"


def render_html(reports: Sequence[Report], details: Sequence[RunDetails | None] | None = None, *,
                intervals: Sequence[Intervals | None] | None = None, png_dir: str | Path | None = None,
                title: str | None = None, phonebook: Mapping[str, Any] | None = None) -> str:
    """The report page for one or more runs (``ctxprobe.report.load.Report``), as a string.

    ``details`` (from :func:`ctxprobe.report.rundetails.collect_details`) adds the audit,
    latency and failure sections; ``intervals`` gives, per run, the effective-length
    interval of each family (default: the intervals the Report carries). PNGs are written to
    ``png_dir`` (kept, for slides) or a temporary directory, and inlined either way.
    ``phonebook`` maps a run's label (:func:`run_label`) to its ``PhonebookAnalysis`` and adds
    the phone-book section and verdict.
    """
    if not reports:
        raise CtxprobeError("nothing to report: give at least one run id")
    given = list(intervals) if intervals is not None else [_report_intervals(r) for r in reports]
    views = [RunView(r, (details or [None] * len(reports))[i], run_label(r), dict(given[i] or {}))
             for i, r in enumerate(reports)]
    books = dict(phonebook or {})
    if png_dir is not None:
        return _page(views, Path(png_dir), title, books)
    with tempfile.TemporaryDirectory(prefix="ctxprobe-html-") as tmp:
        return _page(views, Path(tmp), title, books)


def _report_intervals(report: Report) -> Intervals:
    """(lo, hi) per family from the effective-length intervals a loaded Report carries, if any."""
    return {fam: (iv.lo, iv.hi) for fam, iv in report.intervals.items()}


def write_html(reports: Sequence[Report], path: str | Path, details: Sequence[RunDetails | None] | None = None,
               **kwargs: Any) -> Path:
    """``render_html`` written to ``path`` (UTF-8); returns the path."""
    out = Path(path)
    page = render_html(reports, details, **kwargs)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(page, encoding="utf-8")
    except OSError as err:
        raise CtxprobeError(f"cannot write {out}: {err.strerror or err}") from None
    return out


def build_html_report(run_ids: Sequence[str], store_path: str | Path, out_path: str | Path, *,
                      threshold: float | None = None, png_dir: str | Path | None = None,
                      failures: int = 20, scorer: str = "strict") -> Path:
    """Load runs from a store and write their report: what ``ctxprobe report --html`` calls."""
    from ctxprobe.report.rundetails import collect_details
    from ctxprobe.store import iter_export

    from ctxprobe.report.load import load_report
    reports = [load_report(rid, store_path, threshold, scorer) for rid in run_ids]
    seen = [r.run.run_id for r in reports]
    if len(set(seen)) != len(seen):
        raise CtxprobeError("the same run is given twice; give each run id once")
    details = [collect_details(iter_export(r.run.run_id, store_path), failures=failures) for r in reports]
    return write_html(reports, out_path, details, png_dir=png_dir, phonebook=_phonebooks(reports, store_path))


def _phonebooks(reports: Sequence[Report], store_path: str | Path) -> dict[str, Any]:
    """The phone-book analysis of each run that has scored phone-book needles."""
    from ctxprobe.analysis.phonebook import FAMILY, analyse, needle_results
    from ctxprobe.store import iter_export

    out: dict[str, Any] = {}
    for r in reports:
        if any(p.family == FAMILY for p in r.profiles):
            results = needle_results(iter_export(r.run.run_id, store_path))
            if results:
                out[run_label(r)] = analyse(results)
    return out


# -- page ---------------------------------------------------------------------------------

def _page(views: list[RunView], png_dir: Path, title: str | None, books: dict[str, Any]) -> str:
    from ctxprobe.report.html_phonebook import phonebook_section
    from ctxprobe.report.html_budgets import budget_runs
    from ctxprobe.report.html_ruler import ruler_runs

    families = sorted({p.family for v in views for p in v.profiles})
    heading = title or ("ctxprobe report · " + ", ".join(v.label for v in views))
    ruler = ruler_runs(views)
    budgets = budget_runs(views)
    extra = plugin_sections(views)
    toc = [("summary", "Summary"), ("metadata", "Runs"), ("profile", "Profile"), ("all-families", "All families"),
           *[(f"family-{slug(f)}", f) for f in families], *([("phonebook", "Phone book")] if books else []),
           *([("ruler", "RULER")] if any(v.report.ruler for v in views) else []),
           *([("reasoning-budgets", "Reasoning budgets")] if budgets else []),
           *[(anchor, section.title) for anchor, section in extra],
           ("audit", "Token audit"),
           ("cost-latency", "Cost & latency"), ("failures", "Failures")]
    scorers = ", ".join(sorted({v.report.scorer for v in views}))
    sub = (f"{len(views)} run(s) · {len(families)} task famil{'y' if len(families) == 1 else 'ies'}"
           f" · scorer {scorers} · lengths in tokens"
           f" · generated {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')} by ctxprobe {__version__}")
    details = None
    if any(v.details for v in views):
        details = {"audit": audit_tables(views), "cost": cost_table(views), "latency": latency_tables(views),
                   "failures": failure_runs(views)}
    return render(
        "page.html.j2", heading=heading, toc=toc, sub=sub, version=__version__,
        summary=_summary(views, books), runs=_metadata(views), profile=_profile(views),
        all_families=_all_families(views, png_dir),
        articles=[family_article(f, views, png_dir) for f in families],
        phonebook=phonebook_section(books, png_dir) if books else None, ruler=ruler, extra=extra, details=details,
        budgets=budgets,
    )


@dataclass(frozen=True)
class Sentence:
    """One summary line: ``family (ability): [verdict] text`` (``family`` empty for a note)."""

    text: str
    family: str = ""
    ability: str = ""
    verdict: str = ""  # shown in bold: the length teams size prompts by
    note: bool = False


def family_sentence(view: RunView, prof: Profile) -> Sentence:
    """The plain-language verdict for one family: the number teams size prompts by.

    Follows the interval, not the point estimate: "reliable up to X" only when every length
    up to X clears the bar with 95% confidence (the interval's lower end)."""
    ability = ABILITY.get(prof.family, prof.family)
    stats = sorted(prof.lengths, key=lambda s: s.length)
    bar = fmt_threshold(prof.threshold)
    eff = prof.effective_length

    def say(text: str, verdict: str = "") -> Sentence:
        return Sentence(text, prof.family, ability, verdict)

    if not stats:
        return say("no results.")
    if stats[0].n == 0 or stats[0].outcomes.get(Outcome.INPUT_TRUNCATED):
        return say(f"undetermined — the shortest length {fmt_tokens(stats[0].length)} was not measured "
                   "(harness failures or prompts truncated by the server); fix the serving path and rerun.")
    if prof.family not in view.intervals:
        return say(f"observed effective length {fmt_tokens(eff) if eff else 'below the shortest length'} "
                   "(no interval computed: not a confident statement).")
    lo, hi = view.intervals[prof.family]
    show = lambda x: f"below {fmt_tokens(stats[0].length)}" if x is None else fmt_tokens(x)  # noqa: E731
    observed = f"observed {show(eff)}"
    if lo is None and hi is None:
        first = stats[0]
        return say(f"fails the bar (accuracy ≥ {bar}) already at the shortest tested length "
                   f"{fmt_tokens(first.length)} (accuracy {first.mean:.2f}; 95% confidence). Do not rely on "
                   "this ability with this model and serving stack; test shorter contexts to find where it holds.")
    if lo is None:
        return say(f"not shown reliable at any tested length — too few cases to clear the bar (accuracy ≥ "
                   f"{bar}) with 95% confidence ({observed}; at most {show(hi)}). Add repetitions before "
                   "relying on it.")
    rng = "" if lo == hi else f"; at most {show(hi)}, {observed} — add repetitions to narrow it"
    verdict = f"reliable up to {fmt_tokens(lo)} tokens"
    confidence = f"(95% confidence{rng})"
    if lo == stats[-1].length:
        return say(confidence + f": meets the bar (accuracy ≥ {bar}) at every tested length. The real limit "
                   "may be longer — extend the sweep before planning prompts beyond it.", verdict)
    nxt = next(s for s in stats if s.length > lo)
    after = (f"at {fmt_tokens(nxt.length)} accuracy is {nxt.mean:.2f} {fmt_interval(nxt.lo, nxt.hi)}"
             if nxt.n and not nxt.outcomes.get(Outcome.INPUT_TRUNCATED) else effective_length_note(prof) or "")
    return say(confidence + f"; {after}. Products that rely on {ability} should keep the whole prompt "
               f"(instructions, retrieved chunks, history) within {fmt_tokens(lo)} tokens on this "
               "model and serving stack, and size RAG chunks and prompt layouts to that budget.", verdict)


def _summary(views: list[RunView], books: dict[str, Any]) -> dict[str, Any]:
    from ctxprobe.report.html_phonebook import phonebook_sentence

    runs = []
    for v in views:
        found = v.report.floors
        items = [line for p in v.profiles for line in [
            Sentence(phonebook_sentence(books[v.label]), "phonebook", ABILITY["phonebook"])
            if p.family == "phonebook" and v.label in books else family_sentence(v, p),
            *([Sentence(f"noise floor: {found[p.family].line()}.", p.family, ABILITY.get(p.family, p.family))]
              if p.family in found else [])]] or [Sentence("No scored cases yet.")]
        notes = [*v.report.incomplete, *v.report.notes]
        trained = v.run.meta.trained_context
        if not notes and trained and any(s.length > trained for p in v.profiles for s in p.lengths):
            notes.append(f"Lengths past {fmt_tokens(trained)} tokens are beyond the model’s trained context.")
        items += [Sentence(redact(str(n)), note=True) for n in notes]
        runs.append({"label": v.label, "lines": items})
    bars = sorted({fmt_threshold(p.threshold) for v in views for p in v.profiles})
    return {"runs": runs, "bars": ", ".join(bars) or "—"}


def _sharing(mode: object, view: RunView) -> str:
    """Which filler layout built the cases, and what the server said its cache saved."""
    text = {"shared": "shared: the depths of a (length, repetition) share their filler, sent deepest first",
            "independent": "off: every case has its own filler (--no-share-prefix)"}.get(str(mode), "not recorded")
    line = view.details.cache_line() if view.details else None
    return f"{text}; {line}" if line else text


def haystack_label(haystack: object) -> str:
    """What the filler was: the built-in generated prose, or the user's folder (as given)."""
    if haystack in (None, "", "prose"):
        return "generated neutral prose (built in, seeded)"
    return f"your text files: {redact(str(haystack))}"


def _metadata(views: list[RunView]) -> Table:
    def field(view: RunView) -> dict[str, str]:
        run, spec = view.run, redact_obj(view.run.spec)
        dec = spec.get("decoding") or {}
        return {
            "run id": run.run_id, "model": redact(run.model),
            "serving endpoint": endpoint_of(run.model) or "in process (no endpoint)",
            "tokenizer": redact(run.tokenizer), "chat template hash": str(run.meta.chat_template_hash or "—"),
            "decoding": ", ".join(f"{k}={v}" for k, v in dec.items() if v is not None) or "—", "seed": str(spec.get("seed", "—")),
            "families": json.dumps(spec.get("families", {}), ensure_ascii=False),
            "haystack": haystack_label(spec.get("haystack")),
            "lengths": ", ".join(fmt_length(x, "entries" if any(length_unit(spec, f) == "entries" for f in
                                                                 spec.get("families", {})) else "tokens")
                                 for x in spec.get("lengths", [])),
            "depths": ", ".join(f"{d:g}" for d in spec.get("depths", [])), "repetitions": str(spec.get("reps", "—")),
            "context window": str(run.meta.context_window or "unknown"),
            "trained context": str(run.meta.trained_context or "unknown"),
            "prefix sharing": _sharing(run.meta.prefix_sharing, view),
            "prompt layout": stored_layout_line(run.spec) or "the families' own prompts",
            "ctxprobe version": run.ctxprobe_version, "created": run.created_at,
            "status": f"{run.status} ({run.n_final}/{run.n_planned} planned cases answered)",
        }
    cols = [field(v) for v in views]
    rows = [[k, *[c[k] for c in cols]] for k in cols[0]]
    return Table(["", *[v.run.run_id for v in views]], rows, cls="meta")


def _profile(views: list[RunView]) -> dict[str, Any]:
    """One row per (family, run): stays narrow at laptop width however many runs are given."""
    families = sorted({p.family for v in views for p in v.profiles})
    rows = []
    for fam in families:
        for v in views:
            prof = next((p for p in v.profiles if p.family == fam), None)
            if prof is None:
                continue  # only what ran: the Runs table lists each run's families
            eff = prof.effective_length
            colour = "#1a7a3c" if eff is not None else "#b2182b"
            unit = length_unit(v.run.spec, fam)
            text = fmt_length(eff, unit) if eff is not None else "below shortest"
            interval = "not computed"
            if fam in v.intervals:
                lo, hi = v.intervals[fam]
                interval = " – ".join(fmt_length(x, unit) if x is not None else "< shortest" for x in (lo, hi))
            last = max(prof.lengths, key=lambda s: s.length)
            mark = "" if clears(last.mean, prof.threshold) else " ✗"
            # a book's recall has one interval, in the phone-book section; not a second one here
            accuracy = (td("recall: see Phone book") if unit == "entries" else
                        score_cell(last.mean, last.lo, last.hi, last.n, f" @ {fmt_length(last.length, unit)}{mark}"))
            rows.append([td(fam), td(v.label), Cell(text, cls="num", bold=colour), td(interval, "num"), accuracy])
    note = ("Effective length = the longest length whose accuracy (all depths pooled) meets the bar, with every "
            "shorter length meeting it too. " + ("" if any(v.intervals for v in views) else
                                                 "No interval is computed for the effective length in this report."))
    headers = ["family", "run", "observed effective length", "95% interval", "accuracy at longest length"]
    return {"table": Table(headers, rows, cls="profile"), "note": note, "legend": _legend(),
            "floors": floor_table(views)}


def _legend() -> list[str]:
    """The colour scale's stops, 0 to 1 by tenths."""
    from ctxprobe.report.html_parts import accuracy_colours

    return [accuracy_colours(x / 10)[0] for x in range(11)]


def _all_families(views: list[RunView], png_dir: Path) -> list[Figure]:
    from ctxprobe.report.plots_multi import all_families_png

    figures = []
    for v in views:
        # books sized in entries do not share the token axis; the phone-book section shows them
        profiles = [p for p in v.profiles if length_unit(v.run.spec, p.family) == "tokens"]
        if not profiles:
            continue
        path = plotted(lambda: all_families_png(profiles, png_dir / slug(v.run.run_id) / "all-families.png", v.label))
        figures.append(figure(path, "all families, " + v.label, f"{v.label}: every family on one chart; ring = "
                              "effective length; dashed red = threshold."))
    return figures
