"""Every page of ``ctxprobe view`` rendered to a string, from the library's own objects:
a run's :class:`~ctxprobe.report.runreport.Report` and its ``to_dict()`` (what
``report --json`` prints), the report's interval wording
(:func:`ctxprobe.report.terminal.interval_lines`), ``compare``'s
:class:`~ctxprobe.analysis.compare.Comparison` and ``decide``'s
:class:`~ctxprobe.decide.Decision`. Nothing here computes a statistic. Templates
autoescape every value; the one script is inline and allowed by its hash alone."""

from __future__ import annotations

import base64
import hashlib
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import jinja2
from markupsafe import Markup

from ctxprobe._version import __version__
from ctxprobe.core.outcome import OUTCOMES
from ctxprobe.core.records import CaseRecord
from ctxprobe.report.format import fmt_depth, fmt_tokens
from ctxprobe.report.html.parts import OUTCOME_CLASS, accuracy_colours
from ctxprobe.report.redact import redact
from ctxprobe.report.terminal import header_line, interval_lines
from ctxprobe.view.casefold import CaseView
from ctxprobe.view.charts import curve, heatmap
from ctxprobe.view.links import ServerLinks
from ctxprobe.view.runs import LIVE, RunRow
from ctxprobe.view.source import LoadedRun


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    loader = jinja2.ChoiceLoader([jinja2.PackageLoader("ctxprobe.view", "templates"),
                                  jinja2.PackageLoader("ctxprobe.report", "templates")])
    env = jinja2.Environment(loader=loader, autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True,
                             lstrip_blocks=True)
    env.globals.update(fmt_tokens=fmt_tokens, fmt_depth=fmt_depth, outcome_class=OUTCOME_CLASS, version=__version__)
    return env


@lru_cache(maxsize=1)
def _script() -> tuple[str, str]:
    """The page script and its CSP hash (``script-src 'sha256-…'``: nothing else may run)."""
    js = resources.files("ctxprobe.view").joinpath("static/view.js").read_text(encoding="utf-8")
    digest = base64.b64encode(hashlib.sha256(js.encode("utf-8")).digest()).decode("ascii")
    return js, f"'sha256-{digest}'"


@lru_cache(maxsize=1)
def _css() -> str:
    return resources.files("ctxprobe.view").joinpath("static/view.css").read_text(encoding="utf-8")


#: Seconds between reloads of a running run's page (its cells are analysed again at most every 3 s).
RUN_REFRESH_S = 3


def render(template: str, links: ServerLinks, **context: Any) -> str:
    js, js_hash = _script()
    return environment().get_template(template).render(
        links=links, script=Markup(js), script_hash=Markup(js_hash), css=Markup(_css()), **context)  # noqa: S704 (our files)


def runs_page(rows: list[RunRow], links: ServerLinks, *, store: str) -> str:
    return render("runs.html.j2", links, rows=rows, store=store, title="ctxprobe view · runs")


@dataclass(frozen=True)
class FamilyPart:
    name: str
    profile: dict[str, Any]
    heat: Any
    curve: Any
    statements: list[str]
    outcomes: list[str]  # outcome labels seen in the family, in the taxonomy's order
    by_length: list[tuple[str, dict[str, int]]]
    #: The noise floor as ``report`` prints it: its title, rows (length, accuracy, floor, above it?) and line.
    floor: tuple[str, list[tuple[str, str, str, str]], str] | None = None


def _floor(rep: Any, family: str) -> tuple[str, list[tuple[str, str, str, str]], str] | None:
    from ctxprobe.analysis.floor import KIND_WORDS
    from ctxprobe.report.floor.table import verdict
    from ctxprobe.report.format import fmt_interval, fmt_score

    fl = rep.floors.get(family)
    if fl is None:
        return None
    rows = [(fmt_tokens(x.length), fmt_score(x.mean),
             fmt_score(x.floor_mean) + (f" {fmt_interval(x.floor_lo, x.floor_hi)}" if x.floor_mean is not None else ""),
             verdict(x.above, fl.confidence)) for x in fl.lengths]
    return f"noise floor ({KIND_WORDS.get(fl.kind, fl.kind)})", rows, f"{fl.family}: {fl.line()}"


