"""Boundary cases of the scoring rules: one token either side of every tolerance, a value
inside a longer number, a key inside a longer key, a reply cut at max tokens with and
without its answer.

Expectations are written from the documented rules (README: "a shortfall beyond
max(4, 0.5%) is ``input_truncated``"; ``output_truncated`` is a miss that hit max
tokens), not by calling the functions under test.
"""

from __future__ import annotations

import pytest

from ctxprobe.scores.outcome import score_response
from ctxprobe.core.case import Case, Cell
from ctxprobe.haystack.context import BuildContext
from ctxprobe.core.family_lookup import make_family
from ctxprobe.scores.setscore import count_exact
from ctxprobe.families.niah.task import has_number
from ctxprobe.families.vartrack.task import NAME_RE

VALUE = "4819203"
DISTRACTOR = "7305518"


def niah_case(token_count: int = 10_000, variant: str = "single", expected: list[str] | None = None,
              distractors: list[str] | None = None, meta: dict | None = None) -> Case:
    return Case(
        cell=Cell("niah", token_count, 0.5), rep=0, seed=1,
        messages=[{"role": "user", "content": "(not read by the scorer)"}],
        expected=expected or [VALUE],
        distractors=[DISTRACTOR] if distractors is None else distractors,
        meta={"variant": variant, "distractor_needles": [{"key": "red-fox-101", "value": DISTRACTOR, "depth": 0.2}],
              **(meta or {})},
        token_count=token_count,
    )


@pytest.fixture(scope="module")
def niah():
    # the niah scorer reads only the case: no tokenizer is needed to score
    return make_family("niah", BuildContext(tokenizer=None, haystack=None))  # type: ignore[arg-type]


def score(niah, case: Case, text: str | None, *, finish: str | None = "stop", reported: int | None = None,
          error: str | None = None):
    return score_response(niah, case, text=text, finish_reason=finish, reported_prompt_tokens=reported, error=error)


# --- input truncation: shortfall beyond max(4, 0.5% of the built count) ------------------------

def documented_tolerance(built: int) -> float:
    """The README's rule, real-valued: a shortfall strictly beyond this is truncation."""
    return max(4.0, 0.005 * built)


@pytest.mark.parametrize("built", [100, 800, 801, 1_000, 1_999, 2_000, 10_000, 131_072, 1_000_000])
def test_truncation_one_token_either_side_of_the_tolerance(niah, built: int) -> None:
    # the largest whole shortfall that is not beyond the tolerance, and the one after it
    allowed = int(documented_tolerance(built))
    kept, answer = score(niah, niah_case(built), VALUE, reported=built - allowed)
    assert (kept, answer.outcome) == (1.0, "correct"), f"{allowed} tokens short of {built} is within tolerance"
    cut, label = score(niah, niah_case(built), VALUE, reported=built - allowed - 1)
    assert cut is None and label.outcome == "input_truncated", f"{allowed + 1} short of {built} is truncation"
    assert label.detail == {"built": built, "reported": built - allowed - 1, "tolerance": allowed}


@pytest.mark.parametrize("built", [100, 2_000, 131_072])
def test_exact_counts_leave_no_tolerance(niah, built: int) -> None:
    # preflight showed the server counts our chat exactly: one token short is truncation
    def exact(reported: int):
        return score_response(niah, niah_case(built), text=VALUE, finish_reason="stop",
                              reported_prompt_tokens=reported, exact_counts=True)

    assert exact(built)[1].outcome == "correct"
    assert exact(built + 3)[1].outcome == "correct"
    s, label = exact(built - 1)
    assert s is None and label.outcome == "input_truncated" and label.detail["tolerance"] == 0


def test_truncation_tolerance_is_half_a_percent_not_more() -> None:
    # 10,000 built: 50 short is fine, 51 short is not; 5% (500) would wave 499 through
    from ctxprobe.scores.outcome import truncation_tolerance

    assert truncation_tolerance(10_000) == 50
    assert truncation_tolerance(100) == 4  # the floor of 4 tokens for short prompts
    assert truncation_tolerance(1_999) == 9  # 9.995 tokens: a 10-token shortfall is beyond it


def test_more_tokens_than_built_and_no_report_are_not_truncation(niah) -> None:
    assert score(niah, niah_case(1_000), VALUE, reported=1_200)[1].outcome == "correct"
    assert score(niah, niah_case(1_000), VALUE, reported=None)[1].outcome == "correct"


