"""The event columns every full-trace adapter (legacy JSON, Explorer Parquet) produces: numpy arrays
in machine units (ns, bytes), repeated strings stored once as integer codes."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from advisor.core.numbers import as_number

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Codes:
    """A column of repeated strings as integer codes into `names`."""

    codes: Any  # numpy int32 array
    names: tuple[str, ...]


@dataclass(frozen=True)
class TensorDecl:
    """A tensor the NEFF declares (legacy `neff_node`, Explorer `TensorInfo`)."""

    name: str
    kind: str  # what it is used for, as the NEFF says: IN, WEIGHT, OUT, …
    size: float | None  # bytes; None when the file gives no usable size
    reported_repeat: float | None = None  # Explorer's load_to_sbuf_repeat_factor, when it is filled in
    reported_loaded_bytes: float | None = None  # Explorer's load_to_sbuf_total_size_bytes
    reported_loads: float | None = None  # Explorer's load_to_sbuf_dma_count


@dataclass(frozen=True)
class Trace:
    """Event columns (ns, bytes) plus what the file says about itself."""

    instr_start: Any
    instr_duration: Any
    instr_engine: Codes  # the timeline row (legacy `label`, Explorer `engine`)
    instr_hlo: Codes
    instr_nki: Codes
    dma_start: Any
    dma_duration: Any
    dma_size: Any
    dma_variable: Codes
    summary: dict[str, Any]
    metadata: dict[str, Any]
    warnings: tuple[str, ...]
    tensors: tuple[TensorDecl, ...] = ()


class Interner(dict):
    """Repeated strings (engine rows, HLO names, NKI lines, tensor names) as integer codes. A dict
    whose missing keys number themselves, so `map(interner.__getitem__, values)` codes a column
    without a Python-level loop."""

    def __missing__(self, value: str) -> int:
        code = self[value] = len(self)
        return code

    def codes(self, column: Any) -> Codes:
        return Codes(codes=column, names=tuple(self))


class Percent:
    """Progress as whole percents of one step, printed only when the percent changes."""

    def __init__(self, progress: Progress | None, what: str) -> None:
        self.progress, self.what, self.shown = progress, what, -1

    def __call__(self, done: float, total: float) -> None:
        percent = int(100 * done / total) if total else 100
        if self.progress and percent != self.shown:
            self.shown = percent
            self.progress(f"{self.what}: {percent} %")


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
