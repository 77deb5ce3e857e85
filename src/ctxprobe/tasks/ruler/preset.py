"""``--preset ruler``: RULER's 13 tasks as sweep families.

The 11 synthetic tasks are the ``ruler`` family (RULER's own rendering and sizing). The two
QA tasks need SQuAD / HotpotQA, which ctxprobe does not ship: given the user's documents and
QA JSONL they run as the ``documents`` family (RULER's QA layout is not reproduced there),
otherwise :func:`skipped_tasks` names them so the sweep can say so before it starts.
"""

from __future__ import annotations

from typing import Any

from ctxprobe.tasks.ruler.constants import SYNTHETIC
from ctxprobe.tasks.ruler.metrics import STRING_MATCH_ALL, STRING_MATCH_PART

QA_HINT = "need --ruler-docs, --ruler-qa-squad/hotpot"


def ruler_families(docs: str | None = None, qa_squad: str | None = None,
                   qa_hotpot: str | None = None) -> dict[str, dict[str, Any]]:
    """RULER task name → ``{"family", "params", "metric", "notes"}`` (``family`` None: cannot run)."""
    def task(family: str | None, params: dict[str, Any], metric: str, notes: str) -> dict[str, Any]:
        return {"family": family, "params": params, "metric": metric, "notes": notes}

    def qa(path: str | None, name: str) -> dict[str, Any]:
        if docs is None or path is None:
            return task(None, {}, STRING_MATCH_PART, f"needs {name} documents + QA JSONL (not shipped)")
        return task("documents", {"docs": docs, "qa": path}, STRING_MATCH_PART,
                    f"{name} contexts as documents in filler; RULER's QA layout is not reproduced")

    out = {name: task("ruler", {"task": name}, STRING_MATCH_ALL, "RULER's rendering and sizing") for name in SYNTHETIC}
    out["qa_1"] = qa(qa_squad, "SQuAD")
    out["qa_2"] = qa(qa_hotpot, "HotpotQA")
    return out


def skipped_tasks(tasks: dict[str, dict[str, Any]]) -> list[str]:
    return [name for name, t in tasks.items() if t["family"] is None]


def skipped_line(tasks: dict[str, dict[str, Any]]) -> str | None:
    """The one line a sweep prints before it starts when RULER tasks cannot run."""
    names = skipped_tasks(tasks)
    if not names:
        return None
    return f"ruler: {', '.join(names)} not run: {QA_HINT}"
