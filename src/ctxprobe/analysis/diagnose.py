"""Plain-language notes about a profile that point at the serving path, not the model."""

from __future__ import annotations

from ctxprobe.analysis.grid import Profile
from ctxprobe.core import registry
from ctxprobe.core.outcome import Outcome

#: A fall this large right past the trained window is a cliff, not a slope.
COLLAPSE_DROP = 0.25


def trained_context_notes(profile: Profile, trained: int | None, served_window: int | None = None,
                          unscaled: bool = False) -> list[str]:
    """Say so when accuracy collapses right past the model's trained context length.

    That shape usually means positions beyond training are not handled: a server that
    extends the window needs position scaling (RoPE / YaRN) configured, and a wrong or
    missing setting breaks exactly there. ``unscaled``: the server's window
    (``served_window``) exceeds the trained one and the server reported no position
    scaling -- then missing position scaling is named as the likely cause."""
    if not trained:
        return []
    measured = [s for s in profile.lengths if s.mean is not None]
    inside = [s for s in measured if s.length <= trained]
    beyond = [s for s in measured if s.length > trained]
    if not beyond:
        return []
    note = [f"{profile.family}: {len(beyond)} length(s) lie beyond the model's trained context of {trained:,} tokens."]
    if inside:
        last_in, first_out = inside[-1], beyond[0]
        assert last_in.mean is not None and first_out.mean is not None
        collapsed = last_in.mean >= profile.threshold and last_in.mean - first_out.mean >= COLLAPSE_DROP
        if collapsed and unscaled:
            window = f" of {served_window:,} tokens" if served_window else ""
            note.append(
                f"{profile.family}: accuracy collapses right past the trained context ({last_in.mean:.2f} at "
                f"{last_in.length:,} → {first_out.mean:.2f} at {first_out.length:,} tokens), and the server's window"
                f"{window} exceeds the trained {trained:,} with no position scaling reported: missing position "
                "scaling is the likely cause — serve it with RoPE/YaRN scaling configured (llama.cpp: "
                "--rope-scaling yarn --yarn-orig-ctx; vLLM: rope_scaling) or stay within the trained window."
            )
        elif collapsed:
            note.append(
                f"{profile.family}: accuracy collapses right past the trained context ({last_in.mean:.2f} at "
                f"{last_in.length:,} → {first_out.mean:.2f} at {first_out.length:,} tokens). If the server extends "
                "the window with position scaling (RoPE/YaRN: rope_scaling, rope_freq_base, rope_freq_scale), "
                "check that configuration first — it is the usual cause of this cliff."
            )
    return note


def profile_notes(profiles: list[Profile]) -> list[str]:
    """Compare every family with plain retrieval (``niah``: the family whose declaration says
    ``plain_retrieval``): the usual finding is that tracking, aggregation and multi-hop give
    out earlier. Say which way it went here."""
    plain = {e.name for e in registry.entries("families") if e.declaration().plain_retrieval}
    base = next((p for p in profiles if p.family in plain), None)
    if base is None or len(profiles) < 2:
        return []

    def rank(p: Profile) -> int:
        return p.effective_length or 0

    shorter = [p.family for p in profiles if p is not base and rank(p) < rank(base)]
    same = [p.family for p in profiles if p is not base and rank(p) == rank(base)]
    longer = [p.family for p in profiles if p is not base and rank(p) > rank(base)]
    name = base.family
    if base.effective_length is None and not longer:  # niah and every other family below the bar already
        shortest = min((s.length for p in profiles for s in p.lengths), default=0)
        return [f"profile: every family, {name} included, is below the bar at the shortest length tested "
                f"({shortest:,} tokens): none holds longer than another here; test shorter lengths to compare them."]
    parts = []
    if shorter:
        parts.append(f"{', '.join(shorter)} give out before plain retrieval ({name})")
    if same and base.effective_length is None:
        parts.append(f"{', '.join(same)} are below the bar at the shortest length, as {name} is")
    elif same:
        parts.append(f"{', '.join(same)} hold as long as {name}")
    if longer:
        parts.append(f"{', '.join(longer)} hold longer than {name} — unusual: check those families' difficulty knobs")
    return ["profile: " + "; ".join(parts) + "."]


def answer_tokens_needed(expected: list[str]) -> int:
    """Output tokens a full correct answer listing ``expected`` needs, by the same rule as the
    families' default output limits (spec/fields.py): the items, each with its separator, plus a
    short lead-in -- at least the long-standing default of 48."""
    from ctxprobe.spec import OUTPUT_FLOOR, OUTPUT_LEAD_IN, OUTPUT_TOKENS_PER_ITEM

    per_item = max([OUTPUT_TOKENS_PER_ITEM, *(len(item) + 3 for item in expected)])  # long free-text answers
    return max(OUTPUT_FLOOR, OUTPUT_LEAD_IN + per_item * len(expected))


def output_truncated_notes(profiles: list[Profile], max_tokens: int | None,
                           needed: dict[str, int], fixed: dict[str, int] | None = None) -> list[str]:
    """One line per family whose answers hit the output limit: a harness setting, not the model.

    ``needed`` maps a family to the output tokens its longest correct answer needs
    (:func:`answer_tokens_needed` over the family's cases); ``fixed`` maps a family whose
    task fixes its own output budget (RULER's ``tokens_to_generate``) to that budget."""
    out = []
    for p in profiles:
        cut = sum(c.outcomes.get(Outcome.OUTPUT_TRUNCATED, 0) for c in p.cells)
        if not cut:
            continue
        total = sum(sum(c.outcomes.values()) for c in p.cells)
        if fixed and p.family in fixed:
            out.append(f"{p.family}: {cut} of {total} answers were cut off by the task's own output limit "
                       f"(RULER's tokens_to_generate, {fixed[p.family]} tokens), as RULER cuts them; "
                       "--max-tokens does not apply to it.")
            continue
        limit = f"--max-tokens {max_tokens}" if max_tokens else "the output limit"
        need = needed.get(p.family)
        fix = (f"its answers need about {need} tokens: rerun with --max-tokens {need}" if need and
               (max_tokens is None or need > max_tokens) else "rerun with a larger --max-tokens")
        out.append(f"{p.family}: {cut} of {total} answers were cut off by {limit} before a correct answer "
                   f"(output_truncated, counted as misses of this setting, not of the model); {fix}.")
    return out
