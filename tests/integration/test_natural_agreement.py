"""Synthetic vs natural on sims with known cliffs: a natural run (the shipped example's
documents) and a synthetic run (niah) of one sim agree; when the natural reading fails
earlier (a sim whose cliff is shorter on the natural run) they do not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxprobe.cli import main
from ctxprobe.analysis.grid import LengthStat, Profile
from ctxprobe.analysis.natural import agreement, natural_vs_synthetic, two_proportion_p
from ctxprobe.report.html.natural import natural_section
from ctxprobe.report.load import load_report
from ctxprobe.spec import make_spec
from ctxprobe.sweep.run import run_sweep

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "natural"
LENGTHS = "1k,2k,4k"


def _profile(model: str, families: dict, store: Path):
    spec = make_spec({"model": model, "tokenizer": "local", "lengths": LENGTHS, "depths": "0.2,0.8", "reps": 15,
                      "families": families})
    result = run_sweep(spec, store, progress=False)
    return load_report(result.run_id, store)


def _documents(filler: str = "documents") -> dict:
    return {"documents": {"docs": str(EXAMPLE / "docs"), "qa": str(EXAMPLE / "qa.jsonl"), "filler": filler}}


class _View:
    def __init__(self, report, label: str) -> None:
        self.report, self.label = report, label

    @property
    def profiles(self):
        return self.report.profiles


def test_same_cliff_agrees_and_an_earlier_natural_cliff_does_not(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    # decay cliff at 3000 tokens, no width: 1K and 2K pass, 4K fails, for both kinds of case
    natural = _profile("sim:decay?cliff=3000&width=0", _documents(), store)
    synthetic = _profile("sim:decay?cliff=3000&width=0", {"niah": {}}, store)
    (same,) = natural_vs_synthetic([*natural.profiles, *synthetic.profiles])
    assert same.natural_effective_length == same.synthetic_effective_length == 2048
    assert same.agree, same.to_dict()
    # the natural reading fails from 1.5K on, the synthetic one from 3K
    early = _profile("sim:decay?cliff=1500&width=0", _documents(), store)
    (differ,) = natural_vs_synthetic([*early.profiles, *synthetic.profiles])
    assert not differ.agree and [c.length for c in differ.lengths if c.differs] == [2048]
    section = natural_section([_View(early, "natural"), _View(synthetic, "synthetic")])
    assert section is not None and "disagree: natural lower at 2K (two-proportion test" in section.text
    # the run's JSON carries the comparison when both kinds are in one run
    both = _profile("sim:decay?cliff=3000&width=0", {**_documents(), "niah": {}}, store)
    (entry,) = json.loads(json.dumps(both.to_dict()))["natural_vs_synthetic"]
    assert entry["agree"] is True and entry["natural"] == "documents" and entry["synthetic"] == "niah"
    # the HTML page of the two disagreeing runs carries the section (registered in report_sections)
    page = tmp_path / "page.html"
    assert main(["report", early.run.run_id, synthetic.run.run_id, "--store", str(store), "--html", str(page),
                 "--no-plots"]) == 0
    html = page.read_text()
    assert "Synthetic vs natural" in html and "disagree: natural lower at 2K" in html


def _stat(length: int, n: int, mean: float) -> LengthStat:
    return LengthStat("x", length, n, mean, 0.0, 1.0)


def test_two_proportion_test_and_the_bonferroni_rule() -> None:
    # 20/20 vs 10/20: z = 0.5 / sqrt(0.75 * 0.25 * 0.1) = 3.651..., p = erfc(z / sqrt 2)
    assert two_proportion_p(20, 20, 10, 20) == pytest.approx(0.000261, abs=2e-6)
    assert two_proportion_p(5, 10, 5, 10) == 1.0 and two_proportion_p(0, 0, 1, 1) == 1.0
    nat = Profile("documents", 0.856, None, [_stat(1024, 20, 1.0), _stat(2048, 20, 0.7)], [])
    syn = Profile("niah", 0.856, None, [_stat(1024, 20, 1.0), _stat(2048, 20, 1.0)], [])
    # 14/20 vs 20/20: pooled 0.85, z = 0.3 / sqrt(0.85 * 0.15 * 0.1) = 2.657, p = 0.00789:
    # below the Bonferroni bar 0.05 / 2 = 0.025, so that length differs
    assert two_proportion_p(14, 20, 20, 20) == pytest.approx(0.00789, abs=1e-5)
    assert not agreement(nat, syn).agree
    # with alpha 0.01 the Bonferroni bar is 0.005: 0.0084 no longer differs
    assert agreement(nat, syn, alpha=0.01).agree


def test_agree_says_what_difference_could_go_unseen() -> None:
    """"agree" over few cases is weak: the verdict gives the difference the test sees with
    80% power at the smallest common case count. By hand: 6 cases a side, 3 lengths, alpha
    0.05/3: z(1 - 0.05/6) = 2.394, z(0.8) = 0.8416, × sqrt(0.25 × (1/6 + 1/6)) = 0.2887 → 0.934."""
    from ctxprobe.analysis.natural import detectable_difference

    assert detectable_difference(6, 6, 0.05 / 3) == pytest.approx(0.934, abs=1e-3)
    assert detectable_difference(200, 200, 0.05) == pytest.approx(0.140, abs=1e-3)
    assert detectable_difference(1, 1, 0.05) == 1.0 and detectable_difference(0, 5, 0.05) == 1.0
    nat = Profile("documents", 0.856, None, [_stat(L, 6, 1.0) for L in (1024, 2048, 4096)], [])
    syn = Profile("niah", 0.856, None, [_stat(L, 6, 1.0) for L in (1024, 2048, 4096)], [])
    verdict = agreement(nat, syn).verdict()
    assert verdict.startswith("agree: no length differs") and "with 6 cases a side" in verdict
    assert "under about 0.93 can go unseen" in verdict
    many = agreement(Profile("documents", 0.856, None, [_stat(1024, 400, 1.0), _stat(2048, 6, 1.0)], []),
                     Profile("niah", 0.856, None, [_stat(1024, 400, 1.0), _stat(2048, 400, 1.0)], []))
    assert many.smallest_n == 6 and many.detectable == pytest.approx(detectable_difference(6, 400, 0.025))
    assert agreement(nat, syn).to_dict()["detectable_difference"] == pytest.approx(0.934, abs=1e-3)


@pytest.mark.parametrize("n", [30, 100])
def test_the_detectable_difference_is_seen_four_times_in_five(n: int) -> None:
    """Known truth: natural and synthetic accuracies d apart around 0.5, n cases a side,
    one length: the test at alpha 0.05 flags the difference in about 80% of 4,000 draws."""
    import numpy as np

    from ctxprobe.analysis.natural import detectable_difference

    d = detectable_difference(n, n, 0.05)
    rng = np.random.default_rng(7)
    a = rng.binomial(n, 0.5 - d / 2, 4000)
    b = rng.binomial(n, 0.5 + d / 2, 4000)
    power = float(np.mean([two_proportion_p(int(x), n, int(y), n) < 0.05 for x, y in zip(a, b)]))
    assert 0.75 <= power <= 0.86, power
