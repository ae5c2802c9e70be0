"""Command names read into sequence, layer and family (RBLN profiler docs, Perfetto analysis page:
https://docs.rbln.ai/latest/software/profiler/perfetto/analysis.html): each distinct name is parsed once,
and the slices map to the result through their codes.
The patterns and word lists are in data/names.yaml, loaded by knowledge.py."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from advisor.profilers.rbln.knowledge import NameRules, name_rules

PARSED_AT_ONCE = 1 << 14  # names whose strings exist at a time while parsing (each makes several)
FUSED = re.compile(r"^fused\((?P<members>.*)\)$")
TRAILING_INDEX = re.compile(r"_\d+$")


def family(layer: str) -> str:
    """The last dotted component that is not a number (`causal_lm.model.0.self_attn.q_proj` -> q_proj),
    without a trailing _<digits> (`linear_196` -> linear): the rbln-skills roll-up."""
    parts = [p for p in layer.split(".") if p and not p.isdigit()]
    return TRAILING_INDEX.sub("", parts[-1] if parts else layer)


def members(layer: str) -> list[str]:
    """The operations of a fused group (`fused(bn1+conv1+relu)`), else the layer itself."""
    fused = FUSED.match(layer)
    return [m.strip() for m in fused.group("members").split("+") if m.strip()] if fused else [layer]


@dataclass(frozen=True)
class ParsedNames:
    """Per distinct name (index = the slices' name code), and per distinct layer."""

    parsed: Any  # bool: the name follows the convention
    inst: Any  # instance (i<n>_), -1 without; the narrowest signed integers that hold every value
    seq: Any  # sequence index, -1 for an unparsed name; likewise
    layer: Any  # index into layers; likewise
    layers: tuple[str, ...]  # layer keys: the layer text (fused groups whole), or an unparsed name itself
    weight: Any  # bool per layer: a weight family (its Neural DMA traffic streams weights)
    unattributable: Any  # bool per layer: unparsed, or an inline operation without a module path
    workload_read: bool  # W<n>_ was read as the workload index (most names carry it)


FIELDS = ("inst", "seq", "wl", "layer")


def _columns(names: Sequence[str], pattern: re.Pattern[str]) -> dict[str, list[str]]:
    """Each name's inst, seq, wl and layer strings ("" where absent) and, for a name the pattern does not
    match, the name itself as `raw`. One findall over the names joined by newlines runs the pattern in C;
    when a name holds a newline, one match per name."""
    body = pattern.pattern.removeprefix("^").removesuffix("$")
    text = "\n".join(names)
    if names and text.count("\n") == len(names) - 1:
        combined = re.compile(f"(?m)^(?:{body}|(?P<raw>.*))$")
        found = combined.findall(text)
        if len(found) == len(names):
            index = combined.groupindex
            return {f: [r[index[f] - 1] for r in found] if f in index else [""] * len(found)
                    for f in (*FIELDS, "raw")}
    columns: dict[str, list[str]] = {f: [] for f in (*FIELDS, "raw")}
    for name in names:
        m = pattern.match(name)
        for f in FIELDS:
            columns[f].append((m.groupdict().get(f) or "") if m else "")
        columns["raw"].append("" if m else name)
    return columns


def _ints(values: Sequence[str]) -> Any:
    """Digit strings as int64, -1 for ""; each distinct string converted once."""
    import numpy as np

    seen: dict[str, int] = {"": -1}
    return np.fromiter((seen[v] if v in seen else seen.setdefault(v, int(v)) for v in values), dtype=np.int64,
                       count=len(values))


def parse(names: Sequence[str], rules: NameRules | None = None) -> ParsedNames:
    """Chunk by chunk (a trace can have millions of distinct names): only one chunk's strings exist at a
    time; what outlives it is numpy and one entry per distinct (workload, layer, unparsed name)."""
    import numpy as np

    from advisor.core.events import chunks, int32_if_fits, narrowest

    rules = rules or name_rules()
    n = len(names)
    # int32 unless a value does not fit (then int64 from there on): a column of millions of names
    inst, seq = np.empty(n, dtype=np.int32), np.empty(n, dtype=np.int32)
    key = np.empty(n, dtype=np.int32)  # index into keys
    keys: dict[tuple[str, str, str], int] = {}
    with_workload = at = 0
    for chunk in chunks(names, PARSED_AT_ONCE):
        cols = _columns(chunk, rules.pattern)
        b = at + len(chunk)
        values = _ints(cols["inst"]), _ints(cols["seq"])
        if inst.dtype != np.int64 and any(len(v) and int32_if_fits(v).dtype != np.int32 for v in values):
            inst, seq = inst.astype(np.int64), seq.astype(np.int64)
        inst[at:b], seq[at:b] = values
        with_workload += sum(1 for w in cols["wl"] if w)
        key[at:b] = np.fromiter((keys.setdefault(k, len(keys)) for k in zip(cols["wl"], cols["layer"], cols["raw"],
                                                                             strict=True)),
                                dtype=np.int32, count=len(chunk))
        at = b
    inst, seq = narrowest(inst), narrowest(seq)
    parsed = seq >= 0
    workload_read = bool(parsed.any()) and with_workload / int(parsed.sum()) >= rules.workload_majority
    layer_codes: dict[str, int] = {}
    if workload_read or not with_workload:
        texts = [lay if lay else raw for _, lay, raw in keys]
    else:  # a pre-v0.12 layer that itself starts with W<n>_
        texts = [(f"W{w}_{lay}" if w else lay) if lay else raw for w, lay, raw in keys]
    # keys are in order of first appearance, so the layers are too
    remap = np.fromiter((layer_codes.setdefault(x, len(layer_codes)) for x in texts), dtype=np.int32,
                        count=len(texts))
    layer = narrowest(remap)[key] if len(remap) else key
    del key
    layers = tuple(layer_codes)
    raw = np.zeros(len(layers), dtype=bool)
    raw[layer[~parsed]] = True
    weight = np.fromiter((any(family(m) in rules.weight_families for m in members(k)) for k in layers),
                         dtype=bool, count=len(layers))
    inline = np.fromiter((not FUSED.match(k) and "." not in k and family(k) in rules.inline_ops for k in layers),
                         dtype=bool, count=len(layers))
    return ParsedNames(parsed=parsed, inst=inst, seq=seq, layer=layer, layers=layers, weight=weight,
                       unattributable=inline | raw, workload_read=workload_read)
