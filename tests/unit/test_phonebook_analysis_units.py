"""Phone-book analysis on small hand-built needle results (no sweep, no server): records to
needles (filters, shard merging), the per-bin table, the fits, every robust metric, the
MUC walk at its bar, the notes, paired differences. Expectations follow the module's
documented formulas, computed here by hand; fast enough to guard each mutant."""

from __future__ import annotations

import numpy as np
import pytest

from stub_records import stub_records
from ctxprobe.families.phonebook.analysis import (
    METRICS,
    NeedleResult,
    _edge_note,
    analyse,
    compare_runs,
    needle_results,
    paired_difference,
)
from ctxprobe.analysis.stats import wilson_interval

RUNS = 4


def needles(length: int, n: int, correct_by_bin: list[int], *, runs: int = RUNS, entries: int = 1000,
            exact: bool | None = None, unit: str = "entries") -> list[NeedleResult]:
    """``correct_by_bin[b]`` of the runs answer bin b right."""
    return [NeedleResult(length, entries, n, run, b, (b + 0.5) / n, f"L{length}n{n}b{b}r{run}",
                         "correct" if run < k else "wrong", (run < k) if exact else exact, unit)
            for b, k in enumerate(correct_by_bin) for run in range(runs)]


def coarse_means(correct_by_bin: list[int], k: int = 5) -> list[float]:
    n = len(correct_by_bin)
    groups: list[list[int]] = [[] for _ in range(k)]
    for b, c in enumerate(correct_by_bin):
        groups[int((b + 0.5) / n * k)].append(c)
    return [sum(g) / (len(g) * RUNS) for g in groups]


def fall(g: list[float]) -> float:
    return max(max(g[i] - min(g[i:]) for i in range(len(g))), 0.0)


# Two lengths, N = 5 and 10. At 1000: N=5 all right, N=10 falls from the start to the end.
# At 2000: worse everywhere.
SHORT5, SHORT10 = [4, 4, 4, 4, 4], [4, 4, 4, 4, 3, 3, 2, 2, 4, 4]
LONG5, LONG10 = [4, 4, 3, 3, 2], [4, 3, 2, 2, 1, 1, 0, 0, 1, 1]


@pytest.fixture(scope="module")
def an():
    rows = (needles(1000, 5, SHORT5) + needles(1000, 10, SHORT10) + needles(2000, 5, LONG5)
            + needles(2000, 10, LONG10))
    return analyse(rows, bootstrap=0)


def total(bins: list[int]) -> float:
    return sum(bins) / (len(bins) * RUNS)


def test_shape_of_the_analysis(an) -> None:
    assert an.lengths == [1000, 2000] and an.needles == [5, 10]
    assert an.n_ref == 10 and an.length_ref == 1000
    assert an.entries == {1000: 1000.0, 2000: 1000.0}
    assert len(an.bins) == 2 * (5 + 10)


def test_bins_accuracy_and_fits_by_hand(an) -> None:
    table = {(1000, 5): SHORT5, (1000, 10): SHORT10, (2000, 5): LONG5, (2000, 10): LONG10}
    for b in an.bins:
        k = table[(b.length, b.needles)][b.bin]
        assert b.x == pytest.approx((b.bin + 0.5) / b.needles)
        assert (b.n, b.mean) == (RUNS, k / RUNS)
        assert (b.lo, b.hi) == pytest.approx(wilson_interval(k, RUNS))
    from ctxprobe.analysis.clustered import clustered_interval

    for key, bins in table.items():
        s, n = sum(bins), len(bins) * RUNS
        # one book per run: its needles are a cluster (run r answers bin b right when r < bins[b])
        per_book = [sum(1 for k in bins if run < k) for run in range(RUNS)]
        assert sum(per_book) == s
        assert an.accuracy[key] == pytest.approx(clustered_interval(per_book, [len(bins)] * RUNS))
        assert an.accuracy[key][0] == pytest.approx(s / n)
        x = (np.arange(len(bins)) + 0.5) / len(bins)
        assert an.fits[key] == pytest.approx(list(np.polyfit(x, np.array(bins) / RUNS, 3)), abs=1e-9)


