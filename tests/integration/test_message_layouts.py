"""Message layouts (issue 52's first slice, docs/layouts.md): the same haystack sent as one
user message (``single``, the default), as prior user/assistant turns (``turns``) or as the
results of earlier tool calls (``tools``). Checked here: the defaults change no run id or
stored spec; each layout's case counts exactly its target with the chat template that
renders it (the tool declaration included); the evidence's turn takes its role and the case
says how many turns back it sits; what cannot be counted or sent is refused in one line
before anything is sent; sims read every message; requests pass the SDK's types; runs and
variants in different layouts pair case by case."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ctxprobe.cases.families import check_families, make_labelled
from ctxprobe.core.case import Cell
from ctxprobe.core.tools import READ_TOOL, check_renders_tools, declared_tools
from ctxprobe.errors import CtxprobeError
from ctxprobe.haystack.context import BuildContext
from ctxprobe.haystack.fill import fill_tolerance
from ctxprobe.haystack.layout import conversation, split_turns, stored_layout_line
from ctxprobe.models import resolve_provider
from ctxprobe.models.base import GenerateRequest
from ctxprobe.report.compare_runs import compare_runs
from ctxprobe.report.load import load_report
from ctxprobe.sim.server import SimServer
from ctxprobe.sim.wire import BadRequest, parse_request
from ctxprobe.spec import PromptLayout, make_spec, merge_spec
from ctxprobe.spec.variants import expand_variants, parse_variants
from ctxprobe.sweep.run import run_sweep
from ctxprobe.tokenizers import resolve_tokenizer

FAMILIES = ("niah", "multihop", "vartrack", "aggregation", "documents")
DOC = "The access code for the north vault is Kelvor-Dane. Staff rotate the code every season."


@pytest.fixture(scope="module")
def local():
    return resolve_tokenizer("local")


@pytest.fixture(scope="module")
def tools_tok(hf_tools_dir: Path):
    return resolve_tokenizer(f"hf:{hf_tools_dir}")


@pytest.fixture(scope="module")
def docs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("docs")
    (d / "vault.md").write_text(DOC + "\n")
    qa = d.parent / f"{d.name}-qa.jsonl"
    qa.write_text(json.dumps({"document": "vault.md", "question": "What is the access code for the north vault?",
                              "answer": "Kelvor-Dane"}) + "\n")
    return {"docs": str(d), "qa": str(qa)}


def build(tok: Any, family: str, layout: PromptLayout, params: dict[str, Any], length: int = 2048,
          depth: float = 0.3):
    family_params = params if family == "documents" else {}
    fam, validated = make_labelled(family, family_params, BuildContext(tok, None, layout))
    return fam.generate(Cell(family, length, depth), 0, seed=5, params=validated)


# -- spec: the defaults change nothing ---------------------------------------------------------

def test_default_message_fields_stay_out_of_run_ids_and_stored_specs() -> None:
    base = {"model": "sim:perfect", "lengths": "1k"}
    plain = make_spec(base).identity(tokenizer="local", version="x")
    explicit = make_spec({**base, "layout": {"messages": "single", "turn_tokens": 500}}).identity(
        tokenizer="local", version="x")
    assert plain == explicit and "layout" not in plain
    moved = make_spec({**base, "layout": {"instruction": "after"}})
    assert moved.identity(tokenizer="local", version="x")["layout"] == {"instruction": "after", "separator": 0}
    assert moved.model_dump()["layout"] == {"instruction": "after", "separator": 0}  # as stored before
    turns = make_spec({**base, "layout": {"messages": "turns", "turn_tokens": "1k"}})
    assert turns.identity(tokenizer="local", version="x")["layout"] == {
        "instruction": "before", "separator": 0, "messages": "turns", "turn_tokens": 1024}
    assert turns.identity(tokenizer="local", version="x") != plain


def test_flags_and_variant_spellings_set_the_layout() -> None:
    spec = merge_spec(None, {"model": "sim:perfect", "messages": "tools", "turn_tokens": "300"}, family="niah")
    assert (spec.layout.messages, spec.layout.turn_tokens, spec.layout.role) == ("tools", 300, "tool")
    parsed = parse_variants("one:layout=single, chat:layout.messages=turns+evidence_role=assistant, "
                            "agent:messages=tools+turn_tokens=1k")
    labels = expand_variants({"niah": {}}, parsed)
    assert labels["niah~one"]["variant_layout"] == {"messages": "single"}
    assert labels["niah~chat"]["variant_layout"] == {"messages": "turns", "evidence_role": "assistant"}
    assert labels["niah~agent"]["variant_layout"] == {"messages": "tools", "turn_tokens": "1k"}
    check_families(make_spec({"model": "sim:perfect", "families": labels}))  # each variant's layout is valid


@pytest.mark.parametrize("layout, words", [
    ({"messages": "tools", "evidence_role": "user"}, "evidence_role=user does not fit messages=tools"),
    ({"messages": "turns", "evidence_role": "tool"}, "evidence_role=tool does not fit messages=turns"),
])
def test_an_evidence_role_the_layout_cannot_give_is_refused(layout: dict[str, str], words: str) -> None:
    with pytest.raises(CtxprobeError, match=words):
        PromptLayout(**layout)  # type: ignore[arg-type]
    bad = expand_variants({"niah": {}}, parse_variants("a, b:" + "+".join(f"{k}={v}" for k, v in layout.items())))
    with pytest.raises(CtxprobeError, match=words):
        check_families(make_spec({"model": "sim:perfect", "families": bad}))


# -- building: exact lengths, the evidence's turn, turns back ------------------------------------

def _check_exact(tok: Any, case: Any, target: int) -> None:
    assert case.token_count == tok.count_chat(case.messages) == len(case.prompt_ids)
    assert target - fill_tolerance(target) <= case.token_count <= target


@pytest.mark.parametrize("family", FAMILIES)
def test_turns_count_exactly_and_alternate_with_the_question_last(local, tools_tok, docs, family: str) -> None:
    single = build(local, family, PromptLayout(), docs)
    for tok in (local, tools_tok):
        case = build(tok, family, PromptLayout(messages="turns", turn_tokens=300), docs)
        _check_exact(tok, case, 2048)
        roles = [m["role"] for m in case.messages]
        assert len(roles) >= 3 and roles[0] == "user" and roles[-1] == "user"
        assert all(a != b for a, b in zip(roles, roles[1:])), roles  # strictly alternating
        first, last = case.messages[0]["content"], case.messages[-1]["content"]
        whole = single.messages[0]["content"]
        instruction, question = whole.split("\n\n")[0], whole.rsplit("\n\n", 1)[1]
        assert first == instruction or first.startswith(instruction + "\n\n")
        assert last.endswith(question)
        if tok is local and family != "aggregation":
            # the same seeded content in every layout (aggregation designs its list to the
            # room the turns leave, so its counts differ: docs/layouts.md)
            assert (single.expected, single.distractors) == (case.expected, case.distractors)


@pytest.mark.parametrize("family", FAMILIES)
def test_tools_count_exactly_with_the_declaration_and_each_call_answered(tools_tok, docs, family: str) -> None:
    case = build(tools_tok, family, PromptLayout(messages="tools", turn_tokens=300), docs)
    _check_exact(tools_tok, case, 2048)
    msgs = case.messages
    assert msgs[0]["role"] == "user" and msgs[-1]["role"] == "user"
    pairs = msgs[1:-1]
    assert len(pairs) >= 4 and len(pairs) % 2 == 0
    for call, result in zip(pairs[::2], pairs[1::2]):
        assert call["role"] == "assistant" and call["content"] is None
        (tc,) = call["tool_calls"]
        assert tc["function"]["name"] == READ_TOOL["function"]["name"]
        assert result == {"role": "tool", "tool_call_id": tc["id"], "content": result["content"]}
    assert declared_tools(msgs) == [READ_TOOL]
    rendered = tools_tok.render_chat(msgs)
    assert READ_TOOL["function"]["description"] in rendered  # the declaration is part of the count
    without = tools_tok.count_chat([m for m in msgs if m.get("role") == "user"])
    assert case.token_count > without


def test_the_evidence_turn_takes_its_role_and_the_case_says_how_far_back(local) -> None:
    for role in ("user", "assistant"):
        case = build(local, "niah", PromptLayout(messages="turns", turn_tokens=200, evidence_role=role), {},
                     depth=0.2)
        needle = case.meta["needle"]
        (at,) = [i for i, m in enumerate(case.messages) if needle in (m["content"] or "")]
        assert case.messages[at]["role"] == role
        assert case.meta["turns_back"] == len(case.messages) - 1 - at >= 3
    deep = build(local, "niah", PromptLayout(messages="turns", turn_tokens=200), {}, depth=0.0)
    late = build(local, "niah", PromptLayout(messages="turns", turn_tokens=200), {}, depth=1.0)
    assert deep.meta["turns_back"] > late.meta["turns_back"]
    assert "turns_back" not in build(local, "niah", PromptLayout(), {}).meta  # the default meta is unchanged


def test_the_haystack_is_cut_only_at_sentence_boundaries() -> None:
    text = " ".join(f"Sentence number {i} ends here." for i in range(200))
    chunks = split_turns(text, 100)
    assert len(chunks) == round(len(text) / 400) and " ".join(chunks) == text
    assert all(c.endswith(".") for c in chunks)


def test_what_cannot_be_counted_or_built_is_refused_in_one_line(local, tools_tok) -> None:
    with pytest.raises(CtxprobeError, match="--layout tools: the chat template of local") as err:
        build(local, "niah", PromptLayout(messages="tools"), {})
    assert "\n" not in str(err.value)
    with pytest.raises(CtxprobeError, match="cannot count tool calls"):
        check_renders_tools(resolve_tokenizer("approx"))
    check_renders_tools(tools_tok)  # renders all three
    with pytest.raises(CtxprobeError, match="mrcr sends its prompt as it is"):
        make_labelled("mrcr", {}, BuildContext(local, None, PromptLayout(messages="turns")))


# -- sending ----------------------------------------------------------------------------------

def test_providers_without_tool_messages_refuse_before_sending(monkeypatch: pytest.MonkeyPatch,
                                                               hf_tools_dir: Path) -> None:
    from ctxprobe.providers.hf.engine import HFLocalProvider
    from ctxprobe.providers.hf.options import HFModelOptions

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-0000000000000000")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0000000000000000")
    monkeypatch.setenv("GEMINI_API_KEY", "test-000000000000000000")
    local = HFLocalProvider(hf_tools_dir, HFModelOptions())  # transformers' tools= is not wired: refused
    why = local.layout_refusal("tools")
    assert why and "\n" not in why and "--layout turns" in why and str(hf_tools_dir) in why
    assert local.layout_refusal("turns") is None
    # the Responses API (gpt-5-pro) and Gemini send function calls and results of their own shape
    for name in ("openai:gpt-4o-mini", "openai:gpt-5-pro", "anthropic:claude-sonnet-4-5", "gemini:gemini-2.5-flash"):
        assert resolve_provider(name, None).layout_refusal("tools") is None  # type: ignore[arg-type]


def test_the_sim_server_takes_tool_messages_only_with_the_tool_declared(tools_tok) -> None:
    msgs = conversation("Read the notes.", "One. Two. Three.", "What?", PromptLayout(messages="tools", turn_tokens=16))
    ok = parse_request({"model": "m", "messages": msgs, "tools": [READ_TOOL]}, chat=True)
    assert ok.messages == msgs  # tool calls and ids kept: the server counts what was sent
    with pytest.raises(BadRequest, match="declares none"):
        parse_request({"model": "m", "messages": msgs}, chat=True)
    orphan = [msgs[0], {"role": "tool", "tool_call_id": "call_x", "content": "x"}, msgs[-1]]
    with pytest.raises(BadRequest, match="tool_call_id"):
        parse_request({"model": "m", "messages": orphan, "tools": [READ_TOOL]}, chat=True)


def test_tool_requests_pass_openais_types(monkeypatch: pytest.MonkeyPatch, tools_tok) -> None:
    pytest.importorskip("openai")
    from contract_checks import check_request
    from fake_llm_apis import FakeServer, openai_route
    from fake_served_apis import vllm_route
    from ctxprobe.providers.openai_compat.api import OpenAICompatProvider

    msgs = build(tools_tok, "niah", PromptLayout(messages="tools", turn_tokens=300), {}, length=1024).messages
    request = GenerateRequest(messages=msgs, max_tokens=32)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-contract-test-000000000000")
    with FakeServer(openai_route) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")

        async def go() -> None:
            provider = resolve_provider("openai:gpt-4o-mini", None)  # type: ignore[arg-type]
            try:
                await provider.generate(request)
            finally:
                await provider.aclose()

        asyncio.run(go())
        sent = [(p, b) for p, _, b in server.requests]
    with FakeServer(vllm_route(parser=False)) as served:  # type: ignore[arg-type]
        compat = OpenAICompatProvider("qwen3", served.url + "/v1", api_key="")

        async def go2() -> None:
            try:
                await compat.generate(request)
            finally:
                await compat.aclose()

        asyncio.run(go2())
        sent += [(p, b) for p, _, b in served.requests if p.endswith("/chat/completions")]
    assert len(sent) == 2
    for path, body in sent:
        assert body["tools"] == [READ_TOOL] and body["messages"] == msgs
        assert check_request(path, body, server_fields=True)


@pytest.fixture
def served(tools_tok) -> Iterator[str]:
    with SimServer(resolve_provider("sim:perfect", tools_tok), tools_tok) as server:
        yield server.start()


def test_a_loopback_sweep_in_each_layout_reads_every_message(tmp_path: Path, served: str, hf_tools_dir: Path) -> None:
    store = tmp_path / "l.sqlite"
    runs = {}
    for messages in ("single", "turns", "tools"):
        spec = make_spec({"model": f"openai-compat:sim@{served}", "tokenizer": f"hf:{hf_tools_dir}",
                          "lengths": "1k,2k", "depths": "0,0.5,1", "reps": 1, "families": {"niah": {}},
                          "layout": {"messages": messages, "turn_tokens": 256}})
        runs[messages] = run_sweep(spec, store, progress=False).run_id
        report = load_report(runs[messages], store)
        (profile,) = report.profiles
        # the sim found each needle in whatever turn (or tool result) it sat
        assert [(s.n, s.mean) for s in profile.lengths] == [(3, 1.0), (3, 1.0)]
        by_back = report.to_dict().get("turns_back")
        if messages == "single":
            assert by_back is None  # the default layout's report is unchanged
        else:  # accuracy by how far back the needle sat: each depth lands at its own distance
            assert by_back and {r["family"] for r in by_back} == {"niah"} and sum(r["n"] for r in by_back) == 6
            assert all(r["mean"] == 1.0 for r in by_back) and len({r["turns_back"] for r in by_back}) >= 3
        line = stored_layout_line(report.run.spec)
        assert line is not None and (messages == "single" or ("tool results" if messages == "tools"
                                                              else "prior chat turns") in line)
    assert len(set(runs.values())) == 3
    for other in ("turns", "tools"):
        cmp = compare_runs(runs["single"], runs[other], store)
        assert cmp.paired_by == "content" and cmp.n_paired == 6 and cmp.only_a == cmp.only_b == 0


def test_three_layouts_as_variants_pair_case_by_case(tmp_path: Path, hf_tools_dir: Path) -> None:
    families = expand_variants({"niah": {}}, parse_variants("one:layout=single, chat:layout=turns, agent:layout=tools"))
    spec = make_spec({"model": "sim:perfect", "tokenizer": f"hf:{hf_tools_dir}",
                      "lengths": "1k,2k", "depths": "0,1", "reps": 2, "families": families,
                      "layout": {"turn_tokens": 256}})
    store = tmp_path / "v.sqlite"
    run_id = run_sweep(spec, store, progress=False).run_id
    report = load_report(run_id, store)
    by_variant = {v["variant"]: v for v in report.variants}
    assert set(by_variant) == {"niah~chat", "niah~agent"}
    for v in by_variant.values():
        assert v["reference"] == "niah~one" and v["paired"] == 2 * 2 * 2
    line = stored_layout_line(report.run.spec)
    assert line is not None and "chat: turns" in line and "agent: tools" in line


def test_anthropic_sends_and_counts_tool_use_and_tool_result_blocks(monkeypatch: pytest.MonkeyPatch,
                                                                   tools_tok) -> None:
    pytest.importorskip("anthropic")
    from contract_checks import check_request
    from fake_llm_apis import FakeServer, anthropic_route

    msgs = build(tools_tok, "niah", PromptLayout(messages="tools", turn_tokens=300), {}, length=1024).messages
    calls = [m["tool_calls"][0] for m in msgs if m.get("tool_calls")]
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-contract-test-000000000000")
    with FakeServer(anthropic_route) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)

        async def go() -> None:
            provider = resolve_provider("anthropic:claude-sonnet-4-5", None)  # type: ignore[arg-type]
            try:
                await provider.generate(GenerateRequest(messages=msgs, max_tokens=32))
                await provider.count_tokens(msgs)  # type: ignore[attr-defined]
            finally:
                await provider.aclose()

        asyncio.run(go())
        sent = list(server.requests)
    assert len(sent) == 2
    for path, _, body in sent:
        assert check_request(path, body)  # MessageCreateParams / MessageCountTokensParams, strictly
        assert body["tools"] == [{"name": "read_file", "description": READ_TOOL["function"]["description"],
                                  "input_schema": READ_TOOL["function"]["parameters"]}]
        turns = body["messages"]
        assert [t["role"] for t in turns] == ["user"] + ["assistant", "user"] * len(calls)
        uses = [b for t in turns if t["role"] == "assistant" for b in t["content"]]
        assert [(u["type"], u["id"], u["input"]) for u in uses] == [
            ("tool_use", c["id"], json.loads(c["function"]["arguments"])) for c in calls]
        results = [b for t in turns[2::2] for b in t["content"] if b["type"] == "tool_result"]
        assert [r["tool_use_id"] for r in results] == [c["id"] for c in calls]
        assert turns[-1]["content"][-1] == {"type": "text", "text": msgs[-1]["content"]}  # the question, last


def test_prefix_hints_read_tool_call_messages_as_empty_text() -> None:
    from ctxprobe.cases.prefixes import group_hints

    layout = PromptLayout(messages="tools", turn_tokens=16)
    texts = ("Alpha one. Beta two. Gamma three.", "Alpha one. Zeta two. Gamma three.", "Xray one. Zeta two. Gamma three.")
    prompts = [conversation("Read the notes.", t, "What?", layout) for t in texts]
    hints = group_hints(prompts, lambda t: len(t.split()), min_tokens=1)
    assert all(h is not None for h in hints)
    # the third differs from the first result's first character: its shared part ends at the
    # tool call before it, whose content is None
    assert [(m.message, m.offset) for m in hints[2].marks] == [(1, 0)]  # type: ignore[union-attr]


def _tools_case(tools_tok) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    msgs = build(tools_tok, "niah", PromptLayout(messages="tools", turn_tokens=300), {}, length=1024).messages
    return msgs, [m["tool_calls"][0] for m in msgs if m.get("tool_calls")]


@pytest.mark.parametrize("model", ["gemini-2.5-flash", "gemini-3-flash-preview"])
def test_gemini_sends_function_call_and_function_response_parts(monkeypatch: pytest.MonkeyPatch, tools_tok,
                                                                 model: str) -> None:
    pytest.importorskip("google.genai")
    from contract_checks import check_request
    from fake_llm_apis import FakeServer, gemini_route

    msgs, calls = _tools_case(tools_tok)
    results = [m["content"] for m in msgs if m["role"] == "tool"]
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", "sk-contract-test-000000000000")
    with FakeServer(gemini_route) as server:
        monkeypatch.setenv("GEMINI_BASE_URL", server.url)

        async def go() -> None:
            provider = resolve_provider(f"gemini:{model}", None)  # type: ignore[arg-type]
            try:
                result = await provider.generate(GenerateRequest(messages=msgs, max_tokens=32))
                assert result.text == "The code is 4819203."
                await provider.count_tokens(msgs)  # type: ignore[attr-defined]
            finally:
                await provider.aclose()

        asyncio.run(go())
        sent = [(p.split("?")[0], b) for p, _, b in server.requests]
    assert [check_request(p, b) for p, b in sent] == ["gemini generateContent", "gemini countTokens"]
    (_, body), (_, count) = sent
    # the declaration, where google-genai puts GenerateContentConfig.tools on the wire (top level;
    # it leaves the schema's field name snake_case, which the API's JSON parser takes too)
    from google.genai import types

    (tool,) = [types.Tool.model_validate(t) for t in body["tools"]]
    (decl,) = tool.function_declarations or []
    assert (decl.name, decl.description, decl.parameters_json_schema) == (
        "read_file", READ_TOOL["function"]["description"], READ_TOOL["function"]["parameters"])
    assert "tools" not in count  # google-genai takes none in the Developer API's count
    sentinel = "c2tpcF90aG91Z2h0X3NpZ25hdHVyZV92YWxpZGF0b3I="  # base64 of b"skip_thought_signature_validator"
    generated = sentinel if model.startswith("gemini-3") else None
    for turns, signature in ((body["contents"], generated), (count["contents"][-len(body["contents"]):], None)):
        assert [t["role"] for t in turns] == ["user"] + ["model", "user"] * len(calls)
        called = [p for t in turns if t["role"] == "model" for p in t["parts"]]
        assert [p["functionCall"] for p in called] == [
            {"id": c["id"], "name": "read_file", "args": json.loads(c["function"]["arguments"])} for c in calls]
        # Gemini 3 refuses replayed calls without a signature: Google's documented one for calls it did not make
        assert {p.get("thoughtSignature") for p in called} == {signature}
        answered = [p["functionResponse"] for t in turns[2::2] for p in t["parts"] if "functionResponse" in p]
        assert answered == [{"id": c["id"], "name": "read_file", "response": {"output": r}}
                            for c, r in zip(calls, results)]
        assert turns[-1]["parts"][-1] == {"text": msgs[-1]["content"]}  # the question, after the last result


def test_gemini_sends_a_tools_conversation_whole_past_its_explicit_cache(monkeypatch: pytest.MonkeyPatch,
                                                                        tools_tok) -> None:
    pytest.importorskip("google.genai")
    from fake_llm_apis import FakeServer, gemini_route

    from ctxprobe.core.prefix import CacheHint, PrefixMark

    msgs, _ = _tools_case(tools_tok)
    plain = [{"role": "user", "content": "The archive opens at dawn. " * 400 + "What is the code?"}]
    mark = PrefixMark(message=2, offset=len(msgs[2]["content"]) // 2, tokens=5000)
    hint = CacheHint(key="niah-L1024-r0", marks=(mark,), size=2, explicit=True)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", "sk-contract-test-000000000000")
    with FakeServer(gemini_route) as server:
        monkeypatch.setenv("GEMINI_BASE_URL", server.url)

        async def go() -> None:
            provider = resolve_provider("gemini:gemini-2.5-flash", None)  # type: ignore[arg-type]
            try:
                await provider.generate(GenerateRequest(messages=msgs, max_tokens=32, cache=hint))
                await provider.generate(GenerateRequest(
                    messages=plain, max_tokens=32, cache=CacheHint(key="plain", marks=(
                        PrefixMark(message=0, offset=len(plain[0]["content"]) // 2, tokens=5000),), size=2,
                        explicit=True)))
            finally:
                await provider.aclose()

        asyncio.run(go())
        paths = [p.split("?")[0].rsplit("/", 1)[-1] for p, _, _ in server.requests]
        bodies = [b for p, _, b in server.requests if p.split("?")[0].endswith(":generateContent")]
    # the tools conversation: no cache, sent whole; the plain prompt of the same kind of hint: cached
    assert paths[0].endswith(":generateContent") and "cachedContent" not in bodies[0]
    assert len(bodies[0]["contents"]) == len(msgs) - 1  # every turn (the question joins the last result's)
    assert paths[1] == "cachedContents" and "cachedContent" in bodies[1]


def test_gemini_count_refuses_a_tools_layout_it_cannot_count_whole(monkeypatch: pytest.MonkeyPatch,
                                                                   tools_tok, local) -> None:
    pytest.importorskip("google.genai")
    from contract_checks import check_request
    from fake_llm_apis import FakeServer, gemini_route

    msgs, calls = _tools_case(tools_tok)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", "sk-contract-test-000000000000")
    with FakeServer(gemini_route) as server:
        monkeypatch.setenv("GEMINI_BASE_URL", server.url)
        tok = resolve_tokenizer("gemini-count:gemini-2.5-flash")
        with pytest.raises(CtxprobeError, match="gemini-count cannot count the tool declaration") as err:
            check_renders_tools(tok)
        assert "\n" not in str(err.value)
        assert tok.count_chat(msgs) > 0  # the calls and results, as parts (a direct count still works)
        (path, _, body), = server.requests
    assert check_request(path, body) == "gemini countTokens"
    parts = [p for c in body["contents"] for p in c["parts"]]
    assert [p["functionCall"]["id"] for p in parts if "functionCall" in p] == [c["id"] for c in calls]
    assert len([p for p in parts if "functionResponse" in p]) == len(calls)


def test_the_responses_api_sends_function_call_items_and_a_function_tool(monkeypatch: pytest.MonkeyPatch,
                                                                         tools_tok) -> None:
    pytest.importorskip("openai")
    from contract_checks import check_request, check_response
    from fake_llm_apis import FakeServer, openai_route

    msgs, calls = _tools_case(tools_tok)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-contract-test-000000000000")
    with FakeServer(openai_route) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")

        async def go() -> None:
            provider = resolve_provider("openai:gpt-5-pro", None)  # type: ignore[arg-type]
            try:
                result = await provider.generate(GenerateRequest(messages=msgs, max_tokens=32))
                assert result.text == "The code is 4819203."
            finally:
                await provider.aclose()

        asyncio.run(go())
        (path, _, body), = server.requests
        (rpath, status, answer), = server.responses
    assert check_request(path, body) == "openai response"  # ResponseCreateParamsNonStreaming, strictly
    assert check_response(rpath, status, answer) == "openai response"
    assert body["tools"] == [{"type": "function", "name": "read_file", "strict": False,
                              "description": READ_TOOL["function"]["description"],
                              "parameters": READ_TOOL["function"]["parameters"]}]
    items = body["input"]
    assert [i.get("type", i.get("role")) for i in items] == (
        [m["role"] for m in msgs[:1]] + ["function_call", "function_call_output"] * len(calls) + ["user"])
    assert [(i["call_id"], i["name"], i["arguments"]) for i in items if i.get("type") == "function_call"] == [
        (c["id"], "read_file", c["function"]["arguments"]) for c in calls]
    assert [(i["call_id"], i["output"]) for i in items if i.get("type") == "function_call_output"] == [
        (m["tool_call_id"], m["content"]) for m in msgs if m["role"] == "tool"]
    assert items[-1] == {"role": "user", "content": msgs[-1]["content"]}


def test_a_responses_answer_that_calls_the_tool_again_finishes_as_a_tool_call() -> None:
    pytest.importorskip("openai")
    from openai.types.responses import Response

    from fake_llm_apis import responses_reply
    from ctxprobe.providers.openai.responses import parse_response

    reply = responses_reply("gpt-5-pro", "")
    reply["output"] = [{"type": "function_call", "id": "fc_1", "call_id": "call_009", "name": "read_file",
                        "arguments": json.dumps({"path": "notes/part-009.txt"}), "status": "completed"}]
    Response.model_validate(reply)  # the fields read are the SDK's
    result = parse_response(reply)
    assert (result.text, result.finish_reason) == ("", "tool_calls")
    assert parse_response(responses_reply("gpt-5-pro", "4819203")).finish_reason == "stop"


def _llama_server(template: str | None) -> Any:
    """A loopback llama-server's /apply-template (rendering the messages and ``tools`` with
    ``template`` as llama.cpp's jinja does; None: refusing tools, as a server without
    --jinja answers) and /tokenize (a word per token)."""
    from tokenizer_fixtures import QWEN_TOOLS_TEMPLATE

    from ctxprobe.tokenizers.chat_template import render_chat_template

    source = QWEN_TOOLS_TEMPLATE if template == "qwen" else template

    def route(method: str, path: str, headers: dict[str, str], body: dict[str, Any]) -> tuple[int, Any, dict]:
        if path == "/apply-template":
            if source is None and "tools" in body:
                return 500, {"error": {"code": 500, "message": "tools param requires --jinja flag"}}, {}
            return 200, {"prompt": render_chat_template(source or QWEN_TOOLS_TEMPLATE, body["messages"],
                                                        tools=body.get("tools"))}, {}
        if path == "/tokenize":
            return 200, {"tokens": list(range(len(body.get("content", "").split())))}, {}
        return 404, {"error": "no route"}, {}

    return route


#: A template that keeps each message's text and nothing of tools (as SmolLM2's embedded one does).
PLAIN_TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content or '' }}<|im_end|>\n{% endfor %}"
                  "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def test_llama_servers_count_tools_through_apply_template_when_their_template_renders_them(tools_tok) -> None:
    from fake_llm_apis import FakeServer

    from ctxprobe.tokenizers.endpoint import EndpointTokenizer

    msgs, _ = _tools_case(tools_tok)
    plain = [{"role": "user", "content": "What is the code?"}]
    with FakeServer(_llama_server("qwen")) as server:
        tok = EndpointTokenizer(server.url, kind="llama-server")
        check_renders_tools(tok)  # the probe's call, result and declaration came back rendered
        counted = tok.count_chat(msgs)
        tok.count_chat(plain)
        sent = [b for p, _, b in server.requests if p == "/apply-template"]
    assert sent[0]["tools"] == [READ_TOOL] and sent[1] == {"messages": msgs, "tools": [READ_TOOL]}
    assert sent[2] == {"messages": plain}  # no tools, no field: the body of every other layout as before
    rendered = tools_tok.template.render(msgs)  # the same template with the declaration, rendered here
    assert counted == len(rendered.split()) and READ_TOOL["function"]["description"] in rendered
    for template, words in ((PLAIN_TEMPLATE, "drops the tool call, the tool declaration"),
                            (None, "cannot render tool messages")):
        with FakeServer(_llama_server(template)) as server:
            with pytest.raises(CtxprobeError, match=words) as err:
                check_renders_tools(EndpointTokenizer(server.url, kind="llama-server"))
        assert "\n" not in str(err.value)
    with FakeServer(_llama_server("qwen")) as server:  # another kind of server is not sent tools: refused
        with pytest.raises(CtxprobeError, match="cannot count tool calls"):
            check_renders_tools(EndpointTokenizer(server.url, kind="sglang"))


def test_anthropic_caches_the_shared_tool_results_of_a_tools_conversation(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two tools-layout prompts sharing their first 2,880 words (same length: the same cuts): the mark
    falls inside a tool result, whose content is sent as text blocks cut there with
    ``cache_control`` on the block ending at it; the body passes the SDK's types and the
    texts, joined, are the results as built."""
    pytest.importorskip("anthropic")
    from contract_checks import check_request

    from ctxprobe.cases.prefixes import group_hints

    layout = PromptLayout(messages="tools", turn_tokens=500)
    shared = " ".join(f"Sentence {i} of the shared notes." for i in range(480))
    prompts = [conversation("Read the notes.", f"{shared} {tail}", "What?", layout)
               for tail in (" ".join(["The first ending."] * 200), " ".join(["The other ending."] * 200))]
    hints = group_hints(prompts, lambda t: len(t.split()), min_tokens=1024)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-contract-test-000000000000")
    provider = resolve_provider("anthropic:claude-sonnet-4-5", None)  # type: ignore[arg-type]
    for msgs, hint in zip(prompts, hints):
        assert hint is not None and hint.marks
        mark = max((m for m in hint.marks if m.tokens >= 1024), key=lambda m: m.tokens)
        assert msgs[mark.message]["role"] == "tool" and 0 < mark.offset < len(msgs[mark.message]["content"])
        body = provider.request_body(GenerateRequest(messages=msgs, max_tokens=16, cache=hint))
        assert check_request("/v1/messages", body)
        results = [b for t in body["messages"] if t["role"] == "user" and isinstance(t["content"], list)
                   for b in t["content"] if b["type"] == "tool_result"]
        tool_msgs = [m for m in msgs if m["role"] == "tool"]
        joined = ["".join(x["text"] for x in r["content"]) if isinstance(r["content"], list) else r["content"]
                  for r in results]
        assert joined == [m["content"] for m in tool_msgs]
        nth = tool_msgs.index(msgs[mark.message])
        cut = results[nth]["content"]
        assert isinstance(cut, list) and "cache_control" in cut[0] and cut[0]["text"] == msgs[mark.message]["content"][:mark.offset]
        marked = [x for t in body["messages"] if isinstance(t["content"], list) for b in t["content"]
                  for x in ([b] + (b["content"] if b["type"] == "tool_result" and isinstance(b["content"], list) else []))
                  if "cache_control" in x]
        assert 1 <= len(marked) <= 4
    no_cache = provider.request_body(GenerateRequest(messages=prompts[0], max_tokens=16))
    assert all(isinstance(b["content"], str) for t in no_cache["messages"] if isinstance(t["content"], list)
               for b in t["content"] if b["type"] == "tool_result")


