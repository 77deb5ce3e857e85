"""RULER compatibility: its 13 tasks as ctxprobe families, and its two scorers.

Why: results are easier to trust when they can be set beside published RULER tables.
:func:`ruler_families` maps each RULER task (names and settings from RULER's
``synthetic.yaml``) onto a ctxprobe family and parameters, built with ctxprobe's exact-budget
builder and fresh filler rather than RULER's haystacks. What differs is stated per task in
``notes``; the main differences:

- filler: ctxprobe's generated prose (or the user's ``--haystack``), never Paul Graham
  essays or RULER's repeated "noise" sentences — so ``niah_single_1/2/3`` differ only in
  RULER's haystack and value type, and all three map to ``niah`` single;
- values are 7-digit numbers (no UUID values); keys are ``adjective-noun-NNN``;
- ``niah_multikey_2/3`` (RULER: a haystack made entirely of needles) use ``niah`` multikey
  with 200 same-form needles, the family's cap; ``phonebook`` is the full-haystack analogue
  but has no depth;
- ``qa_1``/``qa_2`` (SQuAD, HotpotQA) need the user's documents and QA JSONL (ctxprobe
  ships neither dataset); without them they are listed with ``family: None``.

Scorers: :func:`string_match_all` (niah, vt, cwe, fwe) and :func:`string_match_part` (qa),
as in RULER's ``eval/synthetic/constants.py``: case-insensitive substring matching of each
reference in the prediction, ``all`` averaging over references, ``part`` taking the best.
Per-case functions return 0..1; the ``*_batch`` forms return RULER's 0..100.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ctxprobe.tasks.case import Case

STRING_MATCH_ALL = "string_match_all"
STRING_MATCH_PART = "string_match_part"

_NOTE_ESSAY = "RULER haystack: essays; here ctxprobe filler"
_NOTE_NEEDLE_HAYSTACK = ("RULER fills the whole haystack with needles; here 200 same-form needles (the niah cap) "
                         "in filler")


def ruler_families(docs: str | None = None, qa_squad: str | None = None,
                   qa_hotpot: str | None = None) -> dict[str, dict[str, Any]]:
    """RULER task name → ``{"family", "params", "metric", "notes"}``.

    ``docs``/``qa_squad``/``qa_hotpot``: a documents folder and QA JSONL files (see the
    ``documents`` family) for the two QA tasks; without them those tasks have
    ``family: None`` and are skipped by a runner.
    """
    def task(family: str | None, params: dict[str, Any], metric: str, notes: str) -> dict[str, Any]:
        return {"family": family, "params": params, "metric": metric, "notes": notes}

    def qa(path: str | None, name: str) -> dict[str, Any]:
        if docs is None or path is None:
            return task(None, {}, STRING_MATCH_PART, f"needs {name} documents + QA JSONL (not shipped)")
        return task("documents", {"docs": docs, "qa": path}, STRING_MATCH_PART,
                    f"{name} contexts as documents; RULER adds distractor paragraphs, here filler")

    return {
        "niah_single_1": task("niah", {"variant": "single"}, STRING_MATCH_ALL,
                              "RULER haystack: repeated noise sentences; here ctxprobe filler"),
        "niah_single_2": task("niah", {"variant": "single"}, STRING_MATCH_ALL, _NOTE_ESSAY),
        "niah_single_3": task("niah", {"variant": "single"}, STRING_MATCH_ALL,
                              _NOTE_ESSAY + "; RULER values are UUIDs, here 7-digit numbers"),
        "niah_multikey_1": task("niah", {"variant": "multikey", "keys": 4, "near_miss": False}, STRING_MATCH_ALL,
                                _NOTE_ESSAY),
        "niah_multikey_2": task("niah", {"variant": "multikey", "keys": 200, "near_miss": False}, STRING_MATCH_ALL,
                                _NOTE_NEEDLE_HAYSTACK),
        "niah_multikey_3": task("niah", {"variant": "multikey", "keys": 200, "near_miss": False}, STRING_MATCH_ALL,
                                _NOTE_NEEDLE_HAYSTACK + "; RULER keys and values are UUIDs"),
        "niah_multivalue": task("niah", {"variant": "multivalue", "values": 4}, STRING_MATCH_ALL, _NOTE_ESSAY),
        "niah_multiquery": task("niah", {"variant": "multiquery", "queries": 4}, STRING_MATCH_ALL, _NOTE_ESSAY),
        "vt": task("vartrack", {"hops": 4, "chains": 1}, STRING_MATCH_ALL, "RULER: num_chains 1, num_hops 4"),
        "cwe": task("aggregation", {"variant": "common-words", "top": 10, "common_freq": 30, "rare_freq": 3},
                    STRING_MATCH_ALL, "RULER: freq_cw 30, freq_ucw 3, num_cw 10"),
        "fwe": task("aggregation", {"variant": "frequent-words", "alpha": 2.0}, STRING_MATCH_ALL,
                    "RULER: alpha 2.0, top 3"),
        "qa_1": qa(qa_squad, "SQuAD"),
        "qa_2": qa(qa_hotpot, "HotpotQA"),
    }


_NON_PRINTABLE = re.compile(r"[\x00-\x1f]")


def postprocess_pred(pred: str) -> str:
    """RULER's clean-up of a prediction: control characters become newlines, then strip."""
    return _NON_PRINTABLE.sub("\n", pred).strip()


def string_match_all(pred: str, refs: Sequence[str]) -> float:
    """Share of references found (case-insensitive substring) in one prediction, 0..1."""
    if not refs:
        return 0.0
    p = postprocess_pred(pred).lower()
    return sum(1.0 for r in refs if r.lower() in p) / len(refs)


def string_match_part(pred: str, refs: Sequence[str]) -> float:
    """1.0 if any reference is found (case-insensitive substring) in the prediction."""
    p = postprocess_pred(pred).lower()
    return max((1.0 if r.lower() in p else 0.0 for r in refs), default=0.0)


def string_match_all_batch(preds: Sequence[str], refs: Sequence[Sequence[str]]) -> float:
    """RULER's corpus-level form, 0..100."""
    return 100.0 * sum(string_match_all(p, r) for p, r in zip(preds, refs)) / len(preds) if preds else 0.0


def string_match_part_batch(preds: Sequence[str], refs: Sequence[Sequence[str]]) -> float:
    return 100.0 * sum(string_match_part(p, r) for p, r in zip(preds, refs)) / len(preds) if preds else 0.0


def ruler_references(case: Case) -> list[str]:
    """What RULER would score a case against: the expected values, plus accepted aliases."""
    return [*case.expected, *case.meta.get("aliases", [])]


def ruler_score(case: Case, output: str, metric: str) -> float:
    """A case scored the RULER way (an alternative to the family's strict score)."""
    refs = ruler_references(case)
    if metric == STRING_MATCH_ALL:
        return string_match_all(output, refs)
    if metric == STRING_MATCH_PART:
        return string_match_part(output, refs)
    raise ValueError(f"unknown RULER metric {metric!r}")