def run_page(loaded: LoadedRun, links: ServerLinks) -> str:
    rep = loaded.report
    data = loaded.json
    parts = []
    for prof in data["profiles"]:
        fam = prof["family"]
        iv = rep.intervals.get(fam)
        seen = Counter[str]()
        for s in prof["lengths"]:
            seen.update(s["outcomes"])
        outcomes = [o for o in OUTCOMES if seen.get(o)] + sorted(o for o in seen if o not in OUTCOMES)
        parts.append(FamilyPart(fam, prof, heatmap(prof), curve(prof),
                                interval_lines(iv, rep.threshold) if iv is not None else [],
                                outcomes, [(s["length_label"], s["outcomes"]) for s in prof["lengths"]],
                                _floor(rep, fam)))
    natural = [a["verdict"] for a in data.get("natural_vs_synthetic", [])]
    summary = [(p.family, iv.line(), iv.interval_text()) for p in rep.profiles
               if (iv := rep.intervals.get(p.family)) is not None]
    extra = rep.run.meta.extra
    source = extra.get("imported_from")
    log = extra.get(f"{source}_log") if source else None
    imported = f"imported from {source}" + (f" (log {log})" if log else "") if source else ""
    return render("run.html.j2", links, run=rep.run, model=redact(rep.run.model), header=redact(header_line(rep).plain),
                  imported=redact(imported),
                  incomplete=rep.incomplete, notes=[redact(n) for n in rep.notes], natural=natural, parts=parts,
                  summary=summary, cost=loaded.data.billing, title=f"ctxprobe view · run {rep.run.run_id}",
                  # a running run's page reloads itself, as the runs page polls (never in a static bundle)
                  refresh=RUN_REFRESH_S if links.live and rep.run.status in LIVE else None)


def cell_page(loaded: LoadedRun, family: str, length: int, depth: float, records: list[CaseRecord],
              links: ServerLinks) -> str:
    prof = next((p for p in loaded.json["profiles"] if p["family"] == family), None)
    stat = None if prof is None else next((c for c in prof["cells"] if c["length"] == length and c["depth"] == depth),
                                          None)
    return render("cell.html.j2", links, run=loaded.report.run, model=redact(loaded.report.run.model), family=family,
                  length=length, depth=depth, stat=stat, records=records,
                  title=f"ctxprobe view · {family} {fmt_tokens(length)} depth {fmt_depth(depth)}")


def cases_page(loaded: LoadedRun, records: list[CaseRecord], outcome: str | None, links: ServerLinks) -> str:
    counts = Counter(r.outcome or "unanswered" for r in records)
    return render("cases.html.j2", links, run=loaded.report.run, model=redact(loaded.report.run.model),
                  records=records, counts=sorted(counts.items()), outcome=outcome or "",
                  title=f"ctxprobe view · cases of {loaded.report.run.run_id}")


def case_page(loaded: LoadedRun, view: CaseView, links: ServerLinks) -> str:
    return render("case.html.j2", links, run=loaded.report.run, model=redact(loaded.report.run.model), c=view,
                  title=f"ctxprobe view · case {view.case_id}")


def diff_colours(diff: float | None) -> tuple[str, str]:
    """B − A on the same red (worse) → green (better) scale as accuracy, 0 in the middle."""
    return accuracy_colours(None if diff is None else (diff + 1) / 2)


def compare_page(comparison: Any, models: tuple[str, str], links: ServerLinks) -> str:
    fams = []
    for f in comparison.families:
        depths = sorted({c.depth for c in f.cells if c.depth is not None})
        lengths = sorted({c.length for c in f.cells if c.length is not None})
        grid = {(c.length, c.depth): c for c in f.cells}
        # no length clears the bar: below the shortest tested, as compare's verdict words it
        effs = [fmt_tokens(v) if v is not None else f"below {fmt_tokens(lengths[0])}" if lengths else "none"
                for v in (f.effective_a, f.effective_b)]
        fams.append((f, depths, lengths, grid, effs))
    return render("compare.html.j2", links, cmp=comparison, fams=fams, models=[redact(m) for m in models],
                  diff_colours=diff_colours, title=f"ctxprobe view · compare {comparison.run_a} {comparison.run_b}")


def decide_page(section: Any, run_ids: list[str], prices: str, links: ServerLinks) -> str:
    return render("decide.html.j2", links, s=section, run_ids=run_ids, prices=prices, title="ctxprobe view · decide")


def error_page(message: str, links: ServerLinks, status: int = 404) -> str:
    return render("error.html.j2", links, message=redact(message), status=status, title="ctxprobe view · not found")


def history_page(groups: list[Any], links: ServerLinks) -> str:
    return render("history.html.j2", links, groups=groups, title="ctxprobe view · history")
