"""``graphwalks``: operate on a long edge list (OpenAI GraphWalks' shape).

A seeded random directed graph is given as ``a -> b`` lines with random 10-character hex
node ids (every node has degree at least 1), after an instruction and one small worked
example; the question asks for a breadth-first search from a node at a depth (the nodes
whose shortest distance from it is exactly ``bfs_depth``) or for a node's parents (the
nodes with an edge into it). The reply's last line must read ``Final Answer: [n1, n2, ...]``.

Budget: the edge count is sized with the tokenizer — each line counted once, summed, then
one encode of the templated prompt checks it; the prompt counts at most the length and
less than ``max(0.5%, 16)`` tokens below it. Nodes are as many as the edges allow at a
mean out-degree of ``out_degree``. The asked node is drawn among those whose answer has
``min_answer`` to ``max_answer`` nodes, so answers are random ids, never empty.

Depth: the edges the question starts from (the start node's out-edges for ``bfs``, the
asked node's in-edges for ``parents``) sit around the cell depth in the otherwise shuffled
list; ``realised_depth`` is their mean share of the other lines before them. Every depth of
a (length, repetition) group holds the same graph and question.

Scoring (:mod:`ctxprobe.scores.originals`): the last line is parsed by ``parse``
(``lm-eval`` default, ``card``, ``nemo``) and scored by set F1; ``empty_gold`` names the
convention for an empty gold set (``zero``: lm-eval and the card; ``one``: NeMo-Skills,
when the answer is empty too). Outcome ``correct`` at F1 1, ``partial`` above 0,
``parse_error`` without a parsable last line, else a miss label.
"""

from __future__ import annotations

import random
from collections import deque
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ctxprobe.core.case import Case, Cell, derive_seed
from ctxprobe.families.graphwalks.task_meta import GraphwalksMeta, graphwalks_meta
from ctxprobe.core.family import FamilyBase
from ctxprobe.core.outcome import Outcome, Scored
from ctxprobe.errors import CtxprobeError
from ctxprobe.haystack.counting import count_many
from ctxprobe.haystack.fill import fill_tolerance
from ctxprobe.haystack.packer import LengthTooShort
from ctxprobe.scores.classify import classify_miss
from ctxprobe.scores.originals import graphwalks_parse, set_f1
from ctxprobe.haystack.context import BuildContext
from ctxprobe.tokenizers.base import Message

INSTRUCTION = (
    "You will be given a graph as a list of directed edges. All nodes are at least degree 1. "
    "You will also get a description of an operation to perform on the graph.\n"
    "Your job is to execute the operation on the graph and return the set of nodes that the operation results in. "
    "If asked for a breadth-first search (BFS), only return the nodes that are reachable at that depth, "
    "do not return the starting node. If asked for the parents of a node, only return the nodes that have "
    "an edge leading to the given node, do not return the given node itself."
)
GRAPH_HEADER = "Here is the graph to operate on:\nThe graph has the following edges:"
BFS = "Perform a BFS from node {node} with depth {depth}."
PARENTS = "Find the parents of node {node}."
ANSWER_FORMAT = (
    "Answer with the set of nodes only, as the very last line of your reply, in the form\n"
    "Final Answer: [node1, node2, node3]\n"
    "and, for the empty set,\n"
    "Final Answer: []"
)
_MAX_ROUNDS = 12


class GraphwalksParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    problem: Literal["bfs", "parents"] = Field("bfs", description="bfs (nodes at a depth) | parents")
    bfs_depth: int = Field(2, ge=1, le=6, description="bfs: the depth asked")
    out_degree: float = Field(2.0, ge=1.2, le=8.0, description="mean edges per node")
    min_answer: int = Field(2, ge=1, le=100, description="fewest nodes in the answer")
    max_answer: int = Field(40, ge=1, le=10_000, description="most nodes in the answer")
    parse: Literal["lm-eval", "card", "nemo"] = Field("lm-eval", description="how the last line is read")
    empty_gold: Literal["zero", "one"] = Field("zero", description="score of an empty answer to an empty gold set")


def hex_id(rng: random.Random, taken: set[str]) -> str:
    while True:
        node = f"{rng.getrandbits(40):010x}"
        if node not in taken:
            taken.add(node)
            return node


