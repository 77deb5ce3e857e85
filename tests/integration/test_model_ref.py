"""The one model-reference grammar: every spelling parsed once into a typed ModelRef that
round-trips through its canonical string, the boundaries of the grammar ('@' inside a
name, '?' inside a URL, options on sims, paths), and a spec carrying the type while run
ids, stored specs and resumes stay what they were."""

from __future__ import annotations

import json
import pickle

import pytest
import yaml

from ctxprobe.errors import CtxprobeError
from ctxprobe.spec import make_spec
from ctxprobe.spec.names import ModelRef, as_ref, parse_model


@pytest.fixture(autouse=True)
def _no_base_url_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_BASE_URL", "VLLM_BASE_URL", "SGLANG_BASE_URL"):
        monkeypatch.delenv(var, raising=False)


# (typed, canonical spec, provider, name, options, base_url)
CASES = [
    ("openai/gpt-4o", "openai:gpt-4o", "openai", "gpt-4o", {}, None),
    ("openai:gpt-4o", "openai:gpt-4o", "openai", "gpt-4o", {}, None),
    ("sim/decay?cliff=3000&width=1", "sim:decay?cliff=3000&width=1", "sim", "decay", {"cliff": "3000", "width": "1"}, None),
    ("sim:decay?cliff=3000&width=1", "sim:decay?cliff=3000&width=1", "sim", "decay", {"cliff": "3000", "width": "1"}, None),
    ("anthropic/claude-sonnet-4-5?thinking=2048", "anthropic:claude-sonnet-4-5?thinking=2048", "anthropic",
     "claude-sonnet-4-5", {"thinking": "2048"}, None),
    # '@' inside a path or a name is the name's: only '@http(s)://' starts a served model's URL
    ("llamacpp:/models/x@v2.gguf", "llamacpp:/models/x@v2.gguf", "llamacpp", "/models/x@v2.gguf", {}, None),
    ("llamacpp:/m/with:colon.gguf", "llamacpp:/m/with:colon.gguf", "llamacpp", "/m/with:colon.gguf", {}, None),
    ("hf:/models/qwen?dtype=bfloat16", "hf:/models/qwen?dtype=bfloat16", "hf", "/models/qwen", {"dtype": "bfloat16"}, None),
    ("openai-compat:org/m@8bit@http://h:1/v1/", "openai-compat:org/m@8bit@http://h:1/v1", "openai-compat", "org/m@8bit",
     {}, "http://h:1/v1"),
    # a '?' inside the URL is the URL's, one before the '@' is the model's options
    ("openai-compat:q@http://h:1/v1?api-version=2", "openai-compat:q@http://h:1/v1?api-version=2", "openai-compat", "q",
     {}, "http://h:1/v1?api-version=2"),
    ("openai-compat:q?seed=1@https://h/v1?x=y", "openai-compat:q?seed=1@https://h/v1?x=y", "openai-compat", "q",
     {"seed": "1"}, "https://h/v1?x=y"),
    ("local", "local", "local", "", {}, None),
]


@pytest.mark.parametrize(("typed", "spec", "provider", "name", "options", "url"), CASES)
def test_every_spelling_parses_once_and_round_trips(typed: str, spec: str, provider: str, name: str,
                                                     options: dict[str, str], url: str | None) -> None:
    ref = parse_model(typed)
    assert isinstance(ref, ModelRef) and isinstance(ref, str)
    assert (ref.spec, ref.provider, ref.name, ref.options, ref.base_url) == (spec, provider, name, options, url)
    assert ref == spec and hash(ref) == hash(spec) and type(ref.spec) is str
    again = parse_model(ref.spec)  # the canonical string parses back to the same parts
    assert (again.provider, again.name, again.query, again.base_url, again.bare) == \
        (ref.provider, ref.name, ref.query, ref.base_url, ref.bare)
    assert as_ref(ref) is ref  # already typed: never parsed again
    back = pickle.loads(pickle.dumps(ref))  # build workers and Ray get the parts, not a string
    assert isinstance(back, ModelRef) and (back.spec, back.name, back.base_url) == (ref.spec, ref.name, ref.base_url)
    assert json.loads(json.dumps({"m": ref})) == {"m": spec}
    with pytest.raises(AttributeError):
        ref.name = "other"  # type: ignore[misc]


def test_identity_and_price_keys_cut_the_parts_not_the_string() -> None:
    served = parse_model("openai-compat:q?seed=1@http://h:1/v1?x=y")
    assert served.identity == "openai-compat:q?seed=1"
    assert served.price_keys() == ("openai-compat:q?seed=1@http://h:1/v1?x=y", "openai-compat:q@http://h:1/v1?x=y",
                                   "openai-compat:q?seed=1", "openai-compat:q")
    path = parse_model("llamacpp:/models/x@v2.gguf")
    assert path.identity == path.spec and path.price_keys() == ("llamacpp:/models/x@v2.gguf",)
    assert parse_model("sim:decay?cliff=3000").price_keys() == ("sim:decay?cliff=3000", "sim:decay")


def test_a_price_file_key_may_name_a_server_model_without_its_url() -> None:
    ref = parse_model("openai-compat:my-model", located=False)
    assert (ref.provider, ref.name, ref.base_url) == ("openai-compat", "my-model", None)
    with pytest.raises(CtxprobeError, match="needs the server's URL"):
        parse_model("openai-compat:my-model")


