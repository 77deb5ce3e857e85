"""``decide --rag``: from a run's profile to retrieval settings for a use.

For a use (families, the bar) and each chunk size, per run:

- the **retrieval depth** k is the most chunks such that (a) the assembled prompt,
  instruction + k chunks + question + answer budget in the model's tokens, stays within
  the use's reliable length (its weakest family's effective-length interval's lower end,
  :func:`ctxprobe.decide.decision.use_limit`), and (b) the k − 1 retrieved near-misses stay
  within the measured distractor tolerance (the lower end of
  :mod:`ctxprobe.analysis.distractors`, the fewest over the use's families measured along
  the look-alike axis); ``bound_by`` names the bound that binds (both when they agree);
- the **order**: where the depth profile of the limiting family shows a middle sag at the
  reliable length (:mod:`ctxprobe.analysis.position`: the middle weaker than the edges,
  95%), the top-ranked chunks go to the edges, the best at the stronger edge (the start
  or the end, by their accuracies there); where it shows none, order does not matter.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxprobe.analysis.distractors import AXIS, DistractorTolerance, distractor_axes, distractor_tolerance
from ctxprobe.analysis.grid import model_score
from ctxprobe.analysis.position import LengthDeficit, position_bias
from ctxprobe.core.rows import ResultRow
from ctxprobe.decide.decision import Limit, use_limit
from ctxprobe.decide.rag_chunks import ChunkSet
from ctxprobe.decide.runs import RunFacts
from ctxprobe.errors import CtxprobeError
from ctxprobe.store import open_existing

__all__ = ["Budgets", "Order", "RagSetting", "RunEvidence", "rag_settings", "read_evidence"]


@dataclass(frozen=True)
class Budgets:
    """Tokens the prompt holds besides the chunks, and the answer's budget."""

    instruction: int = 100
    question: int = 50
    answer: int = 50

    @property
    def fixed(self) -> int:
        return self.instruction + self.question + self.answer


@dataclass(frozen=True)
class Order:
    """Where the top-ranked chunks go: ``edges`` (first at ``first_edge``) or ``any``;
    ``unknown`` when the run has no middle and edge depths at that length."""

    kind: str
    first_edge: str | None
    family: str
    length: int | None
    deficit: LengthDeficit | None = None
    start: float | None = None
    end: float | None = None

    def text(self) -> str:
        if self.kind == "unknown":
            return (f"order unknown: {self.family} has no middle and edge depths measured at that length "
                    "(run with --depths 0,0.5,1)")
        d = self.deficit
        assert d is not None
        at = f"{self.length:,} tokens" if self.length is not None else "?"
        stat = f"edges {d.edge:.2f}, middle {d.middle:.2f}, deficit 95% {d.lo:+.2f} to {d.hi:+.2f}"
        if self.kind == "any":
            return f"order does not matter (no middle sag in {self.family} at {at}: {stat})"
        other = "end" if self.first_edge == "start" else "start"
        return (f"top-ranked chunks at the edges: the best at the {self.first_edge}, the next at the {other}, "
                f"the lowest-ranked in the middle ({self.family} sags in the middle at {at}: {stat}; "
                f"start {self.start:.2f}, end {self.end:.2f})")

    def to_dict(self) -> dict[str, Any]:
        d = self.deficit
        return {"kind": self.kind, "first_edge": self.first_edge, "family": self.family, "length": self.length,
                "start": self.start, "end": self.end, "text": self.text(),
                "deficit": None if d is None else {"edge": d.edge, "middle": d.middle, "deficit": d.deficit,
                                                   "lo": d.lo, "hi": d.hi, "verdict": d.verdict}}


@dataclass(frozen=True)
class RunEvidence:
    """What one run shows for a use: its limit, tolerance and depth profile."""

    run: RunFacts
    labels: tuple[str, ...]  # the use's families as the run measured them
    limit: Limit
    tolerance: DistractorTolerance
    order: Order


@dataclass(frozen=True)
class RagSetting:
    run_id: str
    model: str
    use: str
    chunk_tokens: int
    chunk_size: int
    k: int
    k_length: int
    k_distractors: int
    bound_by: str  # "length", "distractors" or "both"
    order: Order
    evidence: tuple[dict[str, Any], ...]
    budgets: Budgets

    def line(self) -> str:
        size = (f"{self.chunk_tokens:,}-token chunks" if self.chunk_tokens == self.chunk_size
                else f"chunks up to {self.chunk_size:,} tokens (largest {self.chunk_tokens:,})")
        bound = {"length": "the reliable length", "distractors": "the distractor tolerance",
                 "both": "the reliable length and the distractor tolerance"}[self.bound_by]
        return (f"{size}: retrieve k = {self.k} (bound by {bound}: {self.k_length} fit, "
                f"{self.k_distractors} tolerated)")

    def to_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "model": self.model, "use": self.use, "chunk_tokens": self.chunk_tokens,
                "chunk_size": self.chunk_size, "k": self.k, "k_length": self.k_length,
                "k_distractors": self.k_distractors, "bound_by": self.bound_by, "order": self.order.kind,
                "first_edge": self.order.first_edge, "order_detail": self.order.to_dict(),
                "evidence": list(self.evidence), "line": self.line(),
                "budgets": {"instruction": self.budgets.instruction, "question": self.budgets.question,
                            "answer": self.budgets.answer}}


