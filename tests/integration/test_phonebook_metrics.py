"""phonebook metrics through the real pipeline with sims whose behaviour is known exactly."""

from __future__ import annotations

import numpy as np
import pytest

from ctxprobe.families.phonebook.analysis import analyse, needle_results, paired_difference
from ctxprobe.sim.model import view_prompt
from ctxprobe.store import iter_records
from ctxprobe.sweep.run import run_sweep
from ctxprobe.families.phonebook.task_grid import phonebook_spec

CLIFF, WIDTH, SLOPE = 1024, 4096, 0.6


def _run(tmp_path, model, name="s", **kw):
    store = tmp_path / f"{name}.sqlite"
    args = {"lengths": ["1k", "3k"], "needles": [10, 20], "runs": 4, "tokenizer": "local", **kw}
    result = run_sweep(phonebook_spec(model=model, **args), store, progress=False)
    recs = list(iter_records(result.run_id, store))
    return recs, needle_results(recs)


def test_perfect_is_flat_and_full(tmp_path) -> None:
    _, results = _run(tmp_path, "sim:perfect")
    an = analyse(results, bootstrap=50)
    assert all(b.mean == 1.0 for b in an.bins) and len(an.bins) == 2 * (10 + 20)
    for length in an.lengths:
        for name in ("CSI", "ADI", "NOI"):
            assert an.metric(name, "robust", length).value == 0.0
        assert an.metric("RRS", "robust", length).value == 1.0
        assert an.metric("LCRDS", "robust", length).value == pytest.approx(100.0)
    assert an.metric("MUC", "robust").value == max(an.lengths)
    # the post's metrics need N=100: n/a, with the reason, not a number
    post = [m for m in an.metrics if m.variant == "post"]
    assert post and all(m.value is None and "N=100" in (m.note or "") for m in post)


def test_echo_scores_zero(tmp_path) -> None:
    recs, results = _run(tmp_path, "sim:echo")
    an = analyse(results, bootstrap=20)
    assert all(b.mean == 0.0 for b in an.bins) and all(r["score"] == 0.0 for r in recs)
    assert an.metric("MUC").value is None


def _expected_p(rec) -> list[float]:
    """P(correct) of each needle from sim:decay's documented definition, by hand."""
    n = rec["token_count"]
    p_len = 1.0 if n <= CLIFF else max(0.0, 1.0 - (n - CLIFF) / WIDTH)
    context = view_prompt(rec["messages"]).context
    return [p_len * max(0.0, 1.0 - SLOPE * context.find(name) / len(context)) for name in rec["meta"]["names"]]


def _hand_metrics(recs) -> dict[tuple[str, int], float]:
    """Robust metrics of the expected accuracies (independent of the analysis code)."""
    per: dict[tuple[int, int], list[list[float]]] = {}
    for rec in recs:
        per.setdefault((rec["length"], rec["meta"]["needles"]), []).append(_expected_p(rec))
    total = {k: float(np.mean(v)) for k, v in per.items()}
    lengths = sorted({k[0] for k in per})
    out = {}
    for L in lengths:
        by_bin = np.mean(per[(L, 20)], axis=0)  # expected accuracy of each of the 20 bins
        coarse = [float(np.mean(by_bin[4 * i: 4 * i + 4])) for i in range(5)]
        adi = max(coarse[i] - min(coarse[i:]) for i in range(5))
        csi = max(0.0, total[(lengths[0], 20)] - total[(L, 20)])
        noi = max(0.0, total[(L, 10)] - total[(L, 20)])
        rrs = 1 - (adi + csi + noi) / 3
        out.update({("ADI", L): adi, ("CSI", L): csi, ("NOI", L): noi, ("RRS", L): rrs,
                    ("LCRDS", L): 100 * total[(L, 20)] * rrs})
    return out


def test_decay_with_known_slope_matches_hand_values(tmp_path) -> None:
    model = f"sim:decay?cliff={CLIFF}&width={WIDTH}&slope={SLOPE}"
    recs, results = _run(tmp_path, model, runs=25, lengths=["1k", "2k"])
    an = analyse(results, bootstrap=300, seed=1)
    hand = _hand_metrics(recs)
    assert hand[("CSI", 2048)] > 0.1 and hand[("ADI", 2048)] > 0.15  # the sim really decays
    for (name, L), value in hand.items():
        m = an.metric(name, "robust", L)
        assert m.lo is not None and m.hi is not None
        slack = 2.0 if name == "LCRDS" else 0.02  # percentile ends of a discrete bootstrap
        assert m.lo - slack <= value <= m.hi + slack, (name, L, value, m)


def test_paired_layout_comparison_on_the_same_books(tmp_path) -> None:
    kw = {"entries": [60], "lengths": None, "needles": [10], "runs": 3}
    _, a = _run(tmp_path, "sim:perfect", "a", **kw)
    _, b = _run(tmp_path, "sim:blind-middle", "b", layout={"repeat_instructions": True}, method="ctxprobe", **kw)
    diff = paired_difference(a, b, bootstrap=200)
    assert diff.pairs == 30 and diff.mean_a == 1.0
    assert diff.diff < 0 and diff.hi < 0
