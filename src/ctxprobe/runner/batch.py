"""Sending a sweep as provider batches (``ctxprobe run --batch``): the runner's other executor.

:func:`execute_batch` has :func:`~ctxprobe.runner.execute.execute`'s contract — cases from
a lazy iterator, ``keep`` and ``admit`` asked before each case is sent, every response
handed to the same ``sink`` (so it is scored, labelled, billed and stored as a live one)
— but instead of one request per case it:

1. looks up the run's open batches in its :class:`~ctxprobe.core.batch_journal.BatchJournal`
   (the store): a case already in one is not sent again, its batch is polled instead;
2. chunks the other cases into batches within the provider's request and byte limits,
   recording each batch in the journal before it is created and its id the moment the
   provider returns it;
3. polls every batch each ``poll_s`` seconds (its provider status recorded), and when one
   ends hands each request's result to the sink; requests that expired, were canceled or
   failed transiently go out again in a new batch, up to the policy's retries; then what
   the batch left at the provider (OpenAI: its files) is deleted, best effort;
4. on Ctrl-C (the task cancelled) asks ``confirm_cancel`` once whether to cancel the open
   batches at the provider; without it (not interactive) they are left running and a
   rerun polls them.

Control calls (create, poll, results, cleanup, cancel) go through the sweep's
:class:`~ctxprobe.runner.client.ModelClient` (:meth:`~ctxprobe.runner.client.ModelClient.control`):
the same timeout, retries and backoff as live requests.
"""

from __future__ import annotations

import asyncio
import functools
import uuid
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import replace

from ctxprobe.core.case import Case
from ctxprobe.models.base import GenerateResult, PermanentError, Provider
from ctxprobe.models.batch import batch_api_for
from ctxprobe.models.batch_base import BatchAPI, ItemResult
from ctxprobe.redaction import scrub
from ctxprobe.core.batch_journal import ABANDONED, COLLECTED, SUBMITTED, SUBMITTING, BatchEntry, BatchJournal
from ctxprobe.runner.client import ModelClient, as_client
from ctxprobe.runner.execute import Attempted, RunnerConfig, Sink, request_for

#: Seconds between two polls of a waiting batch, by default.
POLL_S = 30.0


async def execute_batch(cases: Iterator[Case], provider: Provider | ModelClient, sink: Sink, cfg: RunnerConfig,
                        admit: Callable[[Case], bool] | None = None, keep: Callable[[Case], bool] | None = None, *,
                        journal: BatchJournal, poll_s: float = POLL_S,
                        notify: Callable[[str], None] = lambda line: None,
                        confirm_cancel: Callable[[str], bool] | None = None,
                        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                        api: BatchAPI | None = None) -> int:
    """Send every case through provider batches; return how many requests were submitted
    (resent ones included; cases found in open batches are polled, not counted)."""
    client = as_client(provider, cfg.policy())
    run = _BatchRun(client, api or batch_api_for(client.provider), journal, sink, cfg, notify, sleep)
    try:
        await run.resume()
        await run.submit_all(cases, admit, keep)
        await run.wait(poll_s)
    except (asyncio.CancelledError, KeyboardInterrupt):
        await run.interrupted(confirm_cancel)
        raise
    return run.sent


