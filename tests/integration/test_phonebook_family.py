"""phonebook: generated books re-checked independently, per-needle scoring, layouts, shards."""

from __future__ import annotations

import re

import pytest

from ctxprobe.errors import CtxprobeError
from ctxprobe.store import iter_export
from ctxprobe.sweep.run import run_sweep
from ctxprobe.core.case import Cell
from ctxprobe.haystack.context import BuildContext
from ctxprobe.core.family_lookup import make_family, validate_params
from ctxprobe.families.phonebook.task_grid import parse_entries, phonebook_spec
from ctxprobe.families.phonebook.score import normalise_number
from ctxprobe.tokenizers import resolve_tokenizer

# The published wording, typed out here independently of the module under test.
PUBLISHED = (
    "You are a phone book assistant. You can help users find phone numbers for people. You will be given one "
    "or more name(s), and you should respond with the corresponding phone number(s). Return each name and phone "
    "number pair on a new line, in this format: NAME_1 : PHONE_NUMBER_1 NAME_2 : PHONE_NUMBER_2 ... If you "
    "don't have the phone number for a given name, respond with 'NOT_FOUND' as the phone number."
)
LINE = re.compile(r"^[a-z]{15} : \(\d{3}\) \d{3}-\d{4}$")


def _family():
    return make_family("phonebook", BuildContext(tokenizer=resolve_tokenizer("local"), haystack=None))


def _case(length=1024, rep=0, **params):
    p = validate_params("phonebook", params)
    return _family().generate(Cell("phonebook", length, 0.0), rep, seed=7, params=p), p


