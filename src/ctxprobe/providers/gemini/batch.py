"""Gemini batch mode: ``batches.create`` with inlined requests (``models/M:batchGenerateContent``),
the job polled (``batches/NAME``) until its state ends, results read from its inlined
responses. A failed item's ``error`` is a ``google.rpc.Status``: its code a
``google.rpc.Code`` (8 RESOURCE_EXHAUSTED, 14 UNAVAILABLE… are retried in a new batch).

Each inlined request is the live request's ``contents`` and config
(:meth:`GeminiProvider.request_config`) with ``metadata.key`` = the custom id, which its
response carries back (responses are also in request order). A job is named
``display_name`` = our tag, so one created just before a kill is found again. Inlined
requests are limited to 20 MB a job: larger grids go out as several jobs.
"""

from __future__ import annotations

from typing import Any

from ctxprobe.models._sdk import one_line
from ctxprobe.models.base import GenerateRequest, PermanentError
from ctxprobe.models.batch_base import BatchLimits, BatchState, ItemResult, json_bytes, transient
from ctxprobe.providers.gemini.api import GeminiProvider, parse_response

#: Inlined requests: 20 MB a job (MB: 10^6 bytes; 19 MB, some room kept for the envelope).
LIMITS = BatchLimits(max_requests=50_000, max_bytes=19 * 10**6)
ENDED = {"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED", "JOB_STATE_EXPIRED"}

#: ``google.rpc.Code`` (googleapis ``google/rpc/code.proto``): an inlined response's
#: ``error`` is a ``google.rpc.Status``, so its code is one of these, not an HTTP status.
RPC_CODES: dict[int, str] = {
    1: "CANCELLED", 2: "UNKNOWN", 3: "INVALID_ARGUMENT", 4: "DEADLINE_EXCEEDED", 5: "NOT_FOUND",
    6: "ALREADY_EXISTS", 7: "PERMISSION_DENIED", 8: "RESOURCE_EXHAUSTED", 9: "FAILED_PRECONDITION",
    10: "ABORTED", 11: "OUT_OF_RANGE", 12: "UNIMPLEMENTED", 13: "INTERNAL", 14: "UNAVAILABLE",
    15: "DATA_LOSS", 16: "UNAUTHENTICATED",
}
#: Worth a new batch, per code.proto's own advice: retry on UNAVAILABLE, RESOURCE_EXHAUSTED
#: and ABORTED; DEADLINE_EXCEEDED and INTERNAL are the server's failures, not the request's.
RPC_TRANSIENT = frozenset({4, 8, 10, 13, 14})


def rpc_transient(code: int | None) -> bool:
    """A failed item worth a new batch: a transient ``google.rpc.Code``. A code above 16
    can only be an HTTP status (some gateways put one there): read as such."""
    if code is None:
        return False
    return code in RPC_TRANSIENT if code <= 16 else transient(None, code)


def _state(job: Any) -> str:
    state = job.state
    return str(getattr(state, "value", state) or "JOB_STATE_UNSPECIFIED")


class GeminiBatch:
    provider = "gemini"
    limits = LIMITS

    def __init__(self, provider: GeminiProvider) -> None:
        self.p = provider

    def _inlined(self, custom_id: str, request: GenerateRequest) -> Any:
        contents, config = self.p.request_config(request)
        return self.p._types.InlinedRequest(contents=contents, config=config, metadata={"key": custom_id})

    def request_bytes(self, custom_id: str, request: GenerateRequest) -> int:
        return json_bytes(self._inlined(custom_id, request).model_dump(mode="json", exclude_none=True))

    async def submit(self, requests: list[tuple[str, GenerateRequest]], tag: str) -> tuple[str, str]:
        client = self.p._client_for_loop()
        src = [self._inlined(cid, r) for cid, r in requests]
        job = await self.p._call(lambda: client.aio.batches.create(
            model=self.p.model, src=src, config={"display_name": tag}))
        return str(job.name), _state(job)

    async def find(self, tag: str) -> str | None:
        client = self.p._client_for_loop()
        pager = await self.p._call(lambda: client.aio.batches.list(config={"page_size": 100}))
        for job in pager.page:
            if job.display_name == tag:
                return str(job.name)
        return None

    async def poll(self, batch_id: str) -> BatchState:
        client = self.p._client_for_loop()
        job = await self.p._call(lambda: client.aio.batches.get(name=batch_id))
        state = _state(job)
        return BatchState(state, state in ENDED)

    async def results(self, batch_id: str) -> list[ItemResult]:
        client = self.p._client_for_loop()
        job = await self.p._call(lambda: client.aio.batches.get(name=batch_id))
        responses = (job.dest.inlined_responses if job.dest is not None else None) or []
        if not responses and _state(job) == "JOB_STATE_FAILED":
            raise PermanentError(f"batch {batch_id} failed at {self.p._where}")
        return [self._item(i, r) for i, r in enumerate(responses)]

    def _item(self, i: int, item: Any) -> ItemResult:
        cid = (item.metadata or {}).get("key") or f"r{i}"
        if item.error is not None:
            code = item.error.code if isinstance(item.error.code, int) else None
            message = one_line(str(item.error.message or ""), (self.p._api_key,))
            name = RPC_CODES.get(code, "error") if code is not None else "error"
            return ItemResult(cid, error=f"batch item {name} ({code}) at {self.p._where}: {message}",
                              retry=rpc_transient(code))
        if item.response is None:
            return ItemResult(cid, error=f"batch item without a response at {self.p._where}", retry=True)
        try:
            return ItemResult(cid, result=parse_response(item.response.model_dump(mode="json", exclude_none=True)))
        except PermanentError as exc:
            return ItemResult(cid, error=str(exc))

    async def cancel(self, batch_id: str) -> None:
        client = self.p._client_for_loop()
        await self.p._call(lambda: client.aio.batches.cancel(name=batch_id))

    async def cleanup(self, batch_id: str) -> list[str]:
        """Nothing was uploaded: the requests and responses are inlined in the job."""
        return []
