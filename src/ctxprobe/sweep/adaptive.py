"""The adaptive sweep: spend model calls only where they can change the effective length.

A fixed grid spends the same 100 cases on a length the model aces, one it fails outright
and the one where it crosses the bar; only the last needs them. The adaptive sweep walks
the lengths as the effective-length rule does and sends cases only where the walk's answer
is still open:

1. **The frontier**: the shortest length not yet confidently decided. Lengths below it
   passed (nothing more is sent to them); the first length that confidently *fails* ends
   the walk, and nothing is ever sent above it -- no answer there can change the
   effective length. The first round is ``coarse_reps`` repetitions at the shortest length.
2. **Grow the frontier**: more repetitions (one case at every coarse depth each, so the
   pooled mean stays a plain average over depths), toward the projected need of the test
   below and at most ``growth`` times as many per round. When it passes, the next length
   becomes the frontier.
3. **Bisect** (optional, ``bisect`` levels): once decided, the midpoint between the
   effective length and the first failing length becomes a new length, located the same way.
4. Stop when every family's decision is confident, the token budget is spent, or the
   frontier has reached ``max_reps``.

**Error control.** A length is decided by an always-valid test
(:mod:`ctxprobe.analysis.sequential`): its evidence for "passes" reaches 1/level with
probability ≤ level when the length truly fails, however often it is looked at, and the
mirror for "fails". The walk's answer is wrong only if the first truly failing length is
passed or a truly passing length below it is failed, so "passes" is tested at α/2 (α/2
over the 1 + bisections lengths that can be the first failing one) and "fails" at α/(2K)
over the K lengths that can be tested (the grid plus bisections): P(confident and wrong)
≤ α at any true accuracies, right at the bar included (there the run ends NOT confident
rather than guessing). The guarantee is for an absolute bar; a relative rule's bar is
itself estimated from the data.

Every added case is an ordinary seeded case (its case id is its cell and repetition) stored
in the spec's run, so an interrupted adaptive sweep resumes: the same stored results lead
to the same plan, and cases already answered are not sent again.

Only three depths are used: a model whose only weakness is at a depth in between (e.g. a
dip at 25%) can be missed; run the full grid when depth is the question.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol

from rich.console import Console

from ctxprobe.analysis.bootstrap import ThresholdRule, first_scored, walk
from ctxprobe.analysis.grid import model_score
from ctxprobe.analysis.sampled import case_means
from ctxprobe.analysis.sequential import levels, next_reps
from ctxprobe.core.case import Cell
from ctxprobe.core.rows import ResultRow
from ctxprobe.errors import CtxprobeError
from ctxprobe.plan.grid import PlannedCase
from ctxprobe.spec import Spec
from ctxprobe.store import RunMeta, Store
from ctxprobe.sweep.adaptive_types import (AdaptiveResult, FamilyDecision, LengthState, coarse_depths,
                                            length_state)
from ctxprobe.sweep.run import run_id_for, run_sweep

__all__ = ["AdaptivePlan", "AdaptiveResult", "FamilyDecision", "LengthState", "adaptive_sweep", "check_adaptive",
           "coarse_depths",
           "Settings", "Source", "default_budget", "length_state", "run_adaptive"]

#: Default budget: what a full grid of 5 depths × 20 repetitions at the spec's lengths costs,
#: whatever ``reps`` the spec asks of a fixed grid (the sequential rule needs ~27 cases at a
#: length a perfect model clears, ~110 at one where it scores 0.95, and never decides at the bar).
BUDGET_CASES_PER_LENGTH = 100


class AdaptivePlan:
    """Repetitions per (family, length) at the coarse depths: the whole adaptive state.

    Only a family's shortest length starts with ``coarse_reps``; the walk opens the others.
    ``too_short`` (:attr:`ctxprobe.spec.Spec.too_short`: the tokens a family needs) leaves
    out the lengths a family cannot be built at: it walks from the shortest that holds it,
    and a family that fits no length is not walked (``run`` says so on its own line)."""

    def __init__(self, families: list[str], lengths: list[int], depths: list[float], coarse_reps: int,
                 too_short: Mapping[str, int] | None = None) -> None:
        self.depths = depths
        self.grid_lengths = list(lengths)
        need = dict(too_short or {})
        own = {f: [L for L in lengths if L >= need.get(f, 0)] for f in families}
        self.reps: dict[str, dict[int, int]] = {
            f: {L: coarse_reps if L == min(ls) else 0 for L in ls} for f, ls in own.items() if ls}
        self.bisections: dict[str, int] = dict.fromkeys(self.reps, 0)

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


def _rep_means(plan: AdaptivePlan, rows: list[ResultRow], family: str) -> dict[int, list[float]]:
    """Per length, the mean score of each repetition scored at every coarse depth (by rep).

    Only whole repetitions count: each is one draw of the depth-averaged accuracy, which is
    what the test's supermartingales need (a partial repetition would tilt the depth mix).
    A case sent k times (``samples=k``) counts once, at the mean of its samples: still a
    score in [0, 1] whose expectation is the case's accuracy, so the tests stay valid."""
    by_rep: dict[tuple[int, int], dict[float, float]] = {}
    for r in case_means(rows):
        if r.family == family and plan.contains(r) and (score := model_score(r)) is not None:
            by_rep.setdefault((r.length, r.rep), {})[r.depth] = float(score)
    out: dict[int, list[float]] = {length: [] for length in plan.reps[family]}
    for (length, _rep), scores in sorted(by_rep.items()):
        if len(scores) == len(plan.depths):
            out[length].append(math.fsum(scores.values()) / len(scores))
    return out


