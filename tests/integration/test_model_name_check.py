"""A mistyped model is refused in one line, before anything else is printed: the commands
that print a plan (draft-questions, plan, phonebook --plan) check the names first
(``ctxprobe.models.check_model_name``: the provider's own check, without building it), and
the commands that send (run, phonebook, decide --adaptive) refuse it before their output."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxprobe.cli import main
from ctxprobe.errors import CtxprobeError
from ctxprobe.models import check_model_name

DOCS = str(Path(__file__).resolve().parents[2] / "examples" / "natural" / "docs")
SIM_KINDS = ("use one of sim:perfect, sim:echo, sim:blind-middle, sim:decay, sim:first-half, sim:late-reader, "
             "sim:reasoner, sim:rag, sim:turns-forget, sim:tools-forget, sim:capacity, sim:interference, sim:out-budget")


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run the command; it must exit 2 having printed nothing but one error line. That line."""
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), captured.err
    return lines[0]


def test_draft_questions_refuses_a_mistyped_model_before_its_plan(tmp_path: Path, capsys) -> None:
    out = str(tmp_path / "qa.jsonl")
    line = _refused(["draft-questions", DOCS, "--model", "sim:perfct", "-o", out, "--no-progress"], capsys)
    assert line == f"error: unknown simulated model 'sim:perfct': {SIM_KINDS}"
    # the closed-book model too, and a bad parameter, with --plan as without
    line = _refused(["draft-questions", DOCS, "--model", "sim:perfect", "--closed-book-model", "sim:decay?clif=3",
                     "-o", out, "--plan"], capsys)
    assert line.startswith("error: unknown parameter 'clif' for sim:decay")
    assert not (tmp_path / "qa.jsonl").exists() and not (tmp_path / "qa.calls.jsonl").exists()
    # spelled right, the plan comes first
    assert main(["draft-questions", DOCS, "--model", "sim:perfect", "-o", out, "--plan"]) == 0
    assert capsys.readouterr().out.startswith("plan: 5 passages")


def test_draft_questions_refuses_a_missing_key_before_its_plan(tmp_path: Path, capsys,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    # the models are built before the plan is shown (the key is read then); --plan needs no key
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out = str(tmp_path / "qa.jsonl")
    line = _refused(["draft-questions", DOCS, "--model", "openai/gpt-4o-mini", "-o", out], capsys)
    assert line == "error: openai:gpt-4o-mini needs an API key: set OPENAI_API_KEY in the environment"
    line = _refused(["draft-questions", DOCS, "--model", "sim:perfect", "--closed-book-model", "openai/gpt-4o-mini",
                     "-o", out], capsys)
    assert "needs an API key" in line
    assert main(["draft-questions", DOCS, "--model", "openai/gpt-4o-mini", "-o", out, "--plan"]) == 0
    assert capsys.readouterr().out.startswith("plan: 5 passages")
    assert not any(tmp_path.iterdir())  # nothing drafted, nothing journalled


@pytest.mark.parametrize("argv", [
    ["plan", "--model", "sim:perfct", "--lengths", "1k"],
    ["phonebook", "--plan", "--model", "sim:perfct", "--entries", "100", "--needles", "2", "--runs", "1"],
    ["run", "--model", "sim:perfct", "--lengths", "1k", "--no-progress"],
    ["run", "--preset", "ruler", "--model", "sim:perfct", "--lengths", "4k", "--no-progress"],  # before its notice
    ["phonebook", "--model", "sim:perfct", "--entries", "100", "--needles", "2", "--runs", "1", "--no-progress"],
    ["decide", "--run", "sim:perfct", "--run", "sim:perfect", "--bands", "512,1k", "--adaptive"],
])
def test_every_command_refuses_a_mistyped_sim_first(argv: list[str], tmp_path: Path, capsys) -> None:
    line = _refused([*argv, "--store", str(tmp_path / "s.sqlite")] if argv[0] != "plan" and "--plan" not in argv
                    else argv, capsys)
    assert line == f"error: unknown simulated model 'sim:perfct': {SIM_KINDS}"


def test_plan_refuses_a_mistyped_judge(capsys) -> None:
    line = _refused(["plan", "--model", "sim:perfect", "--judge", "sim-judge:fiar", "--lengths", "1k"], capsys)
    assert line.startswith("error: unknown sim judge 'sim-judge:fiar': use one of sim-judge:fair")


def test_the_name_check_builds_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    # a hosted model's name passes without its key (planning needs none); the form is still checked
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert check_model_name("openai/gpt-4o-mini").provider == "openai"
    with pytest.raises(CtxprobeError, match="unknown provider 'nosuch'"):
        check_model_name("nosuch/x")
    # the sims' check is their factory's: kind, parameter names, types and ranges
    assert check_model_name("sim:decay?cliff=3000&width=0").provider == "sim"
    for bad, message in (("sim:decay?cliff=x", "not a valid int"), ("sim:decay?noise=2", "noise must be between"),
                         ("sim:perfect?cliff=1", "unknown parameter 'cliff' for sim:perfect"),
                         ("sim-judge:length-biased?words=x", "words must be an integer")):
        with pytest.raises(CtxprobeError, match=message):
            check_model_name(bad)
