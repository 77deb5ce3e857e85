"""``--preset ruler``: RULER's 13 tasks as sweep families, all of them the ``ruler`` family.

The two QA tasks need SQuAD / HotpotQA, which ctxprobe does not ship: given RULER's files
(``--ruler-qa-squad``, ``--ruler-qa-hotpot``) they run like the others; otherwise
:func:`skipped_line` names them so the sweep can say so before it starts. ``docs``
(``--ruler-docs``) is a folder of the user's text for RULER's essay haystacks, in place of
the Paul Graham essays RULER uses (default: ctxprobe's built-in prose).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ctxprobe.families.ruler.task.constants import SYNTHETIC, TASKS
from ctxprobe.families.ruler.task.metrics import STRING_MATCH_ALL, STRING_MATCH_PART

QA_HINT = "need --ruler-qa-squad/--ruler-qa-hotpot FILE"


def ruler_families(docs: str | None = None, qa_squad: str | None = None,
                   qa_hotpot: str | None = None) -> dict[str, dict[str, Any]]:
    """RULER task name → ``{"family", "params", "metric", "notes"}`` (``family`` None: cannot run)."""
    out: dict[str, dict[str, Any]] = {}
    for name in SYNTHETIC:
        params: dict[str, Any] = {"task": name}
        if docs and TASKS[name]["args"].get("type_haystack") == "essay":
            params["essay"] = docs
        out[name] = {"family": "ruler", "params": params, "metric": STRING_MATCH_ALL,
                     "notes": "RULER's rendering and sizing"}
    for name, path, dataset in (("qa_1", qa_squad, "SQuAD"), ("qa_2", qa_hotpot, "HotpotQA")):
        if path:
            out[name] = {"family": "ruler", "params": {"task": name, "qa_file": path}, "metric": STRING_MATCH_PART,
                         "notes": f"RULER's QA layout over your {dataset} file"}
        else:
            out[name] = {"family": None, "params": {}, "metric": STRING_MATCH_PART,
                         "notes": f"needs RULER's {dataset} file (not shipped)"}
    return out


def skipped_tasks(tasks: dict[str, dict[str, Any]]) -> list[str]:
    return [name for name, t in tasks.items() if t["family"] is None]


def skipped_line(tasks: dict[str, dict[str, Any]]) -> str | None:
    """The one line a sweep prints before it starts when RULER tasks cannot run."""
    names = skipped_tasks(tasks)
    if not names:
        return None
    return f"ruler: {', '.join(names)} not run: {QA_HINT}"


@dataclass(frozen=True)
class RulerPreset:
    """``--preset ruler`` (:class:`ctxprobe.core.preset.Preset`), read by the CLI from the registry."""

    name: str = "ruler"
    title: str = "RULER"
    keeps_layout: bool = True  # RULER's own prompt layout
    summary: str = "RULER's 13 tasks as RULER renders them; the QA tasks need --ruler-qa-squad/--ruler-qa-hotpot"
    options: tuple[str, ...] = ("docs", "qa_squad", "qa_hotpot")
    option_help: Mapping[str, str] = field(default_factory=lambda: {
        "docs": "a folder of text for the essay haystacks (default: built-in prose; RULER uses Paul Graham essays)",
        "qa_squad": "RULER's SQuAD file (SQuAD v2.0 dev JSON) for qa_1",
        "qa_hotpot": "RULER's HotpotQA file (dev distractor JSON) for qa_2"})

    def families(self, options: Mapping[str, str | None]) -> dict[str, dict[str, Any]]:
        tasks = ruler_families(options.get("docs"), options.get("qa_squad"), options.get("qa_hotpot"))
        return {name: {"family": t["family"], **t["params"]} for name, t in tasks.items() if t["family"]}

    def notice(self, options: Mapping[str, str | None]) -> str | None:
        return skipped_line(ruler_families(options.get("docs"), options.get("qa_squad"), options.get("qa_hotpot")))


RULER_PRESET = RulerPreset()
