"""One registry for everything ctxprobe finds by name: model providers, tokenizer schemes,
task families, presets and extra report sections.

ctxprobe's own entries are registered in code (:mod:`ctxprobe.core.builtins`) through the
same :func:`register` a plugin may call; installed packages add entries through entry
points in the groups ``ctxprobe.providers``, ``ctxprobe.tokenizers``,
``ctxprobe.families``, ``ctxprobe.presets`` and ``ctxprobe.report_sections``
(``name = "module:attr"``). Both are read once, on the
first lookup.

An entry's target is a ``"module:attr"`` path (or an object already made); it is imported
only when :meth:`Entry.load` is called, so listing names never imports an SDK.

What a target must be, per group (see docs/architecture.md):

- ``providers``: a :class:`ctxprobe.core.provider_declaration.ProviderDeclaration` (the factory
  and its parts: profile, spellings, name check, the tokenizer schemes it brings; the schemes
  are registered with it), or a factory alone, ``factory(ref, *, tokenizer, n_ctx, options) ->
  Provider``, ``ref`` a :class:`ctxprobe.spec.names.ModelRef`, its facts as keywords
  (``info=``, ``form=``...); the model is spelled ``NAME/MODEL`` or ``NAME:MODEL``;
  :meth:`Entry.load` gives the factory;
- ``tokenizers``: ``factory(name, rest) -> Tokenizer`` for ``NAME:REST``;
- ``families``: a :class:`ctxprobe.core.declaration.FamilyDeclaration` (the family class and
  its parts: sim skill, report hooks, command, presets; the presets are registered with
  it), or a family class ``Family(ctx: BuildContext)`` alone (:class:`ctxprobe.core.family.Family`),
  its parts as keywords (``register("families", "echo", Echo, sim_skill=echo_skill)``);
  :meth:`Entry.load` gives the class, :meth:`Entry.declaration` the declaration;
- ``presets``: a :class:`ctxprobe.core.preset.Preset` (``--preset NAME``);
- ``report_sections``: ``section(views) -> ReportSection | None``, one more section of the
  HTML report (:class:`ctxprobe.report.html.parts.ReportSection`; ``views`` the page's runs,
  :class:`ctxprobe.report.html.sections.RunView`), in name order after the built-in ones.

Optional members of each kind (declared with their defaults on
:class:`ctxprobe.core.family.FamilyBase`, :class:`ctxprobe.models.base.ProviderBase`,
:class:`ctxprobe.tokenizers.base.TokenizerBase`) are filled in here, at the boundary, for
a plugin that does not inherit the base: callers read them as plain attributes.
"""

from __future__ import annotations

import difflib
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ctxprobe.core.declaration import FamilyDeclaration, declare
from ctxprobe.core.loader import load_path, resolve
from ctxprobe.core.provider_declaration import ProviderDeclaration
from ctxprobe.errors import CtxprobeError

GROUPS: tuple[str, ...] = ("providers", "tokenizers", "families", "presets", "report_sections")
#: One entry of each group, as an error names it ("unknown family 'X'", never "familie").
SINGULAR = {"providers": "provider", "tokenizers": "tokenizer", "families": "family", "presets": "preset",
            "report_sections": "report section"}
#: Entry-point groups: ``ctxprobe.<group>``.
ENTRY_POINT_PREFIX = "ctxprobe."

_MISSING = object()


@dataclass
class Entry:
    group: str
    name: str
    #: ``"module:attr"`` (imported on first :meth:`load`) or the object itself.
    target: str | object
    #: Where it came from: ``"ctxprobe"`` for built-ins, else the distribution or caller.
    origin: str = "ctxprobe"
    #: Group-specific facts known without importing anything (how a provider is spelled).
    meta: Mapping[str, Any] = field(default_factory=dict)
    _target: object = field(default=_MISSING, repr=False, compare=False)
    _loaded: object = field(default=_MISSING, repr=False, compare=False)

    def _import(self) -> Any:
        """The target itself, imported when it is a path (once)."""
        if self._target is _MISSING:
            target = self.target
            if isinstance(target, str):
                target = load_path(target, what=f"{self.group[:-1]} '{self.name}' ({self.origin})")
            self._target = target
        return self._target

    def load(self) -> Any:
        if self._loaded is _MISSING:
            target = self._import()
            adapt = _ADAPTERS.get(self.group)
            self._loaded = adapt(self, target) if adapt is not None else target
        return self._loaded

    def declaration(self) -> FamilyDeclaration:
        """A family's declaration (``families`` entries only): the one it was registered with,
        or, for a family class alone, the class with no parts."""
        if self.group != "families":
            raise ValueError(f"{self.group[:-1]} '{self.name}' is not a family")
        target = self.target if isinstance(self.target, FamilyDeclaration) else self._import()
        try:
            return declare(self.name, target)
        except ValueError as exc:
            raise CtxprobeError(f"family '{self.name}' ({self.origin}): {exc}") from None


def _provider_factory(entry: Entry, target: object) -> object:
    """A provider's factory: the declaration's (an entry point may name a declaration)."""
    if isinstance(target, ProviderDeclaration):
        return resolve(target.factory, what=f"provider '{entry.name}' ({entry.origin}): its factory")
    return target


def _family_class(entry: Entry, target: object) -> object:
    from ctxprobe.core.family import with_family_defaults

    cls = entry.declaration().load("family") if isinstance(target, FamilyDeclaration) else target
    return with_family_defaults(cls) if isinstance(cls, type) else cls


