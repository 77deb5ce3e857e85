"""Shared tokenizer test material, built offline from the embedded SmolLM2 GGUF.

No model hub is reachable, so the Hugging Face tokenizer under test is *built* from the
GGUF's own vocabulary and merges: a real ``tokenizer.json`` (byte-level BPE, StarCoder/SmolLM
pre-tokenizer) plus a ``tokenizer_config.json`` carrying the GGUF's chat template. That gives
both backends the same tokenizer, so they can be checked against each other.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

# llama.cpp pre-tokenizer names whose regex is GPT-2's, and whether digits are split singly.
_PRE_TOKENIZERS: dict[str, bool] = {"smollm": True, "starcoder": True, "refact": True,
                                    "gpt-2": False, "default": False}
_CONTROL, _USER_DEFINED = 3, 4


@pytest.fixture(scope="session")
def smollm_gguf_path() -> Path:
    from ctxprobe.embedded import embedded_model_path
    from ctxprobe.errors import CtxprobeError

    try:
        return embedded_model_path()
    except CtxprobeError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def smollm_gguf_fields(smollm_gguf_path: Path) -> dict[str, Any]:
    """The GGUF's metadata fields, read once (parsing the file takes a few seconds)."""
    gguf = pytest.importorskip("gguf")
    return dict(gguf.GGUFReader(str(smollm_gguf_path)).fields)


