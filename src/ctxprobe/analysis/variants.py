"""Prompt variants compared on the same seeded cases.

Every variant of a family (labels ``FAMILY~NAME``, :mod:`ctxprobe.core.variant`) holds the
same content at each (length, depth, repetition): the same filler, keys, values, books and
needles; only the way the case is asked differs, so its prompt differs. Cases are therefore
paired by **content identity** (:func:`content_id`: the family, the cell, the repetition,
the case's seed and its expected answers), never by prompt, and a pair whose content
differs is refused. The look-alikes around the answer are not part of it: a variant that
sets the distractor count (the axis ``--param niah.distractors=0,1,3``) holds the same
filler and the same asked needle at the same depth with more or fewer look-alikes, and is
paired on that.

Each variant is compared with the first (the reference) by
:func:`ctxprobe.analysis.compare.compare_cases`, the statistics of ``ctxprobe compare``:
McNemar's exact test per cell (the exact sign-flip test of per-needle differences for the
phone book), Holm over every cell and the pooled test, and a paired bootstrap of the mean
and of the effective-length difference.

A decoding variant with ``samples=k`` stores k cases of one content identity (the same
prompt sent k times): they are one pair, valued at the mean of their measured samples,
and the family's cells are tested with the sign-flip test of per-case mean differences
(:mod:`ctxprobe.analysis.compare_samples`); the bootstrap resamples these cases.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import replace

from ctxprobe.analysis.compare import CaseResult, Comparison, RunCases, compare_cases
from ctxprobe.analysis.compare_needles import needle_verdicts
from ctxprobe.analysis.compare_samples import sample_value
from ctxprobe.core.baseline import is_baseline
from ctxprobe.core.outcome import HARNESS_OUTCOMES
from ctxprobe.core.records import CaseRecord
from ctxprobe.core.variant import split_label


_SAMPLE_ID = re.compile(r"/s\d+$")  # a sampled case's id (ctxprobe.core.case.make_case_id)


def content_id(rec: CaseRecord, family: str | None = None) -> str:
    """What a case holds, whatever prompt asks it: same id ⇔ same seeded content."""
    key = [family or split_label(rec.family)[0], rec.length, rec.depth, rec.rep, rec.seed, rec.expected]
    return hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:16]


def variant_cases(records: Iterable[CaseRecord]) -> dict[str, dict[str, RunCases]]:
    """Base family label → variant name → its cases keyed by content identity, in the
    order the variants first appear (the first is the reference). A case sent k times
    (``samples=k``) is one entry holding its k samples."""
    grouped: dict[str, dict[str, dict[str, list[CaseRecord]]]] = defaultdict(dict)
    for rec in records:
        label = rec.family
        base, name = split_label(label)
        if name is None or is_baseline(label):
            continue
        grouped[base].setdefault(name, {}).setdefault(content_id(rec, base), []).append(rec)
    return {base: {name: RunCases(f"{base}~{name}", name, {cid: sampled_case(cid, cid, base, recs)
                                                           for cid, recs in by_cid.items()})
                   for name, by_cid in by_name.items()}
            for base, by_name in grouped.items()}


def unsampled_id(case_id: str) -> str:
    """``niah~t07/L1024/d0/r0/s3`` → ``niah~t07/L1024/d0/r0``: the case its samples share."""
    return _SAMPLE_ID.sub("", case_id)


def sampled_case(cid: str, identity: str, base: str, recs: Sequence[CaseRecord]) -> CaseResult:
    """One case from its stored records (``base``: the family label needles are read
    under): as stored when sent once; a sampled case is the mean over its measured samples."""
    first = recs[0]
    multi = needle_verdicts(first, base)
    family, needles = multi if multi is not None else (base, None)
    if len(recs) == 1 and not _SAMPLE_ID.search(first.case_id):
        return CaseResult(cid, identity, family, first.length, first.depth, first.score, first.outcome, needles)
    measured = [r for r in recs if r.outcome is not None and r.outcome not in HARNESS_OUTCOMES
                and r.score is not None]
    if not measured:  # no sample measured: a harness failure, excluded from pairing
        return CaseResult(cid, identity, family, first.length, first.depth, None, first.outcome, needles)
    values = []
    for r in measured:
        verdicts = needle_verdicts(r, base)
        values.append(sample_value(float(r.score or 0.0), verdicts[1] if verdicts is not None else None))
    score = math.fsum(float(r.score or 0.0) for r in measured) / len(measured)
    kept = needle_verdicts(measured[0], base)
    return CaseResult(cid, identity, family, first.length, first.depth, score, measured[0].outcome,
                      kept[1] if kept is not None else None, tuple(values))


def samples_per_case(cases: RunCases) -> int:
    """The k of a variant's cases: the most samples any of its cases holds."""
    return max((len(c.samples) for c in cases.cases.values() if c.samples), default=1)


def compare_variants(records: Iterable[CaseRecord], *, order: Iterable[str] = (),
                     alpha: float = 0.05, seed: int = 0) -> list[Comparison]:
    """Each variant against its family's reference variant (the first in ``order``, the
    spec's label order; else the first stored)."""
    ranks = {label: i for i, label in enumerate(order)}
    found = []
    for base, by_name in sorted(variant_cases(records).items()):
        names = sorted(by_name, key=lambda n: ranks.get(f"{base}~{n}", len(ranks)))
        reference = by_name[names[0]]
        found += [replace(compare_cases(reference, by_name[n], alpha=alpha, seed=seed), paired_by="content",
                          samples=(samples_per_case(reference), samples_per_case(by_name[n])))
                  for n in names[1:]]
    return found
