"""Provider batch APIs behind one small protocol (``ctxprobe run --batch``).

A :class:`BatchAPI` submits many requests as one provider batch, polls it, reads its
results back as :class:`ItemResult` (a ``GenerateResult`` or an error, per custom id),
cancels it, and deletes what it left at the provider once its results are stored. Scheduling, chunking to the limits, the journal and retries are the runner's
(:mod:`ctxprobe.runner.batch`). Each API is built from the provider a sweep already uses
(:func:`ctxprobe.models.batch.batch_api_for`), so a batch request's body is exactly what a live request sends.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

from ctxprobe.models.base import GenerateRequest, GenerateResult


@dataclass(frozen=True)
class BatchLimits:
    """What one provider batch may hold: requests, and bytes of its requests' JSON."""

    max_requests: int
    max_bytes: int


@dataclass(frozen=True)
class BatchState:
    """A batch as last polled: the provider's own word for its status, and whether it has ended
    (results, if any, can be read)."""

    status: str
    ended: bool
    counts: str = ""  # "3/10 done" when the provider says


@dataclass(frozen=True)
class ItemResult:
    """One request's outcome in an ended batch."""

    custom_id: str
    result: GenerateResult | None = None
    error: str | None = None
    #: Worth submitting again in a new batch (expired, canceled, a transient error).
    retry: bool = False


class BatchAPI(Protocol):
    #: "openai" | "anthropic" | "gemini": recorded with each batch.
    provider: str
    limits: BatchLimits

    def request_bytes(self, custom_id: str, request: GenerateRequest) -> int:
        """Bytes this request adds to a batch (what the limits count)."""
        ...

    async def submit(self, requests: list[tuple[str, GenerateRequest]], tag: str) -> tuple[str, str]:
        """Create one batch of (custom id, request); return (batch id, its status)."""
        ...

    async def find(self, tag: str) -> str | None:
        """The id of a batch created with ``tag`` (None: none, or the API cannot tell)."""
        ...

    async def poll(self, batch_id: str) -> BatchState: ...

    async def results(self, batch_id: str) -> list[ItemResult]:
        """Every result the ended batch has (requests it has none for are the caller's)."""
        ...

    async def cancel(self, batch_id: str) -> None: ...

    async def cleanup(self, batch_id: str) -> list[str]:
        """Delete what the batch left at the provider once its results are stored (OpenAI:
        the uploaded input file and the output and error files), best effort: a one-line
        reason, free of secrets, for each thing left there; [] when all went or nothing is kept."""
        ...


def json_bytes(obj: Any) -> int:
    return len(json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")) + 1


#: Stop words of a failed request that say sending it again may work.
TRANSIENT_WORDS = ("rate_limit", "overloaded", "api_error", "timeout", "unavailable", "internal", "server_error",
                   "resource_exhausted", "expired", "cancel")


def transient(kind: str | None, status: int | None = None) -> bool:
    """A failed batch item worth a new batch: 408/429/5xx, or an error type that says so."""
    if status is not None and (status in (408, 409, 429) or status >= 500):
        return True
    word = (kind or "").lower()
    return any(w in word for w in TRANSIENT_WORDS)
