"""Render chat templates exactly like Hugging Face's ``apply_chat_template``.

Prompt lengths are measured on the fully templated prompt, so the template must be
rendered with the same Jinja environment the serving stacks use: transformers and
llama-cpp-python both use an ``ImmutableSandboxedEnvironment`` with ``trim_blocks``,
``lstrip_blocks`` and ``loopcontrols``, a ``tojson`` filter that keeps non-ASCII text, and
the globals ``raise_exception`` and ``strftime_now``. Any difference here (a stripped
newline, an escaped character) would shift every count by a token or more.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from collections.abc import MutableSequence
from typing import TYPE_CHECKING, Any, TypeVar

from ctxprobe.errors import CtxprobeError

if TYPE_CHECKING:
    import jinja2

    from ctxprobe.tokenizers.base import Message

#: The ChatML template (HF's historical default), used when a model file carries none.
CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


class ChatTemplateError(CtxprobeError):
    """A chat template failed to compile or render, or called ``raise_exception``."""


def template_hash(source: str) -> str:
    """sha256 (hex, first 16 chars) of a template source: part of a run's identity."""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:16]


def _one_line(text: object) -> str:
    """Collapse whitespace so template messages keep errors to one line."""
    return " ".join(str(text).split())


def _raise_exception(message: str) -> None:
    """Template-callable ``raise_exception``: a template's own refusal is a user error."""
    raise ChatTemplateError(f"chat template refused the messages: {_one_line(message)}")


def _strftime_now(fmt: str) -> str:
    """Templates (Llama 3.x) print today's date; same helper as transformers."""
    return datetime.now().strftime(fmt)


def _tojson(
    value: Any,
    ensure_ascii: bool = False,
    indent: int | None = None,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
) -> str:
    """HF's ``tojson``: unlike Jinja's built-in it neither HTML-escapes nor ASCII-escapes."""
    return json.dumps(
        value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
    )


def _generation_tag_extension() -> type:
    """Pass-through for HF's ``{% generation %}`` tag (assistant masks; no text effect)."""
    from jinja2.ext import Extension

    class GenerationTag(Extension):
        tags = {"generation"}

        def parse(self, parser: Any) -> Any:
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            from jinja2 import nodes

            return nodes.Scope(body, lineno=lineno)

    return GenerationTag


@lru_cache(maxsize=None)
def _environment() -> jinja2.Environment:
    """One sandboxed environment configured like transformers' chat-template compiler."""
    try:
        import jinja2.ext
        from jinja2.sandbox import ImmutableSandboxedEnvironment
    except ImportError as exc:  # jinja2 is a core dependency; say so plainly if absent
        raise CtxprobeError("chat templates need jinja2: pip install 'jinja2>=3.1'") from exc
    env = ImmutableSandboxedEnvironment(
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=[_generation_tag_extension(), jinja2.ext.loopcontrols],
    )
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    return env


@lru_cache(maxsize=64)
def compile_template(source: str) -> jinja2.Template:
    """Compiled template, cached by source: compiling costs far more than rendering."""
    import jinja2

    try:
        return _environment().from_string(source)
    except jinja2.TemplateSyntaxError as exc:
        raise ChatTemplateError(
            f"chat template does not compile (line {exc.lineno}): {_one_line(exc.message or exc)}"
        ) from None


def render_chat_template(
    source: str,
    messages: list[Message],
    *,
    bos_token: str = "",
    eos_token: str = "",
    add_generation_prompt: bool = True,
    tools: list[dict[str, Any]] | None = None,
    **extra: Any,
) -> str:
    """Render ``messages`` through ``source`` with the variables HF passes to templates."""
    import jinja2

    template = compile_template(source)
    try:
        return template.render(
            messages=messages,
            add_generation_prompt=add_generation_prompt,
            bos_token=bos_token,
            eos_token=eos_token,
            tools=tools,
            **extra,
        )
    except CtxprobeError:
        raise
    except (jinja2.TemplateError, TypeError, ValueError, KeyError, AttributeError) as exc:
        raise ChatTemplateError(
            f"chat template failed to render: {type(exc).__name__}: {_one_line(exc)}"
        ) from None


@dataclass(frozen=True)
class ChatTemplate:
    """A template source bound to its special-token texts, plus where it came from."""

    source: str
    bos_token: str = ""
    eos_token: str = ""
    #: Human-readable origin, e.g. ``gguf metadata`` or ``ChatML fallback``.
    origin: str = ""

    @property
    def hash(self) -> str:
        return template_hash(self.source)

    def render(self, messages: list[Message], add_generation_prompt: bool = True) -> str:
        """The templated chat; a trailing assistant message is an answer prefix (prefill):
        the chat before it with the generation prompt, then the prefix verbatim."""
        from ctxprobe.tokenizers.base import split_prefill

        from ctxprobe.core.tools import declared_tools

        head, prefix = split_prefill(messages)
        prefilled = prefix is not None and add_generation_prompt
        # the tool a tools layout declares (None otherwise: as before)
        return self.render_with_tools(messages, declared_tools(head if prefilled else messages),
                                      add_generation_prompt)

    def render_with_tools(self, messages: list[Message], tools: list[dict[str, Any]] | None,
                          add_generation_prompt: bool = True) -> str:
        """:meth:`render` with exactly ``tools`` declared, not those the messages imply: a
        server's request renders the ``tools`` its body sends (the sim server's ``/tokenize``
        as vLLM's); an answer prefix as in :meth:`render`."""
        from ctxprobe.tokenizers.base import split_prefill

        head, prefix = split_prefill(messages)
        if prefix is not None and add_generation_prompt:
            return self.render_with_tools(head, tools, add_generation_prompt=True) + prefix
        return render_chat_template(
            self.source,
            messages,
            bos_token=self.bos_token,
            eos_token=self.eos_token,
            add_generation_prompt=add_generation_prompt,
            tools=tools,
        )


#: A list of ids, or the compact ``array`` llama.cpp writes into (kept as the same type).
_Ids = TypeVar("_Ids", bound=MutableSequence[int])


def prepend_bos(ids: _Ids, rendered: str, template: ChatTemplate, add_bos: bool, bos_id: int) -> _Ids:
    """``ids`` of a rendered chat with BOS in front once, when the model wants one and the
    template did not already write it (llama.cpp's rule, shared by every GGUF-vocab backend)."""
    bos_text = template.bos_token
    if add_bos and not (bos_text and rendered.startswith(bos_text)):
        ids.insert(0, bos_id)
    return ids