def _measure_axis(model: str, use: list[str]) -> str:
    """What to run for a look-alike axis: on the first of the use's families that takes a
    look-alike count, else on a registered family that does (one whose count defaults to 0
    first), saying the use's families take none (``documents``: its passages are the
    user's own text, with no value ctxprobe could vary)."""
    from ctxprobe.core.family_lookup import family_class, family_names

    def count_field(name: str) -> Any:
        return family_class(name).params_model.model_fields.get(AXIS)

    bases = [f.split("~")[0].split("@")[0] for f in use]
    axis = [b for b in bases if count_field(b) is not None]
    if axis:
        fam, why = axis[0], ""
    else:
        takers = [n for n in family_names() if count_field(n) is not None]
        fam = min(takers, key=lambda n: (count_field(n).default != 0, n))
        why = f"{', '.join(bases)} take{'s' if len(bases) == 1 else ''} no look-alike count (docs/decide.md); "
    return (f"{why}measure one, e.g. `ctxprobe run --model '{model}' --family {fam} "
            f"--param {fam}.distractors=0,1,3,10,30 --lengths ... --depths 0,0.5,1`")


def _labels(run: RunFacts, use: list[str], axes: Mapping[str, Mapping[int, str]]) -> list[str]:
    """The use's families as the run names them: a family measured along the look-alike axis
    stands for itself by its label with the fewest look-alikes."""
    out = []
    for f in use:
        if f in run.families:
            out.append(f)
        elif f in axes and axes[f][min(axes[f])] in run.families:
            out.append(axes[f][min(axes[f])])
        else:
            raise CtxprobeError(f"--use names {f}, not measured in run {run.run.run_id} "
                                f"(its families: {', '.join(run.families) or 'none'})")
    return out


def _order(rows: list[ResultRow], family: str, length: int) -> Order:
    found = {b.family: b for b in position_bias(r for r in rows if r.family == family)}.get(family)
    at = [d for d in (found.lengths if found else []) if d.length <= length]
    if found is None or not at:
        return Order("unknown", None, family, length)
    d = at[-1]
    if d.verdict != "weaker":
        return Order("any", None, family, d.length, d)

    def mean(depth: float) -> float:
        s = [x for r in rows if r.family == family and r.length == d.length and r.depth == depth
             and (x := model_score(r)) is not None]
        return sum(s) / len(s) if s else 0.0

    start, end = mean(found.edges[0]), mean(found.edges[1])
    return Order("edges", "start" if start >= end else "end", family, d.length, d, start, end)


def read_evidence(run: RunFacts, store_path: str | Path, use: list[str]) -> RunEvidence:
    """One run's limit, distractor tolerance and depth profile for ``use`` (one-line errors
    saying what to run when a piece is missing)."""
    with open_existing(store_path) as store:
        rows = [r for r in store.result_rows(run.run.run_id) if "@" not in r.family]
    families = run.run.spec.get("families") or {}
    axes = distractor_axes(families)
    labels = _labels(run, use, axes)
    limit = use_limit(run, labels, "tokens")
    if limit.lo is None or limit.family is None:
        raise CtxprobeError(f"run {run.run.run_id} ({run.model}): {limit.line()}: no setting can rest on it; "
                            "measure shorter lengths or more --reps")
    bases = {b for b, labs in axes.items() for lab in labels if lab in labs.values()}
    tols = [t for t in distractor_tolerance(rows, families, {k: v.interval for k, v in run.families.items()},
                                            {k: v.bar for k, v in run.families.items()}, bar=min(
                                                v.bar for v in run.families.values()))
            if t.family in bases]
    if not tols:
        raise CtxprobeError(f"run {run.run.run_id} ({run.model}) has no distractor axis for {', '.join(use)}: "
                            + _measure_axis(run.model, use))
    tol = min(tols, key=lambda t: -1 if t.lo is None else t.lo)
    weakest = limit.limited_by[0] if limit.limited_by else labels[0]
    return RunEvidence(run, tuple(labels), limit, tol, _order(rows, weakest, limit.lo))


def rag_settings(ev: RunEvidence, chunks: list[ChunkSet], budgets: Budgets) -> list[RagSetting]:
    """Per chunk size: the retrieval depth, what bounds it, the order, the evidence."""
    run, lim, tol = ev.run, ev.limit, ev.tolerance
    assert lim.lo is not None
    room = lim.lo - budgets.fixed
    length_ev = {"bound": "length", "run_id": run.run.run_id, "family": lim.family, "length": lim.lo,
                 "interval": [lim.lo, lim.hi], "line": lim.line()}
    tol_ev = {"bound": "distractors", "run_id": run.run.run_id, "family": tol.family,
              "labels": tol.labels(), "count": tol.lo, "interval": [tol.lo, tol.hi],
              "lengths": list(tol.lengths), "line": tol.line()}
    order_ev = {"bound": "order", "run_id": run.run.run_id, **ev.order.to_dict()}
    out = []
    for c in chunks:
        k_len = room // c.tokens if room > 0 else 0
        if k_len < 1:
            most = max(0, room)
            raise CtxprobeError(
                f"chunks of {c.tokens:,} tokens do not fit {run.model}'s reliable length for {lim.use} "
                f"({lim.lo:,} tokens, run {run.run.run_id}) with {budgets.fixed:,} tokens of instruction, question "
                f"and answer: use --chunks of at most {most:,} tokens, or measure longer lengths with `ctxprobe run`")
        k_tol = tol.lo + 1 if tol.lo is not None else 0
        k = min(k_len, k_tol)
        bound = "both" if k_len == k_tol else "length" if k_len < k_tol else "distractors"
        out.append(RagSetting(run.run.run_id, run.model, lim.use, c.tokens, c.size, k, k_len, k_tol, bound,
                              ev.order, (length_ev, tol_ev, order_ev), budgets))
    return out