@pytest.mark.parametrize("bad", ["openai-compat:@http://x/v1", "openai-compat:m@ftp://x", "openai-compat:m@http://",
                                 "openai-compat:m@http://u:p@h/v1", "nosuch:thing", "sim/"])
def test_bad_references_are_one_line_errors(bad: str) -> None:
    with pytest.raises(CtxprobeError) as info:
        parse_model(bad)
    assert "\n" not in str(info.value) and "u:p" not in str(info.value)


def test_a_stored_model_of_a_provider_no_longer_installed_is_read_by_the_grammar() -> None:
    ref = as_ref("gone-plugin:m?k=v@http://h/v1")
    assert (ref.provider, ref.name, ref.query, ref.base_url) == ("gone-plugin", "m", "k=v", "http://h/v1")
    assert ref.spec == "gone-plugin:m?k=v@http://h/v1"


def test_the_spec_carries_the_type_and_serialises_to_the_same_string() -> None:
    spec = make_spec({"model": "sim/decay?cliff=3000&width=1", "lengths": "1k"})
    assert isinstance(spec.model, ModelRef) and spec.model.provider == "sim" and spec.model.options["cliff"] == "3000"
    dumped = spec.model_dump()
    assert type(dumped["model"]) is str and dumped["model"] == "sim:decay?cliff=3000&width=1"
    assert yaml.safe_load(yaml.safe_dump(dumped))["model"] == "sim:decay?cliff=3000&width=1"  # a plain str in YAML
    assert json.loads(spec.model_dump_json())["model"] == "sim:decay?cliff=3000&width=1"
    assert make_spec(dumped).model == spec.model  # what was stored reads back as the same ref
    served = make_spec({"model": "vllm/org/m:tag", "base_url": "http://127.0.0.1:8000/v1/", "lengths": "1k"})
    assert (served.model.provider, served.model.name, served.model.base_url) == \
        ("openai-compat", "org/m:tag", "http://127.0.0.1:8000/v1")
    assert isinstance(make_spec({}).model, ModelRef) and make_spec({}).model.bare  # the default: local
    from ctxprobe.spec import Spec

    assert Spec.model_json_schema()["properties"]["model"]["type"] == "string"  # a string to every schema reader
    assert Spec.model_validate_json('{"model": "sim/perfect"}').model.provider == "sim"
    with pytest.raises(CtxprobeError):
        make_spec({"model": 3})


@pytest.mark.parametrize(("model", "tokenizer", "run_id"), [
    # computed with the code before the reference was typed (commit 2a52112)
    ("sim:decay?cliff=3000&width=1", "local", "c1169c23eb2d"),
    ("sim/decay?cliff=3000&width=1", "local", "c1169c23eb2d"),
    ("llamacpp:/models/x@v2.gguf", "local", "a41f2ffa1e7a"),
    ("hf:/models/qwen?dtype=bfloat16", "local", "72b7f1378c8c"),
    ("openai-compat:org/m@8bit@http://127.0.0.1:9/v1", "endpoint:http://127.0.0.1:9/v1?model=org%2Fm%408bit",
     "270d3a9c7c99"),
    ("openai-compat:q@http://127.0.0.1:9/v1?api-version=2", "local", "278777d9d73f"),
    ("local", "local", "686dad3b0074"),
    ("anthropic/claude-sonnet-4-5?thinking=2048", "approx", "2056dc5ce61f"),
])
def test_run_ids_are_those_of_the_string_spec(model: str, tokenizer: str, run_id: str) -> None:
    spec = make_spec({"model": model, "lengths": "1k,2k", "reps": 2})
    assert spec.run_id(tokenizer=tokenizer, version="0.1.0") == run_id


def test_a_stored_spec_loads_and_its_rerun_resumes_the_same_run(tmp_path) -> None:
    from ctxprobe.store import open_existing
    from ctxprobe.sweep.run import run_sweep

    store = tmp_path / "s.sqlite"
    first = run_sweep(make_spec({"model": "sim/decay?cliff=700&width=1", "lengths": "512,1k", "depths": "0,1",
                                 "reps": 1}), store, progress=False)
    assert first.sent == 4 and not first.resumed
    with open_existing(store) as db:
        stored = db.require_run(first.run_id).spec
    assert stored["model"] == "sim:decay?cliff=700&width=1"  # stored as the string it always was
    again = run_sweep(make_spec(json.loads(json.dumps(stored))), store, progress=False)
    assert again.run_id == first.run_id and again.resumed and again.sent == 0


def test_the_type_survives_every_way_a_spec_is_made_and_copied() -> None:
    import copy

    from ctxprobe.models import resolve_provider
    from ctxprobe.spec import Spec
    from ctxprobe.tokenizers import resolve_tokenizer

    direct = Spec(model="sim/decay?cliff=3000&width=1")  # Python, without make_spec
    assert isinstance(direct.model, ModelRef) and direct.model.spec == "sim:decay?cliff=3000&width=1"
    for copied in (direct.model_copy(deep=True).model, copy.deepcopy(direct.model), copy.copy(direct.model)):
        assert isinstance(copied, ModelRef) and copied.options == {"cliff": "3000", "width": "1"}
    # the simulator is made from the parts the parser cut: its kind and options
    sim = resolve_provider(direct.model, resolve_tokenizer("approx"))
    assert sim.name == "sim:decay?cliff=3000&width=1"
    with pytest.raises(CtxprobeError, match="given twice"):
        resolve_provider(parse_model("sim:decay?cliff=1&cliff=2"), resolve_tokenizer("approx"))
