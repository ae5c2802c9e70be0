"""What runs on the device, by operator (issue 35): each kernel tied to the operator that launched it, and each
operator's work from its recorded shapes (work.py) against the device's roofline (data/hardware.yaml peaks).

A kernel is tied through its launch: the kernel's correlation id names its runtime call, the call's `External id`
names the operator it ran in, the innermost one (Kineto gives each operator call its own id; a launch carries the id
of the operator around it: `aten::mm` inside `aten::linear`). An operator's device time is the sum of its kernels'
time in the window. Its roofline time is max(FLOPs / peak, bytes / bandwidth), the peak the one its family and
dtype run at (the matrix units' for matmul-like work, FP32 unless its kernels' names say TF32; the ordinary pipes'
for the rest): no implementation of the operator can take less, so time above it is the most a faster kernel can
give back. Without the device's peaks every roofline figure is unavailable; without recorded shapes, every work
figure: an operator no family models is counted as not modelled, never as zero work."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from advisor.core import units as fmt
from advisor.core.events import NS, EventTrace
from advisor.core.model import Hardware
from advisor.core.trace import Breakdown, kind_breakdown
from advisor.metrics.intervals import usable
from advisor.profilers.torch import KIND
from advisor.profilers.torch import tables as T
from advisor.profilers.torch.device import Device
from advisor.profilers.torch.launches import Links, Runtime
from advisor.profilers.torch.work import Work, model, model_data

TOP = 12  # operators named in the top-operators table and on the roofline chart
OPERATOR_METRICS = ("op_tied_fraction", "op_modelled_fraction", "fp32_matmul_time", "fp32_matmul_tf32_roofline_time",
                    "softmax_time", *(f"{f.key}_{figure}" for f in model_data().families for figure in f.metrics))


@dataclass(frozen=True)
class Call:
    """The calls of one operator with the same recorded inputs that ran kernels in the window."""

    name: str
    time: float  # ns of their kernels (summed)
    work: Work | None  # one call's work; None: not modelled
    peak: str  # the hardware figure their compute bound is (matrix units by dtype, TF32 where the kernels say so)
    count: int = 1

    @property
    def flops(self) -> float | None:
        return self.work.flops * self.count if self.work else None

    @property
    def bytes(self) -> float | None:
        return self.work.bytes * self.count if self.work else None


@dataclass(frozen=True)
class Operators:
    kernel_time: float  # ns of every kernel in the window
    tied: float  # ns of it tied to an operator
    calls: tuple[Call, ...]


def _external_ids(trace: EventTrace, key: str) -> Any:
    """A host table's `External id` per usable row (-1 unknown), aligned with the rows `usable` keeps."""
    import numpy as np

    table = trace.table(key)
    if table is None or not len(table) or table.extra.get(T.EXTERNAL_ID) is None:
        return np.empty(0, dtype=np.int64)
    _, _, keep = usable(np.asarray(table.start, dtype=float), np.asarray(table.duration, dtype=float))
    return np.asarray(table.extra[T.EXTERNAL_ID], dtype=np.int64)[keep]


def tie(trace: EventTrace, dev: Device, rt: Runtime, links: Links, kernels: Any) -> Operators:
    """Each kernel in `kernels` (a mask of device rows) tied to its operator call; the calls with kernel time."""
    import numpy as np

    duration = dev.clipped_duration()
    total = float(duration[kernels].sum())
    ops = trace.table(T.CPU_OP)
    runtime_ids = _external_ids(trace, T.RUNTIME)
    if ops is None or not len(ops) or not len(runtime_ids) or len(runtime_ids) != len(rt.start):
        return Operators(total, 0.0, ())
    _, _, keep = usable(np.asarray(ops.start, dtype=float), np.asarray(ops.duration, dtype=float))
    op_rows = np.flatnonzero(keep)
    op_ids = np.asarray(ops.extra[T.EXTERNAL_ID], dtype=np.int64)[keep] if ops.extra.get(T.EXTERNAL_ID) is not None \
        else np.full(len(op_rows), -1, dtype=np.int64)
    order = np.argsort(op_ids, kind="stable")
    sorted_ids = op_ids[order]
    if not len(sorted_ids):
        return Operators(total, 0.0, ())
    rows = np.flatnonzero(kernels & (links.call >= 0))
    ext = runtime_ids[links.call[rows]]
    at = np.minimum(np.searchsorted(sorted_ids, ext), len(sorted_ids) - 1)
    hit = (ext >= 0) & (sorted_ids[at] == ext)
    rows, op = rows[hit], op_rows[order[at[hit]]]
    time = np.bincount(op, weights=duration[rows], minlength=len(ops))
    tf32 = np.zeros(len(ops), dtype=bool)
    pattern = model_data().tf32_kernels
    named_tf32 = np.fromiter((bool(pattern.search(n)) for n in dev.names), bool, len(dev.names))
    np.logical_or.at(tf32, op, named_tf32[dev.name[rows]])
    return Operators(total, float(time.sum()), _calls(ops, np.flatnonzero(time > 0), time, tf32))


