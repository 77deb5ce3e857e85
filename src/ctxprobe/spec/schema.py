"""The sweep spec: a typed, validated description of what to measure.

A spec is loaded from YAML (``ctxprobe run spec.yaml``) or built from CLI flags. Unknown
keys and impossible values are one-line :class:`CtxprobeError` messages. The values it is
made of (lengths, depths, budgets, decoding, layout) are parsed in :mod:`ctxprobe.spec.fields`;
here they are assembled, checked together, and hashed into the run id.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, ValidationError, field_validator,
                      model_serializer, model_validator)

from ctxprobe.core.baseline import PARAM as BASELINE_PARAM, BaselineMode, baseline_label, is_baseline
from ctxprobe.errors import CtxprobeError
from ctxprobe.spec.fields import (Decoding, PromptLayout, default_output_limit, parse_budgets, parse_depths,
                                  parse_length, parse_lengths)
from ctxprobe.spec.threshold import FALLBACK_REPS, Bar, check_bar, check_threshold, derived_reps
from ctxprobe.spec.names import ModelRef, as_ref, canonical_model, parse_model


#: Settings that change how a sweep is sent or read, never its results: not hashed.
TRANSPORT_FIELDS = {"concurrency", "timeout", "retries", "threshold", "bars", "rpm", "tpm", "max_cost", "prices",
                    "force_judge", "executor", "ray_address", "ray_replicas", "endpoints", "build_workers",
                    "live_tokens", "base_url", "batch", "batch_poll",
                    "cache_prompt", "pricing", "slots"}


def _floor_kind(family: str) -> str | None:
    """How a family makes its noise floor (``FamilyBase.floor_kind``), from the registry."""
    from ctxprobe.core import registry

    entry = registry.find("families", str(family))
    return entry.load().floor_kind if entry is not None else None



#: The family a spec that names none sweeps (and ``--distractors``' family): plain retrieval.
DEFAULT_FAMILY = "niah"


class Spec(BaseModel):
    """One sweep. Fields that only affect transport (concurrency, timeout, retries) or how
    results are read (threshold) are left out of the run identity, so changing them resumes
    the same run instead of starting a new one."""

    model_config = ConfigDict(extra="forbid")

    #: Any accepted spelling, parsed once into the typed reference; serialised (and
    #: stored, and hashed into the run id) as its canonical string (openai/gpt-4o → openai:gpt-4o).
    model: ModelRef = Field(default_factory=lambda: parse_model("local"))
    #: Where an OpenAI-compatible server is (``--base-url``; else ``OPENAI_BASE_URL``) for
    #: ``vllm/NAME``, ``openai-api/NAME``…: transport, not identity.
    base_url: str | None = None
    tokenizer: str | None = None  # inferred from the model when absent
    #: Task families and their parameters, e.g. ``{"niah": {"distractors": 3}, "vartrack": {}}``.
    #: Also accepts a comma string or list of names. Parameters are validated by each family.
    families: dict[str, dict[str, Any]] = Field(default_factory=lambda: {DEFAULT_FAMILY: dict[str, Any]()})  # typed: {} infers Never
    lengths: list[int] = Field(default_factory=lambda: [1024, 2048, 4096, 8192])
    depths: list[float] = Field(default_factory=lambda: [0.0, 0.25, 0.5, 0.75, 1.0])
    #: Repetitions per cell. Not given: the smallest grid in which a model with no misses is
    #: shown to clear the bar (``threshold``, or the strictest of ``bars``) at 95% confidence
    #: (:func:`ctxprobe.spec.threshold.derived_reps`: 24 cases a length at 0.856, so 5 reps
    #: over 5 depths); the value is stored in the spec, so the run id is fixed by it.
    reps: int = Field(FALLBACK_REPS, ge=1, le=100_000)
    seed: int = 0
    haystack: str | None = None  # None/"prose": built-in generated prose; else a directory
    decoding: Decoding = Field(default_factory=Decoding)
    #: Reasoning (thinking) budgets in tokens, a grid axis like lengths and depths: every
    #: case is sent once per budget, each provider mapping it to its own control
    #: (docs/reasoning.md). None: no such axis (run ids of specs without it unchanged).
    reasoning_budgets: list[int] | None = None
    allow_beyond_window: bool = False
    #: Instruction position and depth-0 separator (see :class:`PromptLayout`); families
    #: with an anchor's own prompt (phonebook, the ruler preset) keep theirs.
    layout: PromptLayout = Field(default_factory=PromptLayout)
    #: Cases of one (length, repetition) share filler across depths (prefix-cache friendly,
    #: depth effects paired). False: every case has its own filler, keys and values.
    share_prefix: bool = True
    #: Noise floor: ``no-context`` runs, beside each case, its twin with the evidence removed
    #: (label ``FAMILY@no-context``; :mod:`ctxprobe.core.baseline`). None: no floor.
    baseline: BaselineMode | None = None
    #: A judge model for open-ended answers (documents with ``match: judge``); calibrated before use.
    judge: str | None = None
    judge_labels: str | None = None  # a labelled JSONL for calibration (default: a built-in synthetic set)
    force_judge: bool = False  # use the judge even if its calibration fails
    #: Family label → the prompt tokens it needs before any filler, for a family that cannot
    #: be built at some of ``lengths`` (``longout``'s long answers at 1K): it runs at the
    #: lengths that hold it (:meth:`lengths_of`), the others are not sent and the report marks
    #: them "too short". Found by building (:func:`ctxprobe.cases.fitting.fit_lengths`), so it
    #: follows from the rest of the spec and the tokenizer: no part of the run's identity, and
    #: left out of the stored spec when empty.
    too_short: dict[str, int] = Field(default_factory=dict)
    # transport and reading (not part of the run identity)
    concurrency: int = Field(4, ge=1, le=1024)
    #: The server's parallel prefix-cache slots (None: as the server reports them, llama.cpp's
    #: ``/props``; 0: send case by case, no prefix-aware scheduling). With slots, the cases
    #: sharing a prefix go in order to one slot, min(slots, concurrency) chains at a time.
    slots: int | None = Field(None, ge=0, le=1024)
    timeout: float = Field(600.0, gt=0)
    retries: int = Field(4, ge=0, le=100)
    threshold: float = Field(0.856, description="accuracy bar for effective length, in (0, 1]")
    #: Per-family bars overriding ``threshold``: a number, ``ruler`` (0.856), ``nolima`` or
    #: ``relative:F`` (F x the family's score at its shortest length).
    bars: dict[str, Bar] = Field(default_factory=dict, description="per-family accuracy bars")
    rpm: float | None = Field(None, gt=0, description="requests per minute limit")
    tpm: float | None = Field(None, gt=0, description="tokens per minute limit (prompt + max output)")
    max_cost: float | None = Field(None, ge=0, description="stop before spending more than this many USD")
    prices: str | None = None  # a YAML price file extending the built-in table
    #: Prompt caching of hosted APIs: ``auto`` asks for it where a provider needs asking
    #: (Anthropic breakpoints, OpenAI ``prompt_cache_key``; Gemini caches 2.5 models
    #: implicitly, older ones through explicit caches), ``explicit`` also uses Gemini's
    #: explicit caches on 2.5 models, ``off`` asks for none.
    cache_prompt: Literal["auto", "explicit", "off"] = "auto"
    #: Which of the plan's three prices ``--max-cost`` caps (default: cached, or on-demand
    #: with ``cache_prompt: off``); ``batch`` is the price of a run sent as provider batches.
    pricing: Literal["on-demand", "cached", "batch"] | None = None
    executor: Literal["local", "ray"] = "local"
    ray_address: str | None = None  # default: $RAY_ADDRESS, else a local Ray instance
    ray_replicas: int = Field(1, ge=1, le=1024)  # Ray actors (each calls the endpoint or hosts the model)
    endpoints: list[str] | None = None  # Ray: several model specs (replicas) to balance over
    build_workers: int = Field(1, ge=0, le=256)  # processes building cases; 0 = every core
    live_tokens: int | None = Field(None, gt=0)  # cap on tokens of built-but-unstored cases
    batch: bool = False  # send the sweep as provider batches (OpenAI, Anthropic, Gemini)
    batch_poll: float = Field(30.0, gt=0, description="seconds between two polls of a waiting batch")

    @model_validator(mode="before")
    @classmethod
    def _parse_model(cls, data: Any) -> Any:
        """The model is parsed here, where the spec is made, with ``base_url`` beside it
        (``vllm/NAME`` needs it); the field then holds the :class:`ModelRef`."""
        if isinstance(data, dict) and isinstance(data.get("model"), str) and not isinstance(data["model"], ModelRef):
            base_url = data.get("base_url")
            data = {**data, "model": parse_model(data["model"], base_url if isinstance(base_url, str) else None)}
        return data

    @model_validator(mode="after")
    def _canonical_judge(self) -> Spec:
        if self.judge:
            try:  # openai/gpt-4o-mini works as a judge too; judge-only forms (sim-judge:) are the judge's to check
                self.judge = canonical_model(self.judge)
            except CtxprobeError:
                pass
        return self

    @model_validator(mode="after")
    def _batch_alone(self) -> Spec:
        """A batch run is sent from this process and holds its cases until results arrive."""
        if self.batch:
            clash = ("--executor ray" if self.executor != "local" else "--endpoint" if self.endpoints
                     else "--live-tokens" if self.live_tokens else None)
            if clash:
                raise ValueError(f"--batch cannot be combined with {clash}: a batch run sends from this process "
                                 "and holds each batch's cases until its results arrive")
        return self

    @model_validator(mode="after")
    def _baseline_without_budgets(self) -> Spec:
        """The noise floors are read per family, the budget axis splits a family into one
        curve per budget: together their report would pair neither, so they are refused."""
        if self.baseline is not None and self.reasoning_budgets is not None:
            raise ValueError("--baseline cannot be combined with --reasoning-budgets yet: run the noise floor "
                             "as its own sweep (same lengths and seed) beside the budget sweep")
        return self

    @model_validator(mode="after")
    def _reps_that_answer(self) -> Spec:
        """Unless ``reps`` was given, enough repetitions for an all-correct length to clear the bar."""
        if "reps" not in self.model_fields_set:
            used = [b for f, b in self.bars.items() if f in self.families]
            bars = [self.threshold] * (len(used) < len(self.families)) + [
                float(b.partition(":")[2]) if isinstance(b, str) else b for b in used]  # relative:F is at most F
            self.reps = derived_reps(bars, len(self.depths))
        return self

    @model_validator(mode="after")
    def _output_limit(self) -> Spec:
        """Unless ``max_tokens`` was given, room for every family's longest correct answer."""
        if "max_tokens" not in self.decoding.model_fields_set:
            self.decoding.max_tokens = max(default_output_limit(params.get("family", label), params)
                                           for label, params in self.families.items())
        return self

    @model_validator(mode="after")
    def _baseline_twins(self) -> Spec:
        """With ``baseline``, a ``LABEL@no-context`` entry beside every label whose family
        builds a no-context twin (its parameters plus ``family`` and the baseline marker),
        so the plan, sizing and the builder treat the twins as labels of their own."""
        if self.baseline is None:
            return self
        for label, params in list(self.families.items()):
            if is_baseline(label):
                continue
            name = str(params.get("family", label))
            if _floor_kind(name) == "no-context":
                self.families.setdefault(baseline_label(label), {**params, "family": name, BASELINE_PARAM: self.baseline})
        return self

    @field_validator("threshold")
    @classmethod
    def _threshold_in_range(cls, v: float) -> float:
        return check_threshold(v)  # the same one-line refusal as report, compare and plan

    @field_validator("bars", mode="before")
    @classmethod
    def _bars(cls, v: Any) -> dict[str, Bar]:
        if isinstance(v, str):
            from ctxprobe.spec.threshold import parse_bars

            return parse_bars(v)
        if not isinstance(v, dict):
            raise ValueError("bars must map FAMILY: BAR, e.g. {niah: 0.9, vartrack: nolima}")
        return {str(k): check_bar(b) for k, b in v.items()}

    @field_validator("live_tokens", mode="before")
    @classmethod
    def _live_tokens(cls, v: Any) -> int | None:
        return None if v is None else parse_length(v)

    @field_validator("families", mode="before")
    @classmethod
    def _families(cls, v: Any) -> dict[str, dict[str, Any]]:
        if isinstance(v, str):
            v = [x.strip() for x in v.split(",") if x.strip()]
        if isinstance(v, list):
            if len(set(v)) != len(v):
                raise ValueError("families repeat")
            v = {str(name): {} for name in v}
        if not isinstance(v, dict) or not v:
            raise ValueError("give at least one family, e.g. niah")
        return {str(k): dict(p or {}) for k, p in v.items()}

    @field_validator("lengths", mode="before")
    @classmethod
    def _lengths(cls, v: Any) -> list[int]:
        out = parse_lengths(v)
        if not out:
            raise ValueError("at least one length is needed")
        if len(set(out)) != len(out):
            raise ValueError("lengths repeat")
        return sorted(out)

    @field_validator("reasoning_budgets", mode="before")
    @classmethod
    def _budgets(cls, v: Any) -> list[int] | None:
        if v is None:
            return None
        out = parse_budgets(v)
        if not out:
            raise ValueError("give at least one reasoning budget, e.g. 0,1k,4k")
        if len(set(out)) != len(out):
            raise ValueError("reasoning budgets repeat")
        if max(out) > 1_048_576:
            raise ValueError("a reasoning budget above 1m tokens is not plausible")
        return sorted(out)

    @field_validator("depths", mode="before")
    @classmethod
    def _depths(cls, v: Any) -> list[float]:
        out = parse_depths(v)
        if not out:
            raise ValueError("at least one depth is needed")
        bad = [d for d in out if not 0.0 <= d <= 1.0]
        if bad:
            raise ValueError(f"depth {bad[0]:g} is outside [0, 1]; depths are fractions (0 = start, 1 = end)")
        if len(set(out)) != len(out):
            raise ValueError("depths repeat")
        return sorted(out)

    @property
    def pricing_mode(self) -> Literal["on-demand", "cached", "batch"]:
        """The price ``--max-cost`` caps: ``pricing``, else cached unless caching is off."""
        if self.pricing is not None:
            return self.pricing
        if getattr(self, "batch", False):  # sent as provider batches, where this build has them
            return "batch"
        return "on-demand" if self.cache_prompt == "off" else "cached"

    def identity(self, *, tokenizer: str, version: str, tokenizer_fingerprint: str | None = None) -> dict[str, Any]:
        """What determines the results: the spec without transport/reading settings."""
        d = self.model_dump(exclude=TRANSPORT_FIELDS)
        d.pop("too_short", None)  # follows from the rest (the families as built): never hashed
        if self.baseline is None:
            d.pop("baseline")  # the default: run ids from before the field existed stay valid
        else:  # the twins are implied by ``baseline``: hashed once, through it
            d["families"] = {k: v for k, v in d["families"].items() if not is_baseline(k)}
        if self.share_prefix:
            d.pop("share_prefix")  # the default: run ids from before the flag existed stay valid
        if self.layout.is_default():
            d.pop("layout")  # likewise: the default layout is the one older runs were built with
        else:
            d["layout"] = self.layout.hashed()  # message fields at their defaults: left out likewise
        if self.decoding.top_p is None:
            d["decoding"].pop("top_p")  # likewise: unset top_p leaves older run ids valid
        if self.reasoning_budgets is None:
            d.pop("reasoning_budgets")  # likewise: a sweep without the budget axis keeps its id
        # A server model counts by what it is, not where it is served: the same server
        # reached at another address resumes the same run. Its tokenizer counts by its
        # fingerprint (token ids of a fixed chat) instead of the URL.
        d["model"] = as_ref(self.model).identity  # a ModelRef (a copy updated with a string: parsed here)
        d["tokenizer"] = _location_free_tokenizer(tokenizer, tokenizer_fingerprint)
        d["ctxprobe_version"] = version
        # Files the cases are built from (--haystack DIR, a documents family's docs/qa) count
        # by content: editing them must start a new run, not resume the old one.
        d["content_digests"] = {
            f"{where}": digest
            for where, value in [("haystack", self.haystack), ("judge_labels", self.judge_labels)]
            + [(f"{fam}.{k}", v) for fam, params in d["families"].items() for k, v in params.items()]
            if (digest := _path_digest(value)) is not None
        }
        return d

    def lengths_of(self, label: str) -> list[int]:
        """The lengths family ``label`` is sent at: every length, less those too short for it."""
        need = self.too_short.get(label)
        return list(self.lengths) if need is None else [n for n in self.lengths if n >= need]

    @model_serializer(mode="wrap")
    def _without_empty_too_short(self, handler: SerializerFunctionWrapHandler) -> Any:
        """``too_short`` only when some family is: stored specs (and their JSON) stay as before."""
        out = handler(self)
        if isinstance(out, dict) and not out.get("too_short"):
            out.pop("too_short", None)
        return out

    def run_id(self, *, tokenizer: str, version: str, tokenizer_fingerprint: str | None = None) -> str:
        """The run's id; ``tokenizer_fingerprint`` stands in for an ``endpoint:URL`` tokenizer's URL."""
        identity = self.identity(tokenizer=tokenizer, version=version, tokenizer_fingerprint=tokenizer_fingerprint)
        blob = json.dumps(identity, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:12]


