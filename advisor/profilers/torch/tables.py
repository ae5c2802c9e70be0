"""The shape of a PyTorch-profiler trace, shared by its adapters (which fill it) and its event analysis
(which reads it): the event tables of the `core.events.EventTrace` the adapters build, the kind's own
columns of each, and the metadata keys. Times are ns from the trace start (the earliest `ts` of a
complete event), kept at the file's resolution (Kineto writes µs, often with ns fractions: no rounding)."""

from __future__ import annotations

# Device work: each event has a device and, where the profiler says, a stream (-1 when it does not:
# some AMD and all MTIA device events). Track: "device D stream S" (or "device D" without a stream).
KERNEL = "kernel"  # cat kernel (NVIDIA, AMD), mtia_ccp_events (MTIA)
MEMCPY = "memcpy"  # cat gpu_memcpy; bytes; extra DIRECTION (HtoD|DtoH|DtoD|PtoP|other), PAGEABLE (1.0/0.0/NaN)
MEMSET = "memset"  # cat gpu_memset; bytes
DEVICE_TABLES = (KERNEL, MEMCPY, MEMSET)

# Host side: each event has a thread (track: "thread T").
RUNTIME = "runtime"  # cat cuda_runtime, cuda_driver, mtia_runtime: launches, copies, synchronisations
CPU_OP = "cpu_op"  # cat cpu_op: aten operators, record_param_comms (collective name and sizes in extra)
ANNOTATION = "annotation"  # cat user_annotation: ProfilerStep#N, DataLoader, nccl:all_reduce, …
GPU_ANNOTATION = "gpu_annotation"  # cat gpu_user_annotation: the same marks on the device timeline
SYNC = "sync"  # cat cuda_sync: the device-side record of a synchronisation (what it waited for)
HOST_TABLES = (RUNTIME, CPU_OP, ANNOTATION, GPU_ANNOTATION, SYNC)

# Columns in EventTable.extra (numpy arrays; float64 with NaN for unknown unless said otherwise).
DEVICE = "device"  # int64, -1 unknown (device tables, runtime)
STREAM = "stream"  # int64, -1 unknown (device tables)
THREAD = "thread"  # int64 (host tables)
CORRELATION = "correlation"  # int64, -1 unknown: links a runtime launch to the device event it started
EXTERNAL_ID = "external_id"  # int64, -1 unknown: links a cpu_op to the runtime calls it made
GRID = "grid"  # Codes: "x,y,z" or "" (kernel)
BLOCK = "block"  # Codes: "x,y,z" or "" (kernel)
REGISTERS = "registers"  # registers per thread (kernel)
OCCUPANCY = "occupancy"  # est. achieved occupancy as a fraction 0..1 (kernel; the trace prints 0..100)
DIRECTION = "direction"  # Codes (memcpy)
PAGEABLE = "pageable"  # 1.0 pageable host memory, 0.0 pinned or device, NaN unknown (memcpy)
COLLECTIVE = "collective"  # Codes: allreduce, broadcast, … or "" (cpu_op record_param_comms)
MESSAGE_BYTES = "message_bytes"  # bytes of the collective's input message, NaN unknown (cpu_op)
GROUP_SIZE = "group_size"  # ranks in the collective's group, NaN unknown (cpu_op)
# record_shapes=True (cpu_op): Codes of each input list as compact JSON text, "" when not recorded
INPUT_DIMS = "input_dims"  # [[16, 559, 1024], [], …]: one shape per input ([] for a scalar or none)
INPUT_TYPES = "input_types"  # ["c10::BFloat16", "Scalar", …]
CONCRETE_INPUTS = "concrete_inputs"  # ["", "True", "0.125", …]: scalar arguments as text

# EventTrace.metadata keys (absent when the trace does not say).
META_DEVICE_NAME = "device_name"  # "NVIDIA A100-PG509-200", "AMD Radeon Graphics", "ARTEMIS"
META_DEVICE_VENDOR = "device_vendor"  # nvidia | amd | mtia | none
META_COMPUTE_CAPABILITY = "compute_capability"  # "8.0" (deviceProperties computeMajor.computeMinor)
META_SM_COUNT = "sm_count"  # numSms
META_DEVICE_MEMORY = "device_memory"  # bytes (totalGlobalMem)
META_RANK = "rank"  # int: distributedInfo.rank, else from the file name (rank-3, rank_3), else absent
META_WORLD_SIZE = "world_size"  # int
META_BACKEND = "backend"  # nccl | gloo | …
META_RANK_SOURCE = "rank_source"  # distributedInfo | file name
META_TIME_BASE = "time_base_ns"  # absolute ns of the trace start (for aligning ranks)
META_TRACE_NAME = "trace_name"
