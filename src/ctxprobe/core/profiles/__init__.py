"""The built-in providers' profiles (:class:`ctxprobe.core.catalog.ProviderInfo`): what
each one is, costs and caches, registered with it in :mod:`ctxprobe.core.builtins`.

Each price entry says when it was read and from which page; an entry that could not be
checked against the provider's own page says so in its ``source``."""
