"""Phone-book analysis: accuracy by position, the trend fit and the resilience metrics.

Input: the case records of a run (``Store.iter_case_records``); each scored response
carries per-needle results in ``detail["needles"]``. Sharded runs are merged per
(length, N, run) and scored against the one long book: a needle is correct only if its
own shard returned the right number and every other shard returned none.

Positions: bin ``b`` of N sits at ``x = (b + 0.5) / N`` of the book (0 = first entry).
N_ref is the largest N of the run (100 in the post), the reference length the shortest.

Metrics, in two labelled variants:

``robust`` (ctxprobe's own: absolute drops of binned means of the lenient per-needle
verdict; a wiggle at the curve's end cannot move them; 0–1 scale, LCRDS 0–100)
    A(L, N)  = share of needles answered correctly; coarse bins = the N bins grouped into
    ``coarse`` equal position ranges (default 5).
    CSI = max(0, A(L_ref, N_ref) − A(L, N_ref))
    ADI = largest drop from a coarse bin to any later one (typically start → lowest) at (L, N_ref)
    NOI = max(0, A(L, N_min) − A(L, N_ref))
    RRS = 1 − mean(CSI, ADI, NOI) over those defined; LCRDS = 100 × A(L, N_ref) × RRS
    MUC = longest L, walking up from the shortest, whose every coarse bin is ≥ ``bar`` (0.8)
``post`` (the phone-book post's metric script, exactly: :mod:`ctxprobe.families.phonebook.analysis_post`,
on the post's exact-match verdict per needle)
    CSI, ADI, NOI, RRI and LCRDS from the trough, peak and mean of a degree-3 fit on bin
    index, against the fixed references M = 1,000 entries and N = 10 / 100.

Intervals: percentile bootstrap over runs (one run = one book, resampled jointly for every
length and N, which keeps N paired). Each metric states the share of resamples in which it
was undefined (those are left out of its interval), and a note when its point value sits on
the edge of its interval or outside it. MUC "none" (no length qualifies) is a value, not an
undefined draw: it counts as below the shortest length.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ctxprobe.families.phonebook.analysis_axes import TokenAxis, Window
from ctxprobe.families.phonebook.analysis_post import N_REF, post_metrics
from ctxprobe.analysis.clustered import clustered_interval
from ctxprobe.analysis.stats import wilson_interval
from ctxprobe.families.phonebook.task_meta import phonebook_meta
from ctxprobe.core.outcome import HARNESS_OUTCOMES
from ctxprobe.core.records import CaseRecord

FAMILY = "phonebook"
METRICS = ("CSI", "ADI", "NOI", "RRS", "RRI", "LCRDS", "MUC")
VARIANTS = ("robust", "post")
Key = tuple[int, int]  # (length, N)
MKey = tuple[str, str, int | None]  # (metric, variant, length)


@dataclass(frozen=True)
class NeedleResult:
    length: int
    entries: int
    needles: int
    run: int
    bin: int
    pos: float
    name: str
    outcome: str
    exact: bool | None = None  # the post's exact-match verdict (None: not recorded)
    unit: str = "entries"  # what the length counts: entries or tokens

    @property
    def correct(self) -> bool:
        return self.outcome == "correct"


def _merge_shards(shards: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """One needle list of a sharded book's shards' lists: correct only if the owning shard was
    right and no other shard answered a number (so the merged answer is unambiguous)."""
    merged = []
    for parts in zip(*shards):
        own = [p for p in parts if p["in_shard"]]
        wrong_elsewhere = [p["outcome"] for p in parts if not p["in_shard"] and p["outcome"] != "correct"]
        outcome = own[0]["outcome"] if own else "empty"
        if outcome == "correct" and wrong_elsewhere:
            outcome = wrong_elsewhere[0]
        merged.append({**parts[0], "outcome": outcome, "exact": None})
    return merged


def needle_results(records: Iterable[CaseRecord]) -> list[NeedleResult]:
    """Per-needle rows of the scored phonebook cases (harness failures left out)."""
    groups: dict[tuple[int, int, int], list[CaseRecord]] = defaultdict(list)
    for rec in records:
        detail = rec.detail or {}
        if rec.family != FAMILY or rec.score is None or rec.outcome in HARNESS_OUTCOMES or "needles" not in detail:
            continue
        meta = phonebook_meta(rec.meta)
        groups[(rec.length, meta["needles"], meta["run"])].append(rec)
    out: list[NeedleResult] = []
    for (length, n, run), recs in sorted(groups.items()):
        first = phonebook_meta(recs[0].meta)
        shards = first.get("shards", 1)
        if shards > 1:
            if len(recs) < shards:
                continue  # a shard is missing or failed: the merged answer is unknown
            ordered = sorted(recs, key=lambda r: phonebook_meta(r.meta)["shard"])
            needles = _merge_shards([(r.detail or {})["needles"] for r in ordered])
        else:
            needles = (recs[0].detail or {})["needles"]
        m = first["entries"]
        unit = first.get("unit", "entries")
        out.extend(NeedleResult(length, m, n, run, d["bin"], d["pos"], d["name"], d["outcome"], d.get("exact"), unit)
                   for d in needles)
    return out


@dataclass(frozen=True)
class BinStat:
    length: int
    needles: int
    bin: int
    x: float  # bin centre as a fraction of the book
    n: int
    mean: float | None
    lo: float
    hi: float


@dataclass(frozen=True)
class MetricValue:
    metric: str
    variant: str  # "robust" (ctxprobe's own) | "post" (the post's metric script)
    length: int | None  # None for MUC (a length itself)
    value: float | None
    lo: float | None
    hi: float | None
    undefined: float = 0.0  # share of bootstrap resamples in which the metric was undefined
    note: str | None = None  # why it is n/a, or how its point relates to its interval


@dataclass
class PhonebookAnalysis:
    lengths: list[int]
    needles: list[int]
    n_ref: int
    length_ref: int
    entries: dict[int, float]  # mean M per length
    bins: list[BinStat]
    accuracy: dict[Key, tuple[float, float, float]]  # A with its 95% interval, clustered by book (prompt)
    fits: dict[Key, list[float]]  # polyfit coefficients, highest power first
    metrics: list[MetricValue] = field(default_factory=list)
    #: The book in prompt tokens and the model's window (:mod:`.phonebook_axes`; None: not read).
    tokens: TokenAxis | None = None
    window: Window | None = None

    def metric(self, name: str, variant: str = "robust", length: int | None = None) -> MetricValue:
        for m in self.metrics:
            if m.metric == name and m.variant == variant and m.length == length:
                return m
        raise KeyError((name, variant, length))


class _Grid:
    """Correctness as a run × bin matrix per (length, N), with run ids shared across them."""

    def __init__(self, results: list[NeedleResult], exact: bool = False) -> None:
        self.runs = sorted({r.run for r in results})
        index = {run: i for i, run in enumerate(self.runs)}
        self.c: dict[Key, np.ndarray] = {}
        self.present: dict[Key, np.ndarray] = {}
        for r in results:
            key = (r.length, r.needles)
            if key not in self.c:
                self.c[key] = np.zeros((len(self.runs), r.needles))
                self.present[key] = np.zeros((len(self.runs), r.needles))
            self.c[key][index[r.run], r.bin] = float(bool(r.exact) if exact else r.correct)
            self.present[key][index[r.run], r.bin] = 1.0

    def counts(self, weights: np.ndarray) -> dict[Key, tuple[np.ndarray, np.ndarray]]:
        return {k: (weights @ self.c[k], weights @ self.present[k]) for k in self.c}


def _fit(x: np.ndarray, acc: np.ndarray, degree: int) -> np.ndarray:
    ok = ~np.isnan(acc)
    deg = max(0, min(degree, int(ok.sum()) - 1))
    return np.polyfit(x[ok], acc[ok], deg) if ok.any() else np.array([np.nan])


def _drop(hi: float, lo: float) -> float:
    """An absolute drop from ``hi`` to ``lo``, clipped at 0; rounded so float noise reads as
    exactly 0. NaN if unmeasured."""
    if np.isnan(hi) or np.isnan(lo):
        return float("nan")
    return max(0.0, round(float(hi - lo), 9))


def _fall(g: np.ndarray) -> float:
    """Largest drop from a coarse bin to a later one (typically start → lowest point)."""
    best = 0.0
    for i in range(len(g)):
        later = g[i:][~np.isnan(g[i:])]
        if not np.isnan(g[i]) and later.size:
            best = max(best, float(g[i] - later.min()))
    return round(best, 9)


def _clears_every_bin(g: np.ndarray, bar: float) -> bool:
    """Every measured coarse bin is at the bar. A length with no measured bin (a bootstrap
    resample that drew none of the books holding it) is not cleared: nothing shows it
    works, so the walk stops there — decided here, not by ``nanmin`` of an all-NaN slice."""
    measured = g[~np.isnan(g)]
    return bool(measured.size) and float(measured.min()) >= bar


def _robust(counts: dict[Key, tuple[np.ndarray, np.ndarray]], lengths: list[int], ns: list[int],
            coarse: int, bar: float) -> dict[MKey, float | None]:
    n_ref, n_lo = max(ns), min(ns)
    total, groups = {}, {}
    for key, (s, n) in counts.items():
        x = (np.arange(key[1]) + 0.5) / key[1]
        total[key] = float(s.sum() / n.sum()) if n.sum() else float("nan")
        k = min(coarse, key[1])
        cs = np.bincount((x * k).astype(int), weights=s, minlength=k)
        cn = np.bincount((x * k).astype(int), weights=n, minlength=k)
        with np.errstate(invalid="ignore", divide="ignore"):
            groups[key] = cs / cn
    out: dict[MKey, float | None] = {}
    ref = next((L for L in lengths if (L, n_ref) in counts), None)
    walk: list[int] = []
    for L in lengths:
        key = (L, n_ref)
        if key not in counts or ref is None:
            continue
        lo_key = (L, n_lo)
        vals: dict[str, float | None] = {
            "CSI": _drop(total[(ref, n_ref)], total[key]),
            "ADI": _fall(groups[key]),
            "NOI": _drop(total[lo_key], total[key]) if n_lo != n_ref and lo_key in counts else None,
        }
        defined = [v for v in vals.values() if v is not None and not np.isnan(v)]
        rrs = 1.0 - sum(defined) / len(defined) if defined else None
        vals["RRS"] = rrs
        vals["LCRDS"] = 100.0 * total[key] * rrs if rrs is not None else None
        out.update({(name, "robust", L): v for name, v in vals.items()})
        walk.append(L if _clears_every_bin(groups[key], bar) else -1)
    best = None
    for L in walk:  # RULER's rule: stop at the first length that fails
        if L < 0:
            break
        best = L
    out[("MUC", "robust", None)] = best
    return out


def _post(exact: dict[Key, tuple[np.ndarray, np.ndarray]], in_entries: bool
          ) -> tuple[dict[MKey, float | None], dict[MKey, str]]:
    """The post's metrics (values, and the reason of each n/a) from exact-match counts."""
    per_bin = {}
    for key, (s, n) in exact.items():
        with np.errstate(invalid="ignore", divide="ignore"):
            per_bin[key] = list(s / n)
    values: dict[MKey, float | None] = {}
    reasons: dict[MKey, str] = {}
    for (name, m), v in post_metrics(per_bin, in_entries=in_entries).items():
        values[(name, "post", m)] = v.value
        if v.reason:
            reasons[(name, "post", m)] = v.reason
    return values, reasons