def test_robust_metrics_by_hand(an) -> None:
    a_ref = total(SHORT10)
    for length, few, many in ((1000, SHORT5, SHORT10), (2000, LONG5, LONG10)):
        csi = max(0.0, a_ref - total(many))
        adi = fall(coarse_means(many))
        noi = max(0.0, total(few) - total(many))
        rrs = 1 - (csi + adi + noi) / 3
        got = {name: an.metric(name, "robust", length).value for name in ("CSI", "ADI", "NOI", "RRS", "LCRDS")}
        assert got == pytest.approx({"CSI": csi, "ADI": adi, "NOI": noi, "RRS": rrs,
                                     "LCRDS": 100 * total(many) * rrs}, abs=1e-9)
    assert an.metric("CSI", "robust", 1000).value == 0.0
    assert an.metric("ADI", "robust", 1000).value == pytest.approx(0.5)  # 1.0 at the start, 0.5 at bins 6-7
    # MUC: 1000's lowest coarse bin is 0.5 < 0.8: no length qualifies
    assert an.metric("MUC", "robust").value is None


def test_metrics_are_listed_in_order_and_without_intervals_when_not_bootstrapped(an) -> None:
    keys = [(m.metric, m.variant, m.length) for m in an.metrics][:-1]  # the post's n/a row comes last
    assert an.metrics[-1].variant == "post"
    assert keys == sorted(keys, key=lambda k: (METRICS.index(k[0]), k[1], k[2] or 0))
    assert all(m.lo is None and m.hi is None and m.undefined == 0.0 for m in an.metrics)
    with pytest.raises(KeyError):
        an.metric("CSI", "robust", 3000)
    with pytest.raises(KeyError):
        an.metric("CSI", "nosuchvariant", 1000)
    # no exact-match verdicts were recorded: the post's metrics say why they are missing
    post = [m for m in an.metrics if m.variant == "post"]
    assert len(post) == 1 and post[0].value is None and "exact-match" in post[0].note


@pytest.mark.parametrize(("k", "muc"), [(100, 2000), (80, 2000), (79, 1000)])
def test_muc_walk_at_its_bar(k: int, muc: int) -> None:
    """MUC: the longest length, walking up, whose every coarse bin is >= 0.8 (equality passes);
    4000 clears the bar too but comes after 3000, which does not."""
    runs = 100  # the middle bin of 2000 is k / runs
    rows = (needles(1000, 5, [runs] * 5, runs=runs) + needles(2000, 5, [runs, runs, k, runs, runs], runs=runs)
            + needles(3000, 5, [0] * 5, runs=runs) + needles(4000, 5, [runs] * 5, runs=runs))
    an = analyse(rows, bootstrap=0)
    assert an.metric("MUC", "robust").value == (2000 if k / runs >= 0.8 else 1000) == muc


def test_a_single_n_leaves_noi_undefined_and_rrs_over_the_rest() -> None:
    an = analyse(needles(1000, 10, [4] * 10) + needles(2000, 10, [4, 4, 4, 4, 4, 2, 2, 2, 2, 2]), bootstrap=0)
    assert an.metric("NOI", "robust", 2000).value is None
    csi, adi = 1.0 - 0.75, 1.0 - 0.5
    assert an.metric("RRS", "robust", 2000).value == pytest.approx(1 - (csi + adi) / 2)
    assert an.metric("MUC", "robust").value == 1000


def test_nothing_recalled_gives_a_note_on_rrs() -> None:
    an = analyse(needles(1000, 5, [0] * 5) + needles(1000, 10, [0] * 10), bootstrap=0)
    rrs = an.metric("RRS", "robust", 1000)
    assert rrs.value == 1.0 and an.metric("LCRDS", "robust", 1000).value == 0.0
    assert rrs.note == ("no drops because nothing was recalled at this length: a resilience of 1 here means "
                        "nothing to lose; read LCRDS (0)")
    assert all(an.metric(name, "robust", 1000).note is None for name in ("CSI", "ADI", "NOI", "LCRDS"))
    ok = analyse(needles(1000, 5, [4] * 5), bootstrap=0)
    assert ok.metric("RRS", "robust", 1000).note is None


def test_a_bin_nobody_answered_is_left_out_of_its_fit() -> None:
    rows = [r for r in needles(1000, 5, [4, 3, 2, 1, 0]) if r.bin != 2]  # bin 2 never measured
    an = analyse(rows, bootstrap=0)
    b2 = next(b for b in an.bins if b.bin == 2)
    assert (b2.n, b2.mean, b2.lo, b2.hi) == (0, None, 0.0, 1.0)
    x = np.array([0.1, 0.3, 0.7, 0.9])
    assert an.fits[(1000, 5)] == pytest.approx(list(np.polyfit(x, [1.0, 0.75, 0.25, 0.0], 3)), abs=1e-9)
    two = analyse([r for r in needles(1000, 5, [4, 3, 2, 1, 0]) if r.bin in (0, 4)], bootstrap=0)
    assert two.fits[(1000, 5)] == pytest.approx([-1.25, 1.125])  # two points: a line through them


