"""The shape of a Neuron trace, shared by its adapters (which fill it) and its event analysis (which
reads it): the names of its two event tables and the NEFF's tensor declarations."""

from __future__ import annotations

from dataclasses import dataclass

INSTRUCTION, DMA = "instruction", "dma"  # the event tables of a Neuron trace


@dataclass(frozen=True)
class TensorDecl:
    """A tensor the NEFF declares (legacy `neff_node`, Explorer `TensorInfo`)."""

    name: str
    kind: str  # what it is used for, as the NEFF says: IN, WEIGHT, OUT, …
    size: float | None  # bytes; None when the file gives no usable size
    reported_repeat: float | None = None  # Explorer's load_to_sbuf_repeat_factor, when it is filled in
    reported_loaded_bytes: float | None = None  # Explorer's load_to_sbuf_total_size_bytes
    reported_loads: float | None = None  # Explorer's load_to_sbuf_dma_count
