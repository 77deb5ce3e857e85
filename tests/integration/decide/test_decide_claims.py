"""The decision's claims checked against truth known from the sims' documented behaviour
(sim:decay?cliff=C&width=1 answers right up to C prompt tokens and wrong past C + 1;
sim:perfect always right; sim:first-half finds only what sits in the prompt's first half)
and from the stored prompts themselves."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from decide_sims import run_sim
from ctxprobe.cli import main
from ctxprobe.decide import decide
from ctxprobe.decide.fairness import caveats, counts_as
from ctxprobe.prices.table import load_prices
from ctxprobe.decide.render import decision_lines
from ctxprobe.decide.runs import load_run
from ctxprobe.store import Store

CLIFF = "sim:decay?cliff=3000&width=1"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    store = tmp_path_factory.mktemp("claims") / "s.sqlite"
    ids = {
        "perfect": run_sim(store, "sim:perfect", "1k,2k,4k", "--reps", "8"),  # 24 of 24 at each length
        "cliff": run_sim(store, CLIFF, "1k,2k,4k", "--reps", "8"),  # right at 1K, 2K; 0 of 24 at 4K
        "zero": run_sim(store, CLIFF, "4k", "--reps", "20"),  # 0 of 60 at 4K, nothing shorter tested
    }
    return store, ids


def _prices(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "prices.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_run_missing_from_the_price_file_comes_after_the_priced_ones(runs, tmp_path) -> None:
    """The file prices sim:perfect only: the cliff sim (free by default, as every sim) must not
    win the short band at $0; it is unpriced, ranked after, and a caveat says so."""
    store, ids = runs
    d = decide([ids["perfect"], ids["cliff"]], store, bands=[2048],
               prices=_prices(tmp_path, '"sim:perfect": {input: 1.0, output: 1.0}\n'))
    (choice,) = d.choices
    assert choice.choice is not None and choice.choice.model == "sim:perfect" and choice.choice.price == 1.0
    assert [(c.model, c.status, c.price) for c in choice.candidates] == [("sim:perfect", "yes", 1.0),
                                                                       (CLIFF, "yes", None)]
    assert any(f"no price for {CLIFF}: ranked after every priced model" in c for c in d.caveats)
    lines = decision_lines(d)
    assert "   also meets it, unpriced: B" in lines and not any("dearer" in line for line in lines)


def test_a_same_price_model_is_not_called_dearer(runs, tmp_path) -> None:
    store, ids = runs
    d = decide([ids["cliff"], ids["perfect"]], store, bands=[2048],
               prices=_prices(tmp_path, f'"sim:perfect": {{input: 1.0, output: 1.0}}\n"{CLIFF}": {{input: 1.0, output: 1.0}}\n'))
    (choice,) = d.choices
    assert choice.choice is not None and choice.choice.model == "sim:perfect"  # same price: the longer reliable length
    lines = decision_lines(d)
    assert "   also meets it, at the same price: A" in lines and not any("dearer" in line for line in lines)
    d = decide([ids["cliff"], ids["perfect"]], store, bands=[2048],
               prices=_prices(tmp_path, f'"sim:perfect": {{input: 2.0, output: 2.0}}\n"{CLIFF}": {{input: 1.0, output: 1.0}}\n'))
    assert "   also meets it, dearer: B" in decision_lines(d)  # the dearer one still is


def test_a_confident_failure_past_the_band_is_not_an_open_question(runs) -> None:
    """0 of 60 at 4K, nothing shorter tested, band up to 2K: a maybe (nothing inside the band
    was tested), and more cases at 4K would not tell; a length inside the band would."""
    store, ids = runs
    with Store(store) as s:
        outcomes = [rec.get("outcome") for rec in s.iter_case_records(ids["zero"])]
    assert len(outcomes) == 60 and "correct" not in outcomes  # the known truth: 0 of 60
    (choice,) = decide([ids["zero"]], store, bands=[2048]).choices
    (cand,) = choice.candidates
    assert cand.status == "maybe"
    assert "more cases would tell" not in cand.why
    assert "fails the bar at 4,096 tokens, past the band's end" in cand.why and "testing one would tell" in cand.why
    # with passes inside the band (cliff sim: 1K, 2K right; 0/24 at 4K) the band up to 3K is
    # settled only by a length between 2K and 4K
    (choice,) = decide([ids["cliff"]], store, bands=[3072]).choices
    (cand,) = choice.candidates
    assert cand.status == "maybe" and "more cases would tell" not in cand.why
    assert "a length between its last pass and that one would tell" in cand.why


def test_the_pareto_plot_says_which_runs_it_cannot_draw(runs, tmp_path) -> None:
    pytest.importorskip("matplotlib")
    store, ids = runs
    out = tmp_path / "d.html"
    assert main(["decide", ids["perfect"], ids["cliff"], ids["zero"], "--store", str(store), "--bands", "2k,4k",
                 "--prices", str(_prices(tmp_path, '"sim:perfect": {input: 1.0, output: 1.0}\n')),
                 "--html", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert "not plotted:" in page
    caption = page[page.index("not plotted:"):][:400]
    assert f"{CLIFF} (no price per 1M tokens)".replace("&", "&amp;") in caption
    assert f"{CLIFF} (below the shortest tested length)".replace("&", "&amp;") in caption
    assert "sim:perfect (" not in caption  # the one it drew is not listed


@pytest.fixture(scope="module")
def two_families(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    store = tmp_path_factory.mktemp("use") / "s.sqlite"
    ids = {m: run_sim(store, m, "1k,2k", "--family", "niah,multihop", "--reps", "8")
           for m in ("sim:perfect", "sim:first-half")}
    return store, ids


def _words_at(store: Path, run_id: str, family: str, length: int) -> int:
    """The fewest whitespace-separated words among a family's stored prompts at a length."""
    with Store(store) as s:
        return min(len("\n".join(str(m.get("content") or "") for m in rec["messages"]).split())
                   for rec in s.iter_case_records(run_id) if rec["family"] == family and rec["length"] == length)


