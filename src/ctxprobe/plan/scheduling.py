"""How a sweep's cases are dispatched: prefix chains kept on server slots, or case by case.

One rule, read by the runner (:attr:`ctxprobe.sweep.session.SweepSession.lanes`, with the
slots the server reported at preflight) and by ``ctxprobe plan`` (before any server is
asked): :func:`chain_lanes`. A *chain* is the cases of one (family, length, repetition)
(:func:`ctxprobe.plan.grid.prefix_chain`); with lanes, each chain goes in order, deepest
first, to one slot, ``min(slots, concurrency)`` chains at a time.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxprobe.plan.grid import planned_cases, prefix_chain
from ctxprobe.spec import Spec
from ctxprobe.spec.names import as_ref

__all__ = ["Dispatch", "dispatch", "chain_lanes", "reports_slots"]


def chain_lanes(spec: Spec, server_slots: int | None) -> int | None:
    """Prefix chains in flight at once (one per server slot, at most ``spec.concurrency``);
    None: case by case, each to whichever worker is free. ``spec.slots`` wins over
    ``server_slots`` (what the server reported; None: nothing); ``slots: 0`` turns the
    scheduling off. Independent cases (``share_prefix: false``) share no prefix to keep on a
    slot, and provider batches are ordered by the provider: both go case by case."""
    if spec.batch or not spec.share_prefix:
        return None
    slots = spec.slots if spec.slots is not None else server_slots
    return min(slots, spec.concurrency) if slots else None


def reports_slots(model: str) -> bool:
    """Whether ``model``'s provider asks its server for its slots before a sweep (the
    registry's ``reports_slots``: OpenAI-compatible servers, llama.cpp's ``/props``)."""
    from ctxprobe.core import registry

    entry = registry.find("providers", _provider(model))
    return bool(entry is not None and entry.meta.get("reports_slots"))


@dataclass(frozen=True)
class Dispatch:
    """What ``plan`` says of the dispatch: ``lanes`` known now (``--slots``), or ``None``
    with ``from_server`` (read at run time), or case by case (``why``)."""

    chains: int
    concurrency: int
    slots: int | None  # --slots as given
    lanes: int | None
    from_server: bool
    why: str = ""
    #: What ``plan`` read from the server itself (:mod:`ctxprobe.sweep.server_probe`): the
    #: slots it reports (None: none), and whether it was asked at all.
    server_slots: int | None = None
    asked: bool = False
    server_text: str = ""  # how the server's answer reads ("the server reports 2 slots")

    @property
    def by_chains(self) -> bool:
        return self.lanes is not None or self.from_server

    def line(self) -> str:
        if not self.by_chains:
            return f"scheduling: case by case, up to {self.concurrency} at once ({self.why})"
        head = (f"scheduling: {self.chains:,} prefix chains (family, length, repetition), each sent in order to "
                "one server slot, ")
        if self.lanes is not None:
            return head + f"{self.lanes} at a time (--slots {self.slots}, --concurrency {self.concurrency})"
        if self.asked and self.server_slots:
            lanes = min(self.server_slots, self.concurrency)
            return head + f"{lanes} at a time ({self.server_text}; --concurrency {self.concurrency})"
        if self.asked:
            said = self.server_text or "the server reports no slots"
            return (f"scheduling: case by case, up to {self.concurrency} at once ({said} at /props or /slots; "
                    "--slots N keeps each prefix chain on one)")
        return (head + f"min(slots, {self.concurrency}) at a time; slots read from the server's /props at run time "
                "unless --slots (none reported: case by case)")


def dispatch(spec: Spec, server_slots: int | None = None, *, asked: bool = False, server_text: str = "") -> Dispatch:
    """How ``spec``'s cases will be sent: as far as is known before the server is asked, or
    (``asked``) with the ``server_slots`` its server reported to ``plan``."""
    chains = len({prefix_chain(p.cell, p.rep) for p in planned_cases(spec)})
    known = chain_lanes(spec, None)
    from_server = known is None and spec.slots is None and chain_lanes(spec, 1) is not None and reports_slots(spec.model)
    why = ""
    if known is None and not from_server:
        provider = _provider(spec.model)
        why = ("sent as provider batches" if spec.batch
               else "--no-share-prefix: no prefix to keep on a slot" if not spec.share_prefix
               else "--slots 0" if spec.slots == 0
               else f"{provider} reports no server slots; --slots N keeps each prefix chain on one")
    return Dispatch(chains, spec.concurrency, spec.slots, known, from_server, why, server_slots,
                    asked and from_server, server_text)


def _provider(model: str) -> str:
    return as_ref(model).provider
