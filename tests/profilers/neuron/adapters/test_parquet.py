"""Neuron Explorer Parquet directories: the same analysis as the legacy JSON of the same profile."""

import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tests_support import SAMPLES

from advisor.api import analyze
from advisor.core.errors import AdvisorError
from advisor.profilers.neuron.adapters import load_profiles
from advisor.profilers.neuron.adapters.parquet import is_explorer_dir, table_files

FOLDER = SAMPLES / "explorer_parquet"


def test_split_tables_in_numeric_order(tmp_path):
    for name in ("Instruction_10.parquet", "Instruction_2.parquet", "Instruction_0.parquet"):
        (tmp_path / name).write_bytes(b"")
    assert [p.name for p in table_files(tmp_path, "Instruction")] == [
        "Instruction_0.parquet", "Instruction_2.parquet", "Instruction_10.parquet"]


def test_same_analysis_as_the_legacy_json():
    assert is_explorer_dir(FOLDER)
    [profile] = load_profiles(FOLDER)
    assert profile.source.format == "parquet"
    assert profile.info["instance_type"] == "trn1.2xlarge"  # from the Metadata table
    parquet, legacy = analyze(FOLDER), analyze(SAMPLES / "legacy_trace" / "profile.json")
    assert parquet.trace.engines == legacy.trace.engines
    # TensorInfo sizes, loads from DmaPacket
    assert parquet.trace.breakdown("tensor_loads") == legacy.trace.breakdown("tensor_loads")
    assert parquet.trace.dma_size_counts == legacy.trace.dma_size_counts
    assert parquet.trace.gaps == legacy.trace.gaps
    assert [f.name for f in parquet.findings] == [f.name for f in legacy.findings]


def test_tensor_info_repeat_factor_is_used_when_explorer_fills_it_in(tmp_path):
    for table in ("Summary", "DmaPacket"):
        shutil.copy(FOLDER / f"{table}.parquet", tmp_path / f"{table}.parquet")
    pq.write_table(pa.Table.from_pylist([
        {"variable_name": "w", "type": "WEIGHT", "size": 1000, "load_to_sbuf_repeat_factor": 5.0,
         "load_to_sbuf_total_size_bytes": 5000, "load_to_sbuf_dma_count": 10},
        {"variable_name": "x", "type": "IN", "size": 400, "load_to_sbuf_repeat_factor": 1.0,
         "load_to_sbuf_total_size_bytes": 400, "load_to_sbuf_dma_count": 1},
        {"variable_name": "y", "type": "OUT", "size": 400, "load_to_sbuf_repeat_factor": None,
         "load_to_sbuf_total_size_bytes": None, "load_to_sbuf_dma_count": None}]), tmp_path / "TensorInfo.parquet")
    a = analyze(tmp_path)
    loads = a.trace.breakdown("tensor_loads")  # copies, bytes loaded, transfers, where the copies come from
    assert [(key, loads.value(key, "repeat"), loads.value(key, "loaded_bytes"), loads.value(key, "loads"),
             loads.text(key, "source")) for key, _ in loads.rows] == [
        ("w", 5.0, 5000, 10, "reported"), ("x", 1.0, 400, 1, "reported")]  # outputs are stores, not loads
    assert a.value("tensors_loaded_over_twice") == 1 and a.value("tensor_reload_excess_bytes") == 4000
    # 4,000 bytes reloaded out of 46 MiB of DMA: a reload, but not worth a finding (min_excess)
    assert {o.name: o.outcome for o in a.outcomes}["tensor-reload"] == "passed"


def test_tables_explorer_did_not_write_are_absent_not_errors(tmp_path):
    shutil.copy(FOLDER / "Summary.parquet", tmp_path / "Summary.parquet")
    [profile] = load_profiles(tmp_path)
    assert len(profile.trace.tables["instruction"]) == 0 and len(profile.trace.tables["dma"]) == 0
    assert analyze(tmp_path).trace.events["instruction"] == 0


def test_broken_table_is_one_clear_error(tmp_path):
    shutil.copy(FOLDER / "Summary.parquet", tmp_path / "Summary.parquet")
    (tmp_path / "Instruction.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(AdvisorError, match="cannot read Parquet table Instruction"):
        load_profiles(tmp_path)


def test_empty_summary(tmp_path):
    pq.write_table(pa.table({"total_time": pa.array([], pa.float64())}), tmp_path / "Summary.parquet")
    with pytest.raises(AdvisorError, match="Summary table is empty"):
        load_profiles(tmp_path)