def _location_free_tokenizer(name: str, fingerprint: str | None) -> str:
    """``endpoint:URL?model=NAME`` → ``endpoint?model=NAME#FINGERPRINT``; other names unchanged."""
    match = re.match(r"^endpoint:https?://[^?\s]+(?P<query>\?\S*)?$", name)
    if not match:
        return name
    return "endpoint" + (match.group("query") or "") + (f"#{fingerprint}" if fingerprint else "")


def _path_digest(value: object) -> str | None:
    """sha256 over a file's bytes, or a directory's files (relative names + bytes); None if
    ``value`` does not name an existing path."""
    if not isinstance(value, str) or not value or value == "prose" or len(value) > 4096:
        return None
    p = Path(value).expanduser()
    try:
        if p.is_file():
            files = [p]
        elif p.is_dir():
            files = sorted(f for f in p.rglob("*") if f.is_file() and not any(part.startswith(".") for part in f.relative_to(p).parts))
        else:
            return None
        h = hashlib.sha256()
        for f in files:
            h.update(str(f.relative_to(p) if p.is_dir() else f.name).encode() + b"\0")
            h.update(f.read_bytes())
        return h.hexdigest()[:16]
    except OSError:
        return None


#: Spec fields that are not one flag's value (nested, or built from several flags).
_COMPOUND_FIELDS = frozenset({"families", "decoding", "layout", "too_short"})


