"""Spending: what each response cost, and a cap that stops a sweep before it is exceeded.

Before a case is sent its worst case (its prompt tokens + max output tokens, each prompt
token at its dearest price: a cache write costs more than a plain token) is reserved;
when the response arrives the reservation is replaced by the cost of the tokens the server
reported — prompt tokens read from the prompt cache and written to it each at their own
price (:func:`ctxprobe.plan.caching.response_cost`); a run sent as provider batches at the
batch price the plan showed (:func:`ctxprobe.core.catalog.batch_price`, the one rule). A case is admitted only if everything
spent and reserved plus its worst case stays within the cap, so the cap is never crossed,
even with requests in flight.
"""

from __future__ import annotations

from ctxprobe.errors import CtxprobeError
from ctxprobe.plan.caching import Tiered, billed_price, response_cost, worst_cost
from ctxprobe.prices.table import Price
from ctxprobe.core.case import Case


class Ledger:
    def __init__(self, model: str, price: Price | None, *, max_cost: float | None, spent: float,
                 max_tokens: int, batch: bool = False, tiers: Tiered | None = None) -> None:
        if max_cost is not None and price is None:
            raise CtxprobeError(
                f"no price is known for {model}, so --max-cost cannot be enforced; add it to a price file "
                "(--prices FILE, see `ctxprobe plan --help`) or drop --max-cost"
            )
        if batch and max_cost is not None and price is not None and billed_price(price, model, batch=True) is None:
            raise CtxprobeError(f"no batch price is known for {model}, so --max-cost cannot be enforced on a batch "
                                "run; give its batch factor in a price file (batch: 0.5) or drop --max-cost")
        self.model = model
        self.price = price
        self.max_cost = max_cost
        self.spent = spent
        self.max_tokens = max_tokens
        self.batch = batch  # billed at the provider's batch price
        #: the model's price tiers by prompt length (each request billed at its own tier)
        self.tiers = tiers
        self._reserved: dict[str, float] = {}
        self.refused = 0

    def price_at(self, prompt_tokens: int) -> Price | None:
        """The price tier billing a request of ``prompt_tokens`` prompt tokens (None: unpriced,
        or a batch run's model with no batch price known)."""
        tier = self.tiers.price_at(prompt_tokens) if self.tiers is not None else None
        tier = tier or self.price
        if tier is None or (self.batch and billed_price(tier, self.model, batch=True) is None):
            return None
        return tier

    def _worst(self, case: Case) -> float:
        price = self.price_at(case.token_count)
        if not price:
            return 0.0
        # a reasoning budget is output the model may spend on top of the answer's limit
        return worst_cost(price, self.model, case.token_count,
                          (case.max_tokens or self.max_tokens) + (case.cell.reasoning_budget or 0), batch=self.batch)

    def admit(self, case: Case) -> bool:
        worst = self._worst(case)
        if self.max_cost is not None and self.spent + sum(self._reserved.values()) + worst > self.max_cost:
            self.refused += 1
            return False
        self._reserved[case.case_id] = worst
        return True

    def settle(self, case: Case, prompt_tokens: int | None, completion_tokens: int | None, *,
               cached: int | None = None, written: int | None = None) -> float | None:
        self._reserved.pop(case.case_id, None)
        prompt = prompt_tokens if prompt_tokens is not None else case.token_count
        price = self.price_at(prompt)
        if price is None:
            return None
        cost = response_cost(price, self.model, prompt,
                             completion_tokens or 0, cached=cached or 0, written=written or 0, batch=self.batch)
        self.spent += cost
        return cost