#: What loading does to a group's target before anyone sees it: a family's declaration
#: gives its class, a provider's its factory, and a family class that does not inherit
#: :class:`ctxprobe.core.family.FamilyBase` gets its optional members' defaults.
#: (Providers and tokenizers are factories: their products get theirs where the
#: factory is called, :func:`ctxprobe.models.resolve_provider` and
#: :func:`ctxprobe.tokenizers.resolve_tokenizer`.)
_ADAPTERS = {"families": _family_class, "providers": _provider_factory}


_ENTRIES: dict[str, dict[str, Entry]] = {g: {} for g in GROUPS}
_LOCK = threading.RLock()
_STATE = {"loaded": False}


def register(group: str, name: str, target: str | object, *, origin: str = "ctxprobe", replace: bool = False,
             **meta: Any) -> Entry:
    """Add an entry. A name already taken raises, unless ``replace`` (tests, deliberate overrides).
    A family is kept as its declaration (``meta``: its parts, for a class given alone); the
    presets a declaration brings are registered with it. A provider's declaration is kept as
    its factory and its facts (``meta``); the tokenizer schemes it brings are registered with it."""
    if group not in _ENTRIES:
        raise ValueError(f"unknown registry group {group!r} (one of {', '.join(GROUPS)})")
    if not name or name != name.strip():
        raise ValueError(f"bad {group} name {name!r}")
    if group == "families" and (meta or not isinstance(target, str)):
        target, meta = declare(name, target, **meta), {}
    declared: ProviderDeclaration | None = None
    if group == "providers" and isinstance(target, ProviderDeclaration):
        if meta:
            raise ValueError(f"provider '{name}': give its parts on its declaration, not beside it ({', '.join(meta)})")
        if target.name != name:
            raise ValueError(f"provider declared as '{target.name}' registered as '{name}'")
        declared = target
        target, meta = declared.factory, declared.meta()
    entry = Entry(group, name, target, origin, dict(meta))
    _ensure_loaded()  # built-ins first: a plugin cannot take a built-in's name by registering early
    with _LOCK:
        old = _ENTRIES[group].get(name)
        if old is not None and not replace:
            raise CtxprobeError(f"{group[:-1]} '{name}' is registered twice ({old.origin} and {origin})")
        _ENTRIES[group][name] = entry
    if isinstance(target, FamilyDeclaration):
        for preset, value in target.presets.items():
            register("presets", preset, value, origin=origin, replace=replace)
    if declared is not None:
        for scheme, factory in declared.tokenizers.items():
            register("tokenizers", scheme, factory, origin=origin, replace=replace, bare=True, provider=name)
    return entry


def unregister(group: str, name: str) -> None:
    with _LOCK:
        _ENTRIES[group].pop(name, None)


def _ensure_loaded() -> None:
    if _STATE["loaded"]:
        return
    with _LOCK:
        if _STATE["loaded"]:
            return
        _STATE["loaded"] = True
        from ctxprobe.core.builtins import register_builtins

        register_builtins(register)
        _load_entry_points()


def _load_entry_points() -> None:
    """Installed plugins. A name a built-in already has is skipped (built-ins cannot be
    shadowed by installing something), as is a second distribution's copy of a name."""
    from importlib.metadata import entry_points

    for group in GROUPS:
        for ep in entry_points(group=ENTRY_POINT_PREFIX + group):
            if ep.name in _ENTRIES[group]:
                continue
            dist = getattr(ep, "dist", None)
            origin = getattr(dist, "name", None) or "entry point"
            _ENTRIES[group][ep.name] = Entry(group, ep.name, ep.value, origin, {})


def find(group: str, name: str) -> Entry | None:
    _ensure_loaded()
    with _LOCK:
        return _ENTRIES[group].get(name)


def entries(group: str) -> list[Entry]:
    _ensure_loaded()
    with _LOCK:
        return sorted(_ENTRIES[group].values(), key=lambda e: e.name)


def provider_declaration(entry: Entry) -> ProviderDeclaration | None:
    """The declaration an entry point of the ``providers`` group names (``pkg.mod:PROVIDER``),
    imported; None for a factory (a declaration registered in code is kept as its factory
    and ``meta``)."""
    if entry.group != "providers" or not isinstance(entry.target, str):
        return None
    target = entry._import()
    return target if isinstance(target, ProviderDeclaration) else None


def declared_families() -> list[FamilyDeclaration]:
    """The declarations of the families registered as one (built-ins, and plugins that
    register in code), in name order, without importing anything: a family named only by an
    entry point's path is read when it is used, so its command (and presets) are not here."""
    return [e.target for e in entries("families") if isinstance(e.target, FamilyDeclaration)]


def names(group: str) -> list[str]:
    return [e.name for e in entries(group)]


def did_you_mean(name: str, candidates: list[str] | None = None, group: str | None = None) -> str | None:
    """The closest known name, or None."""
    pool = candidates if candidates is not None else names(group or "")
    close = difflib.get_close_matches(name.lower(), pool, n=1, cutoff=0.65)
    return close[0] if close else None


def get(group: str, name: str, *, what: str | None = None) -> Entry:
    """The entry, or a one-line :class:`CtxprobeError` naming the known ones (with a "did you mean")."""
    entry = find(group, name)
    if entry is not None:
        return entry
    known = names(group)
    label = what or SINGULAR.get(group, group)
    guess = did_you_mean(name, known)
    hint = f"did you mean '{guess}'? " if guess else ""
    raise CtxprobeError(f"unknown {label} '{name}'; {hint}available: {', '.join(known)}")


def load(group: str, name: str, *, what: str | None = None) -> Any:
    return get(group, name, what=what).load()


def reset() -> None:
    """Forget every entry: the next lookup reads built-ins and entry points again."""
    with _LOCK:
        for group in _ENTRIES.values():
            group.clear()
        _STATE["loaded"] = False