def _evaluate(plan: AdaptivePlan, rows: list[ResultRow], rule: ThresholdRule | Mapping[str, ThresholdRule],
              pass_level: float, fail_level: float,
              ) -> tuple[list[FamilyDecision], dict[str, list[float]], dict[str, int | None]]:
    """Decisions per family, each family's repetition means by length, and its frontier.

    The frontier is the shortest length that is not confidently decided, if the walk gets
    there: lengths below it passed, and nothing above a failed length matters."""
    decisions: list[FamilyDecision] = []
    frontier: dict[str, int | None] = {}
    reps_by: dict[str, list[float]] = {}
    for family, reps in plan.reps.items():
        lengths = sorted(reps)
        per_length = _rep_means(plan, rows, family)
        means = [math.fsum(per_length[L]) / len(per_length[L]) if per_length[L] else None for L in lengths]
        threshold = _rule_for(rule, family).resolve(first_scored(means))
        states = [length_state(per_length[L], len(plan.depths), reps[L], L, threshold, pass_level, fail_level)
                  for L in lengths]
        decided, effective, open_at = True, None, None
        for st in states:
            if st.state == "pass":
                effective = st.length
                continue
            if st.state != "fail":
                decided, open_at = False, st.length
            break
        grid = [s for s in states if s.length in plan.grid_lengths]
        grid_eff = None
        for s in grid:
            if s.state != "pass":
                break
            grid_eff = s.length
        decisions.append(FamilyDecision(
            family, threshold, decided, effective if decided else walk(lengths, means, threshold),
            grid_eff if decided else walk([s.length for s in grid], [s.mean for s in grid], threshold), states))
        frontier[family] = open_at
        if open_at is not None:
            reps_by[family] = per_length[open_at]
    return decisions, reps_by, frontier


def _rule_for(rule: ThresholdRule | Mapping[str, ThresholdRule], family: str) -> ThresholdRule:
    """A family's own rule (per-family bars), else the run's."""
    if isinstance(rule, ThresholdRule):
        return rule
    return rule.get(family) or rule.get("*") or ThresholdRule()


def _bisect(plan: AdaptivePlan, decision: FamilyDecision, max_levels: int, min_gap: int, coarse_reps: int) -> bool:
    """Add the midpoint between the effective length and the first failing one, if allowed."""
    if plan.bisections[decision.family] >= max_levels or decision.effective_length is None:
        return False
    longer = [s.length for s in decision.lengths if s.length > decision.effective_length]
    if not longer or longer[0] - decision.effective_length <= min_gap:
        return False
    mid = (decision.effective_length + longer[0]) // 2
    plan.reps[decision.family][mid] = coarse_reps
    plan.bisections[decision.family] += 1
    return True


def _grow(plan: AdaptivePlan, decisions: list[FamilyDecision], reps_by: dict[str, list[float]],
          frontier: dict[str, int | None], settings: Settings, pass_level: float, fail_level: float) -> bool:
    """More repetitions at each family's frontier (see :func:`ctxprobe.analysis.sequential.next_reps`)."""
    grew = False
    for d in decisions:
        length = frontier.get(d.family)
        if length is None:
            continue
        have = plan.reps[d.family][length]
        if have >= settings.max_reps:
            continue
        target = next_reps(reps_by.get(d.family, []), have, len(plan.depths), d.threshold or 0.0, pass_level,
                           fail_level, first=settings.coarse_reps, cap=settings.max_reps, growth=settings.growth)
        if target > have:
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
    coarse_reps: int = 1
    max_reps: int = 2000
    bisect: int = 0
    min_gap: int = 256
    max_rounds: int = 200
    growth: float = 1.5  # at most this many times the frontier's repetitions per round

    @property
    def alpha(self) -> float:
        return 1.0 - self.confidence


def run_adaptive(plan: AdaptivePlan, source: Source, rule: ThresholdRule | Mapping[str, ThresholdRule],
                 settings: Settings, budget: int,
                 ) -> tuple[bool, str, int, list[FamilyDecision], int]:
    """The adaptive loop on any :class:`Source`: (decided, stop reason, rounds, decisions, K)."""
    k = len(plan.grid_lengths) + settings.bisect  # every length that can ever be decided
    pass_level, fail_level = levels(settings.alpha, len(plan.grid_lengths), settings.bisect)
    rounds, stop = 0, "max_rounds"
    while rounds < settings.max_rounds:
        rounds += 1
        todo, trimmed = _affordable(plan, source, budget)
        if todo:
            source.send(todo)
        decisions, reps_by, frontier = _evaluate(plan, source.rows(), rule, pass_level, fail_level)
        if all(d.decided for d in decisions):
            if any([_bisect(plan, d, settings.bisect, settings.min_gap, settings.coarse_reps) for d in decisions]):
                continue
            stop = "confident"
            break
        if trimmed:
            stop = "budget"
            break
        if not _grow(plan, decisions, reps_by, frontier, settings, pass_level, fail_level):
            stop = "max_reps"
            break
    decisions, _, _ = _evaluate(plan, source.rows(), rule, pass_level, fail_level)
    return all(d.decided for d in decisions), stop, rounds, decisions, k


