"""Mutation score of the critical modules (cosmic-ray): how many small deliberate bugs the
tests catch. Slow (every mutant reruns its tests), so not part of CI.

For each module, cosmic-ray makes every single-operator mutant (``+`` → ``-``, ``<`` →
``<=``, ``True`` → ``False``, a number nudged, a ``break`` → ``continue``, ...) and runs the
module's own test files (``pytest -x -m "not slow"``) against it. A mutant is *killed* when
the tests fail (or time out), *survives* when they pass. A survivor listed in
``EQUIVALENT`` below (matched by module and mutated line) changes no behaviour a caller can
see, with the reason written there; it is reported apart and left out of the score, as
mutation-testing practice does. Printed per module: mutants, killed (hung: of them, killed by
the timeout), equivalent, survived,
score = killed / (killed + survived); then every unexplained survivor as a diff, to be
killed by a new test or explained.

Everything runs in a scratch copy of ``src/`` and ``tests/`` (one per module): the working
tree is never mutated, even if the run is interrupted. Each mutant's tests run with
``--assert=plain`` (pass or fail is all that counts; rewriting the asserts of every plugin
module on each run doubled the start-up time) and the hypothesis profile ``mutation``
(derandomized, no shrinking; see ``tests/conftest.py``). A mutant's test run that exceeds
the timeout (by default 4 x the unmutated forked run + 3 s; 5 x + 10 s with ``--no-fork``)
counts as killed: it made the code hang. ``--jobs 2`` runs two modules at once, each in its
own copy; ``--split 3`` spreads one module's mutants over three copies run at once (every
third mutant each). Each test run is a fork of a process that already imported pytest and
the third-party modules the tests use, never ctxprobe (``benchmarks/mutation_forkserver.py``;
``--no-fork``: a fresh interpreter each).

    .venv/bin/python benchmarks/mutation.py                    # every module below (~1 hour)
    .venv/bin/python benchmarks/mutation.py scoring stats      # chosen modules only
    nice -n 10 .venv/bin/python benchmarks/mutation.py --jobs 2 grid packer   # two at once
    .venv/bin/python benchmarks/mutation.py --list             # modules, scopes and tests

``--named`` instead applies, by hand, the deliberate bugs that once passed every relevant
test plus a store that never commits, and checks that each is now caught:

    .venv/bin/python benchmarks/mutation.py --named            # seconds

Operators left out: replacing an arithmetic operator with a bitwise or shift one (``+`` →
``|``, ``<<``...) -- on floats they raise at once and on ints they are caught by the same
tests as ``+`` → ``-``: counting them only inflates the score.
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Target:
    """A module, the functions of it to mutate (None: all of it) and the tests that guard it."""

    path: str
    tests: tuple[str, ...]
    functions: tuple[str, ...] | None = None


TARGETS: dict[str, Target] = {
    "scoring": Target("src/ctxprobe/scores/outcome.py", ("tests/unit/test_boundaries_scoring.py",)),
    "packer": Target("src/ctxprobe/haystack/packer.py",
                     ("tests/unit/test_packer_units.py", "tests/unit/test_packer_loop.py", "tests/unit/test_properties_packer.py",
                      "tests/unit/haystack/test_counting_fill.py", "tests/unit/test_builder_encodes.py")),
    "fill": Target("src/ctxprobe/haystack/fill.py",
                   ("tests/unit/haystack/test_fill_units.py", "tests/unit/haystack/test_counting_fill.py")),
    "counting": Target("src/ctxprobe/haystack/counting.py",
                       ("tests/unit/haystack/test_counting_units.py", "tests/unit/haystack/test_counting_fill.py")),
    "niah": Target("src/ctxprobe/families/niah/task.py", ("tests/unit/test_boundaries_scoring.py", "tests/integration/test_niah_variants.py",
                                                          "tests/unit/test_boundaries_formatted_numbers.py"),
                   ("score", "_score", "has_number")),
    "setscore": Target("src/ctxprobe/scores/setscore.py",
                       ("tests/unit/test_properties_scoring.py", "tests/unit/test_boundaries_scoring.py")),
    "classify": Target("src/ctxprobe/scores/classify.py", ("tests/unit/test_boundaries_scoring.py",)),
    "vartrack": Target("src/ctxprobe/families/vartrack/task.py", ("tests/unit/test_boundaries_scoring.py", "tests/integration/test_vartrack.py"),
                       ("score",)),
    "aggregation": Target("src/ctxprobe/families/aggregation/task.py", ("tests/integration/test_aggregation.py",), ("score",)),
    "multihop": Target("src/ctxprobe/families/multihop/task.py", ("tests/integration/test_multihop.py",), ("score", "has_word")),
    # score() also applies the published sets' rules (Oolong's, LongBench v2's): their tests guard those paths
    "documents": Target("src/ctxprobe/families/documents/task.py",
                        ("tests/integration/test_documents.py", "tests/integration/test_published_longbench.py",
                         "tests/integration/test_published_oolong.py", "tests/unit/test_boundaries_scoring.py"),
                        ("score",)),
    "answers": Target("src/ctxprobe/scores/answers.py", ("tests/integration/test_documents.py",),
                      ("normalize_answer", "contains_answer")),
    "phonebook_score": Target("src/ctxprobe/families/phonebook/score.py",
                              ("tests/unit/test_boundaries_phonebook_reply.py", "tests/integration/test_phonebook_family.py")),
    "grid": Target("src/ctxprobe/analysis/grid.py", ("tests/unit/analysis/test_grid.py", "tests/unit/test_boundaries_grid.py",
                                                      "tests/unit/test_properties_scoring.py")),
    "stats": Target("src/ctxprobe/analysis/stats.py",
                    ("tests/unit/analysis/test_stats.py", "tests/unit/test_boundaries_grid.py",
                     "tests/unit/test_properties_stats.py")),
    # the sweep-based tests/integration/test_phonebook_metrics.py (2 s a run) is left out of the mutation
    # guard: the direct tests stand in for it, at a tenth of the time per mutant
    "phonebook": Target("src/ctxprobe/families/phonebook/analysis.py",
                        ("tests/unit/test_phonebook_analysis_units.py", "tests/unit/test_phonebook_metrics_by_hand.py")),
    "phonebook_post": Target("src/ctxprobe/families/phonebook/analysis_post.py",
                             ("tests/integration/test_phonebook_post.py", "tests/unit/test_phonebook_analysis_units.py")),
    "store": Target("src/ctxprobe/store/db.py", ("tests/integration/test_store.py", "tests/integration/test_store_durability.py")),
}

EXCLUDED_OPERATORS = (r"core/ReplaceBinaryOperator_\w+_(BitOr|BitAnd|BitXor|LShift|RShift)$",)

_FIT_END = ("fit's loop first extends the pool until its last prefix sum exceeds the budget, so the search "
            "never reaches the last index: an upper bound one past it changes nothing")

_FIT_NEG = ("a budget below 0 skips the pool's extension (prefix[-1] >= 0 > budget) and the search can only "
            "return 0: the early return changes nothing")

_PB_NONE = ("only MUC can be None at the point with defined resamples; any other metric None at the point has "
            "a reason or no defined resample, so its edge note is never computed")

_PB_GROUP = ("the records of one (length, N, run) group are one book: one record unsharded, one per shard "
             "otherwise, all with the same shard count and entries")

_PB_NOTE = ("a metric with a reason (post n/a) is undefined in every resample, so lo and hi are None; one None "
            "at the point without a reason has no defined resample: the changed conditions never differ")

_BISECT_N = ("with the search capped at n, a want past prefix[n] gives i = n instead of n + 1, which the next "
             "line turns into n anyway")

_FILL_N = ("trimming needs rem > 0, so a budget > 0, and fit() then extends the pool past it: sentence n is "
           "always there (n < len), and the fallback '' is never reached")

#: (module, the mutated line as the mutant writes it, stripped) -> why no test can tell.
EQUIVALENT: dict[tuple[str, str], str] = {
    ("stats", "if n <= 0:"): "n < 0 has already raised ValueError two lines above",
    ("stats", "lo = 0.0 if p <= 0.0 else max(0.0, centre - half)"): "p is clamped to >= 0 just above",
    ("stats", "hi = 1.0 if p >= 1.0 else min(1.0, centre + half)"): "p is clamped to <= 1 just above",
    ("niah", 'if variant <= "multiquery":'):
        "only multivalue and multiquery reach it (the Variant literal; single and multikey return above), "
        "and 'multivalue' > 'multiquery', so <= selects exactly what == does",
    ("niah", "if has_number(output, case.expected[ -1]):"):
        "single and multikey cases have exactly one expected value (generate), so [-1] is [0]",
    ("niah", "if scored.outcome >= Outcome.WRONG and malformed_grouped(normalise_grouped(output)):"):
        "'wrong' sorts after every other outcome's value, so >= selects exactly what == does",
    ("niah", "if scored.outcome is Outcome.WRONG and malformed_grouped(normalise_grouped(output)):"):
        "the scorers label with Outcome members, enum singletons: is and == agree on them",
    ("documents", "if letter is case.expected[0]:"):
        "both are one letter A-D, and CPython keeps one interned object per one-character string",
    ("documents", "if letter == case.expected[ -1]:"):
        "a LongBench v2 case has exactly one expected letter (its reader), so [-1] is [0]",
    ("documents", 'return oolong_scored(rule, case.expected[ -1], meta.get("answer_type"), output)'):
        "an Oolong case has exactly one expected answer (its reader), so [-1] is [0]",
    ("grid", "return stat.n != 0 and not stat.outcomes.get(Outcome.INPUT_TRUNCATED)"):
        "n counts scored rows: never negative, so != 0 is > 0",
    ("phonebook_score", "if needle_outcomes and all(o <= Outcome.CORRECT for o in needle_outcomes):"):
        "'correct' sorts before every other outcome's value, so <= selects exactly what == does",
    ("phonebook_score", "if any(o <= Outcome.CORRECT for o in needle_outcomes):"):
        "'correct' sorts before every other outcome's value, so <= selects exactly what == does",
    ("phonebook_post", "if len(values) >= len(parts):"):
        "values is parts filtered: never longer, so >= selects exactly what == does",
    ("phonebook_post", "if len(values) is len(parts):"):
        "both are 0 to 3, small ints CPython keeps one object each of: is and == agree",
    ("phonebook_post", "stats = {k: post_stats(v) for k, v in per_bin.items() if len(v) > 2 and not np.isnan(np.asarray(v, float)).any()}"):
        "a two-bin configuration (N = 2) is fitted but no metric reads it: they read N = 100 and N = 10 only",
    ("multihop", "if has_word(output, case.expected[ -1]):"):
        "a multihop case has exactly one expected city (generate), so [-1] is [0]",
    ("setscore", "return 2 * p * r / (p + r) if p * r else 0.0"):
        "p and r share the numerator len(hits): both are 0 or both are > 0, so p*r and p+r are 0 together",
    ("phonebook_score", 'if len(digits) >= 11 and digits.startswith("1"):'):
        "12 or more digits minus a leading 1 are still not 10: None either way",
    ("phonebook_score", 'if needle_outcomes and all(o <= "correct" for o in needle_outcomes):'):
        "no needle label sorts before 'correct' (distractor, empty, not_found, parse_error, wrong), so <= is ==",
    ("phonebook_score", 'if any(o <= "correct" for o in needle_outcomes):'):
        "no needle label sorts before 'correct' (distractor, empty, not_found, parse_error, wrong), so <= is ==",
    ("phonebook_score", "end = hits[i + 1].start() if i + 1 != len(hits) else len(line)"):
        "i + 1 <= len(hits) always, so != is <",
    ("phonebook_score", "return max(_FAILURE_RANK, key=lambda o: (counts.get(o, 0), ~_FAILURE_RANK.index(o)))"):
        "~i = -i - 1 orders the labels as -i does",
    ("phonebook_score", "return max(_FAILURE_RANK, key=lambda o: (counts.get(o, 0), not _FAILURE_RANK.index(o)))"):
        "max keeps the first of tied keys in _FAILURE_RANK order, and 'distractor' (index 0) wins its ties "
        "either way: the same label",
    ("phonebook_score", "return max(_FAILURE_RANK, key=lambda o: (counts.get(o, -1), -_FAILURE_RANK.index(o)))"):
        "some failure label occurs (count >= 1) whenever this line runs, so an absent label's default never wins",
    ("phonebook_score", 'finder = re.compile(r"(?<![A-Za-z])(" + "|".join(sorted(map(re.escape, wanted), '
                        'key=len, reverse=False))'):
        "the look-arounds reject a name inside a longer one, so the regex backtracks to the longer name in any order",
    ("phonebook_score", "name = hit.group( 0).lower()"):
        "the look-arounds are zero-width: group 0 is group 1",
    ("phonebook_post", "for m in sorted({k[0] for k in per_bin if k[1] is N_REF}):"):
        "N is a Python int and CPython keeps one object per int up to 256: N == 100 is N is 100",
    ("store", "return cur.rowcount <= 0"): "an INSERT's rowcount is 0 or 1, never negative",
    ("store", "return cur.rowcount != 0"): "an INSERT's rowcount is 0 or 1, never negative",
    ("store", "exact = [r for r in rows if r[0] <= run_id]"):
        "rows are the ids LIKE run_id || '%': each starts with run_id, so none sorts before it and <= is ==",
    ("store", 'if status >= "running" and not live_sessions(self.db, run_id):'):
        "stored statuses are running, complete and incomplete: none sorts after 'running', so >= is ==",
    ("store", "merged = {**(json.loads(row[ -1]) if row else {}), **meta}"): "a one-column row: [-1] is [0]",
    ("store", "return self._record(exact[ -1])"): "run_id is the primary key: at most one exact row",
    ("store", "return self._record(rows[ -1]) if rows else None"): "reached with one row only (more raise above)",
    ("store", "return {r[ -1] for r in rows}"): "a one-column row: [-1] is [0]",
    ("store", 'return {r[ -1] for r in self.db.execute("SELECT case_id FROM cases WHERE run_id=?", (run_id,))}'):
        "a one-column row: [-1] is [0]",
    ("store", "return float(row[ -1])"): "a one-column row: [-1] is [0]",
    ("packer", "lo, hi = 0, len(self._prefix) ** 1"): _FIT_END,
    ("packer", "lo, hi = 0, len(self._prefix) * 1"): _FIT_END,
    ("packer", "lo, hi = 0, len(self._prefix) - 0"): _FIT_END,
    ("packer", "lead_tokens: int = -1,"):
        "a default lead of -1 only lets a target exactly one token below the no-filler prompt past the early "
        "check; the loop then refuses it too (LengthTooShort, naming the encoded size instead of the summed one)",
    ("packer", "nxt = n - 2"): "reached only with n == 0 (any n > 0 drops a sentence above): -2 is refused like -1",
    ("packer", "offsets = [ 1] * len(inserts)"):
        "every insert has a boundary in [lo, n] and the loop visits each: every initial offset is overwritten",
    ("store", 'self.db = sqlite3.connect(f"{where.resolve().as_uri()}?mode=ro", uri=False, timeout=30)'):
        "Python's sqlite3 is built with SQLITE_USE_URI=1: a file: name is read as a URI either way",
    ("store", 'self.db = sqlite3.connect(f"{where.resolve().as_uri()}?mode=ro", uri=True, timeout= 31)'):
        "the read path's lock wait, 30 s against 31: no test can wait that long to tell them apart",
    ("store", 'self.db = sqlite3.connect(f"{where.resolve().as_uri()}?mode=ro", uri=True, timeout= 29)'):
        "the read path's lock wait, 30 s against 29: no test can wait that long to tell them apart",
    ("store", """tables = [r[ -1] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]"""):
        "the query selects one column: r[0] is r[-1]",
    ("store", "merged = {**(json.loads(row[ -1]) if row else {}), **_meta(meta).to_json()}"):
        "the query selects one column (meta_json): row[0] is row[-1]",
    ("packer", "while lo != hi:"): "lo <= hi holds throughout the search (mid > lo; hi = mid - 1 >= lo): != is <",
    ("packer", "elif actual >= predicted or actual >= target:"):
        "reached only with actual <= target (the branch above): actual >= target is actual == target",
    ("packer", "elif actual >= predicted or actual > target:"):
        "reached only with actual <= target, so this drops the stop at actual == target: the step up is then "
        "min(..., target - actual) = 0, a budget already tried, and the loop stops the same",
    ("packer", "elif actual > predicted or actual == target:"):
        "with actual == predicted the else aims at budget + 0, a budget already tried, and the loop stops the same",
    ("packer", "if len(messages) > len(one) and target - actual > tol:"):
        "a conversation cut from a full haystack never has fewer messages than the one-sentence render",
    ("packer", "if len(messages) is not len(one) and target - actual > tol:"):
        "message counts are small ints, which CPython caches: is not is !=",
    ("packer", 'pin["record"] = True'):
        "the turn count is recorded by the first record render and read before record is looked at again",
    ("packer", "mid = (lo + hi + 2) // 2"):
        "mid stays in (lo, hi] and the answer in [lo, hi] either way: the search still ends on it",
    ("packer", "offsets = [ -1] * len(inserts)"):
        "every insert has a boundary in [lo, n] and the loop visits each: every initial offset is overwritten",
    ("packer", "if nxt >= n:"): "nxt only ever decreases from n: >= is ==",
    ("packer", "i = bisect.bisect_left(pool._prefix, want, lo, n // 1)"):
        "with the search capped at n, a want past prefix[n] gives i = n instead of n + 1, which the next line "
        "turns into n anyway",
    ("packer", "if budget == 0:"): _FIT_NEG,
    ("packer", "if budget <= -1:"): _FIT_NEG,
    ("packer", "i = bisect.bisect_left(pool._prefix, want, lo, n * 1)"):
        "with the search capped at n, a want past prefix[n] gives i = n instead of n + 1, which the next line "
        "turns into n anyway",
    ("packer", "if i > n or (i is not lo and want - pool.tokens(i - 1) <= pool.tokens(i) - want):"):
        "i >= lo, so 'is not lo' differs from '> lo' only at i == lo (or equal large ints), and stepping back to "
        "lo - 1 is undone by the clamp to [lo, n] on the next line",
    ("packer", "return pos, ((packed.insert_offsets[index] - packed.lead_tokens) / rest if rest != 0 else 0.0)"):
        "rest >= 0: the haystack's tokens include the insert and the lead",
    ("packer", "nxt = n + max(step, 0)"):
        "step >= 1 whenever it is computed: gap >= count(n) means the next sentence fits, so fit() returns > n",
    ("packer", "i = bisect.bisect_left(pool._prefix, want, lo, n ** 1)"):
        "with the search capped at n, a want past prefix[n] gives i = n instead of n + 1, which the next line "
        "turns into n anyway",
    ("packer", "i = bisect.bisect_left(pool._prefix, want, lo, n + 0)"):
        "with the search capped at n, a want past prefix[n] gives i = n instead of n + 1, which the next line "
        "turns into n anyway",
    ("packer", "lo, hi = -1, len(self._prefix) - 1"):
        "prefix[0] = 0 <= budget (> 0 here), so the search always moves lo to 0 or beyond",
    ("packer", "lo, hi = 0, len(self._prefix) - 2"):
        "the answer is at most len - 2 (the last prefix sum exceeds the budget), so len - 2 still bounds it",
    ("packer", "lo, hi = 0, len(self._prefix) // 1"): _FIT_END,
    ("packer", "if nxt is n:"): "nxt equals n only when it was never changed: then it is n itself",
    ("packer", "if i != n:"): "i runs over 0..n: != n is < n",
    ("packer", "if i > n or (i != lo and want - pool.tokens(i - 1) <= pool.tokens(i) - want):"):
        "i >= lo, so != lo is > lo",
    ("packer", "while nxt != 0 and pool.tokens(n) - pool.tokens(nxt) < over:"):
        "nxt starts at n >= 0 and the loop stops at 0: it is never negative, so != 0 is > 0",
    ("packer", "while self._prefix[-1] < budget:"):
        "when the counted total equals the budget the last index is the answer either way (every sentence "
        "counts >= 1 token); the original only counts one batch more",
    ("packer", "i = bisect.bisect_left(prefix, want, lo, n + 0)"): _BISECT_N,
    ("packer", "i = bisect.bisect_left(prefix, want, lo, n // 1)"): _BISECT_N,
    ("packer", "i = bisect.bisect_left(prefix, want, lo, n * 1)"): _BISECT_N,
    ("packer", "i = bisect.bisect_left(prefix, want, lo, n ** 1)"): _BISECT_N,
    ("packer", "if i > n or (i != lo and want - prefix[i - 1] <= prefix[i] - want):"): "i >= lo, so != lo is > lo",
    ("packer", "if i > n or (i >= lo and want - prefix[i - 1] <= prefix[i] - want):"):
        "at i == lo stepping back to lo - 1 is undone by the clamp to [lo, n] on the next line",
    ("packer", "if i > n or (i is not lo and want - prefix[i - 1] <= prefix[i] - want):"):
        "i >= lo; stepping back at i == lo is undone by the clamp to [lo, n] on the next line",
    ("packer", "for i in range(n + 2):"): "the extra pass (i = n + 1) has no insert slot and adds no sentence",
    ("packer", "if i > n or (i >= lo and want - pool.tokens(i - 1) <= pool.tokens(i) - want):"):
        "at i == lo stepping back to lo - 1 is undone by the clamp to [lo, n] on the next line",
    ("packer", "if actual > predicted or actual == target:"):
        "at actual == predicted the next budget is the same one, already tried: the loop stops either way",
    ("packer", "while nxt in tried and nxt <= budget:  # already tried lower: go lower still"):
        "nxt never equals budget here: the over step lowers it, the under step raises it (equal counts stopped)",
    ("packer", "if actual >= predicted or actual >= target:"):
        "inside 'if actual <= target': actual >= target is actual == target",
    ("fill", "if rem > tolerance / 2:"): "rem is an int: rem > t // 2 and rem > t / 2 agree for every int t",
    ("fill", 'heads = [" ".join(words[:k]).rstrip(",;:-") + "." for k in range( 0, len(words))]'):
        "the head of 0 words is '.', dropped by the filter on the next line",
    ("fill", 'heads = [h for h in heads if h is not "."]'):
        "a head of '.' is '' + '.', which CPython returns as the interned '.' itself: 'is not' filters it as != does",
    ("fill", 'cut = trim(tokenizer, pool.sentences[n] if n <= len(pool.sentences) else "", rem)'): _FILL_N,
    ("fill", 'cut = trim(tokenizer, pool.sentences[n] if n != len(pool.sentences) else "", rem)'): _FILL_N,
    ("fill", 'cut = trim(tokenizer, pool.sentences[n] if n is not len(pool.sentences) else "", rem)'): _FILL_N,
    ("counting", "if held is None or held[0] != tokenizer:"):
        "_STRONG keeps each tokenizer alive, so no other object takes its id: held[0] is the tokenizer itself, "
        "and != compares it with itself",
    ("counting", "if wc.enabled == False:"): "enabled is None, True or False: == False holds exactly when is False does",
    ("fill", "while rem > 0 and j != n + LOOKAHEAD:"):
        "j starts at n and steps by one: it reaches n + LOOKAHEAD exactly, so != stops where < does",
    ("phonebook", 'unit = recs[ -1]["meta"].get("unit", "entries")'):
        "the records of one (length, N, run) group come from one spec, so they share one unit",
    ("phonebook", "walk.append(L if float(np.nanmin(groups[key])) >= bar else - 2)"):
        "any negative marks a failed length: the walk only tests L < 0",
    ("phonebook", "if L <= 0:"): "lengths are positive: L is 0 never, and a failure is marked negative",
    ("phonebook", 'in_entries = all(r.unit <= "entries" for r in results)'):
        "units are 'entries' or 'tokens', and 'tokens' sorts after 'entries': <= is ==",
    ("phonebook", "if len(recs) != shards:"):
        "a (length, N, run) group holds one record per shard at most (one case each): more never happens",
    ("phonebook", "for key, v in sorted(point.items(), key=lambda kv: (METRICS.index(kv[0][0]), kv[0][1], "
                  "kv[0][2] or -1)):"): "the only key without a length is MUC's, alone under its name",
    ("phonebook", "for key, v in sorted(point.items(), key=lambda kv: (METRICS.index(kv[0][0]), kv[0][1], "
                  "kv[0][ 1] or 0)):"):
        "the point's keys are inserted length by length in ascending order, so the stable sort keeps that order",
    ("phonebook", "if lo >= hi:"): "percentiles: lo <= hi always, so >= is ==",
    ("phonebook", "if note is None and d and value_for_edge is not None and lo is not None or hi is not None:"):
        "a metric undefined at the point is undefined in every resample (resamples re-weight the same runs), so "
        "hi is None whenever the other conditions fail",
    ("phonebook", 'wrong_elsewhere = [p["outcome"] for p in parts if not p["in_shard"] and p["outcome"] > "correct"]'):
        "every needle label other than 'correct' sorts after it",
    ("phonebook", "walk.append(L if float(np.nanmin(groups[key])) >= bar else ~1)"):
        "any negative marks a failed length: the walk only tests L < 0",
    ("phonebook", "if not np.isnan(g[i]) or later.size:"):
        "a NaN start gives a NaN drop, and max(best, nan) keeps best; a non-NaN start makes later non-empty",
    ("phonebook", 'if name == "RRS" and L is not None and point.get(("LCRDS", "robust", L)) <= 0.0:'):
        "LCRDS = 100 x a share x (1 - a mean of drops <= 1) is never negative, and is defined wherever RRS is",
    ("phonebook", "ref = next((L for L in lengths if (L, max(ns)) in counts), lengths[ -1])"):
        "max(ns) is some result's N, so some length has it: the default is never used",
    ("phonebook", 'return self.outcome <= "correct"'): "no needle label sorts before 'correct'",
    ("phonebook", '"NOI": _drop(total[lo_key], total[key]) if n_lo is not n_ref and lo_key in counts else None,'):
        "n_lo and n_ref are min and max of one set: the same object when equal",
    ("phonebook", 'if name <= "MUC":'): _PB_NONE,
    ("phonebook", 'if name >= "MUC":'): _PB_NONE,
    ("phonebook", 'outcome = own[ -1]["outcome"] if own else "empty"'): "a needle has exactly one owning shard",
    ("phonebook", "for key, v in sorted(point.items(), key=lambda kv: (METRICS.index(kv[0][0]), kv[0][1], "
                  "kv[0][2] or 1)):"): "the only key without a length is MUC's, alone under its name",
    ("phonebook", "deg = max( -1, min(degree, int(ok.sum()) - 1))"):
        "reached with ok.sum() >= 1 only (no measured bin returns NaN below), so the inner value is >= 0",
    ("phonebook", 'shards = recs[ -1]["meta"].get("shards", 1)'): _PB_GROUP,
    ("phonebook", 'shards = recs[0]["meta"].get("shards", 0)'):
        "no shard count means one book: 0 and 1 both take the unsharded path (shards > 1 is false)",
    ("phonebook", 'needles = recs[ -1]["detail"]["needles"]'): _PB_GROUP,
    ("phonebook", 'm = recs[ -1]["meta"]["entries"]'): _PB_GROUP,
    ("phonebook", "if L < 1:"): "lengths are positive: a failure is marked negative",
    ("grid", 'return stat.n != 0 and not stat.outcomes.get("input_truncated")'):
        "n counts scored cases: never negative, so != 0 is > 0",
    ("phonebook", 'merged.append({**parts[ 1], "outcome": outcome, "exact": None})'):
        "every shard lists the same needles (bin, position, name) in the same order, and outcome and exact are "
        "overwritten",
    ("phonebook", 'if k[0] is "MUC":'): "metric names are the module's own (interned) literals",
    ("phonebook", 'if name is "MUC":'): "metric names are the module's own (interned) literals",
    ("phonebook", 'if outcome <= "correct" and wrong_elsewhere:'): "no needle label sorts before 'correct'",
    ("phonebook", "for key, v in sorted(point.items(), key=lambda kv: (METRICS.index(kv[0][0]), kv[0][1], "
                  "kv[0][2] and 0)):"):
        "the point's keys are inserted length by length in ascending order, so the stable sort keeps that order",
    ("phonebook", '"NOI": _drop(total[lo_key], total[key]) if n_lo < n_ref and lo_key in counts else None,'):
        "n_lo = min(ns) <= max(ns) = n_ref: < is !=",
    ("phonebook", 'if name >= "RRS" and L is not None and point.get(("LCRDS", "robust", L)) == 0.0:'):
        "no metric name sorts after 'RRS' (RRI < RRS): >= is ==",
    ("phonebook", 'if name is "RRS" and L is not None and point.get(("LCRDS", "robust", L)) == 0.0:'):
        "metric names are the module's own (interned) literals",
    ("phonebook", "if len(recs) is not shards:"):
        "a group holds at most one record per shard, and small ints are one object each: 'is not' is <",
    ("phonebook", "if shards != 1:"): "shard counts are >= 1: != 1 is > 1",
    ("phonebook", "if note is None and d or value_for_edge is not None and lo is not None and hi is not None:"):
        _PB_NOTE,
    ("phonebook", "if note is None and d and value_for_edge is not None or lo is not None and hi is not None:"):
        _PB_NOTE,
    ("phonebook", 'merged.append({**parts[ -1], "outcome": outcome, "exact": None})'):
        "every shard lists the same needles (bin, position, name) in the same order, and outcome and exact are "
        "overwritten",
    ("aggregation", 'vocabulary = set(list_words(case.messages[not 1]["content"]))'):
        "an aggregation case is one user message (render), so messages[0] is messages[-1]",
    ("aggregation", 'vocabulary = set(list_words(case.messages[- 0]["content"]))'):
        "an aggregation case is one user message (render), so messages[0] is messages[-1]",
}


def function_lines(source: str, names: tuple[str, ...]) -> list[tuple[int, int]]:
    """Line ranges (inclusive) of every function or method with one of ``names``."""
    spans = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in names:
            spans.append((node.lineno, node.end_lineno or node.lineno))
    return spans


@dataclass(frozen=True)
class Named:
    """A hand-made bug: replace ``old`` with ``new`` in ``path``; ``tests`` must fail."""

    what: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]


NAMED = (
    Named("truncation tolerance widened from 0.5% to 5%", "src/ctxprobe/scores/outcome.py",
          "int(0.005 * token_count)", "int(0.05 * token_count)", ("tests/unit/test_boundaries_scoring.py",)),
    Named("output_truncated relabel deleted", "src/ctxprobe/scores/outcome.py",
          'scored = Scored(scored.score, "output_truncated", scored.detail)', "pass",
          ("tests/unit/test_boundaries_scoring.py",)),
    Named("niah digit-bounded match replaced by a substring", "src/ctxprobe/families/niah/task.py",
          'return re.search(rf"(?<!\\d){re.escape(value)}(?!\\d)", text) is not None', "return value in text",
          ("tests/unit/test_boundaries_scoring.py",)),
    Named("phone-book post ADI absolute instead of relative", "src/ctxprobe/families/phonebook/analysis_post.py",
          "adi = PostValue(_rel_drop(main.max_y, main.min_y))",
          "adi = PostValue(max(main.max_y - main.min_y, 0.0))",
          ("tests/integration/test_phonebook_post.py",)),
    Named("phone-book robust NOI arguments swapped", "src/ctxprobe/families/phonebook/analysis.py",
          '"NOI": _drop(total[lo_key], total[key])', '"NOI": _drop(total[key], total[lo_key])',
          ("tests/unit/test_phonebook_metrics_by_hand.py", "tests/integration/test_phonebook_metrics.py")),
    Named("store never commits a response", "src/ctxprobe/store/db.py",
          'a timeout from another process."""\n        with self.db:',
          'a timeout from another process."""\n        if True:',
          ("tests/integration/test_store_durability.py", "tests/integration/test_store.py")),
)


