"""``--method post``: the phone-book post's experiment and metric script, checked against an
independent re-implementation of the original's rules written here (not by calling ours).

The original, as published (experiment code and metric script):
- system = prompt text + "\\n\\n# Phone book\\n\\n" + "\\n".join(entries); user = "Please find
  phone numbers for these names: " + ", ".join(names); temperature 0, top_p 0.95;
- bins of ``M // N`` entries from the start, one random entry per bin;
- reply: strip, split on "\\n"; a line with " : " maps split(" : ")[0].strip() to
  split(" : ")[1].strip(), later lines overwrite; correct = the value equals the book's;
- per-bin accuracy over runs → polyfit(arange(N), acc, 3) → evaluated at linspace(0, N-1,
  1000); min clipped at 0, max at 1, mean unclipped; CSI/ADI/NOI relative drops (1 on a zero
  denominator) against M=1000/N=100 and N=10; RRI = 1 − mean; LCRDS = avg × 100 × RRI.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict

import numpy as np
import pytest

from ctxprobe.families.phonebook.analysis import analyse, needle_results
from ctxprobe.families.phonebook.analysis_post import post_metrics, post_stats
from ctxprobe.errors import CtxprobeError
from ctxprobe.report.export import export_jsonl
from ctxprobe.store import iter_export
from stub_records import stub_records
from ctxprobe.sweep.run import run_sweep
from ctxprobe.core.case import Cell
from ctxprobe.haystack.context import BuildContext
from ctxprobe.core.family_lookup import make_family, validate_params
from ctxprobe.families.phonebook.task_grid import phonebook_spec
from ctxprobe.tokenizers import resolve_tokenizer

PROMPT_START = "You are a phone book assistant. You can help users find phone numbers for people."
QUESTION = "Please find phone numbers for these names: "
ENTRY = re.compile(r"^[a-z]{15} : \(\d{3}\) \d{3}-\d{4}$")


# -- the original's rules, re-implemented here ---------------------------------------------


def original_matches(text: str, together: bool = False) -> dict[str, str]:
    matches = {}
    for match in text.strip().split("\n"):
        if " : " in match:
            key = match.split(" : ")[0].strip()
            if together and " " in key:
                key = key.split(" ")[1]
            value = match.split(" : ")[1].strip()
            if together and value.count("-") == 2:
                value = f"({value[:3]}) {value[4:7]}-{value[8:]}"
            matches[key] = value
        else:
            matches[match] = match
    return matches


def original_stats(results: dict) -> tuple[float, float, float, float, float]:
    values = list(results.values())
    x = np.arange(len(values))
    polynomial = np.poly1d(np.polyfit(x, values, 3))
    x_smooth = np.linspace(0, len(values) - 1, 1000)
    y_smooth = polynomial(x_smooth)
    return (x_smooth[np.argmin(y_smooth)], max(np.min(y_smooth), 0), x_smooth[np.argmax(y_smooth)],
            min(np.max(y_smooth), 1), np.mean(y_smooth))


def original_metrics(max_c: dict, max_c_10: dict, c1000: dict) -> dict[str, float]:
    _, min_max_c, _, max_max_c, avg_max_c = original_stats(max_c)
    _, min_10, _, _, _ = original_stats(max_c_10)
    _, min_1000, _, _, _ = original_stats(c1000)
    csi = max(min_1000 - min_max_c, 0) / min_1000 if min_1000 > 0 else 1
    adi = max(max_max_c - min_max_c, 0) / max_max_c if max_max_c > 0 else 1
    noi = max(min_10 - min_max_c, 0) / min_10 if min_10 > 0 else 1
    rri = 1 - (csi + adi + noi) / 3.0
    return {"CSI": csi, "ADI": adi, "NOI": noi, "RRI": rri, "LCRDS": avg_max_c * 100.0 * rri}


# -- prompt and bins ----------------------------------------------------------------------


def _family():
    return make_family("phonebook", BuildContext(tokenizer=resolve_tokenizer("local"), haystack=None))


def _case(length=1000, rep=0, **params):
    p = validate_params("phonebook", {"method": "post", "unit": "entries", **params})
    return _family().generate(Cell("phonebook", length, 0.0), rep, seed=3, params=p)


@pytest.mark.parametrize(("m", "n"), [(1000, 100), (1005, 10), (37, 10)])
def test_prompt_bytes_and_bins_are_the_originals(m: int, n: int) -> None:
    case = _case(length=m, needles=[n])
    system, user = case.messages
    assert (system["role"], user["role"]) == ("system", "user")
    head, sep, book = system["content"].partition("\n\n# Phone book\n\n")
    assert sep and head.startswith(PROMPT_START) and head.endswith("as the phone number.")
    lines = book.split("\n")
    assert len(lines) == m and all(ENTRY.match(x) for x in lines)
    names = [x.split(" : ")[0] for x in lines]
    asked = case.meta["names"]
    assert user["content"] == QUESTION + ", ".join(asked)
    size = m // n  # the original's bins; the remainder at the end is never asked
    where = [names.index(a) for a in asked]
    assert [i // size for i in where] == list(range(n)) and max(where) < n * size
    assert case.expected == [lines[i].split(" : ")[1] for i in where]


def test_post_wording_and_shards_are_refused_and_cot_is_a_switch() -> None:
    for own in ({"shards": 2}, {"system_prompt": "Answer."}, {"question": "Numbers of {names}?"}):
        with pytest.raises(CtxprobeError, match="method=ctxprobe"):
            validate_params("phonebook", {"method": "post", **own})
    with pytest.raises(CtxprobeError, match="method=post only"):
        validate_params("phonebook", {"post_normalise": True})
    plain, cot = _case(length=200, needles=[10]), _case(length=200, needles=[10], cot=True)
    assert cot.messages[0] == plain.messages[0]
    assert cot.messages[1]["content"].startswith(plain.messages[1]["content"] + " ")
    assert "step by step" in cot.messages[1]["content"]


def test_phonebook_spec_sends_top_p_and_temperature_as_the_original() -> None:
    spec = phonebook_spec(model="sim:perfect", entries=[100], needles=[10], runs=1)
    assert spec.decoding.temperature == 0.0 and spec.decoding.top_p == 0.95
    ours = phonebook_spec(model="sim:perfect", entries=[100], needles=[10], runs=1, method="ctxprobe")
    assert ours.decoding.top_p is None
    for spelling in ("anthropic:claude-x", "anthropic/claude-sonnet-4-5"):  # the provider, however it is spelled
        claude = phonebook_spec(model=spelling, entries=[100], needles=[10], runs=1)
        assert claude.decoding.top_p is None and claude.decoding.temperature == 0.0  # as the original's call


# -- reply parsing ------------------------------------------------------------------------


def _replies(names: list[str], numbers: list[str]) -> list[str]:
    """Reply shapes the parser must accept or refuse, one per needle."""
    a, b = names[0], names[1]
    na, nb = numbers[0], numbers[1]
    bare = re.sub(r"\D", "", na)
    return [
        f"{a} : {na}",                        # the asked format: right
        f"  {a} :   {na}  ",                  # surrounding blanks are stripped: right
        f"{a}: {na}",                         # no space before the colon: not a match line
        f"{a} : {bare[:3]}-{bare[3:6]}-{bare[6:]}",   # dashes: wrong (right with normalisation)
        f"- {a} : {na}",                      # a bullet: wrong (right with normalisation)
        f"{a} : {na}.",                       # a trailing period: wrong
        f"{a.upper()} : {na}",                # the name in capitals: wrong
        f"{a} : {na} : extra",                # only the second field counts: right
        f"{a} : (000) 000-0000\n{a} : {na}",  # a later line overwrites: right
        f"{a} : {na}\n{a} : NOT_FOUND",       # ... both ways: wrong
        f"{a} : {nb}",                        # another entry's number: wrong
        f"{a}\t: {na}",                       # a tab is not " : ": wrong
        f"**{a}** : {na}",                    # markdown: wrong
        f"{b} : {nb}\n{a} : {na}",            # order does not matter: right
        f"{b} : {nb}\u2028{a} : {na}",        # only "\n" ends a line (not U+2028): wrong
        f"{a} : {na}\r\n{b} : {nb}\r\n",      # CRLF: the "\r" is stripped: right
    ]


HAND = [True, True, False, False, False, False, False, True, True, False, False, False, False, True, False, True]
HAND_NORMALISED = [True, True, False, True, True, False, False, True, True, False, False, False, False, True, False,
                   True]


@pytest.mark.parametrize("normalise", [False, True])
def test_reply_parsing_is_the_originals(normalise: bool) -> None:
    params = {"post_normalise": True} if normalise else {}
    case = _case(length=200, needles=[10], **params)
    fam = _family()
    names, numbers = case.meta["names"], case.expected
    for i, reply in enumerate(_replies(names, numbers)):
        scored = fam.score(case, reply)
        exact = scored.detail["needles"][0]["exact"]
        original = original_matches(reply, normalise)
        assert exact == (names[0] in original and original[names[0]] == numbers[0]), (i, reply)
        assert exact == (HAND_NORMALISED if normalise else HAND)[i], (i, reply)
        # the case score follows the post's verdict under method post
        assert scored.score == sum(d["exact"] for d in scored.detail["needles"]) / len(names)
    # a reply the lenient scorer accepts and the post does not: the post decides
    lenient_only = fam.score(case, "\n".join(f"- {n}: {x}" for n, x in zip(names, numbers)))
    assert all(d["outcome"] == "correct" and not d["exact"] for d in lenient_only.detail["needles"])
    assert lenient_only.score == 0.0 and lenient_only.outcome == "wrong"


# -- metrics ------------------------------------------------------------------------------


def needle_results_(recs: list[dict]) -> list:
    """The needles of exported lines (each a stored case's record)."""
    return needle_results(stub_records(recs))


def _exported(tmp_path, model: str, entries: list[int], needles: list[int], runs: int) -> list[dict]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    store = tmp_path / "s.sqlite"
    spec = phonebook_spec(model=model, entries=entries, needles=needles, runs=runs, tokenizer="local")
    result = run_sweep(spec, store, progress=False)
    out = tmp_path / "cases.jsonl"
    with out.open("w") as fh:
        export_jsonl(result.run_id, store, fh)
    return [json.loads(line) for line in out.read_text().splitlines()]


def _original_results(recs: list[dict]) -> dict[tuple[int, int], dict[int, float]]:
    """The original's results/<model>-<M>c-<N>-<runs>runs.json, from the exported replies."""
    correct: dict[tuple[int, int], dict[int, int]] = defaultdict(lambda: defaultdict(int))
    total: dict[tuple[int, int], dict[int, int]] = defaultdict(lambda: defaultdict(int))
    for rec in recs:
        key = (rec["meta"]["entries"], rec["meta"]["needles"])
        book = dict(x.split(" : ") for x in rec["messages"][0]["content"].split("\n\n# Phone book\n\n")[1].split("\n"))
        matches = original_matches(rec["output"])
        for b, name in enumerate(rec["meta"]["names"]):
            correct[key][b] += name in matches and matches[name] == book.get(name)
            total[key][b] += 1
    return {k: {b: correct[k][b] / total[k][b] for b in range(k[1])} for k in total}


def test_metrics_match_an_independent_implementation_of_the_script(tmp_path) -> None:
    model = "sim:decay?cliff=100000&slope=0.6&load=0.004&seed=5"
    recs = _exported(tmp_path, model, [1000, 2000], [10, 100], runs=3)
    results = _original_results(recs)
    an = analyse(needle_results_(recs), bootstrap=0)
    for m in (1000, 2000):
        want = original_metrics(results[(m, 100)], results[(m, 10)], results[(1000, 100)])
        for name, value in want.items():
            assert an.metric(name, "post", m).value == pytest.approx(value, abs=1e-9), (name, m)
    assert an.metric("ADI", "post", 2000).value > 0.2  # the sim's slope shows
    assert an.metric("CSI", "post", 1000).value == 0.0  # the reference against itself


def test_zero_denominators_and_clipping_follow_the_original() -> None:
    flat0 = [0.0] * 100
    for name, value in original_metrics(dict(enumerate(flat0)), dict(enumerate([0.0] * 10)),
                                         dict(enumerate(flat0))).items():
        ours = post_metrics({(1000, 100): flat0, (1000, 10): [0.0] * 10}, in_entries=True)[(name, 1000)].value
        assert ours == pytest.approx(value, abs=1e-12)
    ours = post_metrics({(1000, 100): flat0, (1000, 10): [0.0] * 10}, in_entries=True)
    assert [ours[(k, 1000)].value for k in ("CSI", "ADI", "NOI", "RRI")] == [1, 1, 1, 0]
    # a fit whose trough dips below 0 and whose peak rises above 1 is clipped there
    dip = [1.0, 0.0, 0.0, 1.0] * 25
    s = post_stats([1.0] * 10 + [0.0] * 80 + [1.0] * 10)
    assert s.min_y == 0.0 and s.max_y <= 1.0
    assert post_stats([1.0] * 50 + [0.0] * 50).max_y == 1.0
    for values in ([1.0] * 10 + [0.0] * 80 + [1.0] * 10, dip, [0.05 * (i % 7) for i in range(100)]):
        want = original_stats(dict(enumerate(values)))
        got = post_stats(values)
        assert (got.min_x, got.min_y, got.max_x, got.max_y, got.avg_y) == pytest.approx(want, abs=1e-12)
    # one step from the zero-denominator rule: a tiny positive reference trough divides
    tiny = post_metrics({(1000, 100): [1e-6] * 100, (2000, 100): [0.0] * 100}, in_entries=True)
    assert tiny[("CSI", 2000)].value == pytest.approx(1.0) and tiny[("CSI", 1000)].value == pytest.approx(0.0)
    improved = post_metrics({(1000, 100): [0.5] * 100, (2000, 100): [0.9] * 100}, in_entries=True)
    assert improved[("CSI", 2000)].value == pytest.approx(0.0, abs=1e-9)  # an improvement is no drop


def test_missing_references_are_na_with_a_reason() -> None:
    got = post_metrics({(2000, 100): [0.9] * 100, (2000, 10): [1.0] * 10}, in_entries=True)
    assert got[("CSI", 2000)].value is None and "M=1,000" in (got[("CSI", 2000)].reason or "")
    assert got[("NOI", 2000)].value == pytest.approx(0.1)
    assert got[("RRI", 2000)].value is None and "CSI" in (got[("RRI", 2000)].reason or "")
    got = post_metrics({(1000, 100): [0.9] * 100}, in_entries=True)
    assert got[("NOI", 1000)].value is None and "N=10" in (got[("NOI", 1000)].reason or "")
    assert got[("ADI", 1000)].value == pytest.approx(0.0, abs=1e-9)
    tokens = post_metrics({(4096, 100): [0.9] * 100}, in_entries=False)
    assert "tokens" in (tokens[("CSI", 4096)].reason or "")
    assert post_metrics({(1000, 10): [1.0] * 10}, in_entries=True) == {}


def test_unmeasured_or_empty_configurations_and_other_ns() -> None:
    nan_bin = [0.9] * 99 + [float("nan")]
    got = post_metrics({(500, 100): nan_bin, (1000, 100): [0.8] * 100, (1000, 10): [], (2000, 200): [0.5] * 200},
                       in_entries=True)
    # M=500 has an unmeasured bin: every metric n/a with the reason; M=1000 (sorted after it) still computed
    assert got[("ADI", 500)].value is None and "no measured needle" in (got[("ADI", 500)].reason or "")
    assert got[("ADI", 1000)].value == pytest.approx(0.0, abs=1e-9)
    # an empty N=10 list is as missing as no list
    assert got[("NOI", 1000)].value is None and "N=10" in (got[("NOI", 1000)].reason or "")
    assert {m for _, m in got} == {500, 1000}  # N=200 is not the post's reference N
    empty = post_metrics({(1000, 100): []}, in_entries=True)
    assert empty[("ADI", 1000)].value is None and "no measured needle" in (empty[("ADI", 1000)].reason or "")


def test_relative_drop_rule_and_reference_check() -> None:
    import dataclasses

    from ctxprobe.families.phonebook.analysis_post import PostValue, _rel_drop, needs_reference

    assert _rel_drop(0.8, 0.2) == pytest.approx(0.75)
    assert _rel_drop(0.5, 0.9) == 0.0
    assert _rel_drop(0.0, 0.0) == 1.0
    assert _rel_drop(-1e-17, 0.0) == 1.0  # a fit of all-zero accuracies can peak a hair below 0: not positive
    assert needs_reference([10, 100]) is None
    assert needs_reference([20, 10]) == "the post's metrics need N=100 needles (the grid has N=[10, 20])"
    with pytest.raises(dataclasses.FrozenInstanceError):
        PostValue(0.5).value = 0.1  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        post_stats([0.5] * 10).min_y = 0.0  # type: ignore[misc]


def test_needle_overload_against_known_truth(tmp_path) -> None:
    """sim:decay with load=L answers each of n asked names right with probability 1 − L·n."""
    load = 0.006  # N=10: 0.94, N=100: 0.40
    recs = _exported(tmp_path, f"sim:decay?cliff=100000&load={load}", [1000], [10, 100], runs=6)
    an = analyse(needle_results_(recs), bootstrap=200)
    p10, p100 = 1 - 10 * load, 1 - 100 * load
    robust = an.metric("NOI", "robust", 1000)
    assert robust.lo <= p10 - p100 <= robust.hi and robust.value == pytest.approx(p10 - p100, abs=0.12)
    post = an.metric("NOI", "post", 1000)
    assert post.value == pytest.approx((p10 - p100) / p10, abs=0.2) and post.lo > 0.3
    flat = analyse(needle_results_(_exported(tmp_path / "f", "sim:decay?cliff=100000&load=0", [1000], [10, 100], 2)),
                   bootstrap=0)
    assert flat.metric("NOI", "robust", 1000).value == 0.0 and flat.metric("NOI", "post", 1000).value == 0.0


def test_cot_run_end_to_end(tmp_path) -> None:
    spec = phonebook_spec(model="sim:perfect", entries=[200], needles=[10], runs=2, tokenizer="local",
                          layout={"cot": True})
    plain = phonebook_spec(model="sim:perfect", entries=[200], needles=[10], runs=2, tokenizer="local")
    assert spec.decoding.max_tokens > plain.decoding.max_tokens  # room for the reasoning
    store = tmp_path / "s.sqlite"
    result = run_sweep(spec, store, progress=False)
    recs = list(iter_export(result.run_id, store))
    assert all("step by step" in r["messages"][1]["content"] and r["score"] == 1.0 for r in recs)
