"""The words of a ``decide --rag --confirm`` result, from its JSON: one formatter for a
confirmation just run (``decide``) and one read back from the store (``decide --rag``
without ``--confirm``, ``report``, ``view``), so both say the same thing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["confirmation_line", "stored_confirmation_line"]


def confirmation_line(c: Mapping[str, Any]) -> str:
    """``confirm 128-token chunks, k = 4: HELD (36/40 = 0.90, …); at 2k = 8: …; in the
    reversed order: …`` from a confirmation's JSON (``Confirmation.summary()``)."""
    return "confirm " + _body(c)


def stored_confirmation_line(row: Mapping[str, Any]) -> str:
    """A stored confirmation (``store.confirmations`` row): ``confirmed on run X (when,
    for USE[, chunks from DOCS]): 128-token chunks, k = 4: HELD …``."""
    source = "" if row["source"] == "filler" else f", chunks from {row['source']}"
    return f"confirmed on run {row['run_id']} ({row['confirmed_at']}, for {row['use']}{source}): " + _body(row["result"])


def _body(c: Mapping[str, Any]) -> str:
    s, n, bar = c["hits"], c["n"], c["bar"]
    verdict = (f"HELD ({s}/{n} = {c['accuracy']:.2f}, 95% lower bound {c['lower_bound']:.2f} >= bar {bar:g})"
               if c["held"] else
               f"NOT HELD ({s}/{n} = {c['accuracy']:.2f}, 95% lower bound {c['lower_bound']:.2f} < bar {bar:g})")
    parts = []
    for d, what in ((c["at_2k"], f"at 2k = {c['at_2k']['k']}"), (c["reversed"], "in the reversed order")):
        parts.append(f"{what}: {d['mean']:.2f}, " + (f"paired drop {d['drop']:+.2f} (McNemar p = {d['p']:.3g})"
                                                     if d["drop_shown"] else
                                                     f"no drop shown ({d['drop']:+.2f}, p = {d['p']:.3g})"))
    tail = "" if c["held"] else (f"; k = {c['fallback_k']} holds" if c["fallback_k"] else "; no smaller k held")
    return f"{c['chunk_tokens']:,}-token chunks, k = {c['k']}: {verdict}; " + "; ".join(parts) + tail
