"""The M × N × runs grid of the phone-book experiment as an ordinary sweep spec.

``ctxprobe phonebook --model … --entries 1k,5k --needles 10,50,100 --runs 20`` is
``run_sweep(phonebook_spec(model=…, entries=["1k", "5k"], needles=[10, 50, 100], runs=20))``:
the result is stored like any run (same run identity rules, resumable).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ctxprobe.errors import CtxprobeError
from ctxprobe.spec import Spec, make_spec, parse_length
from ctxprobe.spec.names import as_ref

#: Output tokens allowed per asked name: one ``name : (xxx) xxx-xxxx`` line is ~25 tokens
#: with SmolLM2's tokenizer (measured: the sims 25.0-25.6, the embedded model 256-264 tokens
#: for 10 lines with its preamble; benchmarks/phonebook_output_tokens.py, docs/phonebook.md);
#: the margin covers chattier tokenizers.
TOKENS_PER_NEEDLE = 32
#: Output tokens allowed on top for a preamble ("Here are the numbers:").
ANSWER_LEAD_IN = 32
#: The original sends top_p 0.95 with temperature 0 (OpenAI, Together and Gemini paths).
POST_TOP_P = 0.95
_ENTRIES_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*$")


def parse_entries(value: str | int) -> int:
    """Entry counts are decimal, as in the original (``1k`` = 1,000 entries, not 1,024)."""
    if isinstance(value, int) and not isinstance(value, bool):
        n = value
    else:
        m = _ENTRIES_RE.match(str(value))
        if not m:
            raise CtxprobeError(f"bad entry count {value!r}: use a number such as 1000, 1k or 1.5k")
        n = round(float(m.group(1)) * {"": 1, "k": 1000, "m": 1_000_000}[m.group(2).lower()])
    if n <= 0:
        raise CtxprobeError(f"bad entry count {value!r}: entry counts must be positive")
    return n


def phonebook_spec(
    *,
    model: str,
    entries: Sequence[int | str] | None = None,
    lengths: Sequence[int | str] | None = None,
    needles: Sequence[int] = (10, 50, 100),
    runs: int = 20,
    seed: int = 0,
    tokenizer: str | None = None,
    layout: Mapping[str, Any] | None = None,
    temperature: float = 0.0,
    max_tokens: int | None = None,
    top_p: float | None = None,
    method: str = "post",
    variants: str | None = None,
    **spec_fields: Any,
) -> Spec:
    """A validated sweep spec for the phone-book grid.

    Exactly one of ``entries`` (M as entry counts, decimal k) or ``lengths`` (M solved to a
    token budget, ``1k`` = 1,024 tokens) is given. ``layout`` holds the family's layout
    params (``book_in``, ``system_role``, ``repeat_instructions``, ``examples``, ``shards``,
    ``system_prompt``, ``question``; the last three need ``method="ctxprobe"``). ``method="post"`` (the
    default) reproduces the original experiment and sends top_p 0.95 unless ``top_p`` is
    given (not to Anthropic models, as the original). ``max_tokens`` defaults to room for the largest N (twice that with ``cot``).
    Other keyword arguments are Spec fields (``concurrency``, ``timeout``, ``haystack`` …).
    """
    if (entries is None) == (lengths is None):
        raise CtxprobeError("phonebook: give either --entries (M in entries) or --lengths (M as a token budget)")
    if runs < 1:
        raise CtxprobeError("phonebook: --runs must be at least 1")
    ns = [int(n) for n in needles]
    # method ctxprobe (the family default) is left out of the params, so runs stored before
    # methods existed keep their identity and resume
    params: dict[str, Any] = {**({"method": method} if method != "ctxprobe" else {}), **(layout or {}), "needles": ns}
    if params.get("method", "ctxprobe") == "post" and top_p is None and as_ref(model).provider != "anthropic":
        top_p = POST_TOP_P  # the original's Anthropic call sends temperature only
    per_needle = TOKENS_PER_NEEDLE * (2 if params.get("cot") in (True, "true", "True", 1) else 1)
    if entries is not None:
        params["unit"] = "entries"
        grid = sorted({parse_entries(e) for e in entries})
    else:
        params["unit"] = "tokens"
        grid = sorted({parse_length(x) for x in lengths or []})
    too_small = [m for m in grid if params["unit"] == "entries" and m < max(ns)]
    if too_small:
        raise CtxprobeError(f"phonebook: {too_small[0]} entries cannot hold {max(ns)} needles (one per bin)")
    shards = int(params.get("shards", 1))
    families: dict[str, dict[str, Any]] = {"phonebook": params}
    if variants:  # every variant asks the same books and names (ctxprobe.core.variant)
        from ctxprobe.spec.variants import expand_variants, parse_variants

        families = expand_variants(families, parse_variants(variants))
        if any(e.get("cot") in (True, "true", "True", 1) for e in families.values()):
            per_needle = TOKENS_PER_NEEDLE * 2  # one limit for every variant: room for the chattiest
    data: dict[str, Any] = {
        "model": model, "families": families, "lengths": grid, "depths": [0.0],
        "reps": runs * len(ns) * shards, "seed": seed,
        "decoding": {"temperature": temperature, "top_p": top_p,
                     "max_tokens": max_tokens or min(32768, per_needle * max(ns) + ANSWER_LEAD_IN)},
        **spec_fields,
    }
    if tokenizer is not None:
        data["tokenizer"] = tokenizer
    spec = make_spec(data)
    from ctxprobe.core.family_lookup import validate_params

    for entry in families.values():
        validate_params("phonebook", {k: v for k, v in entry.items() if k not in ("family", "variant_layout",
                                                                                "variant_decoding")})
    return spec


def refuse_plain_phonebook(spec: Any, command: str) -> None:
    """Refuse a phone book in a plain ``run``/``plan`` grid: the phone book's grid (books ×
    needle counts × runs, one depth) and output budget (room for N answer lines) are
    ``ctxprobe phonebook``'s, and a plain grid would cut every answer at run's output limit."""
    names = {str((params or {}).get("family", label)) for label, params in spec.families.items()}
    if "phonebook" in names and not (list(spec.depths) == [0.0]
                                     and any(_is_phonebook_grid(p) for p in spec.families.values())):
        flag = " --plan" if command == "plan" else ""
        raise CtxprobeError(f"the phone book has its own grid and output budget: use `ctxprobe phonebook{flag} --model "
                            "MODEL --entries 1k,5k --needles 10,50` (it takes the same --max-cost, --prices, "
                            "--rpm/--tpm, --batch and --reasoning-budgets)")


def _is_phonebook_grid(params: Any) -> bool:
    """A spec :func:`phonebook_spec` made (a YAML copy of one included): its params say the
    unit (and its only depth is 0)."""
    return isinstance(params, dict) and "unit" in params
