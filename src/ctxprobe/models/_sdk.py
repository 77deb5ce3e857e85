"""Shared plumbing of the SDK-backed providers: lazy imports, API keys, redaction.

Keys are read from the usual environment variables at construction, kept in one private
attribute, and scrubbed from every message we build: providers' own error bodies sometimes
echo a key (or a masked form of it), and exception text reaches the store and the report.
"""

from __future__ import annotations

import email.utils
import importlib
import os
import time
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from ctxprobe.errors import CtxprobeError, MissingExtraError
from ctxprobe.redaction import register_secret, scrub

_MAX_REASON = 240


def import_sdk(module: str, package: str, extra: str, purpose: str) -> ModuleType:
    """Import an optional SDK, or raise :class:`MissingExtraError` naming the extra."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtraError(package, extra, purpose) from None


def api_key_from_env(variables: tuple[str, ...], model: str) -> str:
    """The first non-empty variable's value, or a one-line error naming the variable(s)."""
    for var in variables:
        value = os.environ.get(var, "").strip()
        if value:
            register_secret(value)
            return value
    names = " or ".join(variables)
    raise CtxprobeError(f"{model} needs an API key: set {names} in the environment")


def redact(text: str, secrets: tuple[str | None, ...]) -> str:
    """``text`` with every secret, fragment or masked form of one, and anything key-shaped
    replaced by ``***`` (:func:`ctxprobe.redaction.scrub`, the one rule for every provider)."""
    return scrub(text, secrets)


def one_line(text: str, secrets: tuple[str | None, ...]) -> str:
    """Redacted, whitespace-collapsed, bounded: fit for a stored error column."""
    text = " ".join(redact(str(text), secrets).split())
    return text if len(text) <= _MAX_REASON else text[: _MAX_REASON - 1] + "…"


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms``, or ``Retry-After`` (seconds or HTTP-date)."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = (headers.get("retry-after") or "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def retry_after_from(headers: Mapping[str, str] | None) -> float | None:
    """Seconds from ``retry-after-ms`` or ``Retry-After`` (seconds or HTTP-date), from any
    headers object with ``get`` (the SDKs' own response headers)."""
    if headers is None or getattr(headers, "get", None) is None:
        return None
    return parse_retry_after(headers)


#: Exception class names (anywhere in the MRO) that mean the network failed, across
#: httpx, httpx2, aiohttp and requests: retrying may help.
_TRANSPORT_NAMES = frozenset({
    "TransportError", "TimeoutException", "NetworkError", "ConnectError", "ReadError",
    "RemoteProtocolError", "ClientConnectorError", "ServerDisconnectedError",
    "ClientOSError", "ConnectionError", "TimeoutError",
})


def is_transport_error(exc: BaseException) -> bool:
    return any(cls.__name__ in _TRANSPORT_NAMES for cls in type(exc).__mro__)


def status_is_transient(status: int | None) -> bool:
    """429 and 408 (rate limit, request timeout), 409 (lock contention), and 5xx."""
    return status is not None and (status in (408, 409, 429) or status >= 500)


def classify_stainless_error(exc: BaseException, sdk: ModuleType, where: str,
                             secrets: tuple[str | None, ...]) -> Exception | None:
    """Map an ``openai``/``anthropic`` SDK exception (both Stainless-generated, same shape)
    to TransientError/PermanentError; ``None`` if it is not one of the SDK's errors."""
    from ctxprobe.models.base import PermanentError, TransientError

    if isinstance(exc, sdk.APITimeoutError):
        return TransientError(f"timeout talking to {where}")
    if isinstance(exc, sdk.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        detail = one_line(str(cause), secrets) if cause else type(exc).__name__
        return TransientError(f"connection error talking to {where}: {detail}")
    if isinstance(exc, sdk.APIStatusError):
        status = int(exc.status_code)
        reason = f"HTTP {status} from {where}: {one_line(_status_message(exc), secrets)}"
        if status_is_transient(status):
            return TransientError(reason, retry_after=retry_after_from(exc.response.headers))
        return PermanentError(reason)
    if isinstance(exc, sdk.APIError):  # e.g. a response that failed validation
        return PermanentError(f"bad response from {where}: {one_line(str(exc), secrets)}")
    return None


def _status_message(exc: Any) -> str:
    """The server's ``error.message`` when the body has one, else the SDK's text."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return err["message"]
    return str(getattr(exc, "message", "") or exc)


async def stainless_call(provider: Any, make: Any) -> Any:
    """Await ``make()`` (an OpenAI or Anthropic SDK call of ``provider``'s client), its
    errors mapped as the live requests map them, the key scrubbed (batch control calls)."""
    try:
        return await make()
    except Exception as exc:
        mapped = classify_stainless_error(exc, provider._sdk, provider._where, (provider._api_key,))
        if mapped is None:
            raise
        raise mapped from None