def test_bootstrap_intervals_bracket_a_clear_drop_and_count_undefined_draws() -> None:
    rows = needles(1000, 5, [4] * 5) + needles(2000, 5, [4, 4, 0, 0, 0])
    an = analyse(rows, bootstrap=50, seed=3)
    adi = an.metric("ADI", "robust", 2000)
    assert adi.value == 1.0 and adi.lo == 1.0 and adi.hi == 1.0 and adi.undefined == 0.0
    noi = an.metric("NOI", "robust", 2000)
    assert noi.value is None and noi.undefined == 1.0  # one N: NOI is undefined in every draw
    muc = an.metric("MUC", "robust")
    assert muc.value == 1000 and (muc.lo, muc.hi) == (1000.0, 1000.0)


def test_edge_notes() -> None:
    draws = [0.0] * 6 + [0.5] * 4
    assert "point outside its interval" in _edge_note(0.9, 0.0, 0.5, draws)
    assert "point outside its interval" in _edge_note(-0.1, 0.0, 0.5, draws)
    assert "20% of resamples equal the point" in _edge_note(0.9, 0.0, 0.5, draws[2:] + [0.9, 0.9])
    assert _edge_note(0.5 + 1e-10, 0.0, 0.5, draws).startswith("point on the edge of its interval: 40%")
    assert _edge_note(0.0, 0.0, 0.5, draws).startswith("point on the edge of its interval: 60%")
    assert _edge_note(0.25, 0.0, 0.5, draws) is None
    assert _edge_note(0.3, 0.3, 0.3, [0.3] * 3) is None  # a degenerate interval: nothing to say


# -- records to needles -------------------------------------------------------------------

def _rec(length: int, run: int, outcomes: list[str], *, family: str = "phonebook", score: float | None = 1.0,
         outcome: str = "partial", shard: int | None = None, shards: int = 1, in_shard: list[bool] | None = None,
         **meta) -> dict:
    n = len(outcomes)
    needles_ = [{"bin": b, "pos": (b + 0.5) / n, "name": f"name{b}", "outcome": o, "exact": o == "correct",
                 **({"in_shard": in_shard[b]} if in_shard else {})} for b, o in enumerate(outcomes)]
    m = {"needles": n, "run": run, "entries": 500 + length, **({"shard": shard, "shards": shards} if shard is not None
                                                             else {}), **meta}
    return {"family": family, "length": length, "score": score, "outcome": outcome, "meta": m,
            "detail": {"needles": needles_}}


def test_needle_results_keeps_scored_phonebook_needles_only() -> None:
    recs = [
        _rec(1000, 0, ["correct", "wrong"]),
        _rec(1000, 1, ["correct", "correct"], family="niah"),
        _rec(1000, 2, ["correct", "correct"], score=None),
        _rec(1000, 3, ["correct", "correct"], outcome="error"),
        _rec(1000, 4, ["correct", "correct"], outcome="input_truncated"),
        {**_rec(1000, 5, ["correct"]), "detail": None},
        {**_rec(1000, 6, ["correct"]), "detail": {"other": 1}},
        _rec(2000, 0, ["wrong", "correct"], unit="tokens"),
    ]
    got = needle_results(stub_records(recs))
    assert [(r.length, r.run, r.bin, r.outcome, r.exact, r.unit, r.entries, r.needles) for r in got] == [
        (1000, 0, 0, "correct", True, "entries", 1500, 2), (1000, 0, 1, "wrong", False, "entries", 1500, 2),
        (2000, 0, 0, "wrong", False, "tokens", 2500, 2), (2000, 0, 1, "correct", True, "tokens", 2500, 2)]
    assert [r.correct for r in got] == [True, False, False, True]


