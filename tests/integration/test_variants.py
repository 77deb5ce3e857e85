"""Prompt variants as a grid axis: every variant holds the same seeded cases and is
compared with the first case by case (McNemar per cell with Holm, paired bootstrap).

The model is the built-in ``sim:late-reader`` (a reader with a known instruction effect:
it reads like ``sim:perfect``, never the answer key, when the task's instruction starts in
the prompt's last quarter, and otherwise misses about half of the cases, a draw fixed by
the prompt text). So "instruction at the end" must come out significantly better than
"instruction at the start", and a variant that leaves the instruction where it was must
not (the flat controls)."""

from __future__ import annotations

import json

import pytest

from ctxprobe.cli import main
from ctxprobe.errors import CtxprobeError
from ctxprobe.report.load import load_report
from ctxprobe.spec import make_spec
from ctxprobe.spec.variants import expand_variants, parse_variants
from ctxprobe.store import open_existing
from ctxprobe.sweep.run import run_sweep

LATE = "sim:late-reader"


def test_niah_instruction_at_the_end_is_better_and_paired(tmp_path) -> None:
    families = expand_variants({"niah": {}}, parse_variants(
        "start:instruction=before, end:instruction=after, none:instruction=before"))
    spec = make_spec({"model": LATE, "tokenizer": "local", "lengths": "1k,2k", "reps": 5,
                      "families": families})
    store = tmp_path / "s.sqlite"
    run_id = run_sweep(spec, store, progress=False).run_id
    report = load_report(run_id, store)
    by_variant = {v["variant"]: v for v in report.variants}
    end, same = by_variant["niah~end"], by_variant["niah~none"]
    assert end["reference"] == "niah~start" and end["paired"] == 2 * 5 * 5
    (fam,) = end["families"]
    assert fam["pooled"]["significant"] and fam["mean_diff"] > 0 and fam["mean_diff_ci"][0] > 0
    assert fam["pooled"]["b_only"] > 0 and fam["pooled"]["a_only"] == 0  # only the end variant gains
    assert end["verdict"].startswith("BETTER")
    # the same instruction position as the reference: the same prompts, no difference
    assert same["families"][0]["pooled"]["a_only"] == same["families"][0]["pooled"]["b_only"] == 0
    assert any(n.startswith("variant niah~end vs niah~start") for n in report.notes)
    # the variants hold the same needles: the stored cases differ only in their prompts
    with open_existing(store) as st:
        recs = list(st.iter_case_records(run_id))
    content = {}
    for r in recs:
        key = (r["length"], r["depth"], r["rep"])
        content.setdefault(key, set()).add(json.dumps([r["expected"], r["seed"]]))
    assert all(len(v) == 1 for v in content.values())
    assert len({r["prompt_hash"] for r in recs if r["family"] == "niah~end"} &
               {r["prompt_hash"] for r in recs if r["family"] == "niah~start"}) == 0


def test_run_three_niah_variants_on_the_command_line(tmp_path, capsys) -> None:
    """``ctxprobe run --variants``: the instruction after the text beats it before; a variant
    with no instruction line at all (other prompts, the instruction nowhere late) does not."""
    store = str(tmp_path / "r.sqlite")
    code = main(["run", "--details", "--model", LATE, "--tokenizer", "local", "--family", "niah", "--lengths", "1k,2k",
                 "--reps", "5", "--store", store, "--no-plots", "--no-progress",
                 "--variants", "start:instruction=before, end:instruction=after, bare:instruction=none"])
    text = " ".join(capsys.readouterr().out.split())
    assert code == 0
    end = text.split("variant niah~end vs niah~start: ")[1].split(" note: ")[0]
    bare = text.split("variant niah~bare vs niah~start: ")[1].split(" note: ")[0]
    assert end.startswith("BETTER: niah~end is significantly better than niah~start") and "mean +0." in end
    assert bare.startswith("NO SIGNIFICANT DIFFERENCE")
    assert "paired by content" in end and "50 paired cases" in end
    with open_existing(store) as st:
        recs = list(st.iter_case_records(st.list_runs()[0].run_id))
    content: dict[tuple, set[str]] = {}
    for r in recs:  # every variant asks the same key and value of the same haystack
        content.setdefault((r["length"], r["depth"], r["rep"]), set()).add(json.dumps([r["expected"], r["seed"]]))
    assert len(content) == 2 * 5 * 5 and all(len(v) == 1 for v in content.values())
    assert len({r["prompt_hash"] for r in recs}) == 3 * 2 * 5 * 5  # only the prompts differ


