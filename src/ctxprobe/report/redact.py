"""Keep secrets out of anything we show or export.

A model spec can carry a serving URL (``openai-compat:qwen@https://user:pw@host/v1?key=…``).
Reports are shared with people who never ran the tool, so credentials embedded in such a
URL (userinfo, and query parameters that look like tokens) are removed before any string
reaches a report, a plot title or an export file.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ctxprobe.redaction import scrub

_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>]+")
#: Query keys whose values are credentials on common providers and proxies.
_SECRET_KEY = re.compile(r"key|token|secret|sig|pass|auth|cred|session|code", re.IGNORECASE)
#: Field names that are credentials themselves; ``max_tokens`` or ``token_count`` are not.
_SECRET_FIELD = re.compile(
    r"(^|_)(api_?key|secret|password|passwd|authorization|bearer|token)$", re.IGNORECASE)
REDACTED = "REDACTED"


def redact_url(url: str) -> str:
    """The URL without userinfo and with secret-looking query values replaced."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return REDACTED  # unparsable: showing it could leak whatever it holds
    netloc = host + (f":{port}" if port is not None else "")
    if ":" in host:  # IPv6 literal
        netloc = f"[{host}]" + (f":{port}" if port is not None else "")
    query = urlencode([(k, REDACTED if _SECRET_KEY.search(k) else v)
                       for k, v in parse_qsl(parts.query, keep_blank_values=True)], safe="")
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def redact(text: str) -> str:
    """Every URL inside ``text`` redacted, and every known API key (whole, fragment or
    masked: :func:`ctxprobe.redaction.scrub`) removed; the rest untouched."""
    return scrub(_URL.sub(lambda m: redact_url(m.group(0)), text))


def redact_obj(value: Any) -> Any:
    """``redact`` applied to every string inside nested dicts and lists (a spec, run meta)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: (REDACTED if isinstance(k, str) and _is_secret_field(k) else redact_obj(v))
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_obj(v) for v in value]
    return value


def _is_secret_field(name: str) -> bool:
    """Spec/meta keys that hold credentials outright (``api_key``, ``auth_token``)."""
    return _SECRET_FIELD.search(name) is not None


def endpoint_of(model: str) -> str | None:
    """The serving endpoint named in a model spec (``NAME@URL``), redacted; None if in process."""
    match = _URL.search(model)
    return redact_url(match.group(0)) if match else None
