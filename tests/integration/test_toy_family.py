"""A new family is one folder and one registration: a toy family written as one folder of a
temporary plugin package (its declaration, its task, its sim skill), registered by one entry
point naming its declaration, works with ``run``, ``report --html``, ``view``,
``export --lm-eval`` and ``inspect eval ctxprobe/<it>`` with no other file touched. In
process, no network: the sim reads the prompt through the family's own skill."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxprobe.cli import main
from ctxprobe.core import registry
from plugin_site import installed_plugin

FILES = {
    "toyfam/__init__.py": '''
from ctxprobe.plugin import FamilyDeclaration

FAMILY = FamilyDeclaration("toyfam", "toyfam.task:Toy", sim_skill="toyfam.sim:skill",
                           ability="finding one box's colour", summary="One box's colour among many.")
''',
    "toyfam/task.py": '''
import random

from pydantic import BaseModel, ConfigDict

from ctxprobe.plugin import Case, Cell, Outcome, Scored

COLOURS = ("red", "green", "blue", "amber", "violet", "teal")


class ToyParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Toy:
    name = "toyfam"
    params_model = ToyParams

    def __init__(self, ctx):
        self.tok = ctx.tokenizer

    def _messages(self, n, target, colours, depth):
        lines = [f"The box {i} is {colours[i]}." for i in range(n) if i != target]
        lines.insert(round(depth * (n - 1)), f"The box {target} is {colours[target]}.")
        return [{"role": "user", "content": "\\n".join(lines) + f"\\n\\nWhat colour is box {target}? One word."}]

    def generate(self, cell: Cell, rep: int, *, seed: int, params: BaseModel) -> Case:
        rng = random.Random(seed)
        colours = [rng.choice(COLOURS) for _ in range(cell.length)]
        n = 2
        while self.tok.count_chat(self._messages(n + 1, 0, colours, cell.depth)) <= cell.length - 8:
            n += 1
        target = rng.randrange(n)
        messages = self._messages(n, target, colours, cell.depth)
        return Case(cell=cell, rep=rep, seed=seed, messages=messages, expected=[colours[target]],
                    distractors=[], meta={"box": target}, token_count=self.tok.count_chat(messages))

    def score(self, case: Case, output: str) -> Scored:
        words = output.lower().replace(".", " ").split()
        if case.expected[0] in words:
            return Scored(1.0, Outcome.CORRECT)
        return Scored(0.0, Outcome.WRONG if words else Outcome.EMPTY)
''',
    "toyfam/sim.py": '''
import re


def skill(question, context):
    """Reads the box asked for out of the context it can see (never the answer key)."""
    asked = re.search(r"What colour is box (\\d+)\\?", question)
    if asked is None:
        return None
    found = re.search(rf"The box {asked.group(1)} is (\\w+)\\.", context)
    return found.group(1) if found else None
''',
    "toyfam-0.1.dist-info/METADATA": "Metadata-Version: 2.1\nName: toyfam\nVersion: 0.1\n",
    "toyfam-0.1.dist-info/entry_points.txt": "[ctxprobe.families]\ntoyfam = toyfam:FAMILY\n",
}


@pytest.fixture
def toy_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    with installed_plugin(FILES, "toyfam", tmp_path, monkeypatch) as root:
        yield root
    if "ctxprobe.inspect_tasks.tasks" in sys.modules:  # its tasks made again, without the toy's
        importlib.reload(sys.modules["ctxprobe.inspect_tasks.tasks"])


def test_a_family_folder_registered_by_one_entry_point_works_everywhere(
        toy_installed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tmp = toy_installed
    entry = registry.get("families", "toyfam")
    assert entry.origin == "toyfam" and entry.target == "toyfam:FAMILY"
    store = tmp / "s.sqlite"
    assert main(["run", "--model", "sim:blind-middle", "--family", "toyfam", "--lengths", "512", "--depths", "0,0.5,1",
                 "--reps", "2", "--store", str(store), "--no-plots", "--no-progress"]) == 0
    from ctxprobe.report.load import load_report
    from ctxprobe.store import Store

    with Store(store) as s:
        (run,) = s.list_runs()
    report = load_report(run.run_id, store)
    (prof,) = report.profiles
    by_depth = {c.depth: c.mean for c in prof.cells}
    # the sim reads the family's prompts through its skill: the edges found, the hidden middle not
    assert by_depth[0.0] == by_depth[1.0] == 1.0 and by_depth[0.5] == 0.0
    page = tmp / "r.html"
    assert main(["report", run.run_id, "--store", str(store), "--html", str(page), "--no-plots"]) == 0
    html = page.read_text(encoding="utf-8")
    assert "toyfam" in html and "finding one box&#39;s colour" in html
    from starlette.testclient import TestClient

    from ctxprobe.view.app import make_app

    got = TestClient(make_app(store)).get(f"/run/{run.run_id}")
    assert got.status_code == 200 and "toyfam" in got.text
    out = tmp / "lm"
    assert main(["export", run.run_id, "--store", str(store), "--lm-eval", str(out)]) == 0
    assert any("toyfam" in p.read_text(encoding="utf-8") for p in out.rglob("*.yaml"))
    # inspect_ai: the registry's families are its tasks, this one included, named ctxprobe/toyfam
    pytest.importorskip("inspect_ai")
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    import ctxprobe.inspect_tasks.tasks as tasks

    importlib.reload(tasks)  # made with the plugin installed, as a fresh `inspect eval` process makes them
    assert "toyfam" in tasks.TASKS

    from ctxprobe.tokenizers import resolve_tokenizer

    tok = resolve_tokenizer("local")

    def reply(messages, tools, tool_choice, config):  # reads the prompt as the toy's skill does
        from toyfam.sim import skill

        text = messages[-1].text
        output = ModelOutput.from_content(model="mockllm", content=skill(text, text) or "no idea")
        sent = tok.count_chat([{"role": "user", "content": text}])  # mockllm's own count would download tiktoken
        output.usage = ModelUsage(input_tokens=sent, output_tokens=1, total_tokens=sent + 1)
        return output

    (log,) = inspect_eval("ctxprobe/toyfam", model=get_model("mockllm/model", custom_outputs=reply, memoize=False),
                          log_dir=str(tmp / "logs"), display="none",
                          task_args={"lengths": "512", "depths": "0.5", "reps": 2, "tokenizer": "local"})
    assert log.status == "success", log.error
    scores = [next(iter(s.scores.values())) for s in log.samples]
    assert [(sc.value, sc.metadata["outcome"]) for sc in scores] == [(1.0, "correct")] * 2