@pytest.mark.parametrize(("method", "control"), [
    ("ctxprobe", "shots:examples=1"),  # worked examples leave the instruction at the start
    ("post", "nosys:system_role=false"),  # the post's fallback: the system text as the first user turn
])
def test_phonebook_three_variants_pair_the_books(tmp_path, capsys, method: str, control: str) -> None:
    store = str(tmp_path / "p.sqlite")
    code = main(["phonebook", "--model", LATE, "--tokenizer", "local", "--entries", "50,100",
                 "--needles", "5", "--runs", "12", "--method", method, "--store", store, "--no-plots",
                 "--no-progress", "--variants", f"plain, repeat:repeat_instructions=true, {control}"])
    out = capsys.readouterr().out
    assert code == 0
    text = " ".join(out.split())  # the terminal wraps long lines
    lines = ["variant " + part for part in text.split("variants: variant ")[1:]]
    assert len(lines) == 2
    repeat = next(line for line in lines if line.startswith("variant phonebook~repeat vs phonebook~plain"))
    assert "BETTER: phonebook~repeat is significantly better than phonebook~plain" in repeat
    assert "mean +0." in repeat  # the right sign: the late instruction gains
    name = control.split(":")[0]
    flat = next(line for line in lines if line.startswith(f"variant phonebook~{name} vs phonebook~plain"))
    assert "NO SIGNIFICANT DIFFERENCE" in flat
    assert "· repeat" in text and f"· {name}" in text  # the recall tables name the variant
    with open_existing(store) as st:
        run = st.require_run(st.list_runs()[0].run_id)
        recs = list(st.iter_case_records(run.run_id))
    books = {}
    for r in recs:  # same book (seed) and same names asked under every variant
        books.setdefault((r["length"], r["rep"]), set()).add(json.dumps([r["seed"], r["expected"]]))
    assert len(books) == 2 * 12 and all(len(v) == 1 for v in books.values())
    assert {r["family"] for r in recs} == {"phonebook~plain", "phonebook~repeat", f"phonebook~{name}"}
    assert main(["report", "--details", run.run_id, "--store", store, "--no-plots"]) == 0  # the report says the same
    again = " ".join(capsys.readouterr().out.split())
    assert ["variant " + part for part in again.split("variants: variant ")[1:]] == lines


@pytest.mark.parametrize(("text", "fragment"), [
    ("only", "two variants or more"),
    ("a, a:cot=true", "used twice"),
    ("a, b:max_tokens=100", "one limit for the whole sweep"),
    ("a, b:cot", "use KEY=VALUE"),
    ("a b, c", "bad variant"),
])
def test_bad_variants_are_one_line_errors(text: str, fragment: str) -> None:
    with pytest.raises(CtxprobeError, match=fragment):
        parse_variants(text)


def test_compare_pairs_two_variant_runs_by_content_and_refuses_other_content(tmp_path, capsys) -> None:
    store = str(tmp_path / "c.sqlite")
    base = ["phonebook", "--model", LATE, "--tokenizer", "local", "--entries", "50", "--needles", "5",
            "--runs", "30", "--method", "ctxprobe", "--store", store, "--no-plots", "--no-progress"]
    assert main(base) == 0
    assert main([*base, "--param", "phonebook.repeat_instructions=true"]) == 0
    assert main([*base, "--seed", "7", "--param", "phonebook.repeat_instructions=true"]) == 0
    capsys.readouterr()
    with open_existing(store) as st:
        runs = st.list_runs()  # told apart by their specs (created_at ties within a second)
    (other,) = [r.run_id for r in runs if r.spec["seed"] == 7]
    (plain,) = [r.run_id for r in runs if "repeat_instructions" not in r.spec["families"]["phonebook"]]
    (repeat,) = [r.run_id for r in runs if r.run_id not in (other, plain)]
    assert main(["compare", plain, repeat, "--store", store]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "BETTER" in out and "paired by content: the same seeded cases in other prompts" in out
    assert main(["compare", plain, other, "--store", store]) != 0  # other books: nothing to pair
    assert "cannot pair" in " ".join(capsys.readouterr().err.split())  # refused in one line