def build_hf_tokenizer_dir(fields: dict[str, Any], out: Path) -> Path:
    """Write tokenizer.json + tokenizer_config.json equivalent to a byte-level BPE GGUF."""
    tk = pytest.importorskip("tokenizers")

    def value(key: str, default: object = None) -> object:
        return fields[key].contents() if key in fields else default

    if value("tokenizer.ggml.model") != "gpt2":
        pytest.skip("only byte-level BPE (gpt2) GGUF vocabularies are converted here")
    pre = str(value("tokenizer.ggml.pre", "default"))
    if pre not in _PRE_TOKENIZERS:
        pytest.skip(f"no Hugging Face equivalent wired up for pre-tokenizer {pre!r}")
    tokens: list[str] = list(value("tokenizer.ggml.tokens"))
    types: list[int] = list(value("tokenizer.ggml.token_type"))
    merges = [tuple(m.split(" ", 1)) for m in value("tokenizer.ggml.merges")]

    tokenizer = tk.Tokenizer(tk.models.BPE(vocab={t: i for i, t in enumerate(tokens)},
                                           merges=merges))
    steps = [tk.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)]
    if _PRE_TOKENIZERS[pre]:
        steps.insert(0, tk.pre_tokenizers.Digits(individual_digits=True))
    tokenizer.pre_tokenizer = tk.pre_tokenizers.Sequence(steps)
    tokenizer.decoder = tk.decoders.ByteLevel()
    tokenizer.add_special_tokens([tk.AddedToken(t, special=True, normalized=False)
                                  for t, k in zip(tokens, types) if k == _CONTROL])
    tokenizer.add_tokens([tk.AddedToken(t, special=False, normalized=False)
                          for t, k in zip(tokens, types) if k == _USER_DEFINED])
    out.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(out / "tokenizer.json"))

    def token(key: str) -> str | None:
        idx = value(key)
        return tokens[int(idx)] if idx is not None else None

    config = {
        "bos_token": token("tokenizer.ggml.bos_token_id"),
        # The dict form transformers writes for AddedToken, to exercise that branch too.
        "eos_token": {"__type": "AddedToken", "content": token("tokenizer.ggml.eos_token_id")},
        "chat_template": value("tokenizer.chat_template"),
        "model_max_length": 1000000000000000019884624838656,  # transformers' "unset"
    }
    (out / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    arch = value("general.architecture")
    ctx = value(f"{arch}.context_length")
    (out / "config.json").write_text(json.dumps({"max_position_embeddings": ctx}))
    return out


@pytest.fixture(scope="session")
def hf_smollm_dir(smollm_gguf_fields: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_hf_tokenizer_dir(smollm_gguf_fields, tmp_path_factory.mktemp("hf_smollm"))


@pytest.fixture(scope="session")
def bos_variant_gguf(smollm_gguf_fields: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A vocab-only copy of SmolLM2's GGUF with no chat template and ``add_bos_token=true``
    (BOS = ``<|endoftext|>``), to exercise the ChatML fallback and BOS insertion for real."""
    gguf = pytest.importorskip("gguf")
    path = tmp_path_factory.mktemp("variant") / "smollm2-vocab-bos.gguf"
    dropped = {"general.architecture", "tokenizer.chat_template",
               "tokenizer.ggml.add_bos_token", "tokenizer.ggml.bos_token_id"}
    writer = gguf.GGUFWriter(str(path), arch=str(smollm_gguf_fields["general.architecture"].contents()))
    for key, field in smollm_gguf_fields.items():
        if key.startswith("GGUF.") or key in dropped:
            continue
        vtype = field.types[0]
        sub = field.types[1] if vtype == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(key, field.contents(), vtype, sub)
    writer.add_bool("tokenizer.ggml.add_bos_token", True)
    writer.add_uint32("tokenizer.ggml.bos_token_id", 0)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()  # none: vocab_only loading needs no weights
    writer.close()
    return path


@pytest.fixture(scope="session")
def gguf_tokenizer(smollm_gguf_path: Path):  # noqa: ANN201 - type lives behind importorskip
    """llama.cpp's own tokenizer and chat template for the embedded GGUF (``gguf:PATH``:
    /tokenize and /apply-template of an in-process llama.cpp server)."""
    pytest.importorskip("xllamacpp")
    from ctxprobe.tokenizers.xllama import XLlamaTokenizer

    return XLlamaTokenizer(smollm_gguf_path)


_SUBJECTS = ["The committee", "A quiet engineer", "Our neighbour", "The harbour office",
             "Every visitor", "The old library", "Marta", "The survey team", "Nobody"]
_VERBS = ["reviewed", "painted", "measured", "described", "ignored", "rebuilt", "counted",
          "borrowed", "misplaced", "photographed"]
_OBJECTS = ["the northern bridge", "a ledger of 1,204 entries", "three copper kettles",
            "the garden's west wall", "an unfinished map", "forty-two lanterns",
            "the café's menu", "a crate of pears", "the 9:45 timetable"]
_TAILS = ["before noon", "without complaint", "in 2019", "during the long rain",
          "with great care", "again", "for the second time", "as expected", ""]


_SYLLABLES = ["ka", "vel", "mor", "tri", "dun", "sa", "qui", "lo", "ber", "nyx", "os", "ta"]


def _invented(rng: random.Random) -> str:
    """A word that never existed, so rare merges and splits get exercised too."""
    return "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))


def _sentence(rng: random.Random) -> str:
    tail = rng.choice(_TAILS)
    subject = rng.choice(_SUBJECTS) if rng.random() < 0.7 else _invented(rng).capitalize()
    thing = rng.choice(_OBJECTS) if rng.random() < 0.7 else f"{rng.randint(2, 99999):,} {_invented(rng)}s"
    words = [subject, rng.choice(_VERBS), thing] + ([tail] if tail else [])
    end = rng.choice([".", ".", ".", "!", "?", "; then it stopped."])
    text = " ".join(words) + end
    if rng.random() < 0.15:
        text = f'"{text}" she wrote (page {rng.randint(1, 999)}).'
    return text


@pytest.fixture(scope="session")
def make_sentences() -> Callable[[int, int], list[str]]:
    """Fresh neutral prose sentences, seeded: (n, seed) -> sentences."""

    def make(n: int, seed: int = 0) -> list[str]:
        rng = random.Random(seed)
        return [_sentence(rng) for _ in range(n)]

    return make


#: Text that stresses pre-tokenization: digits, unicode, code, whitespace runs, contractions.
_TRICKY_TEXTS = [
    "It's 3.14159 — isn't it? We'll see; they'd've said 1,000,000.",
    "Ünïcödé naïve café résumé Ångström. 日本語のテキスト。 Ελληνικά. Русский текст.",
    "Emoji: 🙂🚀 👩‍💻 and flags 🇫🇷.",
    "def f(x):\n    return x**2  # square\n\n\tprint(f(12))\n",
    "Multiple   spaces,\ttabs\t\tand\n\n\nnewlines   \n  trailing   ",
    "URL https://example.com/a?b=1&c=%20 and e-mail a.b@c.org",
    "'quoted' \"double\" `back` (paren) [bracket] {brace} <angle>",
    "I'M SHOUTING, YOU'RE NOT. He's, she'd, we've, they'll, I'd.",
    "0123456789 00 007 1e-5 -42 +3 12:30 2024-01-31",
    "   leading spaces and a trailing space ",
]


@pytest.fixture(scope="session")
def tricky_texts() -> list[str]:
    return list(_TRICKY_TEXTS)


#: Qwen2.5's chat template (ChatML with tools: the declaration in the system turn, each call
#: in ``<tool_call>`` tags, each result in ``<tool_response>`` tags of a user turn), whose
#: control tokens SmolLM2's vocabulary shares: a real tool-rendering template to count with.
QWEN_TOOLS_TEMPLATE = (
    "{%- if tools %}\n"
    "    {{- '<|im_start|>system\\n' }}\n"
    "    {%- if messages[0]['role'] == 'system' %}\n"
    "        {{- messages[0]['content'] }}\n"
    "    {%- else %}\n"
    "        {{- 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.' }}\n"
    "    {%- endif %}\n"
    "    {{- \"\\n\\n# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\n"
    "You are provided with function signatures within <tools></tools> XML tags:\\n<tools>\" }}\n"
    "    {%- for tool in tools %}\n"
    "        {{- \"\\n\" }}\n"
    "        {{- tool | tojson }}\n"
    "    {%- endfor %}\n"
    "    {{- \"\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments "
    "within <tool_call></tool_call> XML tags:\\n<tool_call>\\n{\\\"name\\\": <function-name>, \\\"arguments\\\": "
    "<args-json-object>}\\n</tool_call><|im_end|>\\n\" }}\n"
    "{%- else %}\n"
    "    {%- if messages[0]['role'] == 'system' %}\n"
    "        {{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}\n"
    "    {%- else %}\n"
    "        {{- '<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\\n' }}\n"
    "    {%- endif %}\n"
    "{%- endif %}\n"
    "{%- for message in messages %}\n"
    "    {%- if (message.role == \"user\") or (message.role == \"system\" and not loop.first) or "
    "(message.role == \"assistant\" and not message.tool_calls) %}\n"
    "        {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}\n"
    "    {%- elif message.role == \"assistant\" %}\n"
    "        {{- '<|im_start|>' + message.role }}\n"
    "        {%- if message.content %}\n"
    "            {{- '\\n' + message.content }}\n"
    "        {%- endif %}\n"
    "        {%- for tool_call in message.tool_calls %}\n"
    "            {%- if tool_call.function is defined %}\n"
    "                {%- set tool_call = tool_call.function %}\n"
    "            {%- endif %}\n"
    "            {{- '\\n<tool_call>\\n{\"name\": \"' }}\n"
    "            {{- tool_call.name }}\n"
    "            {{- '\", \"arguments\": ' }}\n"
    "            {{- tool_call.arguments | tojson }}\n"
    "            {{- '}\\n</tool_call>' }}\n"
    "        {%- endfor %}\n"
    "        {{- '<|im_end|>\\n' }}\n"
    "    {%- elif message.role == \"tool\" %}\n"
    "        {%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != \"tool\") %}\n"
    "            {{- '<|im_start|>user' }}\n"
    "        {%- endif %}\n"
    "        {{- '\\n<tool_response>\\n' }}\n"
    "        {{- message.content }}\n"
    "        {{- '\\n</tool_response>' }}\n"
    "        {%- if loop.last or (messages[loop.index0 + 1].role != \"tool\") %}\n"
    "            {{- '<|im_end|>\\n' }}\n"
    "        {%- endif %}\n"
    "    {%- endif %}\n"
    "{%- endfor %}\n"
    "{%- if add_generation_prompt %}\n"
    "    {{- '<|im_start|>assistant\\n' }}\n"
    "{%- endif %}\n"
)


@pytest.fixture(scope="session")
def hf_tools_dir(hf_smollm_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """SmolLM2's tokenizer (as ``hf_smollm_dir``) with a chat template that renders tool
    calls, tool results and tool declarations (:data:`QWEN_TOOLS_TEMPLATE`)."""
    import shutil

    out = tmp_path_factory.mktemp("hf_tools")
    for name in ("tokenizer.json", "tokenizer_config.json", "config.json"):
        shutil.copy(hf_smollm_dir / name, out / name)
    (out / "chat_template.jinja").write_text(QWEN_TOOLS_TEMPLATE, encoding="utf-8")
    return out
