"""Sending only what this process has claimed, then taking over what others leave.

The sweep and instance packs both feed the runner through :func:`send_claimed`. A first
pass claims planned cases lazily, in groups (one (family, length, rep) group at a time, so
a process keeps the depths that share a prefix together, and processes started together
share the grid), just before they are built; cases another live process holds are set
aside. Once this process's own cases are all sent and stored, the set-aside ones are
asked for again — each is either answered by its holder or free because its holder died
(see :mod:`ctxprobe.store.claims`) — and sent in further passes.

Why never wait inside the case iterator: with parallel building, cases this process has
claimed can sit built-but-unyielded in the builder's look-ahead; a process blocking there
on another's claims while that one blocks on its own would wait forever. Between passes
every claim of this process is settled, so waiting there cannot deadlock.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable, Iterable, Iterator
from typing import TypeVar

from ctxprobe.store import Store
from ctxprobe.store.claims import Coordinator

T = TypeVar("T")

#: Seconds between two looks at cases another live process holds.
POLL_S = 0.5


def claimed(items: Iterable[T], coord: Coordinator, *, key: Callable[[T], str],
            group: Callable[[T], Hashable] | None = None, held_out: list[T] | None = None) -> Iterator[T]:
    """The items of ``items`` this session could claim, in order, claimed batch by batch
    as the consumer reaches them; those another live session holds go to ``held_out``.
    Never blocks on other sessions. Stops early when the session ends."""
    for batch in _batches(items, group):
        result = coord.claim([key(x) for x in batch])
        mine, busy = set(result.claimed), set(result.held)
        if held_out is not None:
            held_out.extend(x for x in batch if key(x) in busy)
        for x in batch:
            if key(x) in mine:
                yield x
        if coord.stopping.is_set():
            return


async def send_claimed(items: Iterable[T], coord: Coordinator, send: Callable[[Iterator[T]], Awaitable[int]], *,
                       key: Callable[[T], str], group: Callable[[T], Hashable] | None = None,
                       stop: Callable[[], bool] = lambda: False, on_wait: Callable[[int], None] | None = None,
                       poll_s: float = POLL_S) -> int:
    """Send ``items`` through ``send`` (one runner pass over an iterator; returns requests
    sent): first what this session can claim, then, pass after pass, what other sessions
    held until each is answered or free. ``stop`` ends the passes early (e.g. a spending
    cap was reached). Returns the requests sent in all passes."""
    held: list[T] = []
    sent = await send(claimed(items, coord, key=key, group=group, held_out=held))
    told = False
    while held and not coord.stopping.is_set() and not stop():
        result = await asyncio.to_thread(coord.claim, [key(x) for x in held])
        mine, busy = set(result.claimed), set(result.held)
        ready = [x for x in held if key(x) in mine]
        held = [x for x in held if key(x) in busy]
        if ready:
            sent += await send(iter(ready))
        elif held:
            if on_wait is not None and not told:
                on_wait(len(held))
                told = True
            await asyncio.sleep(poll_s)
    return sent


def _batches(items: Iterable[T], group: Callable[[T], Hashable] | None) -> Iterator[list[T]]:
    batch: list[T] = []
    current: Hashable = None
    for x in items:
        k = group(x) if group is not None else id(x)
        if batch and k != current:
            yield batch
            batch = []
        current = k
        batch.append(x)
    if batch:
        yield batch


def finish_run(store: Store, run_id: str, grid: set[str], coord: Coordinator) -> None:
    """End this process's session and set the run's status: ``complete`` when every
    planned case has a final response; left ``running`` while another process still
    works on it; else ``incomplete``."""
    try:
        if not (grid - store.done_case_ids(run_id)):
            status = "complete"
        else:
            status = "running" if coord.others_alive() else "incomplete"
        store.update_run(run_id, status=status)
    finally:
        coord.end()
