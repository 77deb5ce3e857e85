"""Cases: a plan's cells turned into prompts of an exact token count.

:mod:`.families` makes a spec's families, :mod:`.sizing` says how many tokens each
(family, length) holds before anything is sent, :mod:`.builder` builds the cases (in
worker processes when asked). The families themselves live in :mod:`ctxprobe.families`, the
filler in :mod:`ctxprobe.haystack`, token counting in :mod:`ctxprobe.tokenizers`.
"""
