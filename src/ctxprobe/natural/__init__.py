"""Natural cases: questions drafted from the user's own documents and checked before use
(:mod:`ctxprobe.natural.draft`), on top of the sweep's model and store layers."""
