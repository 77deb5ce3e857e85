"""The ``longout`` family (LongProc's HTML→TSV): LongProc's scoring rules, checked against
an independent implementation of its evaluator's own steps (pandas, as LongProc does it);
sims with a known output budget; the output limit sized from the answer; replies cut at
the limit labelled ``output_truncated`` and never scored; the output effective length."""

from __future__ import annotations

import csv
import random
import re
import string
from pathlib import Path

import pytest

from ctxprobe.core.case import Cell
from ctxprobe.core.outcome import Outcome
from ctxprobe.families.longout.analysis import by_level, output_effective_length
from ctxprobe.families.longout.task_page import fenced, tsv
from ctxprobe.families.longout.score import score_tsv
from ctxprobe.report.load import report_json
from ctxprobe.spec import make_spec
from ctxprobe.store import Store
from ctxprobe.sweep.run import run_sweep
from ctxprobe.haystack.context import BuildContext
from ctxprobe.core.family_lookup import make_family, validate_params
from ctxprobe.tokenizers import resolve_tokenizer

REF = tsv([("Amber kettle", "kitchen", "Leeds", "1990", "BA-1234"), ("Calm otter", "kitchen", "Graz", "2001", "CE-2222"),
           ("The Lamp", "kitchen", "Cork", "1977", "DI-3333")])


def _longproc(prediction: str, groundtruth: str) -> dict:
    """LongProc's eval_html_to_tsv + evaluate_html_to_csv_compute_metrics, step by step
    with pandas as its code does (princeton-pli/LongProc, longproc/)."""
    pd = pytest.importorskip("pandas")
    search = re.search(r"```tsv([\s\S]*)```", prediction)
    if search is not None:
        prediction = search.group(1).strip()
    else:
        if "```tsv" in prediction:
            prediction = prediction.split("```tsv")[1]
        prediction = prediction.strip()

    def norm(s: str) -> str:
        s = "".join(ch for ch in s.lower() if ch not in set(string.punctuation))
        return " ".join(re.sub(r"\b(a|an|the)\b", " ", s).split()).replace(" ", "")

    def to_pd(lines: list[str]):
        try:
            data = list(csv.reader(lines, delimiter="\t"))
            header, data = data[0], data[1:]
            if len(data[-1]) != len(header):
                data = data[:-1]
            for i, line in enumerate(data):
                if len(line) != len(header):
                    data[i] = ["N/A"] * len(header)
            df = pd.DataFrame(data, columns=header).fillna("N/A")
            for col in df.columns:
                df[col] = df[col].astype(str).apply(norm)
            return df
        except Exception:
            return None

    try:
        gt = to_pd(groundtruth.strip().split("\n"))
        pr = to_pd(prediction.strip().split("\n"))
        p = sum(bool(gt.eq(pr.iloc[i].values).all(axis=1).any()) for i in range(len(pr.index))) / len(pr.index)
        r = sum(bool(pr.eq(gt.iloc[i].values).all(axis=1).any()) for i in range(len(gt.index))) / len(gt.index)
        return {"precision": p, "recall": r, "f1": 0 if p + r == 0 else 2 * p * r / (p + r)}
    except Exception:
        return {"precision": 0, "recall": 0, "f1": 0}


def _replies(ref: str, rng: random.Random) -> list[str]:
    lines = ref.split("\n")
    body = lines[1:]
    shuffled = body[:]
    rng.shuffle(shuffled)
    return [fenced(ref), ref, "Here you go:\n" + fenced(ref) + "\nDone.", "```tsv\n" + ref,  # no closing fence
            fenced("\n".join([lines[0], *body[:-1]])), fenced("\n".join([lines[0], *shuffled])),
            fenced("\n".join([lines[0], body[0], body[0], *body[1:]])),  # a duplicated row
            fenced("\n".join([lines[0], body[0] + "\textra", *body[1:]])),  # a row with a cell too many
            fenced("\n".join([lines[0], *body, "Name\tonly"])),  # an incomplete last row is dropped
            fenced(lines[0]), "", "no table here", fenced(ref.upper().replace("-", " ")),
            fenced(ref.replace("The Lamp", "lamp!")), ref[: rng.randrange(len(ref))]]


