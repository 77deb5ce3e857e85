"""ctxprobe's own model providers, one folder each: ``providers/<name>/``.

A folder holds everything of one provider: its request building and response reading
(``api.py``, or ``engine.py`` for one run in process), its rules (what a model takes),
options, batch API, prompt caching, token counting and profile (``profile.py``: the
:class:`ctxprobe.core.catalog.ProviderInfo` with prices, windows, caching rules). Its
``__init__.py`` is its declaration and nothing else, ``PROVIDER = ProviderDeclaration(...)``
(:mod:`ctxprobe.core.provider_declaration`), naming the parts by path; it is registered by
one line in :mod:`ctxprobe.core.builtins`. The code providers share (the protocol, the SDK
helpers, option parsing, the cache gate, the batch base) is :mod:`ctxprobe.models`.
"""