def test_sharded_books_are_merged_against_the_one_long_book() -> None:
    own = [True, False, False]
    other = [False, True, True]
    recs = [
        # shard 1 of 2 listed first: merging goes by shard number
        _rec(1000, 0, ["correct", "correct", "wrong"], shard=1, shards=2, in_shard=other),
        _rec(1000, 0, ["correct", "not_found", "correct"], shard=0, shards=2, in_shard=own),
        # run 1 lost a shard: its merged answer is unknown
        _rec(1000, 1, ["correct", "correct", "correct"], shard=0, shards=2, in_shard=own),
    ]
    got = needle_results(stub_records(recs))
    # bin 0: owner right, the other shard returned nothing wrong -> correct
    # bin 1: owner (shard 1) right, but shard 0 said not_found -> that label
    # bin 2: owner (shard 1) wrong -> wrong
    assert [(r.run, r.bin, r.outcome, r.exact) for r in got] == [(0, 0, "correct", None), (0, 1, "not_found", None),
                                                                   (0, 2, "wrong", None)]


def test_a_needle_no_shard_owns_is_empty() -> None:
    recs = [_rec(1000, 0, ["correct"], shard=0, shards=2, in_shard=[False]),
            _rec(1000, 0, ["correct"], shard=1, shards=2, in_shard=[False])]
    assert [r.outcome for r in needle_results(stub_records(recs))] == ["empty"]


def test_post_variant_needs_exact_verdicts_and_n100() -> None:
    an = analyse(needles(1000, 5, [4] * 5, exact=True) + needles(1000, 10, [4] * 10, exact=True), bootstrap=0)
    post = [m for m in an.metrics if m.variant == "post"]
    assert len(post) == 1 and post[0].note == "the post's metrics need N=100 needles (the grid has N=[5, 10])"
    assert post[0].undefined == 0.0 and post[0].lo is None


def test_post_variant_on_n100_and_n10() -> None:
    rows = needles(1000, 100, [4] * 100, exact=True) + needles(1000, 10, [4] * 10, exact=True)
    an = analyse(rows, bootstrap=0)
    assert an.metric("ADI", "post", 1000).value == pytest.approx(0.0, abs=1e-9)
    assert an.metric("NOI", "post", 1000).value == pytest.approx(0.0, abs=1e-9)
    assert an.metric("CSI", "post", 1000).value == pytest.approx(0.0, abs=1e-9)  # M=1000 is its own reference
    assert an.metric("LCRDS", "post", 1000).value == pytest.approx(100.0)
    keys = [(m.metric, m.variant, m.length) for m in an.metrics]
    assert keys == sorted(keys, key=lambda k: (METRICS.index(k[0]), k[1], k[2] or 0))
    assert ("ADI", "post", 1000) in keys and ("ADI", "robust", 1000) in keys
    tokens = analyse(needles(1000, 100, [4] * 100, exact=True, unit="tokens"), bootstrap=0)
    csi = tokens.metric("CSI", "post", 1000)
    assert csi.value is None and "books sized in tokens" in csi.note


def test_empty_analysis_is_refused() -> None:
    with pytest.raises(ValueError, match="no scored phonebook needles"):
        analyse([])


# -- paired differences and side-by-side rows ---------------------------------------------

def test_paired_difference_by_hand() -> None:
    a = needles(1000, 5, [2, 2, 2, 2, 2])  # runs 0-1 right
    b = needles(1000, 5, [4, 4, 4, 4, 2])  # bins 0-3 right in every run
    extra = needles(3000, 5, [4] * 5)  # only b has these: left out
    d = paired_difference(a, b + extra, bootstrap=200, seed=1)
    assert d.pairs == 20 and d.mean_a == 0.5 and d.mean_b == 0.9 and d.diff == pytest.approx(0.4)
    # per run: 0, 0, 0.8, 0.8 -- every resampled mean lies in [0, 0.8]
    assert 0.0 <= d.lo < 0.4 < d.hi <= 0.8 + 1e-9
    same = paired_difference(a, a, bootstrap=50)
    assert (same.diff, same.lo, same.hi) == (0.0, 0.0, 0.0)
    none = paired_difference(a, b, bootstrap=0)
    assert (none.lo, none.hi) == (0.0, 0.0)
    with pytest.raises(ValueError, match="share no needles"):
        paired_difference(a, extra)


def test_compare_runs_rows(an) -> None:
    rows = compare_runs({"x": an})
    assert len(rows) == len(an.metrics)
    m = an.metrics[0]
    assert rows[0] == {"run": "x", "metric": m.metric, "variant": m.variant, "length": m.length,
                       "value": m.value, "lo": m.lo, "hi": m.hi}


# -- bootstrap, notes and variants ------------------------------------------------------------

