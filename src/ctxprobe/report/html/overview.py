"""The overview sections of the HTML report: the summary in words (per family, the
length that meets the bar and what it means as a limit), the runs' metadata, the profile
table and all families on one chart."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxprobe.analysis.grid import Profile, clears
from ctxprobe.core import registry
from ctxprobe.core.outcome import Outcome
from ctxprobe.report.format import (effective_length_note, fmt_interval, fmt_length, fmt_threshold, fmt_tokens,
                                    length_unit)
from ctxprobe.report.hooks import family_hooks
from ctxprobe.report.html.floor import floor_table
from ctxprobe.report.html.parts import Cell, Figure, Table, ci_name, figure, plotted, score_cell, td
from ctxprobe.report.html.sections import PageViews, RunView, slug
from ctxprobe.report.redact import endpoint_of, redact, redact_obj
from ctxprobe.report.rundata import family_names
from ctxprobe.haystack.layout import stored_layout_line

def ability(family: str) -> str:
    """What ``family`` (a label or a name) measures, in the summary's words: its declaration's
    ``ability``, else a declaration's ability of the label (niah's ``multikey``...), else the
    name itself."""
    declared = [e.declaration() for e in registry.entries("families")]
    own = next((d.ability for d in declared if d.name == family and d.ability), None)
    return own or next((d.label_abilities[family] for d in declared if family in d.label_abilities), family)


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
    what = ability(prof.family)
    stats = sorted(prof.lengths, key=lambda s: s.length)
    bar = fmt_threshold(prof.threshold)
    eff = prof.effective_length

    def say(text: str, verdict: str = "") -> Sentence:
        return Sentence(text, prof.family, what, verdict)

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
    iv = view.report.intervals.get(prof.family)
    settles = " ".join(f"{s.line()}." for _, s in sorted(iv.settle.items())) if iv is not None else ""
    if lo is None:
        return say(f"not shown reliable at any tested length — too few cases to clear the bar (accuracy ≥ "
                   f"{bar}) with 95% confidence ({observed}; at most {show(hi)}). Add repetitions before "
                   "relying on it." + (f" {settles}" if settles else ""))
    rng = "" if lo == hi else f"; at most {show(hi)}, {observed} — add repetitions to narrow it"
    if settles:
        rng += f" ({settles.removesuffix('.')})"
    verdict = f"reliable up to {fmt_tokens(lo)} tokens"
    confidence = f"(95% confidence{rng})"
    if lo == stats[-1].length:
        return say(confidence + f": meets the bar (accuracy ≥ {bar}) at every tested length. The real limit "
                   "may be longer — extend the sweep before planning prompts beyond it.", verdict)
    nxt = next(s for s in stats if s.length > lo)
    after = (f"at {fmt_tokens(nxt.length)} accuracy is {nxt.mean:.2f}"
             + ("" if prof.verdicts else f" {fmt_interval(nxt.lo, nxt.hi)}")
             if nxt.n and not nxt.outcomes.get(Outcome.INPUT_TRUNCATED) else effective_length_note(prof) or "")
    return say(confidence + f"; {after}. Products that rely on {what} should keep the whole prompt "
               f"(instructions, retrieved chunks, history) within {fmt_tokens(lo)} tokens on this "
               "model and serving stack, and size RAG chunks and prompt layouts to that budget.", verdict)


def summary(views: PageViews) -> dict[str, Any]:
    """Per run, one sentence per family (a family's report hooks may say it in their own
    terms), its noise floor, and the run's notes."""
    runs = []
    for v in views:
        found = v.report.floors
        names = family_names(v.run)
        items = [line for p in v.profiles for line in [
            _sentence(views, v, p, names.get(p.family, p.family)),
            *([Sentence(f"noise floor: {found[p.family].line()}.", p.family, ability(p.family))]
              if p.family in found else [])]] or [Sentence("No scored cases yet.")]
        notes = [*v.report.incomplete, *v.report.notes]
        trained = v.run.meta.trained_context
        if not notes and trained and any(s.length > trained for p in v.profiles for s in p.lengths):
            notes.append(f"Lengths past {fmt_tokens(trained)} tokens are beyond the model’s trained context.")
        items += [Sentence(redact(str(n)), note=True) for n in notes]
        runs.append({"label": v.label, "lines": items})
    bars = sorted({fmt_threshold(p.threshold) for v in views for p in v.profiles})
    return {"runs": runs, "bars": ", ".join(bars) or "—"}


def _sentence(views: PageViews, view: RunView, prof: Profile, family: str) -> Sentence:
    """The family's hooks' sentence for this run, when they loaded something for it, else
    the generic verdict."""
    data = views.data_for(family, view)
    said = family_hooks(family).html_sentence(data) if data is not None else None
    if said is None:
        return family_sentence(view, prof)
    return Sentence(said, prof.family, ability(prof.family))


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


def metadata(views: list[RunView]) -> Table:
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


def profile_section(views: list[RunView]) -> dict[str, Any]:
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
                        score_cell(last.mean, None if prof.verdicts else last.lo, last.hi, last.n_label,
                                   f" @ {fmt_length(last.length, unit)}{mark}", ci=ci_name(prof)))
            rows.append([td(fam), td(v.label), Cell(text, cls="num", bold=colour), td(interval, "num"), accuracy])
    note = ("Effective length = the longest length whose accuracy (all depths pooled) meets the bar, with every "
            "shorter length meeting it too. " + ("" if any(v.intervals for v in views) else
                                                 "No interval is computed for the effective length in this report."))
    headers = ["family", "run", "observed effective length", "95% interval", "accuracy at longest length"]
    return {"table": Table(headers, rows, cls="profile"), "note": note, "legend": _legend(),
            "floors": floor_table(views)}


def _legend() -> list[str]:
    """The colour scale's stops, 0 to 1 by tenths."""
    from ctxprobe.report.html.parts import accuracy_colours

    return [accuracy_colours(x / 10)[0] for x in range(11)]


def all_families(views: list[RunView], png_dir: Path) -> list[Figure]:
    from ctxprobe.report.plots.multi import all_families_png

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
