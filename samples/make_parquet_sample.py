#!/usr/bin/env python3
"""Write samples/explorer_parquet/: the legacy_trace sample's summary and events as Neuron Explorer
writes them (`neuron-explorer view -n k.neff -s p.ntff --output-file DIR`): Summary, Metadata,
Instruction (split in two parts, as Explorer splits large tables), DmaPacket, TensorInfo and Warning
tables, with Explorer's column names and absolute hardware timestamps. TensorInfo's load_to_sbuf_*
columns are null, as Explorer leaves them for NKI kernels (dynamic DMA), so tensor loads are measured
from DmaPacket as for the legacy JSON.

    python samples/make_parquet_sample.py
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
ORIGIN_NS = 1_763_800_000_000_000  # a hardware clock value: Explorer timestamps are absolute


def main() -> None:
    trace = json.loads((HERE / "legacy_trace" / "profile.json").read_text())
    out = HERE / "explorer_parquet"
    out.mkdir(exist_ok=True)
    summary = trace["summary"][0]
    meta = trace["metadata"][0]
    write = lambda name, rows: pq.write_table(pa.Table.from_pylist(rows), out / f"{name}.parquet")  # noqa: E731
    write("Summary", [{k: v for k, v in summary.items() if k not in ("instance_type",)}])
    write("Metadata", [{"profile_schema_version": "7.4", "ntff_version": meta.get("ntff_version", 3),
                        "first_hw_timestamp": ORIGIN_NS, "hbm_ddr_bandwidth": meta.get("hbm_ddr_bandwidth"),
                        "dma_ddr_bandwidth": meta.get("dma_ddr_bandwidth"), "instance_type": summary["instance_type"],
                        "tensor_engine_num_rows": meta.get("pe_num_rows"), "tensor_engine_num_cols": meta.get("pe_num_cols"),
                        "tensor_engine_clock_freq": meta.get("pe_clock_freq")}])
    instructions = [{"start_ts": ORIGIN_NS + int(i["timestamp"]), "end_ts": ORIGIN_NS + int(i["timestamp"] + i["duration"]),
                     "duration_ns": int(i["duration"]), "engine": i["label"], "opcode": i.get("opcode", ""),
                     "hlo_name": i.get("hlo_name", ""), "nki_source_location": i.get("nki_source_location"),
                     "evt_wait_time_ns": int(i.get("evt_wait_time", 0))} for i in trace["instruction"]]
    half = len(instructions) // 2
    pq.write_table(pa.Table.from_pylist(instructions[:half]), out / "Instruction_0.parquet")
    pq.write_table(pa.Table.from_pylist(instructions[half:]), out / "Instruction_1.parquet")
    write("DmaPacket", [{"start_ts": ORIGIN_NS + int(d["timestamp"]), "duration_ns": int(d["duration"]),
                         "transfer_bytes": int(d["transfer_size"]), "variable": d.get("variable", ""),
                         "queue_type": d.get("queue_type", "")} for d in trace["dma"]])
    null_int = pa.array([None] * len(trace["neff_node"]), pa.int64())
    tensor_info = pa.Table.from_pylist([{"variable_name": n["variable_name"], "type": n["type"], "shape": n["shape"],
                                         "size": int(n["size"])} for n in trace["neff_node"]])
    for column in ("load_to_sbuf_total_size_bytes", "load_to_sbuf_dma_count"):
        tensor_info = tensor_info.append_column(column, null_int)
    tensor_info = tensor_info.append_column("load_to_sbuf_repeat_factor", null_int.cast(pa.float64()))
    pq.write_table(tensor_info, out / "TensorInfo.parquet")
    write("Warning", [{"category": w.get("category", ""), "message": w.get("message", "")}
                      for w in trace.get("warnings", [])])


if __name__ == "__main__":
    main()