def test_openai_count_counts_a_tools_conversation_through_the_responses_api(monkeypatch: pytest.MonkeyPatch) -> None:
    """``openai-count:MODEL`` sends the conversation as the Responses API sends it
    (``function_call``/``function_call_output`` items, the tool declared) to
    ``responses.input_tokens.count``; the body passes the SDK's ``InputTokenCountParams``,
    the answer read is the SDK's ``InputTokenCountResponse``; a tools layout accepts it
    where tiktoken is refused; an API error is one line with no key in it."""
    pytest.importorskip("openai")
    from contract_checks import check_request
    from fake_llm_apis import FakeServer
    from openai.types.responses.input_token_count_response import InputTokenCountResponse

    def route(method: str, path: str, headers: dict[str, str], body: dict[str, Any]) -> Any:
        if path.endswith("/responses/input_tokens") and body.get("model") == "gpt-5":
            n = sum(len(json.dumps(item).split()) for item in body["input"]) + 7 * len(body.get("tools") or [])
            return 200, InputTokenCountResponse(object="response.input_tokens", input_tokens=n).model_dump(), {}
        return 400, {"error": {"message": "no such model", "type": "invalid_request_error"}}, {}

    layout = PromptLayout(messages="tools", turn_tokens=16)
    msgs = conversation("Read the notes.", "Alpha one. Beta two. Gamma three. Delta four.", "What?", layout)
    key = "sk-contract-test-000000000000"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    with FakeServer(route) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
        tok = resolve_tokenizer("openai-count:gpt-5")
        check_renders_tools(tok)  # accepted: the API counts what is sent
        n = tok.count_chat(msgs)
        assert tok.count_chat(msgs) == n  # cached: one request
        bad = resolve_tokenizer("openai-count:gpt-nope")
        with pytest.raises(CtxprobeError) as info:
            bad.count_chat(msgs)
        sent = list(server.requests)
    assert len(sent) == 2 and key not in str(info.value) and "\n" not in str(info.value)
    path, _, body = sent[0]
    assert check_request(path, body) == "openai input_tokens count"
    kinds = [item.get("type", item.get("role")) for item in body["input"]]
    assert kinds.count("function_call") == kinds.count("function_call_output") == sum(1 for m in msgs if m["role"] == "tool")
    assert body["tools"][0]["name"] == READ_TOOL["function"]["name"]
    assert n == sum(len(json.dumps(item).split()) for item in body["input"]) + 7
    with pytest.raises(CtxprobeError, match="cannot count tool calls"):
        check_renders_tools(resolve_tokenizer("tiktoken:o200k_base"))
