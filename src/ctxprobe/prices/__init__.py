"""Prices, in one place: what a request to a model costs, and the one answer for a model
without a price.

- :mod:`.library`: genai-prices' bundled data (hosted models' prices, tiers, windows), read
  offline; the catalog (:mod:`ctxprobe.core.catalog`) reads it, so it sits in the core layer.
- :mod:`.table`: the price table (a provider profile's own prices, then a price file,
  ``--prices FILE``) and :func:`.table.price_for`, the one look-up ``plan``, ``--max-cost``,
  a run's billing, ``prices`` and ``decide`` all use. A model with no known price has price
  ``None``, never ``$0``: a simulated or local model included, until a price file prices it.
- :mod:`.listing`: ``ctxprobe prices``, the table as rows.

This ``__init__`` imports nothing, so the catalog can read :mod:`.library` without the rest.
"""
