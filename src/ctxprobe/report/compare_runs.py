"""``ctxprobe compare`` and ``ctxprobe check`` on stored runs: read each run's cases from
its store, then hand them to the store-free statistics in :mod:`ctxprobe.analysis`."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from ctxprobe.analysis.compare import Comparison, RunCases, compare_cases
from ctxprobe.analysis.gate import CheckResult, check_cases
from ctxprobe.analysis.reasoning import budget_family
from ctxprobe.analysis.variants import content_id, sampled_case, samples_per_case, unsampled_id
from ctxprobe.core.baseline import is_baseline
from ctxprobe.store import CaseRecord, RunRecord, open_existing


def load_run_cases(run_id: str, store_path: str | Path, *, by_content: bool = False) -> RunCases:
    """A stored run's cases with their results (the one function here that reads a store).
    ``by_content``: each case's ``prompt_hash`` is its content identity instead
    (:func:`ctxprobe.analysis.variants.content_id`), for runs that ask the same seeded cases
    in different prompts (prompt variants)."""
    with open_existing(store_path) as store:
        run = store.require_run(run_id)
        groups: dict[str, list[CaseRecord]] = {}
        for rec in store.iter_case_records(run.run_id):
            if is_baseline(rec.family):
                continue  # a no-context twin measures the guess rate, not the model: never gated or compared
            # a variant's k samples: one case (prompts are not read here)
            groups.setdefault(unsampled_id(rec.case_id), []).append(rec.without_prompt())
        cases = {}
        for key, recs in groups.items():
            first = recs[0]
            case = sampled_case(key, content_id(first) if by_content else first.prompt_hash, first.family, recs)
            if first.reasoning_budget is not None:  # each budget is its own curve, compared as such
                case = replace(case, family=budget_family(case.family, first.reasoning_budget))
            cases[key] = case
    return RunCases(run.run_id, run.model, cases, about(run))


def about(run: RunRecord) -> dict[str, object]:
    """What decides a run's prompts besides its cells, as stored: named when runs cannot pair."""
    spec = run.spec
    builder = run.meta.builder_version
    return {"seed": spec.get("seed"), "tokenizer": run.tokenizer,
            "chat_template": run.meta.chat_template_hash,
            "case_builder": builder if builder is not None else "unrecorded (before versions)",
            "families": sorted(f for f in spec.get("families") or {} if not is_baseline(f)), "lengths": spec.get("lengths"),
            "depths": spec.get("depths"), "haystack": spec.get("haystack"),
            **({"reasoning_budgets": spec["reasoning_budgets"]} if spec.get("reasoning_budgets") is not None else {})}


def compare_runs(run_a: str, run_b: str, store_path: str | Path = "ctxprobe.sqlite", *,
                 store_b: str | Path | None = None, **kwargs: Any) -> Comparison:
    """``ctxprobe compare RUN_A RUN_B``: B judged against A (A is the reference)."""
    a = load_run_cases(run_a, store_path)
    b = load_run_cases(run_b, store_b or store_path)
    shared = a.cases.keys() & b.cases.keys()
    if a.about == b.about and any(a.cases[k].prompt_hash != b.cases[k].prompt_hash for k in shared):
        # different prompts from the same builder, seed, tokenizer and template: runs of two
        # prompt variants, which still pair when every shared case holds the same seeded
        # content (same filler, keys, books, needles); another builder is refused below
        ac = load_run_cases(run_a, store_path, by_content=True)
        bc = load_run_cases(run_b, store_b or store_path, by_content=True)
        if all(ac.cases[k].prompt_hash == bc.cases[k].prompt_hash for k in shared):
            return replace(compare_cases(ac, bc, **kwargs), paired_by="content",
                           samples=(samples_per_case(a), samples_per_case(b)))
    return replace(compare_cases(a, b, **kwargs), samples=(samples_per_case(a), samples_per_case(b)))


def check(run: str, baseline: str, max_drop: float = 0.05, alpha: float = 0.05, *,
          store_path: str | Path = "ctxprobe.sqlite", baseline_store: str | Path | None = None,
          **kwargs: Any) -> CheckResult:
    """``ctxprobe check RUN --baseline RUN0``: the regression gate on stored runs."""
    return check_cases(load_run_cases(run, store_path), load_run_cases(baseline, baseline_store or store_path),
                       max_drop=max_drop, alpha=alpha, **kwargs)


def plan_check(spec_path: str | Path | None = None, *, lengths: str | None = None, depths: str | None = None,
               family: str | None = None, reps: int | None = None, drop: float | None = None,
               max_drop: float = 0.05, alpha: float = 0.05) -> list[str]:
    """``ctxprobe check --plan``: the reps a slice (a spec file and/or its grid flags) needs for
    the gate to see a drop of ``drop`` (default twice ``max_drop``)."""
    from ctxprobe.analysis.gate_power import plan_slice
    from ctxprobe.errors import CtxprobeError
    from ctxprobe.spec import merge_spec

    if not 0.0 <= max_drop <= 1.0:
        raise CtxprobeError(f"--max-drop must be between 0 and 1, got {max_drop:g}")
    if not 0.0 < alpha < 1.0:
        raise CtxprobeError(f"--alpha must be between 0 and 1, got {alpha:g}")
    drop = 2 * max_drop if drop is None else drop
    if not 0.0 < drop <= 1.0:
        raise CtxprobeError(f"--drop must be in (0, 1], got {drop:g}")
    spec = merge_spec(spec_path, {"lengths": lengths, "depths": depths, "reps": reps}, family=family)
    families = sum(1 for f in spec.families if not is_baseline(f)) * max(1, len(spec.reasoning_budgets or []))
    plan = plan_slice(families, len(spec.lengths), len(spec.depths), spec.reps, drop=drop, max_drop=max_drop,
                      alpha=alpha)
    return [*plan.lines(), "(best case: the baseline gets every pair right and the run gains none; a noisy model "
                           "needs more)"]
