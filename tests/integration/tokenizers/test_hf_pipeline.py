"""Exact budgets with a Hugging Face tokenizer.json + jinja chat template from a local path."""

from __future__ import annotations

import math
from pathlib import Path

from ctxprobe.store import iter_export
from ctxprobe.spec import make_spec
from ctxprobe.sweep.run import run_sweep
from ctxprobe.tokenizers import resolve_tokenizer


def test_sweep_with_hf_tokenizer_is_exact(tmp_path: Path, hf_smollm_dir: Path) -> None:
    name = f"hf:{hf_smollm_dir}"
    spec = make_spec({"model": "sim:perfect", "tokenizer": name, "lengths": "600,1500,3000",
                      "depths": "0,0.5,1", "reps": 2, "families": {"niah": {"distractors": 2}}})
    store = tmp_path / "s.sqlite"
    result = run_sweep(spec, store, progress=False)
    tok = resolve_tokenizer(name)
    records = list(iter_export(result.run_id, store))
    assert len(records) == 18 and {r["tokenizer"] for r in records} == {name}
    for r in records:
        count = tok.count_chat(r["messages"])
        assert count == r["token_count"] <= r["length"]
        assert r["length"] - count <= max(math.ceil(0.01 * r["length"]), 40)
        assert r["outcome"] == "correct"
