"""Instance packs: re-run exactly the same prompts on another machine (``ctxprobe run --cases``).

A pack (written by :func:`ctxprobe.report.export.write_pack`) is JSONL, one self-contained
case per line: the chat messages as sent, the cell, repetition and seed, the answer key,
the token count it was built to, and the tokenizer, chat-template hash and spec it was
built with. Re-running a pack never regenerates anything: the stored messages are sent
as they are, through the same runner, and scored by the same family scorer as a sweep,
into a normal run of the store — so ``report``, ``export`` and ``compare`` work on it.

The tokenizer is resolved to check the pack was built for it (same chat template, same
token count per prompt): the same messages under another template are another prompt.
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
from ctxprobe.tasks.case import Case, Cell

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


@dataclass(frozen=True)
class PackResult:
    run_id: str
    resumed: bool
    sent: int
    already_done: int
    store_path: Path


def _bad(path: Path, line: int, why: str) -> CtxprobeError:
    return CtxprobeError(f"{path} line {line}: {why}; re-export the pack with `ctxprobe export RUN --pack`")


def iter_pack(path: str | Path) -> Iterator[PackCase]:
    """Parse and check a pack line by line (a bad line is named in a one-line error)."""
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
            if d.get("prompt_hash") and d["prompt_hash"] != case.prompt_hash:
                raise _bad(p, n, "messages do not match their prompt_hash (the file was altered)")
            yield PackCase(case, n, str(d["tokenizer"]), d.get("chat_template_hash"), dict(d["spec"]),
                           d.get("source_run_id"))


def load_pack(path: str | Path) -> list[PackCase]:
    """All cases of a pack (prompts included: for packs too big for memory use iter_pack)."""
    cases = list(iter_pack(path))
    if not cases:
        raise CtxprobeError(f"pack {path} holds no cases")
    ids = [c.case.case_id for c in cases]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise CtxprobeError(f"pack {path} holds case {dup} twice; packs from different runs cannot be mixed")
    return cases


def pack_run_id(cases: list[PackCase], model: str, decoding: dict[str, Any]) -> str:
    """Identity of a pack run: the exact prompts, the model and decoding, the ctxprobe version.

    Rerunning the same pack against the same model resumes instead of starting over.
    """
    digest = hashlib.sha256()
    for c in sorted(cases, key=lambda c: c.case.case_id):
        digest.update(f"{c.case.case_id}\0{c.case.prompt_hash}\n".encode())
    blob = json.dumps({"pack": digest.hexdigest(), "model": model, "decoding": decoding,
                       "ctxprobe_version": __version__}, sort_keys=True)
    return "p" + hashlib.sha256(blob.encode()).hexdigest()[:11]


def run_pack(pack_path: str | Path, model: str | None, store_path: str | Path = "ctxprobe.sqlite", *,
             tokenizer: str | None = None, concurrency: int = 4, timeout: float = 600.0, retries: int = 4,
             force: bool = False) -> PackResult:
    """Send exactly the pack's messages to ``model`` and store/score them as a normal run.

    ``model`` defaults to the pack's own; ``tokenizer`` to the pack's. The chat template
    hash and each prompt's token count must match the pack unless ``force``.
    """
    return asyncio.run(arun_pack(pack_path, model, store_path, tokenizer=tokenizer, concurrency=concurrency,
                                 timeout=timeout, retries=retries, force=force))


async def arun_pack(pack_path: str | Path, model: str | None, store_path: str | Path = "ctxprobe.sqlite", *,
                    tokenizer: str | None = None, concurrency: int = 4, timeout: float = 600.0, retries: int = 4,
                    force: bool = False) -> PackResult:
    from ctxprobe.models import resolve_provider
    from ctxprobe.runner import Attempted, RunnerConfig, execute
    from ctxprobe.record import record_response
    from ctxprobe.store import Store
    from ctxprobe.tasks import BuildContext, make_family
    from ctxprobe.tokenizers import resolve_tokenizer

    cases = load_pack(pack_path)
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
    families = {name: make_family(name, BuildContext(tokenizer=tok, haystack=spec.get("haystack")))
                for name in sorted({c.case.cell.family for c in cases})}
    provider = resolve_provider(model, tok)
    try:
        with Store(store_path) as store:
            meta = {"chat_template_hash": tok.chat_template_hash, "trained_context": tok.trained_context,
                    "context_window": provider.context_window,
                    "pack": {"path": Path(pack_path).name, "source_run_id": _source(cases), "cases": len(cases)}}
            resumed = store.ensure_run(run_id, model=model, tokenizer=tok_name, family=",".join(families),
                                       version=__version__, spec={**spec, "model": model}, meta=meta)
            store.update_run(run_id, status="running")
            done = store.done_case_ids(run_id)
            todo = [c for c in cases if c.case.case_id not in done]

            def with_ids(pc: PackCase) -> Case:
                """The ids in-process models are fed, checked against the count the pack was built to."""
                ids = tok.encode_chat(pc.case.messages)
                if len(ids) != pc.case.token_count and not force:
                    raise CtxprobeError(
                        f"{pack_path} line {pc.line}: the prompt is {len(ids)} tokens with {tok_name}, the pack "
                        f"says {pc.case.token_count}: use the pack's tokenizer (or --force)")
                pc.case.prompt_ids = ids
                return pc.case

            if todo:  # fail before anything is sent when the tokenizer is not the pack's
                with_ids(todo[0])

            def prepared() -> Iterator[Case]:
                for pc in todo:
                    yield pc.case if pc.case.prompt_ids is not None else with_ids(pc)

            for pc in todo:  # prompts are content-addressed: storing them first costs nothing extra
                store.save_case(run_id, pc.case)

            def sink(item: Attempted) -> None:
                record_response(store, run_id, families[item.case.cell.family], item)

            cfg = RunnerConfig(concurrency=concurrency, timeout=timeout, retries=retries,
                               max_tokens=int(decoding.get("max_tokens", 48)),
                               temperature=float(decoding.get("temperature", 0.0)), seed=decoding.get("seed"),
                               top_p=decoding.get("top_p"))
            sent = await execute(prepared(), provider, sink, cfg)
            complete = not ({c.case.case_id for c in cases} - store.done_case_ids(run_id))
            store.update_run(run_id, status="complete" if complete else "incomplete")
            return PackResult(run_id, resumed, sent, len(cases) - len(todo), store.path)
    finally:
        await provider.aclose()


def _source(cases: list[PackCase]) -> str | None:
    """The run the pack was exported from (None when lines from several runs were merged)."""
    sources = {c.source_run_id for c in cases}
    return sources.pop() if len(sources) == 1 else None