def bfs_at(edges: list[tuple[str, str]], start: str, depth: int) -> list[str]:
    """Nodes whose shortest distance from ``start`` is exactly ``depth``."""
    out: dict[str, list[str]] = {}
    for a, b in edges:
        out.setdefault(a, []).append(b)
    dist = {start: 0}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if dist[node] == depth:
            continue
        for nxt in out.get(node, ()):
            if nxt not in dist:
                dist[nxt] = dist[node] + 1
                queue.append(nxt)
    return sorted(n for n, d in dist.items() if d == depth)


def parents_of(edges: list[tuple[str, str]], node: str) -> list[str]:
    return sorted({a for a, b in edges if b == node and a != node})


def render(example: str, lines: list[str], operation: str) -> list[Message]:
    content = "\n\n".join([INSTRUCTION, example, GRAPH_HEADER + "\n" + "\n".join(lines),
                           "Operation:\n" + operation + "\n" + ANSWER_FORMAT])
    return [{"role": "user", "content": content}]


class Graphwalks(FamilyBase):
    name = "graphwalks"
    floor_kind = "no-context"
    params_model = GraphwalksParams

    def __init__(self, ctx: BuildContext) -> None:
        self.ctx = ctx

    def _example(self, rng: random.Random, taken: set[str]) -> str:
        a, b, c, d = (hex_id(rng, taken) for _ in range(4))
        return ("Here is an example:\nThe graph has the following edges:\n"
                f"{c} -> {d}\n{a} -> {c}\n{a} -> {b}\n{b} -> {c}\n"
                f"Operation:\nPerform a BFS from node {a} with depth 1.\nFinal Answer: [{c}, {b}]")

    def generate(self, cell: Cell, rep: int, *, seed: int, params: BaseModel) -> Case:
        assert isinstance(params, GraphwalksParams)
        tok = self.ctx.tokenizer
        group_seed = derive_seed(seed, self.name, cell.length, rep)
        rng = random.Random(group_seed)
        taken: set[str] = set()
        example = self._example(rng, taken)
        probe_op = BFS.format(node="0" * 10, depth=params.bfs_depth) if params.problem == "bfs" \
            else PARENTS.format(node="0" * 10)
        sample = [f"{hex_id(random.Random(i), set())} -> {hex_id(random.Random(-i), set())}" for i in range(1, 33)]
        per_line = sum(count_many(tok, sample)) / len(sample) + 1
        fixed = tok.count_chat(render(example, sample[:1], probe_op)) - tok.count(sample[0])
        if fixed + 4 * per_line > cell.length:
            raise LengthTooShort(cell.length, int(fixed + 4 * per_line))
        n_edges = int((cell.length - fixed) / per_line)
        n_nodes = max(4, int(n_edges / params.out_degree))
        nodes = [hex_id(rng, taken) for _ in range(n_nodes)]
        stream = self._edges(rng, nodes, n_edges * 2 + 8)
        line_counts = [c + 1 for c in count_many(tok, [f"{a} -> {b}" for a, b in stream])]  # + its newline
        tol, target = fill_tolerance(cell.length), cell.length
        budget = target - fixed
        best: tuple[Any, ...] | None = None
        tried: set[tuple[int, ...]] = set()
        for _ in range(_MAX_ROUNDS):
            chosen = _select(line_counts, budget, n_nodes - 1)
            key = tuple(chosen)
            if key in tried:
                break
            tried.add(key)
            e = len(chosen)
            edges = [stream[i] for i in chosen]
            node, answer, evidence = self._question(random.Random(derive_seed(group_seed, "question")), edges, nodes, params)
            lines, realised = self._order(random.Random(derive_seed(group_seed, "order", e)), edges, evidence,
                                          cell.depth)
            op = BFS.format(node=node, depth=params.bfs_depth) if params.problem == "bfs" else PARENTS.format(node=node)
            messages = render(example, lines, op)
            ids = list(tok.encode_chat(messages))
            if len(ids) <= target:
                if best is None or len(ids) > len(best[3]):
                    best = (edges, node, answer, ids, messages, realised, op, evidence)
                if target - len(ids) < tol:
                    break
                budget += target - len(ids)
            else:
                budget -= len(ids) - target
        if best is None:
            raise LengthTooShort(target, target + 1)
        edges, node, answer, ids, messages, realised, op, evidence = best
        if self.ctx.no_context:
            ids, messages, n_lines = self._no_context(group_seed, cell.length, example, op, stream, line_counts,
                                                      edges, evidence, node, params)
            _check(messages[0]["content"], nodes, taken)
            return Case(cell=cell, rep=rep, seed=group_seed, messages=messages, expected=list(answer), distractors=[],
                        meta={"problem": params.problem, "node": node, "operation": op, "edges": n_lines,
                              "nodes": n_nodes, "no_context": True, "parse": params.parse,
                              "empty_gold": params.empty_gold,
                              "bfs_depth": params.bfs_depth if params.problem == "bfs" else None},
                        token_count=len(ids), prompt_ids=ids,
                        max_tokens=16 + len(answer) * (max(1, round(per_line / 2)) + 2))
        _check(messages[0]["content"], nodes, taken)
        id_tokens = max(1, round(per_line / 2))
        meta: GraphwalksMeta = {
            "problem": params.problem, "node": node, "bfs_depth": params.bfs_depth if params.problem == "bfs" else None,
            "operation": op, "edges": len(edges), "nodes": n_nodes, "evidence_edges": len(evidence),
            "parse": params.parse, "empty_gold": params.empty_gold}
        return Case(
            cell=cell, rep=rep, seed=group_seed, messages=messages, expected=list(answer), distractors=[],
            meta=meta,
            token_count=len(ids), needle_token_pos=None, realised_depth=round(realised, 6), prompt_ids=ids,
            max_tokens=16 + len(answer) * (id_tokens + 2),
        )

    def _no_context(self, group_seed: int, length: int, example: str, op: str, stream: list[tuple[str, str]],
                    line_counts: list[int], edges: list[tuple[str, str]], evidence: list[tuple[str, str]], node: str,
                    params: GraphwalksParams) -> tuple[list[int], list[Message], int]:
        """The noise floor: the same graph without the question's evidence (every edge out of
        the start node for ``bfs``, into the node for ``parents``), refilled to the length
        with other edges that do not touch it the same way, in a fresh shuffled order. The
        asked node then has no edge the operation could follow; the gold set stays the case's."""
        tok = self.ctx.tokenizer
        touches = (lambda e: e[0] == node) if params.problem == "bfs" else (lambda e: e[1] == node)  # noqa: E731
        cost = dict(zip(stream, line_counts))
        used, ev = set(edges), set(evidence)
        keep = [e for e in edges if e not in ev]
        budget = length - (tok.count_chat(render(example, [], op)) - 1)
        total = sum(cost[e] for e in keep)
        for e in stream:
            if e not in used and not touches(e) and total + cost[e] <= budget:
                keep.append(e)
                total += cost[e]
        random.Random(derive_seed(group_seed, "no-context")).shuffle(keep)
        for _ in range(_MAX_ROUNDS):
            messages = render(example, [f"{a} -> {b}" for a, b in keep], op)
            ids = list(tok.encode_chat(messages))
            if len(ids) <= length:
                return ids, messages, len(keep)
            over = len(ids) - length
            while over > 0 and keep:
                over -= cost[keep.pop()]
        raise LengthTooShort(length, length + 1)

    @staticmethod
    def _edges(rng: random.Random, nodes: list[str], n: int) -> list[tuple[str, str]]:
        """A stream of distinct edges: first a path through every node (degree >= 1 for
        all), then random ones."""
        order = list(nodes)
        rng.shuffle(order)
        stream = list(zip(order, order[1:]))
        seen = set(stream)
        guard = 0
        while len(stream) < n and guard < 50 * n:
            guard += 1
            a, b = rng.choice(nodes), rng.choice(nodes)
            if a != b and (a, b) not in seen:
                seen.add((a, b))
                stream.append((a, b))
        return stream

    @staticmethod
    def _question(rng: random.Random, edges: list[tuple[str, str]], nodes: list[str], params: GraphwalksParams
                  ) -> tuple[str, list[str], list[tuple[str, str]]]:
        order = list(nodes)
        rng.shuffle(order)
        fallback: tuple[int, str, list[str]] | None = None
        for node in order[:400]:
            answer = bfs_at(edges, node, params.bfs_depth) if params.problem == "bfs" else parents_of(edges, node)
            if params.min_answer <= len(answer) <= params.max_answer:
                break
            if answer and (fallback is None or len(answer) > fallback[0]) and len(answer) <= params.max_answer:
                fallback = (len(answer), node, answer)
        else:
            if fallback is None:
                raise CtxprobeError(f"graphwalks: no node has a {params.problem} answer of {params.min_answer} to "
                                    f"{params.max_answer} nodes at this length; lower min_answer or raise the length")
            _, node, answer = fallback
        evidence = [(a, b) for a, b in edges if (a == node if params.problem == "bfs" else b == node)]
        return node, answer, evidence

    @staticmethod
    def _order(rng: random.Random, edges: list[tuple[str, str]], evidence: list[tuple[str, str]], depth: float
               ) -> tuple[list[str], float]:
        """Shuffled lines with the evidence edges around ``depth`` (within 2% per edge)."""
        ev = set(evidence)
        rest = [e for e in edges if e not in ev]
        rng.shuffle(rest)
        m = len(evidence)
        slots = sorted(min(len(rest), max(0, round((depth + (j - (m - 1) / 2) * 0.02) * len(rest)))) for j in range(m))
        out: list[tuple[str, str]] = []
        shares: list[float] = []
        k = 0
        for i in range(len(rest) + 1):
            while k < m and slots[k] == i:
                shares.append(i / len(rest) if rest else 0.0)
                out.append(evidence[k])
                k += 1
            if i < len(rest):
                out.append(rest[i])
        realised = sum(shares) / len(shares) if shares else depth
        return [f"{a} -> {b}" for a, b in out], realised

    def score(self, case: Case, output: str) -> Scored:
        meta = graphwalks_meta(case.meta)
        parse = meta.get("parse", "lm-eval")
        empty_gold = meta.get("empty_gold", "zero")
        nodes, parse_error = graphwalks_parse(output, parse)
        f1 = set_f1(nodes, case.expected, empty_gold)
        gold, got = set(case.expected), set(nodes)
        detail: dict[str, Any] = {"f1": round(f1, 9), "parse": parse, "empty_gold": empty_gold,
                                  "parse_error": parse_error, "answered": len(got), "hits": len(gold & got),
                                  "gold": len(gold)}
        if f1 == 1.0:
            return Scored(1.0, Outcome.CORRECT, detail)
        if f1 > 0:
            return Scored(f1, Outcome.PARTIAL, detail)
        if parse_error:
            miss = classify_miss(output)
            return Scored(0.0, Outcome.PARSE_ERROR if miss == Outcome.WRONG else miss, detail)
        return Scored(0.0, Outcome.WRONG if got else Outcome.NOT_FOUND, detail)


