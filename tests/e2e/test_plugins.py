"""Plugins: a separate package adds a provider, a family and a report section through entry
points; code adds them through the registry's API. Either way they are used like built-ins."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from ctxprobe.core import registry
from ctxprobe.core.case import Cell
from ctxprobe.errors import CtxprobeError
from ctxprobe.models import resolve_provider
from ctxprobe.models.base import GenerateRequest
from ctxprobe.spec.names import parse_model
from ctxprobe.haystack.context import BuildContext
from ctxprobe.core.family_lookup import make_family, validate_params
from ctxprobe.tokenizers import resolve_tokenizer

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "tests" / "plugins" / "ctxprobe_demo_plugin"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The plugin package installed (offline, no build isolation) into its own folder."""
    target = tmp_path_factory.mktemp("site")
    source = tmp_path_factory.mktemp("build") / PLUGIN.name  # a copy: the build writes beside its sources
    shutil.copytree(PLUGIN, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--no-index", "--target", str(target), str(source)],
                   check=True, cwd=source.parent, env={**os.environ, "PIP_NO_CACHE_DIR": "1"}, timeout=300)
    assert list(target.glob("ctxprobe_demo_plugin-*.dist-info"))
    return target


def _ctxprobe(args: list[str], site: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT / "src")])}
    return subprocess.run([sys.executable, "-m", "ctxprobe.cli", *args], capture_output=True, text=True, env=env,
                          timeout=300)


def test_an_installed_plugin_runs_a_sweep_and_is_reported(installed: Path, tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    # window=300 characters: the reader forgets boxes stated early in long prompts
    run = _ctxprobe(["run", "--model", "boxreader/demo?window=300", "--family", "boxes", "--lengths", "256,1024",
                     "--depths", "0,1", "--reps", "2", "--store", str(store), "--no-plots", "--no-progress"], installed)
    assert run.returncode == 0, run.stderr[-2000:]
    with sqlite3.connect(store) as db:
        rows = db.execute("SELECT c.length, c.depth, r.outcome FROM cases c JOIN responses r USING (run_id, case_id)"
                          ).fetchall()
        (run_id,) = db.execute("SELECT run_id FROM runs").fetchone()
    assert len(rows) == 2 * 2 * 2
    by_cell = {(length, depth): [o for ln, d, o in rows if (ln, d) == (length, depth)] for length, depth, _ in rows}
    # the end of the prompt is always in view; the start of a long one is not
    assert by_cell[(256, 1.0)] == by_cell[(1024, 1.0)] == ["correct", "correct"]
    assert set(by_cell[(1024, 0.0)]) <= {"wrong", "distractor"}
    report = _ctxprobe(["report", run_id, "--store", str(store), "--json"], installed)
    assert report.returncode == 0, report.stderr[-2000:]
    data = json.loads(report.stdout)
    assert "boxes" in json.dumps(data) and "boxreader:demo?window=300" in json.dumps(data)
    page = tmp_path / "report.html"
    html = _ctxprobe(["report", run_id, "--store", str(store), "--html", str(page)], installed)
    assert html.returncode == 0, html.stderr[-2000:]
    text = page.read_text(encoding="utf-8")
    assert '<section id="section-boxes-read"><h2>Boxes read</h2>' in text
    # 1024 tokens: both depth-1 cases read, both depth-0 ones forgotten (asserted above)
    assert f"<td>boxreader:demo?window=300 · {run_id}</td><td>1024</td><td>2 of 4</td>" in text


def test_unknown_plugin_names_fail_in_one_line(installed: Path, tmp_path: Path) -> None:
    run = _ctxprobe(["run", "--model", "boxreadr/demo", "--family", "boxes", "--store", str(tmp_path / "s.db")],
                    installed)
    assert run.returncode != 0 and "did you mean boxreader/demo?" in run.stderr
    assert "Traceback" not in run.stderr


class _Echo:
    """Answers with the prompt's last word: a provider that reads what it is sent."""

    ids_policy = "drop"
    max_concurrency: int | None = None
    context_window: int | None = None

    def __init__(self, name: str) -> None:
        self.name = name

    async def generate(self, request: GenerateRequest):  # type: ignore[no-untyped-def]
        from ctxprobe.models.base import GenerateResult

        return GenerateResult(request.messages[-1]["content"].split()[-1], finish_reason="stop")

    async def aclose(self) -> None:
        return None


def test_registering_through_the_api() -> None:
    registry.register("providers", "echo-test", lambda ref, **_: _Echo(ref.spec), origin="test")
    sys.path.insert(0, str(PLUGIN))
    try:
        registry.register("families", "boxes-test", "ctxprobe_demo_plugin.family:Boxes", origin="test")
        ref = parse_model("echo-test/any?x=1")
        assert (ref.provider, ref.name, ref.options, ref.spec) == ("echo-test", "any", {"x": "1"}, "echo-test:any?x=1")
        tok = resolve_tokenizer("approx")
        provider = resolve_provider(ref, tok)
        out = asyncio.run(provider.generate(GenerateRequest([{"role": "user", "content": "say green"}], 4)))
        assert out.text == "green"
        family = make_family("boxes-test", BuildContext(tok, None))
        params = validate_params("boxes-test", {})
        case = family.generate(Cell("boxes-test", 512, 0.5), 0, seed=7, params=params)
        assert case.token_count <= 512 and case.token_count > 400  # filled to the cell's length
        assert family.score(case, case.expected[0]).outcome == "correct"
        assert family.score(case, "no idea").outcome == "wrong"
        with pytest.raises(CtxprobeError, match="registered twice"):
            registry.register("providers", "sim", "x:y")  # a built-in's name cannot be taken
        with pytest.raises(CtxprobeError, match="did you mean 'boxes-test'"):
            make_family("boxes-tst", BuildContext(tok, None))
    finally:
        sys.path.remove(str(PLUGIN))
        registry.unregister("providers", "echo-test")
        registry.unregister("families", "boxes-test")