def _runs(length: int, n: int, pattern: list[list[bool]], **kw) -> list[NeedleResult]:
    """pattern[run][bin]: that needle right or wrong."""
    return [NeedleResult(length, kw.get("entries", 1000), n, run, b, (b + 0.5) / n, f"L{length}r{run}b{b}",
                         "correct" if ok else "wrong", kw.get("exact", ok), kw.get("unit", "entries"))
            for run, row in enumerate(pattern) for b, ok in enumerate(row)]


def test_bootstrap_interval_is_the_2_5_and_97_5_percentiles_of_resampled_runs() -> None:
    short = [[True] * 5] * 6
    long_ = [[True] * 5, [True, False, True, False, True], [False] * 5, [True] * 5, [True, True, False, False, False],
             [False, True, False, True, False]]
    an = analyse(_runs(1000, 5, short) + _runs(2000, 5, long_), bootstrap=200, seed=5)
    # by hand: resample the 6 runs with the same generator; CSI(2000) = 1 - A(2000) per draw
    rng = np.random.default_rng(5)
    right = np.array([sum(r) for r in long_], float)
    draws = []
    for _ in range(200):
        w = rng.multinomial(6, np.full(6, 1 / 6)).astype(float)
        draws.append(max(0.0, round(1.0 - float(w @ right) / (5 * w.sum()), 9)))
    csi = an.metric("CSI", "robust", 2000)
    assert csi.value == pytest.approx(1 - right.sum() / 30)
    assert (csi.lo, csi.hi) == pytest.approx((np.percentile(draws, 2.5), np.percentile(draws, 97.5)))
    assert csi.undefined == 0.0


def test_a_point_on_the_edge_of_its_interval_is_noted() -> None:
    # both lengths 50% right overall, in opposite runs: CSI(2000) is 0 at the point, > 0 in many resamples
    a = [[True] * 4, [False] * 4] * 3
    b = [[False] * 4, [True] * 4] * 3
    an = analyse(_runs(1000, 4, a) + _runs(2000, 4, b), bootstrap=100, seed=2)
    csi = an.metric("CSI", "robust", 2000)
    assert csi.value == 0.0 and csi.lo == 0.0 and csi.hi > 0.0
    assert csi.note is not None and csi.note.startswith("point on the edge of its interval")


def test_edge_notes_inside_an_interval_around_zero() -> None:
    assert _edge_note(0.0, -0.5, 0.5, [0.0, 0.1]) is None
    assert _edge_note(0.25, -0.25, 0.5, [0.0, 0.1]) is None


def test_muc_none_in_a_resample_counts_as_below_the_shortest_length() -> None:
    an = analyse(needles(1000, 5, [0] * 5) + needles(2000, 5, [0] * 5), bootstrap=20)
    muc = an.metric("MUC", "robust")
    assert muc.value is None and (muc.lo, muc.hi) == (0.0, 0.0) and muc.undefined == 0.0


def test_a_post_metric_na_in_every_resample_is_undefined_not_zero() -> None:
    an = analyse(needles(1000, 100, [4] * 100, exact=True, unit="tokens"), bootstrap=5)
    csi = an.metric("CSI", "post", 1000)
    assert csi.value is None and csi.undefined == 1.0 and csi.lo is None and csi.hi is None
    adi = an.metric("ADI", "post", 1000)
    assert adi.undefined == 0.0 and adi.lo is not None


def test_post_metrics_use_the_exact_verdict_not_the_lenient_one() -> None:
    rows = [NeedleResult(1000, 1000, 100, run, b, (b + 0.5) / 100, f"r{run}b{b}", "correct", False)
            for run in range(2) for b in range(100)]  # right by ctxprobe's reading, wrong by the post's
    an = analyse(rows, bootstrap=0)
    assert an.metric("LCRDS", "robust", 1000).value == pytest.approx(100.0)
    assert an.metric("ADI", "robust", 1000).value == 0.0
    assert an.metric("ADI", "post", 1000).value == 1.0  # all wrong: a zero peak counts as a full drop


def test_entries_are_averaged_per_length() -> None:
    an = analyse(needles(1000, 5, [4] * 5, entries=800) + needles(2000, 5, [4] * 5, entries=1600), bootstrap=0)
    assert an.entries == {1000: 800.0, 2000: 1600.0}


