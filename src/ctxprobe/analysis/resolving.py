"""What a grid can show, and how many cases would settle what it did not: the effective-length
verdict's own rule, asked the other way round.

The verdict (:mod:`ctxprobe.analysis.efflength`) calls a length *reliable* when the one-sided
Clopper–Pearson lower bound of its pooled accuracy, at level ``(1 − confidence) / 2``,
clears the bar (:func:`ctxprobe.analysis.grid.clears`), and says it *fails* when the
upper bound at ``(1 − confidence) / (2K)`` (K lengths) is below the bar. The two functions
:func:`shown_reliable` and :func:`shown_failing` are that rule, and the verdict calls them;
everything else here searches them:

* :func:`best_shown` — the highest accuracy ``n`` all-correct cases can show (what a grid
  of ``n`` cases a length can show at best: below the bar, no length can be shown reliable);
* :func:`cases_to_show` / :func:`cases_to_fail` — the fewest cases at an observed rate
  whose bounds would settle the length one way;
* :func:`settle` — for one length left open by its data, how many cases would settle it at
  the rate observed, and which way; :func:`reps_clause` says it of several in one clause.

With the default bar 0.856 at 95%, all-correct cases show it from 24 on: 0.025^(1/24) =
0.8575 ≥ 0.856 > 0.025^(1/23) = 0.8518.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ctxprobe.analysis.binomial import cp_lower, cp_upper
from ctxprobe.analysis.grid import clears
from ctxprobe.spec import Spec
from ctxprobe.spec.units import fmt_length

__all__ = ["MAX_CASES", "Settle", "best_shown", "cases_to_fail", "cases_to_show", "grid_power", "grid_power_lines",
           "lower_level", "max_misses", "reps_clause", "settle", "shown_failing", "shown_reliable", "upper_level"]

#: The search stops here: a rate this close to the bar is, in practice, never settled.
MAX_CASES = 1_000_000


def lower_level(confidence: float) -> float:
    """The one-sided level of the lower bound that "reliable" rests on: (1 − confidence) / 2."""
    return (1.0 - confidence) / 2


def upper_level(confidence: float, lengths: int) -> float:
    """The one-sided level of the upper bound that "fails" rests on: (1 − confidence) / (2K)."""
    return (1.0 - confidence) / (2 * max(1, lengths))


def shown_reliable(successes: float, n: float, threshold: float, confidence: float) -> bool:
    """The verdict's "reliable" rule for one length: its exact lower bound clears the bar."""
    return clears(cp_lower(successes, n, lower_level(confidence)), threshold)


def shown_failing(successes: float, n: float, threshold: float, confidence: float, lengths: int) -> bool:
    """The verdict's "fails" rule for one length of ``lengths``: its exact upper bound is below the bar."""
    return not clears(cp_upper(successes, n, upper_level(confidence, lengths)), threshold)


def best_shown(n: float, confidence: float) -> float:
    """The highest accuracy ``n`` cases can be shown to clear (all of them correct)."""
    return cp_lower(n, n, lower_level(confidence))


def max_misses(n: int, threshold: float, confidence: float) -> int | None:
    """The most wrong cases of ``n`` with which a length is still shown reliable; None: not even with none."""
    best: int | None = None
    for misses in range(n + 1):
        if not shown_reliable(n - misses, n, threshold, confidence):
            break
        best = misses
    return best


def _smallest(ok: Callable[[int], bool], start: int = 1) -> int | None:
    """The smallest n ≥ ``start`` with ``ok(n)``, for a predicate that stays true once true
    (the bounds tighten as n grows at a fixed rate); None past :data:`MAX_CASES`."""
    lo, hi = start, start
    while not ok(hi):
        if hi >= MAX_CASES:
            return None
        lo, hi = hi + 1, min(MAX_CASES, hi * 2)
    while lo < hi:  # ok(hi) holds; find the first
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid + 1
    return hi


def cases_to_show(threshold: float, confidence: float, rate: float = 1.0) -> int | None:
    """The fewest cases at accuracy ``rate`` that the rule shows reliable (``rate`` × n
    successes); None when ``rate`` is not above the bar (no number can) or past :data:`MAX_CASES`."""
    if not rate > threshold and not (rate == 1.0 and clears(rate, threshold)):
        return None
    return _smallest(lambda n: shown_reliable(rate * n, n, threshold, confidence))


