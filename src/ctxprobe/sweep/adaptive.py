"""The adaptive sweep: spend model calls only where they change the effective length.

A fixed grid spends the same 100 cases on a length the model aces, one it fails outright
and the one where it crosses the bar; only the last needs them. The adaptive sweep:

1. **Coarse pass**: every length of the spec at three depths (first, middle, last of the
   spec's depths) with ``coarse_reps`` repetitions.
2. **Refine near the bend**: walk the lengths upwards as the effective-length rule does.
   Undecided lengths met by the walk -- up to the one where the point estimate stops it --
   get more repetitions, at every coarse depth alike, so the pooled mean stays a plain
   average over depths.
3. **Bisect** (optional, ``bisect`` levels): once decided, the midpoint between the
   effective length and the first failing length becomes a new length, located the same way.
4. Stop when every family's decision is confident, the token budget is spent, or every
   undecided length has reached ``max_reps``.

**Error control.** A length is decided by an always-valid test, so looking after every
round costs nothing: for "passes" (accuracy ≥ bar) the mixture likelihood ratio

    M⁺ = ∫_bar^1 (p/bar)^S ((1-p)/(1-bar))^F dp / (1 - bar)

(S successes, F failures; a uniform mixture over the rates that clear the bar) is a
nonnegative supermartingale whenever the true rate is below the bar, so by Ville's
inequality P(M⁺ ever reaches K/α) ≤ α/K; "fails" uses the mirror mixture over [0, bar).
With K = every length that can be tested (the grid plus bisections), a union bound makes
P(any length decided wrongly, at any round) ≤ α = 1 − confidence, so a *confident*
effective length is wrong with probability ≤ α at any true accuracies, right at the bar
included (there the run ends NOT confident rather than guessing). The guarantee is for an
absolute bar; a relative rule's bar is itself estimated from the data. Partial scores in [0, 1]
keep the supermartingale property (the factor is convex in the score). Cases are counted
in whole repetitions -- one case at every coarse depth -- so the pooled rate is the depth
average the effective length is defined on.

Every added case is an ordinary seeded case (its case id is its cell and repetition) stored
in the spec's run, so an interrupted adaptive sweep resumes: the same stored results lead
to the same plan, and cases already answered are not sent again.

Only three depths are used: a model whose only weakness is at a depth in between (e.g. a
dip at 25%) can be missed; run the full grid when depth is the question.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Protocol

from rich.console import Console

from ctxprobe.analysis.bootstrap import ThresholdRule, first_scored, walk
from ctxprobe.analysis.grid import clears, model_score
from ctxprobe.core.rows import ResultRow
from ctxprobe.analysis.sequential import cases_needed, decide, log_evidence_fail, log_evidence_pass
from ctxprobe.errors import CtxprobeError
from ctxprobe.plan.grid import PlannedCase
from ctxprobe.spec import Spec
from ctxprobe.store import Store
from ctxprobe.sweep.run import run_id_for, run_sweep
from ctxprobe.core.case import Cell

__all__ = ["AdaptivePlan", "AdaptiveResult", "FamilyDecision", "LengthState", "adaptive_sweep", "cases_needed", "coarse_depths",
           "Settings", "Source", "default_budget", "length_state", "run_adaptive"]

#: Default budget: what a full grid of 5 depths × 20 repetitions at the spec's lengths costs,
#: whatever ``reps`` the spec asks of a fixed grid (the sequential rule needs ~40 cases at a
#: length a perfect model clears with 5 lengths at 95%, and never decides at the bar).
BUDGET_CASES_PER_LENGTH = 100


@dataclass(frozen=True)
class LengthState:
    """One length of one family after a round (pooled over the coarse depths, whole repetitions)."""

    length: int
    reps: int  # repetitions per depth planned so far
    n: int  # scored cases in complete repetitions
    mean: float | None
    log_pass: float  # log evidence that accuracy >= bar (decides at log(K/alpha))
    log_fail: float  # log evidence that accuracy < bar
    state: str  # "pass" | "fail" | "open"


@dataclass(frozen=True)
class FamilyDecision:
    family: str
    threshold: float | None
    decided: bool
    effective_length: int | None  # on every measured length, bisected ones included
    grid_effective_length: int | None  # on the spec's lengths only: comparable with a fixed grid
    lengths: list[LengthState]


@dataclass(frozen=True)
class AdaptiveResult:
    run_id: str
    store_path: Path
    decided: bool
    stop_reason: str  # "confident" | "budget" | "max_reps" | "max_rounds"
    rounds: int
    cases: int  # cases measured (harness failures included: they were sent)
    tokens_spent: int  # prompt tokens of those cases, as built
    token_budget: int
    confidence: float
    depths: list[float]
    families: list[FamilyDecision] = field(default_factory=list)
    lengths_tested: int = 0  # K of the correction across lengths

    def lines(self) -> list[str]:
        from ctxprobe.report.format import fmt_tokens

        def eff(v: int | None) -> str:
            return fmt_tokens(v) if v is not None else "none"

        verdict = "confident" if self.decided else "NOT confident"
        out = [f"adaptive run {self.run_id}: {verdict} ({self.stop_reason}) after {self.rounds} rounds, "
               f"{self.cases} cases, {self.tokens_spent:,} of {self.token_budget:,} budgeted prompt tokens"]
        for f in self.families:
            states = ", ".join(f"{fmt_tokens(s.length)}:{s.state}" for s in f.lengths)
            what = "effective length" if f.decided else "observed effective length (undecided)"
            out.append(f"  {f.family}: {what} {eff(f.effective_length)} "
                       f"(always-valid test, P(confident and wrong) <= {1 - self.confidence:.0%} over "
                       f"{self.lengths_tested} lengths; {states})")
        return out


def coarse_depths(depths: list[float], k: int = 3) -> list[float]:
    """``k`` depths spread over the spec's: first, last and evenly between."""
    ordered = sorted(depths)
    if len(ordered) <= k:
        return ordered
    if k == 1:
        return [ordered[len(ordered) // 2]]
    return sorted({ordered[round(i * (len(ordered) - 1) / (k - 1))] for i in range(k)})


def length_state(successes: float, n: int, reps: int, length: int, threshold: float | None,
                 level: float) -> LengthState:
    """Classify one length by the always-valid test at ``level`` (alpha / K)."""
    mean = successes / n if n else None
    if threshold is None:
        return LengthState(length, reps, n, mean, -1e300, 1e300, "fail" if n else "open")
    state = decide(successes, n, threshold, level) if n else "open"
    return LengthState(length, reps, n, mean, _finite(log_evidence_pass(successes, n, threshold)),
                       _finite(log_evidence_fail(successes, n, threshold)), state)


def _finite(x: float) -> float:
    """Stored as JSON in the run's meta: no infinities."""
    return max(-1e300, min(1e300, x))


class AdaptivePlan:
    """Repetitions per (family, length) at the coarse depths: the whole adaptive state."""

    def __init__(self, families: list[str], lengths: list[int], depths: list[float], coarse_reps: int) -> None:
        self.depths = depths
        self.grid_lengths = list(lengths)
        self.reps: dict[str, dict[int, int]] = {f: dict.fromkeys(lengths, coarse_reps) for f in families}
        self.bisections: dict[str, int] = dict.fromkeys(families, 0)

    def cases(self) -> list[PlannedCase]:
        """Every case of the plan in sweep order (lengths ascending, depths end to start)."""
        out: list[PlannedCase] = []
        for family, reps in self.reps.items():
            for length in sorted(reps):
                for rep in range(reps[length]):
                    out.extend(PlannedCase(Cell(family, length, d), rep) for d in sorted(self.depths, reverse=True))
        return out

    def contains(self, row: ResultRow) -> bool:
        reps = self.reps.get(row.family, {})
        return row.length in reps and row.rep < reps[row.length] and row.depth in self.depths


def _complete_reps(plan: AdaptivePlan, rows: list[ResultRow], family: str) -> dict[int, tuple[float, int]]:
    """(successes, n) per length over repetitions scored at every coarse depth.

    Only whole repetitions count: each is one draw of the depth-averaged accuracy, which is
    what the test's supermartingale needs (a partial repetition would tilt the depth mix)."""
    by_rep: dict[tuple[int, int], dict[float, float]] = {}
    for r in rows:
        if r.family == family and plan.contains(r) and (score := model_score(r)) is not None:
            by_rep.setdefault((r.length, r.rep), {})[r.depth] = float(score)
    out = {length: (0.0, 0) for length in plan.reps[family]}
    for (length, _rep), scores in by_rep.items():
        if len(scores) == len(plan.depths):
            s, n = out[length]
            out[length] = (s + math.fsum(scores.values()), n + len(scores))
    return out


def _evaluate(plan: AdaptivePlan, rows: list[ResultRow], rule: ThresholdRule, level: float,
              ) -> tuple[list[FamilyDecision], dict[str, list[int]]]:
    """Decisions per family and, per family, the undecided lengths the walk runs into."""
    decisions: list[FamilyDecision] = []
    refine: dict[str, list[int]] = {}
    for family, reps in plan.reps.items():
        lengths = sorted(reps)
        totals = _complete_reps(plan, rows, family)
        means = [totals[L][0] / totals[L][1] if totals[L][1] else None for L in lengths]
        threshold = rule.resolve(first_scored(means))
        states = [length_state(*totals[L], reps[L], L, threshold, level) for L in lengths]
        todo: list[int] = []
        decided, effective = True, None
        for st in states:
            if st.state == "pass" and decided:
                effective = st.length
                continue
            if st.state == "fail":
                break
            if st.state == "open":
                decided = False
                todo.append(st.length)
                if st.mean is None or threshold is None or not clears(st.mean, threshold):
                    break
        grid = [i for i, L in enumerate(lengths) if L in plan.grid_lengths]
        decisions.append(FamilyDecision(
            family, threshold, decided, effective if decided else walk(lengths, means, threshold),
            walk([lengths[i] for i in grid], [means[i] for i in grid], threshold), states))
        refine[family] = todo
    return decisions, refine


def _bisect(plan: AdaptivePlan, decision: FamilyDecision, levels: int, min_gap: int, coarse_reps: int) -> bool:
    """Add the midpoint between the effective length and the first failing one, if allowed."""
    if plan.bisections[decision.family] >= levels or decision.effective_length is None:
        return False
    longer = [s.length for s in decision.lengths if s.length > decision.effective_length]
    if not longer or longer[0] - decision.effective_length <= min_gap:
        return False
    mid = (decision.effective_length + longer[0]) // 2
    plan.reps[decision.family][mid] = coarse_reps
    plan.bisections[decision.family] += 1
    return True


def _grow(plan: AdaptivePlan, decisions: list[FamilyDecision], refine: dict[str, list[int]], level: float,
          max_reps: int) -> bool:
    """More repetitions for the undecided lengths: toward the estimated need, at most doubling."""
    grew = False
    per_rep = len(plan.depths)
    for d in decisions:
        states = {s.length: s for s in d.lengths}
        for length in refine.get(d.family, []):
            st = states[length]
            if st.reps >= max_reps:
                continue
            need = cases_needed(st.mean, d.threshold or 0.0, level, max_reps * per_rep)
            target = min(max_reps, 2 * st.reps, max(st.reps + 1, math.ceil(need / per_rep)))
            plan.reps[d.family][length] = target
            grew = True
    return grew


class Source(Protocol):
    """Where cases are answered: the real sweep into a store, or a simulation (benchmarks)."""

    def rows(self) -> list[ResultRow]: ...

    def done_ids(self) -> set[str]: ...

    def send(self, cases: list[PlannedCase]) -> None: ...


@dataclass(frozen=True)
class Settings:
    confidence: float = 0.95
    coarse_reps: int = 2
    max_reps: int = 100
    bisect: int = 0
    min_gap: int = 256
    max_rounds: int = 30

    @property
    def alpha(self) -> float:
        return 1.0 - self.confidence


def run_adaptive(plan: AdaptivePlan, source: Source, rule: ThresholdRule, settings: Settings, budget: int,
                 ) -> tuple[bool, str, int, list[FamilyDecision], int]:
    """The adaptive loop on any :class:`Source`: (decided, stop reason, rounds, decisions, K)."""
    k = len(plan.grid_lengths) + settings.bisect  # every length that can ever be decided
    level = settings.alpha / k
    rounds, stop = 0, "max_rounds"
    while rounds < settings.max_rounds:
        rounds += 1
        todo, trimmed = _affordable(plan, source, budget)
        if todo:
            source.send(todo)
        decisions, refine = _evaluate(plan, source.rows(), rule, level)
        if all(d.decided for d in decisions):
            if any([_bisect(plan, d, settings.bisect, settings.min_gap, settings.coarse_reps) for d in decisions]):
                continue
            stop = "confident"
            break
        if trimmed:
            stop = "budget"
            break
        if not _grow(plan, decisions, refine, level, settings.max_reps):
            stop = "max_reps"
            break
    decisions, _ = _evaluate(plan, source.rows(), rule, level)
    return all(d.decided for d in decisions), stop, rounds, decisions, k


def default_budget(spec: Spec) -> int:
    """Prompt tokens of a 5-depth × 20-repetition grid at the spec's lengths (see BUDGET_CASES_PER_LENGTH)."""
    return BUDGET_CASES_PER_LENGTH * sum(spec.lengths) * len(spec.families)


class _StoreSource:
    def __init__(self, spec: Spec, store_path: Path, run_id: str, progress: bool, console: Console | None) -> None:
        self.spec, self.store_path, self.run_id = spec, store_path, run_id
        self.progress, self.console = progress, console

    def rows(self) -> list[ResultRow]:
        if not self.store_path.is_file():
            return []
        with Store(self.store_path) as store:
            return store.result_rows(self.run_id)

    def done_ids(self) -> set[str]:
        if not self.store_path.is_file():
            return set()
        with Store(self.store_path) as store:
            return store.done_case_ids(self.run_id)

    def send(self, cases: list[PlannedCase]) -> None:
        run_sweep(self.spec, self.store_path, progress=self.progress, console=self.console, planned=cases)


def adaptive_sweep(spec: Spec, store_path: str | Path = "ctxprobe.sqlite", *, confidence: float = 0.95,
                   token_budget: int | None = None, rule: ThresholdRule | None = None, coarse_reps: int = 2,
                   n_depths: int = 3, max_reps: int = 100, bisect: int = 0, min_gap: int = 256,
                   max_rounds: int = 30, progress: bool = False, console: Console | None = None,
                   source_factory: Callable[[str], Source] | None = None) -> AdaptiveResult:
    """Run (or resume) an adaptive sweep of ``spec`` into its usual run; see the module doc.

    ``token_budget`` caps the prompt tokens of all cases the adaptive sweep sends (default:
    :func:`default_budget`). ``rule`` defaults to the spec's absolute threshold.
    """
    if not 0.5 < confidence < 1.0:
        raise CtxprobeError(f"confidence must be between 0.5 and 1, got {confidence:g}")
    if spec.reasoning_budgets is not None:
        raise CtxprobeError("--adaptive does not take --reasoning-budgets: run the budgets as a plain sweep")
    if coarse_reps < 1 or max_reps < coarse_reps:
        raise CtxprobeError(f"need 1 <= coarse reps ({coarse_reps}) <= max reps ({max_reps})")
    rule = rule or ThresholdRule("absolute", spec.threshold)
    budget = token_budget if token_budget is not None else default_budget(spec)
    settings = Settings(confidence, coarse_reps, max_reps, bisect, min_gap, max_rounds)
    plan = AdaptivePlan(list(spec.families), list(spec.lengths), coarse_depths(spec.depths, n_depths), coarse_reps)
    run_id = run_id_for(spec)
    store_path = Path(store_path)
    source = source_factory(run_id) if source_factory else _StoreSource(spec, store_path, run_id, progress, console)
    decided, stop, rounds, decisions, k = run_adaptive(plan, source, rule, settings, budget)
    spent_rows = [r for r in source.rows() if plan.contains(r)]
    result = AdaptiveResult(
        run_id, store_path, decided, stop, rounds, len(spent_rows),
        sum(r.token_count for r in spent_rows), budget, confidence, plan.depths, decisions, k)
    _record(result, plan)
    return result


def _affordable(plan: AdaptivePlan, source: Source, budget: int) -> tuple[list[PlannedCase], bool]:
    """The plan's unsent cases that fit the budget, and whether any had to be left out.

    Each case is costed at its target length (an upper bound on its prompt tokens); the
    shortest go first because the walk needs short lengths decided before long ones.
    """
    done = source.done_ids()
    spent = sum(r.token_count for r in source.rows() if plan.contains(r))
    out: list[PlannedCase] = []
    for p in sorted((p for p in plan.cases() if p.case_id not in done), key=lambda p: p.cell.length):
        if spent + p.cell.length > budget:
            return out, True
        spent += p.cell.length
        out.append(p)
    return out, False


def _record(result: AdaptiveResult, plan: AdaptivePlan) -> None:
    """Note the adaptive plan and decision on the run, so a report can tell it apart."""
    if not result.store_path.is_file():
        return
    with Store(result.store_path) as store:
        if store.get_run(result.run_id) is None:
            return
        store.update_run(result.run_id, status="complete" if result.decided else "incomplete", meta={"adaptive": {
            "decided": result.decided, "stop_reason": result.stop_reason, "rounds": result.rounds,
            "tokens_spent": result.tokens_spent, "token_budget": result.token_budget,
            "confidence": result.confidence, "depths": plan.depths, "lengths_tested": result.lengths_tested,
            "rule": "always-valid mixture likelihood ratio per length at alpha/K",
            "reps": {f: {str(k): v for k, v in r.items()} for f, r in plan.reps.items()},
            "families": [asdict(d) for d in result.families],
        }})
