"""OpenAI Batch: a JSONL file uploaded with purpose ``batch``, one batch over
``/v1/responses`` (the models sent through the Responses API) or ``/v1/chat/completions``
with a 24 h window, its results and errors read back as files.

Each input line is ``{"custom_id", "method": "POST", "url": ENDPOINT, "body"}`` with the
body a live request sends (:meth:`OpenAIProvider.request_body`). Output lines carry
``response.body`` (a Response or a chat completion, parsed as a live one) or, in the error
file, ``error`` (``batch_expired``, ``batch_cancelled``…) or a non-200 ``response``.
The batch is tagged with ``metadata.ctxprobe_key`` so a batch created just before a kill
is found again (:meth:`OpenAIBatch.find`). Once its results are stored, the batch's input,
output and error files are deleted at the provider (:meth:`OpenAIBatch.cleanup`), so
prompts and answers do not stay in the account's file storage.
"""

from __future__ import annotations

import json
from typing import Any

from ctxprobe.models._sdk import one_line, stainless_call
from ctxprobe.models.base import GenerateRequest, PermanentError
from ctxprobe.models.batch_base import BatchLimits, BatchState, ItemResult, json_bytes, transient
from ctxprobe.providers.openai.api import OpenAIProvider, parse_chat_completion
from ctxprobe.providers.openai.responses import ENDPOINT as RESPONSES, parse_response

ENDPOINT = "/v1/chat/completions"
#: 50,000 requests and a 200 MB input file per batch (MB: 10^6 bytes, as the Batch guide writes it).
LIMITS = BatchLimits(max_requests=50_000, max_bytes=200 * 10**6)
ENDED = {"completed", "failed", "expired", "cancelled"}
TAG = "ctxprobe_key"


class OpenAIBatch:
    provider = "openai"
    limits = LIMITS

    def __init__(self, provider: OpenAIProvider) -> None:
        self.p = provider
        self._files: dict[str, tuple[str, ...]] = {}  # batch id -> its file ids, as results() read them

    @property
    def endpoint(self) -> str:
        """``/v1/responses`` for a model sent through the Responses API, else chat completions."""
        return RESPONSES if self.p.responses else ENDPOINT

    def _line(self, custom_id: str, request: GenerateRequest) -> dict[str, Any]:
        return {"custom_id": custom_id, "method": "POST", "url": self.endpoint, "body": self.p.request_body(request)}

    def request_bytes(self, custom_id: str, request: GenerateRequest) -> int:
        return json_bytes(self._line(custom_id, request))

    async def _call(self, make: Any) -> Any:
        return await stainless_call(self.p, make)

    async def submit(self, requests: list[tuple[str, GenerateRequest]], tag: str) -> tuple[str, str]:
        client = self.p._client_for_loop()
        # written as sized (json_bytes: compact separators), so a chunk stays within the cap
        data = "".join(json.dumps(self._line(cid, r), ensure_ascii=False, separators=(",", ":")) + "\n"
                       for cid, r in requests)
        upload = await self._call(lambda: client.files.create(
            file=(f"ctxprobe-{tag}.jsonl", data.encode("utf-8"), "application/jsonl"), purpose="batch"))
        batch = await self._call(lambda: client.batches.create(
            input_file_id=upload.id, endpoint=self.endpoint, completion_window="24h", metadata={TAG: tag}))
        return str(batch.id), str(batch.status)

    async def find(self, tag: str) -> str | None:
        client = self.p._client_for_loop()
        page = await self._call(lambda: client.batches.list(limit=100))
        for batch in page.data:
            if (batch.metadata or {}).get(TAG) == tag:
                return str(batch.id)
        return None

    async def poll(self, batch_id: str) -> BatchState:
        client = self.p._client_for_loop()
        batch = await self._call(lambda: client.batches.retrieve(batch_id))
        counts = batch.request_counts
        done = f"{counts.completed + counts.failed}/{counts.total} done" if counts else ""
        return BatchState(str(batch.status), batch.status in ENDED, done)

    async def results(self, batch_id: str) -> list[ItemResult]:
        client = self.p._client_for_loop()
        batch = await self._call(lambda: client.batches.retrieve(batch_id))
        self._files[batch_id] = _file_ids(batch)
        out: list[ItemResult] = []
        for file_id in (batch.output_file_id, batch.error_file_id):
            if not file_id:
                continue
            content = await self._call(lambda fid=file_id: client.files.content(fid))
            for line in content.text.splitlines():
                if line.strip():
                    out.append(self._item(json.loads(line)))
        if not out and batch.status == "failed":  # rejected as a whole (validation): no file at all
            errors = batch.errors.data if batch.errors and batch.errors.data else []
            why = "; ".join(f"{e.code}: {e.message}" for e in errors[:3]) or "failed"
            raise PermanentError(f"batch {batch_id} failed at {self.p._where}: {one_line(why, (self.p._api_key,))}")
        return out

    def _item(self, line: dict[str, Any]) -> ItemResult:
        cid = str(line.get("custom_id"))
        secrets = (self.p._api_key,)
        response = line.get("response") if isinstance(line.get("response"), dict) else None
        error = line.get("error") if isinstance(line.get("error"), dict) else None
        status = response.get("status_code") if response else None
        if response and status == 200 and not error:
            try:
                parse = parse_response if self.p.responses else parse_chat_completion
                return ItemResult(cid, result=parse(response.get("body") or {}))
            except PermanentError as exc:
                return ItemResult(cid, error=str(exc))
        if error is None and response:
            body = response.get("body") or {}
            error = body.get("error") if isinstance(body, dict) and isinstance(body.get("error"), dict) else {}
        code = str((error or {}).get("code") or (error or {}).get("type") or "")
        message = one_line(str((error or {}).get("message") or "no response"), secrets)
        where = f"HTTP {status} " if status else ""
        return ItemResult(cid, error=f"{where}batch item {code or 'error'} at {self.p._where}: {message}",
                          retry=transient(code, status if isinstance(status, int) else None))

    async def cancel(self, batch_id: str) -> None:
        client = self.p._client_for_loop()
        await self._call(lambda: client.batches.cancel(batch_id))

    async def cleanup(self, batch_id: str) -> list[str]:
        """Delete the collected batch's input, output and error files; a one-line reason
        (key scrubbed) for the files left behind, each tried regardless of the others."""
        client = self.p._client_for_loop()
        files = self._files.pop(batch_id, None)
        if files is None:  # results() was not read in this process: ask for the batch's files
            batch = await self._call(lambda: client.batches.retrieve(batch_id))
            files = _file_ids(batch)
        left: dict[str, list[str]] = {}  # reason -> the files it kept there
        for file_id in files:
            try:
                gone = await self._call(lambda fid=file_id: client.files.delete(fid))
            except Exception as exc:  # noqa: BLE001 - best effort: say which file stayed, delete the rest
                left.setdefault(one_line(str(exc), (self.p._api_key,)), []).append(file_id)
                continue
            if getattr(gone, "deleted", True) is False:
                left.setdefault("the provider did not delete it", []).append(file_id)
        return [f"{', '.join(ids)}: {why}" for why, ids in left.items()]


def _file_ids(batch: Any) -> tuple[str, ...]:
    """The batch's input, output and error file ids (those it has)."""
    return tuple(str(f) for f in (batch.input_file_id, batch.output_file_id, batch.error_file_id) if f)