def cases_to_fail(threshold: float, confidence: float, lengths: int, rate: float = 0.0) -> int | None:
    """The fewest cases at accuracy ``rate`` that the rule shows failing the bar; None when
    ``rate`` clears the bar (no number can) or past :data:`MAX_CASES`."""
    if clears(rate, threshold):
        return None
    return _smallest(lambda n: shown_failing(rate * n, n, threshold, confidence, lengths))


@dataclass(frozen=True)
class Settle:
    """How one open length would be settled at the accuracy it showed.

    ``side``: ``"reliable"`` (its rate is above the bar: enough such cases show it) or
    ``"fails"`` (below: enough show it failing); ``cases``: how many cases in all (None: no
    practical number, the rate sits on the bar); ``reps``: the repetitions that makes at
    ``per_rep`` cases a repetition (its depths)."""

    length: int
    n: int
    successes: float
    side: str
    cases: int | None
    per_rep: int
    threshold: float
    confidence: float
    unit: str = "tokens"

    @property
    def rate(self) -> float:
        return self.successes / self.n if self.n else 0.0

    @property
    def reps(self) -> int | None:
        return None if self.cases is None else math.ceil(self.cases / max(1, self.per_rep))

    def observed(self) -> str:
        """``8 of 8 correct`` (``score 6.5 of 8`` for partial scores), with the rate when not all or none."""
        whole = math.isclose(self.successes, round(self.successes), abs_tol=1e-9)
        text = f"{round(self.successes)} of {self.n} correct" if whole else f"score {self.successes:.3g} of {self.n}"
        return text if self.successes in (0, self.n) else f"{text} ({self.rate:.2f})"

    def line(self) -> str:
        """The sentence every "not shown" verdict carries: what would settle this length."""
        pct = f"{self.confidence * 100:g}%"
        where = f"{fmt_length(self.length, self.unit)}: {self.observed()}"
        if self.cases is None:
            if clears(self.rate, self.threshold) and not self.rate > self.threshold:
                return f"{where} sits on the bar {self.threshold:g}: no number of cases at this rate settles it"
            return f"{where}: more than {MAX_CASES:,} cases at this rate would be needed to settle it"
        grid = (self.reps or 0) * max(1, self.per_rep)
        more = f", {grid / self.n:.3g}× the cases" if self.n else ""
        how = f"`--reps {self.reps}` here{more}"
        if self.side == "reliable":
            return (f"{where} cannot show an accuracy ≥ {self.threshold:g} with {pct} confidence: "
                    f"at this rate that takes {self._at_rate()} ({how})")
        return (f"{where} does not yet show it fails the bar {self.threshold:g} with {pct} confidence: "
                f"at this rate that takes {self._at_rate()} ({how})")

    def _at_rate(self) -> str:
        if self.successes == self.n:
            return f"{self.cases:,} of {self.cases:,}"
        return f"{self.cases:,} cases"

    def to_dict(self) -> dict[str, object]:
        return {"length": self.length, "n": self.n, "successes": self.successes, "rate": self.rate,
                "settled_as": self.side, "cases": self.cases, "reps": self.reps, "cases_per_rep": self.per_rep,
                "line": self.line()}