def _calls(ops: Any, rows: Any, time: Any, tf32: Any) -> tuple[Call, ...]:
    """The operator calls (rows of the cpu_op table) grouped by operator, recorded inputs and TF32 kernels, each
    group's work modelled once (a trace has millions of calls and a few thousand distinct ones)."""
    import numpy as np

    columns = [ops.extra.get(key) for key in (T.INPUT_DIMS, T.INPUT_TYPES, T.CONCRETE_INPUTS)]
    codes = [np.asarray(ops.name.codes)[rows]] + [np.asarray(c.codes)[rows] if c is not None
                                                  else np.full(len(rows), -1) for c in columns]
    keys = np.column_stack([*codes, tf32[rows].astype(np.int64)]).astype(np.int64)
    unique, inverse = np.unique(keys, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    times, counts = np.bincount(inverse, weights=time[rows]), np.bincount(inverse)
    calls = []
    for i, (name_code, *inputs, is_tf32) in enumerate(unique.tolist()):
        name = ops.name.names[name_code]
        texts = [c.names[code] if c is not None and code >= 0 else "" for c, code in zip(columns, inputs, strict=True)]
        work = model(name, *texts)
        calls.append(Call(name, float(times[i]), work, _peak(work, bool(is_tf32)), int(counts[i])))
    return tuple(calls)


def _peak(work: Work | None, tf32: bool) -> str:
    data = model_data()
    if work is None:
        return ""
    family = next(f for f in data.families if f.key == work.family)
    if not family.matrix:
        return data.vector_peak
    peak = data.matrix_peaks.get(work.dtype, "")
    return "peak_flops_tf32" if peak == "peak_flops_fp32" and tf32 else peak


def roofline_time(call: Call, hardware: Hardware | None) -> float | None:
    """ns no implementation can beat: max(FLOPs / peak, bytes / bandwidth); None without the figures."""
    values = hardware.values if hardware is not None else {}
    peak, bandwidth = values.get(call.peak), values.get("memory_bandwidth")
    if call.work is None or not peak or not bandwidth:
        return None
    return max(call.work.flops / peak, call.work.bytes / bandwidth) * call.count / NS


def operator_metrics(found: Operators, hardware: Hardware | None) -> dict[str, float | None]:
    """The per-family figures the rules read (machine units), and the shares of kernel time tied and modelled."""
    total = found.kernel_time
    m: dict[str, float | None] = {
        "op_tied_fraction": found.tied / total if total > 0 else None,
        "op_modelled_fraction": (sum(c.time for c in found.calls if c.work) / total) if total > 0 else None}
    if not any(c.work for c in found.calls):  # no shapes recorded (or no operator tied): no work figure, not 0
        return {**m, **dict.fromkeys(n for n in OPERATOR_METRICS if n not in m)}
    for family in model_data().families:
        mine = [c for c in found.calls if c.work is not None and c.work.family == family.key]
        bounds = [roofline_time(c, hardware) for c in mine]
        m[f"{family.key}_time"] = sum(c.time for c in mine) * NS
        m[f"{family.key}_flops"] = sum(c.flops or 0.0 for c in mine)
        m[f"{family.key}_bytes"] = sum(c.bytes or 0.0 for c in mine)
        m[f"{family.key}_roofline_time"] = (sum(b for b in bounds if b is not None) * NS
                                            if mine and all(b is not None for b in bounds) else
                                            (0.0 if not mine and _has_peaks(hardware) else None))
    fp32 = [c for c in found.calls if c.work and c.peak == "peak_flops_fp32" and c.work.family in _matrix()]
    m["fp32_matmul_time"] = sum(c.time for c in fp32) * NS
    at_tf32 = [roofline_time(replace(c, peak="peak_flops_tf32"), hardware) for c in fp32]
    m["fp32_matmul_tf32_roofline_time"] = (sum(b for b in at_tf32 if b is not None) * NS
                                           if all(b is not None for b in at_tf32) else None)
    softmax = [c for c in found.calls if c.name in ("aten::_softmax", "aten::_safe_softmax")]
    m["softmax_time"] = sum(c.time for c in softmax) * NS
    return {name: m[name] for name in OPERATOR_METRICS}


def _matrix() -> set[str]:
    return {f.key for f in model_data().families if f.matrix}


def _has_peaks(hardware: Hardware | None) -> bool:
    return hardware is not None and bool(hardware.values.get("memory_bandwidth"))


@dataclass(frozen=True)
class Group:
    """Operator calls summed under one label: a family, or an operator name at one dtype."""

    label: str
    family: str
    calls: int
    time: float  # ns
    flops: float | None  # None: not modelled
    bytes: float | None
    roofline: float | None  # ns, None without the figures or the work

    def figures(self, kernel_time: float) -> tuple[float | None, ...]:
        """time (s), share of kernel time, achieved FLOP/s and bytes/s, FLOP/B, share of its roofline reached."""
        seconds = self.time * NS
        def per_second(x: float | None) -> float | None:
            return x / seconds if x is not None and seconds > 0 else None
        return (seconds, self.time / kernel_time if kernel_time > 0 else None, per_second(self.flops),
                per_second(self.bytes), self.flops / self.bytes if self.flops is not None and self.bytes else None,
                self.roofline / self.time if self.roofline is not None and self.time > 0 else None)


def _group(label: str, family: str, calls: list[Call], hardware: Hardware | None) -> Group:
    modelled = all(c.work is not None for c in calls)
    bounds = [roofline_time(c, hardware) for c in calls]
    return Group(label, family, sum(c.count for c in calls), sum(c.time for c in calls),
                 sum(c.flops or 0.0 for c in calls) if modelled else None,
                 sum(c.bytes or 0.0 for c in calls) if modelled else None,
                 sum(b for b in bounds if b is not None) if modelled and all(b is not None for b in bounds) else None)


def groups(found: Operators, hardware: Hardware | None) -> tuple[list[Group], list[Group]]:
    """By family (largest time first; "not modelled" last), and the TOP operators by name and dtype."""
    families: dict[str, list[Call]] = {}
    by_name: dict[tuple[str, str], list[Call]] = {}
    for call in found.calls:
        family = call.work.family if call.work else ""
        families.setdefault(family, []).append(call)
        by_name.setdefault((call.name, call.work.dtype if call.work else ""), []).append(call)
    titles = {f.key: f.title for f in model_data().families}
    out = sorted((_group(titles.get(k, "Not modelled"), k, v, hardware) for k, v in families.items()),
                 key=lambda g: (g.family == "", -g.time))
    top = sorted((_group(f"{name} ({dtype})" if dtype else name, calls[0].work.family if calls[0].work else "",
                         calls, hardware) for (name, dtype), calls in by_name.items()), key=lambda g: -g.time)
    return out, top[:TOP]


def operator_breakdowns(found: Operators, hardware: Hardware | None) -> tuple[Breakdown | None, Breakdown | None]:
    """The families and the top operators as tables (data/report.yaml `operator_families`, `top_operators`): time,
    share of kernel time, achieved FLOP/s and bytes/s, FLOP/B and the share of the roofline reached; None without
    an operator tied to a kernel."""
    if not found.calls:
        return None, None
    families, top = groups(found, hardware)
    columns = ("time", "share", "flops_rate", "bytes_rate", "intensity", "roofline_share")
    labels = KIND.data("report.yaml")["operator_notes"]
    tied = found.tied / found.kernel_time if found.kernel_time > 0 else 0.0
    note = labels["families"].format(tied=fmt.percent(tied), untied=fmt.percent(1 - tied))
    return (kind_breakdown(KIND, "operator_families", columns).make(
                [(g.label, g.figures(found.kernel_time)) for g in families], note),
            kind_breakdown(KIND, "top_operators", columns).make(
                [(g.label, g.figures(found.kernel_time)) for g in top], labels["top"]))
