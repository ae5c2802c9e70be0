"""Which profile of an input holding several (the launches of an Nsight Compute run, the cores of a Neuron summary,
the ranks of a folder) `--entry` or `--kernel` names, or the slowest when neither is given."""

from __future__ import annotations

from collections.abc import Sequence

from advisor.core.errors import AdvisorError
from advisor.core.model import Profile


def _slowest(profiles: Sequence[Profile]) -> Profile:
    """The longest total_time, the first among equals (linear: a summary may hold thousands)."""
    return max(enumerate(profiles), key=lambda ip: (ip[1].values.get("total_time") or 0.0, -ip[0]))[1]


def choose(profiles: Sequence[Profile], entry: str | None, where: str, flag: str = "--entry") -> Profile:
    """The profile to analyse: the named entry, else the one with the longest total_time (the core or
    kernel that bounds the step, as users' scripts pick).

    An entry is matched by its whole name, then by either word of a two-word name (`12 gemm`: the ID
    12 or the function gemm; `rank 3`). An integer is an ID, never text inside a signature (`(int)4` is not
    launch 4), and a position only where the entries carry no IDs. A name is then matched as part of the kernel's
    signature, and refused, naming the candidates, when it matches different kernels. Among several matches of one
    kernel (launched repeatedly) the slowest is taken."""
    if entry is None:
        return _slowest(profiles)
    names = [p.source.entry or "" for p in profiles]
    held = ", ".join(n or "profile" for n in names)
    for test in (lambda n: n == entry, lambda n: entry in n.split(" ", 1)):
        matches = [p for p, n in zip(profiles, names, strict=True) if test(n)]
        if matches:
            return _slowest(matches)
    if entry.isdigit():
        if not any(word.isdigit() for n in names for word in n.split(" ", 1)) and int(entry) < len(profiles):
            return profiles[int(entry)]
        raise AdvisorError(where, f"{flag} {entry}: no entry with that ID or rank; the file holds: {held}")
    matches = [p for p in profiles if entry in p.info.get("kernel_name", "")]
    kernels = sorted({p.info.get("kernel_name", "") for p in matches})
    if len(kernels) > 1:
        candidates = ", ".join(n for p, n in zip(profiles, names, strict=True) if p in matches)
        raise AdvisorError(where, f"{flag} {entry}: matches {len(kernels)} different kernels ({candidates}); "
                                  "name one by its ID or its function's whole name")
    if matches:
        return _slowest(matches)
    raise AdvisorError(where, f"{flag} {entry}: no such entry; the file holds: {held}")
