"""Filler pools kept per (seed, length, rep) group, so every depth of a group reuses one:
what the needle families (niah, vartrack, updates, longout, instructions) share."""

from __future__ import annotations

from collections import OrderedDict

from ctxprobe.haystack import filler_source
from ctxprobe.haystack.context import BuildContext
from ctxprobe.haystack.packer import FillerPool


class PoolCache:
    """Filler pools per (seed, length, rep) group: every depth of a group reuses one."""

    def __init__(self, ctx: BuildContext, size: int = 4) -> None:
        self.ctx, self.size = ctx, size
        self._pools: OrderedDict[int, FillerPool] = OrderedDict()

    def get(self, group_seed: int) -> FillerPool:
        pool = self._pools.get(group_seed)
        if pool is None:
            pool = FillerPool(filler_source(self.ctx.haystack, group_seed), self.ctx.tokenizer)
            self._pools[group_seed] = pool
            while len(self._pools) > self.size:
                self._pools.popitem(last=False)
        else:
            self._pools.move_to_end(group_seed)
        return pool
