"""Instance packs: re-run exactly the same prompts on another machine (``ctxprobe run --cases``).

A pack (written by :func:`ctxprobe.report.export.write_pack`) is JSONL, one self-contained
case per line: the chat messages as sent, the cell, repetition and seed, the answer key,
the token count it was built to, and the tokenizer, chat-template hash and spec it was
built with. Re-running a pack never regenerates anything: the stored messages are sent
as they are, through the same runner, and scored by the same family scorer as a sweep,
into a normal run of the store — so ``report``, ``export`` and ``compare`` work on it.

The tokenizer is resolved to check the pack was built for it (same chat template, same
token count per prompt): the same messages under another template are another prompt.

Every line carries a ``content_hash`` over everything that decides its score (messages,
answer key, distractors, scorer parameters, token count; :func:`ctxprobe.core.case.content_hash`).
A line that no longer matches its hash was edited after export and is refused, unless the
user asks to run the edited pack: then it forms a run of its own, because the run identity
hashes the content actually read, never the hashes a line claims. Every check runs before
the store is opened: a refused pack writes nothing.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxprobe._version import __version__
from ctxprobe.errors import CtxprobeError
from ctxprobe.core.case import Case, Cell

PACK_FORMAT = 1
_REQUIRED = ("cell", "rep", "seed", "messages", "expected", "token_count", "tokenizer", "spec")


@dataclass(frozen=True)
class PackCase:
    case: Case
    line: int
    tokenizer: str
    chat_template_hash: str | None
    spec: dict[str, Any]
    source_run_id: str | None = None
    edited: bool = False  # does not match the content_hash it was exported with (allowed on request)


@dataclass(frozen=True)
class PackResult:
    run_id: str
    resumed: bool
    sent: int
    already_done: int
    store_path: Path


def _bad(path: Path, line: int, why: str) -> CtxprobeError:
    return CtxprobeError(f"{path} line {line}: {why}; re-export the pack with `ctxprobe export RUN --pack`")


_EDIT_HINT = "re-export it, or pass --allow-edited-pack to run the edited pack as a run of its own"


def iter_pack(path: str | Path, *, allow_edited: bool = False) -> Iterator[PackCase]:
    """Parse and check a pack line by line (a bad line is named in a one-line error).

    A line whose content no longer matches its ``content_hash`` (or ``prompt_hash``), or
    that has none, is refused unless ``allow_edited``."""
    p = Path(path)
    try:
        fh = open(p, encoding="utf-8")
    except OSError as err:
        raise CtxprobeError(f"cannot read pack {p}: {err.strerror or err}") from None
    with fh:
        for n, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                d = json.loads(raw)
            except json.JSONDecodeError as err:
                raise _bad(p, n, f"not JSON ({err.msg})") from None
            if not isinstance(d, dict) or d.get("pack_format") != PACK_FORMAT:
                raise _bad(p, n, f"not a ctxprobe pack line (pack_format {PACK_FORMAT} expected)")
            missing = [k for k in _REQUIRED if k not in d]
            if missing:
                raise _bad(p, n, f"missing {', '.join(missing)}")
            try:
                cell = Cell(str(d["cell"]["family"]), int(d["cell"]["length"]), float(d["cell"]["depth"]))
                case = Case(cell=cell, rep=int(d["rep"]), seed=int(d["seed"]), messages=list(d["messages"]),
                            expected=[str(v) for v in d["expected"]],
                            distractors=[str(v) for v in d.get("distractors") or []], meta=dict(d.get("meta") or {}),
                            token_count=int(d["token_count"]), needle_token_pos=d.get("needle_token_pos"),
                            realised_depth=d.get("realised_depth"),
                            # a family that fixes its output budget (ruler) keeps it when re-sent
                            max_tokens=(d.get("meta") or {}).get("tokens_to_generate"))
            except (KeyError, TypeError, ValueError) as err:
                raise _bad(p, n, f"malformed case ({err})") from None
            edited = _edit(d, case)
            if edited and not allow_edited:
                raise CtxprobeError(f"{p} line {n}: {edited}; {_EDIT_HINT}")
            yield PackCase(case, n, str(d["tokenizer"]), d.get("chat_template_hash"), dict(d["spec"]),
                           d.get("source_run_id"), edited=bool(edited))


def _edit(line: dict[str, Any], case: Case) -> str | None:
    """Why a pack line is not as exported (None when it is)."""
    claimed = line.get("content_hash")
    if not isinstance(claimed, str) or not claimed:
        return "it has no content_hash, so an edited answer key could not be detected"
    if line.get("prompt_hash") and line["prompt_hash"] != case.prompt_hash:
        return "its messages do not match their prompt_hash (the file was edited)"
    if claimed != case.content_hash:
        return ("its messages, expected answers, distractors, scorer parameters or token count do not match "
                "its content_hash (the file was edited)")
    return None


def load_pack(path: str | Path, *, allow_edited: bool = False) -> list[PackCase]:
    """All cases of a pack (prompts included: for packs too big for memory use iter_pack)."""
    cases = list(iter_pack(path, allow_edited=allow_edited))
    if not cases:
        raise CtxprobeError(f"pack {path} holds no cases")
    ids = [c.case.case_id for c in cases]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise CtxprobeError(f"pack {path} holds case {dup} twice; packs from different runs cannot be mixed")
    return cases


def pack_run_id(cases: list[PackCase], model: str, decoding: dict[str, Any]) -> str:
    """Identity of a pack run: the exact content of its cases (recomputed, not as claimed),
    the model and decoding, the ctxprobe version.

    Rerunning the same pack against the same model resumes instead of starting over; an
    edited pack (different answer key, say) is another run.
    """
    digest = hashlib.sha256()
    for c in sorted(cases, key=lambda c: c.case.case_id):
        digest.update(f"{c.case.case_id}\0{c.case.content_hash}\n".encode())
    blob = json.dumps({"pack": digest.hexdigest(), "model": model, "decoding": decoding,
                       "ctxprobe_version": __version__}, sort_keys=True)
    return "p" + hashlib.sha256(blob.encode()).hexdigest()[:11]


def run_pack(pack_path: str | Path, model: str | None, store_path: str | Path = "ctxprobe.sqlite", *,
             tokenizer: str | None = None, concurrency: int = 4, timeout: float = 600.0, retries: int = 4,
             force: bool = False, allow_edited: bool = False) -> PackResult:
    """Send exactly the pack's messages to ``model`` and store/score them as a normal run.

    ``model`` defaults to the pack's own; ``tokenizer`` to the pack's. The chat template
    hash and each prompt's token count must match the pack unless ``force``; each line
    must match its content hash unless ``allow_edited``.
    """
    return asyncio.run(arun_pack(pack_path, model, store_path, tokenizer=tokenizer, concurrency=concurrency,
                                 timeout=timeout, retries=retries, force=force, allow_edited=allow_edited))


async def arun_pack(pack_path: str | Path, model: str | None, store_path: str | Path = "ctxprobe.sqlite", *,
                    tokenizer: str | None = None, concurrency: int = 4, timeout: float = 600.0, retries: int = 4,
                    force: bool = False, allow_edited: bool = False) -> PackResult:
    from ctxprobe.sweep.claiming import finish_run, send_claimed
    from ctxprobe.models import resolve_provider
    from ctxprobe.runner import Attempted, RunnerConfig, execute
    from ctxprobe.scores.record import record_response
    from ctxprobe.store import Store
    from ctxprobe.store.claims import Coordinator
    from ctxprobe.tasks import BuildContext, make_family
    from ctxprobe.tokenizers import resolve_tokenizer

    cases = load_pack(pack_path, allow_edited=allow_edited)
    first = cases[0]
    spec = dict(first.spec)
    model = model or str(spec.get("model") or "")
    if not model:
        raise CtxprobeError("the pack names no model: pass --model")
    tok_name = tokenizer or first.tokenizer
    tok = resolve_tokenizer(tok_name)
    if not force and first.chat_template_hash and tok.chat_template_hash != first.chat_template_hash:
        raise CtxprobeError(
            f"tokenizer {tok_name} has chat template {tok.chat_template_hash}, the pack was built with "
            f"{first.chat_template_hash}: pass the pack's tokenizer with --tokenizer (or --force)")
    decoding = dict(spec.get("decoding") or {})
    run_id = pack_run_id(cases, model, decoding)

    def ids_for(pc: PackCase) -> list[int]:
        """The ids in-process models are fed, checked against the count the pack was built to."""
        ids = tok.encode_chat(pc.case.messages)
        if len(ids) != pc.case.token_count and not force:
            raise CtxprobeError(
                f"{pack_path} line {pc.line}: the prompt is {len(ids)} tokens with {tok_name}, the pack "
                f"says {pc.case.token_count}: use the pack's tokenizer (or --force)")
        return ids

    # Every check before the store is opened: a refused pack leaves no trace in it.
    for pc in cases:
        ids_for(pc)
    families = {name: make_family(name, BuildContext(tokenizer=tok, haystack=spec.get("haystack")))
                for name in sorted({c.case.cell.family for c in cases})}
    provider = resolve_provider(model, tok)
    try:
        with Store(store_path) as store:
            edited = sum(c.edited for c in cases)
            meta = {"chat_template_hash": tok.chat_template_hash, "trained_context": tok.trained_context,
                    "context_window": provider.context_window, "planned_cases": len(cases),
                    "pack": {"path": Path(pack_path).name, "source_run_id": _source(cases), "cases": len(cases),
                             **({"edited_lines": edited} if edited else {})}}
            resumed = store.ensure_run(run_id, model=model, tokenizer=tok_name, family=",".join(families),
                                       version=__version__, spec={**spec, "model": model}, meta=meta)
            store.update_run(run_id, status="running")
            done = store.done_case_ids(run_id)
            todo = [c for c in cases if c.case.case_id not in done]
            coord = Coordinator(store.path, run_id)  # its session starts inside the try below

            def prepared(mine: Iterator[PackCase]) -> Iterator[Case]:
                for pc in mine:
                    pc.case.prompt_ids = ids_for(pc)
                    yield pc.case

            def sink(item: Attempted) -> None:
                store.save_case(run_id, item.case)
                record_response(store, run_id, families[item.case.cell.family], item)
                coord.settle(item.case.case_id)

            cfg = RunnerConfig(concurrency=concurrency, timeout=timeout, retries=retries,
                               max_tokens=int(decoding.get("max_tokens", 48)),
                               temperature=float(decoding.get("temperature", 0.0)), seed=decoding.get("seed"),
                               top_p=decoding.get("top_p"))
            def keep(case: Case) -> bool:
                return coord.still_mine(case.case_id)

            try:
                coord.start()
                sent = await send_claimed(todo, coord, lambda mine: execute(prepared(mine), provider, sink, cfg,
                                                                            keep=keep),
                                          key=lambda c: c.case.case_id)
            finally:
                coord.stopping.set()
                finish_run(store, run_id, {c.case.case_id for c in cases}, coord)
            return PackResult(run_id, resumed, sent, len(cases) - len(todo), store.path)
    finally:
        await provider.aclose()


def _source(cases: list[PackCase]) -> str | None:
    """The run the pack was exported from (None when lines from several runs were merged)."""
    sources = {c.source_run_id for c in cases}
    return sources.pop() if len(sources) == 1 else None
