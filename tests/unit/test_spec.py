from __future__ import annotations

import pytest

from ctxprobe.errors import CtxprobeError
from ctxprobe.spec import load_spec, make_spec, parse_length


@pytest.mark.parametrize("text,expected", [("4k", 4096), ("128K", 131072), ("4096", 4096), ("1.5k", 1536),
                                           ("1m", 1048576), (" 12k ", 12288), (4000, 4000)])
def test_parse_length(text: str, expected: int) -> None:
    assert parse_length(text) == expected


@pytest.mark.parametrize("text", ["abc", "4kk", "-1", "0", "k"])
def test_bad_length(text: str) -> None:
    with pytest.raises(CtxprobeError):
        parse_length(text)


def test_lengths_sorted_and_depths_validated() -> None:
    spec = make_spec({"lengths": "8k,1k,2k", "depths": "1,0,0.5"})
    assert spec.lengths == [1024, 2048, 8192]
    assert spec.depths == [0.0, 0.5, 1.0]


@pytest.mark.parametrize("data,fragment", [
    ({"modle": "local"}, "unknown spec key 'modle'"),
    ({"depths": [0.5, 1.2]}, "outside [0, 1]"),
    ({"reps": 0}, "reps"),
    ({"lengths": "1k,1k"}, "repeat"),
    ({"decoding": {"max_tokens": 10, "top_q": 1}}, "unknown spec key 'decoding.top_q'"),
])
def test_bad_spec_is_one_line(data: dict, fragment: str) -> None:
    with pytest.raises(CtxprobeError) as info:
        make_spec(data)
    assert fragment in str(info.value)
    assert "\n" not in str(info.value)


def test_run_id_ignores_transport_but_not_results() -> None:
    # reps given: the bar only reads the results (the default reps follow the bar: see below)
    a = make_spec({"lengths": "1k", "concurrency": 1, "timeout": 5, "threshold": 0.5, "reps": 5})
    b = make_spec({"lengths": "1k", "concurrency": 8, "retries": 0})
    c = make_spec({"lengths": "1k", "seed": 1})
    ids = [s.run_id(tokenizer="local", version="1") for s in (a, b, c)]
    assert ids[0] == ids[1]
    assert ids[0] != ids[2]
    assert a.run_id(tokenizer="local", version="1") != a.run_id(tokenizer="hf:/x", version="1")


def test_default_reps_are_the_smallest_grid_that_can_show_the_bar() -> None:
    """No reps given: 24 all-correct cases a length show 0.856 at 95% (23 cannot), so 5 reps over
    the 5 default depths, 24 over one depth, 8 over three; the value is stored, so a spec read back
    (a resume) keeps its id, and a bar that needs more cases is a bigger grid (a new run)."""
    default = make_spec({"lengths": "1k"})
    assert default.reps == 5 and len(default.depths) == 5
    assert make_spec({"depths": "0.5"}).reps == 24 and make_spec({"depths": "0,0.5,1"}).reps == 8
    assert make_spec({"depths": "0,0.5,1", "reps": 2}).reps == 2  # given: kept
    again = make_spec(default.model_dump())
    assert again.reps == 5 and again.run_id(tokenizer="local", version="1") == default.run_id(tokenizer="local", version="1")
    assert make_spec({"threshold": 0.9, "depths": "0.5"}).reps == 36  # 0.025^(1/36) = 0.903 >= 0.9 > 0.025^(1/35)
    assert make_spec({"bars": "niah=0.9", "depths": "0.5"}).reps == 36  # the strictest bar of the families run
    assert make_spec({"bars": "other=0.9", "depths": "0.5"}).reps == 24  # a bar of a family not run: not used
    assert make_spec({"threshold": 1.0}).reps == 3  # no grid can show a bar of 1: the old default


def test_yaml_spec_and_errors(tmp_path) -> None:
    good = tmp_path / "s.yaml"
    good.write_text("model: sim:perfect\nlengths: [1k, 2k]\nfamilies: {niah: {distractors: 2}}\n")
    spec = load_spec(good, {"reps": 2})
    assert spec.model == "sim:perfect" and spec.lengths == [1024, 2048] and spec.reps == 2
    assert spec.families == {"niah": {"distractors": 2}}
    assert make_spec({"families": "niah, vartrack"}).families == {"niah": {}, "vartrack": {}}
    bad = tmp_path / "bad.yaml"
    bad.write_text("model: [unclosed\n")
    with pytest.raises(CtxprobeError, match="not valid YAML"):
        load_spec(bad)
    with pytest.raises(CtxprobeError, match="cannot read spec"):
        load_spec(tmp_path / "missing.yaml")
    lst = tmp_path / "list.yaml"
    lst.write_text("- a\n- b\n")
    with pytest.raises(CtxprobeError, match="mapping"):
        load_spec(lst)


def test_run_id_follows_the_content_of_user_files(tmp_path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_text("Some text. More text.")
    spec = make_spec({"haystack": str(corpus)})
    before = spec.run_id(tokenizer="local", version="1")
    assert spec.run_id(tokenizer="local", version="1") == before
    (corpus / "a.txt").write_text("Other text. More text.")
    assert spec.run_id(tokenizer="local", version="1") != before


def test_baseline_and_reasoning_budgets_are_refused_together_but_each_alone_is_taken() -> None:
    base = {"model": "sim:reasoner", "lengths": [1024]}
    with pytest.raises(CtxprobeError, match="--baseline cannot be combined with --reasoning-budgets"):
        make_spec({**base, "baseline": "no-context", "reasoning_budgets": [0, 1024]})
    assert make_spec({**base, "baseline": "no-context"}).baseline == "no-context"
    assert make_spec({**base, "reasoning_budgets": [0, 1024]}).reasoning_budgets == [0, 1024]
