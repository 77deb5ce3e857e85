"""Read a GGUF file's metadata header in pure Python (no llama.cpp, no numpy).

Only the key/value section at the start of the file is read (it holds the trained
context, the architecture, the chat template); tensors are never touched. Format: magic
``GGUF``, version (2 or 3), tensor count, key/value count, then typed key/value pairs,
all little-endian.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any, BinaryIO

from ctxprobe.errors import CtxprobeError

# GGUF value types -> struct format (scalars); 8 = string, 9 = array
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
#: Arrays longer than this (vocabularies, merges) are skipped, not kept: only their length is known.
_KEEP_ARRAY = 64


def _read(f: BinaryIO, fmt: str) -> Any:
    size = struct.calcsize(fmt)
    data = f.read(size)
    if len(data) != size:
        raise ValueError("truncated GGUF header")
    return struct.unpack(fmt, data)[0]


def _string(f: BinaryIO) -> str:
    n = _read(f, "<Q")
    data = f.read(n)
    if len(data) != n:
        raise ValueError("truncated GGUF string")
    return data.decode("utf-8", errors="replace")


def _value(f: BinaryIO, vtype: int) -> Any:
    if vtype in _SCALARS:
        return _read(f, _SCALARS[vtype])
    if vtype == _STRING:
        return _string(f)
    if vtype == _ARRAY:
        itype, count = _read(f, "<I"), _read(f, "<Q")
        if itype in _SCALARS and count > _KEEP_ARRAY:  # fixed size: skip without reading
            f.seek(count * struct.calcsize(_SCALARS[itype]), 1)
            return None
        items = [_value(f, itype) for _ in range(count)]
        return items if count <= _KEEP_ARRAY else None
    raise ValueError(f"unknown GGUF value type {vtype}")


def read_gguf_metadata(path: str | Path) -> dict[str, Any]:
    """The GGUF's key/value metadata (long arrays such as the vocabulary come back as None)."""
    path = Path(path).expanduser()
    try:
        with path.open("rb") as f:
            if f.read(4) != b"GGUF":
                raise CtxprobeError(f"{path} is not a GGUF file (no GGUF magic)")
            version = _read(f, "<I")
            if version < 2:
                raise CtxprobeError(f"{path}: GGUF version {version} is too old (2 or later is read)")
            _read(f, "<Q")  # tensor count
            n_kv = _read(f, "<Q")
            out: dict[str, Any] = {}
            for _ in range(n_kv):
                key = _string(f)
                out[key] = _value(f, _read(f, "<I"))
            return out
    except OSError as err:
        raise CtxprobeError(f"cannot read {path}: {err.strerror or err}") from None
    except (ValueError, struct.error) as err:
        raise CtxprobeError(f"cannot read the GGUF header of {path}: {err}") from None


def gguf_trained_context(path: str | Path) -> int | None:
    """The context length the model was trained with (``<arch>.context_length``)."""
    meta = read_gguf_metadata(path)
    value = meta.get(f"{meta.get('general.architecture', '')}.context_length")
    return int(value) if isinstance(value, int) and value > 0 else None


#: Markers a chat template of a thinking model mentions (Qwen3, DeepSeek-R1, GLM…).
THINKING_MARKERS = ("<think>", "enable_thinking", "reasoning_content")


def gguf_can_reason(path: str | Path) -> bool:
    """Whether the GGUF's chat template is a thinking model's (it mentions ``<think>``,
    ``enable_thinking`` or ``reasoning_content``): SmolLM2's does not."""
    template = read_gguf_metadata(path).get("tokenizer.chat_template")
    return isinstance(template, str) and any(m in template for m in THINKING_MARKERS)
