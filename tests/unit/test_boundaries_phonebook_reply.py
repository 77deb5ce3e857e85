"""Phone-book replies in every shape the (lenient, ctxprobe's own) parser must accept or
refuse: number formats, names inside longer names, several names on one line, a name
answered twice, NOT_FOUND spellings. Expectations follow the module's documented rules."""

from __future__ import annotations

import pytest

from ctxprobe.families.phonebook.score import Answer, needle_outcome, normalise_number, parse_reply

NAMES = ["abcdefghijklmno", "pqrstuvwxyzabcd"]
A, B = NAMES
RIGHT = "2103004519"


@pytest.mark.parametrize(
    "written",
    ["(210) 300-4519", "210-300-4519", "210.300.4519", "+1 210 300 4519", "2103004519", "1-210-300-4519",
     "(210)300-4519", "210 300 4519"],
)
def test_every_common_number_format_is_read(written: str) -> None:
    assert parse_reply(f"{A} : {written}", [A])[A] == Answer("number", RIGHT)


@pytest.mark.parametrize(
    ("written", "status"),
    [
        ("(210) 300-451", "parse_error"),  # 9 digits
        ("(210) 300-45199", "parse_error"),  # 11 digits, not a US country code
        ("42103004519", "parse_error"),  # 11 digits starting with 4
        ("21030045", "parse_error"),
        ("NOT_FOUND", "not_found"),
        ("not found", "not_found"),
        ("Unknown", "not_found"),
        ("n/a", "not_found"),
        ("", "parse_error"),  # the name alone on its line
        ("see above", "parse_error"),
    ],
)
def test_malformed_or_declined_answers(written: str, status: str) -> None:
    assert parse_reply(f"{A} : {written}", [A])[A].status == status


def test_normalise_number_boundaries() -> None:
    assert normalise_number("12103004519") == RIGHT  # 11 digits with a leading 1
    assert normalise_number("22103004519") is None  # 11 digits, not a leading 1
    assert normalise_number("210300451") is None
    assert normalise_number("121030045191") is None


def test_a_name_inside_a_longer_name_does_not_answer_it() -> None:
    got = parse_reply(f"x{A} : (210) 300-4519\n{A}y : (210) 300-4519", [A])
    assert got[A] == Answer("empty")
    assert parse_reply(f"{A.upper()} : (210) 300-4519", [A])[A] == Answer("number", RIGHT)  # case-insensitive


def test_two_names_on_one_line_each_take_what_follows_them() -> None:
    got = parse_reply(f"{A} : (210) 300-4519, {B} : (310) 555-0000", NAMES)
    assert got == {A: Answer("number", RIGHT), B: Answer("number", "3105550000")}
    got = parse_reply(f"{A}, {B} : (310) 555-0000", NAMES)  # A's number is not B's
    assert got == {A: Answer("parse_error"), B: Answer("number", "3105550000")}


def test_the_first_line_that_answers_a_name_counts() -> None:
    got = parse_reply(f"{A} : (210) 300-4519\n{A} : (999) 999-9999", [A])
    assert got[A] == Answer("number", RIGHT)
    got = parse_reply(f"{A} : NOT_FOUND\n{A} : (210) 300-4519", [A])
    assert got[A] == Answer("not_found")


def test_missing_name_is_empty_and_no_names_is_nothing() -> None:
    assert parse_reply("I could not find them.", NAMES) == {A: Answer("empty"), B: Answer("empty")}
    assert parse_reply(f"{A} : (210) 300-4519", []) == {}


@pytest.mark.parametrize(
    ("answer", "expected", "outcome"),
    [
        (Answer("number", RIGHT), RIGHT, "correct"),
        (Answer("number", "3105550000"), RIGHT, "distractor"),  # another entry of the book
        (Answer("number", "9999999999"), RIGHT, "wrong"),  # in no entry: invented
        (Answer("not_found"), RIGHT, "not_found"),
        (Answer("parse_error"), RIGHT, "parse_error"),
        (Answer("empty"), RIGHT, "empty"),
        (Answer("not_found"), None, "correct"),  # outside this shard: NOT_FOUND is right
        (Answer("empty"), None, "correct"),
        (Answer("parse_error"), None, "parse_error"),
        (Answer("number", RIGHT), None, "distractor"),
    ],
)
def test_needle_outcome(answer: Answer, expected: str | None, outcome: str) -> None:
    book = {RIGHT: A, "3105550000": B}
    assert needle_outcome(answer, expected, book) == outcome


# -- the rest of phonebook_score: book parsing, case labels, the post's own reader ---------

from ctxprobe.families.phonebook.score import (  # noqa: E402
    book_numbers,
    case_outcome,
    format_number,
    post_correct,
    post_matches,
)


def test_format_number_is_the_published_format() -> None:
    assert format_number(RIGHT) == "(210) 300-4519"
    assert format_number("0123456789") == "(012) 345-6789"


def test_book_numbers_reads_every_entry_line_of_every_message() -> None:
    messages = [
        {"role": "system", "content": f"Intro line\n\n# Phone book\n\n{A} : (210) 300-4519\n{B} : (310) 555-0000 \t"},
        {"role": "user", "content": f"{A} : (410) 555-1111"},  # a number of A again, in a later message
    ]
    assert book_numbers(messages) == {RIGHT: A, "3105550000": B, "4105551111": A}
    # the first name a number is written with is kept
    assert book_numbers([{"content": f"{A} : (210) 300-4519\n{B} : (210) 300-4519"}]) == {RIGHT: A}
    # not entries: trailing words, a missing parenthesis, an upper-case name, a message without content
    not_entries = f"{A} : (210) 300-4519 x\n{A} : 210) 300-4519\nABC : (210) 300-4519\n {A} : (210) 300-4519"
    assert book_numbers([{"content": not_entries}, {"role": "user"}, {"content": None}]) == {}