def test_a_length_without_the_reference_n_has_no_robust_metrics() -> None:
    an = analyse(needles(1000, 5, [4] * 5) + needles(1000, 10, [4] * 10) + needles(2000, 5, [2] * 5)
                 + needles(3000, 10, [2] * 10), bootstrap=0)
    assert an.metric("CSI", "robust", 1000).value == 0.0
    with pytest.raises(KeyError):
        an.metric("CSI", "robust", 2000)
    assert an.metric("CSI", "robust", 3000).value == 0.5  # a length after the gap still has its metrics
    assert an.metric("MUC", "robust").value == 1000


def test_results_are_immutable() -> None:
    import dataclasses

    an = analyse(needles(1000, 5, [4] * 5), bootstrap=0)
    d = paired_difference(needles(1000, 5, [4] * 5), needles(1000, 5, [2] * 5), bootstrap=0)
    for obj, attr in ((needles(1000, 1, [1])[0], "outcome"), (an.bins[0], "mean"), (an.metrics[0], "value"),
                      (d, "diff")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(obj, attr, None)


def test_muc_none_at_the_point_with_qualifying_resamples_is_on_the_edge() -> None:
    # bin 4 right in 3 of 5 runs (0.6 < 0.8): no MUC at the point, 1000 in resamples that
    # draw the right runs more often
    rows = _runs(1000, 5, [[True] * 5] * 3 + [[True] * 4 + [False]] * 2)
    an = analyse(rows, bootstrap=100, seed=4)
    muc = an.metric("MUC", "robust")
    assert muc.value is None and (muc.lo, muc.hi) == (0.0, 1000.0)
    assert muc.note is not None and muc.note.startswith("point on the edge of its interval")


def test_edge_note_boundaries_and_a_degenerate_interval_of_distinct_floats() -> None:
    assert _edge_note(-1e-9, 0.0, 0.5, [0.0, 0.5]).startswith("point on the edge")  # within 1e-9: on the edge
    assert _edge_note(float("0.3"), float("0.3"), float("0.3"), [0.3, 0.3]) is None


def test_drops_read_float_noise_as_zero_and_nan_as_unmeasured() -> None:
    from ctxprobe.families.phonebook.analysis import _drop, _fall

    assert _drop(0.5, 0.5 - 1.23e-9) == 1e-9  # rounded to 9 places
    assert _drop(0.5, 0.5 + 1e-12) == 0.0
    assert np.isnan(_drop(float("nan"), 0.5)) and np.isnan(_drop(0.5, float("nan")))
    assert _fall(np.array([0.5, 0.5 - 1.5e-10, 0.5])) == 0.0
    assert _fall(np.array([0.9, float("nan"), 0.4])) == 0.5
    assert _fall(np.array([0.9, 0.5 - 1.234e-9])) == round(0.4 + 1.234e-9, 9)


def test_defaults_are_1000_resamples_with_seed_0() -> None:
    a, b = needles(1000, 5, [2, 3, 1, 4, 2]), needles(1000, 5, [4, 4, 2, 4, 3])
    assert paired_difference(a, b) == paired_difference(a, b, bootstrap=1000, seed=0)
    rows = needles(1000, 5, [4, 3, 2, 1, 0]) + needles(2000, 5, [3, 3, 1, 1, 0])
    assert analyse(rows).metrics == analyse(rows, bootstrap=1000, seed=0).metrics
    # and 5 coarse bins, a bar of 0.8, a degree-3 fit
    rows = needles(1000, 10, [4, 3, 2, 1, 0, 4, 4, 3, 2, 4]) + needles(2000, 10, [3, 3, 1, 1, 0, 2, 4, 4, 1, 0])
    got = analyse(rows, bootstrap=0)
    assert got.metrics == analyse(rows, coarse=5, bar=0.8, bootstrap=0).metrics
    assert got.metrics != analyse(rows, coarse=6, bootstrap=0).metrics  # the coarse bins matter
    assert got.fits == analyse(rows, degree=3, bootstrap=0).fits


def test_a_lost_shard_skips_only_its_own_run() -> None:
    own, other = [True, False], [False, True]
    recs = [
        _rec(1000, 1, ["correct", "correct"], shard=0, shards=2, in_shard=own),  # run 1 lost shard 1
        _rec(1000, 2, ["correct", "correct"], shard=0, shards=2, in_shard=own),
        _rec(1000, 2, ["correct", "correct"], shard=1, shards=2, in_shard=other),
    ]
    assert [(r.run, r.outcome) for r in needle_results(stub_records(recs))] == [(2, "correct"), (2, "correct")]


def test_a_shard_that_rightly_said_not_found_does_not_hide_one_that_answered_wrong() -> None:
    # three shards; the needle belongs to shard 0, which is right; shard 1 rightly says not
    # found ("correct" for a name outside it), shard 2 answers a number: wrong overall
    import json

    recs = json.loads(json.dumps([_rec(1000, 0, [o], shard=s, shards=3, in_shard=[s == 0])
                                  for s, o in enumerate(["correct", "correct", "distractor"])]))
    assert [r.outcome for r in needle_results(stub_records(recs))] == ["distractor"]


def test_records_and_lookups_read_back_from_json() -> None:
    """Families and variants arrive as equal strings, not the literals."""
    import json

    rec = json.loads(json.dumps(_rec(1000, 0, ["correct", "wrong"])))
    assert [r.outcome for r in needle_results(stub_records([rec]))] == ["correct", "wrong"]
    assert [r.correct for r in needle_results(stub_records([rec]))] == [True, False]
    an = analyse(needles(1000, 5, [4] * 5), bootstrap=0)
    assert an.metric(json.loads('"ADI"'), json.loads('"robust"'), json.loads("1000")).value == 0.0
    unit = json.loads('"entries"')
    post = analyse(needles(1000, 100, [4] * 100, exact=True, unit=unit), bootstrap=0)
    assert post.metric("CSI", "post", 1000).value == pytest.approx(0.0, abs=1e-9)  # entries: CSI defined
    other = json.loads(json.dumps(_rec(1000, 1, ["correct"], family="vartrack")))
    assert needle_results(stub_records([other])) == []


def test_small_helpers_at_their_edges() -> None:
    from ctxprobe.families.phonebook.analysis import MetricValue, _fall

    assert _fall(np.array([float("nan")] * 3)) == 0.0  # nothing measured: no drop
    assert MetricValue("ADI", "robust", 1000, 0.1, 0.0, 0.2).undefined == 0.0
    assert "50% of resamples equal it" in _edge_note(0.0, 0.0, 0.5, [1e-9, 0.5])  # 1e-9 away counts as equal


def test_coarse_bins_do_not_depend_on_the_length() -> None:
    """Five coarse position ranges whatever the length (even one shorter than five)."""
    bins = [4, 4, 4, 4, 3, 3, 2, 2, 4, 4]
    an = analyse(needles(3, 10, bins), bootstrap=0)
    assert an.metric("ADI", "robust", 3).value == pytest.approx(fall(coarse_means(bins)))


def test_a_single_measured_bin_fits_a_constant() -> None:
    rows = [r for r in needles(1000, 5, [4, 3, 2, 1, 0]) if r.bin == 1]
    assert analyse(rows, bootstrap=0).fits[(1000, 5)] == pytest.approx([0.75])


def test_paired_difference_interval_is_the_2_5_and_97_5_percentiles_by_hand() -> None:
    a = needles(1000, 5, [2, 2, 2, 2, 2])
    b = needles(1000, 5, [4, 3, 1, 4, 2])
    d = paired_difference(a, b, bootstrap=300, seed=7)
    per_run = np.zeros((RUNS, 3))  # needles, right in a, right in b
    right_a = {(r.run, r.bin): r.correct for r in a}
    for r in b:
        per_run[r.run] += (1.0, float(right_a[(r.run, r.bin)]), float(r.correct))
    rng = np.random.default_rng(7)
    diffs = []
    for _ in range(300):
        w = rng.multinomial(RUNS, np.full(RUNS, 1 / RUNS))
        n, sa, sb = w @ per_run
        diffs.append((sb - sa) / n)
    assert (d.lo, d.hi) == pytest.approx((np.percentile(diffs, 2.5), np.percentile(diffs, 97.5)))


def _sometimes_unmeasured() -> list[NeedleResult]:
    """2000 has needles in run 0 only: a resample without run 0 cannot measure it."""
    return needles(1000, 5, [4, 3, 2, 1, 0]) + [r for r in needles(2000, 5, [1] * 5) if r.run == 0]


def test_the_undefined_share_is_a_fraction_of_the_resamples() -> None:
    csi = analyse(_sometimes_unmeasured(), bootstrap=200, seed=1).metric("CSI", "robust", 2000)
    assert 0.1 < csi.undefined < 0.6  # P(no run 0 in 4 draws) = (3/4)^4 = 0.32
    # and the default is 1000 resamples: the share has 1000 as its denominator
    default = analyse(_sometimes_unmeasured()).metric("CSI", "robust", 2000)
    assert default == analyse(_sometimes_unmeasured(), bootstrap=1000, seed=0).metric("CSI", "robust", 2000)
    assert round(default.undefined * 1000, 6) == int(round(default.undefined * 1000))


def test_several_wrong_shards_give_the_first_ones_label() -> None:
    recs = [_rec(1000, 0, [o], shard=s, shards=3, in_shard=[s == 0])
            for s, o in enumerate(["correct", "distractor", "wrong"])]
    assert [r.outcome for r in needle_results(stub_records(recs))] == ["distractor"]
    # the owner's own failure stands, whatever the other shards said
    recs = [_rec(1000, 0, [o], shard=s, shards=2, in_shard=[s == 0]) for s, o in enumerate(["wrong", "distractor"])]
    assert [r.outcome for r in needle_results(stub_records(recs))] == ["wrong"]


def test_post_metrics_see_partial_bin_accuracy() -> None:
    rows = needles(1000, 100, [2] * 100, exact=True) + needles(1000, 10, [2] * 10, exact=True)
    an = analyse(rows, bootstrap=0)
    assert an.metric("LCRDS", "post", 1000).value == pytest.approx(50.0)  # flat 0.5: no drops, half right


def test_edge_note_at_exactly_1e9_above_the_interval() -> None:
    assert _edge_note(1e-9, -0.5, 0.0, [0.0, -0.5]).startswith("point on the edge")


def test_entries_average_every_result_of_a_length() -> None:
    rows = needles(int("1000"), 5, [4] * 5, entries=800) + needles(int("1000"), 10, [4] * 10, entries=1200)
    assert analyse(rows, bootstrap=0).entries == {1000: pytest.approx((800 * 20 + 1200 * 40) / 60)}


def _varied(seed: int) -> list[NeedleResult]:
    rng = np.random.default_rng(seed)
    return _runs(1000, 10, [list(rng.random(10) < p) for p in np.linspace(0.05, 0.95, 40)])


def test_paired_difference_on_many_runs() -> None:
    a, b = _varied(1), _varied(2)
    d = paired_difference(a, b)
    assert d == paired_difference(a, b, bootstrap=1000, seed=0)  # the defaults
    assert d != paired_difference(a, b, bootstrap=1000, seed=1)  # (so a different seed would show)
    assert d != paired_difference(a, b, bootstrap=999, seed=0) != paired_difference(a, b, bootstrap=1001, seed=0)
    right_a = sum(r.correct for r in a) / len(a)
    right_b = sum(r.correct for r in b) / len(b)
    assert (d.mean_a, d.mean_b, d.diff) == pytest.approx((right_a, right_b, right_b - right_a))
    weak = paired_difference(needles(1000, 5, [1] * 5), needles(1000, 5, [4] * 5), bootstrap=0)
    assert weak.diff == pytest.approx(0.75)  # 5 right of 20 against 20 of 20
    # the interval: percentiles 2.5 and 97.5 of the per-run resampled differences
    per_run = np.zeros((40, 3))
    right = {(r.run, r.bin): r.correct for r in a}
    for r in b:
        per_run[r.run] += (1.0, float(right[(r.run, r.bin)]), float(r.correct))
    rng = np.random.default_rng(0)
    diffs = []
    for _ in range(1000):
        n, sa, sb = rng.multinomial(40, np.full(40, 1 / 40)) @ per_run
        diffs.append((sb - sa) / n)
    assert (d.lo, d.hi) == pytest.approx((np.percentile(diffs, 2.5), np.percentile(diffs, 97.5)))


def test_a_one_bin_configuration_is_missing_not_a_crash() -> None:
    """N = 1 gives one position bin, through which the post's cubic fit draws nothing (numpy:
    "SVD did not converge", once the crash of a small `phonebook --needles 1,2` grid): it counts
    as missing, and two bins (the boundary) are fitted."""
    from ctxprobe.families.phonebook.analysis_post import post_metrics

    one = post_metrics({(1000, 1): [1.0], (1000, 100): [1.0] * 10}, in_entries=True)
    assert one[("CSI", 1000)].value is not None  # N = 100 is there; the one-bin N = 1 is left out
    two = post_metrics({(1000, 2): [1.0, 0.0], (1000, 100): [1.0] * 10}, in_entries=True)
    assert two[("CSI", 1000)].value is not None
