"""A preset's own ``run``/``plan`` flags come from the preset (its ``options`` and their
``option_help``), not from a list in the generic CLI: a plugin's preset gets its flags the
way RULER's does, and the values reach the preset by the flag's name."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ctxprobe.cli import build_parser
from ctxprobe.core import registry


@dataclass(frozen=True)
class FolderPreset:
    name: str = "demo-set"
    title: str = "Demo"
    summary: str = "two niah labels over a folder"
    keeps_layout: bool = False
    options: tuple[str, ...] = ("folder",)
    option_help: Mapping[str, str] = field(default_factory=lambda: {"folder": "a folder of text"})

    def families(self, options: Mapping[str, str | None]) -> dict[str, dict[str, Any]]:
        return {"niah": {"family": "niah"}}

    def notice(self, options: Mapping[str, str | None]) -> str | None:
        return None


def test_a_registered_preset_brings_its_own_flags() -> None:
    registry.register("presets", "demo-set", FolderPreset())
    try:
        parser = build_parser()
        args = parser.parse_args(["run", "--preset", "demo-set", "--demo-set-folder", "docs/"])
        assert args.preset == "demo-set" and args.demo_set_folder == "docs/"
        (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        text = " ".join(sub.choices["run"].format_help().split())
        assert "demo-set preset: a folder of text" in text and "demo-set (two niah labels over a folder)" in text
    finally:
        registry.unregister("presets", "demo-set")
    # RULER's flags are RULER's preset's, declared beside it
    args = build_parser().parse_args(["run", "--preset", "ruler", "--ruler-docs", "d/", "--ruler-qa-squad", "s.json"])
    assert (args.ruler_docs, args.ruler_qa_squad, args.ruler_qa_hotpot) == ("d/", "s.json", None)
    assert not hasattr(build_parser().parse_args(["run"]), "demo_set_folder")
