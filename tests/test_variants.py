"""Prompt variants as a grid axis: every variant holds the same seeded cases and is
compared with the first case by case (McNemar per cell with Holm, paired bootstrap).

The model is a reader with a known instruction effect: it delegates to ``sim:perfect``
(which reads the question and the context like a model would, never the answer key) when
the task's instruction is also stated in the second half of the prompt, and otherwise
misses about half of the cases (a draw fixed by the prompt text). So "instruction at the
end" must come out significantly better than "instruction at the start", and a variant
that leaves the instruction where it was must not."""

from __future__ import annotations

import hashlib
import json

import pytest

from ctxprobe.cli import main
from ctxprobe.core import registry
from ctxprobe.errors import CtxprobeError
from ctxprobe.models import resolve_provider
from ctxprobe.models.base import GenerateRequest, GenerateResult, ProviderBase
from ctxprobe.report.load import load_report
from ctxprobe.spec import make_spec
from ctxprobe.spec.variants import expand_variants, parse_variants
from ctxprobe.store import open_existing
from ctxprobe.sweep.run import run_sweep
from ctxprobe.tasks.niah import INSTRUCTION
from ctxprobe.tasks.phonebook import SYSTEM_PROMPT

#: Phrases of the instruction as either position words it (niah rewords "follows" as "is above").
MARKERS = (INSTRUCTION.split(". ")[1][:35], SYSTEM_PROMPT[:40])


class LateReader(ProviderBase):
    """Reads well only when the instruction is (also) in the prompt's second half."""

    ids_policy = "drop"

    def __init__(self, name: str, tokenizer) -> None:
        self.name = name
        self.inner = resolve_provider("sim:perfect", tokenizer)

    async def generate(self, request: GenerateRequest) -> GenerateResult:
        text = "\n".join(str(m.get("content") or "") for m in request.messages)
        late = any(text.rfind(m) > len(text) / 2 for m in MARKERS)
        draw = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") / 2**64
        if not late and draw < 0.5:
            return GenerateResult("I could not find it.", finish_reason="stop")
        return await self.inner.generate(request)


@pytest.fixture(scope="module", autouse=True)
def late_reader():
    registry.register("providers", "latereader",
                      lambda ref, *, tokenizer, **_: LateReader(ref.spec, tokenizer), origin="tests", replace=True)
    yield
    registry.unregister("providers", "latereader")


def test_niah_instruction_at_the_end_is_better_and_paired(tmp_path) -> None:
    families = expand_variants({"niah": {}}, parse_variants(
        "start:instruction=before, end:instruction=after, none:instruction=before"))
    spec = make_spec({"model": "latereader/x", "tokenizer": "local", "lengths": "1k,2k", "reps": 5,
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


def test_phonebook_three_variants_pair_the_books(tmp_path, capsys) -> None:
    store = str(tmp_path / "p.sqlite")
    code = main(["phonebook", "--model", "latereader/x", "--tokenizer", "local", "--entries", "50,100",
                 "--needles", "5", "--runs", "12", "--method", "ctxprobe", "--store", store, "--no-plots",
                 "--no-progress", "--variants", "plain, repeat:repeat_instructions=true, shots:examples=1"])
    out = capsys.readouterr().out
    assert code == 0
    text = " ".join(out.split())  # the terminal wraps long lines
    lines = ["variant " + part for part in text.split("variants: variant ")[1:]]
    assert len(lines) == 2
    repeat = next(line for line in lines if line.startswith("variant phonebook~repeat vs phonebook~plain"))
    assert "BETTER: phonebook~repeat is significantly better than phonebook~plain" in repeat
    shots = next(line for line in lines if line.startswith("variant phonebook~shots vs phonebook~plain"))
    assert "NO SIGNIFICANT DIFFERENCE" in shots  # examples leave the instruction at the start
    assert "· repeat" in text and "· shots" in text  # the recall tables name the variant
    with open_existing(store) as st:
        run = st.require_run(st.list_runs()[0].run_id)
        recs = list(st.iter_case_records(run.run_id))
    books = {}
    for r in recs:  # same book (seed) and same names asked under every variant
        books.setdefault((r["length"], r["rep"]), set()).add(json.dumps([r["seed"], r["expected"]]))
    assert len(books) == 2 * 12 and all(len(v) == 1 for v in books.values())


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
    base = ["phonebook", "--model", "latereader/x", "--tokenizer", "local", "--entries", "50", "--needles", "5",
            "--runs", "30", "--method", "ctxprobe", "--store", store, "--no-plots", "--no-progress"]
    assert main(base) == 0
    assert main([*base, "--param", "phonebook.repeat_instructions=true"]) == 0
    assert main([*base, "--seed", "7", "--param", "phonebook.repeat_instructions=true"]) == 0
    capsys.readouterr()
    with open_existing(store) as st:
        plain, repeat, other = [r.run_id for r in sorted(st.list_runs(), key=lambda r: r.created_at)]
    assert main(["compare", plain, repeat, "--store", store]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "BETTER" in out and "paired by content: the same seeded cases in other prompts" in out
    assert main(["compare", plain, other, "--store", store]) != 0  # other books: nothing to pair
    assert "cannot pair" in " ".join(capsys.readouterr().err.split())  # refused in one line
