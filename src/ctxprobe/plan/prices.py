"""Prices per million tokens, for plans and ``--max-cost``.

Built-in prices are list prices for common models at the time of writing (USD per 1M
input / output tokens); they go stale, so a user file extends or overrides them:
``~/.config/ctxprobe/prices.yaml`` (or ``--prices FILE``) with lines such as
``openai:gpt-4o-mini: {input: 0.15, output: 0.60}``. Local and simulated models cost 0.
A model with no known price has cost ``None``: the plan says so and ``--max-cost`` refuses
to run it rather than guess.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import yaml

from ctxprobe.errors import CtxprobeError


@dataclass(frozen=True)
class Price:
    input: float  # USD per 1M input tokens
    output: float  # USD per 1M output tokens

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input + output_tokens * self.output) / 1e6


BUILTIN: dict[str, Price] = {
    "openai:gpt-4o": Price(2.50, 10.00),
    "openai:gpt-4o-mini": Price(0.15, 0.60),
    "openai:gpt-4.1": Price(2.00, 8.00),
    "openai:gpt-4.1-mini": Price(0.40, 1.60),
    "openai:gpt-4.1-nano": Price(0.10, 0.40),
    "openai:o3-mini": Price(1.10, 4.40),
    "openai:o4-mini": Price(1.10, 4.40),
    "anthropic:claude-3-5-haiku-latest": Price(0.80, 4.00),
    "anthropic:claude-3-5-sonnet-latest": Price(3.00, 15.00),
    "anthropic:claude-3-7-sonnet-latest": Price(3.00, 15.00),
    "gemini:gemini-1.5-flash": Price(0.075, 0.30),
    "gemini:gemini-2.0-flash": Price(0.10, 0.40),
}
FREE_PREFIXES = ("local", "llamacpp:", "sim:", "hf:")


def user_prices_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "ctxprobe" / "prices.yaml"


def load_prices(path: str | Path | None = None) -> dict[str, Price]:
    table = dict(BUILTIN)
    p = Path(path) if path else user_prices_path()
    if not p.is_file():
        if path:
            raise CtxprobeError(f"price file {p} not found")
        return table
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
        for model, entry in data.items():
            table[str(model)] = Price(float(entry["input"]), float(entry["output"]))
    except (yaml.YAMLError, KeyError, TypeError, ValueError, AttributeError):
        raise CtxprobeError(f"price file {p} must map model: {{input: USD/1M, output: USD/1M}}") from None
    return table


def price_for(model: str, table: dict[str, Price] | None = None) -> Price | None:
    if model == "local" or model.startswith(FREE_PREFIXES):
        return Price(0.0, 0.0)
    table = table if table is not None else load_prices()
    base = model.split("?", 1)[0]
    return table.get(base)
