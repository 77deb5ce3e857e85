"""The one loader of ``"module:attr"`` paths: how the registry, a family's declaration, a
provider's profile and its batch API name an object without importing it until it is used.

``attr`` may be dotted (``module:Class.member``). A path that does not load is a one-line
:class:`CtxprobeError` that says what was being loaded (``what``) and why.
"""

from __future__ import annotations

import importlib
from typing import Any

from ctxprobe.errors import CtxprobeError


def load_path(path: str, *, what: str) -> Any:
    """The object ``path`` (``"module:attr"``) names, importing its module; ``what`` opens
    the error line (``"family 'echo': its sim skill"``)."""
    module, sep, attr = path.partition(":")
    try:
        if not sep or not module or not attr:
            raise ImportError("not a 'module:attr' path")
        obj: Any = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise CtxprobeError(f"{what} cannot be loaded from {path}: {exc}") from None
    return obj


def resolve(target: object, *, what: str) -> Any:
    """``target`` itself, or the object it names when it is a ``"module:attr"`` string."""
    return load_path(target, what=what) if isinstance(target, str) else target
