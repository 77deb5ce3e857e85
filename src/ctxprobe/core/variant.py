"""Prompt-variant labels, shared by the spec, the builder, the runner and the report.

``--variants`` runs every family of a sweep once per variant under the label
``FAMILY~NAME``: the family's own parameters plus the variant's (``repeat_instructions``,
``examples``, ``cot``, ``book_in``, ``system_role`` for the phone book…), and, under the key
:data:`LAYOUT_PARAM`, the prompt layout the variant changes (``{"instruction": "after"}``,
popped before the family validates its parameters). A variant changes how a case is asked,
never what it holds: families seed their content from their *name*, not the label, so every
variant of a (length, depth, repetition) holds the same filler, keys, books and needles,
and the variants are compared case by case (:mod:`ctxprobe.analysis.variants`).

A variant may also change how a case is *sampled*, under :data:`DECODING_PARAM`:
``temperature`` and ``top_p`` (over the sweep's decoding, for that label's requests only)
and ``samples`` = k, the number of times each of its cases is sent. The k samples of a
case hold the same prompt; each is its own stored case (id ``…/s0`` … ``…/s{k-1}``) and
its request carries a per-sample nonce as the ``seed`` field (:func:`sample_nonce`), so a
seeded server draws k different answers and a rerun draws the same ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ctxprobe.core.case import derive_seed

SEP = "~"
#: The key under which a variant's label carries its prompt-layout changes.
LAYOUT_PARAM = "variant_layout"
#: The key under which a variant's label carries its decoding (temperature, top_p, samples).
DECODING_PARAM = "variant_decoding"
#: Nonces stay below 2**31: every server's ``seed`` takes them (llama.cpp's is 32-bit).
NONCE_RANGE = 2**31


def variant_label(family: str, name: str) -> str:
    """``niah``, ``end`` → ``niah~end``."""
    return f"{family}{SEP}{name}"


def split_label(label: str) -> tuple[str, str | None]:
    """``niah~end`` → (``niah``, ``end``); a label without a variant → (label, None)."""
    base, sep, name = label.partition(SEP)
    return (base, name) if sep else (label, None)


def pop_layout(params: dict[str, Any]) -> Mapping[str, Any] | None:
    """Remove and return a variant's layout changes from a label's parameters (or None)."""
    value = params.pop(LAYOUT_PARAM, None)
    return value if isinstance(value, Mapping) else None


@dataclass(frozen=True)
class VariantDecoding:
    """A variant's decoding: None leaves the sweep's setting; ``samples`` None: sent once."""

    temperature: float | None = None
    top_p: float | None = None
    samples: int | None = None

    @property
    def k(self) -> int:
        """How many times each case of the variant is sent."""
        return self.samples or 1

    def over(self, temperature: float, top_p: float | None) -> tuple[float, float | None]:
        """(temperature, top_p) a request of this variant carries, over the sweep's."""
        return (temperature if self.temperature is None else self.temperature,
                top_p if self.top_p is None else self.top_p)


def decoding_of(params: Mapping[str, Any] | None) -> VariantDecoding | None:
    """A label's variant decoding (read, not removed), or None when it sets none."""
    value = (params or {}).get(DECODING_PARAM)
    if not isinstance(value, Mapping):
        return None
    samples = value.get("samples")
    return VariantDecoding(
        temperature=None if value.get("temperature") is None else float(value["temperature"]),
        top_p=None if value.get("top_p") is None else float(value["top_p"]),
        samples=None if samples is None else int(samples))


def samples_of(params: Mapping[str, Any] | None) -> list[int | None]:
    """The sample indices of a label's cases: ``[None]`` (sent once) or ``0 … k-1``."""
    decoding = decoding_of(params)
    return [None] if decoding is None or decoding.samples is None else list(range(decoding.samples))


def pop_decoding(params: dict[str, Any]) -> None:
    """Remove a variant's decoding from a label's parameters (the family never sees it)."""
    params.pop(DECODING_PARAM, None)


def sample_nonce(seed: int | None, sample: int) -> int:
    """The ``seed`` a sample's request carries: distinct per sample, fixed by the sweep's
    decoding seed (None counts as 0), so a rerun asks for the same draws."""
    return derive_seed("sample", seed or 0, sample) % NONCE_RANGE
