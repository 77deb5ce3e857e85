"""The spec: what to measure (model, tokenizer, families, lengths, depths, repetitions,
seed, decoding), typed and validated (:mod:`.schema`; the values it is made of, such as
``4k`` lengths and the decoding and layout settings: :mod:`.fields`), the model names
people type (:mod:`.names`) and how lengths are written and shown (:mod:`.units`).

The first stage of the pipeline: every later stage reads a :class:`Spec`; the spec imports
none of them.
"""

from ctxprobe.spec.fields import (
    OUTPUT_FLOOR,
    OUTPUT_LEAD_IN,
    OUTPUT_TOKENS_PER_ITEM,
    Decoding,
    PromptLayout,
    answer_items,
    changed_layout,
    default_output_limit,
    describe_layout,
    parse_budgets,
    parse_depths,
    parse_length,
    parse_lengths,
)
from ctxprobe.spec.schema import TRANSPORT_FIELDS, Spec, load_spec, make_spec, spec_keys
from ctxprobe.spec.merge import merge_spec

__all__ = [
    "OUTPUT_FLOOR", "OUTPUT_LEAD_IN", "OUTPUT_TOKENS_PER_ITEM", "TRANSPORT_FIELDS", "Decoding", "PromptLayout",
    "Spec", "answer_items", "changed_layout", "default_output_limit", "describe_layout", "load_spec", "make_spec", "merge_spec", "parse_budgets", "parse_depths",
    "parse_length", "parse_lengths", "spec_keys",
]
