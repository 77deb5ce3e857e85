"""How the phone-book plots are drawn: the trend's degree, the panels and the x axis.

The x axis of a position plot is one of:

``entries`` (default: the post's own position measure, ``relative_position``)
    the needle's place in the book, % of its entries (0 = first entry);
``tokens``
    the needle's place in the prompt, in tokens (:mod:`ctxprobe.families.phonebook.analysis_axes`);
``window``
    the same as % of the model's window, when the run knows the window.

An axis the stored run cannot give (the window unknown, a sharded book) is omitted: the
plot falls back to % of entries and its axis label says which axis was omitted and why.
Either way the points and the trend are the same numbers; only where they sit changes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ctxprobe.families.phonebook.analysis import PhonebookAnalysis
from ctxprobe.errors import CtxprobeError

#: The trend's degree in the post's figures (its metric script fits degree 3: ``an.fits``).
TREND_DEGREE = 2
X_AXES = ("entries", "tokens", "window")
_LABELS = {"entries": "position in the phone book (% of entries, 0 = first)",
           "tokens": "position in the prompt (tokens, 0 = start)"}


@dataclass(frozen=True)
class PlotOptions:
    """``degree``: the trend through the bin means (None: the metric fit, degree 3);
    ``panels``: a position plot per book size and an M-sweep per N; ``x_axis``: one of
    :data:`X_AXES`."""

    degree: int | None = TREND_DEGREE
    panels: bool = False
    x_axis: str = "entries"

    @classmethod
    def from_flags(cls, trend_degree: int | None = None, all_panels: bool | None = None,
                   x_axis: str | None = None) -> PlotOptions:
        """The options of the command-line flags (None: the default), each checked."""
        if trend_degree is not None and trend_degree < 0:
            raise CtxprobeError(f"--trend-degree must be 0 (the metric fit) or more, got {trend_degree}")
        if x_axis is not None and x_axis not in X_AXES:
            raise CtxprobeError(f"--x-axis must be one of {', '.join(X_AXES)}, got {x_axis!r}")
        degree = TREND_DEGREE if trend_degree is None else (None if trend_degree == 0 else trend_degree)
        return cls(degree, bool(all_panels), x_axis or "entries")

    @classmethod
    def from_mapping(cls, options: Mapping[str, Any] | None) -> PlotOptions:
        """From ``report``'s family options (``trend_degree``, ``all_panels``, ``x_axis``)."""
        options = dict(options or {})
        unknown = sorted(set(options) - {"trend_degree", "all_panels", "x_axis"})
        if unknown:
            raise CtxprobeError(f"the phone-book report has no option {', '.join(unknown)}")
        return cls.from_flags(options.get("trend_degree"), options.get("all_panels"), options.get("x_axis"))


def trend_name(degree: int | None, fitted: int | None = None) -> str:
    """The trend's name: ``trend (degree D)`` or ``metric fit (degree 3)``; ``fitted``: the
    degree a fit got (fewer measured bins than the degree asks lower it)."""
    if degree is None:
        return f"metric fit (degree {3 if fitted is None else fitted})"
    return f"trend (degree {degree if fitted is None else fitted})"


@dataclass(frozen=True)
class XAxis:
    """The x axis one plot draws: ``kind`` (what is drawn), its ``label``, and
    ``omitted``: why the axis asked for is not drawn (None: it is)."""

    kind: str
    label: str
    omitted: str | None = None
    window: int | None = None

    def xs(self, an: PhonebookAnalysis, length: int, needles: int, bins: Sequence[int],
           fracs: Sequence[float]) -> list[float]:
        """Where the bins (index, centre as a share of the book) sit on this axis."""
        if self.kind == "entries":
            return [100 * f for f in fracs]
        assert an.tokens is not None
        tokens = [an.tokens.offsets[(length, needles, b)] for b in bins]
        return tokens if self.kind == "tokens" else [100 * t / (self.window or 1) for t in tokens]

    def upper(self, an: PhonebookAnalysis, keys: Sequence[tuple[int, int]]) -> float:
        """The axis' right end: the book's end (100%), or the longest prompt drawn."""
        if self.kind == "entries":
            return 100.0
        assert an.tokens is not None
        longest = max((an.tokens.prompt[k] for k in keys if k in an.tokens.prompt), default=1.0)
        return longest if self.kind == "tokens" else 100 * longest / (self.window or 1)


def x_axis(an: PhonebookAnalysis, asked: str, keys: Sequence[tuple[int, int]]) -> XAxis:
    """The axis a plot of ``keys`` ((length, N) drawn) gets when ``asked`` for one."""
    if asked == "entries":
        return XAxis("entries", _LABELS["entries"])
    tokens = an.tokens
    reason = (tokens.reason or None) if tokens is not None else "the prompts' tokens were not read"
    if reason is None and tokens is not None and any(
            (L, n, b) not in tokens.offsets for L, n in keys for b in range(n)):
        reason = "a drawn bin has no stored prompt to place it in tokens"
    if reason is None and asked == "window" and an.window is None:
        reason = ("the model's window is unknown (no window recorded with the run, none in the catalog; "
                  "a sim takes ?ctx=N)")
    if reason is not None:
        return XAxis("entries", f"{_LABELS['entries']}\n({asked} axis omitted: {reason})", reason)
    estimate = "" if tokens is None or tokens.counted else (
        "\ntoken places estimated from characters: the run's tokenizer does not count here")
    if asked == "tokens":
        return XAxis("tokens", _LABELS["tokens"] + estimate)
    assert an.window is not None
    return XAxis("window", f"position in the prompt (% of the model's {an.window.tokens:,}-token window, "
                           f"{an.window.source}){estimate}", window=an.window.tokens)
