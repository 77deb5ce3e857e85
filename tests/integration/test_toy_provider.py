"""A new provider is one folder and one registration: a toy provider written as one folder
of a temporary plugin package (its declaration, its request code, its profile), registered
by one entry point naming its declaration, serves ``ctxprobe run`` and ``ctxprobe plan``
with no other file touched, priced by a price file (``--prices``). In process, no network."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxprobe.cli import main
from ctxprobe.core import registry
from plugin_site import installed_plugin

FILES = {
    "toyprov/__init__.py": '''
from ctxprobe.plugin import ProviderDeclaration

PROVIDER = ProviderDeclaration("toy", "toyprov.api:make_provider", info="toyprov.profile:INFO", form="toy:MODEL")
''',
    "toyprov/api.py": '''
from ctxprobe.plugin import GenerateRequest, GenerateResult, ProviderBase


class Toy(ProviderBase):
    """Answers every prompt with its last word: it reads what it is sent."""
    ids_policy = "drop"

    def __init__(self, name):
        self.name = name

    async def generate(self, request: GenerateRequest) -> GenerateResult:
        words = request.messages[-1]["content"].split()
        return GenerateResult("toy says " + (words[-1] if words else ""), finish_reason="stop")


def make_provider(ref, **_):
    return Toy(ref.spec)
''',
    "toyprov/profile.py": '''
from ctxprobe.plugin import ProviderInfo

INFO = ProviderInfo(default_tokenizer="approx", help="toy:MODEL")
''',
    "toyprov-0.1.dist-info/METADATA": "Metadata-Version: 2.1\nName: toyprov\nVersion: 0.1\n",
    "toyprov-0.1.dist-info/entry_points.txt": "[ctxprobe.providers]\ntoy = toyprov:PROVIDER\n",
}


@pytest.fixture
def toy_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    with installed_plugin(FILES, "toyprov", tmp_path, monkeypatch) as root:
        yield root


def test_a_provider_folder_registered_by_one_entry_point_serves_run_and_plan(
        toy_installed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tmp = toy_installed
    entry = registry.get("providers", "toy")
    assert entry.origin == "toyprov" and entry.target == "toyprov:PROVIDER"
    prices = tmp / "prices.yaml"
    prices.write_text('"toy:m1": {input: 1.0, output: 2.0}\n', encoding="utf-8")
    grid = ["--model", "toy:m1", "--family", "niah", "--lengths", "1k", "--depths", "0.5", "--reps", "2"]

    assert main(["plan", *grid, "--prices", str(prices)]) == 0
    planned = capsys.readouterr().out
    assert "at $1 / $2 per 1M input / output tokens" in planned  # priced by the price file
    assert main(["plan", *grid]) == 0  # without it: no price known, not $0
    unpriced = capsys.readouterr().out
    assert "price: unknown for toy:m1" in unpriced and "$0" not in unpriced

    store = tmp / "runs.sqlite"
    code = main(["run", *grid, "--prices", str(prices), "--max-cost", "1", "--store", str(store),
                 "--no-progress", "--no-plots"])
    out = capsys.readouterr()
    assert code == 0, out.err
    with sqlite3.connect(store) as db:
        model, tokenizer = db.execute("SELECT model, tokenizer FROM runs").fetchone()
        outputs = [row[0] for row in db.execute("SELECT output FROM responses")]
    assert model == "toy:m1" and tokenizer.startswith("approx")  # the profile's tokenizer
    assert len(outputs) == 2 and all(o.startswith("toy says ") for o in outputs)  # the toy answered
    assert main(["report", "--store", str(store), "--json", _run_id(store)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["model"] == "toy:m1" and report["responses"] == 2


def _run_id(store: Path) -> str:
    with sqlite3.connect(store) as db:
        return str(db.execute("SELECT run_id FROM runs").fetchone()[0])
