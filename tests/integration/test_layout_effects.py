"""The layout effect recovered (issue 52, docs/layouts.md): sims with a stated behaviour per
message layout — ``sim:turns-forget?n=N`` loses every message more than N back,
``sim:tools-forget?k=K`` every tool result but the K most recent — run on the same seeded
cases in each layout. The truth is computed from what the builder recorded (each case's
``meta.turns_back``), never from the sim's answers: each case's score, the accuracy by
turns back, how far back the report says the bar holds, each layout's effective length, and
the paired difference between layouts (McNemar per cell, as ``compare``) must match it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxprobe.analysis.grid import walk_levels
from ctxprobe.report.compare_runs import compare_runs
from ctxprobe.report.load import load_report
from ctxprobe.spec import make_spec
from ctxprobe.spec.variants import expand_variants, parse_variants
from ctxprobe.store import iter_records
from ctxprobe.sweep.run import run_sweep

LENGTHS = (1024, 2048, 4096)
DEPTHS = "0,0.25,0.5,0.75,1"
TURN_TOKENS = 128
BAR = 0.856


def sweep(store: Path, tok_dir: Path, model: str, messages: str, reps: int = 1, families: Any = None) -> str:
    spec = make_spec({"model": model, "tokenizer": f"hf:{tok_dir}", "lengths": ",".join(map(str, LENGTHS)),
                      "depths": DEPTHS, "reps": reps, "families": families or {"niah": {}},
                      "layout": {"messages": messages, "turn_tokens": TURN_TOKENS}})
    return run_sweep(spec, store, progress=False).run_id


def cases(run_id: str, store: Path) -> list[Any]:
    return [r for r in iter_records(run_id, store) if r.score is not None]


def expected_effective(recs: list[Any], truth: Any) -> int | None:
    """The effective length the truth implies: the walk over lengths of the true accuracy."""
    by_length: dict[int, list[float]] = {}
    for r in recs:
        by_length.setdefault(r.length, []).append(1.0 if truth(r) else 0.0)
    return walk_levels(((L, sum(v) / len(v)) for L, v in sorted(by_length.items())), BAR)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("layout-effects") / "runs.sqlite"


@pytest.fixture(scope="module")
def chosen_n(store: Path, hf_tools_dir: Path) -> int:
    """An N some case sits exactly at, with cases a turn nearer and a turn further (in
    ``turns`` the evidence is a user turn: the distances are even). The cases are built the
    same whatever model answers them."""
    run = sweep(store, hf_tools_dir, "sim:perfect", "turns")
    backs = sorted({r.meta["turns_back"] for r in cases(run, store)})
    found = [b for b in backs if b - 2 in backs and b + 2 in backs and 4 <= b <= 12]
    assert found, backs
    return found[0]


@pytest.mark.parametrize("messages", ["single", "turns", "tools"])
def test_turns_forget_truth_is_recovered_in_each_layout(store: Path, hf_tools_dir: Path, chosen_n: int,
                                                        messages: str) -> None:
    n = chosen_n
    run = sweep(store, hf_tools_dir, f"sim:turns-forget?n={n}", messages)
    recs = cases(run, store)
    assert len(recs) == len(LENGTHS) * 5
    report = load_report(run, store)
    (profile,) = report.profiles
    if messages == "single":  # one message: nothing is back, the sim is perfect, no turns-back data
        assert all(r.score == 1.0 and "turns_back" not in r.meta for r in recs)
        assert profile.effective_length == LENGTHS[-1]
        assert not report.turns_back and "turns_back" not in report.to_dict()
        return
    truth = lambda r: r.meta["turns_back"] <= n  # noqa: E731
    assert [r.score for r in recs] == [1.0 if truth(r) else 0.0 for r in recs]
    backs = {r.meta["turns_back"] for r in recs}
    assert min(backs) <= n < max(backs)  # both sides of the rule are measured
    # accuracy by turns back: exactly 1 up to N, 0 beyond, every case counted once
    rows = report.to_dict()["turns_back"]
    assert sum(row["n"] for row in rows) == len(recs)
    assert {row["turns_back"]: row["mean"] for row in rows} == {b: (1.0 if b <= n else 0.0) for b in backs}
    (reach,) = report.turns_back_reach
    assert reach.reach == max(b for b in backs if b <= n)
    assert reach.first_below == min(b for b in backs if b > n)
    if messages == "turns":  # the boundary itself was measured: N read, the next turn back lost
        assert (reach.reach, reach.first_below) == (n, n + 2)
    assert report.to_dict()["turns_back_reach"] == [reach.to_dict()]
    assert f"turns back: niah clears the bar 0.856 up to {reach.reach} messages back" in " ".join(report.key_notes)
    # the effective length in tokens is the truth's, in each layout
    assert profile.effective_length == expected_effective(recs, truth)


def test_one_message_short_of_n_loses_the_cases_at_n(store: Path, hf_tools_dir: Path, chosen_n: int) -> None:
    at_n = {(r.length, r.depth): r.score for r in cases(sweep(store, hf_tools_dir, f"sim:turns-forget?n={chosen_n}",
                                                              "turns"), store) if r.meta["turns_back"] == chosen_n}
    short_run = sweep(store, hf_tools_dir, f"sim:turns-forget?n={chosen_n - 1}", "turns")
    short = cases(short_run, store)
    assert at_n and set(at_n.values()) == {1.0}
    assert {r.score for r in short if r.meta["turns_back"] == chosen_n} == {0.0}
    assert {r.score for r in short if r.meta["turns_back"] == chosen_n - 2} == {1.0}
    reach = load_report(short_run, store).turns_back_reach[0]
    assert (reach.reach, reach.first_below) == (chosen_n - 2, chosen_n)


def test_the_layouts_differ_as_stated(store: Path, hf_tools_dir: Path, chosen_n: int) -> None:
    """turns-forget: tools (two messages a chunk) reaches fewer tokens back than turns, which
    reaches fewer than single; the same seeded content in each, paired one by one."""
    model = f"sim:turns-forget?n={chosen_n}"
    runs = {m: sweep(store, hf_tools_dir, model, m) for m in ("single", "turns", "tools")}
    eff = {m: load_report(r, store).profiles[0].effective_length for m, r in runs.items()}
    assert eff["single"] == LENGTHS[-1]
    assert eff["tools"] is None or eff["turns"] is not None and eff["tools"] <= eff["turns"]
    assert eff["turns"] is None or eff["turns"] < eff["single"]
    for other in ("turns", "tools"):
        cmp = compare_runs(runs["single"], runs[other], store)
        assert cmp.paired_by == "content" and cmp.n_paired == len(LENGTHS) * 5 and cmp.only_a == cmp.only_b == 0


@pytest.mark.parametrize("k", [2, 3])
def test_tools_forget_truth_is_recovered(store: Path, hf_tools_dir: Path, k: int) -> None:
    model = f"sim:tools-forget?k={k}"
    for messages in ("single", "turns"):  # no tool result to clear: perfect
        report = load_report(sweep(store, hf_tools_dir, model, messages), store)
        assert report.profiles[0].effective_length == LENGTHS[-1]
        assert all(c.mean == 1.0 for c in report.profiles[0].cells)
    run = sweep(store, hf_tools_dir, model, "tools")
    recs = cases(run, store)
    truth = lambda r: r.meta["turns_back"] <= 2 * k - 1  # noqa: E731  (a result is every other message)
    assert all(r.meta["turns_back"] % 2 == 1 for r in recs)  # the evidence is always a tool result
    assert [r.score for r in recs] == [1.0 if truth(r) else 0.0 for r in recs]
    backs = {r.meta["turns_back"] for r in recs}
    assert 2 * k - 1 in backs and 2 * k + 1 in backs  # the K-th most recent result and the one before it
    report = load_report(run, store)
    (reach,) = report.turns_back_reach
    assert (reach.reach, reach.first_below) == (2 * k - 1, 2 * k + 1)
    assert report.profiles[0].effective_length == expected_effective(recs, truth)


def test_three_layouts_as_variants_show_the_layout_effect_per_cell(store: Path, hf_tools_dir: Path,
                                                                  chosen_n: int) -> None:
    """``--variants "one:layout=single, chat:layout=turns, agent:layout=tools"`` with
    turns-forget: every case paired with its single-message twin; per cell McNemar's counts
    are the truth's (the twin right, the conversation wrong where the evidence sat more than
    N back; never the other way), and the pooled test finds the effect."""
    n = chosen_n
    families = expand_variants({"niah": {}}, parse_variants("one:layout=single, chat:layout=turns, agent:layout=tools"))
    run = sweep(store, hf_tools_dir, f"sim:turns-forget?n={n}", "single", reps=2, families=families)
    recs = cases(run, store)
    report = load_report(run, store)
    by_variant = {v["variant"]: v for v in report.variants}
    assert set(by_variant) == {"niah~chat", "niah~agent"}
    labels = {r.family for r in recs if "turns_back" in r.meta}
    assert labels == {"niah~chat", "niah~agent"}  # the reference (one message) records none
    for label, v in by_variant.items():
        mine = [r for r in recs if r.family == label]
        assert v["reference"] == "niah~one" and v["paired"] == len(mine) == len(LENGTHS) * 5 * 2
        (fam,) = v["families"]
        lost: dict[tuple[int, float], int] = {}
        for r in mine:
            lost[(r.length, r.depth)] = lost.get((r.length, r.depth), 0) + (r.meta["turns_back"] > n)
        assert {(c["length"], c["depth"]): (c["a_only"], c["b_only"]) for c in fam["cells"]} == \
            {cell: (count, 0) for cell, count in lost.items()}
        total = sum(lost.values())
        assert fam["pooled"]["a_only"] == total >= 8
        assert fam["pooled"]["significant"] and fam["pooled"]["p_value"] == pytest.approx(2 * 0.5 ** total)
    # per label: the turns-back rows and the reach, in the JSON, for the conversations only
    data = json.loads(json.dumps(report.to_dict()))
    assert {row["family"] for row in data["turns_back"]} == {"niah~chat", "niah~agent"}
    reach = {r["family"]: r for r in data["turns_back_reach"]}
    assert set(reach) == {"niah~chat", "niah~agent"}
    for label, r in reach.items():
        backs = {c.meta["turns_back"] for c in recs if c.family == label}
        assert r["reach"] == max(b for b in backs if b <= n) and r["first_below"] == min(b for b in backs if b > n)


def test_the_report_shows_the_turns_back_curve_at_80_columns(store: Path, hf_tools_dir: Path, chosen_n: int,
                                                             tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """``report --details``: the table by ranges of messages back, uncut at 80 columns; the
    default screen: the reach; the PNG and the HTML section; none of it for the default
    layout's run of the same cases."""
    from ctxprobe.cli import main

    monkeypatch.setenv("COLUMNS", "80")
    run = sweep(store, hf_tools_dir, f"sim:turns-forget?n={chosen_n}", "turns")
    single = sweep(store, hf_tools_dir, f"sim:turns-forget?n={chosen_n}", "single")
    capsys.readouterr()
    assert main(["report", run, "--store", str(store), "--details", "--out", str(tmp_path / "png")]) == 0
    details = capsys.readouterr().out
    assert max(len(line) for line in details.splitlines()) <= 80 and "…" not in details
    table = details[details.index("accuracy by turns back"):]
    rows = [line.split() for line in table.splitlines()[3:] if line.startswith(" niah")]
    backs = {r.meta["turns_back"] for r in cases(run, store)}
    from ctxprobe.analysis.turns_back import bin_of
    assert [row[1] for row in rows] == [f"{lo}" if lo == hi else f"{lo}-{hi}"
                                        for lo, hi in sorted({bin_of(b) for b in backs})]
    for row in rows:  # a range wholly within N reads 1.00, wholly beyond 0.00
        lo, _, hi = row[1].partition("-")
        if int(hi or lo) <= chosen_n:
            assert row[2] == "1.00"
        elif int(lo) > chosen_n:
            assert row[2] == "0.00"
    assert (tmp_path / "png" / run / "turns-back-curve.png").stat().st_size > 0
    assert main(["report", run, "--store", str(store), "--no-plots"]) == 0
    assert f"turns back: niah clears the bar 0.856 up to {chosen_n} messages back" in " ".join(
        capsys.readouterr().out.split())
    html = tmp_path / "r.html"
    assert main(["report", run, "--store", str(store), "--html", str(html)]) == 0
    page = html.read_text()
    assert 'id="turns-back"' in page and "accuracy by turns back" in page.lower()
    assert main(["report", single, "--store", str(store), "--details", "--out", str(tmp_path / "png")]) == 0
    assert "turns back" not in capsys.readouterr().out
    assert not (tmp_path / "png" / single / "turns-back-curve.png").exists()
    assert main(["report", single, "--store", str(store), "--html", str(html)]) == 0
    assert 'id="turns-back"' not in html.read_text()


