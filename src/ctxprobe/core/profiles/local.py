"""Providers that run here or on a server of the user's: no list price (a price file may
give one), each with its tokenizer."""

from __future__ import annotations

from ctxprobe.core.catalog import ProviderInfo

#: Every simulated model kind (``sim:KIND``): the one list the sims (ctxprobe.sim.model), the
#: --model help and serve-sim's messages read.
SIM_KINDS: tuple[str, ...] = ("perfect", "echo", "blind-middle", "decay", "first-half", "late-reader", "reasoner")
SIM_FORMS = "|".join(SIM_KINDS)
SIM = ProviderInfo(default_tokenizer="local", free=True, help=f"sim:KIND ({', '.join(SIM_KINDS)})")
LOCAL = ProviderInfo(default_tokenizer="local", free=True, help="local")
LLAMACPP = ProviderInfo(default_tokenizer="gguf:{name}", free=True, help="llamacpp:/path.gguf")
HF = ProviderInfo(default_tokenizer="hf:{name}", free=True, help="hf:/model-dir")
#: Its own server counts (exact), by asking it: prefixes are estimated instead.
OPENAI_COMPAT = ProviderInfo(default_tokenizer="endpoint:{base_url}?model={name_quoted}",
                             remote_counter="endpoint:{base_url}?model={name_quoted}",
                             reasoning="?thinking=N where the server has a reasoning parser",
                             help="vllm/NAME, sglang/NAME or openai-api/NAME with --base-url | openai-compat:NAME@URL")