def run_named(work: Path) -> bool:
    """Apply each NAMED bug in the scratch copy, run its tests, restore. True if all caught."""
    env = {**os.environ, "PYTHONPATH": str(work / "src"), "PYTHONDONTWRITEBYTECODE": "1"}
    all_caught = True
    for bug in NAMED:
        path = work / bug.path
        original = path.read_text()
        if bug.old not in original:
            print(f"GONE    {bug.what}: the code it mutates changed; update NAMED")
            all_caught = False
            continue
        path.write_text(original.replace(bug.old, bug.new, 1))
        try:
            tests = [t for t in bug.tests if (work / t).exists()]
            run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not slow",
                                  *tests], cwd=work, env=env, capture_output=True, text=True)
        finally:
            path.write_text(original)
        failed = sorted({ln.split("::")[-1].split(" ")[0].split("[")[0] for ln in run.stdout.splitlines()
                         if ln.startswith(("FAILED", "ERROR"))})
        caught = run.returncode != 0
        all_caught &= caught
        print(f"{'caught' if caught else 'MISSED':7} {bug.what}")
        for name in failed:
            print(f"{'':7}   by {name}"[:80])
    return all_caught


Span = tuple[tuple[int, int], tuple[int, int]]  # ((line, col), (end line, end col))


def _span(node: ast.AST) -> Span:
    return ((node.lineno, node.col_offset), (node.end_lineno or node.lineno, node.end_col_offset or 0))


