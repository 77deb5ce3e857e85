"""One line of an instance pack: :class:`PackLine`, the one writer (:meth:`PackLine.to_json`)
and the one reader (:meth:`PackLine.from_json`) of the format.

A pack is JSON lines, one self-contained case each: the case (cell, repetition, seed,
sample, messages, answer key, scorer parameters, token count) plus what is needed to
rebuild and judge it on its own (tokenizer, chat template hash, spec), so a pack can be
split (``split -l``) or filtered (``grep``) and each piece still re-runs. ``export
--jsonl`` writes a run's cases this way, ``import-published`` a published set's, ``run
--cases`` reads either back. A line carries the hashes it was written with; a line whose
content no longer matches them was edited (:meth:`PackLine.edited`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ctxprobe.core.case import Case, Cell, make_case_id
from ctxprobe.core.case_meta import case_meta

PACK_FORMAT = 1
#: The keys every line must have.
REQUIRED = ("cell", "rep", "seed", "messages", "expected", "token_count", "tokenizer", "spec")


@dataclass(frozen=True)
class PackLine:
    case: Case
    tokenizer: str
    #: The spec the case was built under (secrets already removed by the writer).
    spec: dict[str, Any]
    chat_template_hash: str | None = None
    #: The run it was exported from (None: a published set's).
    source_run_id: str | None = None
    ctxprobe_version: str | None = None
    #: What the line claims, as written (the case's own when made by :meth:`of_case`).
    claimed: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of_case(cls, case: Case, *, tokenizer: str, spec: dict[str, Any], chat_template_hash: str | None,
                source_run_id: str | None = None, ctxprobe_version: str | None = None) -> PackLine:
        """The line of a case as built (its hashes its own)."""
        return cls(case, tokenizer, spec, chat_template_hash, source_run_id, ctxprobe_version,
                   {"case_id": case.case_id, "prompt_hash": case.prompt_hash, "content_hash": case.content_hash})

    def to_json(self) -> dict[str, Any]:
        """The line as written (``json.dumps(..., sort_keys=True)``)."""
        c = self.case
        cell: dict[str, Any] = {"family": c.cell.family, "length": c.cell.length, "depth": c.cell.depth}
        if c.cell.reasoning_budget is not None:
            cell["reasoning_budget"] = c.cell.reasoning_budget
        return {
            "pack_format": PACK_FORMAT, "source_run_id": self.source_run_id, "case_id": self.claimed.get("case_id"),
            "cell": cell, "rep": c.rep, "seed": c.seed, **({"sample": c.sample} if c.sample is not None else {}),
            "messages": c.messages, "prompt_hash": self.claimed.get("prompt_hash"), "expected": c.expected,
            "distractors": c.distractors, "meta": dict(c.meta), "token_count": c.token_count,
            "needle_token_pos": c.needle_token_pos, "realised_depth": c.realised_depth,
            "content_hash": self.claimed.get("content_hash"), "tokenizer": self.tokenizer,
            "chat_template_hash": self.chat_template_hash, "ctxprobe_version": self.ctxprobe_version,
            "spec": self.spec,
        }

    @classmethod
    def from_json(cls, d: object) -> PackLine:
        """A written line back; ``ValueError`` saying what is wrong with a line that is not one."""
        if not isinstance(d, dict) or d.get("pack_format") != PACK_FORMAT:
            raise ValueError(f"not a ctxprobe pack line (pack_format {PACK_FORMAT} expected)")
        missing = [k for k in REQUIRED if k not in d]
        if missing:
            raise ValueError(f"missing {', '.join(missing)}")
        try:
            budget = d["cell"].get("reasoning_budget")
            cell = Cell(str(d["cell"]["family"]), int(d["cell"]["length"]), float(d["cell"]["depth"]),
                        None if budget is None else int(budget))
            meta = dict(d.get("meta") or {})
            case = Case(cell=cell, rep=int(d["rep"]), seed=int(d["seed"]), messages=list(d["messages"]),
                        expected=[str(v) for v in d["expected"]],
                        distractors=[str(v) for v in d.get("distractors") or []], meta=meta,
                        token_count=int(d["token_count"]), needle_token_pos=d.get("needle_token_pos"),
                        realised_depth=d.get("realised_depth"),
                        # a family that fixes its output budget (ruler) keeps it when re-sent
                        max_tokens=case_meta(meta).get("tokens_to_generate"),
                        sample=None if d.get("sample") is None else int(d["sample"]))  # a variant's k samples
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise ValueError(f"malformed case ({err})") from None
        claimed = {k: d.get(k) for k in ("case_id", "prompt_hash", "content_hash")}
        return cls(case, str(d["tokenizer"]), dict(d["spec"]), d.get("chat_template_hash"), d.get("source_run_id"),
                   d.get("ctxprobe_version"), claimed)

    def edited(self) -> str | None:
        """Why the line is not as written (None when it is): its case id, prompt or content
        hash does not match its case, or it has no content hash to check against."""
        case = self.case
        claimed_id = self.claimed.get("case_id")
        made = make_case_id(case.cell, case.rep, case.sample)
        if claimed_id is not None and claimed_id != made:
            return f"its cell and repetition make case {made}, not its case_id {claimed_id} (the file was edited)"
        content = self.claimed.get("content_hash")
        if not isinstance(content, str) or not content:
            return "it has no content_hash, so an edited answer key could not be detected"
        if self.claimed.get("prompt_hash") and self.claimed["prompt_hash"] != case.prompt_hash:
            return "its messages do not match their prompt_hash (the file was edited)"
        if content != case.content_hash:
            return ("its messages, expected answers, distractors, scorer parameters or token count do not match "
                    "its content_hash (the file was edited)")
        return None
