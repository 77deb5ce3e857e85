"""Sampling noise of the simulated models: temperature as a known miss rate.

Every ``sim:*`` kind reads the request's temperature. At temperature 0 it answers as its
kind says, deterministically (as before). At temperature t > 0 each answer is a *miss*
("I could not find it.") with probability

    P(miss) = min(1, t × tnoise)

(``tnoise``: the miss probability per unit of temperature, the sim's ``?tnoise=`` option,
default :data:`DEFAULT_TNOISE`; so 0.175 at t = 0.7), and otherwise the kind's own answer.
The draw is a uniform number from sha256(request seed, prompt text): the request's
``seed`` field is the nonce that tells samples of one prompt apart (ctxprobe sends one per
sample, :func:`ctxprobe.core.variant.sample_nonce`), so the same prompt and seed always get
the same answer and k seeds give k independent draws. The draw reads the prompt only,
never an answer key: whether the miss costs anything depends on what the kind would have
answered.
"""

from __future__ import annotations

import hashlib
import json

from ctxprobe.core.case import derive_seed
from ctxprobe.tokenizers.base import Message

#: Miss probability per unit of temperature when the sim is not given ``tnoise``.
DEFAULT_TNOISE = 0.25


def p_miss(temperature: float, tnoise: float = DEFAULT_TNOISE) -> float:
    """P(miss) = min(1, t × tnoise), 0 at temperature 0 (the module docstring)."""
    return min(1.0, max(0.0, temperature) * max(0.0, tnoise))


def sampling_draw(messages: list[Message], seed: int | None) -> float:
    """A uniform in [0, 1) fixed by (request seed, prompt text)."""
    prompt = json.dumps(messages, ensure_ascii=False, sort_keys=True)
    digest = hashlib.sha256(f"{seed}\x00sampling\x00{prompt}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def misses(messages: list[Message], temperature: float, seed: int | None, tnoise: float = DEFAULT_TNOISE) -> bool:
    """Whether this request's answer is a sampling miss."""
    p = p_miss(temperature, tnoise)
    return p > 0 and sampling_draw(messages, seed) < p


def choice_seed(seed: int | None, choice: int) -> int | None:
    """The seed of choice ``choice`` of an ``n > 1`` request: the first keeps the request's,
    the others get their own, so n choices are n samples (as the OpenAI API's are)."""
    return seed if choice == 0 else derive_seed("choice", seed, choice) % 2**31
