"""The plan: the grid of cells × repetitions, in sending order, and what it will cost."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ctxprobe.plan.caching import Tiered
from ctxprobe.prices.table import Price
from ctxprobe.spec import Spec
from ctxprobe.spec.names import as_ref
from ctxprobe.core.case import Cell, make_case_id
from ctxprobe.core.variant import decoding_of, samples_of


@dataclass(frozen=True)
class PlannedCase:
    cell: Cell
    rep: int
    #: Which of a variant's k samples (None: the case is sent once; ctxprobe.core.variant).
    sample: int | None = None

    @property
    def case_id(self) -> str:
        return make_case_id(self.cell, self.rep, self.sample)


def prefix_chain(cell: Cell, rep: int) -> tuple[str, int, int]:
    """The chain a case belongs to: the cases of one (family, length, repetition) share
    their filler, so sent one after another to one cache each reuses the one before's
    prefix (the runner's prefix-aware scheduling keeps a chain on one server slot)."""
    return (cell.family, cell.length, rep)


def planned_cases(spec: Spec) -> Iterator[PlannedCase]:
    """Lengths ascending; within a (length, repetition) group, depths from the end back to
    the start. Cases of a group share their filler, so each request shares with the one
    before it everything up to its own needle: a prefix cache (llama.cpp, vLLM, SGLang)
    recomputes only the tail. With reasoning budgets, one prompt is sent at each budget
    in turn (ascending), so the budgets of a case are paired and share the whole prompt. A
    prompt variant with ``samples=k`` sends each of its cases k times in a row (the same
    prompt: the cache serves all but the first)."""
    budgets: list[int | None] = list(spec.reasoning_budgets) if spec.reasoning_budgets is not None else [None]
    for family in spec.families:
        samples = samples_of(spec.families[family])
        for length in spec.lengths_of(family):  # less the lengths too short for the family
            for rep in range(spec.reps):
                for depth in sorted(spec.depths, reverse=True):
                    for budget in budgets:
                        for sample in samples:
                            yield PlannedCase(Cell(family, length, depth, budget), rep, sample)


def samples_per_case(spec: Spec, label: str) -> int:
    """How many times each case of a family label is sent (a variant's ``samples``, else 1)."""
    decoding = decoding_of(spec.families[label])
    return decoding.k if decoding is not None else 1


#: Rough prefill/decode speeds (tokens/s) used only for the plan's time estimate.
_LOCAL_PREFILL, _LOCAL_DECODE = 120.0, 30.0  # SmolLM2-135M on 2 CPU cores (measured here)
_REMOTE_PREFILL, _REMOTE_DECODE = 5000.0, 50.0  # a typical GPU server, per request


@dataclass(frozen=True)
class PlanSummary:
    requests: int
    input_tokens: int  # the sum of the cases' target lengths: every case is built to at most it
    max_output_tokens: int
    cells: int
    cost_usd: float | None = None  # None: no known price
    price_note: str = ""
    seconds: float | None = None
    built_sizes: bool = False  # some lengths were not token counts: their cases were built and counted
    #: Of the output tokens, those the reasoning budgets allow (billed as output tokens).
    reasoning_tokens: int = 0
    #: Where the time estimate's speeds came from (measured on the server, or assumed).
    speed_note: str = "a rough guess from typical speeds"

    def lines(self) -> list[str]:
        how = ("lengths not in tokens (phone books in entries) counted by building the first book's "
               "cases, each N, and averaging"
               if self.built_sizes else "each case is built to at most its target")
        out = [
            f"{self.cells} cells, {self.requests:,} requests",
            f"input tokens: {self.input_tokens:,} (sum of target lengths; k = 1,024 tokens; {how})",
            f"output tokens: at most {self.max_output_tokens:,}"
            + (f" ({self.reasoning_tokens:,} of them reasoning, billed as output)" if self.reasoning_tokens else ""),
        ]
        if self.cost_usd is None:
            out.append(f"price: unknown {self.price_note}")
        else:
            out.append(f"price: at most ${self.cost_usd:,.2f} {self.price_note}".rstrip())
        if self.seconds is not None:
            out.append(f"time: roughly {_fmt_duration(self.seconds)} ({self.speed_note})")
        return out


def _fmt_duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def family_output_budget(name: str, params: Mapping[str, Any]) -> int | None:
    """The output budget a family fixes for its cases (``output_budget``, RULER's
    ``tokens_to_generate``), asked of the family in the registry; None: the sweep's."""
    from ctxprobe.core import registry

    entry = registry.find("families", name)
    if entry is None:
        return None
    budget: int | None = entry.load().output_budget(params)
    return budget


def _output_budget(spec: Spec, label: str) -> int:
    """Output tokens one case of a family asks for: some families fix their own."""
    params = spec.families[label] or {}
    fixed = family_output_budget(str(params.get("family", label)), params)
    return int(fixed) if fixed is not None else spec.decoding.max_tokens


def summarize(spec: Spec, price: Price | Tiered | None = None,
              sizes: Mapping[tuple[str, int], int] | None = None,
              measured: tuple[float, float | None] | None = None) -> PlanSummary:
    """Requests, tokens, cost and a rough time. ``sizes`` ((family, length) → tokens, from
    :mod:`ctxprobe.cases.sizing`) replaces the lengths for families not sized in tokens.
    With price tiers (:class:`ctxprobe.core.catalog.ModelInfo`), each case is priced at
    the tier of its own prompt length. ``measured``: (prefill, decode) tokens/s timed on the
    model's server (``plan`` asks it): the time is then every prompt read and every output
    token written at those speeds, one request at a time (prefix reuse only shortens it)."""
    budgets = spec.reasoning_budgets if spec.reasoning_budgets is not None else [0]
    per_cell = len(spec.depths) * spec.reps * len(budgets)
    k = {label: samples_per_case(spec, label) for label in spec.families}  # a variant's samples
    sent = {label: len(spec.lengths_of(label)) for label in spec.families}  # lengths each family is sent at
    requests = per_cell * sum(k[f] * sent[f] for f in spec.families)
    input_tokens = sum(sizes.get((f, n), n) if sizes else n for f in spec.families for n in spec.lengths_of(f)
                       for _ in range(k[f])) * per_cell
    # every budget is priced in full: a reasoning model may spend all of it (billed as output)
    reasoning_tokens = sum(budgets) * len(spec.depths) * spec.reps * sum(k[f] * sent[f] for f in spec.families)
    output_tokens = (sum(_output_budget(spec, label) * k[label] * sent[label] for label in spec.families)
                     * per_cell + reasoning_tokens)
    cost: float | None = None
    base = price if isinstance(price, Price) or price is None else price.price_at(None)
    if base is not None:
        cost = 0.0
        for label in spec.families:
            out = (_output_budget(spec, label) * per_cell + sum(budgets) * len(spec.depths) * spec.reps) * k[label]
            for n in spec.lengths_of(label):
                tokens = sizes.get((label, n), n) if sizes else n
                tier = price.price_at(tokens) if price is not None and not isinstance(price, Price) else base
                cost += (tier or base).cost(tokens * per_cell * k[label], out)
    note = (f"for {spec.model} at ${base.input:g} / ${base.output:g} per 1M input / output tokens"
            if base is not None else f"for {spec.model}: add it to a price file (--prices FILE)")
    tiers = getattr(price, "prices", ())
    if base is not None and len(tiers) > 1:
        note += "; " + ", ".join(f"over {t.above:,} prompt tokens ${t.input:g} / ${t.output:g}" for t in tiers[1:])
    provider = as_ref(spec.model).provider
    speed_note = "a rough guess from typical speeds"
    if measured is not None:
        prefill, decode = measured
        seconds = input_tokens / prefill + output_tokens / (decode or _REMOTE_DECODE)
        speed_note = (f"measured on the server: {prefill:,.0f} tok/s prefill, "
                      + (f"{decode:,.0f} tok/s decode" if decode else f"decode assumed {_REMOTE_DECODE:g} tok/s")
                      + "; one request at a time, before any prefix reuse")
    elif provider == "sim":
        seconds = None
    elif provider in ("local", "llamacpp"):
        seconds = input_tokens / _LOCAL_PREFILL + output_tokens / _LOCAL_DECODE
        speed_note = (f"assumed: {_LOCAL_PREFILL:g} tok/s prefill, {_LOCAL_DECODE:g} tok/s decode, "
                      "the embedded model's on 2 CPU cores")
    else:
        per_request = 1.0 + (input_tokens / requests) / _REMOTE_PREFILL + (output_tokens / requests) / _REMOTE_DECODE
        seconds = requests * per_request / spec.concurrency
        speed_note = (f"assumed: a GPU server at {_REMOTE_PREFILL:g} tok/s prefill and {_REMOTE_DECODE:g} tok/s "
                      f"decode a request, {spec.concurrency} at once")
    return PlanSummary(requests, input_tokens, output_tokens,
                       sum(sent.values()) * len(spec.depths) * len(budgets),
                       cost, note, seconds, built_sizes=any(t != n for (_, n), t in (sizes or {}).items()),
                       reasoning_tokens=reasoning_tokens, speed_note=speed_note)
