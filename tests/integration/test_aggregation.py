"""aggregation (common-words, frequent-words) through the real pipeline, with an independent
recount of every exported prompt's words."""

from __future__ import annotations

import math
import re
from collections import Counter

import pytest

from ctxprobe.errors import CtxprobeError
from ctxprobe.haystack import prose_sentences
from ctxprobe.store import iter_export
from ctxprobe.report.load import load_report
from ctxprobe.spec import make_spec
from ctxprobe.sweep.run import run_sweep
from ctxprobe.core.case import Cell
from ctxprobe.haystack.context import BuildContext
from ctxprobe.core.family_lookup import make_family, validate_params
from ctxprobe.tokenizers import resolve_tokenizer

VARIANTS = {"cwe": {"variant": "common-words", "top": 5}, "fwe": {"variant": "frequent-words"}}


def _sweep(model: str, store, params: dict, lengths: str = "512,1k,2k"):
    spec = make_spec({"model": model, "tokenizer": "local", "lengths": lengths, "depths": "0,0.5,1",
                      "reps": 2, "families": {"aggregation": params}})
    result = run_sweep(spec, store, progress=False)
    return result.run_id, load_report(result.run_id, store)


@pytest.fixture(scope="module")
def perfect_runs(tmp_path_factory):
    runs = {}
    for name, params in VARIANTS.items():
        store = tmp_path_factory.mktemp(name) / "s.sqlite"
        run_id, report = _sweep("sim:perfect", store, params)
        runs[name] = (run_id, report, store)
    return runs


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_perfect_scores_one_everywhere(perfect_runs, variant) -> None:
    _, report, _ = perfect_runs[variant]
    cells = report.profiles[0].cells
    assert len(cells) == 9 and all(c.mean == 1.0 and c.n == 2 for c in cells)


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_echo_scores_zero(tmp_path, variant) -> None:
    _, report = _sweep("sim:echo", tmp_path / "e.sqlite", VARIANTS[variant], "512,2k")
    assert all(c.mean == 0.0 for c in report.profiles[0].cells)


def test_common_words_fail_when_blind_where_they_cluster(tmp_path) -> None:
    run_id, _ = _sweep("sim:blind-middle", tmp_path / "b.sqlite", VARIANTS["cwe"])
    by_depth: dict[float, list[float]] = {}
    for r in iter_export(run_id, tmp_path / "b.sqlite"):
        by_depth.setdefault(r["depth"], []).append(r["score"])
    assert max(by_depth[0.5]) == 0.0  # the common words sit in the unseen middle half
    assert sum(by_depth[1.0]) > 0 and sum(by_depth[0.0]) > 0


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_exact_budget_and_independent_recount(perfect_runs, variant) -> None:
    run_id, _, store = perfect_runs[variant]
    tok = resolve_tokenizer("local")
    filler_words = {w for s in _take(prose_sentences(0), 3000) for w in re.findall(r"[a-z]+", s.lower())}
    recs = list(iter_export(run_id, store))
    assert len(recs) == 18
    for rec in recs:
        recount = tok.count_chat(rec["messages"])
        assert recount == rec["token_count"] <= rec["length"]
        content = rec["messages"][-1]["content"]
        instruction, words_text, question = content.split("\n\n")
        words = words_text.split(" ")
        longest = max(tok.count(" " + w) for w in set(words))
        assert rec["length"] - recount <= max(math.ceil(0.01 * rec["length"]), longest)
        counts = Counter(words)
        k = int(re.search(r"the (\d+) most frequent", question).group(1))
        ranked = counts.most_common()
        assert ranked[k - 1][1] > ranked[k][1], "the true top-k must be unambiguous"
        assert set(rec["expected"]) == {w for w, _ in ranked[:k]}
        # list words never occur outside the list, nor in the filler vocabulary
        outside = set(re.findall(r"[a-z]+", (instruction + " " + question).lower()))
        assert not outside & set(counts)
        assert not filler_words & set(counts)
        assert rec["score"] == 1.0 and rec["detail"]["exact"]


def _take(it, n):
    return [next(it) for _ in range(n)]


def _case(params: dict, length: int = 2048, depth: float = 0.5):
    tok = resolve_tokenizer("local")
    fam = make_family("aggregation", BuildContext(tok, None))
    return fam, fam.generate(Cell("aggregation", length, depth), 0, seed=9, params=validate_params("aggregation", params))


def test_listing_many_list_words_is_not_full_credit() -> None:
    fam, case = _case(VARIANTS["cwe"])
    ranked = [w for w, _ in case.meta["ranked"]]
    everything = fam.score(case, ", ".join(ranked))
    assert everything.outcome == "partial" and everything.score < 0.7
    assert fam.score(case, ", ".join(ranked[5:10])).outcome == "distractor"
    assert fam.score(case, "The most frequent are " + ", ".join(case.expected)).outcome == "correct"


def test_depth_moves_the_common_words() -> None:
    shares = [_case(VARIANTS["cwe"], depth=d)[1].realised_depth for d in (0.0, 0.5, 1.0)]
    assert shares[0] < 0.35 < shares[1] < 0.65 < shares[2]
    uniform = [_case({**VARIANTS["cwe"], "window": 1.0}, depth=d)[1].realised_depth for d in (0.0, 1.0)]
    assert all(0.4 < s < 0.6 for s in uniform)


def test_bad_parameters_and_short_lengths_are_user_errors() -> None:
    with pytest.raises(CtxprobeError, match="frequent-words"):
        validate_params("aggregation", {"alpha": 1.5})
    with pytest.raises(CtxprobeError, match="rare_freq"):
        validate_params("aggregation", {"rare_freq": 30, "common_freq": 30})
    with pytest.raises(CtxprobeError, match="too short"):
        _case({"variant": "common-words", "top": 40}, length=512)
