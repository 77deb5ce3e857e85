"""A Hugging Face ``tokenizer.json`` plus its chat template, from a local path, offline.

Counts follow what transformers does for ``apply_chat_template(..., tokenize=True)``:
render the template, then encode the rendered text with ``add_special_tokens=False`` (the
template itself is responsible for BOS). Only the ``tokenizers`` library is needed, not
transformers, so a folder copied from a model repository is enough.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxprobe.errors import CtxprobeError, MissingExtraError
from ctxprobe.tokenizers.base import Message, TokenizerBase
from ctxprobe.tokenizers.chat_template import ChatTemplate

#: transformers writes this sentinel (~1e30) as model_max_length when it is unknown.
_UNSET_MAX_LENGTH = 10_000_000


def _import_tokenizers() -> Any:
    try:
        import tokenizers
    except ImportError:
        raise MissingExtraError("tokenizers", "hf", "Hugging Face tokenizers") from None
    return tokenizers


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CtxprobeError(f"cannot read {path}: {exc}") from None
    return data if isinstance(data, dict) else {}


def _token_content(value: Any) -> str:
    """``bos_token`` is a string or a serialized AddedToken ``{"content": ...}``."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("content"), str):
        return value["content"]
    return ""


def _pick_template(value: Any, where: Path) -> str | None:
    """A ``chat_template`` value: a string, or a list of named templates (use "default")."""
    if value is None or isinstance(value, str):
        return value or None
    if isinstance(value, list):
        named = {t.get("name"): t.get("template") for t in value if isinstance(t, dict)}
        if isinstance(named.get("default"), str):
            return named["default"]
        raise CtxprobeError(
            f"{where} lists chat templates {sorted(map(str, named))} but none named 'default'; "
            "put the one to use in chat_template.jinja beside tokenizer.json"
        )
    raise CtxprobeError(f"{where}: chat_template must be a string or a list of templates")


def _find_template(folder: Path, config: dict[str, Any]) -> tuple[str | None, str]:
    """Template source and where it came from; chat_template.jinja wins, as in transformers."""
    jinja_file = folder / "chat_template.jinja"
    if jinja_file.is_file():
        return jinja_file.read_text(encoding="utf-8"), str(jinja_file)
    config_file = folder / "tokenizer_config.json"
    source = _pick_template(config.get("chat_template"), config_file)
    if source:
        return source, str(config_file)
    processor_file = folder / "chat_template.json"  # processors (multimodal repos)
    source = _pick_template(_read_json(processor_file).get("chat_template"), processor_file)
    return source, (str(processor_file) if source else "")


def _trained_context(folder: Path, config: dict[str, Any]) -> int | None:
    model_config = _read_json(folder / "config.json")
    for section in (model_config, model_config.get("text_config") or {}):
        value = section.get("max_position_embeddings") if isinstance(section, dict) else None
        if isinstance(value, int) and value > 0:
            return value
    value = config.get("model_max_length")
    if isinstance(value, (int, float)) and 0 < value < _UNSET_MAX_LENGTH:
        return int(value)
    return None


class HFTokenizer(TokenizerBase):
    """``tokenizers`` + the chat template of a local Hugging Face tokenizer folder."""

    def __init__(self, path: str | Path, name: str | None = None) -> None:
        given = Path(path).expanduser()
        file = given / "tokenizer.json" if given.is_dir() else given
        if not file.is_file():
            raise CtxprobeError(
                f"no tokenizer.json at {given}: pass a folder holding tokenizer.json, "
                "or the tokenizer.json file itself"
            )
        tokenizers = _import_tokenizers()
        self.path = given
        self.file = file
        self.name = name or f"hf:{path}"
        folder = file.parent
        try:
            # Two instances: chat prompts parse special-token text (as transformers does),
            # plain text must not, so a literal "<|im_end|>" in a document counts as text.
            self._chat = tokenizers.Tokenizer.from_file(str(file))
            self._plain = tokenizers.Tokenizer.from_file(str(file))
        except Exception as exc:  # the Rust side raises a bare Exception on bad files
            raise CtxprobeError(f"cannot load {file}: {exc}") from None
        self._plain.encode_special_tokens = True
        config = _read_json(folder / "tokenizer_config.json")
        source, origin = _find_template(folder, config)
        self.template: ChatTemplate | None = None
        if source is not None:
            self.template = ChatTemplate(
                source=source,
                bos_token=_token_content(config.get("bos_token")),
                eos_token=_token_content(config.get("eos_token")),
                origin=origin,
            )
        #: Where the chat template came from ("" when there is none).
        self.template_source = origin
        self._trained_context = _trained_context(folder, config)

    def __repr__(self) -> str:
        return f"HFTokenizer({self.name!r})"

    def encode(self, text: str) -> list[int]:
        """Plain text ids: no special tokens added, special-token text kept as text."""
        return self._plain.encode(text, add_special_tokens=False).ids

    def count(self, text: str) -> int:
        return len(self.encode(text))

    def count_many(self, texts: list[str]) -> list[int]:
        """Batched counts; the Rust side parallelises across texts."""
        batch = getattr(self._plain, "encode_batch_fast", self._plain.encode_batch)
        return [len(e.ids) for e in batch(texts, add_special_tokens=False)]

    def render_chat(self, messages: list[Message]) -> str:
        if self.template is None:
            raise CtxprobeError(
                f"{self.file} has no chat template: add one as chat_template.jinja beside it "
                "(or a 'chat_template' string in tokenizer_config.json)"
            )
        return self.template.render(messages, add_generation_prompt=True)

    def encode_chat(self, messages: list[Message]) -> list[int]:
        """What ``apply_chat_template(tokenize=True)`` returns: no extra BOS/EOS added."""
        return self.encode_rendered(self.render_chat(messages))

    def encode_rendered(self, rendered: str) -> list[int]:
        """Ids of an already templated chat, as :meth:`encode_chat` encodes its rendering
        (special-token text parsed, nothing added)."""
        return self._chat.encode(rendered, add_special_tokens=False).ids

    def count_chat(self, messages: list[Message]) -> int:
        return len(self.encode_chat(messages))

    def decode(self, ids: list[int]) -> str:
        """Text of ids with special tokens shown, for debugging and needle positions."""
        return self._chat.decode(ids, skip_special_tokens=False)

    @property
    def chat_template_hash(self) -> str | None:
        return self.template.hash if self.template is not None else None

    @property
    def trained_context(self) -> int | None:
        return self._trained_context