@pytest.mark.parametrize(
    ("needles", "output", "label"),
    [
        (["correct", "correct"], "", "correct"),
        (["correct"], "", "correct"),
        (["correct", "wrong"], "", "partial"),
        (["empty", "correct"], "", "partial"),
        (["empty", "empty"], "", "empty"),  # nothing parseable: the whole reply is classified
        (["empty"], "I'm sorry, I can't help with that.", "refusal"),
        (["empty"], "The name is not found in the book.", "not_found"),
        (["empty"], "Something else entirely.", "wrong"),
        ([], "Something else entirely.", "wrong"),  # no needle asked: never "correct"
        (["wrong", "wrong", "distractor"], "", "wrong"),  # the most frequent failure
        (["distractor", "distractor", "wrong"], "", "distractor"),
        (["empty", "empty", "parse_error"], "", "empty"),
        (["empty", "parse_error", "parse_error"], "", "parse_error"),
        (["not_found", "wrong"], "", "wrong"),  # a tie goes to the earlier in the ranking
        (["wrong", "distractor"], "", "distractor"),
        (["not_found", "parse_error"], "", "not_found"),
        (["parse_error", "empty"], "", "parse_error"),
    ],
)
def test_case_outcome(needles: list[str], output: str, label: str) -> None:
    assert case_outcome(needles, output) == label


def test_post_matches_reads_a_reply_as_the_post_does() -> None:
    reply = f"\n  {A} : (210) 300-4519 \nno colon here\n{B} :  NOT_FOUND : extra\n{A} : (999) 999-9999\n\n"
    got = post_matches(reply)
    # stripped first (no empty first key), later line for A overwrites, second field only
    assert got == {A: "(999) 999-9999", "no colon here": "no colon here", B: "NOT_FOUND"}
    assert post_matches(f"{A}: (210) 300-4519") == {f"{A}: (210) 300-4519": f"{A}: (210) 300-4519"}  # needs " : "


def test_post_matches_normalise_takes_second_word_and_rewrites_two_dash_numbers() -> None:
    got = post_matches(f"- {A} : 210-300-4519\n{B} : 310-555-0000", normalise=True)
    assert got == {A: "(210) 300-4519", B: "(310) 555-0000"}
    # one or three dashes: left as written; without normalise: left as written
    got = post_matches(f"{A} : 210300-4519\n{B} : 1-310-555-0000", normalise=True)
    assert got == {A: "210300-4519", B: "1-310-555-0000"}
    assert post_matches(f"- {A} : 210-300-4519") == {f"- {A}": "210-300-4519"}
    # a key with several spaces keeps its second word only
    assert post_matches(f"1. {A} extra : (210) 300-4519", normalise=True) == {A: "(210) 300-4519"}


def test_post_correct_is_exact() -> None:
    matches = {A: "(210) 300-4519", B: "310-555-0000"}
    assert post_correct(matches, A, "(210) 300-4519")
    assert post_correct(post_matches(f"{A} : (210) 300-4519"), A, "".join(["(210) ", "300-4519"]))  # equal, not same
    assert not post_correct(matches, B, "(310) 555-0000")  # formatting differs: wrong for the post
    assert not post_correct(matches, "someoneelse", "(210) 300-4519")
    assert not post_correct({}, A, None)
    assert not post_correct({A: "NOT_FOUND"}, A, None)


def test_three_names_on_one_line_each_take_only_what_follows_them() -> None:
    C = "zyxwvutsrqponml"
    got = parse_reply(f"{A} : (210) 300-4519; {B} : NOT_FOUND; {C} : (310) 555-0000", [A, B, C])
    assert got == {A: Answer("number", RIGHT), B: Answer("not_found"), C: Answer("number", "3105550000")}


def test_hundreds_of_names_on_one_line() -> None:
    """A model may answer every needle of N=100 (or more) on one line."""
    import string

    names = ["".join(string.ascii_lowercase[(i // 26**k) % 26] for k in range(3)) + "qqqqqqqqqqqq" for i in range(300)]
    line = ", ".join(f"{n} : (210) 300-{i:04d}" for i, n in enumerate(names))
    got = parse_reply(line, names)
    assert got == {n: Answer("number", f"210300{i:04d}") for i, n in enumerate(names)}


def test_a_line_that_repeats_an_answered_name_still_answers_the_others() -> None:
    got = parse_reply(f"{A} : (210) 300-4519\n{A} : (999) 999-9999, {B} : (310) 555-0000", [A, B])
    assert got == {A: Answer("number", RIGHT), B: Answer("number", "3105550000")}


def test_labels_decoded_from_json_compare_by_value() -> None:
    """Statuses and labels may be read back from stored JSON: equal strings, not the literals."""
    import json

    status, correct, empty = json.loads('["number", "correct", "empty"]')
    assert needle_outcome(Answer(status, RIGHT), RIGHT, {}) == "correct"
    assert case_outcome([correct, correct], "") == "correct"
    assert case_outcome([correct, empty], "") == "partial"
    assert case_outcome([empty, empty], "I'm sorry, I can't help with that.") == "refusal"


def test_only_distractors_is_a_distractor_case_not_a_classified_miss() -> None:
    assert case_outcome(["distractor"], "") == "distractor"
    assert case_outcome(["distractor", "distractor"], "I'm sorry, I can't help with that.") == "distractor"


def test_answer_is_immutable() -> None:
    import dataclasses

    with pytest.raises(dataclasses.FrozenInstanceError):
        Answer("number", RIGHT).status = "empty"  # type: ignore[misc]
