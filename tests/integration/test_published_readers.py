"""Readers for the published openai/mrcr and openai/graphwalks parquet files: small files
written here in the published column layout become a pack whose prompts are sent
unchanged; the stored scores equal the original rules re-implemented here."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from difflib import SequenceMatcher
from typing import Any

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from ctxprobe.errors import CtxprobeError  # noqa: E402
from ctxprobe.store import iter_export  # noqa: E402
from ctxprobe.sweep.packs import load_pack, run_pack  # noqa: E402
from ctxprobe.sweep.published import write_published_pack  # noqa: E402


def ref_grade(response, answer, random_string_to_prepend) -> float:  # the openai/mrcr card
    if not response.startswith(random_string_to_prepend):
        return 0
    response = response.removeprefix(random_string_to_prepend)
    answer = answer.removeprefix(random_string_to_prepend)
    return float(SequenceMatcher(None, response, answer).ratio())


def ref_f1(response, gold):  # lm-evaluation-harness tasks/graphwalks (strict)
    line = response.rstrip("\n").split("\n")[-1]
    m = re.search(r"Final Answer:\s*\[(.*)\]", line) if "Final Answer:" in line else None
    pred = [i.strip().strip("'\"") for i in m.group(1).split(",") if i.strip()] if m else []
    s, t = set(pred), set(gold)
    o = len(s & t)
    r, p = (o / len(t) if t else 0.0), (o / len(s) if s else 0.0)
    return 2 * r * p / (r + p) if r + p > 0 else 0.0


def _mrcr_rows():
    rows = []
    for i, (ask, n) in enumerate([(1, 2), (2, 2), (2, 4)]):
        msgs, replies = [], []
        for t in range(6):
            same = t % 2 == 0
            req = "write a poem about tapirs" if same else f"write a blog post about rocks {t}"
            rep = f"Verse {t} of row {i}: the tapir wanders by the reeds at dusk, number {t}."
            msgs += [{"role": "user", "content": req}, {"role": "assistant", "content": rep}]
            if same:
                replies.append(len(msgs) - 1)
        want = replies[ask - 1]
        prefix = f"Zq{i}x8Hk2Pw"
        suffix = {1: "st", 2: "nd"}[ask]
        msgs.append({"role": "user", "content": f"Prepend {prefix} to the {ask}{suffix} (1 indexed) poem about tapirs. "
                                                "Do not include any other text in your response."})
        rows.append({"prompt": json.dumps(msgs), "answer": prefix + msgs[want]["content"],
                     "random_string_to_prepend": prefix, "n_needles": n, "desired_msg_index": want,
                     "total_messages": len(msgs), "n_chars": sum(len(m["content"]) for m in msgs),
                     "date_added": "04-12-2025"})
    return rows


def _graphwalks_rows():
    edges = ["aa11 -> bb22", "bb22 -> cc33", "aa11 -> dd44", "dd44 -> cc33", "cc33 -> ee55"]
    rows = []
    for op, gold, kind in [("Perform a BFS from node aa11 with depth 2.", ["cc33"], "bfs"),
                           ("Find the parents of node cc33.", ["bb22", "dd44"], "parents")]:
        prompt = ("You will be given a graph as a list of directed edges.\n\nHere is the graph to operate on:\n"
                  "The graph has the following edges:\n" + "\n".join(edges) + "\n\nOperation:\n" + op
                  + "\nFinal Answer: [node1, node2]")
        rows.append({"prompt": prompt, "answer_nodes": gold, "prompt_chars": len(prompt), "problem_type": kind,
                     "date_added": "04-12-2025"})
    return rows


def _write(path, rows):
    pq.write_table(pa.Table.from_pylist(rows), path)


def test_mrcr_rows_sent_unchanged_and_scored_by_the_original_rule(tmp_path) -> None:
    rows = _mrcr_rows()
    _write(tmp_path / "2needle_0.parquet", rows)
    pack = tmp_path / "mrcr.jsonl"
    assert write_published_pack("mrcr", tmp_path / "2needle_0.parquet", pack, "local") == 3
    cases = load_pack(pack)
    assert [c.case.messages for c in cases] == [json.loads(r["prompt"]) for r in rows]  # unchanged
    res = run_pack(pack, "sim:perfect", tmp_path / "s.sqlite")
    recs = sorted(iter_export(res.run_id, tmp_path / "s.sqlite"), key=lambda r: r["rep"])
    assert len(recs) == 3
    for rec, row in zip(recs, rows):
        ref = ref_grade(rec["output"], row["answer"], row["random_string_to_prepend"])
        assert abs(rec["score"] - ref) < 1e-9 and rec["score"] == 1.0 and rec["outcome"] == "correct"
    # another instance of the same request is a distractor, scored by the same rule
    from ctxprobe.haystack.context import BuildContext
    from ctxprobe.core.family_lookup import make_family
    from ctxprobe.tokenizers import resolve_tokenizer

    fam = make_family("mrcr", BuildContext(tokenizer=resolve_tokenizer("local"), haystack=None))
    case = cases[1].case
    msgs = case.messages
    wrong = rows[1]["random_string_to_prepend"] + msgs[1]["content"]  # the 1st instance, asked the 2nd
    s = fam.score(case, wrong)
    assert s.outcome == "distractor"
    assert abs(s.score - ref_grade(wrong, rows[1]["answer"], rows[1]["random_string_to_prepend"])) < 1e-9


def test_graphwalks_rows_scored_by_set_f1(tmp_path) -> None:
    rows = _graphwalks_rows()
    _write(tmp_path / "gw.parquet", rows)
    pack = tmp_path / "gw.jsonl"
    write_published_pack("graphwalks", tmp_path / "gw.parquet", pack, "local")
    res = run_pack(pack, "sim:perfect", tmp_path / "s.sqlite")
    recs = sorted(iter_export(res.run_id, tmp_path / "s.sqlite"), key=lambda r: r["rep"])
    for rec, row in zip(recs, rows):
        assert abs(rec["score"] - ref_f1(rec["output"], row["answer_nodes"])) < 1e-9 and rec["score"] == 1.0


def test_cli_import_and_errors(tmp_path) -> None:
    _write(tmp_path / "gw.parquet", _graphwalks_rows())
    out = subprocess.run([sys.executable, "-m", "ctxprobe.cli", "import-published", "graphwalks",
                          str(tmp_path / "gw.parquet"), "-o", str(tmp_path / "p.jsonl"), "--tokenizer", "local",
                          "--empty-gold", "one"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert all(json.loads(ln)["meta"]["empty_gold"] == "one" for ln in open(tmp_path / "p.jsonl"))
    _write(tmp_path / "bad.parquet", [{"prompt": "x"}])
    with pytest.raises(CtxprobeError, match="lacks the column"):
        write_published_pack("mrcr", tmp_path / "bad.parquet", tmp_path / "b.jsonl", "local")
    with pytest.raises(CtxprobeError, match="no parquet file"):
        write_published_pack("mrcr", tmp_path / "missing.parquet", tmp_path / "b.jsonl", "local")


def test_published_meta_is_what_its_type_says(tmp_path) -> None:
    from ctxprobe.core.case_meta import PublishedGraphwalksMeta, PublishedMrcrMeta
    from ctxprobe.families.graphwalks.task_published import graphwalks_cases
    from ctxprobe.families.mrcr.task_published import mrcr_cases
    from ctxprobe.tokenizers import resolve_tokenizer

    tok = resolve_tokenizer("local")
    _write(tmp_path / "m.parquet", _mrcr_rows())
    _write(tmp_path / "g.parquet", _graphwalks_rows())
    for kind, cases in (("mrcr", mrcr_cases(tmp_path / "m.parquet", tok)),
                        ("graphwalks", graphwalks_cases(tmp_path / "g.parquet", tok, parse="card"))):
        declared: Any = {"graphwalks": PublishedGraphwalksMeta, "mrcr": PublishedMrcrMeta}[kind]
        names = declared.__required_keys__ | declared.__optional_keys__  # type: ignore[attr-defined]
        for case in cases:
            assert declared.__required_keys__ <= case.meta.keys() <= names  # type: ignore[attr-defined]
            assert case.max_tokens == case.meta["tokens_to_generate"]
            assert case.meta["source"] == f"openai/{kind}"
    assert case.meta["parse"] == "card"
