"""What an OpenAI-compatible server says about the window it serves, read from its JSON.

- ``GET {base}/models`` (every server): vLLM's and SGLang's ``max_model_len``,
  OpenRouter-style ``context_length``/``context_window``; llama.cpp's ``meta`` carries the
  model's *trained* window, ``n_ctx_train`` (upstream ``llama-server``'s ``model_meta()``
  has nothing else), and some builds also ``n_ctx``.
- ``GET /props`` (llama.cpp): ``default_generation_settings.n_ctx`` is the window one
  request gets: the server's ``-c`` shared among its ``-np`` slots
  (``tools/server/server-context.cpp``, ``get_props``: ``{"n_ctx", slot_n_ctx}``), and
  ``total_slots``.
- ``GET /slots`` (llama.cpp): one object per slot, each with its ``id`` and ``n_ctx``.

The served window is never taken from ``n_ctx_train``: a server started with ``-c`` below
the trained window refuses longer prompts, and one started above it serves positions the
model was never trained on (named at preflight).
"""

from __future__ import annotations

from typing import Any

_SCALING_KEYS = ("rope_scaling", "rope_scaling_type", "rope_freq_scale", "rope_theta", "yarn", "position_scaling")


def int_or_none(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _positive(value: object) -> int | None:
    n = int_or_none(value)
    return n if n is not None and n > 0 else None


def models_entry(data: object, model: str) -> dict[str, Any] | None:
    """The ``/models`` entry of ``model`` (else the first one), if the list has any."""
    entries = data.get("data") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return None
    found = [e for e in entries if isinstance(e, dict)]
    mine = [e for e in found if e.get("id") == model] or found[:1]
    return mine[0] if mine else None


def entry_window(entry: dict[str, Any]) -> int | None:
    """The served window a ``/models`` entry states (never its trained one)."""
    meta = m if isinstance(m := entry.get("meta"), dict) else {}
    for value in (entry.get("max_model_len"), entry.get("context_length"), entry.get("context_window"),
                  meta.get("n_ctx")):
        if (window := _positive(value)) is not None:
            return window
    return None


def entry_trained(entry: dict[str, Any]) -> int | None:
    """llama.cpp's ``meta.n_ctx_train``: the window the model was trained for."""
    meta = entry.get("meta")
    return _positive(meta.get("n_ctx_train")) if isinstance(meta, dict) else None


def props_window(data: object) -> int | None:
    """llama.cpp ``/props``: ``default_generation_settings.n_ctx``, one slot's window."""
    settings = data.get("default_generation_settings") if isinstance(data, dict) else None
    return _positive(settings.get("n_ctx")) if isinstance(settings, dict) else None


def slots_window(data: object) -> int | None:
    """llama.cpp ``/slots``: the smallest slot's ``n_ctx`` (any request may land on it)."""
    if not isinstance(data, list):
        return None
    windows = [w for s in data if isinstance(s, dict) and (w := _positive(s.get("n_ctx"))) is not None]
    return min(windows) if windows else None


def total_slots(data: object) -> int | None:
    return _positive(data.get("total_slots")) if isinstance(data, dict) else None


def slot_count(data: object) -> int | None:
    return len(data) if isinstance(data, list) and data and all(isinstance(s, dict) and "id" in s for s in data) else None


def position_scaling(entry: dict[str, Any]) -> dict[str, Any] | None:
    """RoPE/YaRN settings a ``/v1/models`` entry reports (top level or under ``meta``), if any."""
    found: dict[str, Any] = {}
    meta = entry.get("meta")
    nested: dict[str, Any] = meta if isinstance(meta, dict) else {}
    for where in (entry, nested):
        for key, value in where.items():
            if any(key.startswith(k) for k in _SCALING_KEYS) and value not in (None, "", {}, "none"):
                found[key] = value
    return found or None