def test_truncation_wins_over_a_right_answer_and_an_error_wins_over_both(niah) -> None:
    # harness failures carry no score, and their label's score is 0, never credit
    s, label = score(niah, niah_case(1_000), VALUE, reported=10)
    assert (s, label.score, label.outcome) == (None, 0.0, "input_truncated")
    s, label = score(niah, niah_case(1_000), VALUE, reported=10, error="HTTP 500")
    assert (s, label.score, label.outcome) == (None, 0.0, "error") and label.detail == {"error": "HTTP 500"}
    s, label = score(niah, niah_case(1_000), None)
    assert (s, label.score, label.outcome) == (None, 0.0, "error") and label.detail == {"error": "no output"}


# --- output truncation: finish_reason="length" ------------------------------------------------

@pytest.mark.parametrize(
    ("text", "finish", "want_score", "want_outcome"),
    [
        (f"The number is {VALUE}", "length", 1.0, "correct"),  # cut after the answer: still right
        ("The special magic number for the key is", "length", 0.0, "output_truncated"),
        ("The special magic number for the key is", "stop", 0.0, "wrong"),
        ("", "length", 0.0, "output_truncated"),
        ("", "stop", 0.0, "empty"),
        ("The number is not mentioned in the", "length", 0.0, "output_truncated"),
        ("The number is not mentioned in the text.", "stop", 0.0, "not_found"),
        (f"It is {DISTRACTOR} or", "length", 0.0, "distractor"),  # a wrong answer given is no cut-off
        ("I'm sorry, I cannot", "length", 0.0, "refusal"),
        (f"The number is {VALUE}", None, 1.0, "correct"),
        ("The special magic number for the key is", None, 0.0, "wrong"),
    ],
)
def test_finish_reason_length_with_and_without_an_answer(niah, text, finish, want_score, want_outcome) -> None:
    s, label = score(niah, niah_case(), text, finish=finish, reported=10_000)
    assert (s, label.outcome) == (want_score, want_outcome)


# --- cut while thinking, a judge's grade, a long answer cut by the cap ----------------------------

@pytest.mark.parametrize(
    ("text", "finish", "thought", "want"),
    [
        ("", "length", True, (None, "output_truncated", True)),  # the budget ran out thinking: no score
        (" \n ", "length", True, (None, "output_truncated", True)),  # whitespace is no answer either
        ("", "stop", True, (0.0, "empty", False)),  # stopped with nothing: the model's own empty reply
        ("", "length", False, (0.0, "output_truncated", False)),  # no thinking seen: a scored cut-off miss
        ("The number is", "length", True, (0.0, "output_truncated", False)),  # it began answering: scored
        (f"The number is {VALUE}", "length", True, (1.0, "correct", False)),
    ],
)
def test_cut_while_thinking_only_with_thought_the_cap_and_no_answer(niah, text, finish, thought, want) -> None:
    s, label = score_response(niah, niah_case(), text=text, finish_reason=finish, reported_prompt_tokens=10_000,
                              thought=thought)
    assert (s, label.outcome, label.detail.get("while_thinking", False)) == want


def test_a_judges_grade_replaces_the_familys_and_its_failure_is_a_harness_one(niah) -> None:
    from ctxprobe.core.outcome import Outcome, Scored

    # the judge says right where the family's strict rule says wrong, and is taken
    s, label = score_response(niah, niah_case(), text="no digits here", finish_reason="stop",
                              reported_prompt_tokens=None, judged=Scored(1.0, Outcome.CORRECT))
    assert (s, label.outcome) == (1.0, "correct")
    s, label = score_response(niah, niah_case(), text=f"It is {VALUE}", finish_reason="stop",
                              reported_prompt_tokens=None, judged=Scored(0.0, Outcome.WRONG))
    assert (s, label.outcome) == (0.0, "wrong")
    # a judge that could not grade: no score, never the model's miss
    s, label = score_response(niah, niah_case(), text=f"It is {VALUE}", finish_reason="stop",
                              reported_prompt_tokens=None, judged=Scored(0.0, Outcome.ERROR, {"error": "judge down"}))
    assert (s, label.outcome, label.detail) == (None, "error", {"error": "judge down"})
    # a judged miss cut at the cap is a cut-off, as the family's own would be
    s, label = score_response(niah, niah_case(), text="The number", finish_reason="length",
                              reported_prompt_tokens=None, judged=Scored(0.0, Outcome.WRONG))
    assert (s, label.outcome) == (0.0, "output_truncated")


