"""Options of an in-process transformers model (``hf:/path?dtype=bfloat16&thinking=512``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class HFModelOptions(BaseModel):
    """Options of an in-process transformers model (``hf:/path``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    thinking: int | None = Field(default=None, ge=0)
    dtype: Literal["float32", "bfloat16", "float16", "auto"] = "float32"
    #: Passed to the chat template (Qwen3-style ``enable_thinking``) when set.
    enable_thinking: bool | None = None
    threads: int | None = Field(default=None, ge=1)
