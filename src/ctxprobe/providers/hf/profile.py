"""An in-process transformers model's profile: free (a price file may give a price), counted
by the model folder's own tokenizer."""

from __future__ import annotations

from ctxprobe.core.catalog import ProviderInfo

HF = ProviderInfo(default_tokenizer="hf:{name}", free=True, help="hf:/model-dir")
