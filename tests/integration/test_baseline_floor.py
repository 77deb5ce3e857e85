"""``--baseline no-context``: twin cases with the evidence removed, stored under their own
label, never in the accuracy; MRCR's random-instance floor; the "above the floor" rule."""

from __future__ import annotations

import difflib
import random
import statistics

import pytest

from ctxprobe import load_report, make_spec, run_sweep
from ctxprobe.analysis.efflength import LengthEvidence
from ctxprobe.analysis.floor import above_floor, family_floor
from ctxprobe.core.baseline import baseline_label, is_baseline, main_label
from ctxprobe.core.case import Cell
from ctxprobe.haystack.fill import fill_tolerance
from ctxprobe.store import iter_export
from ctxprobe.haystack.context import BuildContext
from ctxprobe.families.mrcr.task import Mrcr, MrcrParams, random_instance_floor
from ctxprobe.tokenizers import resolve_tokenizer

VERSION = "0"


def test_labels_round_trip() -> None:
    assert baseline_label("niah_3d") == "niah_3d@no-context" and is_baseline("niah_3d@no-context")
    assert main_label("niah_3d@no-context") == "niah_3d" and main_label("niah") == "niah" and not is_baseline("niah")


def test_spec_twins_and_run_id() -> None:
    plain = make_spec({"model": "sim:perfect", "families": {"niah": {}, "mrcr": {}}})
    floored = make_spec({"model": "sim:perfect", "families": {"niah": {}, "mrcr": {}}, "baseline": "no-context"})
    assert list(plain.families) == ["niah", "mrcr"]
    # niah gets a sent twin; mrcr's floor is computed, so it gets none
    assert floored.families["niah@no-context"] == {"family": "niah", "baseline": "no-context"}
    assert "mrcr@no-context" not in floored.families
    ident = floored.identity(tokenizer="local", version=VERSION)
    assert set(ident["families"]) == {"niah", "mrcr"} and ident["baseline"] == "no-context"
    assert "baseline" not in plain.identity(tokenizer="local", version=VERSION)
    assert plain.run_id(tokenizer="local", version=VERSION) != floored.run_id(tokenizer="local", version=VERSION)
    # the stored spec (twins included) validates back to the same run
    again = make_spec(floored.model_dump())
    assert again.run_id(tokenizer="local", version=VERSION) == floored.run_id(tokenizer="local", version=VERSION)


@pytest.fixture(scope="module")
def floored_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, object]:
    store = tmp_path_factory.mktemp("floor") / "s.sqlite"
    spec = make_spec({"model": "sim:perfect", "tokenizer": "local", "lengths": "1k,2k", "depths": "0,0.5,1",
                      "reps": 2, "families": {"niah": {}, "vartrack": {}, "multihop": {}, "graphwalks": {},
                                              "mrcr": {"reply_words": 40}},
                      "baseline": "no-context"})
    result = run_sweep(spec, store, progress=False)
    return result.run_id, store


def test_perfect_sim_recovers_accuracy_and_a_zero_floor(floored_run) -> None:
    run_id, store = floored_run
    recs = list(iter_export(run_id, store))
    twins = [r for r in recs if is_baseline(r["family"])]
    assert {r["family"] for r in twins} == {"niah@no-context", "vartrack@no-context", "multihop@no-context",
                                           "graphwalks@no-context"}
    assert len(twins) == 4 * 2 * 3 * 2 and all(r["meta"]["no_context"] for r in twins)
    by_id = {r["case_id"]: r for r in recs}
    for t in twins:
        main = by_id[t["case_id"].replace("@no-context", "", 1)]
        assert t["score"] == 0.0, (t["family"], t["output"])  # random answers cannot be guessed
        assert main["score"] == 1.0
        assert t["expected"] == main["expected"]
        assert t["length"] - fill_tolerance(t["length"]) < t["token_count"] <= t["length"]  # the same budget
    for t in (r for r in twins if r["family"] == "niah@no-context"):
        main = by_id[t["case_id"].replace("@no-context", "", 1)]
        prompt = t["messages"][-1]["content"]
        assert main["meta"]["needle"] not in prompt and main["meta"]["question"] in prompt
    report = load_report(run_id, store)
    assert {p.family for p in report.profiles} == {"niah", "vartrack", "multihop", "graphwalks", "mrcr"}
    assert all(s.mean == 1.0 for p in report.profiles for s in p.lengths)  # the twins never pooled in
    assert set(report.floors) == {"niah", "vartrack", "multihop", "graphwalks", "mrcr"}
    for fam in ("niah", "vartrack", "multihop", "graphwalks"):
        floor = report.floors[fam]
        assert [x.floor_mean for x in floor.lengths] == [0.0, 0.0]
        assert floor.above_up_to == 2048 and floor.stands is True  # 6 of 6 vs 0 of 6: above at 95%
    data = report.to_dict()
    assert data["noise_floors"]["niah"]["stands_above_floor"] is True
    assert {p["family"] for p in data["floor_profiles"]} == {f + "@no-context" for f in report.floors}


