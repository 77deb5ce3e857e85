"""``boxes``: one box's colour stated at a depth among other boxes; the question asks for it."""

from __future__ import annotations

import random

from pydantic import BaseModel, ConfigDict

from ctxprobe.core.case import Case, Cell
from ctxprobe.core.outcome import Outcome, Scored

COLOURS = ("red", "green", "blue", "amber", "violet", "teal", "olive", "coral")


class BoxesParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Boxes:
    name = "boxes"
    params_model = BoxesParams

    def __init__(self, ctx) -> None:  # ctx: ctxprobe.haystack.context.BuildContext
        self.tok = ctx.tokenizer

    def _messages(self, n: int, target: int, colours: list[str], depth: float) -> list[dict[str, str]]:
        lines = [f"The box {i} is {colours[i]}." for i in range(n)]
        lines.insert(round(depth * n), f"The box {target} is {colours[target]}.")
        del lines[target if target < round(depth * n) else target + 1]  # the target's line moves to the depth
        return [{"role": "user", "content": "\n".join(lines) + f"\nWhat colour is box {target}? Answer with one word."}]

    def generate(self, cell: Cell, rep: int, *, seed: int, params: BaseModel) -> Case:
        rng = random.Random(seed)
        colours = [rng.choice(COLOURS) for _ in range(cell.length)]  # more boxes than can fit

        def fits(n: int, target: int = 0) -> bool:
            return self.tok.count_chat(self._messages(n, target, colours, cell.depth)) <= cell.length

        lo, hi = 2, 4
        while hi < len(colours) and fits(hi):
            lo, hi = hi, hi * 2
        while hi - lo > 1:  # the most boxes whose prompt fits the cell's length
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if fits(mid) else (lo, mid)
        target = rng.randrange(lo)
        while lo > 2 and not fits(lo, target):  # moving the target's line may cost a token
            lo, target = lo - 1, min(target, lo - 2)
        messages = self._messages(lo, target, colours, cell.depth)
        others = sorted({c for c in colours[:lo] if c != colours[target]})
        return Case(cell=cell, rep=rep, seed=seed, messages=messages, expected=[colours[target]],
                    distractors=others, meta={"box": target}, token_count=self.tok.count_chat(messages))

    def score(self, case: Case, output: str) -> Scored:
        words = output.lower().replace(".", " ").split()
        if case.expected[0] in words:
            return Scored(1.0, Outcome.CORRECT)
        if any(d in words for d in case.distractors):
            return Scored(0.0, Outcome.DISTRACTOR)
        return Scored(0.0, Outcome.WRONG if words else Outcome.EMPTY)
