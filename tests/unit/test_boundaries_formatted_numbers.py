"""Formatted numbers in answers: a value written with digit-group separators is the value
(or, when no grouping reads it, ``parse_error``), never ``wrong``; a value inside a longer
number never counts. Expectations follow the rules in ``ctxprobe.scores.numbers`` and the
phone-book parser's docstring, written out here by hand."""

from __future__ import annotations

import pytest

from ctxprobe.core.case import Case, Cell
from ctxprobe.scores.numbers import malformed_grouped, normalise_grouped
from ctxprobe.haystack.context import BuildContext
from ctxprobe.core.family_lookup import make_family
from ctxprobe.families.phonebook.score import Answer, needle_outcome, parse_reply

VALUE = "9996995"
DISTRACTOR = "7305518"


@pytest.fixture(scope="module")
def niah():
    return make_family("niah", BuildContext(tokenizer=None, haystack=None))  # type: ignore[arg-type]


def case(variant: str = "single", expected: list[str] | None = None) -> Case:
    return Case(cell=Cell("niah", 1000, 0.5), rep=0, seed=1, messages=[{"role": "user", "content": "-"}],
                expected=expected or [VALUE], distractors=[DISTRACTOR],
                meta={"variant": variant, "distractor_needles": [{"key": "red-fox-101", "value": DISTRACTOR}]},
                token_count=1000)


@pytest.mark.parametrize("written", [
    "9,996,995", "9 996 995", "9.996.995", "9'996'995", "9\u2019996\u2019995", "9_996_995",
    "9\u00a0996\u00a0995", "9\u202f996\u202f995", "99,96,995", "The number is 9,996,995.", "9996995",
])
def test_grouped_right_value_is_correct(niah, written: str) -> None:
    assert niah.score(case(), written).outcome == "correct"


@pytest.mark.parametrize("written", [
    "19,996,995",  # the value inside a longer number
    "9,996,9951",  # a longer last group: not a grouping, and not the value either
    "99,996,995",
    "19996995",
    "9,996,995,1",
])
def test_value_inside_a_longer_number_never_counts(niah, written: str) -> None:
    assert niah.score(case(), written).score == 0.0


@pytest.mark.parametrize(("written", "label"), [
    ("9,996,994", "wrong"),  # read as a number, and it is another number
    ("9 996 994", "wrong"),
    ("99,9,6995", "parse_error"),  # digit groups no grouping reads
    ("9,996,9951", "parse_error"),
    ("9996,995", "parse_error"),
    ("7,305,518", "distractor"),  # another key's value, formatted
    ("12,34", "wrong"),  # under five digits: not a formatted value
])
def test_formatted_miss_labels(niah, written: str, label: str) -> None:
    assert niah.score(case(), written).outcome == label


def test_set_answers_read_grouped_numbers(niah) -> None:
    both = case("multivalue", [VALUE, "1234567"])
    assert niah.score(both, "9,996,995, 1,234,567").outcome == "correct"
    assert niah.score(both, "9,996,995").outcome == "partial"
    assert niah.score(both, "99,9,6995 and 12,3,4567").outcome == "parse_error"


@pytest.mark.parametrize(("text", "read"), [
    ("9.996", "9.996"),  # one group after a point: a decimal
    ("12 345", "12 345"),  # one group after a space: two numbers
    ("12 345 678", "12345678"),
    ("1234567, 2345678", "1234567, 2345678"),  # a list
    ("x 1,234,567, 2,345,678 y", "x 1234567, 2345678 y"),
])
def test_normalise_boundaries(text: str, read: str) -> None:
    assert normalise_grouped(text) == read


def test_malformed_needs_five_digits() -> None:
    assert malformed_grouped("12,34") == []
    assert malformed_grouped("12,345,6") == ["12,345,6"]


# --- phone numbers ---------------------------------------------------------------------------

NAME = "abcdefghijklmno"
RIGHT = "2103004519"


@pytest.mark.parametrize("written", ["210\u00a0300\u00a04519", "210\u202f300\u202f4519", "+1 (210) 300-4519"])
def test_phone_number_with_other_spaces_is_read(written: str) -> None:
    assert parse_reply(f"{NAME} : {written}", [NAME])[NAME] == Answer("number", RIGHT)


@pytest.mark.parametrize("written", ["2,103,004,519", "21,030,045,19", "92103004519", "21030045190"])
def test_phone_number_as_a_grouped_or_longer_integer_is_parse_error(written: str) -> None:
    answer = parse_reply(f"{NAME} : {written}", [NAME])[NAME]
    assert answer.status == "parse_error"
    assert needle_outcome(answer, RIGHT, {RIGHT: NAME}) == "parse_error"
