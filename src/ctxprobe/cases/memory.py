"""Bounding the memory a sweep of very long cases holds.

Measured here (bench_memory.py): a 1M-token niah case is ~45 MB in memory, of which
``prompt_ids`` — a Python list of a million ints — is ~34 MB and the prompt text ~4.6 MB.
The runner's queue holds ``2 × concurrency`` cases plus one in flight per worker (plus the
sweep's not-yet-stored cases), so memory grows with concurrency, not with the grid: fine at
concurrency 4 (~630 MB peak), over 1 GiB from about concurrency 8 at 1M tokens.

Two fixes that need no change to the runner's own code:

- :func:`slim_case` drops ``prompt_ids`` for providers that never read them (remote
  servers tokenize on their side) or packs them into a 4-byte ``array`` (8× smaller) for
  providers that only need their length or a sequence (sims, HF in process).
- :class:`MemoryGate` bounds the *tokens* of live cases: it wraps the case iterator (which
  the runner advances in a worker thread, so blocking there is safe) and admits the next
  case only when the cases already handed out fit a token budget. A case's tokens are given
  back when the sink has stored it (or the case is freed), and the gate opens when the
  sweep is stopping, so cases drained unsent can never deadlock the producer.
"""

from __future__ import annotations

import inspect

import array
import threading
import weakref
from collections.abc import Callable, Iterator
from typing import Any

from ctxprobe.core.case import Case, IdsPolicy

#: Default token budget of live cases: about four 1M-token cases, ~200 MB slimmed.
DEFAULT_LIVE_TOKENS = 4 * 1024 * 1024


def slim_case(case: Case, policy: IdsPolicy) -> Case:
    """``case`` with its prompt ids dropped or packed (in place; returns it for chaining)."""
    ids = case.prompt_ids
    if ids is None or policy == "keep":
        return case
    if policy == "drop":
        case.prompt_ids = None
    elif not isinstance(ids, array.array):
        case.prompt_ids = array.array("i", ids)  # type: ignore[assignment]  # Case.prompt_ids says list[int]
    return case


class MemoryGate:
    """Admit cases while the tokens of live cases fit ``max_tokens``.

    A case is live from admission until the sink has handled it (:meth:`wrap_sink`) or it
    is freed (a weakref finalizer), whichever comes first. Why both: the runner's workers
    keep a local reference to their last case while they wait for the next one, so freeing
    alone would stall the producer; and cases drained unsent never reach the sink. Once
    the sweep is stopping (:meth:`wrap_admit` saw a refusal) the gate opens, so the
    producer can never block on cases that will not be sent.

    One case is always admitted when none is live, so a case larger than the budget still
    runs (alone). ``timeout`` is a last safety valve: a longer wait admits the case anyway
    (counted in ``overruns``) rather than risk a stalled sweep."""

    def __init__(self, max_tokens: int = DEFAULT_LIVE_TOKENS, timeout: float = 600.0) -> None:
        self.max_tokens = max_tokens
        self.timeout = timeout
        self.live_tokens = 0
        self.peak_tokens = 0
        self.overruns = 0
        self.open = False
        self._live: dict[str, int] = {}
        self._cond = threading.Condition()

    def release(self, case_id: str) -> None:
        """Give back a case's tokens (idempotent)."""
        with self._cond:
            tokens = self._live.pop(case_id, None)
            if tokens is not None:
                self.live_tokens -= tokens
                self._cond.notify_all()

    def admit(self, case: Case) -> Case:
        """Block until ``case`` fits, then count it live."""
        tokens = max(1, case.token_count)
        with self._cond:
            fits = self._cond.wait_for(
                lambda: self.open or not self._live or self.live_tokens + tokens <= self.max_tokens,
                timeout=self.timeout)
            if not fits:
                self.overruns += 1
            self._live[case.case_id] = tokens
            self.live_tokens += tokens
            self.peak_tokens = max(self.peak_tokens, self.live_tokens)
        weakref.finalize(case, self.release, case.case_id)
        return case

    def wrap(self, cases: Iterator[Case]) -> Iterator[Case]:
        """The cases of ``cases``, each admitted by the gate before it is yielded.

        The case is built before the gate is asked (its size is known only then), so at
        most one extra case exists beyond the budget while the producer waits."""
        for case in cases:
            yield self.admit(case)
            del case  # do not keep the last case alive from this frame

    def wrap_sink(self, sink: Callable[[Any], Any]) -> Callable[[Any], Any]:
        """A sink that releases the item's case once ``sink`` has stored it."""

        def gated(item: Any) -> Any:
            try:
                result = sink(item)
            except BaseException:
                self.release(item.case.case_id)
                raise
            if not inspect.isawaitable(result):
                self.release(item.case.case_id)
                return result

            async def stored() -> Any:  # an async sink: release once it has really stored
                try:
                    return await result
                finally:
                    self.release(item.case.case_id)

            return stored()

        return gated

    def wrap_admit(self, admit: Callable[[Case], bool] | None) -> Callable[[Case], bool] | None:
        """An ``admit`` that opens the gate at the first refusal (the sweep is stopping)."""
        if admit is None:
            return None

        def gated(case: Case) -> bool:
            ok = admit(case)
            if not ok:
                with self._cond:
                    self.open = True
                    self._cond.notify_all()
            return ok

        return gated