def _edge_note(value: float, lo: float, hi: float, draws: list[float]) -> str | None:
    """Say how a point value relates to its percentile interval when it is not inside it."""
    same = sum(1 for d in draws if abs(d - value) <= 1e-9) / len(draws)
    if value < lo - 1e-9 or value > hi + 1e-9:
        return (f"point outside its interval: the metric is a non-smooth function of the data (clipping, "
                f"extremes of a fit, a walk), biased under resampling; {same:.0%} of resamples equal the point")
    if abs(value - lo) <= 1e-9 or abs(value - hi) <= 1e-9:
        if lo == hi:
            return None
        return (f"point on the edge of its interval: {same:.0%} of resamples equal it (a drop clipped at 0 "
                "or a bound of the metric sits behind it)")
    return None


def analyse(results: Iterable[NeedleResult], *, coarse: int = 5, bar: float = 0.8, degree: int = 3,
            bootstrap: int = 1000, seed: int = 0) -> PhonebookAnalysis:
    """Per-bin accuracy, trend fits and every metric (both variants) with a bootstrap 95%
    interval, the share of undefined resamples and notes."""
    results = list(results)
    if not results:
        raise ValueError("no scored phonebook needles to analyse")
    grid = _Grid(results)
    has_exact = all(r.exact is not None for r in results)
    egrid = _Grid(results, exact=True) if has_exact else None
    in_entries = all(r.unit == "entries" for r in results)
    lengths = sorted({r.length for r in results})
    ns = sorted({r.needles for r in results})

    def compute(w: np.ndarray) -> tuple[dict[MKey, float | None],
                                        dict[MKey, str]]:
        vals = _robust(grid.counts(w), lengths, ns, coarse, bar)
        reasons: dict[MKey, str] = {}
        if egrid is not None:
            post_vals, reasons = _post(egrid.counts(w), in_entries)
            vals.update(post_vals)
        return vals, reasons

    ones = np.ones(len(grid.runs))
    point, reasons = compute(ones)
    counts = grid.counts(ones)
    rng = np.random.default_rng(seed)
    draws: dict[MKey, list[float]] = defaultdict(list)
    undefined: dict[MKey, int] = defaultdict(int)
    for _ in range(bootstrap):
        w = rng.multinomial(len(grid.runs), np.full(len(grid.runs), 1.0 / len(grid.runs))).astype(float)
        for k, v in compute(w)[0].items():
            if k[0] == "MUC":
                draws[k].append(float(v if v is not None else 0))  # none: below the shortest length
            elif v is None or np.isnan(v):
                undefined[k] += 1
            else:
                draws[k].append(float(v))
    metrics = []
    for key, v in sorted(point.items(), key=lambda kv: (METRICS.index(kv[0][0]), kv[0][1], kv[0][2] or 0)):
        name, variant, L = key
        d = draws.get(key)
        lo, hi = (float(np.percentile(d, 2.5)), float(np.percentile(d, 97.5))) if d else (None, None)
        value = None if v is None or np.isnan(v) else float(v)
        note = reasons.get(key)
        value_for_edge = float(value if value is not None else 0) if name == "MUC" else value
        if note is None and d and value_for_edge is not None and lo is not None and hi is not None:
            note = _edge_note(value_for_edge, lo, hi, d)
        if name == "RRS" and L is not None and point.get(("LCRDS", "robust", L)) == 0.0:
            note = ("no drops because nothing was recalled at this length: a resilience of 1 here means "
                    "nothing to lose; read LCRDS (0)") + (f"; {note}" if note else "")
        metrics.append(MetricValue(name, variant, L, value, lo, hi,
                                   undefined[key] / bootstrap if bootstrap else 0.0, note))
    if egrid is None:
        metrics.append(MetricValue("LCRDS", "post", None, None, None, None, 0.0,
                                   "the post's metrics need the exact-match verdict of every needle: none is stored for "
                                   "runs scored before it was recorded, nor for sharded books (method ctxprobe)"))
    elif N_REF not in ns:
        metrics.append(MetricValue("LCRDS", "post", None, None, None, None, 0.0,
                                   f"the post's metrics need N={N_REF} needles (the grid has N={ns})"))

    bins: list[BinStat] = []
    accuracy: dict[Key, tuple[float, float, float]] = {}
    fits: dict[Key, list[float]] = {}
    for (L, n), (s, cnt) in sorted(counts.items()):
        x = (np.arange(n) + 0.5) / n
        with np.errstate(invalid="ignore", divide="ignore"):
            a = s / cnt
        for b in range(n):
            lo, hi = wilson_interval(float(s[b]), int(cnt[b]))
            bins.append(BinStat(L, n, b, float(x[b]), int(cnt[b]), float(a[b]) if cnt[b] else None, lo, hi))
        per_book = grid.present[(L, n)].sum(axis=1)  # needles of one book share its prompt: a cluster
        accuracy[(L, n)] = clustered_interval(grid.c[(L, n)].sum(axis=1).tolist(), per_book.astype(int).tolist())
        fits[(L, n)] = [float(c) for c in _fit(x, a, degree)]
    entries = {L: float(np.mean([r.entries for r in results if r.length == L])) for L in lengths}
    ref = next((L for L in lengths if (L, max(ns)) in counts), lengths[0])
    return PhonebookAnalysis(lengths, ns, max(ns), ref, entries, bins, accuracy, fits, metrics)


