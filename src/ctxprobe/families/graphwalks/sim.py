"""Graph walks (``graphwalks``): read the edge list, run the operation asked.

The edges are every ``a -> b`` line after the last ``The graph has the following edges:``
header visible (the worked example comes before it); the operation is read from the
question. A BFS answers the nodes whose shortest distance from the start is exactly the
depth; parents the nodes with an edge into the node. The reply's last line is
``Final Answer: [...]``, the form the question asks for.
"""

from __future__ import annotations

import re
from collections import deque

_BFS = re.compile(r"Perform a BFS from node ([0-9a-f]+) with depth (\d+)\.")
_PARENTS = re.compile(r"Find the parents of node ([0-9a-f]+)\.")
_EDGE = re.compile(r"^([0-9a-f]+) -> ([0-9a-f]+)$", re.MULTILINE)
_HEADER = "The graph has the following edges:"


def graphwalks_skill(question: str, context: str) -> str | None:
    bfs, parents = _BFS.search(question), _PARENTS.search(question)
    if bfs is None and parents is None:
        return None
    at = context.rfind(_HEADER)
    edges = _EDGE.findall(context[at:] if at >= 0 else context)
    if parents is not None:
        node = parents.group(1)
        found = sorted({a for a, b in edges if b == node and a != node})
    else:
        assert bfs is not None
        start, depth = bfs.group(1), int(bfs.group(2))
        out: dict[str, list[str]] = {}
        for a, b in edges:
            out.setdefault(a, []).append(b)
        dist = {start: 0}
        queue = deque([start])
        while queue:
            node = queue.popleft()
            if dist[node] < depth:
                for nxt in out.get(node, ()):
                    if nxt not in dist:
                        dist[nxt] = dist[node] + 1
                        queue.append(nxt)
        found = sorted(n for n, d in dist.items() if d == depth)
    return "Final Answer: [" + ", ".join(found) + "]"
