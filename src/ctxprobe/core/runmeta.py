"""What a run records about itself beside its spec: :class:`RunMeta`, typed.

Stored as one JSON object (``runs.meta_json``). :meth:`RunMeta.to_json` is the only
writer and :meth:`RunMeta.from_json` the only reader: a key it does not know (a newer
ctxprobe's, or a plugin's) and a value of an unexpected type are kept in ``extra`` and
written back unchanged, so stores of every earlier format still load.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass
class Preflight:
    """What the pre-run probe found: filled in by ``sweep/preflight.py`` as it probes (so
    not frozen), stored as is, read back by :meth:`from_json`."""

    endpoint: dict[str, Any] = field(default_factory=dict)
    context_window: int | None = None
    counted_tokens: int | None = None
    reported_tokens: int | None = None
    deterministic: bool | None = None
    probe_requests: int = 0
    #: The trained window the server reports (llama.cpp's ``n_ctx_train``), if any.
    trained_context: int | None = None
    #: The served window exceeds the trained one and the server reports no position scaling.
    unscaled_extension: bool = False
    warnings: list[str] = field(default_factory=list)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Preflight:
        endpoint = data.get("endpoint")
        det = data.get("deterministic")
        return cls(endpoint=dict(endpoint) if isinstance(endpoint, Mapping) else {},
                   context_window=_int(data.get("context_window")), counted_tokens=_int(data.get("counted_tokens")),
                   reported_tokens=_int(data.get("reported_tokens")),
                   deterministic=det if isinstance(det, bool) else None,
                   probe_requests=_int(data.get("probe_requests")) or 0,
                   trained_context=_int(data.get("trained_context")),
                   unscaled_extension=bool(data.get("unscaled_extension")),
                   warnings=[str(w) for w in data.get("warnings") or []])

    def to_json(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def to_dict(self) -> dict[str, Any]:  # the name the sweep's other reports use
        return self.to_json()

    @property
    def exact_counts(self) -> bool:
        """The server counted the probe chat exactly as our tokenizer did."""
        return self.reported_tokens is not None and self.reported_tokens == self.counted_tokens

    @property
    def served_trained_context(self) -> int | None:
        """The trained window the server reports (llama.cpp's ``n_ctx_train``), if any."""
        meta = self.endpoint.get("meta")
        value = (meta.get("n_ctx_train") if isinstance(meta, Mapping) else None) or self.endpoint.get("n_ctx_train")
        return int(value) if value else None


#: Keys whose stored value is a JSON object kept as such (their writers own their shape).
_OBJECTS = ("plan", "planned_cost", "judge_calibration", "transport", "adaptive", "pack")


@dataclass(frozen=True)
class RunMeta:
    """A run's facts beside its spec. Every field is optional (None: not recorded; an
    older run, or a run of another kind). As an update (``Store.update_run``) only the
    fields that are set replace the stored ones."""

    #: The tokenizer's chat template, hashed (what the prompts were rendered with).
    chat_template_hash: str | None = None
    #: The model's trained context, from its tokenizer files or provider.
    trained_context: int | None = None
    #: The window the provider serves.
    context_window: int | None = None
    #: ``shared`` or ``independent``: how the cases' filler was built across depths.
    prefix_sharing: str | None = None
    #: Cases the run plans (counts are shown against it).
    planned_cases: int | None = None
    #: The case builder's version (a resume is refused across builders).
    builder_version: int | None = None
    #: What the pre-run probe of the endpoint found.
    preflight: Preflight | None = None
    #: The grid's summary (``plan.grid.summarize``).
    plan: dict[str, Any] | None = None
    #: The plan's three prices (``sweep.pricing``), for the report's planned vs billed.
    planned_cost: dict[str, Any] | None = None
    #: The judge's calibration report (documents with ``match: judge``).
    judge_calibration: dict[str, Any] | None = None
    #: How the run was sent (concurrency, limits, batch...), never part of its identity.
    transport: dict[str, Any] | None = None
    #: ``run --adaptive``: the plan and its decision.
    adaptive: dict[str, Any] | None = None
    #: ``run --cases``: the pack the prompts came from.
    pack: dict[str, Any] | None = None
    #: Keys this version does not know, and values of an unexpected type, as stored.
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> RunMeta:
        """The stored object read back; nothing is dropped (see ``extra``)."""
        data = dict(data or {})
        known: dict[str, Any] = {}
        for name in ("chat_template_hash", "prefix_sharing"):
            if isinstance(data.get(name), str):
                known[name] = data.pop(name)
        for name in ("trained_context", "context_window", "planned_cases", "builder_version"):
            if _int(data.get(name)) is not None:
                known[name] = data.pop(name)
        if isinstance(data.get("preflight"), Mapping):
            known["preflight"] = Preflight.from_json(data.pop("preflight"))
        for name in _OBJECTS:
            if isinstance(data.get(name), Mapping):
                known[name] = dict(data.pop(name))
        return cls(**known, extra={k: v for k, v in data.items() if v is not None})

    def to_json(self) -> dict[str, Any]:
        """The JSON object stored: the fields that are set, then ``extra``."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "extra" or value is None:
                continue
            out[f.name] = value.to_json() if isinstance(value, Preflight) else value
        return {**self.extra, **out}

    @property
    def served_trained_context(self) -> int | None:
        """The trained context: from the tokenizer files, else what the server reports."""
        if self.trained_context:
            return self.trained_context
        return self.preflight.served_trained_context if self.preflight is not None else None