def test_a_use_limit_in_content_is_the_fewest_over_its_families(two_families) -> None:
    """sim:perfect is reliable at 2K tokens in both families; at 2K the two families' prompts
    hold different numbers of words: the use's limit in words is the fewer, whichever family
    the token limit named."""
    store, ids = two_families
    rid = ids["sim:perfect"]
    words = {f: _words_at(store, rid, f, 2048) for f in ("niah", "multihop")}
    assert words["niah"] != words["multihop"]  # the case this checks
    for use in (["niah", "multihop"], ["multihop", "niah"]):
        (limit,) = decide([rid], store, use=use).limits
        assert limit.lo == 2048 and limit.content["words"] == min(words.values())


def test_the_family_named_as_limiting_is_the_weaker_one(two_families) -> None:
    """sim:first-half is unreliable at every length in both families, but far weaker in
    multihop (its hops sit across the prompt) than in niah: the limit names multihop."""
    store, ids = two_families
    rid = ids["sim:first-half"]
    with Store(store) as s:
        recs = list(s.iter_case_records(rid))
    acc = {f: sum(r.get("outcome") == "correct" for r in recs if r["family"] == f)
           / sum(r["family"] == f for r in recs) for f in ("niah", "multihop")}
    weaker = min(acc, key=lambda f: acc[f])
    assert acc[weaker] < max(acc.values())  # the known truth: one family is weaker
    (limit,) = decide([rid], store, use=["niah", "multihop"]).limits
    assert limit.lo is None and limit.family == weaker
    assert f"limited by {weaker}:" in limit.line()


def test_server_tokenizers_that_count_alike_are_not_called_different(tmp_path) -> None:
    """Two servers of the same model and tokenizer, one run with the bare ``endpoint`` and one
    with ``endpoint:URL``: the same fingerprint, so the same counts; a third run counting
    with another tokenizer is still named."""
    from ctxprobe.models import resolve_provider
    from ctxprobe.sim.server import SimServer
    from ctxprobe.spec import make_spec
    from ctxprobe.sweep.run import run_sweep
    from ctxprobe.tokenizers import resolve_tokenizer

    store = tmp_path / "s.sqlite"
    tok = resolve_tokenizer("local")
    grid = {"lengths": "512", "depths": "0,1", "reps": 1}
    with SimServer(resolve_provider("sim:perfect", tok), tok) as one, \
            SimServer(resolve_provider("sim:perfect", tok), tok) as two:
        first_url = one.base_url
        a = run_sweep(make_spec({"model": f"openai-compat:a@{one.base_url}", "tokenizer": "endpoint", **grid}),
                      store, progress=False)
        b = run_sweep(make_spec({"model": f"openai-compat:b@{two.base_url}",
                                 "tokenizer": f"endpoint:{two.base_url}?model=b", **grid}), store, progress=False)
    c = run_sweep(make_spec({"model": "sim:perfect", "tokenizer": "approx", **grid}), store, progress=False)
    table = load_prices(None)
    ra, rb, rc = (load_run(r.run_id, store, table, threshold=None, bars=None) for r in (a, b, c))
    assert ra.run.tokenizer == "endpoint" and rb.run.tokenizer.startswith("endpoint:http")
    assert ra.run.meta.chat_template_hash and ra.run.meta.chat_template_hash == rb.run.meta.chat_template_hash
    assert not any("different tokenizers" in x for x in caveats([ra, rb], ["niah"], "tokens"))
    assert any("different tokenizers" in x for x in caveats([ra, rb, rc], ["niah"], "tokens"))
    # without a recorded fingerprint: bare ``endpoint`` is the model's own server, the same
    # as ``endpoint:URL?model=NAME`` of it, and another server's URL is another tokenizer
    bare = replace(ra, run=replace(ra.run, meta=replace(ra.run.meta, chat_template_hash=None)))
    same = replace(ra, run=replace(ra.run, tokenizer=f"endpoint:{first_url}?model=a",
                                   meta=replace(ra.run.meta, chat_template_hash=None)))
    other = replace(rb, run=replace(rb.run, meta=replace(rb.run.meta, chat_template_hash=None)))
    assert counts_as(bare) == counts_as(same) != counts_as(other)
    assert not any("different tokenizers" in x for x in caveats([bare, same], ["niah"], "tokens"))
    assert any("different tokenizers" in x for x in caveats([bare, other], ["niah"], "tokens"))


def test_the_json_limit_matches_the_line(two_families, capsys) -> None:
    store, ids = two_families
    capsys.readouterr()
    assert main(["decide", ids["sim:perfect"], "--store", str(store), "--use", "niah,multihop", "--json"]) == 0
    (limit,) = json.loads(capsys.readouterr().out)["limits"]
    assert limit["limited_by"] == ["niah", "multihop"]  # equally weak (both 24/24 at 2K): both named
    assert limit["lo"] == 2048 and limit["content"]["words"] == min(
        _words_at(store, ids["sim:perfect"], f, 2048) for f in ("niah", "multihop"))