def check_adaptive(spec: Spec) -> None:
    """Refuse, in one line, a spec whose extra axes the walk cannot read: the budget axis
    splits a family into one curve per budget, and ``baseline``'s ``LABEL@no-context``
    twins are floors to pair with their family, not families to walk (they would get a
    walk, a budget share and a few cases at the first length, and no floor beyond it)."""
    if spec.reasoning_budgets is not None:
        raise CtxprobeError("--adaptive does not take --reasoning-budgets: run the budgets as a plain sweep")
    if spec.baseline is not None:
        raise CtxprobeError("--adaptive does not take --baseline: run the noise floor as a plain sweep "
                            "(same lengths and seed) beside the adaptive run")


def default_budget(spec: Spec) -> int:
    """Prompt tokens of a 5-depth × 20-repetition grid at the spec's lengths (see BUDGET_CASES_PER_LENGTH)."""
    return BUDGET_CASES_PER_LENGTH * sum(spec.lengths) * len(spec.families)


class _StoreSource:
    def __init__(self, spec: Spec, store_path: Path, run_id: str, progress: bool, console: Console | None) -> None:
        self.spec, self.store_path, self.run_id = spec, store_path, run_id
        self.progress, self.console = progress, console
        self.rounds = 0  # rounds sent: the tokenizer line is said in the first only

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
        run_sweep(self.spec, self.store_path, progress=self.progress, console=self.console, planned=cases,
                  announce=self.rounds == 0)
        self.rounds += 1


def adaptive_sweep(spec: Spec, store_path: str | Path = "ctxprobe.sqlite", *, confidence: float = 0.95,
                   token_budget: int | None = None, rule: ThresholdRule | None = None, coarse_reps: int = 1,
                   n_depths: int = 3, max_reps: int = 2000, bisect: int = 0, min_gap: int = 256,
                   max_rounds: int = 200, progress: bool = False, console: Console | None = None,
                   source_factory: Callable[[str], Source] | None = None) -> AdaptiveResult:
    """Run (or resume) an adaptive sweep of ``spec`` into its usual run; see the module doc.

    ``token_budget`` caps the prompt tokens of all cases the adaptive sweep sends (default:
    :func:`default_budget`). ``rule`` defaults to the spec's absolute threshold.
    """
    if not 0.5 < confidence < 1.0:
        raise CtxprobeError(f"confidence must be between 0.5 and 1, got {confidence:g}")
    check_adaptive(spec)
    if coarse_reps < 1 or max_reps < coarse_reps:
        raise CtxprobeError(f"need 1 <= coarse reps ({coarse_reps}) <= max reps ({max_reps})")
    rules: ThresholdRule | dict[str, ThresholdRule] = rule or ThresholdRule("absolute", spec.threshold)
    if rule is None and spec.bars:  # per-family bars: each family walked at its own
        rules = {"*": ThresholdRule("absolute", spec.threshold),
                 **{f: ThresholdRule.from_bar(b) for f, b in spec.bars.items()}}
    budget = token_budget if token_budget is not None else default_budget(spec)
    settings = Settings(confidence, coarse_reps, max_reps, bisect, min_gap, max_rounds)
    if source_factory is None:  # a family too short for the shortest lengths walks from one that holds it
        from ctxprobe.cases.fitting import fitted_spec

        spec = fitted_spec(spec)
    plan = AdaptivePlan(list(spec.families), list(spec.lengths), coarse_depths(spec.depths, n_depths), coarse_reps,
                        too_short=spec.too_short)
    run_id = run_id_for(spec)
    store_path = Path(store_path)
    source = source_factory(run_id) if source_factory else _StoreSource(spec, store_path, run_id, progress, console)
    decided, stop, rounds, decisions, k = run_adaptive(plan, source, rules, settings, budget)
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
        store.update_run(result.run_id, status="complete" if result.decided else "incomplete", meta=RunMeta(adaptive={
            "decided": result.decided, "stop_reason": result.stop_reason, "rounds": result.rounds,
            "tokens_spent": result.tokens_spent, "token_budget": result.token_budget,
            "confidence": result.confidence, "depths": plan.depths, "lengths_tested": result.lengths_tested,
            "rule": "always-valid mixture per length: passes at alpha/2, fails at alpha/(2K); the walk's frontier only",
            "reps": {f: {str(k): v for k, v in r.items()} for f, r in plan.reps.items()},
            "families": [asdict(d) for d in result.families],
        }))
