"""Model names people already type, "did you mean", and a run identity without the URL."""

from __future__ import annotations


import pytest

from ctxprobe.errors import CtxprobeError
from ctxprobe.spec.names import canonical_model, location_free
from ctxprobe.models import resolve_provider
from ctxprobe.sim.server import SimServer
from ctxprobe.spec import make_spec
from ctxprobe.sweep.run import run_sweep
from ctxprobe.tokenizers import resolve_tokenizer


@pytest.mark.parametrize(("name", "canonical"), [
    ("openai/gpt-4o", "openai:gpt-4o"),
    ("anthropic/claude-sonnet-4-5", "anthropic:claude-sonnet-4-5"),
    ("gemini/gemini-2.5-flash", "gemini:gemini-2.5-flash"),
    ("google/gemini-2.5-flash", "gemini:gemini-2.5-flash"),
    ("sim/blind-middle", "sim:blind-middle"),
    ("openai:gpt-4o", "openai:gpt-4o"),  # today's forms are unchanged
    ("sim:decay?cliff=4096", "sim:decay?cliff=4096"),
    ("llamacpp:/m/x.gguf", "llamacpp:/m/x.gguf"),
    ("hf:/models/qwen", "hf:/models/qwen"),
    ("openai-compat:qwen@http://h:1/v1", "openai-compat:qwen@http://h:1/v1"),
    ("local", "local"),
])
def test_canonical_forms(name: str, canonical: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert canonical_model(name) == canonical
    assert make_spec({"model": name}).model == canonical


def test_server_models_take_the_base_url_flag_then_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_BASE_URL", "VLLM_BASE_URL", "SGLANG_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(CtxprobeError, match="pass --base-url .* or set VLLM_BASE_URL or OPENAI_BASE_URL"):
        canonical_model("vllm/Qwen/Qwen2.5-7B")
    assert canonical_model("vllm/Qwen/Qwen2.5-7B", "http://127.0.0.1:8000/v1/") == \
        "openai-compat:Qwen/Qwen2.5-7B@http://127.0.0.1:8000/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://env:1/v1")
    assert canonical_model("openai-api/m") == "openai-compat:m@http://env:1/v1"
    assert canonical_model("openai-compat:m") == "openai-compat:m@http://env:1/v1"
    assert canonical_model("openai/gpt-4o") == "openai:gpt-4o"  # the SDK reads OPENAI_BASE_URL itself
    assert canonical_model("openai/m", "http://flag:2/v1") == "openai-compat:m@http://flag:2/v1"  # flag wins
    monkeypatch.setenv("VLLM_BASE_URL", "http://vllm:3/v1")
    assert canonical_model("vllm/m") == "openai-compat:m@http://vllm:3/v1"
    with pytest.raises(CtxprobeError, match="must start with http"):
        canonical_model("vllm/m", "localhost:8000")
    spec = make_spec({"model": "vllm/m", "base_url": "http://a:1/v1"})
    assert spec.model == "openai-compat:m@http://a:1/v1"


@pytest.mark.parametrize(("name", "hint"), [
    ("opneai/gpt-4o", "did you mean openai/gpt-4o?"),
    ("antropic/claude-x", "did you mean anthropic/claude-x?"),
    ("smi:perfect", "did you mean sim:perfect?"),
    ("gpt-4o", "did you mean openai/gpt-4o?"),
    ("claude-sonnet-4-5", "did you mean anthropic/claude-sonnet-4-5?"),
    ("zzz/model", "unknown provider 'zzz'"),
    ("nope:thing", "openai-compat:NAME@BASE_URL"),  # "nope" is 0.60 like "openai": below the 0.65 cutoff
    ("whatever", "openai-compat:NAME@BASE_URL"),
])
def test_near_misses_get_a_suggestion(name: str, hint: str) -> None:
    with pytest.raises(CtxprobeError) as info:
        make_spec({"model": name})
    assert hint in str(info.value) and "\n" not in str(info.value)


def test_identity_drops_the_url_only_for_server_models() -> None:
    assert location_free("openai-compat:qwen@http://127.0.0.1:8000/v1") == "openai-compat:qwen"
    assert location_free("sim:perfect") == "sim:perfect"
    a = make_spec({"model": "openai-compat:q@http://127.0.0.1:1/v1", "lengths": "1k"})
    b = make_spec({"model": "openai-compat:q@http://localhost:2/v1", "lengths": "1k"})
    c = make_spec({"model": "openai-compat:other@http://127.0.0.1:1/v1", "lengths": "1k"})
    kw = {"version": "1"}
    assert a.run_id(tokenizer="endpoint:http://127.0.0.1:1/v1?model=q", tokenizer_fingerprint="f1", **kw) == \
        b.run_id(tokenizer="endpoint:http://localhost:2/v1?model=q", tokenizer_fingerprint="f1", **kw)
    assert a.run_id(tokenizer="endpoint:http://127.0.0.1:1/v1?model=q", tokenizer_fingerprint="f1", **kw) != \
        a.run_id(tokenizer="endpoint:http://127.0.0.1:1/v1?model=q", tokenizer_fingerprint="f2", **kw)
    assert a.run_id(tokenizer="local", **kw) != c.run_id(tokenizer="local", **kw)  # another served model


def test_unchanged_specs_keep_their_run_ids() -> None:
    # Ids computed with the code before model names were canonicalised (commit e232c64):
    # stored runs of unchanged specs must still resume, and openai/ is the same run as openai:.
    def run_id(model: str, tokenizer: str) -> str:
        return make_spec({"model": model, "lengths": "1k,2k", "reps": 2}).run_id(tokenizer=tokenizer, version="0.1.0")

    assert run_id("sim:perfect", "local") == run_id("sim/perfect", "local") == "700925d88bd3"
    assert run_id("openai:gpt-4o", "tiktoken:o200k_base") == run_id("openai/gpt-4o", "tiktoken:o200k_base") \
        == "05f8cbdc3438"


def _spec(model: str, **extra: object):
    return make_spec({"model": model, "lengths": "512", "depths": "0,1", "reps": 1, **extra})


def test_a_moved_server_resumes_and_another_tokenizer_does_not(tmp_path, case_requests) -> None:
    store = tmp_path / "s.sqlite"
    tok = resolve_tokenizer("local")
    with SimServer(resolve_provider("sim:perfect", tok), tok) as server:
        port = server.base_url.split(":")[-1].split("/")[0]
        first = run_sweep(_spec("vllm/sim", base_url=f"http://127.0.0.1:{port}/v1"), store, progress=False)
        assert first.sent == 2 and not first.resumed
        moved = run_sweep(_spec(f"openai-compat:sim@http://localhost:{port}/v1"), store, progress=False)
        assert moved.run_id == first.run_id and moved.resumed and moved.sent == 0
        assert case_requests(server) == 2  # nothing was sent twice
    other = resolve_tokenizer("approx")
    with SimServer(resolve_provider("sim:perfect", other), other) as server:
        third = run_sweep(_spec("vllm/sim", base_url=server.base_url), store, progress=False)
    assert third.run_id != first.run_id and not third.resumed