def settle(length: int, successes: float, n: int, *, threshold: float, confidence: float, lengths: int,
           per_rep: int, deff: float = 1.0, unit: str = "tokens") -> Settle | None:
    """For a length neither shown reliable nor shown failing: the cases that would settle it
    at its observed rate (a sampled family's ``deff``: cases count 1/deff trials each);
    None when its data already settle it or nothing was scored."""
    if n <= 0:
        return None
    s_eff, n_eff = successes / deff, n / deff
    if shown_reliable(s_eff, n_eff, threshold, confidence) or shown_failing(s_eff, n_eff, threshold, confidence, lengths):
        return None
    rate = successes / n
    if rate > threshold or (rate == 1.0 and clears(rate, threshold)):
        side, need = "reliable", cases_to_show(threshold, confidence, rate)
    elif clears(rate, threshold):  # on the bar: no number of cases at this rate settles it
        side, need = "reliable", None
    else:
        side, need = "fails", cases_to_fail(threshold, confidence, lengths, rate)
    cases = None if need is None else math.ceil(need * deff)
    return Settle(length, n, successes, side, cases, per_rep, threshold, confidence, unit)


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def reps_clause(settles: Iterable[tuple[str, Settle]]) -> str:
    """What would settle several open lengths, each given as (its name, its :class:`Settle`),
    in one clause, fewest repetitions first (so a length near the bar needing thousands does
    not hide one that needs a few): "`--reps 5` would settle 1K and 2K at the rates
    observed", "`--reps 53` would settle 2K, `--reps 3995` 1K, at the rates observed"; a
    length no practical number settles is named as such; "" for none."""
    by_reps: dict[int, list[str]] = {}
    never: list[str] = []
    count = 0
    for name, s in settles:
        count += 1
        if s.reps is None:
            never.append(name)
        else:
            by_reps.setdefault(s.reps, []).append(name)
    parts = [f"`--reps {r}`{' would settle' if i == 0 else ''} {_and(names)}"
             for i, (r, names) in enumerate(sorted(by_reps.items()))]
    rates = "the rate observed" if count == 1 else "the rates observed"
    text = ", ".join(parts) + ("," if len(parts) > 1 else "") + f" at {rates}" if parts else ""
    if never:
        text += ("; " if text else "") + f"no practical number of cases settles {_and(never)} at {rates}"
    return text


# -- what a planned grid can show ----------------------------------------------------------------


def grid_power_lines(labels: dict[str, tuple[int, float | None]], *, depths: int, confidence: float = 0.95) -> list[str]:
    """What a grid can show, per family before anything is sent: ``labels`` maps a family
    label to (cases a length, its bar; None: a relative bar, known only after the run).
    Labels with the same cases and bar share a line."""
    pct = f"{confidence * 100:g}%"
    groups: dict[tuple[int, float | None], list[str]] = {}
    for label, key in labels.items():
        groups.setdefault(key, []).append(label)
    out: list[str] = []
    for (n, bar), names in groups.items():
        who = ", ".join(names)
        best = best_shown(n, confidence)
        head = f"can show ({pct}): {who}: {n:,} cases a length; all correct shows accuracy ≥ {best:.3f}"
        if bar is None:
            out.append(head + " (a relative bar: read against the shortest length's score)")
            continue
        misses = max_misses(n, bar, confidence)
        if misses is None:
            need = cases_to_show(bar, confidence)
            more = (f"; {need} cases a length would (`--reps {math.ceil(need / max(1, depths))}`)"
                    if need is not None else "")
            out.append(head + f": this grid cannot show the bar {bar:g} at any length{more}")
        else:
            allowed = "with no miss" if misses == 0 else f"with at most {misses} miss{'es' if misses > 1 else ''}"
            out.append(head + f"; a length is shown to clear the bar {bar:g} {allowed}")
    return out


def grid_power(spec: Spec, confidence: float = 0.95) -> list[str]:
    """:func:`grid_power_lines` of a spec: every family label (noise-floor twins aside) at
    its cases a length (depths × reps; each reasoning budget is a curve with as many) and
    its bar (``bars``, else ``threshold``). A family whose accuracy is not one score per
    case (``per_case_accuracy`` False: the phone book's recall per needle, read by its own
    report) is left out, and so is one too short to build at any length (``too_short``: it
    is sent at none, and ``run`` says so on its own line)."""
    from ctxprobe.core import registry
    from ctxprobe.core.baseline import is_baseline

    n = len(spec.depths) * spec.reps
    labels: dict[str, tuple[int, float | None]] = {}
    for label, params in spec.families.items():
        entry = registry.find("families", str((params or {}).get("family", label)))
        if is_baseline(label) or not spec.lengths_of(label) or (params or {}).get("unit") == "entries" \
                or (entry is not None and not entry.load().per_case_accuracy):
            continue
        bar = spec.bars.get(label, spec.bars.get(str((params or {}).get("family", label)), spec.threshold))
        labels[label] = (n, None if isinstance(bar, str) else float(bar))
    return grid_power_lines(labels, depths=len(spec.depths), confidence=confidence)
