"""``--variants``: prompt variants as a grid axis, parsed and expanded into family labels.

Text form: variants separated by commas, each ``NAME`` (the family as configured) or
``NAME:KEY=VALUE[+KEY=VALUE…]``; the first variant is the reference the others are
compared with. ``instruction`` and ``separator`` set the prompt layout (where the
instruction line sits: ``before``, ``after``, ``both``, ``none``), and ``messages`` (also
spelled ``layout`` or ``layout.messages``: ``single``, ``turns``, ``tools``), ``turn_tokens``
and ``evidence_role`` how the context is sent (docs/layouts.md); every other key is a
parameter of the family (``repeat_instructions=true``, ``examples=2``, ``cot=true``,
``book_in=user``, ``system_role=false`` for the phone book), validated by the family;
``temperature`` (0 to 2), ``top_p`` (in (0, 1]) and ``samples`` (k ≥ 1: each case sent k
times) set the variant's decoding, over the sweep's, for its requests only. Values are
read as YAML scalars. Example::

    start:instruction=before, end:instruction=after, both:instruction=both
    t0:temperature=0, t07:temperature=0.7+samples=5
    one:layout=single, chat:layout=turns, agent:layout=tools

Each family label ``L`` of the sweep becomes ``L~start``, ``L~end``, ``L~both``
(:mod:`ctxprobe.core.variant`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ctxprobe.core.variant import DECODING_PARAM, LAYOUT_PARAM, SEP, variant_label
from ctxprobe.errors import CtxprobeError

_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
_LAYOUT_KEYS = ("instruction", "separator", "messages", "turn_tokens", "evidence_role")
#: Spellings of a layout key a variant may use: ``layout=turns`` is ``messages=turns``.
_LAYOUT_ALIASES = {"layout": "messages", "layout.messages": "messages"}
_DECODING_KEYS = ("temperature", "top_p", "samples")
MAX_SAMPLES = 1000

Variant = tuple[str, dict[str, Any]]


def parse_variants(text: str) -> list[Variant]:
    """``"a, b:cot=true"`` → ``[("a", {}), ("b", {"cot": True})]`` (module docstring)."""
    import yaml

    out: list[Variant] = []
    for item in (x.strip() for x in text.split(",")):
        if not item:
            continue
        name, _, rest = item.partition(":")
        name = name.strip()
        if not _NAME.match(name):
            raise CtxprobeError(f"bad variant {item!r}: a variant is NAME or NAME:KEY=VALUE[+KEY=VALUE] "
                                "(NAME: letters, digits, _ and -)")
        settings: dict[str, Any] = {}
        for pair in (p.strip() for p in rest.split("+") if p.strip()):
            key, sep, raw = pair.partition("=")
            if not sep or not key.strip():
                raise CtxprobeError(f"bad variant setting {pair!r} in {item!r}: use KEY=VALUE, e.g. instruction=after")
            key = key.strip()
            key = _LAYOUT_ALIASES.get(key, key.removeprefix("layout.") if key.removeprefix("layout.") in _LAYOUT_KEYS else key)
            if key == "max_tokens":
                raise CtxprobeError(f"variant {name!r}: max_tokens is one limit for the whole sweep (--max-tokens); "
                                    "a variant's decoding is temperature, top_p and samples")
            try:
                settings[key] = yaml.safe_load(raw)
            except yaml.YAMLError:
                settings[key] = raw
            if key in _DECODING_KEYS:
                settings[key] = _decoding_value(name, key, settings[key])
        out.append((name, settings))
    names = [n for n, _ in out]
    if len(out) < 2:
        raise CtxprobeError("--variants needs two variants or more (the first is the reference), e.g. "
                            "start:instruction=before,end:instruction=after")
    if len(set(names)) != len(names):
        raise CtxprobeError(f"--variants: a variant name is used twice ({', '.join(names)})")
    return out


def _decoding_value(name: str, key: str, value: Any) -> float | int:
    """A variant's temperature, top_p or samples, checked (one-line error otherwise)."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if key == "samples":
        if not (number and float(value).is_integer() and 1 <= value <= MAX_SAMPLES):
            raise CtxprobeError(f"variant {name!r}: samples={value!r} must be a whole number from 1 to {MAX_SAMPLES} "
                                "(how many times each case is sent)")
        return int(value)
    if key == "temperature" and not (number and 0.0 <= value <= 2.0):
        raise CtxprobeError(f"variant {name!r}: temperature={value!r} must be a number from 0 to 2")
    if key == "top_p" and not (number and 0.0 < value <= 1.0):
        raise CtxprobeError(f"variant {name!r}: top_p={value!r} must be a number in (0, 1] (above 0, at most 1)")
    return float(value)


def expand_variants(families: Mapping[str, Mapping[str, Any]], variants: list[Variant]) -> dict[str, dict[str, Any]]:
    """Every family label once per variant (``L~NAME``), in the variants' order."""
    out: dict[str, dict[str, Any]] = {}
    for label, params in families.items():
        if SEP in label:
            raise CtxprobeError(f"family label {label!r} already names a variant ('{SEP}'): give the variants once")
        for name, settings in variants:
            layout = {k: v for k, v in settings.items() if k in _LAYOUT_KEYS}
            decoding = {k: v for k, v in settings.items() if k in _DECODING_KEYS}
            own = {k: v for k, v in settings.items() if k not in _LAYOUT_KEYS and k not in _DECODING_KEYS}
            entry: dict[str, Any] = {**params, "family": str(params.get("family", label)), **own}
            if layout:
                entry[LAYOUT_PARAM] = layout
            if decoding:
                entry[DECODING_PARAM] = decoding
            out[variant_label(label, name)] = entry
    return out
