"""The Outcome enum is its stored string: what is stored, exported and reported is the
plain value, and a stored value read back is the same member."""

from __future__ import annotations

import json
import sqlite3

from ctxprobe.core.outcome import CUT_MISSES, HARNESS_OUTCOMES, OUTCOMES, Outcome

#: The values stores already hold: renaming one would orphan every stored run.
STORED = ("correct", "wrong", "distractor", "stale", "partial", "not_found", "refusal", "empty", "parse_error",
          "output_truncated", "input_truncated", "error")


def test_values_are_the_stored_strings_in_report_order() -> None:
    assert tuple(o.value for o in OUTCOMES) == STORED
    assert OUTCOMES == STORED  # members compare equal to their strings
    assert all(Outcome(v) is o for v, o in zip(STORED, OUTCOMES))


def test_a_member_serialises_as_its_plain_value() -> None:
    o = Outcome.OUTPUT_TRUNCATED
    assert str(o) == "output_truncated" and f"{o}" == "output_truncated" and "%s" % o == "output_truncated"
    assert f"{o:>18}|" == "  output_truncated|"
    assert json.dumps({"outcome": o, o: 1}) == '{"outcome": "output_truncated", "output_truncated": 1}'
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (outcome TEXT)")
    db.execute("INSERT INTO t VALUES (?)", (o,))
    assert db.execute("SELECT outcome, typeof(outcome) FROM t").fetchone() == ("output_truncated", "text")


def test_stored_strings_and_members_are_one_key() -> None:
    assert "error" in HARNESS_OUTCOMES and Outcome.ERROR in {"error"}
    assert "wrong" not in HARNESS_OUTCOMES and "input_truncated" in HARNESS_OUTCOMES
    counts = {"input_truncated": 3}
    assert counts.get(Outcome.INPUT_TRUNCATED) == 3
    assert CUT_MISSES == {"wrong", "empty", "not_found"}
