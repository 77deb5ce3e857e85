"""Anthropic Message Batches: ``messages.batches.create`` with one ``{custom_id, params}``
per request (params: what a live ``messages.create`` gets), polled until
``processing_status`` is ``ended``, results read as JSONL from ``results_url``.

Result types: ``succeeded`` (a message, parsed as a live one), ``errored`` (an error
response; transient types are retried in a new batch), ``canceled`` and ``expired``
(retried). A batch carries no tag of ours, so one created just before a kill cannot be
found again (:meth:`AnthropicBatch.find` says None and its requests are sent anew).
"""

from __future__ import annotations

from typing import Any

from ctxprobe.models._sdk import classify_stainless_error, one_line, stainless_call
from ctxprobe.providers.anthropic.api import AnthropicProvider, parse_message
from ctxprobe.models.base import GenerateRequest, PermanentError
from ctxprobe.models.batch_base import BatchLimits, BatchState, ItemResult, json_bytes, transient

#: 100,000 requests or 256 MB per batch (MB: 10^6 bytes, as the batch-processing page writes it).
LIMITS = BatchLimits(max_requests=100_000, max_bytes=256 * 10**6)


class AnthropicBatch:
    provider = "anthropic"
    limits = LIMITS

    def __init__(self, provider: AnthropicProvider) -> None:
        self.p = provider

    def _request(self, custom_id: str, request: GenerateRequest) -> dict[str, Any]:
        return {"custom_id": custom_id, "params": self.p.request_body(request)}

    def request_bytes(self, custom_id: str, request: GenerateRequest) -> int:
        return json_bytes(self._request(custom_id, request))

    async def _call(self, make: Any) -> Any:
        return await stainless_call(self.p, make)

    async def submit(self, requests: list[tuple[str, GenerateRequest]], tag: str) -> tuple[str, str]:
        client = self.p._client_for_loop()
        body = [self._request(cid, r) for cid, r in requests]
        batch = await self._call(lambda: client.messages.batches.create(requests=body))
        return str(batch.id), str(batch.processing_status)

    async def find(self, tag: str) -> str | None:
        return None

    async def poll(self, batch_id: str) -> BatchState:
        client = self.p._client_for_loop()
        batch = await self._call(lambda: client.messages.batches.retrieve(batch_id))
        c = batch.request_counts
        total = c.processing + c.succeeded + c.errored + c.canceled + c.expired
        return BatchState(str(batch.processing_status), batch.processing_status == "ended",
                          f"{total - c.processing}/{total} done")

    async def results(self, batch_id: str) -> list[ItemResult]:
        client = self.p._client_for_loop()
        stream = await self._call(lambda: client.messages.batches.results(batch_id))
        out: list[ItemResult] = []
        try:
            async for line in stream:
                out.append(self._item(line.model_dump(mode="json")))
        except Exception as exc:
            mapped = classify_stainless_error(exc, self.p._sdk, self.p._where, (self.p._api_key,))
            if mapped is None:
                raise
            raise mapped from None
        return out

    def _item(self, line: dict[str, Any]) -> ItemResult:
        cid = str(line.get("custom_id"))
        result = line.get("result") or {}
        kind = result.get("type")
        if kind == "succeeded":
            try:
                return ItemResult(cid, result=parse_message(result.get("message") or {}))
            except PermanentError as exc:
                return ItemResult(cid, error=str(exc))
        if kind == "errored":
            err = (result.get("error") or {}).get("error") or {}
            etype = str(err.get("type") or "error")
            message = one_line(str(err.get("message") or ""), (self.p._api_key,))
            return ItemResult(cid, error=f"batch item {etype} at {self.p._where}: {message}", retry=transient(etype))
        return ItemResult(cid, error=f"batch item {kind} at {self.p._where}", retry=True)  # canceled, expired

    async def cancel(self, batch_id: str) -> None:
        client = self.p._client_for_loop()
        await self._call(lambda: client.messages.batches.cancel(batch_id))

    async def cleanup(self, batch_id: str) -> list[str]:
        """Nothing was uploaded; the results expire at Anthropic on their own (29 days)."""
        return []
