"""What each Claude model family takes: thinking shapes, sampling fields, effort levels.

One table, matched on the model name by the first pattern that fits, each row with where
it was read. A family the table does not name (a new one: ``claude-fable-*`` was one) gets
the newest rules (:data:`NEWEST`), never the oldest: new models have dropped fields, not
added them, so the safe guess is to send less.

Thinking shapes (anthropic SDK 2.16's ``ThinkingConfigParam``: ``enabled`` with
``budget_tokens``, ``disabled``, ``adaptive``): ``enabled`` is what Claude 4.5 and older
take; the 4.6 models take ``adaptive`` too (the SDK warns that ``enabled`` is deprecated
on ``claude-opus-4-6``: ``MODELS_TO_WARN_WITH_THINKING_ENABLED``); Opus 4.7 and the models
after it take ``adaptive`` only (``enabled`` and ``disabled`` are a 400).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = ["ClaudeRules", "EFFORTS", "NEWEST", "claude_rules", "options_refusal", "reasoning_note"]

Thinking = Literal["enabled", "both", "adaptive"]
#: ``output_config.effort``'s values in the anthropic SDK (``OutputConfigParam``).
EFFORTS = ("low", "medium", "high", "xhigh", "max")


@dataclass(frozen=True)
class ClaudeRules:
    family: str
    thinking: Thinking  # enabled: budget_tokens only; both: adaptive or enabled; adaptive: adaptive only
    sampling: bool  # takes temperature / top_p
    efforts: tuple[str, ...]  # output_config.effort values it takes (() : none)
    source: str

    @property
    def adaptive_only(self) -> bool:
        return self.thinking == "adaptive"


_QCODE = "docs.qcode.cc/en/docs/usage/adaptive-thinking's model matrix (read 2026-12-03)"
_47 = ("\"What's new in Claude Opus 4.7\" (sampling parameters removed; budget_tokens a 400), as quoted by "
       "infinitytechstack.uk and neromedia.faion.net (April 2026) and " + _QCODE)
#: The rules of the newest models known, given to a family the table does not name.
NEWEST = ClaudeRules("unknown", "adaptive", False, EFFORTS,
                     "not in ctxprobe's table: given the newest models' rules (Opus 4.7's), the safe guess")

#: (pattern on the model name, rules); first match wins.
TABLE: tuple[tuple[str, ClaudeRules], ...] = (
    (r"claude-(fable|mythos)-", ClaudeRules("fable/mythos", "adaptive", False, EFFORTS,
                                            "issue reports of 400s to enabled/disabled thinking and to temperature; "
                                            "the SDK lists them in ModelParam (anthropic 2.16), rules taken as Opus 4.7's")),
    (r"claude-mythos-preview", ClaudeRules("mythos", "adaptive", False, EFFORTS,
                                           "anthropic 2.16 warns on enabled thinking for it; taken as Opus 4.7's")),
    (r"claude-(opus|sonnet|haiku)-([5-9]|\d\d)(?!\d)", ClaudeRules("claude 5+", "adaptive", False, EFFORTS,
                                                                "newer than Opus 4.7: its rules (" + _47 + ")")),
    (r"claude-opus-4-([7-9])(?!\d)", ClaudeRules("opus 4.7+", "adaptive", False, EFFORTS, _47)),
    (r"claude-opus-4-6(?!\d)", ClaudeRules("opus 4.6", "both", True, ("low", "medium", "high", "max"),
                                           _QCODE + "; the SDK warns that enabled is deprecated on it")),
    (r"claude-sonnet-4-6(?!\d)", ClaudeRules("sonnet 4.6", "both", True, ("low", "medium", "high"), _QCODE)),
    (r"claude-(opus|sonnet|haiku)-4(-[0-5])?(-\d{8}|-latest)?$|claude-3",
     ClaudeRules("claude 3-4.5", "enabled", True, EFFORTS,
                 "extended thinking with budget_tokens >= 1,024 (platform.claude.com extended-thinking page); "
                 + _QCODE + " lists Sonnet 4.5 and earlier as enabled-only")),
)


def options_refusal(model: str, effort: str | None, adaptive: bool | None) -> str | None:
    """Why ``?effort`` / ``?adaptive`` cannot be sent to ``model`` (None: they can)."""
    rules = claude_rules(model)
    if effort is not None and effort not in rules.efforts:
        return (f"{model} takes effort {'|'.join(rules.efforts) or '(none)'}, not {effort} "
                f"({rules.source.split(' (')[0]})")
    if adaptive and rules.thinking == "enabled":
        return (f"{model} takes no adaptive thinking, only ?thinking=N (budget_tokens, at least 1,024) "
                f"({rules.source.split(' (')[0]})")
    return None


def reasoning_note(model: str) -> str | None:
    """How a reasoning-budget axis is sent to an adaptive-only model (None: as asked)."""
    rules = claude_rules(model)
    if not rules.adaptive_only:
        return None
    return (f"{model} takes adaptive thinking only ({rules.source.split(' (')[0]}): a reasoning budget N > 0 is "
            "sent as thinking {type: adaptive} with max_tokens = answer budget + N (a cap the model may stay "
            "under, not a budget it spends); 0 leaves thinking out (the model's default); the effort level is "
            "?effort's")


#: A model name that is no Claude id (a proxy's or gateway's own name): the API's general shapes.
NOT_CLAUDE = ClaudeRules("not a Claude id", "enabled", True, EFFORTS,
                         "no Claude family in the name (a proxy's own name): the Messages API's general shapes")


def claude_rules(model: str) -> ClaudeRules:
    """The rules of ``model`` (a Claude model id, dated or not); :data:`NEWEST` when no row
    fits a ``claude-`` name; :data:`NOT_CLAUDE` for a name with no ``claude-`` in it."""
    name = model.lower().split("/")[-1]
    if "claude-" not in name:
        return NOT_CLAUDE
    for pattern, rules in TABLE:
        if re.search(pattern, name):
            return rules
    return NEWEST
