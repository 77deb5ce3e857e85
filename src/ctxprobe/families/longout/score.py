"""Scoring ``longout`` as LongProc scores HTML→TSV (princeton-pli/LongProc,
``longproc/longproc_data.py: eval_html_to_tsv`` and ``longproc/html_to_tsv_evaluator.py``),
written from its rules:

- extraction: the text between the first ```` ```tsv ```` and the last ```` ``` ```` after it;
  without a closing fence, everything after ```` ```tsv ````; without either, the whole reply.
- parsing: lines (after stripping the text) read as tab-separated cells; the first line is
  the header; a last row whose cell count differs from the header's is dropped; any other
  such row becomes a row of ``N/A`` cells. Every cell is normalised: lower case, ASCII
  punctuation removed, the articles a/an/the removed, all white space removed.
- precision: the share of predicted rows equal to some reference row; recall: the share of
  reference rows equal to some predicted row (both unordered; duplicates count each
  time); F1 their harmonic mean (0 when both are 0). A reply that cannot be parsed (an
  empty one) scores 0.

The case score is F1. ``detail`` adds ``order``: the longest run of reference rows the
reply gives in page order (the longest increasing subsequence of the matched rows'
reference positions) over the reference rows, which LongProc does not score.
Outcome: ``correct`` at F1 = 1, ``partial`` above 0, ``parse_error`` when nothing could be
parsed, ``empty`` for an empty reply, else ``wrong``. A reply cut at the output limit is
``output_truncated`` whatever it holds (the family's ``long_output``).
"""

from __future__ import annotations

import bisect
import csv
import re
import string
from collections.abc import Sequence

from ctxprobe.core.outcome import Outcome, Scored

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCT = set(string.punctuation)


def normalise(cell: str) -> str:
    text = "".join(ch for ch in cell.lower() if ch not in _PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split()).replace(" ", "")


def extract(reply: str) -> str:
    found = re.search(r"```tsv([\s\S]*)```", reply)
    if found is not None:
        return found.group(1).strip()
    if "```tsv" in reply:
        reply = reply.split("```tsv")[1]
    return reply.strip()


def parse(text: str) -> list[tuple[str, ...]] | None:
    """Normalised data rows, or None where LongProc's parser fails (no data row)."""
    data = list(csv.reader(text.strip().split("\n"), delimiter="\t"))
    if len(data) < 2:
        return None
    header, rows = data[0], data[1:]
    if len(rows[-1]) != len(header):
        rows = rows[:-1]
    fixed = [r if len(r) == len(header) else ["N/A"] * len(header) for r in rows]
    if not fixed:
        return []
    return [tuple(normalise(c) for c in r) for r in fixed]


def _lis(seq: Sequence[int]) -> int:
    tails: list[int] = []
    for x in seq:
        i = bisect.bisect_left(tails, x)
        tails[i:i + 1] = [x]
    return len(tails)


def score_tsv(reference: str, reply: str) -> Scored:
    gold = parse(reference) or []
    pred = parse(extract(reply)) if reply.strip() else None
    if pred is None or not pred:
        outcome = Outcome.EMPTY if not reply.strip() else Outcome.PARSE_ERROR
        return Scored(0.0, outcome, {"precision": 0.0, "recall": 0.0, "f1": 0.0, "order": 0.0, "rows": 0,
                                     "reference_rows": len(gold)})
    gold_set, pred_set = set(gold), set(pred)
    precision = sum(r in gold_set for r in pred) / len(pred)
    recall = sum(r in pred_set for r in gold) / len(gold)
    f1 = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
    first = {r: i for i, r in reversed(list(enumerate(gold)))}
    order = _lis([first[r] for r in pred if r in first]) / len(gold)
    outcome = Outcome.CORRECT if f1 == 1.0 else Outcome.PARTIAL if f1 > 0 else Outcome.WRONG
    return Scored(f1, outcome, {"precision": precision, "recall": recall, "f1": f1, "order": order,
                                "rows": len(pred), "reference_rows": len(gold)})