DOC = ("The harbour office keeps the tide tables. The access code for the north vault is Kelvor-Dane. "
       "Staff rotate the code every season.")


@pytest.fixture(scope="module")
def docs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("docs")
    (d / "vault.md").write_text(DOC + "\n")
    qa = d.parent / f"{d.name}-qa.jsonl"
    qa.write_text(json.dumps({"document": "vault.md", "question": "What is the access code for the north vault?",
                              "answer": "Kelvor-Dane"}) + "\n")
    return {"docs": str(d), "qa": str(qa)}


@pytest.mark.parametrize("family", ["vartrack", "documents"])
@pytest.mark.parametrize("role", ["user", "assistant"])
def test_vartrack_and_documents_name_their_evidence(store: Path, hf_tools_dir: Path, docs: dict[str, str],
                                                    family: str, role: str) -> None:
    """vartrack's evidence is its asked chain's first statement (the value's assignment,
    the furthest back: ``last_turns_back`` its final assignment), documents' the sentence
    stating the answer: in ``turns`` that turn takes the evidence role, the case records
    how far back it sits, and turns-forget's truth is recovered on it."""
    from ctxprobe.cases.families import make_labelled
    from ctxprobe.core.case import Cell
    from ctxprobe.haystack.context import BuildContext
    from ctxprobe.spec import PromptLayout
    from ctxprobe.tokenizers import resolve_tokenizer

    tok = resolve_tokenizer(f"hf:{hf_tools_dir}")
    params = docs if family == "documents" else {}
    layout = PromptLayout(messages="turns", turn_tokens=TURN_TOKENS, evidence_role=role)
    fam, validated = make_labelled(family, params, BuildContext(tok, None, layout))
    single, _ = make_labelled(family, params, BuildContext(tok, None, PromptLayout()))
    for depth in (0.0, 0.5, 1.0):
        case = fam.generate(Cell(family, 2048, depth), 0, seed=5, params=validated)
        text = case.meta["statements"][0] if family == "vartrack" else "The access code for the north vault is Kelvor-Dane."
        (at,) = [i for i, m in enumerate(case.messages) if text in (m["content"] or "")]
        assert case.messages[at]["role"] == role and case.meta["turns_back"] == len(case.messages) - 1 - at
        if family == "vartrack":
            last = case.meta["statements"][-1]
            (end,) = [i for i, m in enumerate(case.messages) if last in (m["content"] or "")]
            assert case.meta["last_turns_back"] == len(case.messages) - 1 - end <= case.meta["turns_back"]
        plain = single.generate(Cell(family, 2048, depth), 0, seed=5, params=single.params_model.model_validate(params))
        assert "turns_back" not in plain.meta and "last_turns_back" not in plain.meta  # default meta unchanged
    if role == "assistant":
        return
    n = 6
    spec = make_spec({"model": f"sim:turns-forget?n={n}", "tokenizer": f"hf:{hf_tools_dir}",
                      "lengths": ",".join(map(str, LENGTHS)), "depths": DEPTHS, "reps": 1,
                      "families": {family: params}, "layout": {"messages": "turns", "turn_tokens": TURN_TOKENS}})
    run = run_sweep(spec, store, progress=False).run_id
    recs = cases(run, store)
    backs = {r.meta["turns_back"] for r in recs}
    assert min(backs) <= n < max(backs)
    assert [r.score for r in recs] == [1.0 if r.meta["turns_back"] <= n else 0.0 for r in recs]
    (reach,) = load_report(run, store).turns_back_reach
    assert reach.reach == max(b for b in backs if b <= n) and reach.first_below == min(b for b in backs if b > n)


