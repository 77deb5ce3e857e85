"""``plan`` asks the server it would use: its slots, its window and how fast it reads.

For a served model (a provider whose registry entry ``reports_slots``: OpenAI-compatible
servers, vLLM, SGLang, llama.cpp's ``llama-server``), :func:`ask_server` runs the same
reachability check and slot/window reads as a sweep's preflight
(:meth:`ctxprobe.providers.openai_compat.api.OpenAICompatProvider.preflight`: ``/props``, then
``/slots``), then times two requests: a short one (its time ≈ the per-request overhead and
decoding of its output tokens, timed at one and at 8 output tokens) and one of about 512 tokens of fresh text (a random
prefix, so no prefix cache can serve it) with one output token. Prefill speed is the
difference in prompt tokens over the difference in time; decoding speed the 7 extra
output tokens over the extra time they took.

Nothing here raises for a server that is down or slow: the plan then says its time is
assumed, and why. Two small requests are sent; a sweep's results are not touched.
"""

from __future__ import annotations

import asyncio
import random
import secrets
import time
from dataclasses import dataclass

from ctxprobe.errors import CtxprobeError
from ctxprobe.models.base import SHARED_CACHE, GenerateRequest, Provider
from ctxprobe.spec import Spec
from ctxprobe.tokenizers.base import Message

__all__ = ["PROBE_PROMPT_TOKENS", "ServerFacts", "ask_server"]

#: About how many tokens the timed prefill request holds (less when the shortest length is shorter).
PROBE_PROMPT_TOKENS = 512
#: Seconds the whole conversation with the server may take before the plan gives up on it.
PROBE_TIMEOUT_S = 120.0
_SHORT: list[Message] = [{"role": "user", "content": "Reply with the word ready."}]
_WORDS = ("amber", "basin", "cedar", "delta", "ember", "fjord", "grove", "harbor", "inlet", "juniper", "knoll",
          "lagoon", "meadow", "nectar", "orchid", "prairie", "quarry", "ridge", "summit", "tundra", "upland",
          "valley", "willow", "yarrow", "zephyr")


@dataclass(frozen=True)
class ServerFacts:
    """What the server said: ``reachable``, its ``slots`` (None: none reported;
    :data:`ctxprobe.models.base.SHARED_CACHE`: one prefix cache shared by all requests), its
    served ``window``, and the measured speeds in tokens/s (None: not measured, ``why``)."""

    url: str
    reachable: bool
    slots: int | None = None
    window: int | None = None
    prefill: float | None = None
    decode: float | None = None
    why: str = ""
    probe_tokens: int = 0  # the timed prompt's tokens, as the server counted them

    def slots_text(self) -> str:
        if self.slots is None:
            return "the server reports no slots"
        if self.slots == SHARED_CACHE:
            return "the server shares one prefix cache among all requests"
        return f"the server reports {self.slots} slot{'s' if self.slots != 1 else ''}"

    def line(self) -> str:
        """``server: http://… reachable; 2 slots; window 8,192; measured 180 tok/s prefill …``."""
        if not self.reachable:
            return f"server: {self.url} not reachable now ({self.why}): slots and speed assumed"
        parts = [self.slots_text()]
        if self.window:
            parts.append(f"a window of {self.window:,} tokens")
        if self.prefill is not None:
            decode = f"{self.decode:,.0f} tok/s decode" if self.decode else "decode not measured (one-word answers)"
            parts.append(f"measured {self.prefill:,.0f} tok/s prefill (a {self.probe_tokens:,}-token prompt), {decode}")
        else:
            parts.append(f"speed not measured ({self.why})")
        return f"server: {self.url}: " + "; ".join(parts)


def _fresh_text(tokens: int) -> str:
    """About ``tokens`` tokens of text no prefix cache has seen: a random prefix, then words."""
    rng = random.Random(secrets.token_hex(8))
    words = [secrets.token_hex(6)] + [rng.choice(_WORDS) for _ in range(int(tokens * 0.8))]
    return "Ignore this text. " + " ".join(words) + "\nReply with the word ready."


async def _timed(provider: Provider, messages: list[Message], max_tokens: int) -> tuple[float, int, int]:
    start = time.perf_counter()
    result = await provider.generate(GenerateRequest(messages=messages, max_tokens=max_tokens))
    return time.perf_counter() - start, result.prompt_tokens or 0, result.completion_tokens or 0


async def _ask(provider: Provider, url: str, prompt_tokens: int) -> ServerFacts:
    try:
        assert provider.preflight is not None
        await provider.preflight()  # reachable? then /models, /props, /slots: the sweep's own reads
    except CtxprobeError as err:
        text = str(err)
        return ServerFacts(url, False, why="nothing answers there" if text.startswith("cannot reach") else text)
    slots = getattr(provider, "slots", None)
    window = provider.context_window
    try:
        await _timed(provider, _SHORT, 1)  # warm the connection (and any lazy load) before timing
        t_base, p_base, _ = await _timed(provider, _SHORT, 1)  # the per-request overhead
        t_short, _, out_short = await _timed(provider, _SHORT, 8)
        t_long, p_long, _ = await _timed(provider, [{"role": "user", "content": _fresh_text(prompt_tokens)}], 1)
    except Exception as err:  # noqa: BLE001 -- a probe never stops the plan: the reason is printed
        return ServerFacts(url, True, slots, window, why=f"the probe request failed: {str(err)[:120]}")
    if not p_long or p_long <= p_base:
        return ServerFacts(url, True, slots, window, why="the server reports no prompt-token counts")
    if t_long <= t_base:
        return ServerFacts(url, True, slots, window, why="too fast to time with one request")
    decode = (out_short - 1) / (t_short - t_base) if out_short > 1 and t_short > t_base else None
    return ServerFacts(url, True, slots, window, prefill=(p_long - p_base) / (t_long - t_base), decode=decode,
                       probe_tokens=p_long)


def ask_server(spec: Spec, *, timeout: float = PROBE_TIMEOUT_S) -> ServerFacts | None:
    """Ask ``spec``'s server (None: the model is not a served one; nothing asked)."""
    from ctxprobe.models import resolve_provider
    from ctxprobe.plan.scheduling import reports_slots

    if not reports_slots(spec.model):
        return None
    try:
        provider = resolve_provider(spec.model, None)
    except CtxprobeError as err:
        return ServerFacts(spec.model, False, why=str(err))
    url = str(getattr(provider, "base_url", spec.model))
    tokens = min(PROBE_PROMPT_TOKENS, min(spec.lengths))

    async def go() -> ServerFacts:
        try:
            return await asyncio.wait_for(_ask(provider, url, tokens), timeout)
        except asyncio.TimeoutError:
            return ServerFacts(url, False, why=f"no answer within {timeout:g} s")
        finally:
            close = getattr(provider, "aclose", None)
            if close is not None:
                await close()

    return asyncio.run(go())
