"""The types every stage shares, below all of them: a case and its cell (:mod:`.case`),
the outcome taxonomy and a score (:mod:`.outcome`), the row analysis reads
(:mod:`.rows`), the family protocol (:mod:`.family`) and the registry where providers,
tokenizers and families are found (:mod:`.registry`).

Nothing here imports a stage: ``import ctxprobe.core`` costs nothing.
"""
