"""Terminal tables, PNG plots and JSON of analysis profiles.

matplotlib is only imported when a plot function is called (``ctxprobe[plot]`` extra).
"""

from __future__ import annotations

from ctxprobe.report.format import (
    effective_length_line,
    fmt_depth,
    fmt_tokens,
)
from ctxprobe.report.jsonreport import profile_to_dict, profiles_to_dict
from ctxprobe.report.plots import curve_png, heatmap_png
from ctxprobe.report.table import render_outcomes_table, render_profile_table

__all__ = [
    "curve_png",
    "effective_length_line",
    "fmt_depth",
    "fmt_tokens",
    "heatmap_png",
    "profile_to_dict",
    "profiles_to_dict",
    "render_outcomes_table",
    "render_profile_table",
]
