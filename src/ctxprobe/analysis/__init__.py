"""Grid statistics, Wilson intervals and effective context length.

Works on plain :class:`ResultRow` values (``core.rows``); never imports models, runner or
store.
"""

from __future__ import annotations

from ctxprobe.analysis.grid import (
    DEFAULT_THRESHOLD,
    CellStat,
    LengthStat,
    Profile,
    cell_stats,
    clears,
    effective_length,
    is_harness_failure,
    length_stats,
    profile,
)
from ctxprobe.core.rows import ResultRow
from ctxprobe.analysis.stats import wilson_interval

__all__ = [
    "DEFAULT_THRESHOLD",
    "CellStat",
    "LengthStat",
    "Profile",
    "ResultRow",
    "cell_stats",
    "clears",
    "effective_length",
    "is_harness_failure",
    "length_stats",
    "profile",
    "wilson_interval",
]
