"""Harness failures never read as model failures: truncated prompts, cut answers."""

from __future__ import annotations

from ctxprobe.models import resolve_provider
from ctxprobe.sim.server import SimServer
from ctxprobe.report.load import load_report
from ctxprobe.scores.outcome import score_response, truncation_tolerance
from ctxprobe.spec import make_spec
from ctxprobe.store import Store
from ctxprobe.sweep.run import run_sweep
from ctxprobe.core.case import Cell
from ctxprobe.haystack.context import BuildContext
from ctxprobe.core.family_lookup import make_family, validate_params
from ctxprobe.tokenizers import resolve_tokenizer


def _case():
    tok = resolve_tokenizer("local")
    family = make_family("niah", BuildContext(tokenizer=tok, haystack=None))
    return family, family.generate(Cell("niah", 4096, 0.0), 0, seed=0, params=validate_params("niah", {}))


def _outcome(family, case, reported: int, exact: bool) -> str:
    value = case.expected[0]
    return score_response(family, case, text=f"The number is {value}.", finish_reason="stop",
                          reported_prompt_tokens=reported, exact_counts=exact)[1].outcome


def test_truncation_tolerance_boundaries() -> None:
    family, case = _case()
    n = case.token_count
    tol = truncation_tolerance(n)
    assert tol == max(4, int(0.005 * n)) and tol >= 4
    # without exact agreement: exactly the tolerance short is drift, one more is truncation
    assert _outcome(family, case, n - tol, exact=False) == "correct"
    assert _outcome(family, case, n - tol - 1, exact=False) == "input_truncated"
    # preflight showed exact agreement: one token short is truncation; the full count is not
    assert truncation_tolerance(n, exact=True) == 0
    assert _outcome(family, case, n - 1, exact=True) == "input_truncated"
    assert _outcome(family, case, n, exact=True) == "correct"
    assert _outcome(family, case, n + 3, exact=True) == "correct"  # more than built is not a cut


def _spec(model: str, **extra):
    # depth 0 (the needle first, where a left cut hurts) and one case per cell: one token count per length
    return make_spec({"model": model, "tokenizer": "local", "lengths": "1k,2k", "depths": "0", "reps": 1,
                      **extra})


def test_small_cut_after_exact_preflight_is_truncation_not_a_miss(tmp_path) -> None:
    # the token counts the cases are built to (the same seeded cases whatever the model)
    probe = run_sweep(_spec("sim:perfect"), tmp_path / "probe.sqlite", progress=False)
    with Store(tmp_path / "probe.sqlite") as s:
        counts = [r.token_count for r in s.result_rows(probe.run_id) if r.length == 2048]
    cut_to = min(counts) - 3
    assert max(counts) - cut_to <= truncation_tolerance(min(counts))  # within the old tolerance
    tok = resolve_tokenizer("local")
    with SimServer(resolve_provider("sim:perfect", tok), tok, truncate_to=cut_to) as server:
        url = server.start()
        result = run_sweep(_spec(f"openai-compat:sim@{url}"), tmp_path / "t.sqlite", progress=False)
    report = load_report(result.run_id, tmp_path / "t.sqlite")
    preflight = report.run.meta.preflight
    assert preflight is not None and preflight.reported_tokens == preflight.counted_tokens
    prof = report.profiles[0]
    by_len = {s.length: s for s in prof.lengths}
    assert by_len[2048].outcomes == {"input_truncated": 1} and by_len[1024].mean == 1.0
    iv = report.intervals["niah"]
    assert iv.truncated == (2048,) and iv.point == 1024 and iv.hi == 1024
    data = report.to_dict()
    assert data["incomplete"] == ["incomplete: prompts truncated by the server at 2K "
                                  "(not measured; the effective length stops below)"]
    assert data["effective_length_intervals"]["niah"]["truncated"] == [2048]
    assert data["notes"][0] == data["incomplete"][0] and data["length_units"] == {"niah": "tokens"}


def test_cut_answers_get_a_max_tokens_hint(tmp_path) -> None:
    spec = make_spec({"model": "sim:perfect", "tokenizer": "local", "lengths": "1k", "depths": "0,1", "reps": 1,
                      "decoding": {"max_tokens": 4}})
    result = run_sweep(spec, tmp_path / "s.sqlite", progress=False)
    report = load_report(result.run_id, tmp_path / "s.sqlite")
    assert report.profiles[0].lengths[0].outcomes == {"output_truncated": 2}
    [hint] = [n for n in report.notes if "output_truncated" in n]
    # one 7-digit value: 32 (lead-in) + 10 (one item) = 42, under the floor of 48
    assert hint == ("niah: 2 of 2 answers were cut off by --max-tokens 4 before a correct answer (output_truncated, "
                    "counted as misses of this setting, not of the model); its answers need about 48 tokens: "
                    "rerun with --max-tokens 48.")
    # with room for the answer, the same cases are correct
    fixed = run_sweep(make_spec({**spec.model_dump(), "decoding": {"max_tokens": 48}}), tmp_path / "s.sqlite",
                      progress=False)
    assert load_report(fixed.run_id, tmp_path / "s.sqlite").profiles[0].lengths[0].mean == 1.0


def test_progress_names_books_in_entries() -> None:
    from rich.console import Console

    from ctxprobe.sweep.run import _Display
    from ctxprobe.core.case import Case

    shown = _Display(2, 0, False, Console(width=120), {"phonebook": "entries"})  # wide: the outcome shown
    book = Case.__new__(Case)
    object.__setattr__(book, "cell", Cell("phonebook", 300, 0.0))
    shown.update(book, 1.0, "correct")
    book_label = shown.progress.tasks[0].description
    assert book_label.split() == ["phonebook", "300", "entries", "correct"]
    plain = Case.__new__(Case)
    object.__setattr__(plain, "cell", Cell("niah", 2048, 0.5))
    shown.update(plain, 1.0, "correct")
    plain_label = shown.progress.tasks[0].description
    assert plain_label.split() == ["niah", "2K", "d=0.5", "correct"]
    assert len(book_label) == len(plain_label)  # fixed width: the bar does not jump sideways
