"""``make demo`` runs exactly the sweep the README's quick start shows (and states results for)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _args(text: str) -> list[str]:
    return shlex.split(text.replace("\\\n", " "))


def test_make_demo_is_the_readme_command() -> None:
    make = (ROOT / "Makefile").read_text()
    recipe = re.search(r"^demo: .*\n((?:\t.*\n)+)", make, re.M)
    assert recipe is not None
    make_args = _args(recipe.group(1).replace("\t", ""))
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"```bash\n(\.venv/bin/ctxprobe run .*?)```", readme, re.S)
    assert block is not None
    assert make_args[0] == "$(BIN)/ctxprobe" and _args(block.group(1))[0] == ".venv/bin/ctxprobe"
    assert make_args[1:] == _args(block.group(1))[1:]