def _independent_floor(rec: dict, rule: str) -> float:
    """Google MRCR v2's noise floor by hand: a reply that is the string plus an instance drawn
    uniformly from the asked key's instances, scored by the rule, averaged."""
    prefix = rec["meta"]["random_string_to_prepend"]
    asked = rec["expected"][0][len(prefix):]
    instances = list(rec["distractors"])
    instances.insert(rec["meta"]["ordinal"] - 1, asked)
    scores = []
    for inst in instances:
        if rule == "openai":
            scores.append(difflib.SequenceMatcher(None, inst, asked).ratio())
        else:  # last occurrence, stripped
            scores.append(difflib.SequenceMatcher(a=asked.strip(), b=inst.strip()).ratio())
    return sum(scores) / len(scores)


def test_mrcr_floor_is_the_random_instance_expectation(floored_run) -> None:
    run_id, store = floored_run
    recs = [r for r in iter_export(run_id, store) if r["family"] == "mrcr"]
    report = load_report(run_id, store)
    floor = report.floors["mrcr"]
    assert floor.kind == "random-instance"
    for x in floor.lengths:
        want = statistics.fmean(_independent_floor(r, "openai") for r in recs if r["length"] == x.length)
        assert x.floor_mean == pytest.approx(want, abs=1e-9) and x.floor_n == 6
        assert 0.5 < x.floor_mean < 1.0  # 2 needles: 1/2 from the asked one plus half a small ratio
    # 6 perfect answers cannot be told from a ~0.5 floor at 95%: honest, not "above"
    assert floor.lengths[0].above is False and floor.stands is False


@pytest.mark.parametrize("needles,rule", [(4, "openai"), (8, "last-occurrence")])
def test_mrcr_floor_by_hand_more_needles(needles: int, rule: str) -> None:
    ctx = BuildContext(tokenizer=resolve_tokenizer("local"), haystack=None)
    fam = Mrcr(ctx)
    params = MrcrParams(needles=needles, reply_words=30, rule=rule)
    for rep in range(2):
        case = fam.generate(Cell("mrcr", 3072, 0.5), rep, seed=7, params=params)
        rec = {"meta": case.meta, "expected": case.expected, "distractors": case.distractors}
        assert random_instance_floor(case) == pytest.approx(_independent_floor(rec, rule), abs=1e-9)
        assert 1 / needles <= random_instance_floor(case) < 1.0


# -- the "above the floor" rule ---------------------------------------------------------------


def ev(length: int, successes: float, n: int, truncated: int = 0) -> LengthEvidence:
    return LengthEvidence(length, n, successes, truncated, ((successes, n),))


def test_above_floor_boundary_in_n() -> None:
    # all correct vs all wrong: cp_lower(n, n) = 0.025**(1/n) must exceed 1 - that, i.e. n >= 6
    assert above_floor(ev(1, 5, 5), ev(1, 0, 5), 0.05)[0] is False
    assert above_floor(ev(1, 6, 6), ev(1, 0, 6), 0.05)[0] is True
    above, lower, upper = above_floor(ev(1, 6, 6), ev(1, 0, 6), 0.05)
    assert lower == pytest.approx(0.025 ** (1 / 6)) and upper == pytest.approx(1 - 0.025 ** (1 / 6))
    # equal bounds are not "above": the symmetric pair at lower == upper == 0.5 cannot occur
    # exactly, so check the strictness on the same evidence on both sides
    assert above_floor(ev(1, 3, 6), ev(1, 3, 6), 0.05)[0] is False
    # nothing scored, or prompts truncated: not decided
    assert above_floor(ev(1, 0, 0), ev(1, 0, 6), 0.05)[0] is None
    assert above_floor(ev(1, 6, 6, truncated=1), ev(1, 0, 6), 0.05)[0] is None
    assert above_floor(ev(1, 6, 6), None, 0.05)[0] is None