def test_exported_books_recheck(tmp_path) -> None:
    store = tmp_path / "s.sqlite"
    spec = phonebook_spec(model="sim:perfect", lengths=["1k", "3k"], needles=[10, 20], runs=2, tokenizer="local",
                          method="ctxprobe")
    result = run_sweep(spec, store, progress=False)
    tok = resolve_tokenizer("local")
    recs = list(iter_export(result.run_id, store))
    assert len(recs) == 2 * 2 * 2
    for rec in recs:
        system, user = rec["messages"]
        assert system["role"] == "system" and user["role"] == "user"
        instructions, book = system["content"].split("\n\n# Phone book\n")
        assert " ".join(instructions.split()) == PUBLISHED
        lines = book.split("\n")
        assert all(LINE.match(line) for line in lines)
        names = [line.split(" : ")[0] for line in lines]
        numbers = [line.split(" : ")[1] for line in lines]
        assert len(set(names)) == len(names) and len(set(numbers)) == len(numbers)
        m, n = len(lines), rec["meta"]["needles"]
        asked = user["content"].removeprefix("Please find phone numbers for these names: ").split(", ")
        assert user["content"].startswith("Please find phone numbers for these names: ") and len(asked) == n
        # bins recomputed here: N contiguous, sizes within one entry, one asked name in each
        edges = [round(b * m / n) for b in range(n + 1)]
        sizes = [edges[b + 1] - edges[b] for b in range(n)]
        assert max(sizes) - min(sizes) <= 1
        where = sorted(names.index(a) for a in asked)
        assert [sum(edges[b] <= i < edges[b + 1] for i in where) for b in range(n)] == [1] * n or \
            [sum(b * m // n <= i < (b + 1) * m // n for i in where) for b in range(n)] == [1] * n
        assert rec["expected"] == [numbers[names.index(a)] for a in asked]
        # exact to budget: fits, and one more entry would not
        count = tok.count_chat(rec["messages"])
        assert count == rec["token_count"] <= rec["length"]
        assert rec["length"] - count < max(tok.count("\n" + line) for line in lines)
        assert rec["score"] == 1.0 and all(d["outcome"] == "correct" for d in rec["detail"]["needles"])


def test_entries_unit_and_seeding() -> None:
    a, _ = _case(length=40, unit="entries", needles=[10, 20])
    b, _ = _case(length=40, rep=1, unit="entries", needles=[10, 20])  # same run, N=20: same book
    again, _ = _case(length=40, unit="entries", needles=[10, 20])
    assert a.meta["entries"] == 40 and a.meta["needles"] == 10 and b.meta["needles"] == 20
    assert a.messages[0] == b.messages[0] and a.messages == again.messages
    other_run, _ = _case(length=40, rep=2, unit="entries", needles=[10, 20])
    assert other_run.messages[0] != a.messages[0]


def test_number_normalisation() -> None:
    assert {normalise_number(x) for x in ("(210) 300-4519", "210-300-4519", "2103004519", "+1 210.300.4519")} \
        == {"2103004519"}
    assert normalise_number("300-4519") is None


def test_malformed_line_fails_only_its_needle() -> None:
    case, _ = _case()
    fam = _family()
    names, numbers = case.meta["names"], case.expected
    lines = [f"{n} : {x}" for n, x in zip(names, numbers)]
    lines[3] = f"{names[3]} : call back later"
    lines[5] = f"- {names[5]}: {re.sub(r'[^0-9]', '', numbers[5])}"  # another format: still right
    scored = fam.score(case, "\n".join(lines))
    outcomes = [d["outcome"] for d in scored.detail["needles"]]
    assert outcomes[3] == "parse_error"
    assert outcomes.count("correct") == len(names) - 1
    assert scored.score == pytest.approx((len(names) - 1) / len(names)) and scored.outcome == "partial"


def test_taxonomy_not_found_distractor_invented_missing() -> None:
    case, _ = _case()
    fam = _family()
    names, numbers = case.meta["names"], case.expected
    reply = [f"{names[0]} : NOT_FOUND", f"{names[1]} : {numbers[2]}", f"{names[2]} : (999) 000-0000"]
    reply += [f"{n} : {x}" for n, x in zip(names[3:-1], numbers[3:-1])]  # the last name is left out
    outcomes = [d["outcome"] for d in fam.score(case, "\n".join(reply)).detail["needles"]]
    invented_is_in_book = "9990000000" in re.sub(r"[^0-9\n]", "", case.messages[0]["content"]).split("\n")
    assert outcomes[:3] == ["not_found", "distractor", "distractor" if invented_is_in_book else "wrong"]
    assert outcomes[-1] == "empty" and set(outcomes[3:-1]) == {"correct"}
    assert fam.score(case, "").outcome == "empty" and fam.score(case, "").score == 0.0


def test_layout_variants() -> None:
    base, _ = _case()
    user_book, _ = _case(book_in="user")
    assert "# Phone book" not in user_book.messages[0]["content"] and "# Phone book" in user_book.messages[1]["content"]
    no_sys, _ = _case(system_role=False)
    assert [m["role"] for m in no_sys.messages] == ["user"]
    assert no_sys.messages[0]["content"].startswith(base.messages[0]["content"][:60])
    repeat, _ = _case(repeat_instructions=True)
    assert repeat.messages[-1]["content"].count("You are a phone book assistant") == 1
    shots, _ = _case(examples=2)
    assert [m["role"] for m in shots.messages] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert all("NOT_FOUND" in m["content"] for m in shots.messages if m["role"] == "assistant")
    assert set(shots.meta["names"]).isdisjoint(" ".join(m["content"] for m in shots.messages[1:5]).split())
    for case in (base, user_book, no_sys, repeat, shots):
        assert case.token_count <= 1024


def test_shards_merge_against_the_long_book(tmp_path) -> None:
    from ctxprobe.families.phonebook.analysis import needle_results
    from ctxprobe.store import Store

    store = tmp_path / "s.sqlite"
    spec = phonebook_spec(model="sim:perfect", entries=[60], needles=[10], runs=2, tokenizer="local",
                          layout={"shards": 3}, method="ctxprobe")
    result = run_sweep(spec, store, progress=False)
    with Store(store) as s:
        recs = list(s.iter_case_records(result.run_id))
    assert len(recs) == 2 * 3
    for r in recs:  # 60 / 3 contiguous entries each
        assert sum(bool(LINE.match(x)) for x in r["messages"][0]["content"].split("\n")) == 20
    merged = needle_results(recs)
    assert len(merged) == 2 * 10 and all(r.correct for r in merged)
    # an out-of-shard number makes the merged needle wrong
    recs[1]["detail"]["needles"][0] = {**recs[1]["detail"]["needles"][0], "outcome": "distractor"}
    assert sum(not r.correct for r in needle_results(recs)) == 1


def test_user_errors_are_one_liners() -> None:
    with pytest.raises(CtxprobeError, match="depth"):
        _family().generate(Cell("phonebook", 1024, 0.5), 0, seed=0, params=validate_params("phonebook", {}))
    with pytest.raises(CtxprobeError, match="either"):
        phonebook_spec(model="sim:perfect")
    with pytest.raises(CtxprobeError, match="needles"):
        validate_params("phonebook", {"needles": [10, 10]})
    with pytest.raises(CtxprobeError, match="cannot hold"):
        _case(length=300, needles=[50])
    assert parse_entries("1k") == 1000 and parse_entries(80000) == 80000
