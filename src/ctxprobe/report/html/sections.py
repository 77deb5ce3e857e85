"""The data-heavy sections of the HTML report: per-family plots and outcome tables,
token-count audit, cost and latency, the failure browser, and the sections plugins add.

Each function returns what its template (``report/templates``) shows: plain values,
tables and inlined figures, never markup. With several runs each section shows the runs
side by side (columns of one table, or one figure per run in a grid) so differences line up.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Iterable, Mapping
from typing import Any

from ctxprobe.analysis.grid import Profile
from ctxprobe.report.evidence import Failure
from ctxprobe.report.format import (effective_length_line, effective_length_note, fmt_depth, fmt_tokens,
                                    length_unit)
from ctxprobe.report.html.parts import OUTCOME_CLASS, Table, ci_name, figure, plotted, score_cell, td
from ctxprobe.report.redact import redact
from ctxprobe.report.rundetails import RunDetails
from ctxprobe.report.runreport import Report
from ctxprobe.store import RunRecord
from ctxprobe.core.outcome import HARNESS_OUTCOMES, OUTCOMES, Outcome

_OPEN_CELLS = 30  # outcome tables up to this many cells start expanded


#: What the page reads of a loaded run: the report itself (its type lives apart from the
#: loader, so the page code never imports the store reading).
ReportLike = Report


@dataclass
class RunView:
    """One run as the page shows it."""

    report: Report
    details: RunDetails | None
    label: str  # "model · run id", secrets removed
    #: effective-length interval per family (lo, hi) when the analysis computed one
    intervals: dict[str, tuple[int | None, int | None]]

    @property
    def run(self) -> RunRecord:
        return self.report.run

    @property
    def profiles(self) -> list[Profile]:
        return self.report.profiles


class PageViews(list[RunView]):
    """The page's runs, in order: what every section function is given (a plain list of
    :class:`RunView` to a plugin), with where the page's PNGs go and what each family's
    report hooks loaded for it (family name → run label → the hooks' data)."""

    def __init__(self, views: Iterable[RunView], png_dir: Path,
                 family_data: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        super().__init__(views)
        self.png_dir = png_dir
        self.family_data = {name: dict(by_run) for name, by_run in (family_data or {}).items()}

    def data_for(self, family: str, view: RunView) -> Any | None:
        """What ``family``'s hooks loaded for ``view``'s run (None: nothing)."""
        return self.family_data.get(family, {}).get(view.label)


def slug(text: str) -> str:
    """A safe id / file name fragment (family names are ours, but be strict anyway)."""
    return re.sub(r"[^a-z0-9_-]+", "-", text.lower()).strip("-") or "x"


def family_article(family: str, views: list[RunView], png_dir: Path) -> dict[str, Any]:
    """Heatmap and curve per run (+ an overlay when several runs), verdict, outcomes per cell."""
    from ctxprobe.report.plots import curve_png, heatmap_png
    from ctxprobe.report.plots.multi import runs_curve_png

    article: dict[str, Any] = {"slug": slug(family), "family": family, "in_entries": False, "overlay": None,
                               "figures": [], "runs": []}
    present = [(v, p) for v in views for p in v.profiles if p.family == family]
    if present and all(length_unit(v.run.spec, family) == "entries" for v, _ in present):
        # a book's size is in entries and its one "depth" is a placeholder: a token-axis heatmap
        # and curve would mislabel it; the phone-book section shows it in its own terms
        article["in_entries"] = True
        return article
    if len(present) > 1:
        path = plotted(lambda: runs_curve_png(family, [(v.label, p) for v, p in present],
                                              png_dir / f"compare-{slug(family)}-curve.png"))
        caption = ("All runs on one chart: accuracy over all depths, Wilson 95% bands (none for adaptively "
                   "sampled runs" + ("; clustered by case for runs that sent each case k times"
                                     if any(p.sampled for _, p in present) else "") + "), ring = effective length.")
        article["overlay"] = figure(path, f"{family}: runs compared", caption)
    for v, prof in present:
        base = png_dir / slug(v.run.run_id)
        trained = v.run.meta.trained_context if length_unit(v.run.spec, family) == "tokens" else None
        heat = plotted(lambda: heatmap_png(prof, base / f"{slug(family)}-heatmap.png", v.label, trained))
        curve = plotted(lambda: curve_png(prof, base / f"{slug(family)}-curve.png", v.label, trained))
        verdict = effective_length_line(prof)
        article["figures"] += [
            figure(heat, f"{family} heatmap, {v.label}",
                   f"{v.label}: accuracy by length × depth (0 red → 1 green). {verdict}."),
            figure(curve, f"{family} curve, {v.label}",
                   f"{v.label}: accuracy vs length with "
                   + ("no fixed-n band (adaptively sampled: the walk's verdicts decide)" if prof.verdicts
                      else "95% band clustered by case" if prof.sampled else "Wilson 95% band") + ", threshold and effective length."),
        ]
    for v, prof in present:
        who = f"{v.label}: " if len(present) > 1 else ""
        article["runs"].append({"verdict": who + effective_length_line(prof), "note": effective_length_note(prof),
                                "outcomes": _outcome_table(prof, v.label if len(present) > 1 else "")})
    return article


def _outcome_table(prof: Profile, label: str) -> dict[str, Any]:
    """The outcome taxonomy per (length, depth) cell, next to the cell's accuracy."""
    seen = {o for c in prof.cells for o in c.outcomes}
    columns = [o for o in OUTCOMES if o in seen] + sorted(seen - set(OUTCOMES))
    headers = ["length", "depth", "accuracy", "95% CI", "n", *[o + ("*" if o in HARNESS_OUTCOMES else "")
                                                               for o in columns]]
    rows = []
    for c in prof.cells:
        fixed_n = not prof.verdicts  # adaptively sampled cells have no fixed-n interval
        ci = f"{c.lo:.2f}–{c.hi:.2f}" if c.mean is not None and fixed_n else "—" if fixed_n else "adaptive"
        rows.append([td(fmt_tokens(c.length), "num"), td(fmt_depth(c.depth), "num"),
                     score_cell(c.mean, c.lo if fixed_n else None, c.hi, c.n_label, ci=ci_name(prof)), td(ci, "num"),
                     td(c.n_label, "num"),
                     *[td(c.outcomes.get(o, 0) or "·", "num") for o in columns]])
    caption = (f"{label + ': ' if label else ''}outcomes per cell ({len(prof.cells)} cells)"
               + ("; * harness failure, excluded from accuracy" if seen & HARNESS_OUTCOMES else ""))
    return {"caption": caption, "open": len(prof.cells) <= _OPEN_CELLS,
            "table": Table(headers, rows, cls="outcomes")}


def audit_tables(views: list[RunView]) -> list[Table]:
    """Built vs server-reported prompt tokens, one table per run with details."""
    tables = []
    for v in views:
        if v.details is None:
            continue
        rows: list[list[Any]] = []
        for a in v.details.audit:
            reported = "not reported"
            if a.reported_min is not None:
                reported = f"{a.reported_min:,}" + (f"–{a.reported_max:,}" if a.reported_max != a.reported_min else "")
            built = f"{a.built_min:,}" if a.built_min == a.built_max else f"{a.built_min:,}–{a.built_max:,}"
            rows.append([a.family, f"{fmt_tokens(a.length)} ({a.length:,})", str(a.n), built, reported,
                         "—" if a.max_gap is None else f"{a.max_gap:+,}", str(a.truncated)])
        tables.append(Table(["family", "target", "cases", "built", "server-reported", "max built − reported",
                             Outcome.INPUT_TRUNCATED.value], rows, caption=v.label))
    return tables


def cost_table(views: list[RunView]) -> Table:
    """Answered cases and the tokens the server counted, per run (the billed cost is a
    note of the run: planned vs billed)."""
    rows: list[list[Any]] = []
    for v in views:
        d = v.details
        rows.append([v.label, str(d.answered) if d else "—", f"{d.prompt_tokens:,}" if d else "—",
                     f"{d.completion_tokens:,}" if d else "—"])
    return Table(["run", "answered", "prompt tokens (server)", "completion tokens"], rows)


def latency_tables(views: list[RunView]) -> list[Table]:
    tables = []
    for v in views:
        if not v.details or not v.details.latency:
            continue
        rows: list[list[Any]] = [[a.family, fmt_tokens(a.length), str(a.n), f"{a.median_s:.3f}", f"{a.p90_s:.3f}",
                                  f"{a.max_s:.3f}", str(a.retried)] for a in v.details.latency]
        tables.append(Table(["family", "length", "answered", "median s", "p90 s", "max s", "retried"], rows,
                            caption=f"{v.label}: request latency (successful requests, including retries)"))
    return tables


def failure_runs(views: list[RunView]) -> list[dict[str, Any]]:
    """Per run with details: its failure tally and the sampled failures."""
    out = []
    for v in views:
        d = v.details
        if d is None:
            continue
        out.append({"label": v.label, "n_failures": d.n_failures,
                    "counts": ", ".join(f"{k}: {n}" for k, n in sorted(d.failure_counts.items())),
                    "failures": [_failure(f) for f in d.failures]})
    return out


def _failure(f: Failure) -> dict[str, Any]:
    answer = (f.output or "").strip().replace("\n", " ")
    short = answer[:80] + ("…" if len(answer) > 80 else "")
    kv = [("case", f.case_id), ("expected", ", ".join(f.expected)),
          ("distractors", ", ".join(f.distractors) or "none"), ("question", f.question or "—"),
          ("prompt tokens", f"built {f.token_count:,}, server-reported "
                            + (f"{f.reported_prompt_tokens:,}" if f.reported_prompt_tokens is not None else "n/a")),
          ("finish reason", f.finish_reason or "—")]
    if f.error:
        kv.append(("error", redact(f.error)))
    return {"outcome": f.outcome, "badge": OUTCOME_CLASS.get(f.outcome, "other"), "family": f.family,
            "length": fmt_tokens(f.length), "depth": fmt_depth(f.depth), "rep": f.rep,
            "expected": ", ".join(f.expected), "answered": short if f.output is not None else None,
            "kv": kv, "excerpts": f.excerpts, "output": f.output}
