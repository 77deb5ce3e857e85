"""What each Claude model takes: thinking shapes, how thinking is turned off, sampling
fields, effort levels, and where each rule was read.

The provider's own word comes first: Anthropic's Models API (``models.retrieve``, read once
per run by :meth:`AnthropicProvider.read_model_facts`) states each model's
``capabilities`` (``thinking.types``: ``adaptive``, ``enabled``, ``disabled``;
``effort``: ``low`` … ``max``) and ``lifecycle`` (``active`` / ``deprecated`` /
``retired``, ``retires_at``); :func:`rules_from_api` turns that into :class:`ClaudeRules`.
The hand table below is the offline fallback (``plan``, and a run whose Models API
answers nothing), matched on the model name by the first pattern that fits. A family the
table does not name gets the newest rules (:data:`NEWEST`): new models have dropped
fields, not added them, so the safe guess is to send less.

Thinking shapes (the anthropic SDK's ``ThinkingConfigParam``: ``enabled`` with
``budget_tokens``, ``disabled``, ``adaptive``): ``enabled`` is what Claude 4.5 and older
take; the 4.6 models take ``adaptive`` too; Opus 4.7 and later take ``adaptive`` only.
How a reasoning budget of 0 is sent (:attr:`ClaudeRules.off`): ``disabled`` where the
model takes ``{type: disabled}``; ``omit`` where it does not but thinks only when asked
(Opus 4.7 / 4.8: thinking left out is thinking off); ``never`` where it thinks whatever the
request says (Claude Fable and Mythos: the Models API lists no ``disabled`` and thinking
left out is adaptive), so budget 0 is refused before anything is sent.

Sampling (:func:`sampling_settable`): the anthropic SDK from 2.0 sends
``anthropic-version: 2026-10-21``, under which ``temperature``, ``top_p`` and ``top_k`` are
a 400 whatever the model (the SDK's ``MessageCreateParams`` no longer names them); ctxprobe
sends only what the installed SDK's ``MessageCreateParams`` names, so with such an SDK no
sampling field is sent and decoding is the provider's default, not settable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from ctxprobe.errors import CtxprobeError

if TYPE_CHECKING:
    from ctxprobe.spec import Spec

__all__ = ["ClaudeRules", "EFFORTS", "NEWEST", "SAMPLING_NOTE", "api_version", "claude_rules", "options_refusal", "plan_notes",
           "reasoning_note", "rules_from_api", "sampling_note", "sampling_settable"]

Thinking = Literal["enabled", "both", "adaptive", "none"]
Off = Literal["disabled", "omit", "never"]
#: ``output_config.effort``'s values in the anthropic SDK (``OutputConfigParam``).
EFFORTS = ("low", "medium", "high", "xhigh", "max")
#: What plan, the run header and the report say where the API takes no decoding settings.
SAMPLING_NOTE = "sampling: the provider's default; not settable"


@dataclass(frozen=True)
class ClaudeRules:
    family: str
    thinking: Thinking  # enabled: budget_tokens only; both: adaptive or enabled; adaptive: adaptive only
    sampling: bool  # the model takes temperature / top_p (under an API version that takes them at all)
    efforts: tuple[str, ...]  # output_config.effort values it takes (() : none)
    source: str
    off: Off = "disabled"  # how a reasoning budget of 0 is sent (module docstring)

    @property
    def adaptive_only(self) -> bool:
        return self.thinking == "adaptive"

    @property
    def cited(self) -> str:
        """The source, short: what plan and the errors name."""
        return self.source.split(" (")[0]


_QCODE = "docs.qcode.cc/en/docs/usage/adaptive-thinking's model matrix (read 2026-12-03)"
_47 = ("\"What's new in Claude Opus 4.7\" (sampling parameters removed; budget_tokens a 400), as quoted by "
       "infinitytechstack.uk and neromedia.faion.net (April 2026) and " + _QCODE)
_EFFORT = ("platform.claude.com/docs/en/build-with-claude/effort (stored copy, read 2026-12-04): effort on "
           "Opus 4.5 (low, medium, high), the 4.6 models (max added), Opus 4.7 and later (xhigh added)")
_OFFLINE = "ctxprobe's table (offline fallback; a run reads Anthropic's Models API)"
#: The rules of the newest models known, given to a family the table does not name.
NEWEST = ClaudeRules("unknown", "adaptive", False, EFFORTS,
                     "not in ctxprobe's table: given the newest models' rules (Opus 4.7's), the safe guess", "omit")

#: (pattern on the model name, rules); first match wins.
TABLE: tuple[tuple[str, ClaudeRules], ...] = (
    (r"claude-(fable|mythos)-", ClaudeRules("fable/mythos", "adaptive", False, EFFORTS,
                                            "issue reports of 400s to enabled/disabled thinking and to temperature, "
                                            "and that thinking left out is adaptive (" + _OFFLINE + ")", "never")),
    (r"claude-(opus|sonnet|haiku)-([5-9]|\d\d)(?!\d)",
     ClaudeRules("claude 5+", "adaptive", False, EFFORTS,
                 "Claude 5 thinks adaptively when thinking is left out and takes {type: disabled} (the anthropic "
                 "SDK's ThinkingConfigParam docstring points to each model's behaviour; " + _OFFLINE + ")",
                 "disabled")),
    (r"claude-opus-4-([7-9])(?!\d)", ClaudeRules("opus 4.7+", "adaptive", False, EFFORTS, _47, "omit")),
    (r"claude-opus-4-6(?!\d)", ClaudeRules("opus 4.6", "both", True, ("low", "medium", "high", "max"),
                                           _QCODE + "; " + _EFFORT)),
    (r"claude-sonnet-4-6(?!\d)", ClaudeRules("sonnet 4.6", "both", True, ("low", "medium", "high", "max"),
                                             _QCODE + "; " + _EFFORT)),
    (r"claude-opus-4-5(?!\d)", ClaudeRules("opus 4.5", "enabled", True, ("low", "medium", "high"),
                                           "extended thinking with budget_tokens >= 1,024; " + _EFFORT)),
    (r"claude-(opus|sonnet|haiku)-4(-[0-5])?(-\d{8}|-latest)?$|claude-3",
     ClaudeRules("claude 3-4.5", "enabled", True, (),
                 "extended thinking with budget_tokens >= 1,024 (platform.claude.com extended-thinking page); "
                 "no effort (" + _EFFORT + "); " + _QCODE + " lists Sonnet 4.5 and earlier as enabled-only")),
)


def api_version() -> str | None:
    """The ``anthropic-version`` header the installed SDK sends (None: no SDK)."""
    try:
        from anthropic import _constants
    except ImportError:
        return None
    return str(getattr(_constants, "ANTHROPIC_API_VERSION", "")) or None


def sampling_settable() -> bool:
    """Whether the installed SDK's ``MessageCreateParams`` names ``temperature``: from
    anthropic 2.0 (``anthropic-version: 2026-10-21``) it does not, and the API answers 400
    to it; ctxprobe sends nothing a request type does not name (no ``extra_body``). Without
    the SDK, True (nothing is sent then anyway)."""
    try:
        from anthropic.types.message_create_params import MessageCreateParamsBase
    except ImportError:
        return True
    names = {k for base in MessageCreateParamsBase.__mro__ for k in getattr(base, "__annotations__", {})}
    return "temperature" in names


def sampling_note() -> str | None:
    """The line plan, the run header and the report give where decoding is not settable."""
    if sampling_settable():
        return None
    return (f"{SAMPLING_NOTE} (anthropic-version {api_version() or '?'}, which the installed anthropic SDK sends, "
            "takes no temperature, top_p or top_k: its MessageCreateParams names none)")


def options_refusal(model: str, effort: str | None, adaptive: bool | None,
                    rules: ClaudeRules | None = None) -> str | None:
    """Why ``?effort`` / ``?adaptive`` cannot be sent to ``model`` (None: they can)."""
    rules = rules or claude_rules(model)
    if effort is not None and effort not in rules.efforts:
        return f"{model} takes effort {'|'.join(rules.efforts) or '(none)'}, not {effort} ({rules.cited})"
    if adaptive and rules.thinking in ("enabled", "none"):
        return f"{model} takes no adaptive thinking, only ?thinking=N (budget_tokens, at least 1,024) ({rules.cited})"
    return None


def reasoning_note(model: str, rules: ClaudeRules | None = None) -> str | None:
    """How a reasoning-budget axis is sent to an adaptive-only model (None: as asked)."""
    rules = rules or claude_rules(model)
    if not rules.adaptive_only:
        return None
    zero = {"disabled": "0 is sent as thinking {type: disabled}",
            "omit": "0 leaves thinking out (the model's default: no thinking)",
            "never": "0 is refused (the model cannot stop thinking)"}[rules.off]
    return (f"{model} takes adaptive thinking only ({rules.cited}): a reasoning budget N > 0 is "
            "sent as thinking {type: adaptive} with max_tokens = answer budget + N (a cap the model may stay "
            f"under, not a budget it spends); {zero}; the effort level is ?effort's")


#: A model name that is no Claude id (a proxy's or gateway's own name): the API's general shapes.
NOT_CLAUDE = ClaudeRules("not a Claude id", "enabled", True, EFFORTS,
                         "no Claude family in the name (a proxy's own name): the Messages API's general shapes")


def claude_rules(model: str) -> ClaudeRules:
    """The offline rules of ``model`` (a Claude model id, dated or not); :data:`NEWEST` when
    no row fits a ``claude-`` name; :data:`NOT_CLAUDE` for a name with no ``claude-`` in it."""
    name = model.lower().split("/")[-1]
    if "claude-" not in name:
        return NOT_CLAUDE
    for pattern, rules in TABLE:
        if re.search(pattern, name):
            return rules
    return NEWEST


def _supported(obj: Any, *path: str) -> bool | None:
    for key in path:
        obj = obj.get(key) if isinstance(obj, dict) else None
    value = obj.get("supported") if isinstance(obj, dict) else None
    return value if isinstance(value, bool) else None


def rules_from_api(model: str, info: dict[str, Any], read: str) -> ClaudeRules:
    """The rules ``models.retrieve``'s ``capabilities`` state (``info``: the ``ModelInfo``
    as JSON), the table's where the API states nothing (no ``capabilities``: an older API or
    a proxy). Sampling stays the table's: the API does not state it."""
    table = claude_rules(model)
    caps = info.get("capabilities")
    if not isinstance(caps, dict):
        return table
    types = (caps.get("thinking") or {}).get("types") if isinstance(caps.get("thinking"), dict) else None
    adaptive, enabled, disabled = (_supported(types, k) for k in ("adaptive", "enabled", "disabled"))
    if _supported(caps, "thinking") is False:
        thinking: Thinking = "none"
    elif adaptive and enabled:
        thinking = "both"
    elif adaptive:
        thinking = "adaptive"
    elif enabled:
        thinking = "enabled"
    else:
        thinking = table.thinking
    if disabled is True:
        off: Off = "disabled"
    elif disabled is False:
        off = "omit" if table.off == "omit" else "never"
    else:
        off = table.off
    effort = caps.get("effort") if isinstance(caps.get("effort"), dict) else None
    if effort is None:
        efforts = table.efforts
    elif effort.get("supported") is False:
        efforts = ()
    else:
        efforts = tuple(e for e in EFFORTS if _supported(effort, e))
    return replace(table, family=f"{model} (Models API)", thinking=thinking, efforts=efforts, off=off,
                   source=f"Anthropic's Models API (models.retrieve capabilities, read {read})")


def plan_notes(spec: Spec) -> list[str]:
    """What ``plan`` says of a Claude sweep (the profile's ``plan_notes``): decoding the SDK's
    API version cannot set, the model's thinking rules when budgets are swept; a budget 0
    the model cannot send is refused in one line."""
    warnings: list[str] = []
    said = sampling_note()  # decoding not settable under the SDK's API version
    if said:
        warnings.append(said)
    rules = claude_rules(spec.model.name)
    if spec.reasoning_budgets:
        note = reasoning_note(spec.model.name)
        if note:
            warnings.append(note)
        zero = {"disabled": "thinking {type: disabled}", "omit": "thinking left out",
                "never": "refused (cannot stop thinking)"}[rules.off]
        warnings.append(f"{spec.model.name}: thinking {rules.thinking}, budget 0 as {zero}, effort "
                        f"{'|'.join(rules.efforts) or '(none)'}; rules from {rules.cited} (the run reads "
                        "Anthropic's Models API and follows it)")
    if 0 in (spec.reasoning_budgets or []) and rules.off == "never":
        raise CtxprobeError(f"{spec.model.name} cannot turn thinking off ({rules.cited}), so reasoning budget 0 "
                            "cannot be sent: start --reasoning-budgets above 0")
    return warnings
