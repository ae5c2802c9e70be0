"""Graph algorithms the stages share: the strongly connected groups of a directed graph (a pack's metrics that
depend on each other in a circle; the package's own imports, in its tests)."""

from __future__ import annotations

from collections.abc import Mapping


def strong_components(graph: Mapping[str, list[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components, iteratively (a pack may hold a long chain of metrics)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            successors = graph[node]
            if i < len(successors):
                work.append((node, i + 1))
                nxt = successors[i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                groups.append(group[::-1])
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return groups