def inert_spans(source: str) -> list[Span]:
    """Where a mutant cannot change behaviour, so it is not counted: type annotations (never
    evaluated under ``from __future__ import annotations``: ``str | None`` → ``str + None``)
    and the ``*`` / ``/`` markers of a signature (``*`` → ``/`` only lets callers that
    already pass keywords pass positions too)."""
    tree = ast.parse(source)
    spans: list[Span] = []
    postponed = any(isinstance(n, ast.ImportFrom) and n.module == "__future__"
                    and any(a.name == "annotations" for a in n.names) for n in tree.body)
    lines = source.splitlines()
    for node in ast.walk(tree):
        if postponed:
            if isinstance(node, ast.arg) and node.annotation is not None:
                spans.append(_span(node.annotation))
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
                spans.append(_span(node.returns))
            elif isinstance(node, ast.AnnAssign):
                spans.append(_span(node.annotation))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defaults = [_span(d) for d in [*node.args.defaults, *node.args.kw_defaults] if d is not None]
            for line in range(node.lineno, node.body[0].lineno):
                for col, ch in enumerate(lines[line - 1]):
                    if ch in "*/" and not any(_inside((line, col), d) for d in defaults):
                        spans.append(((line, col), (line, col + 1)))
    return spans


def _inside(pos: tuple[int, int], span: Span) -> bool:
    return span[0] <= pos < span[1]