def test_above_up_to_walk_and_stands() -> None:
    acc = [ev(1024, 8, 8), ev(2048, 3, 8), ev(4096, 8, 8)]
    floor = [ev(1024, 0, 8), ev(2048, 0, 8), ev(4096, 0, 8)]
    f = family_floor("x", "no-context", acc, floor, effective=1024)
    assert [x.above for x in f.lengths] == [True, False, True]
    assert f.above_up_to == 1024 and f.stands is True  # a later pass does not extend the walk
    assert family_floor("x", "no-context", acc, floor, effective=4096).stands is False
    assert "does not stand" in family_floor("x", "no-context", acc, floor, effective=4096).line()
    assert family_floor("x", "no-context", acc, floor, effective=None).stands is None
    shortest_fails = family_floor("x", "no-context", [ev(1024, 5, 5)], [ev(1024, 0, 5)], effective=1024)
    assert shortest_fails.above_up_to is None and shortest_fails.stands is False


def test_false_above_claims_stay_under_alpha_at_small_n() -> None:
    """Coverage by simulation: when accuracy equals the floor, "above" is claimed at most
    alpha of the time, at every small n tried (binary scores)."""
    rng = random.Random(3)
    for n in (3, 6, 12, 30):
        for p in (0.05, 0.3, 0.5, 0.8, 0.97):
            claims = 0
            trials = 400
            for _ in range(trials):
                a = sum(rng.random() < p for _ in range(n))
                b = sum(rng.random() < p for _ in range(n))
                claims += bool(above_floor(ev(1, a, n), ev(1, b, n), 0.05)[0])
            assert claims / trials <= 0.05, (n, p, claims)


def test_mrcr_floor_of_a_published_format_row() -> None:
    """A row shaped like ``openai/mrcr``: the instances are the replies to the same request
    as the asked one; the floor is their mean OpenAI score, computed here by hand."""
    from ctxprobe.core.case import Case

    a = "Tapirs wander through the forest at dusk, noses low, counting leaves."
    b = "Cats sit on the wall and watch the rain."
    c = "A tapir swims across the river at dawn, ears flicking, quiet and slow."
    ask = "Prepend Ab3dE9fGh1 to the 2nd (1 indexed) poem about tapirs. Do not include any other text in your response."
    messages = [{"role": "user", "content": "write a poem about tapirs"}, {"role": "assistant", "content": a},
                {"role": "user", "content": "write a poem about cats"}, {"role": "assistant", "content": b},
                {"role": "user", "content": "write a poem about tapirs"}, {"role": "assistant", "content": c},
                {"role": "user", "content": ask}]
    case = Case(Cell("mrcr", 8192, 0.7), 0, 0, messages, ["Ab3dE9fGh1" + c],
                meta={"source": "openai/mrcr", "random_string_to_prepend": "Ab3dE9fGh1", "desired_msg_index": 5})
    want = (difflib.SequenceMatcher(None, a, c).ratio() + 1.0) / 2
    assert random_instance_floor(case) == pytest.approx(want, abs=1e-9) and 0.5 < want < 1.0


def test_twins_build_the_same_in_worker_processes() -> None:
    """Build workers make a twin (and an aliased label) from the spec's labels alone: the
    same prompts as the serial build."""
    from ctxprobe.cases.builder import build_cases
    from ctxprobe.plan.grid import planned_cases

    spec = make_spec({"model": "sim:perfect", "tokenizer": "local", "lengths": "1k", "depths": "0,1", "reps": 1,
                      "families": {"niah_3d": {"family": "niah", "distractors": 3}}, "baseline": "no-context"})
    planned = list(planned_cases(spec))
    assert [p.cell.family for p in planned] == ["niah_3d"] * 2 + ["niah_3d@no-context"] * 2
    serial = [(c.case_id, c.prompt_hash, c.meta.get("no_context", False)) for c in build_cases(spec, planned)]
    parallel = [(c.case_id, c.prompt_hash, c.meta.get("no_context", False))
                for c in build_cases(spec, planned, workers=2)]
    assert serial == parallel and [x[2] for x in serial] == [False, False, True, True]


def test_compare_and_check_leave_the_twins_out(floored_run) -> None:
    from ctxprobe.report.compare_runs import about, load_run_cases

    run_id, store = floored_run
    cases = load_run_cases(run_id, store)
    assert cases.cases and not any(is_baseline(c.family) for c in cases.cases.values())
    assert not any(is_baseline(f) for f in about(load_report(run_id, store).run)["families"])
