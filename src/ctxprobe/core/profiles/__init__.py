"""The simulated models' profile (:class:`ctxprobe.core.catalog.ProviderInfo`), registered
with them in :mod:`ctxprobe.core.builtins`. Every other provider's profile is in its folder,
``ctxprobe/providers/<name>/profile.py``.

Each price entry says when it was read and from which page; an entry that could not be
checked against the provider's own page says so in its ``source``."""
