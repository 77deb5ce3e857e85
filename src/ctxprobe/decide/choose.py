"""For each band and family: which run meets the bar there, and the cheapest that does.

Bands are ranges of prompt size, as a product states its need ("up to 100K", "between
100K and 200K", "between 200K and 1M"): the bands ``100k,200k,1m`` are (0, 100K],
(100K, 200K] and (200K, 1M], in tokens or in words, characters or entries of content. A
run *meets* a band ("yes") when every length it tested inside the band clears the bar on
its own with the interval's confidence (a length passes at alpha/2 and fails at
alpha/(2K): the same levels the effective-length interval and the adaptive walk use; the
claim "all of the band's lengths clear" is wrong only if the first truly failing one is
passed); it does *not* ("no") when a length inside the band confidently fails; a band
that reaches past everything the run tested is
*untested*, never a pass; anything else is *maybe* (more cases would tell). A length
belongs to a band by the fewest units among its cases, and the band's upper end must be
covered: the first tested length whose cases all held at least that much must clear the
bar too (between two tested lengths accuracy is taken to fall no faster than at them, as
the effective length itself takes it); a band no tested length reaches is untested. The choice is the cheapest run
that meets the band, at its input price for a prompt of the band's upper end (per 1M
tokens; per 1M words or characters through the run's own tokens per word or character).
Runs with no price come after priced ones. The product limit of a use is a different,
cumulative statement: its weakest family's effective length.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ctxprobe.prices.table import Price, input_price
from ctxprobe.decide.runs import FamilyFacts, RunFacts

__all__ = ["Candidate", "Choice", "choose", "price_at", "status_at"]

ORDER = {"yes": 0, "maybe": 1, "untested": 2, "no": 3}


@dataclass(frozen=True)
class Candidate:
    run_id: str
    model: str
    status: str  # yes | maybe | untested | no
    price: float | None  # USD per 1M units of the band (tokens, words, chars) at this band
    lo: int | None  # the interval's ends in the band's unit (None: below the shortest length)
    hi: int | None
    why: str

    def to_dict(self) -> dict[str, object]:
        return {"run_id": self.run_id, "model": self.model, "meets": self.status, "price_per_1m": self.price,
                "effective_length": {"lo": self.lo, "hi": self.hi}, "why": self.why}


@dataclass(frozen=True)
class Choice:
    family: str  # a family, or a use "niah+vartrack" (its weakest family decides)
    band: int
    unit: str
    choice: Candidate | None
    meets: str  # yes | maybe | no
    candidates: list[Candidate]
    start: int = 0  # the band is (start, band]: the previous band's end


    def to_dict(self) -> dict[str, object]:
        return {"family": self.family, "band": self.band, "band_from": self.start, "unit": self.unit,
                "choice": self.choice.model if self.choice else None,
                "choice_run": self.choice.run_id if self.choice else None, "meets": self.meets,
                "candidates": [c.to_dict() for c in self.candidates]}


def status_at(facts: FamilyFacts, start: int, band: int, unit: str) -> tuple[str, str, int | None, int | None]:
    """(status, why, lo, hi) of one family of one run for the band (``start``, ``band``]
    (lo, hi: its effective-length interval in ``unit``)."""
    iv = facts.interval
    lo = facts.value(iv.lo, unit) if iv.lo is not None else None
    hi = facts.value(iv.hi, unit, high=iv.hi != iv.lo) if iv.hi is not None else None
    pct = f"{iv.confidence:.0%}"
    inside = [L for L in iv.lengths if (v := facts.value(L, unit)) is not None and start < v <= band]
    verdicts = {L: facts.verdict(L) for L in inside}
    failed = [L for L, v in verdicts.items() if v == "fail"]
    if failed:
        return "no", f"fails the bar at {facts.value(failed[0], unit):,} {unit} ({pct} confidence)", lo, hi
    tested = facts.tested()
    cover = next((L for L in sorted(tested) if (v := facts.value(L, unit)) is not None and v >= band), None)
    if cover is None:
        top = facts.value(max(tested), unit, high=True) if tested else None
        return "untested", "the band reaches past every length it was tested at" + (
            f" ({top:,} {unit})" if top else ""), lo, hi
    needed = {**verdicts, cover: facts.verdict(cover)}
    if all(v == "pass" for v in needed.values()):
        return "yes", f"clears the bar at every tested length the band needs ({pct} confidence)", lo, hi
    if any(v == "untested" for v in needed.values()):
        return "untested", "the adaptive walk never sent " + ", ".join(
            f"{facts.value(L, unit):,}" for L, v in needed.items() if v == "untested") + f" {unit}", lo, hi
    return "maybe", _maybe_why(facts, needed, cover, unit), lo, hi


def _maybe_why(facts: FamilyFacts, needed: dict[int, str], cover: int, unit: str) -> str:
    """Why a band is a maybe, and what would settle it: more cases only where a length is
    open; a confident failure past the band's end is settled already, and only a length
    tested inside the band (up to its end) can tell."""
    def at(lengths: list[int]) -> str:
        return ", ".join(f"{facts.value(L, unit):,}" for L in lengths) + f" {unit}"

    parts = []
    opened = sorted(L for L, v in needed.items() if v == "open")
    if opened:
        settles = [facts.interval.settle.get(L) for L in opened]
        reps = [x.reps for x in settles if x is not None]
        how = (f", `--reps {max(r for r in reps if r is not None)}` at the rate{'s' if len(opened) > 1 else ''} "
               "observed"
               if reps and len(reps) == len(opened) and None not in reps else "")
        parts.append(f"not shown at {at(opened)}: more cases would tell{how}")
    if needed.get(cover) == "fail":
        inside = sorted(L for L in needed if L != cover)
        parts.append(f"fails the bar at {at([cover])}, past the band's end ({facts.interval.confidence:.0%} "
                     "confidence): " + ("a length between its last pass and that one would tell" if inside else
                                        "no length inside the band was tested; testing one would tell"))
    return "; ".join(parts)


def price_at(run: RunFacts, band: int, unit: str, table: dict[str, Price]) -> float | None:
    """USD per 1M units of input for a prompt of ``band`` units (its price tier; words and
    characters through the run's own tokens per word or character)."""
    if run.price is None:
        return None  # no price known for the run's model
    per = run.tokens_per.get(unit, 0.0) if unit != "entries" else 0.0
    tokens = band if unit == "tokens" else (math.ceil(band * per) if per else None)
    price = input_price(run.model, table, prompt_tokens=tokens)
    if price is None or unit == "tokens":
        return price
    return price * per if per else None


def _use_status(statuses: list[str]) -> str:
    return max(statuses, key=lambda s: ORDER[s]) if statuses else "untested"


def choose(runs: list[RunFacts], families: list[str], uses: list[list[str]], bands: list[int], unit: str,
           table: dict[str, Price]) -> list[Choice]:
    """Every (family or use, band): the candidates by status and price, and the choice."""
    out: list[Choice] = []
    targets = [(f, [f]) for f in families] + [("+".join(u), u) for u in uses if len(u) > 1]
    for name, members in targets:
        for start, band in zip([0, *bands], bands):
            cands: list[Candidate] = []
            for run in runs:
                found = [(m, run.families[m]) for m in members if m in run.families]
                if len(found) < len(members):
                    lacking = sorted(set(members) - {m for m, _ in found})
                    cands.append(Candidate(run.run.run_id, run.model, "untested", price_at(run, band, unit, table),
                                           None, None, f"no {', '.join(lacking)} in this run"))
                    continue
                results = [status_at(facts, start, band, unit) for _, facts in found]
                worst = max(range(len(results)), key=lambda i: ORDER[results[i][0]])
                status, why, _, _ = results[worst]
                los = [r[2] for r in results]
                his = [r[3] for r in results]
                lo = None if any(v is None for v in los) else min(v for v in los if v is not None)
                hi = None if any(v is None for v in his) else min(v for v in his if v is not None)
                if len(members) > 1:
                    why = f"{found[worst][0]}: {why}"
                cands.append(Candidate(run.run.run_id, run.model, _use_status([r[0] for r in results]),
                                       price_at(run, band, unit, table), lo, hi, why))
            cands.sort(key=lambda c: (ORDER[c.status], c.price is None, c.price or 0.0, -(c.lo or 0), c.model))
            best = cands[0] if cands and cands[0].status == "yes" else None
            meets = "yes" if best else ("maybe" if any(c.status == "maybe" for c in cands) else "no")
            out.append(Choice(name, band, unit, best, meets, cands, start))
    return out