@dataclass(frozen=True)
class PairedDiff:
    pairs: int
    mean_a: float
    mean_b: float
    diff: float  # mean_b − mean_a
    lo: float
    hi: float


def paired_difference(a: Iterable[NeedleResult], b: Iterable[NeedleResult], *, bootstrap: int = 1000,
                      seed: int = 0) -> PairedDiff:
    """B − A on the same seeded needles (same length, N, run, bin and name), with a
    bootstrap interval over runs. Needles only one run has are left out."""
    key = lambda r: (r.length, r.needles, r.run, r.bin, r.name)  # noqa: E731
    bmap = {key(r): r.correct for r in b}
    pairs = [(r.run, float(r.correct), float(bmap[key(r)])) for r in a if key(r) in bmap]
    if not pairs:
        raise ValueError("the two runs share no needles: were they run with the same seed and lengths?")
    runs = sorted({p[0] for p in pairs})
    idx = {r: i for i, r in enumerate(runs)}
    per_run = np.zeros((len(runs), 3))
    for run, x, y in pairs:
        per_run[idx[run]] += (1.0, x, y)
    rng = np.random.default_rng(seed)
    diffs = []
    for _ in range(bootstrap):
        w = rng.multinomial(len(runs), np.full(len(runs), 1.0 / len(runs)))
        n, sa, sb = w @ per_run
        diffs.append((sb - sa) / n)
    n, sa, sb = per_run.sum(axis=0)
    lo, hi = (float(np.percentile(diffs, 2.5)), float(np.percentile(diffs, 97.5))) if diffs else (0.0, 0.0)
    return PairedDiff(int(n), sa / n, sb / n, (sb - sa) / n, lo, hi)


def compare_runs(analyses: Mapping[str, PhonebookAnalysis]) -> list[dict[str, Any]]:
    """Side-by-side metric rows (one per run label × metric × variant × length)."""
    return [{"run": label, "metric": m.metric, "variant": m.variant, "length": m.length, "value": m.value,
             "lo": m.lo, "hi": m.hi} for label, an in analyses.items() for m in an.metrics]
