"""A ctxprobe plugin: the ``boxreader`` provider and the ``boxes`` family (entry points)."""
