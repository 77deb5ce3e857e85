"""The adaptive sweep: spend model calls only where they change the effective length.

A fixed grid spends the same 100 cases on a length the model aces, one it fails outright
and the one where it crosses the bar; only the last needs them. The adaptive sweep:

1. **Coarse pass**: every length of the spec at three depths (first, middle, last of the
   spec's depths) with ``coarse_reps`` repetitions.
2. **Refine near the bend**: walk the lengths upwards as the effective-length rule does.
   A length is *decided* when its one-sided Wilson bound at ``confidence`` sits on one side
   of the bar (lower bound >= bar: passes; upper bound < bar: fails). Undecided lengths met
   by the walk -- up to the one where the point estimate stops it -- get more repetitions,
   at every coarse depth alike, so the pooled mean stays a plain average over depths.
   One-sided, because each length asks a directional question (above or below the bar?).
3. **Bisect** (optional, ``bisect`` levels): once decided, the midpoint between the
   effective length and the first failing length becomes a new length (a new Cell length;
   run_sweep builds any cell it is given), located the same way.
4. Stop when every family's decision is confident, the token budget is spent, or every
   undecided length has reached ``max_reps``.

Every added case is an ordinary seeded case (its case id is its cell and repetition) stored
in the spec's run, so an interrupted adaptive sweep resumes: the same stored results lead
to the same plan, and cases already answered are not sent again. Repeated looks at the
data make the confidence nominal, not exact (a sequential test would need a spending rule);
the benchmark measures how often the decision agrees with the full grid.

Only three depths are used: a model whose only weakness is at a depth in between (e.g. a
dip at 25%) can be missed; run the full grid when depth is the question.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from statistics import NormalDist

from rich.console import Console

from ctxprobe._version import __version__
from ctxprobe.analysis.bootstrap import ThresholdRule, first_scored, walk
from ctxprobe.analysis.grid import clears, is_harness_failure
from ctxprobe.analysis.rows import ResultRow
from ctxprobe.analysis.stats import wilson_interval
from ctxprobe.errors import CtxprobeError
from ctxprobe.plan import PlannedCase, summarize
from ctxprobe.spec import Spec
from ctxprobe.store import Store
from ctxprobe.sweep import run_id_for, run_sweep
from ctxprobe.tasks.case import Cell

_EPS = 1e-12


@dataclass(frozen=True)
class LengthState:
    """One length of one family after a round (pooled over the coarse depths)."""

    length: int
    reps: int  # repetitions per depth planned so far
    n: int  # scored cases
    mean: float | None
    lo: float  # one-sided lower bound at the confidence level
    hi: float  # one-sided upper bound
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

    def lines(self) -> list[str]:
        from ctxprobe.report.format import fmt_tokens

        def eff(v: int | None) -> str:
            return fmt_tokens(v) if v is not None else "none"

        out = [f"adaptive run {self.run_id}: {'confident' if self.decided else 'NOT confident'} "
               f"({self.stop_reason}) after {self.rounds} rounds, {self.cases} cases, "
               f"{self.tokens_spent:,} of {self.token_budget:,} budgeted prompt tokens"]
        for f in self.families:
            states = ", ".join(f"{fmt_tokens(s.length)}:{s.state}" for s in f.lengths)
            out.append(f"  {f.family}: effective length {eff(f.effective_length)} "
                       f"(at {self.confidence * 100:g}% one-sided per length; {states})")
        return out


def coarse_depths(depths: list[float], k: int = 3) -> list[float]:
    """``k`` depths spread over the spec's: first, last and evenly between."""
    ordered = sorted(depths)
    if len(ordered) <= k:
        return ordered
    if k == 1:
        return [ordered[len(ordered) // 2]]
    return sorted({ordered[round(i * (len(ordered) - 1) / (k - 1))] for i in range(k)})


def length_state(scores: list[float], reps: int, length: int, threshold: float | None, z: float) -> LengthState:
    """Classify one length: its one-sided bounds against the bar."""
    n = len(scores)
    mean = math.fsum(scores) / n if n else None
    lo, hi = wilson_interval(math.fsum(scores), n, z)
    if n == 0 or threshold is None:
        state = "open" if n == 0 else "fail"
    elif lo >= threshold - _EPS:
        state = "pass"
    elif hi < threshold - _EPS:
        state = "fail"
    else:
        state = "open"
    return LengthState(length, reps, n, mean, lo, hi, state)


def cases_needed(mean: float | None, threshold: float, z: float, cap: int) -> int:
    """Smallest n (<= cap) at which a mean like this one would be decided; cap if never."""
    if mean is None:
        return cap
    for n in range(1, cap + 1):
        lo, hi = wilson_interval(mean * n, n, z)
        if lo >= threshold - _EPS or hi < threshold - _EPS:
            return n
    return cap


class _Plan:
    """Repetitions per (family, length) at the coarse depths: the whole adaptive state."""

    def __init__(self, spec: Spec, depths: list[float], coarse_reps: int) -> None:
        self.depths = depths
        self.grid_lengths = list(spec.lengths)
        self.reps: dict[str, dict[int, int]] = {f: dict.fromkeys(spec.lengths, coarse_reps) for f in spec.families}
        self.bisections: dict[str, int] = dict.fromkeys(spec.families, 0)

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


def _evaluate(plan: _Plan, rows: list[ResultRow], rule: ThresholdRule, z: float,
              ) -> tuple[list[FamilyDecision], dict[str, list[int]]]:
    """Decisions per family and, per family, the undecided lengths the walk runs into."""
    decisions: list[FamilyDecision] = []
    refine: dict[str, list[int]] = {}
    for family, reps in plan.reps.items():
        lengths = sorted(reps)
        scores: dict[int, list[float]] = {length: [] for length in lengths}
        for r in rows:
            if r.family == family and plan.contains(r) and not is_harness_failure(r):
                scores[r.length].append(float(r.score))  # type: ignore[arg-type]
        means = [math.fsum(scores[L]) / len(scores[L]) if scores[L] else None for L in lengths]
        threshold = rule.resolve(first_scored(means))
        states = [length_state(scores[L], reps[L], L, threshold, z) for L in lengths]
        todo: list[int] = []
        decided, effective = True, None
        for s in states:
            if s.state == "pass" and decided:
                effective = s.length
                continue
            if s.state == "fail":
                break
            if s.state == "open":
                decided = False
                todo.append(s.length)
                if s.mean is None or threshold is None or not clears(s.mean, threshold):
                    break
        grid = [i for i, L in enumerate(lengths) if L in plan.grid_lengths]
        decisions.append(FamilyDecision(
            family, threshold, decided, effective if decided else walk(lengths, means, threshold),
            walk([lengths[i] for i in grid], [means[i] for i in grid], threshold), states))
        refine[family] = todo
    return decisions, refine


def _bisect(plan: _Plan, decision: FamilyDecision, levels: int, min_gap: int, coarse_reps: int) -> bool:
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


def adaptive_sweep(spec: Spec, store_path: str | Path = "ctxprobe.sqlite", *, confidence: float = 0.95,
                   token_budget: int | None = None, rule: ThresholdRule | None = None, coarse_reps: int = 2,
                   n_depths: int = 3, max_reps: int = 50, bisect: int = 0, min_gap: int = 256,
                   max_rounds: int = 30, progress: bool = False, console: Console | None = None) -> AdaptiveResult:
    """Run (or resume) an adaptive sweep of ``spec`` into its usual run; see the module doc.

    ``token_budget`` caps the prompt tokens of all cases the adaptive sweep sends (default:
    what the spec's full grid would cost, so adaptive never spends more than the fixed grid).
    ``rule`` defaults to the spec's absolute threshold.
    """
    if not 0.5 < confidence < 1.0:
        raise CtxprobeError(f"confidence must be between 0.5 and 1, got {confidence:g}")
    if coarse_reps < 1 or max_reps < coarse_reps:
        raise CtxprobeError(f"need 1 <= coarse reps ({coarse_reps}) <= max reps ({max_reps})")
    rule = rule or ThresholdRule("absolute", spec.threshold)
    budget = token_budget if token_budget is not None else summarize(spec).input_tokens
    z = NormalDist().inv_cdf(confidence)  # one-sided bound at this level
    plan = _Plan(spec, coarse_depths(spec.depths, n_depths), coarse_reps)
    run_id = run_id_for(spec)
    store_path = Path(store_path)
    rounds, stop = 0, "max_rounds"
    while rounds < max_rounds:
        rounds += 1
        todo, trimmed = _affordable(plan, run_id, store_path, budget)
        if todo:
            run_sweep(spec, store_path, progress=progress, console=console, planned=todo)
        decisions, refine = _evaluate(plan, _rows(run_id, store_path), rule, z)
        if all(d.decided for d in decisions):
            if any([_bisect(plan, d, bisect, min_gap, coarse_reps) for d in decisions]):
                continue
            stop = "confident"
            break
        if trimmed:
            stop = "budget"
            break
        if not _grow(plan, decisions, refine, z, max_reps):
            stop = "max_reps"
            break
    decisions, _ = _evaluate(plan, _rows(run_id, store_path), rule, z)
    spent_rows = [r for r in _rows(run_id, store_path) if plan.contains(r)]
    result = AdaptiveResult(
        run_id, store_path, all(d.decided for d in decisions), stop, rounds, len(spent_rows),
        sum(r.token_count for r in spent_rows), budget, confidence, plan.depths, decisions)
    _record(result, plan)
    return result


def _grow(plan: _Plan, decisions: list[FamilyDecision], refine: dict[str, list[int]], z: float,
          max_reps: int) -> bool:
    """More repetitions for the undecided lengths: toward the estimated need, at most doubling."""
    grew = False
    per_rep = len(plan.depths)
    for d in decisions:
        states = {s.length: s for s in d.lengths}
        for length in refine.get(d.family, []):
            s = states[length]
            if s.reps >= max_reps:
                continue
            need = cases_needed(s.mean, d.threshold or 0.0, z, max_reps * per_rep)
            target = min(max_reps, 2 * s.reps, max(s.reps + 1, math.ceil(need / per_rep)))
            plan.reps[d.family][length] = target
            grew = True
    return grew


def _rows(run_id: str, store_path: Path) -> list[ResultRow]:
    if not store_path.is_file():
        return []
    with Store(store_path) as store:
        return store.result_rows(run_id)


def _affordable(plan: _Plan, run_id: str, store_path: Path, budget: int) -> tuple[list[PlannedCase], bool]:
    """The plan's unsent cases that fit the budget, and whether any had to be left out.

    Each case is costed at its target length (an upper bound on its prompt tokens); the
    shortest go first because the walk needs short lengths decided before long ones.
    """
    done: set[str] = set()
    spent = 0
    if store_path.is_file():
        with Store(store_path) as store:
            done = store.done_case_ids(run_id)
            spent = sum(r.token_count for r in store.result_rows(run_id) if plan.contains(r))
    out: list[PlannedCase] = []
    for p in sorted((p for p in plan.cases() if p.case_id not in done), key=lambda p: p.cell.length):
        if spent + p.cell.length > budget:
            return out, True
        spent += p.cell.length
        out.append(p)
    return out, False


def _record(result: AdaptiveResult, plan: _Plan) -> None:
    """Note the adaptive plan and decision on the run, so a report can tell it apart."""
    if not result.store_path.is_file():
        return
    with Store(result.store_path) as store:
        if store.get_run(result.run_id) is None:
            return
        store.update_run(result.run_id, status="complete" if result.decided else "incomplete", meta={"adaptive": {
            "decided": result.decided, "stop_reason": result.stop_reason, "rounds": result.rounds,
            "tokens_spent": result.tokens_spent, "token_budget": result.token_budget,
            "confidence": result.confidence, "depths": plan.depths,
            "reps": {f: {str(k): v for k, v in r.items()} for f, r in plan.reps.items()},
            "families": [asdict(d) for d in result.families],
        }})
