"""Length labels shared by every layer (analysis states lengths too, and must not import report)."""

from __future__ import annotations

_K = 1024
_M = 1024 * 1024


def fmt_tokens(n: int) -> str:
    """Token count in binary units: 900 → "900", 4096 → "4K", 5000 → "4.9K", 2**20 → "1M"."""
    n = int(n)
    if n < 0:
        return "-" + fmt_tokens(-n)
    if n < _K:
        return str(n)
    unit, suffix = (_M, "M") if n >= _M else (_K, "K")
    if n % unit == 0:
        return f"{n // unit}{suffix}"
    return f"{n / unit:.1f}{suffix}"


def fmt_length(n: int, unit: str = "tokens") -> str:
    """A length in its unit: ``4K`` for tokens (k = 1,024), ``1,000 entries`` for books."""
    return f"{n:,} entries" if unit == "entries" else fmt_tokens(n)


def fmt_depth(depth: float) -> str:
    """Evidence depth as a percentage of the haystack: 0.25 → "25%", 0.125 → "12.5%"."""
    pct = round(float(depth) * 100, 1)
    return f"{pct:g}%"
