"""A ctxprobe plugin: the ``boxreader`` provider, the ``boxes`` family and the ``boxes-read``
report section (entry points)."""