class _LongAnswers:
    """A family whose answers are long (``long_output``): its scorer gives 0.4 to anything."""

    long_output = True

    def score(self, case: Case, output: str):
        from ctxprobe.core.outcome import Outcome, Scored

        return Scored(0.4, Outcome.PARTIAL, {"f1": 0.4})


def test_a_long_answer_cut_by_the_cap_is_unscored_with_its_cut_score_kept() -> None:
    family = _LongAnswers()
    s, label = score_response(family, niah_case(), text="a | b", finish_reason="length",  # type: ignore[arg-type]
                              reported_prompt_tokens=None)
    assert (s, label.outcome, label.detail) == (None, "output_truncated", {"f1": 0.4, "cut_score": 0.4})
    s, label = score_response(family, niah_case(), text="a | b", finish_reason="stop",  # type: ignore[arg-type]
                              reported_prompt_tokens=None)
    assert (s, label.outcome) == (0.4, "partial")
    s, label = score_response(family, niah_case(), text="a | b", finish_reason=None,  # type: ignore[arg-type]
                              reported_prompt_tokens=None)
    assert (s, label.outcome) == (0.4, "partial")


def test_output_truncated_keeps_the_partial_score_of_a_set_answer(niah) -> None:
    values = ["1111111", "2222222", "3333333", "4444444"]
    case = niah_case(variant="multivalue", expected=values, distractors=[])
    s, label = score(niah, case, "1111111, 2222222, 33", finish="length")
    assert label.outcome == "partial" and s == pytest.approx(2 * 1.0 * 0.5 / 1.5)  # P=1, R=1/2
    s, label = score(niah, case, "The special magic numbers are", finish="length")
    assert (s, label.outcome) == (0.0, "output_truncated")


# --- numbers inside longer numbers ------------------------------------------------------------

@pytest.mark.parametrize(
    ("text", "found"),
    [
        (VALUE, True),
        (f"{VALUE}.", True),
        (f"({VALUE})", True),
        (f"value:{VALUE},", True),
        (f"x{VALUE}y", True),  # letters do not extend a number
        (f"{VALUE}1", False),  # 48192031 contains the value but is another number
        (f"1{VALUE}", False),
        (f"9{VALUE}9", False),
        (VALUE[:-1], False),
        (f"{VALUE[:3]} {VALUE[3:]}", False),
        (f"48192031 and then {VALUE}", True),  # the longer number does not hide a later exact one
    ],
)
def test_value_must_stand_alone(text: str, found: bool) -> None:
    assert has_number(text, VALUE) is found


@pytest.mark.parametrize("text", [f"{VALUE}1", f"1{VALUE}", "the number 48192031", f"{VALUE}0000"])
def test_niah_answer_inside_a_longer_number_is_a_miss(niah, text: str) -> None:
    s, label = score(niah, niah_case(), text)
    assert (s, label.outcome) == (0.0, "wrong")


def test_distractor_inside_a_longer_number_is_not_a_distractor_hit(niah) -> None:
    s, label = score(niah, niah_case(), f"{VALUE} (not {DISTRACTOR}9)")
    assert (s, label.outcome) == (1.0, "correct")
    s, label = score(niah, niah_case(), f"{VALUE} or {DISTRACTOR}")
    assert (s, label.outcome) == (0.0, "distractor")
    assert label.detail["distractors"][0]["key"] == "red-fox-101"


def test_multikey_is_scored_like_single_extra_numbers_cost_nothing(niah) -> None:
    # the rule: strict retrieval forbids another key's value (a distractor), nothing else;
    # multikey is "scored like single", not as a set
    case = niah_case(variant="multikey")
    assert score(niah, case, f"{VALUE} (checked against 12345)")[1].outcome == "correct"
    assert score(niah, case, f"{VALUE} or {DISTRACTOR}")[1].outcome == "distractor"
    multivalue = niah_case(variant="multivalue", distractors=[])
    assert score(niah, multivalue, f"{VALUE} (checked against 12345)")[1].outcome == "partial"  # a set: extras cost


def test_set_answer_counts_only_whole_numbers(niah) -> None:
    values = ["1111111", "2222222"]
    case = niah_case(variant="multivalue", expected=values, distractors=[])
    assert score(niah, case, "11111112, 22222221")[1].outcome == "wrong"  # extras only: no hits
    s, label = score(niah, case, "1111111, 22222221")
    assert label.outcome == "partial" and s == pytest.approx(0.5)  # P=1/2, R=1/2


