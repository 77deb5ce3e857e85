"""Building blocks of the HTML report: the templates, the colour scale, table cells, images.

The page is rendered from jinja2 templates (``report/templates``, shipped as package
data) with autoescaping on for every value: the Python side hands the templates plain
strings and numbers, never markup, so untrusted text (model output, prompts, a user's
spec) can only ever reach the page as text.
"""

from __future__ import annotations

import base64
import importlib.resources
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2

from ctxprobe.analysis.grid import Profile
from ctxprobe.report.format import fmt_interval, fmt_score
from ctxprobe.core.outcome import Outcome

# ColorBrewer RdYlGn (the map matplotlib's "RdYlGn" is built from), so table cells and
# PNG heatmaps mean the same accuracy by the same colour.
_RDYLGN = ((165, 0, 38), (215, 48, 39), (244, 109, 67), (253, 174, 97), (254, 224, 139), (255, 255, 191),
           (217, 239, 139), (166, 217, 106), (102, 189, 99), (26, 152, 80), (0, 104, 55))

#: Outcomes with a colour of their own in badges (others are neutral grey).
OUTCOME_CLASS: dict[str, str] = {
    Outcome.CORRECT: "ok", Outcome.DISTRACTOR: "bad", Outcome.STALE: "bad", Outcome.WRONG: "bad", Outcome.PARTIAL: "warn",
    Outcome.NOT_FOUND: "bad", Outcome.REFUSAL: "warn", Outcome.EMPTY: "warn", Outcome.PARSE_ERROR: "warn",
    Outcome.OUTPUT_TRUNCATED: "warn", Outcome.INPUT_TRUNCATED: "harness", Outcome.ERROR: "harness"}


def package_template(name: str) -> str | None:
    """A template that lives beside the code using it, named ``"package:file"`` (a family's
    own section: ``"ctxprobe.families.ruler:report.html.j2"``, a plugin's package alike); it
    may import the report's macros (``{% import "macros.html.j2" as m %}``). None for a
    plain name (the report's own templates)."""
    package, sep, file = name.partition(":")
    if not sep:
        return None
    try:
        return importlib.resources.files(package).joinpath(file).read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError):
        return None


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The templates' environment: autoescape everywhere (the templates end in ``.j2``, so
    extension-based selection would switch it off), undefined names are errors."""
    loader = jinja2.ChoiceLoader([jinja2.PackageLoader("ctxprobe.report", "templates"),
                                  jinja2.FunctionLoader(package_template)])
    return jinja2.Environment(loader=loader, autoescape=True,
                              undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                              keep_trailing_newline=True)


def render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)


@dataclass(frozen=True)
class Cell:
    """One table cell: plain text, optionally classed, styled, titled or bold in a colour."""

    text: str
    cls: str = ""
    style: str = ""
    title: str | None = None
    bold: str = ""  # a CSS colour: the text is bold in it


@dataclass(frozen=True)
class Table:
    headers: list[str]
    rows: Sequence[Sequence[str | Cell]]  # a str is a plain cell (read-only: rows of Cells fit too)
    cls: str = ""
    caption: str = ""


@dataclass(frozen=True)
class ReportSection:
    """A section a plugin adds to the HTML page (registry group ``report_sections``): a
    title, a line of text under it and tables; all plain text, escaped on the page."""

    title: str
    tables: Sequence[Table] = ()
    text: str = ""
    figures: Sequence[Figure] = ()  # PNGs with captions (built-in sections; a plugin may add them too)


@dataclass(frozen=True)
class PageSection:
    """A section of the page as rendered: its entries in the table of contents (anchor,
    title) and its markup (from a template, values escaped). ctxprobe's own sections and a
    family's (its report hooks') return one; a plugin returns a :class:`ReportSection`."""

    toc: tuple[tuple[str, str], ...]
    html: str


def page_section(template: str, toc: Sequence[tuple[str, str]] = (), **context: Any) -> PageSection:
    """``template`` rendered with ``context`` as a page section."""
    return PageSection(tuple(toc), render(template, **context))


@dataclass(frozen=True)
class Image:
    data: str  # base64 PNG
    alt: str


@dataclass(frozen=True)
class Figure:
    image: Image | None  # None: not drawn (a plain install has no matplotlib; the page says so)
    caption: str


def accuracy_colours(mean: float | None) -> tuple[str, str]:
    """(background, foreground) CSS colours for an accuracy on the fixed 0 red → 1 green scale."""
    if mean is None:
        return "#d9d9d9", "#333"
    x = min(max(mean, 0.0), 1.0) * (len(_RDYLGN) - 1)
    i = min(int(x), len(_RDYLGN) - 2)
    t = x - i
    r, g, b = (round(a + (c - a) * t) for a, c in zip(_RDYLGN[i], _RDYLGN[i + 1]))
    # same rule as the PNG heatmap: white text on the saturated ends
    fg = "#fff" if mean < 0.2 or mean > 0.85 else "#111"
    return f"rgb({r},{g},{b})", fg


def score_cell(mean: float | None, lo: float | None = None, hi: float | None = None, n: int | str | None = None,
               extra: str = "", ci: str = "Wilson 95% CI") -> Cell:
    """A cell coloured by accuracy, with the interval (``ci`` names it) and n as a tooltip;
    ``extra`` is plain text."""
    bg, fg = accuracy_colours(mean)
    tip = []
    if mean is not None and lo is not None and hi is not None:
        tip.append(f"{ci} {fmt_interval(lo, hi)}")
    if n is not None:
        tip.append(f"n={n}")
    return Cell(fmt_score(mean) + extra, cls="acc", style=f"background:{bg};color:{fg}", title=", ".join(tip))


def ci_name(profile: Profile) -> str:
    """What a profile's accuracy intervals are: Wilson, or clustered by case when its cases
    were sent k times (:mod:`ctxprobe.analysis.sampled`)."""
    return "95% CI clustered by case" if profile.sampled else "Wilson 95% CI"


def td(value: object, cls: str = "") -> Cell:
    return Cell("" if value is None else str(value), cls=cls)


def image(path: Path, alt: str) -> Image:
    """A PNG inlined as a data: URI (the report must open with no network and no side files)."""
    return Image(base64.b64encode(path.read_bytes()).decode("ascii"), alt)


def figure(path: Path | None, alt: str, caption: str) -> Figure:
    return Figure(image(path, alt) if path is not None else None, caption)


def plotted(draw: Callable[[], Path]) -> Path | None:
    """``draw()``'s PNG, or None when matplotlib is not installed: the page is complete
    without its plots (tables and verdicts carry every number) and names the extra."""
    from ctxprobe.report.plots import can_plot

    return draw() if can_plot() else None
