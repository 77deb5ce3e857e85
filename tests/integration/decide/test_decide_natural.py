"""``ctxprobe decide`` on a run holding natural (``documents``) and synthetic families: the
run's lines carry the synthetic-vs-natural verdict, its JSON the comparison, and a natural
reading that scores below the synthetic one is a caveat naming whose limit to plan by."""

from __future__ import annotations

import html as htmllib
import json
import re
from pathlib import Path

import pytest

from ctxprobe.analysis.grid import LengthStat, Profile
from ctxprobe.analysis.natural import agreement
from ctxprobe.cli import main
from ctxprobe.decide.runs import natural_caveat

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "natural"


def test_decide_reports_the_natural_check_of_a_run_holding_both(tmp_path: Path, capsys,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    store = tmp_path / "s.sqlite"
    # cliff at 3000 tokens for both kinds of case (sim:decay): they agree, effective length 2K each
    assert main(["run", "--model", "sim:decay?cliff=3000&width=0", "--tokenizer", "local", "--lengths", "1k,2k,4k",
                 "--depths", "0.2,0.8", "--reps", "5", "--family", "documents,niah",
                 "--param", f"documents.docs={EXAMPLE / 'docs'}", "--param", f"documents.qa={EXAMPLE / 'qa.jsonl'}",
                 "--store", str(store), "--no-plots", "--no-progress"]) == 0
    capsys.readouterr()
    # and a run without documents: no natural check for it
    assert main(["run", "--model", "sim:perfect", "--tokenizer", "local", "--lengths", "1k,2k", "--reps", "2",
                 "--store", str(store), "--no-plots", "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["runs", "--json", "--store", str(store)]) == 0
    ids = {r["model"]: r["run_id"] for r in json.loads(capsys.readouterr().out)}
    both, plain = ids["sim:decay?cliff=3000&width=0"], ids["sim:perfect"]
    assert main(["decide", both, plain, "--store", str(store)]) == 0
    text = capsys.readouterr().out
    joined = " ".join(text.split())
    assert "natural check: documents vs niah: agree: no length differs" in joined
    assert "effective length 2K vs 2K (natural vs synthetic)" in joined
    assert joined.count("natural check:") == 1 and "caveat: run" not in joined
    assert all(len(line) <= 80 for line in text.splitlines())
    assert main(["decide", both, plain, "--json", "--store", str(store)]) == 0
    runs = {r["run_id"]: r for r in json.loads(capsys.readouterr().out)["runs"]}
    (entry,) = runs[both]["natural_vs_synthetic"]
    assert entry["agree"] is True and entry["natural"] == "documents" and entry["synthetic"] == "niah"
    assert [c["length"] for c in entry["lengths"]] == [1024, 2048, 4096]
    assert "natural_vs_synthetic" not in runs[plain]
    # the HTML page carries the same check (its text read back; model names escaped)
    page = tmp_path / "decide.html"
    assert main(["decide", both, plain, "--html", str(page), "--store", str(store)]) == 0
    raw = page.read_text()
    rows = [htmllib.unescape(re.sub(r"<[^>]+>", "|", row)) for row in re.findall(r"<tr>.*?</tr>", raw, re.S)]
    (row,) = [r for r in rows if "natural check" not in r and "agree: no length differs" in r]
    cells = [c.strip() for c in row.split("|") if c.strip()]
    assert cells == ["sim:decay?cliff=3000&width=0", both, "documents vs niah",
                     "agree: no length differs (two-proportion test, Bonferroni alpha 0.05 over 3 lengths); "
                     # 10 cases a side: (z(1 - 0.05/6) + z(0.8)) × sqrt(0.25 × 0.2) = 0.72
                     "with 10 cases a side, a difference under about 0.72 can go unseen",
                     "2K vs 2K"]
    assert "<td>sim:decay?cliff=3000&amp;width=0</td>" in raw and "cliff=3000&width" not in raw
    assert "natural check: each run&#39;s natural cases against its synthetic families" in raw


def _profile(family: str, stats: list[tuple[int, int, float]]) -> Profile:
    return Profile(family, 0.856, None, [LengthStat(family, L, n, m, 0.0, 1.0) for L, n, m in stats], [])


def test_a_natural_reading_below_the_synthetic_one_is_a_caveat() -> None:
    nat = _profile("documents", [(1024, 20, 1.0), (2048, 20, 0.0)])
    syn = _profile("niah", [(1024, 20, 1.0), (2048, 20, 1.0)])
    line = natural_caveat("abc", "m", agreement(nat, syn))
    assert "documents scores below niah at 2,048 tokens" in line and "plan their use by the documents limit" in line
    # a natural reading above the synthetic one is a difference, without "below"
    above = agreement(_profile("documents", [(1024, 20, 1.0), (2048, 20, 1.0)]),
                      _profile("niah", [(1024, 20, 1.0), (2048, 20, 0.0)]))
    up = natural_caveat("abc", "m", above)
    assert "differs from niah" in up
