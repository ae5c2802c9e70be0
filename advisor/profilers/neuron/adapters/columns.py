"""What both Neuron full-trace adapters (legacy JSON, Explorer Parquet) share: the event tables they
fill (core.events: instruction and dma) and the NEFF's tensor declarations."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from advisor.core.events import Codes, EventTable, EventTrace
from advisor.core.numbers import as_number
from advisor.profilers.neuron.tables import DMA, INSTRUCTION, TensorDecl


def neuron_trace(instr: dict[str, Any], dma: dict[str, Any], summary: dict[str, Any], metadata: dict[str, Any],
                 warnings: tuple[str, ...], tensors: tuple[TensorDecl, ...]) -> EventTrace:
    """The trace from per-field columns: instructions on their engine rows, named by HLO op (the NKI
    source line rides along), and DMA transfers named by the tensor (`variable`) they carry."""
    import numpy as np

    no_queue = Codes(np.zeros(len(dma["start"]), dtype=np.int32), ("",))  # queues are not read
    return EventTrace(
        tables={INSTRUCTION: EventTable(instr["start"], instr["duration"], instr["engine"], instr["hlo"],
                                        extra={"nki": instr["nki"]}),
                DMA: EventTable(dma["start"], dma["duration"], no_queue, dma["variable"], bytes=dma["size"])},
        summary=summary, metadata=metadata, warnings=warnings, extra={"tensors": tensors})


def _size(value: Any) -> float | None:
    """A size or count as files write it (a number, or a number in a string as `neff_node` has it);
    None unless finite and non-negative."""
    number = as_number(value)
    return number if number is not None and number >= 0 else None


def tensor_decls(rows: Iterable[Any]) -> tuple[TensorDecl, ...]:
    """The tensors a file declares: legacy `neff_node` entries or Explorer `TensorInfo` rows (the same
    `variable_name`, `type`, `size`, plus Explorer's load_to_sbuf_* figures). Entries without a name
    are skipped (`neff_node` also lists nodes that are not tensors)."""
    out = []
    for row in rows:
        name = row.get("variable_name") if isinstance(row, dict) else None
        if not isinstance(name, str) or not name.strip():
            continue
        kind = row.get("type")
        out.append(TensorDecl(name=name, kind=kind.strip().upper() if isinstance(kind, str) else "",
                              size=_size(row.get("size")),
                              reported_repeat=_size(row.get("load_to_sbuf_repeat_factor")),
                              reported_loaded_bytes=_size(row.get("load_to_sbuf_total_size_bytes")),
                              reported_loads=_size(row.get("load_to_sbuf_dma_count"))))
    return tuple(out)
