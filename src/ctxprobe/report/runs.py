"""The ``ctxprobe runs`` table: every run told apart at 80 columns.

Run ids are shown as their shortest unique prefix (at least :data:`MIN_PREFIX` characters,
like git's short hashes); any command taking a RUN_ID accepts such a prefix. Dates are
UTC minutes; long models and family lists fold onto a second line instead of being cut.
A run with a noise floor lists its families, not their ``@no-context`` twins, and says
``+ noise floor``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich import box
from rich.table import Table

from ctxprobe.core.baseline import SUFFIX, is_baseline
from ctxprobe.report.format import fmt_tokens
from ctxprobe.store.db import RunRecord

MIN_PREFIX = 7
LABEL_WIDTH = 13  # "aggregation," whole
LENGTHS_WIDTH = 9  # "512, 1K," and "8K, 128K" a line
STATUS_WIDTH = 16  # a batch run's long status ("waiting 0/1200 3 batches: in_progress,…") folds, not cut


def unique_prefixes(ids: Sequence[str], minimum: int = MIN_PREFIX) -> dict[str, str]:
    """Each id → its shortest prefix (≥ ``minimum`` characters) that no other id shares."""
    out: dict[str, str] = {}
    for run_id in ids:
        n = min(minimum, len(run_id))
        while n < len(run_id) and any(o != run_id and o.startswith(run_id[:n]) for o in ids):
            n += 1
        out[run_id] = run_id[:n]
    return out


def _when(created_at: str) -> str:
    # ISO 8601 UTC with seconds ("2026-11-30T19:41:05+00:00") → "2026-11-30 19:41"
    return created_at[:16].replace("T", " ")


def _status(r: RunRecord) -> str:
    """"complete" alone when every case has its response; else the state and the count."""
    if r.status == "complete" and r.n_final == r.n_planned:
        return "complete"
    if r.batch:  # a batch run: the provider's word for its batches
        return f"{r.status} {r.n_final}/{r.n_planned} {r.batch.replace(',', ', ')}"  # folds between states
    return f"{r.status} {r.n_final}/{r.n_planned}"


def run_families(r: RunRecord) -> tuple[list[str], str | None]:
    """The run's family labels without the no-context twins, and its baseline mode (None:
    no floor). Runs stored before the spec had ``baseline`` are told by their twin labels."""
    labels = [x for x in r.family.split(",") if x]
    baseline = r.spec.get("baseline")
    if not isinstance(baseline, str) or not baseline:
        baseline = SUFFIX.removeprefix("@") if any(is_baseline(x) for x in labels) else None
    return [x for x in labels if not is_baseline(x)], baseline


def _family_cell(r: RunRecord) -> str:
    families, baseline = run_families(r)
    return ", ".join(families) + (" + noise floor" if baseline else "")


def _lengths_cell(r: RunRecord) -> str:
    return ", ".join(fmt_tokens(x) for x in r.spec.get("lengths", []) if isinstance(x, int))


def _fold_widths(runs: Sequence[RunRecord], prefixes: dict[str, str], width: int) -> tuple[int | None, ...]:
    """The model, family and lengths columns' widths within ``width`` (None: as rich lays
    them out). When the table is too wide, each model name keeps its whole line where it
    fits ("sim:blind-mid|dle" was folded to give the others room), a family label stays
    whole ("aggregation,") and the lengths fold at their commas; a longer name (a URL)
    still folds. The run, date and status columns never fold."""
    cells = [(r.model, _family_cell(r), _lengths_cell(r)) for r in runs]
    fixed = max(map(len, prefixes.values()), default=3) + 16 + _status_width(runs)
    room = width - fixed - 2 * 5  # two spaces between the six columns
    model, family, lengths = (max([len(header), *(len(c[i]) for c in cells)])
                              for i, header in enumerate(("model", "family", "lengths")))
    if model + family + lengths <= room:
        return None, None, None
    label = min(max([6, *(len(w) + 1 for c in cells for w in c[1].split())]), LABEL_WIDTH)
    span = min(lengths, LENGTHS_WIDTH)
    model = min(model, room - label - span)
    if model < 10:  # too narrow for any layout of ours
        return None, None, None
    family = min(family, room - model - span)
    return model, family, room - model - family


def _status_width(runs: Sequence[RunRecord]) -> int:
    """The status column's width: the longest status, at most :data:`STATUS_WIDTH`, so a
    batch run's status folds (between words, or inside a long list of batch states)
    instead of being cut."""
    return min(max((len(_status(r)) for r in runs), default=6), STATUS_WIDTH)


def runs_table(runs: Sequence[RunRecord], width: int = 80) -> Table:
    prefixes = unique_prefixes([r.run_id for r in runs])
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, collapse_padding=True, header_style="bold",
                  caption="a unique prefix of a run id is enough in every command", caption_justify="left")
    table.add_column("run", no_wrap=True, style="bold")
    table.add_column("created (UTC)", no_wrap=True)
    model, family, lengths = _fold_widths(runs, prefixes, width)
    table.add_column("model", overflow="fold", width=model)
    table.add_column("family", overflow="fold", width=family)
    table.add_column("lengths", overflow="fold", width=lengths)
    status = _status_width(runs)
    table.add_column("status", overflow="fold", width=status if status < max((len(_status(r)) for r in runs),
                                                                         default=0) else None)
    for r in runs:
        table.add_row(prefixes[r.run_id], _when(r.created_at), r.model, _family_cell(r), _lengths_cell(r),
                      _status(r))
    return table


def runs_json(runs: Sequence[RunRecord]) -> list[dict[str, Any]]:
    """What ``ctxprobe runs --json`` prints: every run with its full id and dates."""
    out = []
    for r in runs:
        fams, baseline = run_families(r)
        out.append({"run_id": r.run_id, "created_at": r.created_at, "model": r.model, "tokenizer": r.tokenizer,
                    "family": ",".join(fams), "status": r.status, "cases": r.n_cases,
                    "responses": r.n_responses, "planned": r.n_planned, "answered": r.n_final,
                    "lengths": r.spec.get("lengths"), "depths": r.spec.get("depths"),
                    "reps": r.spec.get("reps"), **({"batch": r.batch} if r.batch else {}),
                    **({"baseline": baseline} if baseline else {})})
    return out
