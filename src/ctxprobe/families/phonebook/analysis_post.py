"""The phone-book post's own metrics, computed exactly as its metric script does.

The original (``get_retrieval_accuracy_stats`` and ``calc_metrics``) works on the per-bin
accuracy of one (M entries, N needles) configuration -- a dict ``bin → share of runs whose
needle in that bin was exactly right``, in bin order:

- fit ``numpy.polyfit(x, acc, 3)`` on the **bin index** ``x = 0 … N-1`` (not the position);
- evaluate the fit at ``numpy.linspace(0, N - 1, 1000)``;
- ``min_y = max(min(y), 0)``, ``max_y = min(max(y), 1)`` (trough clipped below at 0, peak
  clipped above at 1), ``avg_y = mean(y)`` (unclipped);

and from three configurations -- (M, N=100), (M, N=10) and (M=1,000, N=100):

- CSI = max(min_y(1000, 100) − min_y(M, 100), 0) / min_y(1000, 100), **1** if that is 0;
- ADI = max(max_y(M, 100) − min_y(M, 100), 0) / max_y(M, 100), 1 if max_y is 0;
- NOI = max(min_y(M, 10) − min_y(M, 100), 0) / min_y(M, 10), 1 if min_y(M, 10) is 0;
- RRI = 1 − (CSI + ADI + NOI) / 3;  LCRDS = 100 × avg_y(M, 100) × RRI.

The references are fixed: M = 1,000 entries and N = 10 / 100. A grid without them gives
``None`` with the reason (the original script would stop on a missing file); books sized
in tokens have no M in entries, so CSI is n/a there.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

#: The original's reference configuration.
REF_ENTRIES, N_REF, N_LOW = 1000, 100, 10
POST_METRICS = ("CSI", "ADI", "NOI", "RRI", "LCRDS")
Key = tuple[int, int]  # (M, N)


@dataclass(frozen=True)
class PostStats:
    min_x: float
    min_y: float
    max_x: float
    max_y: float
    avg_y: float


def post_stats(values: Sequence[float]) -> PostStats:
    """The original's ``get_retrieval_accuracy_stats`` of one per-bin accuracy list."""
    y_bins = np.asarray(values, dtype=float)
    x = np.arange(len(y_bins))
    with warnings.catch_warnings():  # N < 4 bins: the original fits (and warns) all the same
        warnings.simplefilter("ignore", np.exceptions.RankWarning)
        poly = np.poly1d(np.polyfit(x, y_bins, 3))
    x_smooth = np.linspace(0, len(y_bins) - 1, 1000)
    y = poly(x_smooth)
    return PostStats(float(x_smooth[np.argmin(y)]), float(max(np.min(y), 0)),
                     float(x_smooth[np.argmax(y)]), float(min(np.max(y), 1)), float(np.mean(y)))


def _rel_drop(hi: float, lo: float) -> float:
    """max(hi − lo, 0) / hi, and 1 when hi is not positive (the original's rule)."""
    return max(hi - lo, 0) / hi if hi > 0 else 1.0


@dataclass(frozen=True)
class PostValue:
    value: float | None
    reason: str | None = None  # why the value is n/a


def post_metrics(per_bin: Mapping[Key, Sequence[float]], *, in_entries: bool) -> dict[tuple[str, int], PostValue]:
    """Every post metric for every M that has N = 100; ``per_bin[(M, N)]`` is the per-bin
    accuracy list in bin order. A configuration holding a NaN (a bin nobody measured) counts
    as missing, and so does one of a single bin (N = 1): the original's cubic fit over the
    bins has no line through one point (numpy's fit fails on it: "SVD did not converge")."""
    stats = {k: post_stats(v) for k, v in per_bin.items() if len(v) > 1 and not np.isnan(np.asarray(v, float)).any()}
    out: dict[tuple[str, int], PostValue] = {}
    for m in sorted({k[0] for k in per_bin if k[1] == N_REF}):
        main = stats.get((m, N_REF))
        if main is None:
            reason = f"no measured needle in some bin of M={m}, N={N_REF}"
            out.update({(name, m): PostValue(None, reason) for name in POST_METRICS})
            continue
        adi = PostValue(_rel_drop(main.max_y, main.min_y))
        ref = stats.get((REF_ENTRIES, N_REF)) if in_entries else None
        if ref is not None:
            csi = PostValue(_rel_drop(ref.min_y, main.min_y))
        elif not in_entries:
            csi = PostValue(None, f"books sized in tokens: the post's reference is M={REF_ENTRIES:,} entries")
        else:
            csi = PostValue(None, f"the grid has no M={REF_ENTRIES:,} entries with N={N_REF}")
        low = stats.get((m, N_LOW))
        noi = (PostValue(_rel_drop(low.min_y, main.min_y)) if low is not None
               else PostValue(None, f"the grid has no N={N_LOW} at this M"))
        parts = [csi, adi, noi]
        values = [p.value for p in parts if p.value is not None]
        if len(values) == len(parts):
            rri = 1 - sum(values) / 3.0
            out[("RRI", m)] = PostValue(rri)
            out[("LCRDS", m)] = PostValue(main.avg_y * 100.0 * rri)
        else:
            reason = "needs CSI, ADI and NOI: " + "; ".join(p.reason for p in parts if p.reason)
            out[("RRI", m)] = out[("LCRDS", m)] = PostValue(None, reason)
        out[("CSI", m)], out[("ADI", m)], out[("NOI", m)] = csi, adi, noi
    return out


def needs_reference(ns: Sequence[int]) -> str | None:
    """Why no post metric can be computed at all, or None."""
    return None if N_REF in ns else f"the post's metrics need N={N_REF} needles (the grid has N={sorted(ns)})"