def test_scores_equal_longproc_s_own_steps() -> None:
    rng = random.Random(3)
    refs = [REF]
    for _ in range(4):
        rows = [(f"Item {rng.randint(1, 99)}", "office", rng.choice(["Leeds", "Porto"]), str(rng.randint(1950, 2020)),
                 f"Q{i}-{rng.randint(1000, 9999)}") for i in range(rng.randint(1, 12))]
        refs.append(tsv(rows))
    n = 0
    for ref in refs:
        for reply in _replies(ref, rng):
            ours, theirs = score_tsv(ref, reply).detail, _longproc(reply, ref)
            for k in ("precision", "recall", "f1"):
                assert ours[k] == pytest.approx(theirs[k]), (k, reply)
            n += 1
    assert n >= 70


def test_rule_boundaries() -> None:
    whole = score_tsv(REF, fenced(REF))
    assert whole.score == 1.0 and whole.outcome == Outcome.CORRECT and whole.detail["order"] == 1.0
    lines = REF.split("\n")
    reordered = score_tsv(REF, fenced("\n".join([lines[0], lines[3], lines[1], lines[2]])))
    assert reordered.score == 1.0 and reordered.detail["order"] == pytest.approx(2 / 3)  # LongProc ignores order
    one_short = score_tsv(REF, fenced("\n".join(lines[:3])))
    assert one_short.detail["recall"] == pytest.approx(2 / 3) and one_short.outcome == Outcome.PARTIAL
    assert score_tsv(REF, fenced(lines[0])).outcome == Outcome.PARSE_ERROR
    assert score_tsv(REF, "").outcome == Outcome.EMPTY
    # articles and punctuation are normalised away; a changed digit is a different row
    assert score_tsv(REF, fenced(REF.replace("The Lamp", "lamp."))).score == 1.0
    assert score_tsv(REF, fenced(REF.replace("1977", "1978"))).detail["recall"] == pytest.approx(2 / 3)


def _case(params: dict, length: int = 4096):
    ctx = BuildContext(tokenizer=resolve_tokenizer("local"), haystack=None)
    fam = make_family("longout", ctx)
    return fam.generate(Cell("longout", length, 0.5), 0, seed=1, params=validate_params("longout", params))


def test_the_answer_has_the_asked_length_and_the_page_its_records() -> None:
    case = _case({"answer_tokens": [300], "match_share": 0.25})
    assert 300 <= case.meta["answer_tokens"] <= 300 + 40  # one row over at most, plus the fences
    assert case.meta["records"] == pytest.approx(4 * case.meta["matching"], abs=1)
    text = case.messages[0]["content"]
    assert text.count("<tr><td>") == case.meta["records"]
    category = case.meta["rule"]["value"]
    assert sum(f"<td>{category}</td>" in line for line in text.split("\n")) == case.meta["matching"]


def test_the_default_output_limit_holds_the_longest_answer_with_headroom() -> None:
    spec = make_spec({"model": "sim:perfect", "tokenizer": "local", "lengths": "32k",
                      "families": {"longout": {"answer_tokens": [500, 2000, 8000]}}})
    assert spec.decoding.max_tokens >= 1.25 * 8000


def _sweep(store: Path, model: str, params: dict, lengths: str, reps: int, **more) -> str:
    spec = make_spec({"model": model, "tokenizer": "local", "lengths": lengths, "depths": "0.5", "reps": reps,
                      "families": {"longout": params}, **more})
    return run_sweep(spec, store, progress=False).run_id


