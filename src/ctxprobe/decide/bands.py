"""Bands in content units: ``5k,20k,1m`` words or characters (k = 1,000, m = 1,000,000;
token bands are read by :func:`ctxprobe.spec.parse_lengths`, k = 1,024)."""

from __future__ import annotations

import re

from ctxprobe.errors import CtxprobeError

__all__ = ["parse_counts"]

_COUNT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([km]?)\s*$", re.IGNORECASE)


def parse_counts(text: str) -> list[int]:
    out = []
    for part in (p for p in text.split(",") if p.strip()):
        m = _COUNT.match(part)
        if not m or (n := int(float(m.group(1)) * {"": 1, "k": 1000, "m": 1_000_000}[m.group(2).lower()])) <= 0:
            raise CtxprobeError(f"bad band {part.strip()!r}: use a positive count such as 5000, 5k or 1m")
        out.append(n)
    return out
