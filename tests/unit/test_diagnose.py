from __future__ import annotations

from ctxprobe.analysis.diagnose import trained_context_notes
from ctxprobe.analysis.grid import profile
from ctxprobe.core.rows import ResultRow


def _rows(means: dict[int, float], n: int = 10) -> list[ResultRow]:
    rows = []
    for length, mean in means.items():
        k = round(mean * n)
        rows += [ResultRow("niah", length, 0.5, i, "correct" if i < k else "wrong", 1.0 if i < k else 0.0)
                 for i in range(n)]
    return rows


def test_collapse_past_trained_context_points_at_rope() -> None:
    prof = profile(_rows({4096: 1.0, 8192: 0.9, 12288: 0.1}))[0]
    notes = trained_context_notes(prof, 8192)
    assert any("collapses right past the trained context" in n and "RoPE" in n for n in notes)


def test_gradual_decline_or_no_data_beyond_is_not_a_cliff() -> None:
    slope = profile(_rows({4096: 1.0, 8192: 0.9, 12288: 0.8}))[0]
    assert not any("collapses" in n for n in trained_context_notes(slope, 8192))
    inside_only = profile(_rows({4096: 1.0, 8192: 0.2}))[0]
    assert trained_context_notes(inside_only, 8192) == []
    assert trained_context_notes(slope, None) == []


def test_profile_note_compares_families_with_retrieval() -> None:
    from ctxprobe.analysis.diagnose import profile_notes

    rows = _rows({1024: 1.0, 2048: 1.0, 4096: 1.0})
    rows += [ResultRow("vartrack", r.length, r.depth, r.rep, r.outcome, r.score if r.length < 2048 else 0.0)
             for r in _rows({1024: 1.0, 2048: 1.0, 4096: 1.0})]
    notes = profile_notes(profile(rows))
    assert notes == ["profile: vartrack give out before plain retrieval (niah)."]
    assert profile_notes(profile(_rows({1024: 1.0}))) == []


def test_unscaled_server_window_is_named_as_the_cause_of_a_collapse() -> None:
    prof = profile(_rows({4096: 1.0, 8192: 0.9, 12288: 0.1}))[0]
    named = trained_context_notes(prof, 8192, served_window=16384, unscaled=True)
    assert any("missing position scaling is the likely cause" in n and "16,384" in n for n in named)
    # the same collapse from a server that reported its scaling: the generic RoPE hint, not the diagnosis
    generic = trained_context_notes(prof, 8192, served_window=16384, unscaled=False)
    assert not any("likely cause" in n for n in generic) and any("RoPE" in n for n in generic)


def test_unscaled_window_without_a_collapse_names_nothing() -> None:
    # boundary: a drop just under COLLAPSE_DROP (0.9 -> 0.7 = 0.20) is a slope, not a cliff
    slope = profile(_rows({4096: 1.0, 8192: 0.9, 12288: 0.7}))[0]
    assert not any("likely cause" in n for n in trained_context_notes(slope, 8192, 16384, unscaled=True))
    # just over COLLAPSE_DROP (0.9 -> 0.6: a 0.30 drop) is a cliff
    cliff = profile(_rows({4096: 1.0, 8192: 0.9, 12288: 0.6}))[0]
    assert any("likely cause" in n for n in trained_context_notes(cliff, 8192, 16384, unscaled=True))
