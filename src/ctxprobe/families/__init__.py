"""Task families that live in one package each: ``families/<name>/``.

A family package's ``__init__.py`` holds its declaration, ``FAMILY``
(:class:`ctxprobe.core.declaration.FamilyDeclaration`), and imports nothing of its own
parts; each part is a file named by its role, and the role decides its layer
(docs/architecture.md, "A family in one package"):

- ``task*.py``, ``score*.py``, ``preset*.py``: the family class, its scorer, its presets
  (the tasks layer);
- ``sim*.py``: its sim skill (the simulator layer: nothing but the simulator imports it);
- ``analysis*.py``: its own analysis of stored rows (the analysis layer);
- ``report*.py``: its report hooks, tables, plots, HTML (the report layer);
- ``cli*.py``: its command (the CLI layer).

A folder inside the package named by a role (``task/``) gives that role to its files.
ctxprobe registers each declaration in :mod:`ctxprobe.core.builtins`, one line each.
"""
