"""One voice after --adaptive: no output claims a 95%-confident effective length the walk
left open, and a length the walk never sent is untested."""

from __future__ import annotations

import json
import re

import pytest

from ctxprobe.cli import main
from ctxprobe.store import RunMeta, Store

MODEL = "sim:decay?cliff=3000&width=1&noise=0.05&seed=0"
CLAIM = re.compile(r"effective length (\d+K) \(95% confident\)|reliable up to (\d+K) tokens")


@pytest.fixture(scope="module")
def adaptive_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    store = str(tmp_path_factory.mktemp("adaptive") / "a.sqlite")
    assert main(["run", "--model", MODEL, "--lengths", "1k,2k,4k", "--depths", "0,0.5,1", "--adaptive",
                 "--store", store, "--no-plots", "--no-progress"]) in (0, 3)
    with Store(store) as s:
        (run,) = s.list_runs()
    return store, run.run_id


def _walk(meta: RunMeta) -> dict[int, str]:
    assert meta.adaptive is not None
    (family,) = meta.adaptive["families"]
    return {s["length"]: s["state"] for s in family["lengths"]}


def _kilo(label: str) -> int:
    return int(label[:-1]) * 1024


def test_no_output_claims_a_length_the_walk_left_open(adaptive_run, capsys, tmp_path) -> None:
    store, run_id = adaptive_run
    with Store(store) as s:
        walk = _walk(s.require_run(run_id).meta)
    assert walk == {1024: "pass", 2048: "open", 4096: "unsent"}  # the reproduction: budget spent at 2K
    decided = max(L for L, st in walk.items() if st == "pass")
    capsys.readouterr()
    texts = []
    for args in (["report", run_id, "--no-plots", "--details"], ["decide", run_id],
                 ["report", run_id, "--html", str(tmp_path / "r.html"), "--no-plots"], ["report", run_id, "--no-plots"]):
        assert main([*args, "--store", store]) == 0
        texts.append(capsys.readouterr().out)
    texts.append((tmp_path / "r.html").read_text(encoding="utf-8"))
    for text in texts:
        claims = [_kilo(a or b) for a, b in CLAIM.findall(" ".join(text.split()))]
        assert all(c <= decided for c in claims), claims
        # no fixed-n interval over adaptively sampled cells (tables, tooltips); the page's legend may name them
        assert "Wilson 95% CI" not in text and "Wilson 95% band," not in text
    report = " ".join(texts[0].split())
    assert "at least 1K, at most 4K" in report and "untested at 4K" in report and "open" in report
    assert "niah: untested at 4K (never sent)" in " ".join(texts[3].split())  # the default report says it too


def test_json_reads_the_walk_not_fixed_n_intervals(adaptive_run, capsys) -> None:
    store, run_id = adaptive_run
    capsys.readouterr()
    assert main(["report", run_id, "--json", "--store", store]) == 0
    out = json.loads(capsys.readouterr().out)
    iv = out["effective_length_intervals"]["niah"]
    assert (iv["lo"], iv["hi"], iv["untested"]) == (1024, 4096, [4096])
    assert iv["states"] == {"1024": "pass", "2048": "open", "4096": "untested"}
    (prof,) = out["profiles"]
    assert "lo" not in prof["lengths"][0] and prof["verdicts"]["2048"] == "open"
    assert main(["decide", run_id, "--json", "--bands", "1k,2k,4k", "--store", store]) == 0
    choices = json.loads(capsys.readouterr().out)["choices"]
    assert [(c["meets"], c["candidates"][0]["meets"]) for c in choices] == [
        ("yes", "yes"), ("maybe", "maybe"), ("no", "untested")]