def spec_keys() -> tuple[str, ...]:
    """The spec's top-level keys a single value sets (``--NAME`` flags of ``run``), read
    from the :class:`Spec` model's fields, in their order."""
    return tuple(name for name in Spec.model_fields if name not in _COMPOUND_FIELDS)


def _one_line(err: ValidationError) -> str:
    e = err.errors()[0]
    where = ".".join(str(p) for p in e["loc"]) or "spec"
    msg = e["msg"].removeprefix("Value error, ")
    if e["type"] == "extra_forbidden":
        return f"unknown spec key '{where}' (see `ctxprobe run --help` for the accepted keys)"
    ours = _BOUNDS.get(e["type"])
    if ours is not None and isinstance(e.get("ctx"), dict):
        word, key = ours
        loc = [str(p) for p in e["loc"]]
        flag = (f"--{loc[-1].replace('_', '-')}" if len(loc) == 1 or loc[0] in ("decoding", "layout")
                else where)  # decoding.max_tokens is --max-tokens; a family's parameter is its own
        return f"{flag} {e.get('input')}: must be {word} {e['ctx'][key]} (`{where}` in a spec file)"
    return f"bad spec value for '{where}': {msg}"


#: pydantic's bound errors, said in ctxprobe's words ("--reps 0: must be at least 1").
_BOUNDS = {"greater_than_equal": ("at least", "ge"), "greater_than": ("more than", "gt"),
           "less_than_equal": ("at most", "le"), "less_than": ("less than", "lt")}


def make_spec(data: dict[str, Any]) -> Spec:
    try:
        return Spec.model_validate(data)
    except ValidationError as err:
        raise CtxprobeError(_one_line(err)) from None
    except CtxprobeError:
        raise


def load_spec(path: str | Path, overrides: dict[str, Any] | None = None) -> Spec:
    """Read a YAML spec; ``overrides`` (from CLI flags) win over the file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as err:
        raise CtxprobeError(f"cannot read spec {p}: {err.strerror or err}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise CtxprobeError(f"spec {p} is not valid YAML{where}: fix the syntax and retry") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise CtxprobeError(f"spec {p} must be a YAML mapping of keys such as model, lengths, depths")
    data.update(overrides or {})
    return make_spec(data)
