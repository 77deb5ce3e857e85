"""``--executor ray``: the runner's requests answered by Ray actors, results stored on the driver.

Why this shape (Ray does the distribution; no home-made cluster code): the local runner
(:func:`ctxprobe.runner.execute.execute`) already owns everything that must stay identical
between a local and a distributed run — the lazy case stream, ``admit`` (spending cap),
rate limits, per-request timeouts, retries with backoff, and the sink that scores and
stores each response on the driver. :func:`execute_ray` therefore runs that same function
with a :class:`RayPool` in place of the provider: each request goes to the least-busy Ray
actor, the actor calls its endpoint (or hosts the model: ``local``, ``llamacpp:``, sims)
and the reply streams back to the driver's event loop, where the sink writes it. The SQLite
store is only ever touched on the driver, so a Ray run resumes exactly like a local one.

Fault tolerance: actors restart when their process dies (``max_restarts=-1``). A request
whose actor died raises :class:`TransientError` on the driver, so the runner's own retry
sends it again — to another actor or to the restarted one. A case whose retries are all
spent is stored as an ``error`` outcome, which a rerun sends again (``done_case_ids``
skips only final outcomes): nothing is lost.

Prefix chains (``cfg.lanes``, see :func:`ctxprobe.runner.execute.execute`): the runner
sends each chain in order on one lane, and the pool keeps a lane on one actor (lane ``i``
on actor ``i`` modulo their number), so every case of a chain reaches the same endpoint,
which holds the one before it in its cache. An actor whose requests name a slot asks its
server for its slots once (the provider's ``preflight``, as the driver did), so the slot
is pinned there too (llama.cpp's ``id_slot``). Requests without a lane go to the
least-busy actor.

``cfg.concurrency`` is the total number of requests in flight across all actors.
Endpoints: one model spec, or a list (replicas of one model behind several URLs); each
gets ``replicas`` actors. The Ray address comes from the ``address`` argument, else
``RAY_ADDRESS``, else a local instance.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ctxprobe.errors import CtxprobeError
from ctxprobe.models.base import GenerateRequest, GenerateResult, PermanentError, Provider, ProviderBase, TransientError
from ctxprobe.runner.execute import RunnerConfig, Sink, execute
from ctxprobe.core.case import Case
from ctxprobe.spec.names import as_ref

#: Providers whose actors host a model in process (they get a CPU each; ``local`` is the embedded GGUF).
_HOSTED = ("local", "llamacpp", "hf")


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise CtxprobeError("--executor ray needs Ray: pip install 'ctxprobe[ray]'") from None
    return ray


def ensure_ray(address: str | None = None, runtime_env: dict[str, Any] | None = None) -> bool:
    """Connect to Ray unless already connected; True when this call started/connected it."""
    ray = _import_ray()
    if ray.is_initialized():
        return False
    target = address or os.environ.get("RAY_ADDRESS") or None
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
    if runtime_env:
        kwargs["runtime_env"] = runtime_env
    ray.init(address=target, **kwargs)
    return True


class _ProviderActor:
    """Holds one provider on a Ray worker; every call is one attempt (the driver retries)."""

    def __init__(self, model: str, tokenizer: str | None, n_ctx: int | None) -> None:
        from ctxprobe.models import resolve_provider
        from ctxprobe.tokenizers import resolve_tokenizer

        tok = resolve_tokenizer(tokenizer) if tokenizer else None
        self.provider = resolve_provider(model, tok, n_ctx=n_ctx)
        self._slots_asked: asyncio.Future[None] | None = None

    async def _ask_slots(self) -> None:
        """Learn the server's slots as the driver's preflight did, so a request's slot is
        pinned (best effort: a server that cannot be reached says so on the request itself)."""
        if self.provider.preflight is not None:
            try:
                await self.provider.preflight()
            except Exception:  # noqa: BLE001 - best effort: the driver's preflight already passed
                pass

    async def generate(self, request: GenerateRequest) -> tuple[str, Any, Any]:
        if request.slot is not None:  # a lane's request: the slots first, once (every lane waits for it)
            if self._slots_asked is None:
                self._slots_asked = asyncio.ensure_future(self._ask_slots())
            await self._slots_asked
        # Exceptions are returned as tags, not raised: Ray wraps raised ones in its own types.
        try:
            return "ok", await self.provider.generate(request), None
        except TransientError as err:
            return "transient", str(err), err.retry_after
        except PermanentError as err:
            return "permanent", str(err), None

    def pid(self) -> int:
        return os.getpid()

    def capacity(self) -> int | None:
        return self.provider.max_concurrency


class RayPool(ProviderBase):
    """A :class:`Provider` whose requests run on Ray actors, least-outstanding first."""

    def __init__(self, models: Sequence[str], *, tokenizer: str | None = None, replicas: int = 1,
                 concurrency: int = 4, n_ctx: int | None = None, actor_cpus: float | None = None,
                 context_window: int | None = None) -> None:
        ray = _import_ray()
        if not models:
            raise CtxprobeError("--executor ray needs at least one model endpoint")
        self.name = models[0]
        self.context_window = context_window
        remote_cls = ray.remote(_ProviderActor)
        per_actor = max(1, -(-concurrency // (len(models) * max(1, replicas))))
        self.actors: list[Any] = []
        for model in models:
            hosted = as_ref(model).provider in _HOSTED
            cpus = actor_cpus if actor_cpus is not None else (1.0 if hosted else 0.0)
            for _ in range(max(1, replicas)):
                self.actors.append(remote_cls.options(
                    max_restarts=-1, max_task_retries=0, max_concurrency=per_actor, num_cpus=cpus,
                ).remote(model, tokenizer, n_ctx))
        caps = ray.get([a.capacity.remote() for a in self.actors])
        #: requests each actor takes at once (a hosted llama.cpp model takes one)
        self.capacity = [min(per_actor, c) if c else per_actor for c in caps]
        self.max_concurrency: int | None = sum(self.capacity)
        self.outstanding = [0] * len(self.actors)
        self.served = [0] * len(self.actors)
        self._lock = threading.Lock()

    def _pick(self, slot: int | None = None) -> int:
        """The actor for a request: a lane's always the same one (its chain's cases meet one
        cache), any other request the least busy."""
        with self._lock:
            if slot is not None:
                i = slot % len(self.actors)
            else:
                i = min(range(len(self.actors)),
                        key=lambda j: (self.outstanding[j] / self.capacity[j], self.served[j]))
            self.outstanding[i] += 1
            return i

    async def generate(self, request: GenerateRequest) -> GenerateResult:
        ray = _import_ray()
        i = self._pick(request.slot)
        ref = self.actors[i].generate.remote(request)
        try:
            tag, value, extra = await asyncio.wrap_future(ref.future())
        except asyncio.CancelledError:  # the runner's timeout: stop the remote call too
            ray.cancel(ref)
            raise
        except ray.exceptions.RayError as err:  # the actor died or is restarting
            raise TransientError(f"ray actor {i} failed: {type(err).__name__}") from None
        finally:
            with self._lock:
                self.outstanding[i] -= 1
        with self._lock:
            self.served[i] += 1
        if tag == "transient":
            raise TransientError(value, retry_after=extra)
        if tag == "permanent":
            raise PermanentError(value)
        return value

    def pids(self) -> list[int]:
        ray = _import_ray()
        return list(ray.get([a.pid.remote() for a in self.actors]))

    async def aclose(self) -> None:
        ray = _import_ray()
        for a in self.actors:
            ray.kill(a)
        self.actors = []


def models_of(provider: Provider | str | Sequence[str]) -> list[str]:
    """Model spec strings from what the sweep hands an executor (a provider or spec(s))."""
    if isinstance(provider, str):
        return [provider]
    if isinstance(provider, Sequence):
        return [str(m) for m in provider]
    return [provider.name]


def tokenizer_of(provider: Provider | str | Sequence[str]) -> str | None:
    """The tokenizer a provider counts and reads with (sims, in-process models); None for
    model spec strings and remote providers."""
    if isinstance(provider, (str, Sequence)):
        return None
    return provider.tokenizer.name if provider.tokenizer is not None else None


async def execute_ray(cases: Iterator[Case], provider: Provider | str | Sequence[str], sink: Sink,
                      cfg: RunnerConfig, admit: Callable[[Case], bool] | None = None,
                      keep: Callable[[Case], bool] | None = None, *,
                      address: str | None = None, replicas: int = 1, tokenizer: str | None = None,
                      n_ctx: int | None = None, actor_cpus: float | None = None,
                      runtime_env: dict[str, Any] | None = None,
                      on_start: Callable[[RayPool], None] | None = None) -> int:
    """Send every case through Ray actors; same contract as :func:`execute`.

    ``provider`` is the sweep's provider (its ``name`` is the model spec the actors
    resolve; an in-process model is loaded on the actors, not reused), or model spec
    string(s) — several for replicas behind different URLs. ``tokenizer`` names the
    tokenizer sims and hosted models need (default: the provider's). ``on_start`` sees the
    pool before the first request (tests use it to kill a worker)."""
    ensure_ray(address, runtime_env)
    pool = RayPool(models_of(provider), tokenizer=tokenizer or tokenizer_of(provider), replicas=replicas,
                   concurrency=cfg.concurrency, n_ctx=n_ctx, actor_cpus=actor_cpus,
                   context_window=None if isinstance(provider, (str, Sequence)) else provider.context_window)
    try:
        if on_start is not None:
            on_start(pool)
        return await execute(cases, pool, sink, cfg, admit=admit, keep=keep)
    finally:
        await pool.aclose()
