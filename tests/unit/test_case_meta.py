"""Each built-in family's case meta is what its TypedDict says (in the family's own package,
``families/<name>/task_meta.py``; RULER's ``task/meta.py``): every required key present, no key the type does not name, and each value of the declared type.
The type checker checks the readers against these types; this checks the types against
the cases the families really build."""

from __future__ import annotations

import json
import types
import typing
from typing import Any, Literal, get_args, get_origin, get_type_hints

import pytest

from ctxprobe.core.case import Cell
from ctxprobe.core.case_meta import case_meta
from ctxprobe.families.aggregation.task_meta import AggregationMeta
from ctxprobe.families.documents.task_meta import DocumentsMeta
from ctxprobe.families.graphwalks.task_meta import GraphwalksMeta
from ctxprobe.families.mrcr.task_meta import MrcrMeta
from ctxprobe.families.multihop.task_meta import MultihopMeta
from ctxprobe.families.niah.task_meta import NiahMeta, niah_meta
from ctxprobe.families.nolima.task_meta import NolimaMeta
from ctxprobe.families.phonebook.task_meta import PhonebookMeta
from ctxprobe.families.ruler.task.meta import RulerMeta
from ctxprobe.families.vartrack.task_meta import VartrackMeta
from ctxprobe.haystack.context import BuildContext
from ctxprobe.core.family_lookup import make_family, validate_params
from ctxprobe.tokenizers import resolve_tokenizer


#: Each family's meta type, from its own package.
META_TYPES: dict[str, type] = {
    "niah": NiahMeta, "vartrack": VartrackMeta, "aggregation": AggregationMeta, "documents": DocumentsMeta,
    "multihop": MultihopMeta, "graphwalks": GraphwalksMeta, "mrcr": MrcrMeta, "nolima": NolimaMeta,
    "phonebook": PhonebookMeta, "ruler": RulerMeta,
}


def _fits(value: object, hint: Any) -> bool:
    """Whether ``value`` has the declared type (containers checked one level deep)."""
    origin = get_origin(hint)
    if hint is Any:
        return True
    if origin is Literal:
        return value in get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, arm) for arm in get_args(hint))
    if origin is list:
        (item,) = get_args(hint)
        return isinstance(value, list) and all(_fits(v, item) for v in value)
    if origin is dict:
        return isinstance(value, dict)
    if hint is type(None):
        return value is None
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(hint, type) and typing.is_typeddict(hint):
        return isinstance(value, dict) and not _mismatches(value, hint)
    return isinstance(value, hint)


def _mismatches(meta: dict[str, Any], kind: type) -> list[str]:
    hints = get_type_hints(kind)
    required: frozenset[str] = kind.__required_keys__  # type: ignore[attr-defined]
    problems = [f"missing {k}" for k in sorted(required - meta.keys())]
    problems += [f"undeclared {k}" for k in sorted(meta.keys() - hints.keys())]
    problems += [f"{k}={meta[k]!r} is not {hints[k]}" for k in sorted(meta.keys() & hints.keys())
                 if not _fits(meta[k], hints[k])]
    return problems


@pytest.fixture(scope="module")
def ctx() -> BuildContext:
    return BuildContext(resolve_tokenizer("local"), None)


def _case_meta(ctx: BuildContext, family: str, params: dict[str, Any], length: int = 1024, depth: float = 0.5,
               rep: int = 0) -> dict[str, Any]:
    fam = make_family(family, ctx)
    case = fam.generate(Cell(family, length, depth), rep, seed=3, params=validate_params(family, params))
    meta = json.loads(json.dumps(case.meta))  # as stored
    assert meta == case.meta
    return meta


@pytest.mark.parametrize("family, params, depth", [
    ("niah", {}, 0.5),
    ("niah", {"variant": "multikey"}, 0.5),
    ("niah", {"variant": "multivalue"}, 0.5),
    ("niah", {"variant": "multiquery"}, 0.5),
    ("vartrack", {}, 0.5),
    ("aggregation", {"variant": "common-words"}, 0.5),
    ("aggregation", {"variant": "frequent-words"}, 0.5),
    ("multihop", {}, 0.5),
    ("graphwalks", {}, 0.5),
    ("mrcr", {}, 0.5),
    ("phonebook", {"unit": "entries", "needles": [4]}, 0.0),
    ("ruler", {"task": "niah_multikey_1"}, 0.5),
    ("ruler", {"task": "vt"}, 0.5),
    ("ruler", {"task": "cwe"}, 0.5),
    ("ruler", {"task": "fwe"}, 0.5),
])
def test_built_meta_matches_its_type(ctx: BuildContext, family: str, params: dict[str, Any], depth: float) -> None:
    length = 40 if family == "phonebook" else 1024
    meta = _case_meta(ctx, family, params, length=length, depth=depth)
    assert _mismatches(meta, META_TYPES[family]) == []


def test_documents_meta_matches_its_type(ctx: BuildContext, tmp_path) -> None:
    (tmp_path / "vault.md").write_text("The north vault opens with the access code Kelvor-Dane, kept by the warden.\n")
    qa = tmp_path / "qa.jsonl"
    qa.write_text(json.dumps({"document": "vault.md", "question": "What is the access code for the north vault?",
                              "answer": "Kelvor-Dane", "aliases": ["Kelvor Dane"]}) + "\n")
    meta = _case_meta(ctx, "documents", {"docs": str(tmp_path), "qa": str(qa)}, length=512)
    assert _mismatches(meta, META_TYPES["documents"]) == []
    assert case_meta(meta).get("aliases") == ["Kelvor Dane"]  # the generic view reads the family's key


def test_the_check_catches_a_wrong_meta(ctx: BuildContext) -> None:
    meta = _case_meta(ctx, "niah", {"variant": "multiquery"})
    assert niah_meta(meta)["needles"][0]["key"] in niah_meta(meta)["keys"]
    assert _mismatches({**meta, "extra": 1}, META_TYPES["niah"]) == ["undeclared extra"]
    assert _mismatches({k: v for k, v in meta.items() if k != "question"}, META_TYPES["niah"]) == ["missing question"]
    bad = {**meta, "needles": [{**meta["needles"][0], "token_offset": "7"}]}
    assert _mismatches(bad, META_TYPES["niah"]) == [f"needles={bad['needles']!r} is not {get_type_hints(META_TYPES['niah'])['needles']}"]
    book = _case_meta(ctx, "phonebook", {"unit": "entries", "needles": [4]}, length=40, depth=0.0)
    assert _mismatches({**book, "method": "other"}, PhonebookMeta) == [
        f"method='other' is not {get_type_hints(PhonebookMeta)['method']}"]
