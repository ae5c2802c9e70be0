"""Which command category, device and chiplet a track belongs to, from the patterns in
`data/tracks.yaml` (names, not topology: reference rbln-profiler.md §3.2, §9.1), compiled by knowledge.py.
The tracks themselves are as the shared Perfetto reader resolved them (`Descriptor`s).

A track's category is the first category whose pattern matches its own name, else its thread's name,
else the nearest ancestor's (parent_uuid) name; trailing ids (`Neural DMA 1003`) are ignored. The
chiplet is the nearest ancestor-or-self named like a chiplet group; the device is the owning
process (its name, else `pid N`). A track nothing matches is category `other`, never dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

from advisor.inputs.perfetto.resolve import Descriptor
from advisor.profilers.rbln.knowledge import OTHER, TrackRules, track_rules

NO_DEVICE = "device"


@dataclass(frozen=True)
class Resolved:
    """A track as the tables show it."""

    path: str  # `rbln0 / Chiplet 2 / Neural DMA`
    category: str
    device: str
    chiplet: str  # `Chiplet 2`, or ""


def _label(key: object, found: Descriptor | None) -> str:
    if found is not None:
        for text in (found.name, found.thread_name, found.process_name):
            if text:
                return text
    if isinstance(key, tuple):  # legacy tracks: a thread of a sequence, or the sequence itself
        return f"thread {key[2]}" if key[0] == "thread" else f"sequence {key[1]}"
    return f"track {key}"


def resolve(keys: list[object], tracks: dict[object, Descriptor], processes: dict[int, str],
            threads: dict[tuple[int, int], str], rule: TrackRules | None = None) -> list[Resolved]:
    """Each track key (a uuid, or a legacy ("thread", pid, tid) / ("sequence", id)) resolved.
    `processes`: process names by pid; `threads`: thread names by (pid, tid), from every descriptor."""
    rule = rule or track_rules()
    out = []
    for key in keys:
        own = tracks.get(key)
        chain: list[tuple[object, Descriptor | None]] = []
        seen: set[object] = set()
        at: object = key
        while at is not None and at not in seen and len(chain) < 64:  # a parent cycle ends the walk
            seen.add(at)
            found = tracks.get(at)
            chain.append((at, found))
            at = found.parent if found is not None else None
        label = _label(key, own)
        if own is None and isinstance(key, tuple) and key[0] == "thread":
            label = threads.get((key[1], key[2])) or label
        thread_name = ""
        if own is not None:
            thread_name = own.thread_name or (threads.get((own.pid, own.tid), "")
                                              if own.pid is not None and own.tid is not None else "")
        elif isinstance(key, tuple) and key[0] == "thread":
            thread_name = threads.get((key[1], key[2]), "")
        category = rule.category(label) or (rule.category(thread_name) if thread_name else None)
        if category is None:
            for _, found in chain[1:]:
                if found is not None and (category := rule.category(_label(None, found))) is not None:
                    break
        chiplet = ""
        for _, found in chain:
            number = rule.chiplet_number(found.name) if found is not None and found.name else None
            if number is not None:
                chiplet = f"Chiplet {number}"
                break
        pid = next((found.pid for _, found in chain if found is not None and found.pid is not None), None)
        if pid is None and isinstance(key, tuple) and key[0] == "thread":
            pid = key[1]
        device = NO_DEVICE
        if pid is not None:
            named = next((found.process_name for _, found in chain if found is not None and found.process_name), "")
            device = processes.get(pid) or named or f"pid {pid}"
        path = " / ".join(part for part in (device, chiplet, label) if part)
        out.append(Resolved(path=path, category=category or OTHER, device=device, chiplet=chiplet))
    return out