def _select(costs: list[int], budget: int, keep: int) -> list[int]:
    """Indices of stream edges summing to at most ``budget``: the longest prefix that fits
    (never fewer than the ``keep`` covering edges), then up to three swaps of a random
    edge for a later, costlier one that close the gap without passing the budget."""
    total, e = 0, 0
    while e < len(costs) and (total + costs[e] <= budget or e < keep):
        total += costs[e]
        e += 1
    chosen = list(range(e))
    spare = list(range(e, len(costs)))
    for _ in range(3):
        gap = budget - total
        if gap <= 0:
            break
        best: tuple[int, int, int] | None = None
        for pos in range(len(chosen) - 1, max(keep, len(chosen) - 64) - 1, -1):
            for j in spare[:64]:
                gain = costs[j] - costs[chosen[pos]]
                if 0 < gain <= gap and (best is None or gain > best[0]):
                    best = (gain, pos, j)
        if best is None:
            break
        gain, pos, j = best
        spare.remove(j)
        spare.append(chosen[pos])
        chosen[pos] = j
        total += gain
    return chosen


def _check(content: str, nodes: list[str], taken: set[str]) -> None:
    """Every hex id in the prompt is one this case made (a generation bug otherwise)."""
    import re

    stray = {m for m in re.findall(r"(?<![0-9a-f])[0-9a-f]{10}(?![0-9a-f])", content) if m not in taken}
    if stray:
        raise CtxprobeError(f"case generation check failed: unplaced ids {sorted(stray)[:3]}")
