"""A profile as plain JSON data, for ``ctxprobe report RUN --json`` and other tools.

Unmeasured accuracies are ``null``, never NaN: NaN is not valid JSON and would break
strict parsers downstream (jq, JavaScript's JSON.parse).
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from ctxprobe.analysis.grid import CellStat, LengthStat, Profile
from ctxprobe.analysis.sampled import INTERVAL
from ctxprobe.report.format import fmt_depth, fmt_tokens

#: The effective-length rule in words, so a JSON consumer need not guess it.
RULE = "mean >= threshold"
WALK = "ascending lengths, stop at the first length that fails or has no scored case"


def _stat(stat: CellStat | LengthStat, **labels: str) -> dict[str, Any]:
    """A cell or length as JSON; ``cases`` (and ``n_label``: ``20×5``) only when the
    family's cases were sent k times, so other runs read as they always did."""
    d = asdict(stat)
    if stat.cases is None:
        d.pop("cases")
    else:
        d["n_label"] = stat.n_label
    return {**d, **labels}


def profile_to_dict(profile: Profile) -> dict[str, Any]:
    """JSON-serialisable dict of one family's profile (numbers raw, labels alongside)."""
    eff = profile.effective_length
    if profile.verdicts:  # adaptively sampled: the walk's verdicts, no fixed-n intervals
        def strip(d: dict[str, Any]) -> dict[str, Any]:
            return {k: v for k, v in d.items() if k not in ("lo", "hi")}
        return {"family": profile.family, "threshold": profile.threshold, "rule": RULE, "walk": WALK,
                "effective_length": eff, "effective_length_label": fmt_tokens(eff) if eff is not None else None,
                "sampling": "adaptive: per-length verdicts of the walk's always-valid test; no fixed-n intervals",
                "verdicts": {str(k): v for k, v in sorted(profile.verdicts.items())},
                "lengths": [strip(_stat(s, length_label=fmt_tokens(s.length))) for s in profile.lengths],
                "cells": [strip(_stat(c, length_label=fmt_tokens(c.length), depth_label=fmt_depth(c.depth)))
                          for c in profile.cells]}
    return {
        "family": profile.family,
        "threshold": profile.threshold,
        "rule": RULE,
        "walk": WALK,
        "effective_length": eff,
        "effective_length_label": fmt_tokens(eff) if eff is not None else None,
        **({"interval": INTERVAL} if profile.sampled else {}),
        "lengths": [_stat(s, length_label=fmt_tokens(s.length)) for s in profile.lengths],
        "cells": [_stat(c, length_label=fmt_tokens(c.length), depth_label=fmt_depth(c.depth)) for c in profile.cells],
    }


def profiles_to_dict(profiles: list[Profile], **meta: Any) -> dict[str, Any]:
    """A whole run: ``meta`` (run id, model, ...) plus one entry per family, and
    ``natural_vs_synthetic`` when the run has natural and synthetic families
    (:mod:`ctxprobe.analysis.natural`; the families behind the labels read from
    ``meta["spec"]`` when given)."""
    from ctxprobe.analysis.natural import natural_vs_synthetic, spec_family_names

    found = natural_vs_synthetic(profiles, names=spec_family_names(meta.get("spec")))
    extra = {"natural_vs_synthetic": [a.to_dict() for a in found]} if found else {}
    return {**meta, "profiles": [profile_to_dict(p) for p in profiles], **extra}