class _BatchRun:
    def __init__(self, client: ModelClient, api: BatchAPI, journal: BatchJournal, sink: Sink, cfg: RunnerConfig,
                 notify: Callable[[str], None], sleep: Callable[[float], Awaitable[None]]) -> None:
        self.client, self.api, self.journal, self.sink, self.cfg = client, api, journal, sink, cfg
        self.notify, self.sleep = notify, sleep
        self.hand: dict[str, Case] = {}  # cases waiting for a result, by case id
        self.rounds: dict[str, int] = {}  # batches each case has been in (its attempts)
        self.live: dict[str, BatchEntry] = {}  # submitted batches not yet collected, by key
        self.found: dict[str, BatchEntry] = {}  # case id -> the open batch it is in (from before)
        self.retry: list[Case] = []
        self.sent = 0

    # 1. batches a previous session left open ------------------------------------------------
    async def resume(self) -> None:
        for entry in self.journal.open_batches(self.api.provider):
            if entry.state == SUBMITTING:  # recorded, then killed before (or while) the provider answered
                batch_id = await self.client.control(functools.partial(self.api.find, entry.key))
                if batch_id is None:
                    self.journal.close(entry.key, ABANDONED)
                    continue
                self.journal.submitted(entry.key, batch_id, None)
                entry = replace(entry, batch_id=batch_id, state=SUBMITTED)
            for case_id in entry.case_ids:
                self.found[case_id] = entry
        if self.found:
            n = len({e.key for e in self.found.values()})
            self.notify(f"resuming {n} {self.api.provider} batch{'es' if n > 1 else ''} submitted before: polling, "
                        "not resending")

    # 2. new batches, chunked to the provider's limits ----------------------------------------
    async def submit_all(self, cases: Iterator[Case], admit: Callable[[Case], bool] | None,
                         keep: Callable[[Case], bool] | None) -> None:
        limits = self.api.limits
        chunk: list[Case] = []
        size = 0
        stopped = False
        while (case := await asyncio.to_thread(next, cases, None)) is not None:
            if keep is not None and not keep(case):
                continue  # another process took it over
            entry = self.found.get(case.case_id)
            if entry is not None:  # in a batch already: wait for it there
                self.hand[case.case_id] = case
                self.rounds[case.case_id] = entry.round
                self.live.setdefault(entry.key, entry)
                continue
            if stopped or (admit is not None and not admit(case)):
                stopped = True  # the spending cap: nothing more is sent
                continue
            n = self.api.request_bytes(f"r{len(chunk)}", request_for(case, self.cfg))
            if chunk and (len(chunk) >= limits.max_requests or size + n > limits.max_bytes):
                await self._submit(chunk, 1)
                chunk, size = [], 0
            if n > limits.max_bytes:
                await self._deliver(case, None, f"request of {n:,} bytes is over {self.api.provider}'s batch limit "
                                                f"of {limits.max_bytes:,}; run it without --batch", 0)
                continue
            chunk.append(case)
            size += n
        if chunk:
            await self._submit(chunk, 1)

    async def _submit(self, chunk: list[Case], round_: int) -> None:
        entry = BatchEntry(f"ctxprobe-{uuid.uuid4().hex[:20]}", self.api.provider,
                           tuple(c.case_id for c in chunk), round_)
        self.journal.record(entry)  # before the provider is asked: a kill in between is looked up by key
        requests = [(entry.custom_id(i), request_for(c, self.cfg)) for i, c in enumerate(chunk)]
        try:
            batch_id, status = await self.client.control(lambda: self.api.submit(requests, entry.key))
        except PermanentError as exc:
            self.journal.close(entry.key, ABANDONED)
            for case in chunk:
                await self._deliver(case, None, f"batch not created: {exc}", round_)
            return
        self.journal.submitted(entry.key, batch_id, status)
        self.live[entry.key] = replace(entry, batch_id=batch_id, state=SUBMITTED, provider_status=status)
        for case in chunk:
            self.hand[case.case_id] = case
            self.rounds[case.case_id] = round_
        self.sent += len(chunk)
        self.notify(f"submitted {self.api.provider} batch {batch_id}: {len(chunk)} requests ({status})")

    # 3. polling and results --------------------------------------------------------------
    async def wait(self, poll_s: float) -> None:
        while self.live or self.retry:
            for key, entry in list(self.live.items()):
                if not any(cid in self.hand for cid in entry.case_ids):
                    del self.live[key]  # none of its cases is this session's now
                    continue
                await self._poll(entry)
            if self.retry:
                await self._resend()
            if self.live:
                await self.sleep(poll_s)

    async def _poll(self, entry: BatchEntry) -> None:
        assert entry.batch_id is not None
        batch_id = entry.batch_id
        try:
            state = await self.client.control(lambda: self.api.poll(batch_id))
        except PermanentError as exc:  # gone at the provider (404...): its requests go out again
            self.journal.close(entry.key, ABANDONED)
            del self.live[entry.key]
            self.notify(f"batch {batch_id} could not be polled ({exc}); resending its requests")
            await self._settle(entry, [], f"batch {batch_id} lost: {exc}", retry=True)
            return
        if state.status != entry.provider_status:
            self.journal.status(entry.key, state.status)
            self.live[entry.key] = entry = replace(entry, provider_status=state.status)
            self.notify(f"batch {batch_id}: {state.status}" + (f" ({state.counts})" if state.counts else ""))
        if not state.ended:
            return
        try:
            items = await self.client.control(lambda: self.api.results(batch_id))
            why, retry = f"no result for it in batch {batch_id} ({state.status})", True
        except PermanentError as exc:
            items, why, retry = [], str(exc), False
        await self._settle(entry, items, why, retry=retry)
        self.journal.close(entry.key, COLLECTED)
        del self.live[entry.key]
        await self._cleanup(batch_id)

    async def _cleanup(self, batch_id: str) -> None:
        """The collected batch's leftovers at the provider (OpenAI: its files) deleted, best
        effort: its results are stored and its journal entry closed, so nothing reads them
        again; what could not be deleted is said in one line and the sweep goes on."""
        try:
            problems = await self.client.control(lambda: self.api.cleanup(batch_id))
        except Exception as exc:  # noqa: BLE001 - best effort: the results are stored already
            problems = [str(exc)]
        if problems:
            why = " ".join(scrub("; ".join(problems)).split())
            self.notify(f"batch {batch_id}: could not delete its files at {self.api.provider} (left there): {why}")

    async def _settle(self, entry: BatchEntry, items: list[ItemResult], why: str, *, retry: bool) -> None:
        """Each of the batch's cases in hand: its result to the sink, or into the next batch."""
        by_case = {cid: item for item in items if (cid := entry.case_for(item.custom_id)) is not None}
        answered = resend = failed = 0
        for i, case_id in enumerate(entry.case_ids):
            case = self.hand.get(case_id)
            if case is None:
                continue  # stored already (a result collected before a kill), or not ours
            item = by_case.get(case_id) or ItemResult(entry.custom_id(i), error=why, retry=retry)
            if item.result is not None:
                answered += 1
                await self._deliver(case, item.result, None, entry.round)
            elif item.retry and entry.round <= self.cfg.retries:
                resend += 1
                self.retry.append(case)
            else:
                failed += 1
                await self._deliver(case, None, item.error or why, entry.round)
        self.notify(f"batch {entry.batch_id}: {answered} answered, {resend} to resend, {failed} failed")

    async def _resend(self) -> None:
        """Failed requests worth another try go out as new batches (one round later)."""
        cases, self.retry = self.retry, []
        for round_ in sorted({self.rounds.get(c.case_id, 1) for c in cases}):
            group = [c for c in cases if self.rounds.get(c.case_id, 1) == round_]
            for case in group:
                self.hand.pop(case.case_id, None)
            for start in range(0, len(group), self.api.limits.max_requests):
                await self._submit_sized(group[start:start + self.api.limits.max_requests], round_ + 1)

    async def _submit_sized(self, cases: list[Case], round_: int) -> None:
        chunk: list[Case] = []
        size = 0
        for case in cases:
            n = self.api.request_bytes(f"r{len(chunk)}", request_for(case, self.cfg))
            if chunk and size + n > self.api.limits.max_bytes:
                await self._submit(chunk, round_)
                chunk, size = [], 0
            chunk.append(case)
            size += n
        if chunk:
            await self._submit(chunk, round_)

    async def _deliver(self, case: Case, result: GenerateResult | None, error: str | None, attempts: int) -> None:
        self.hand.pop(case.case_id, None)
        # a batch has no per-request latency: what it measures is the queue, so none is stored
        outcome = self.sink(Attempted(case, result, error, max(attempts, 1), 0.0))
        if asyncio.iscoroutine(outcome):
            await outcome

    # 4. Ctrl-C ----------------------------------------------------------------------------
    async def interrupted(self, confirm_cancel: Callable[[str], bool] | None) -> None:
        waiting = [e for e in self.live.values() if e.batch_id]
        if not waiting:
            return
        ids = ", ".join(str(e.batch_id) for e in waiting)
        what = f"{len(waiting)} {self.api.provider} batch{'es' if len(waiting) > 1 else ''} ({ids})"
        if confirm_cancel is None or not confirm_cancel(f"cancel {what} at the provider?"):
            self.notify(f"left {what} running; rerun the same command to collect the results "
                        "(nothing is sent twice)")
            return
        for entry in waiting:
            batch_id = str(entry.batch_id)
            try:
                await self.api.cancel(batch_id)
                state = await self.api.poll(batch_id)
                self.journal.status(entry.key, state.status)
            except Exception as exc:  # noqa: BLE001 - the user is leaving: say what failed, keep going
                self.notify(f"could not cancel batch {batch_id}: {exc}")
        self.notify(f"cancelled {what}; a rerun collects what they answered and resends the rest")