@dataclass
class Outcome:
    module: str
    killed: int = 0
    hung: int = 0  # killed by the timeout (included in killed)
    equivalent: list[str] = field(default_factory=list)
    survivors: list[str] = field(default_factory=list)

    @property
    def score(self) -> float:
        counted = self.killed + len(self.survivors)
        return self.killed / counted if counted else float("nan")

    def line(self) -> str:
        total = self.killed + len(self.equivalent) + len(self.survivors)
        score = f"{self.score:7.1%}" if self.killed + len(self.survivors) else f"{'-':>7}"
        return (f"{self.module:16} {total:7} {self.killed:7} {self.hung:5} {len(self.equivalent):6} "
                f"{len(self.survivors):8} {score}")


HEADER = f"{'module':16} {'mutants':>7} {'killed':>7} {'hung':>5} {'equiv':>6} {'survived':>8} {'score':>7}"


PYTEST = ("-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "--assert=plain", "-m", "not slow")


def scratch_copy(work: Path) -> None:
    """Copy what the tests need into ``work``."""
    shutil.copytree(ROOT / "src", work / "src", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "tests", work / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "examples", work / "examples", ignore=shutil.ignore_patterns("__pycache__"))  # tests read them
    shutil.copy(ROOT / "pyproject.toml", work / "pyproject.toml")


FORKSERVER = Path(__file__).resolve().with_name("mutation_forkserver.py")


def run_module(name: str, target: Target, work: Path, timeout: float | None, fork: bool = True,
               shard: tuple[int, int] = (0, 1)) -> Outcome:
    """Killed, equivalent and surviving mutants of one module (``timeout`` None: from the
    unmutated run's duration); with ``shard`` (k, n) only every n-th mutant from the k-th."""
    env = {**os.environ, "PYTHONPATH": str(work / "src"), "PYTHONDONTWRITEBYTECODE": "1",
           "CTXPROBE_HYPOTHESIS_PROFILE": "mutation"}
    started = time.monotonic()
    baseline = subprocess.run([sys.executable, *PYTEST, *target.tests], cwd=work, env=env, capture_output=True,
                              text=True)
    if baseline.returncode != 0:
        raise SystemExit(f"{name}: the tests fail without any mutation; fix them first:\n{baseline.stdout[-2000:]}")
    fresh = time.monotonic() - started
    sock = work / "forkserver.sock"
    server = None
    if fork:
        server = subprocess.Popen([sys.executable, str(FORKSERVER), "serve", str(sock), str(work), *PYTEST[2:],
                                   *target.tests], cwd=work, stdout=subprocess.PIPE, text=True,
                                  env={**env, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"})
        if server.stdout is None or server.stdout.readline().strip() != "ready":
            raise SystemExit(f"{name}: the pytest fork server did not start")
    try:
        if fork:
            started = time.monotonic()
            warm = subprocess.run([sys.executable, "-S", str(FORKSERVER), "run", str(sock)], check=False)
            if warm.returncode != 0:
                raise SystemExit(f"{name}: the tests fail in the fork server without any mutation")
            if timeout is None:  # a forked run is fast and steady: 4 x its time + 3 s catches a hang early
                timeout = round(4 * (time.monotonic() - started) + 3, 1)
        if timeout is None:
            timeout = round(5 * fresh + 10, 1)
        _exec(name, target, work, env, timeout, sock if fork else None, shard)
    finally:
        if server is not None:
            subprocess.run([sys.executable, "-S", str(FORKSERVER), "stop", str(sock)], check=False)
            server.wait(timeout=30)
    return _collect(name, target, work)


def _exec(name: str, target: Target, work: Path, env: dict[str, str], timeout: float, sock: Path | None,
          shard: tuple[int, int] = (0, 1)) -> None:
    """Make the module's mutants with cosmic-ray, mark those out of scope, run the rest."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    tests = " ".join(target.tests)
    command = (f"{sys.executable} -S {FORKSERVER} run {sock}" if sock is not None
               else f"{sys.executable} {' '.join(PYTEST[:-1])} 'not slow' {tests}")
    excluded = ", ".join(f"'{e}'" for e in EXCLUDED_OPERATORS)  # TOML literal strings: no escapes
    config = work / f"{name}.toml"
    config.write_text(textwrap.dedent(f"""\
        [cosmic-ray]
        module-path = "{target.path}"
        timeout = {timeout}
        excluded-modules = []
        test-command = "{command}"

        [cosmic-ray.distributor]
        name = "local"

        [cosmic-ray.filters.operators-filter]
        exclude-operators = [{excluded}]
        """))
    session = work / f"{name}.sqlite"
    bindir = Path(sys.executable).parent

    def cr(*args: str) -> None:
        subprocess.run([str(bindir / args[0]), *args[1:]], cwd=work, env=env, check=True,
                       stdout=subprocess.DEVNULL)

    cr("cosmic-ray", "init", str(config), str(session))
    cr("cr-filter-operators", str(session), str(config))
    source = (work / target.path).read_text()
    scope = function_lines(source, target.functions) if target.functions is not None else None
    inert = inert_spans(source)
    with use_db(str(session), WorkDB.Mode.open) as db:
        for index, item in enumerate(sorted(db.pending_work_items, key=lambda w: w.job_id)):
            start = tuple(item.mutations[0].start_pos)
            why = None
            if index % shard[1] != shard[0]:
                why = "another shard's"
            elif scope is not None and not any(lo <= start[0] <= hi for lo, hi in scope):
                why = "outside the scored functions"
            elif any(_inside(start, span) for span in inert):
                why = "inert: an annotation or a signature marker"
            if why:
                db.set_result(item.job_id, WorkResult(worker_outcome=WorkerOutcome.SKIPPED, output=why))
    cr("cosmic-ray", "exec", str(config), str(session))


def _collect(name: str, target: Target, work: Path) -> Outcome:
    """Killed, equivalent and surviving mutants from the module's session."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome

    session = work / f"{name}.sqlite"
    out = Outcome(name)
    with use_db(str(session), WorkDB.Mode.open) as db:
        for item, result in db.completed_work_items:
            if result.worker_outcome != WorkerOutcome.NORMAL:
                continue  # skipped (filtered or outside scope), or no mutation possible
            if result.test_outcome != TestOutcome.SURVIVED:
                out.killed += 1
                out.hung += result.output == "timeout"
                continue
            m = item.mutations[0]
            where = f"{m.operator_name} at {target.path}:{m.start_pos[0]}"
            added = [ln[1:].strip() for ln in (result.diff or "").splitlines()
                     if ln.startswith("+") and not ln.startswith("+++")]
            reason = next((EQUIVALENT[(name, a)] for a in added if (name, a) in EQUIVALENT), None)
            if reason is not None:
                out.equivalent.append(f"{where}: {added[0]}  -- {reason}")
            else:
                out.survivors.append(f"{where}\n{result.diff}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("modules", nargs="*", help=f"modules to mutate (default all): {', '.join(TARGETS)}")
    ap.add_argument("--timeout", type=float, default=None,
                    help="seconds per mutant's test run (default: 4 x the unmutated forked run + 3)")
    ap.add_argument("--no-fork", action="store_true",
                    help="start a fresh interpreter per mutant instead of forking a pre-warmed one")
    ap.add_argument("--jobs", type=int, default=1, help="modules mutated at once, each in its own copy")
    ap.add_argument("--split", type=int, default=1,
                    help="split each module's mutants over this many copies run at once (one result per module)")
    ap.add_argument("--list", action="store_true", help="print the modules, scopes and tests, run nothing")
    ap.add_argument("--named", action="store_true", help="check only that each hand-made bug of NAMED is caught")
    args = ap.parse_args()
    unknown = [m for m in args.modules if m not in TARGETS]
    if unknown:
        raise SystemExit(f"unknown module(s) {', '.join(unknown)}; known: {', '.join(TARGETS)}")
    chosen = args.modules or list(TARGETS)
    if args.list:
        for name in chosen:
            t = TARGETS[name]
            scope = ", ".join(t.functions) if t.functions else "whole module"
            print(f"{name:16} {t.path}  [{scope}]\n{'':16} tests: {' '.join(t.tests)}")
        return
    try:
        import cosmic_ray  # noqa: F401
    except ImportError:
        raise SystemExit("cosmic-ray is not installed: pip install -e '.[dev]'") from None

    if args.named:
        with tempfile.TemporaryDirectory(prefix="ctxprobe-mutation-") as tmp:
            scratch_copy(Path(tmp))
            raise SystemExit(0 if run_named(Path(tmp)) else 1)

    def part(name: str, shard: tuple[int, int]) -> Outcome:
        with tempfile.TemporaryDirectory(prefix=f"ctxprobe-mutation-{name}-") as tmp:
            scratch_copy(Path(tmp))
            return run_module(name, TARGETS[name], Path(tmp), args.timeout, fork=not args.no_fork, shard=shard)

    def one(name: str) -> Outcome:
        n = max(1, args.split)
        with ThreadPoolExecutor(max_workers=n) as shards:
            parts = list(shards.map(lambda k: part(name, (k, n)), range(n)))
        outcome = Outcome(name, sum(p.killed for p in parts), sum(p.hung for p in parts),
                          [e for p in parts for e in p.equivalent], [sv for p in parts for sv in p.survivors])
        print(outcome.line(), flush=True)
        return outcome

    print(HEADER, flush=True)
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(one, chosen))
    if len(results) > 1:
        total = Outcome("all", sum(r.killed for r in results), sum(r.hung for r in results),
                        [e for r in results for e in r.equivalent], [s for r in results for s in r.survivors])
        print(total.line())
    for r in results:
        if r.equivalent:
            print(f"\n[{r.module}] equivalent mutants (not counted):")
            for e in r.equivalent:
                print("  " + e)
    for r in results:
        if r.survivors:
            print(f"\n[{r.module}] surviving mutants ({len(r.survivors)}):")
            for sv in r.survivors:
                print("\n" + sv.rstrip())


if __name__ == "__main__":
    main()
