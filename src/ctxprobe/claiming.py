"""Sending only what this process has claimed, then taking over what others leave.

The sweep and instance packs both feed the runner through :func:`claimed`: planned cases
are claimed in groups (one (family, length, rep) group at a time, so a process keeps the
depths that share a prefix together) before they are built; cases another live process
holds are set aside, and once everything else is sent they are asked for again until each
is either answered by its holder or free because its holder died (see
:mod:`ctxprobe.store.claims`). The iterator runs in the runner's producer thread, so the
waiting never blocks the event loop.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import TypeVar

from ctxprobe.store import Store
from ctxprobe.store.claims import Coordinator

T = TypeVar("T")

#: Seconds between two looks at cases another live process holds.
POLL_S = 0.5


def claimed(items: Iterable[T], coord: Coordinator, *, key: Callable[[T], str],
            group: Callable[[T], Hashable] | None = None, poll_s: float = POLL_S,
            on_wait: Callable[[int], None] | None = None) -> Iterator[T]:
    """The items of ``items`` this session claimed, in order; then the ones other
    sessions held, as they become free. Stops early when the session ends."""
    held: list[T] = []
    for batch in _batches(items, group):
        result = coord.claim([key(x) for x in batch])
        mine, busy = set(result.claimed), set(result.held)
        held.extend(x for x in batch if key(x) in busy)
        for x in batch:
            if key(x) in mine:
                yield x
        if coord.stopping.is_set():
            return
    told = False
    while held and not coord.stopping.is_set():
        result = coord.claim([key(x) for x in held])
        mine, busy = set(result.claimed), set(result.held)
        for x in held:
            if key(x) in mine:
                yield x
        held = [x for x in held if key(x) in busy]
        if held:
            if on_wait is not None and not told:
                on_wait(len(held))
                told = True
            coord.stopping.wait(poll_s)


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