# --- keys inside longer keys -------------------------------------------------------------------

@pytest.mark.parametrize(
    ("text", "n"),
    [
        ("red-fox-101", 1),
        ("the red-fox-101.", 1),
        ("red-fox-1011", 0),  # a longer number
        ("red-fox-101-b", 0),  # a longer key
        ("dark-red-fox-101", 0),
        ("red-fox-101 and red-fox-101", 2),
        ("red-fox-1010 red-fox-101", 1),
    ],
)
def test_key_inside_a_longer_key_is_not_counted(text: str, n: int) -> None:
    assert count_exact(text, "red-fox-101") == n


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("VAR_ABCDE", ["VAR_ABCDE"]),
        ("var_abcde.", ["var_abcde"]),
        ("VAR_ABCDEF", []),  # six letters: another (longer) name
        ("XVAR_ABCDE", []),
        ("VAR_ABCDE1", []),
        ("VAR_ABCD", []),
        ("VAR_ABCDE, VAR_FGHIJ", ["VAR_ABCDE", "VAR_FGHIJ"]),
    ],
)
def test_vartrack_names_are_whole(text: str, names: list[str]) -> None:
    assert NAME_RE.findall(text) == names


# --- labels that arrive from the wire -----------------------------------------------------------

def test_labels_decoded_from_a_response_compare_by_value(niah) -> None:
    """finish_reason comes out of a JSON body, a judge's grade may be read back from the
    store: equal strings that are not the same object must behave like the literals."""
    import json

    finish = json.loads('{"finish_reason": "length"}')["finish_reason"]
    s, label = score(niah, niah_case(), "The special magic number for the key is", finish=finish)
    assert (s, label.outcome) == (0.0, "output_truncated")
    from ctxprobe.core.outcome import Scored

    grade = Scored(0.0, json.loads('"error"'), {"error": "judge unreachable"})
    s, label = score_response(niah, niah_case(), text="4819203", finish_reason="stop",
                              reported_prompt_tokens=None, judged=grade)
    assert s is None and label.outcome == "error"


# --- aggregation: list words inside longer words ----------------------------------------------

def test_aggregation_counts_whole_list_words_only() -> None:
    from ctxprobe.families.aggregation.task import Aggregation

    family = Aggregation(BuildContext(tokenizer=None, haystack=None))  # type: ignore[arg-type]
    prompt = "Which words are most frequent?\n\ncat dog cat owl cat dog\n\nList the 2 most frequent words."
    case = Case(cell=Cell("aggregation", 1024, 0.5), rep=0, seed=1,
                messages=[{"role": "user", "content": prompt}], expected=["cat", "dog"], token_count=1024)
    assert family.score(case, "cat, dog").outcome == "correct"
    assert family.score(case, "Cat and DOG.").outcome == "correct"
    # "cats", "dogs", "catdog" are other words: not answers, and not counted as extras
    s = family.score(case, "cats, dogs, catdog")
    assert (s.score, s.outcome) == (0.0, "wrong") and s.detail["extras"] == []
    s = family.score(case, "cat, dogs")
    assert s.outcome == "partial" and s.detail["missing"] == ["dog"]
    s = family.score(case, "cat, dog, owl")  # a list word that is not among the top: an extra
    assert s.outcome == "partial" and s.detail["extras"] == ["owl"]


def test_a_multiquery_case_read_back_from_the_store_is_scored_per_key(niah) -> None:
    """The variant of a rescored case comes out of stored JSON: an equal string, not the
    literal, and it must still select the per-key detail."""
    import json

    variant = json.loads('"multiquery"')
    needles = [{"key": "red-fox-101", "value": "1111111"}, {"key": "blue-owl-202", "value": "2222222"}]
    case = niah_case(variant=variant, expected=["1111111", "2222222"], distractors=[], meta={"needles": needles})
    s, label = score(niah, case, "1111111")
    assert label.outcome == "partial"
    assert label.detail["per_key"] == {"red-fox-101": True, "blue-owl-202": False}
    assert "per_value" not in label.detail


# --- the set scorer's arithmetic at its edges ----------------------------------------------------

