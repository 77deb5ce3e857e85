"""The decision as lines of text (the terminal's; each short enough for 80 columns)."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

from ctxprobe.report.format import fmt_tokens
from ctxprobe.report.natural_terminal import verdict_line

if TYPE_CHECKING:
    from ctxprobe.decide.choose import Candidate
    from ctxprobe.decide.decision import Decision

__all__ = ["band_text", "decision_lines", "fmt_amount"]


def fmt_amount(value: int | None, unit: str) -> str:
    if value is None:
        return "—"
    return f"{fmt_tokens(value)} tokens" if unit == "tokens" else f"{value:,} {unit}"


def band_text(start: int, band: int, unit: str) -> str:
    """"up to 2K tokens" for the first band, "2K-4K tokens" (above 2K, up to 4K) after it."""
    if not start:
        return f"up to {fmt_amount(band, unit)}"
    low = fmt_amount(start, unit).rsplit(" ", 1)[0]
    return f"{low}-{fmt_amount(band, unit)}"


def _usd(x: float | None) -> str:
    return "unpriced" if x is None else f"${x:,.2f}" if x >= 0.01 or x == 0 else f"${x:.4f}"


def _also_meets(price: float | None, cands: list[Candidate], letters: dict[str, str]) -> list[str]:
    """The other runs that meet a band, by how their price stands to the choice's: at the
    same price (the choice is the longer reliable one), dearer, or with no price at all."""
    groups = {"at the same price": [x for x in cands if x.price is not None and x.price == price],
              "dearer": [x for x in cands if x.price is not None and price is not None and x.price > price],
              "unpriced": [x for x in cands if x.price is None]}
    return [f"   also meets it, {how}: " + ", ".join(letters[x.run_id] for x in xs) for how, xs in groups.items() if xs]


def decision_lines(d: Decision) -> list[str]:
    out: list[str] = []
    letters = {r.run.run_id: chr(ord("A") + i) if i < 26 else f"R{i}" for i, r in enumerate(d.runs)}
    if d.layout is not None:  # decide --layout: what each family name stands for
        renamed = [f"{letters[rid]} {name} = {label}" for rid, labels in d.layout_labels.items()
                   for name, label in labels.items() if name != label]
        out += textwrap.wrap(f"layout: {d.layout} (only the families sent in it"
                             + (f"; {', '.join(renamed)}" if renamed else "") + ")", 80,
                             subsequent_indent="  ", break_on_hyphens=False)
    out.append(f"runs (lengths in {d.unit}; effective length = longest length clearing the bar):")
    for r in d.runs:
        cost, how = r.cost()
        price = _usd(r.price.input if r.price else None) + ("/1M input" if r.price else "")
        out.append(f"{letters[r.run.run_id]}  {r.model}")
        spent = "" if r.price is None and cost is None else f" · cost {_usd(cost)}" + (f" ({how})" if cost is not None
                                                                                      else "")
        out.append(f"   run {r.run.run_id} · {price}{spent}" + (" · adaptive" if r.adaptive else ""))
        for fam, facts in r.families.items():
            iv = facts.interval
            words = facts.value(iv.lo, "words") if iv.lo is not None else None
            chars = facts.value(iv.lo, "chars") if iv.lo is not None else None
            entries = facts.value(iv.lo, "entries") if iv.lo is not None else None
            out.append(f"   {fam} (bar {facts.bar:g}): {iv.line()}")
            for _, settle in sorted(iv.settle.items()):  # what would settle a length left open
                out += textwrap.wrap(settle.line(), 80, initial_indent="     ", subsequent_indent="       ",
                                     break_on_hyphens=False)
            if iv.lo is not None:
                parts = [f"{words:,} words" if words is not None else "", f"{chars:,} chars" if chars else "",
                         f"{entries:,} entries" if entries else ""]
                out.append(f"     reliable length as content: {', '.join(p for p in parts if p)}")
        for a in r.natural:
            out += textwrap.wrap(f"natural check: {verdict_line(a)}", 80, initial_indent="   ",
                                 subsequent_indent="     ", break_on_hyphens=False)
    out.append("")
    out.append("choices per band (above the previous band's end, up to its own; 95% confidence;")
    out.append(f"  input price per 1M {d.unit}):")
    for c in d.choices:
        head = f"{c.family} {band_text(c.start, c.band, d.unit)}: "
        if c.choice is not None:
            at = "(unpriced)" if c.choice.price is None else f"at {_usd(c.choice.price)}"
            out.append(head + f"{letters[c.choice.run_id]} {c.choice.model} {at}")
        elif c.candidates and all(x.status == "untested" for x in c.candidates):
            out.append(head + "untested: no run was tested that long")
        else:
            out.append(head + ("none tested meets it" if c.meets == "no" else "none shown to meet it"))
        by = {s: [x for x in c.candidates if x.status == s and x is not c.choice] for s in ("yes", "maybe", "untested")}
        for status, cands in by.items():
            if cands:
                if status == "yes":
                    out += _also_meets(c.choice.price if c.choice else None, cands, letters)
                else:
                    out += textwrap.wrap(f"{status}: " + ", ".join(f"{letters[x.run_id]} ({x.why})" for x in cands), 80,
                                         initial_indent="   ", subsequent_indent="     ", break_on_hyphens=False)
        fails = [letters[x.run_id] for x in c.candidates if x.status == "no"]
        if fails:
            out.append(f"   fails it: {', '.join(fails)}")
    if d.limits:
        out.append("")
        out.append("product limits (lowest effective length among the use's families):")
        for lim in d.limits:
            out += textwrap.wrap(f"{letters[lim.run_id]}  {lim.line()}", 80, subsequent_indent="   ",
                                 break_on_hyphens=False)
    for note in d.caveats:  # long sentences: wrapped to read at 80 columns and in CI logs
        out += textwrap.wrap(f"caveat: {note}", 80, subsequent_indent="  ", break_on_hyphens=False)
    return out
