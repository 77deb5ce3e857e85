"""Noise-floor (no-context baseline) labels, shared by the spec, the builder and the report.

With ``baseline: no-context`` a sweep runs, beside every case of a family label ``L``, a
paired case under the label ``L@no-context``: the same question, the same length, filler
only (the family's evidence removed). Those cases are stored under their own label, so
they are never pooled into ``L``'s accuracy; the report reads them as ``L``'s floor.

A family says how its floor is made (``FamilyBase.baseline``): ``"no-context"`` (it builds
the evidence-free twin), ``"random-instance"`` (nothing is sent: the floor is computed
from each case, MRCR's "return a random instance of the asked key"), or None (no floor).
"""

from __future__ import annotations

from typing import Literal

#: What ``--baseline`` accepts.
BaselineMode = Literal["no-context"]
BASELINE_MODES: tuple[str, ...] = ("no-context",)
#: How a family makes its floor (``FamilyBase.baseline``).
FloorKind = Literal["no-context", "random-instance"]

SUFFIX = "@no-context"
#: The key a twin label's parameters carry (popped before the family validates them).
PARAM = "baseline"


def baseline_label(label: str) -> str:
    """``niah`` → ``niah@no-context``."""
    return label + SUFFIX


def is_baseline(label: str) -> bool:
    return label.endswith(SUFFIX)


def main_label(label: str) -> str:
    """``niah@no-context`` → ``niah``; any other label unchanged."""
    return label[: -len(SUFFIX)] if is_baseline(label) else label