def test_set_match_edges_and_rounding() -> None:
    import dataclasses

    from ctxprobe.scores.setscore import match_set

    nothing_expected = match_set([], ["a"])
    assert (nothing_expected.recall, nothing_expected.precision, nothing_expected.f1) == (0.0, 0.0, 0.0)
    nothing_answered = match_set(["a"], [])
    assert (nothing_answered.recall, nothing_answered.precision, nothing_answered.f1) == (0.0, 0.0, 0.0)
    disjoint = match_set(["a"], ["b"])
    assert disjoint.f1 == 0.0
    # P = 1/3, R = 1/7, F1 = 2PR/(P+R) = 1/5: the detail rounds to 6 places
    m = match_set(["a", "b", "c", "d", "e", "f", "g"], ["a", "x", "y"])
    assert m.detail()["precision"] == 0.333333 and m.detail()["recall"] == 0.142857
    assert m.detail()["f1"] == 0.2
    m = match_set(["a", "b", "c"], ["a", "b", "x", "y", "z", "w"])  # P = 1/3, R = 2/3, F1 = 4/9
    assert m.detail()["f1"] == 0.444444
    from ctxprobe.scores.setscore import score_set

    scored = score_set(m, "a b x y z w")
    assert (scored.score, scored.outcome) == (0.444444, "partial")  # a partial score is rounded to 6 places too
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.answered = ("a",)  # type: ignore[misc]


# --- the survivors of benchmarks/mutation.py (scores/outcome.py, niah, documents) --------------

def test_cut_while_thinking_needs_the_cap_not_another_stop_and_scores_zero(niah) -> None:
    """Only ``length`` is the cap: ``content_filter`` (which sorts before it) is no cut-off
    while thinking; a finish reason built at run time (not an interned literal) still is;
    the label's own score is 0, never credit."""
    s, label = score_response(niah, niah_case(), text="", finish_reason="content_filter",
                              reported_prompt_tokens=None, thought=True)
    assert (s, label.outcome) == (0.0, "empty") and "while_thinking" not in label.detail
    length = "".join(["len", "gth"])  # equal to "length", not the same object
    s, label = score_response(niah, niah_case(), text="", finish_reason=length, reported_prompt_tokens=None,
                              thought=True)
    assert (s, label.score, label.outcome, label.detail) == (None, 0.0, "output_truncated", {"while_thinking": True})


def test_a_long_answer_cut_by_a_run_time_length_scores_zero_in_its_label() -> None:
    length = "".join(["len", "gth"])
    s, label = score_response(_LongAnswers(), niah_case(), text="a | b", finish_reason=length,  # type: ignore[arg-type]
                              reported_prompt_tokens=None)
    assert (s, label.score, label.outcome) == (None, 0.0, "output_truncated")


def test_only_a_wrong_niah_answer_with_a_malformed_number_becomes_parse_error(niah) -> None:
    """A reply holding a number no grouping reads (``12,345,6``) is ``parse_error`` only when
    it is otherwise ``wrong``: a not-found reply, a refusal or a distractor keeps its label."""
    s, label = score(niah, niah_case(), "It might be 12,345,6.")
    assert label.outcome == "parse_error"
    s, label = score(niah, niah_case(), "The number is not mentioned in the text, only 12,345,6.")
    assert label.outcome == "not_found"
    s, label = score(niah, niah_case(), "I'm sorry, I cannot say: 12,345,6.")
    assert label.outcome == "refusal"
    s, label = score(niah, niah_case(), f"It is {DISTRACTOR}, or 12,345,6.")
    assert label.outcome == "distractor"


def _choice_case(answer: str) -> Case:
    return Case(cell=Cell("documents", 2048, 0.5), rep=0, seed=1,
                messages=[{"role": "user", "content": "(not read by the scorer)"}], expected=[answer],
                distractors=[], meta={"choices": {"A": "a", "B": "b", "C": "c", "D": "d"}, "rule": "longbench-v2"},
                token_count=2048)


@pytest.mark.parametrize(("reply", "score_", "outcome"), [
    ("The correct answer is (C)", 1.0, "correct"),
    ("The correct answer is (A)", 0.0, "wrong"),  # a letter before the answer's is no match
    ("The correct answer is (D)", 0.0, "wrong"),
    ("I am sorry, I cannot help with that.", 0.0, "refusal"),  # no letter: the miss is classified
    ("The answer is not mentioned in the text.", 0.0, "not_found"),
])
def test_a_longbench_choice_is_right_only_on_its_own_letter(reply: str, score_: float, outcome: str) -> None:
    documents = make_family("documents", BuildContext(tokenizer=None, haystack=None))  # type: ignore[arg-type]
    s, label = score_response(documents, _choice_case("C"), text=reply, finish_reason="stop",
                              reported_prompt_tokens=None)
    assert (s, label.outcome) == (score_, outcome)
