"""Per-layer figures (reference M16–M20): each layer key's Neural Engine, DMA and device time as unions
(mean per unit), its share of Neural Engine busy time, its DMA/NE ratio; the hot layers, DMA-bound
layers, weight streaming, and how much Neural Engine time no module can be named for."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from advisor.core.events import NS
from advisor.core.trace import Breakdown, kind_breakdown
from advisor.profilers.rbln import KIND
from advisor.profilers.rbln.naming import NameRules, ParsedNames
from advisor.profilers.rbln.slices import Slices
from advisor.profilers.rbln.unions import per_unit, per_unit_groups, unit_view

# the columns in the order of their values (their titles and units: data/report.yaml breakdowns)
COLUMNS = ("ne_time", "dma_time", "time", "share", "dma_ratio", "commands", "bytes")
NOTE = ("Layer keys from the command names ({sequence}_{layer}_{command}); fused groups are kept whole. "
        "Times are unions of the layer's commands, mean per device or chiplet; DMA = Neural DMA and Task DMA.")


@dataclass(frozen=True)
class Masks:
    """Row masks of the category sets the analysis reads."""

    dev: Any
    ne: Any
    dma: Any
    neural_dma: Any
    task_dma: Any


def _mean(s: Slices, mask: Any) -> float:
    return float(per_unit(s, mask).mean()) if s.units else 0.0


def _share(part: float, whole: float | None) -> float | None:
    return part / whole if whole else None


def _repeated(s: Slices, pn: ParsedNames, layer: Any, ne: Any) -> Any:
    """Layers that run at two or more separate places in one sequence's Neural Engine command order (per
    unit): another layer's command comes between their commands."""
    import numpy as np

    rows, unit = unit_view(s, ne & pn.parsed[s.name])
    if len(rows) == 0:
        return np.zeros(len(pn.layers), dtype=bool)
    names = s.name[rows]
    seq = pn.seq[names].astype(np.int64) * (int(pn.inst.max()) + 2) + pn.inst[names] + 1
    del names
    order = np.lexsort((rows, seq, unit))
    rows, unit, seq = rows[order], unit[order], seq[order]
    lay = layer[rows]
    run = np.ones(len(rows), dtype=bool)
    run[1:] = (lay[1:] != lay[:-1]) | (seq[1:] != seq[:-1]) | (unit[1:] != unit[:-1])
    flagged = np.zeros(len(pn.layers), dtype=bool)
    layers, seqs = len(pn.layers), int(seq.max()) + 1  # seq is never negative here
    if (int(unit.max()) + 1) * seqs * layers < 2**62:  # each (unit, seq, layer) as one int64, in the same order
        place = unit[run].astype(np.int64) * seqs
        place += seq[run]
        place *= layers
        place += lay[run]
        places, counts = np.unique(place, return_counts=True)
        flagged[places[counts >= 2] % layers] = True
        return flagged
    places, counts = np.unique(np.column_stack([unit[run], seq[run], lay[run]]), axis=0, return_counts=True)
    flagged[places[counts >= 2, 2]] = True
    return flagged


def layer_figures(s: Slices, pn: ParsedNames, m: Masks, ne_busy: float | None,
                  rules: NameRules) -> tuple[dict[str, float | None], Breakdown | None]:
    """Metrics (s, fractions) and the layers breakdown; ne_busy in ns (mean per unit)."""
    import numpy as np

    none: dict[str, float | None] = dict.fromkeys(
        ("layer_count", "top_layer_share", "top3_layer_share", "dma_bound_layer_time", "weight_stream_share",
         "task_dma_weight_share", "unattributable_ne_share", "repeated_layer_share"))
    if not m.dev.any() or not s.units:
        return none, None
    n_layers, units = len(pn.layers), len(s.units)
    layer = pn.layer[s.name]
    ne_t = per_unit_groups(s, m.ne, layer, n_layers).sum(axis=1) / units
    dma_t = per_unit_groups(s, m.dma, layer, n_layers).sum(axis=1) / units
    all_t = per_unit_groups(s, m.dev, layer, n_layers).sum(axis=1) / units
    dev_layer = layer[m.dev]
    commands = np.bincount(dev_layer, minlength=n_layers)
    moved_bytes = s.bytes[m.dev]
    known = np.isfinite(moved_bytes)
    moved_bytes = moved_bytes[known]  # one copy of the device rows' bytes at a time
    dev_layer = dev_layer[known]
    moved = np.bincount(dev_layer, weights=moved_bytes, minlength=n_layers)
    carries = np.bincount(dev_layer, minlength=n_layers) > 0
    del moved_bytes, dev_layer, known
    present = np.flatnonzero(commands > 0)
    ratio = np.divide(dma_t, ne_t, out=np.full(n_layers, np.nan), where=ne_t > 0)
    bound = (ne_t > 0) & (ratio >= rules.dma_bound_ratio)
    has_ne, has_dma = bool(m.ne.any()), bool(m.dma.any())
    ranked = np.sort(ne_t[present])[::-1]
    out = dict(none)
    out["layer_count"] = float(len(present))
    if has_ne and ne_busy:
        out["top_layer_share"] = float(ranked[0]) / ne_busy
        out["top3_layer_share"] = float(ranked[:3].sum()) / ne_busy
        unattributable = m.ne & pn.unattributable[layer]
        out["unattributable_ne_share"] = _mean(s, unattributable) / ne_busy
        out["repeated_layer_share"] = _mean(s, m.ne & _repeated(s, pn, layer, m.ne)[layer]) / ne_busy
    if has_ne and has_dma:
        out["dma_bound_layer_time"] = _mean(s, m.dev & bound[layer]) * NS
    for key, mask in (("weight_stream_share", m.neural_dma), ("task_dma_weight_share", m.task_dma)):
        if mask.any():
            out[key] = _share(_mean(s, mask & pn.weight[layer]), _mean(s, mask))

    def cell(values: Any, i: int, ok: bool = True) -> float | None:
        v = float(values[i])
        return v if ok and np.isfinite(v) else None

    top = present[np.lexsort((present, -all_t[present]))][:rules.max_layers]
    rows = tuple((pn.layers[i], (float(ne_t[i]) * NS if has_ne else None,
                                 float(dma_t[i]) * NS if has_dma else None, float(all_t[i]) * NS,
                                 _share(float(ne_t[i]), ne_busy) if has_ne else None,
                                 cell(ratio, i, has_dma), float(commands[i]), cell(moved, i, bool(carries[i]))))
                 for i in top)
    breakdown = kind_breakdown(KIND, "layers", COLUMNS).make(rows, NOTE, total_rows=len(present))
    return out, breakdown