def test_decide_names_a_layout(store: Path, hf_tools_dir: Path, chosen_n: int,
                               capsys: pytest.CaptureFixture[str]) -> None:
    """``decide --layout turns --use niah``: each run's family as sent in that layout — the
    variant's (``niah~chat``, named ``niah``) or a run's own — so the product limit is the
    layout's; a run without the layout is refused in one line; without ``--layout`` nothing
    changes."""
    from ctxprobe.cli import main
    from ctxprobe.decide import decide
    from ctxprobe.errors import CtxprobeError

    families = expand_variants({"niah": {}}, parse_variants("one:layout=single, chat:layout=turns"))
    both = sweep(store, hf_tools_dir, f"sim:turns-forget?n={chosen_n}", "single", reps=2, families=families)
    plain = sweep(store, hf_tools_dir, f"sim:turns-forget?n={chosen_n}", "turns")
    every = decide([both], store)
    assert set(every.runs[0].families) == {"niah~one", "niah~chat"} and every.layout is None
    assert "layout" not in every.to_dict()
    by_label = {label: f.interval for label, f in every.runs[0].families.items()}
    assert by_label["niah~one"].point != by_label["niah~chat"].point  # the sim's layout effect, to be told apart
    for messages, label in (("single", "niah~one"), ("turns", "niah~chat")):
        d = decide([both], store, layout=messages, use=["niah"])
        (facts,) = d.runs[0].families.values()
        assert facts.family == "niah" and facts.interval == by_label[label]
        assert d.layout_labels == {both: {"niah": label}}
        (limit,) = d.limits
        assert limit.use == "niah" and limit.lo == by_label[label].lo
        assert d.to_dict()["layout"] == messages
    # a run in one layout and a variant run, the same need named once
    d = decide([both, plain], store, layout="turns", use=["niah"])
    assert [set(r.families) for r in d.runs] == [{"niah"}, {"niah"}]
    assert d.layout_labels == {both: {"niah": "niah~chat"}, plain: {"niah": "niah"}}
    with pytest.raises(CtxprobeError, match=f"--layout tools: run {plain} sent no family in the tools layout "
                                            r"\(its layouts: turns\)"):
        decide([plain], store, layout="tools")
    assert main(["decide", both, "--store", str(store), "--layout", "turns", "--use", "niah"]) == 0
    assert "layout: turns (only the families sent in it; A niah = niah~chat)" in capsys.readouterr().out
    assert main(["decide", both, "--store", str(store), "--layout", "turns", "--rag", "--use", "niah"]) != 0
    assert "--layout picks families of the runs given: not with --rag or --adaptive yet" in capsys.readouterr().err
