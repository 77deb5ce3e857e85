"""A Gemini batch item's error is a ``google.rpc.Status`` (https://ai.google.dev/api/batch-mode,
``InlinedResponse.error``), its code a ``google.rpc.Code`` (googleapis
``google/rpc/code.proto``), not an HTTP status: 8 RESOURCE_EXHAUSTED, 13 INTERNAL,
14 UNAVAILABLE (and 4 DEADLINE_EXCEEDED, 10 ABORTED) are worth a new batch; 3
INVALID_ARGUMENT is not. Read through the real SDK's ``InlinedResponse`` type."""

from __future__ import annotations

import pytest

from ctxprobe.providers.gemini.batch import GeminiBatch, rpc_transient

genai_types = pytest.importorskip("google.genai.types")


@pytest.fixture
def batch(monkeypatch: pytest.MonkeyPatch) -> GeminiBatch:
    from ctxprobe.models import resolve_provider

    monkeypatch.setenv("GEMINI_API_KEY", "test-key-gemini-batch-errors")
    return GeminiBatch(resolve_provider("gemini:gemini-2.5-flash", None))  # type: ignore[arg-type]


@pytest.mark.parametrize(("code", "name", "retry"), [
    (8, "RESOURCE_EXHAUSTED", True), (13, "INTERNAL", True), (14, "UNAVAILABLE", True),
    (4, "DEADLINE_EXCEEDED", True), (10, "ABORTED", True), (3, "INVALID_ARGUMENT", False),
    (7, "PERMISSION_DENIED", False), (16, "UNAUTHENTICATED", False)])
def test_item_errors_are_read_as_rpc_codes(batch: GeminiBatch, code: int, name: str, retry: bool) -> None:
    item = genai_types.InlinedResponse.model_validate(
        {"metadata": {"key": "c1"}, "error": {"code": code, "message": f"{name}: failed"}})
    got = batch._item(0, item)
    # before: 8, 13 and 14 were read as HTTP statuses below 408, so never retried
    assert got.custom_id == "c1" and got.retry is retry and got.result is None
    assert got.error is not None and f"{name} ({code})" in got.error


def test_an_http_status_in_the_code_is_still_read_as_one() -> None:
    assert rpc_transient(503) and rpc_transient(429) and not rpc_transient(400) and not rpc_transient(None)
    assert rpc_transient(16) is False and rpc_transient(17) is False  # 17: neither an rpc code nor transient HTTP
