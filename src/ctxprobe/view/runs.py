"""The runs page's rows (and ``/api/runs``, which the page polls): every run with its
model, families, status and progress, effective length per family with its interval
(the report's :class:`~ctxprobe.analysis.efflength.EffectiveLength`, as loaded), cost and
date. Plain values only: the templates escape them."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ctxprobe.report.redact import redact
from ctxprobe.report.runs import run_families, unique_prefixes
from ctxprobe.store import RunRecord
from ctxprobe.view.source import StoreSource

#: Statuses of a run that is still moving: the page keeps polling while one is shown.
LIVE = ("running", "waiting")


@dataclass(frozen=True)
class FamilyLength:
    family: str
    line: str  # the report's headline: "observed 2K (95%: 1K – 2K)"
    interval: str  # "1K – 2K"
    point: int | None
    lo: int | None
    hi: int | None


@dataclass(frozen=True)
class RunRow:
    run_id: str
    short: str
    model: str
    families: list[str]
    status: str
    answered: int
    planned: int
    created: str
    cost: str
    source: str  # "" for a ctxprobe sweep, else the harness it was imported from
    batch: str = ""  # a batch run: the provider's status of its waiting batches
    lengths: list[FamilyLength] = field(default_factory=list)
    usd: float | None = None  # the cost as a number for sorting (None: unpriced)

    @property
    def eff_key(self) -> int | None:
        """The shortest observed effective length over the run's families, for sorting
        (0: below the shortest tested length somewhere; None: nothing scored yet)."""
        return min((f.point or 0 for f in self.lengths), default=None)

    @property
    def live(self) -> bool:
        return self.status in LIVE

    @property
    def progress(self) -> str:
        return f"{self.answered}/{self.planned}"

    @property
    def percent(self) -> int:
        return round(100 * self.answered / self.planned) if self.planned else 0

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "live": self.live, "progress": self.progress, "percent": self.percent,
                "eff_key": self.eff_key}


def _cost(usd: float, priced: int) -> str:
    return f"${usd:,.4f}" if priced else "—"


def run_row(source: StoreSource, run: RunRecord, short: str) -> RunRow:
    loaded = source.loaded(run)
    rep = loaded.report
    fams, baseline = run_families(run)
    lengths = [FamilyLength(p.family, iv.line(), iv.interval_text(), iv.point, iv.lo, iv.hi)
               for p in rep.profiles if (iv := rep.intervals.get(p.family)) is not None]
    billing = loaded.data.billing
    imported = run.meta.extra.get("imported_from")
    return RunRow(run.run_id, short, redact(run.model), fams + (["noise floor"] if baseline else []), run.status,
                  run.n_final, run.n_planned, run.created_at[:16].replace("T", " "),
                  _cost(billing.usd, billing.responses), str(imported) if imported else "", run.batch or "", lengths,
                  billing.usd if billing.responses else None)


def run_rows(source: StoreSource) -> list[RunRow]:
    """Every run of the store, newest first."""
    runs = source.runs()
    prefixes = unique_prefixes([r.run_id for r in runs])
    return [run_row(source, r, prefixes[r.run_id]) for r in reversed(runs)]
