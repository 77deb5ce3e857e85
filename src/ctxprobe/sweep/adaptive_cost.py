"""What an adaptive sweep is expected to spend, before anything is sent (``plan --adaptive``).

Per decision -- one length found to pass or to fail -- the expected number of cases at a
few true accuracies, simulated through the same rounds the sweep plans
(:func:`ctxprobe.analysis.sequential.expected_reps`: Bernoulli answers, seeded, so the
numbers are the same every time), and the tokens that makes at each length of the spec.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxprobe.analysis.sequential import expected_reps, levels
from ctxprobe.spec import Spec
from ctxprobe.sweep.adaptive import Settings, check_adaptive, coarse_depths, default_budget

__all__ = ["ACCURACIES", "AdaptiveCost", "adaptive_cost"]

#: the true accuracies shown: a perfect length, a good one, a failing one, a hopeless one
ACCURACIES = (1.0, 0.95, 0.7, 0.0)


@dataclass(frozen=True)
class AdaptiveCost:
    threshold: float
    confidence: float
    depths: int
    lengths: list[int]
    pass_level: float
    fail_level: float
    cases: dict[float, float]  # accuracy -> expected cases to decide one length
    decided: dict[float, float]  # accuracy -> share of simulated runs decided correctly (< 0.5: 'undecided')
    budget: int
    families: int

    def tokens(self, accuracy: float, length: int) -> int:
        return round(self.cases[accuracy] * length)

    def lines(self) -> list[str]:
        from ctxprobe.spec.units import fmt_tokens

        verb = {a: "passes" if a >= self.threshold else "fails" for a in ACCURACIES}
        heads = [f"{a:.2f} {verb[a]}" for a in ACCURACIES]
        out = [f"adaptive: passes at level {self.pass_level:.3g}, fails at {self.fail_level:.3g} "
               f"({self.confidence:.0%}, {self.depths} depths, bar {self.threshold:g})",
               "expected tokens per decision, by the length's true accuracy (simulated):",
               f"{'length':>8}" + "".join(f"{h:>15}" for h in heads)]
        def cell(a: float, value: str) -> str:
            return f"{value if self.decided[a] >= 0.5 else 'undecided':>15}"

        for length in self.lengths:
            out.append(f"{fmt_tokens(length):>8}" + "".join(cell(a, f"{self.tokens(a, length):,}") for a in ACCURACIES))
        out.append(f"{'cases':>8}" + "".join(cell(a, f"{self.cases[a]:,.0f}") for a in ACCURACIES))
        perfect = sum(self.tokens(1.0, length) for length in self.lengths) * self.families
        what = f"{perfect:,} tokens in all" if self.decided[1.0] >= 0.5 else "never decided at this bar"
        out.append(f"a perfect model: {what}; budget {self.budget:,} (5 depths x 20 reps);")
        out.append("within ~0.06 of the bar the budget is spent and the answer is undecided")
        return out


def adaptive_cost(spec: Spec, *, confidence: float = 0.95, token_budget: int | None = None, bisect: int = 0,
                  sims: int = 200) -> AdaptiveCost:
    """Expected cases and tokens per decision of ``adaptive_sweep(spec)``; nothing is sent."""
    check_adaptive(spec)  # what run --adaptive refuses is not priced either
    settings = Settings(confidence=confidence, bisect=bisect)
    depths = len(coarse_depths(spec.depths))
    lengths = sorted(spec.lengths)
    pass_level, fail_level = levels(settings.alpha, len(lengths), bisect)
    cases: dict[float, float] = {}
    decided: dict[float, float] = {}
    for accuracy in ACCURACIES:
        reps, right = expected_reps(accuracy, depths, spec.threshold, pass_level, fail_level,
                                    first=settings.coarse_reps, cap=settings.max_reps, growth=settings.growth,
                                    sims=sims)
        cases[accuracy], decided[accuracy] = reps * depths, right
    return AdaptiveCost(spec.threshold, confidence, depths, lengths, pass_level, fail_level, cases, decided,
                        token_budget if token_budget is not None else default_budget(spec), len(spec.families))
