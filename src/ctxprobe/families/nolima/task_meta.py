"""The keys of a NoLiMa case's ``meta`` (a plain dict at runtime, checked by the type
checker; see :mod:`ctxprobe.core.case_meta`)."""

from __future__ import annotations

from typing import Literal

from ctxprobe.core.case_meta import _Filler


class NolimaMeta(_Filler):
    test: str  # NoLiMa's test name: ENTRY-ID_TEST-ID_QUESTION-TYPE
    needle: str
    question: str
    metric: Literal["contains", "EM", "lastline_EM", "lastline_contains"]
    distractor: str | None
    system_prompt: Literal["default", "needle-set", "none"]
