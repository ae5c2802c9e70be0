"""What pack inputs and metrics may be named, and how metrics may derive each other.

A name is what every rule reads. An organisation's pack that defines a metric `total_time`, or
re-declares the input `hbm_read_bytes` with another unit, would silently change the input of every
built-in rule; a metric named after a hardware figure or a field a kind reads from its profiles would
stand in for it. So a pack that is not built-in may not reuse a built-in name, nor one another pack
defines. The built-in packs (rules/ and every kind's own) are trusted not to shadow each other: they
share inputs across kinds on purpose, and a built-in input may also be a metric (either side of a pair
such as active time and active percent fills the other).

A metric cycle can never be computed unless a profile reports a side of it: a cycle is allowed only
when every metric on it is also an input (that pair pattern); any other cycle is refused, named.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from advisor.core.graphs import strong_components
from advisor.packs.model import MetricDef

CYCLE_HINT = "a metric may derive one that derives it only when both are inputs a profile reports"


@dataclass(frozen=True)
class Declaration:
    """One input or metric a pack declares."""

    name: str
    what: str  # input | metric
    unit: str
    pack: str
    where: str  # file:line
    builtin: bool


def shadowing(declarations: Sequence[Declaration], checked: Iterable[Declaration], hardware: Collection[str],
              fields: Mapping[str, str]) -> list[str]:
    """Problems of the `checked` declarations (the packs that are not built-in and apply): a name of a
    built-in input or metric (any kind's), of a hardware figure, or (for a metric) of a profile field
    (`fields`: name -> kind), or a name another pack already declares."""
    builtin: dict[str, Declaration] = {}
    for d in declarations:
        if d.builtin:
            builtin.setdefault(d.name, d)
    seen: dict[str, list[Declaration]] = {}
    problems = []
    for d in checked:
        problem = _problem(d, builtin.get(d.name), hardware, fields, seen.get(d.name, []))
        if problem:
            problems.append(f"{d.where}: {d.what} '{d.name}' {problem}")
        seen.setdefault(d.name, []).append(d)
    return problems


def _problem(d: Declaration, builtin: Declaration | None, hardware: Collection[str], fields: Mapping[str, str],
             earlier: list[Declaration]) -> str | None:
    if builtin is not None:
        return (f"has the name of the built-in {builtin.what} of pack {builtin.pack} ({builtin.where}): it would "
                "change what every rule reading it sees; " + ("read it without declaring it" if d.what == "input"
                                                              else "choose another name"))
    if d.name in hardware:
        return "has the name of a hardware figure: it would stand in for the hardware table's value"
    if d.what == "metric" and d.name in fields:
        return (f"has the name of a field {fields[d.name]} profiles report: it would stand in for the profile's "
                "value; choose another name")
    for other in earlier:
        if d.what == "metric" and other.what == "metric":
            return f"is already defined by pack {other.pack} at {other.where}"
        if d.what == "input" and other.what == "input" and d.unit != other.unit:
            return f"is already an input in {other.unit or 'no unit'} (pack {other.pack}, {other.where})"
        if other.pack != d.pack and d.what != other.what:
            return f"is already the {other.what} of pack {other.pack} at {other.where}"
    return None


def metric_cycles(metrics: Sequence[MetricDef], inputs: Collection[str]) -> list[str]:
    """`file:line: metric cycle: a -> b -> a` for each group of metrics that derive each other, unless
    every metric in it is an input a profile may report."""
    by_name: dict[str, MetricDef] = {}
    for m in metrics:
        by_name.setdefault(m.name, m)
    graph = {name: [n for n in dict.fromkeys(m.expr.names) if n in by_name] for name, m in by_name.items()}
    order = {name: i for i, name in enumerate(by_name)}
    problems = []
    for group in strong_components(graph):
        cyclic = len(group) > 1 or group[0] in graph[group[0]]
        if not cyclic or (len(group) > 1 and all(name in inputs for name in group)):
            continue
        start = min(group, key=order.__getitem__)
        bad = start if start not in inputs else next(n for n in group if n not in inputs)
        members = set(group)
        walk = _path(graph, start, bad, members) + _path(graph, bad, start, members)[1:] if bad != start else (
            [start, *_path(graph, _first_step(graph, start, members), start, members)])
        problems.append(f"{by_name[start].where}: metric cycle: {' -> '.join(walk)} ({CYCLE_HINT})")
    return problems


def _first_step(graph: Mapping[str, list[str]], start: str, members: set[str]) -> str:
    """A successor of `start` in its group (one from which `start` is reachable)."""
    return next(n for n in graph[start] if n in members)


def _path(graph: Mapping[str, list[str]], source: str, target: str, members: set[str]) -> list[str]:
    """The shortest path source -> target within one strongly connected group (breadth first)."""
    parent: dict[str, str | None] = {source: None}
    queue = [source]
    for node in queue:
        if node == target:
            break
        for nxt in graph[node]:
            if nxt in members and nxt not in parent:
                parent[nxt] = node
                queue.append(nxt)
    path: list[str] = []
    step: str | None = target
    while step is not None:
        path.append(step)
        step = parent[step]
    return path[::-1]