def test_perfect_scores_one_from_1k_to_8k(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    run_id = _sweep(store, "sim:perfect", {"answer_tokens": [120]}, "1k,2k,4k,8k", 2)
    report = report_json([run_id], store)
    assert all(length["mean"] >= 0.99 for length in report["profiles"][0]["lengths"])


def test_output_budget_sim_s_truth_is_the_output_effective_length(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    run_id = _sweep(store, "sim:out-budget?tokens=300", {"answer_tokens": [100, 200, 400, 800]}, "4k", 8)
    with Store(store) as s:
        records = list(s.iter_case_records(run_id))
        points = by_level(records)["longout"]
    assert [p.level for p in points] == [100, 200, 400, 800]
    assert [p.f1 == 1.0 for p in points] == [True, True, False, False]
    assert all(p.cut == 0 for p in points) and all(r["finish_reason"] == "stop" for r in records)
    assert output_effective_length(points) == 200
    assert report_json([run_id], store)["longout"]["longout"]["output_effective_length"] == 200
    # the bar is the report's (--threshold): at the 400-token level's own F1 that level clears it, just above not
    f1 = points[2].f1
    assert f1 is not None and 0.5 < f1 < 0.85
    for bar, longest in ((f1, 400), (f1 + 1e-3, 200), (0.5, 800)):
        shown = report_json([run_id], store, threshold=bar)["longout"]["longout"]
        assert shown["threshold"] == bar and shown["output_effective_length"] == longest
    from ctxprobe.cli import main

    page = store.parent / "r.html"
    assert main(["report", run_id, "--html", str(page), "--no-plots", "--threshold", "0.5", "--store", str(store)]) == 0
    assert "output effective length 800 tokens (mean F1 ≥ 0.5)" in page.read_text()


def test_every_reply_cut_at_the_limit_is_output_truncated_and_unscored(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    run_id = _sweep(store, "sim:perfect", {"answer_tokens": [100, 400]}, "4k", 6,
                    decoding={"max_tokens": 250})
    with Store(store) as s:
        records = list(s.iter_case_records(run_id))
        points = by_level(records)["longout"]
    cut = [r for r in records if r["finish_reason"] == "length"]
    assert len(cut) == 3 and all(r["outcome"] == Outcome.OUTPUT_TRUNCATED and r["score"] is None for r in cut)
    assert all(r["meta"]["answer_level"] == 400 for r in cut)
    assert all(r["detail"]["cut_score"] < 1.0 for r in cut)  # what it wrote before the cut, kept for reading
    assert points[1].n == 0 and points[1].cut == 3 and points[0].f1 == 1.0
    assert output_effective_length(points) == 100  # the walk stops where nothing was scored


def test_three_answer_lengths_through_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``run`` at three answer lengths with a cap between the second and the third: the
    report's output effective length is the second, every capped reply is labelled
    ``output_truncated`` and unscored, and the report says what cut them and the limit
    sized for these answers."""
    from ctxprobe.cli import main
    from ctxprobe.spec import default_output_limit

    store = tmp_path / "s.sqlite"
    assert main(["run", "--details", "--model", "sim:perfect", "--family", "longout", "--lengths", "4k", "--depths", "0.5",
                 "--reps", "6", "--param", "longout.answer_tokens=100,200,400", "--max-tokens", "300",
                 "--store", str(store), "--no-plots", "--no-progress"]) == 0
    with Store(store) as s:
        run_id = s.list_runs()[0].run_id
        records = list(s.iter_case_records(run_id))
    capped = [r for r in records if r["finish_reason"] == "length"]
    assert {r["meta"]["answer_level"] for r in capped} == {400} and len(capped) == 2
    assert all(r["outcome"] == Outcome.OUTPUT_TRUNCATED and r["score"] is None for r in capped)
    assert all(r["score"] == 1.0 for r in records if r not in capped)
    capsys.readouterr()
    assert main(["report", "--details", run_id, "--no-plots", "--store", str(store)]) == 0
    text = " ".join(capsys.readouterr().out.split())
    sized = default_output_limit("longout", {"answer_tokens": [100, 200, 400]})
    assert sized >= 1.25 * 400 and f"the limit would be --max-tokens {sized}" in text
    assert "longout: 2 of 6 answers were cut off by --max-tokens 300 before they ended" in text
    assert "longout: output effective length 200 tokens" in text
    assert report_json([run_id], store)["longout"]["longout"]["output_effective_length"] == 200
