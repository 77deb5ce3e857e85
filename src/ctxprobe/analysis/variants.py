"""Prompt variants compared on the same seeded cases.

Every variant of a family (labels ``FAMILY~NAME``, :mod:`ctxprobe.core.variant`) holds the
same content at each (length, depth, repetition): the same filler, keys, values, books and
needles; only the way the case is asked differs, so its prompt differs. Cases are therefore
paired by **content identity** (:func:`content_id`: the family, the cell, the repetition,
the case's seed, its expected answers and its distractors), never by prompt, and a pair
whose content differs is refused.

Each variant is compared with the first (the reference) by
:func:`ctxprobe.analysis.compare.compare_cases`, the statistics of ``ctxprobe compare``:
McNemar's exact test per cell (the exact sign-flip test of per-needle differences for the
phone book), Holm over every cell and the pooled test, and a paired bootstrap of the mean
and of the effective-length difference.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from ctxprobe.analysis.compare import CaseResult, Comparison, RunCases, compare_cases
from ctxprobe.analysis.compare_needles import needle_verdicts
from ctxprobe.core.baseline import is_baseline
from ctxprobe.core.variant import split_label


def content_id(rec: Mapping[str, Any], family: str | None = None) -> str:
    """What a case holds, whatever prompt asks it: same id ⇔ same seeded content."""
    key = [family or split_label(str(rec["family"]))[0], rec["length"], rec["depth"], rec["rep"], rec.get("seed"),
           rec.get("expected"), rec.get("distractors")]
    return hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:16]


def variant_cases(records: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, RunCases]]:
    """Base family label → variant name → its cases keyed by content identity, in the
    order the variants first appear (the first is the reference)."""
    out: dict[str, dict[str, dict[str, CaseResult]]] = defaultdict(dict)
    for rec in records:
        label = str(rec["family"])
        base, name = split_label(label)
        if name is None or is_baseline(label):
            continue
        multi = needle_verdicts({**rec, "family": base})
        family, needles = multi if multi is not None else (base, None)
        cid = content_id(rec, base)
        out[base].setdefault(name, {})[cid] = CaseResult(cid, cid, family, rec["length"], rec["depth"],
                                                         rec["score"], rec["outcome"], needles)
    return {base: {name: RunCases(f"{base}~{name}", name, cases) for name, cases in by_name.items()}
            for base, by_name in out.items()}


def compare_variants(records: Iterable[Mapping[str, Any]], *, order: Iterable[str] = (),
                     alpha: float = 0.05, seed: int = 0) -> list[Comparison]:
    """Each variant against its family's reference variant (the first in ``order``, the
    spec's label order; else the first stored)."""
    ranks = {label: i for i, label in enumerate(order)}
    found = []
    for base, by_name in sorted(variant_cases(records).items()):
        names = sorted(by_name, key=lambda n: ranks.get(f"{base}~{n}", len(ranks)))
        reference = by_name[names[0]]
        found += [replace(compare_cases(reference, by_name[n], alpha=alpha, seed=seed), paired_by="content")
                  for n in names[1:]]
    return found
