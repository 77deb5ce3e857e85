"""Spending: what each response cost, and a cap that stops a sweep before it is exceeded.

Before a case is sent its worst case (its prompt tokens + max output tokens) is reserved;
when the response arrives the reservation is replaced by the cost of the tokens the server
reported. A case is admitted only if everything spent and reserved plus its worst case
stays within the cap, so the cap is never crossed, even with requests in flight.
"""

from __future__ import annotations

from ctxprobe.errors import CtxprobeError
from ctxprobe.plan.prices import Price
from ctxprobe.core.case import Case


class Ledger:
    def __init__(self, model: str, price: Price | None, *, max_cost: float | None, spent: float,
                 max_tokens: int) -> None:
        if max_cost is not None and price is None:
            raise CtxprobeError(
                f"no price is known for {model}, so --max-cost cannot be enforced; add it to a price file "
                "(--prices FILE, see `ctxprobe plan --help`) or drop --max-cost"
            )
        self.price = price
        self.max_cost = max_cost
        self.spent = spent
        self.max_tokens = max_tokens
        self._reserved: dict[str, float] = {}
        self.refused = 0

    def _worst(self, case: Case) -> float:
        # a reasoning budget is output the model may spend on top of the answer's limit
        return self.price.cost(case.token_count, self.max_tokens + (case.cell.reasoning_budget or 0)) if self.price else 0.0

    def admit(self, case: Case) -> bool:
        worst = self._worst(case)
        if self.max_cost is not None and self.spent + sum(self._reserved.values()) + worst > self.max_cost:
            self.refused += 1
            return False
        self._reserved[case.case_id] = worst
        return True

    def settle(self, case: Case, prompt_tokens: int | None, completion_tokens: int | None) -> float | None:
        self._reserved.pop(case.case_id, None)
        if self.price is None:
            return None
        cost = self.price.cost(prompt_tokens if prompt_tokens is not None else case.token_count,
                               completion_tokens or 0)
        self.spent += cost
        return cost
