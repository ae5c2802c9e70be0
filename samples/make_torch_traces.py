#!/usr/bin/env python3
"""Synthetic PyTorch-profiler (Kineto) traces: the generated samples under samples/torch_*/ (the real ones,
HTA's test traces, are copied, not made here).

    python samples/make_torch_traces.py              # regenerate every generated sample
    python samples/make_torch_traces.py --list       # the scenarios and the rules each is built to fire
    python samples/make_torch_traces.py --only host_bound --out /tmp/x   # one scenario elsewhere

Stdlib only and deterministic: fixed seeds, whole nanoseconds, gzip without a time stamp; rerunning it rewrites
identical bytes. Each trace is simulated, not drawn: a host thread runs ATen operators one after another (each a
`cpu_op`, nested as PyTorch nests them, with the `cudaLaunchKernel` it makes), every launch queues a kernel on a
CUDA stream, and the kernel starts when its launch has reached the device and the stream is free, so the
device's idle time, queue depth and the host's waits follow from the host's pace and the kernels' lengths, as on
a GPU. What the files hold is what Kineto writes (the real traces in samples/torch_a100_ddp and
samples/torch_a100_cold_start are the model):

    top level     schemaVersion, deviceProperties (one entry per GPU of the node), distributedInfo (ranks of a
                  process group only), cuda_runtime_version, traceEvents, traceName, displayTimeUnit,
                  baseTimeNanoseconds
    host          cpu_op (args External id, Record function id, Ev Idx numbered without gaps),
                  user_annotation (ProfilerStep#N, record_function marks, the DataLoader's __next__,
                  nccl:all_reduce), cuda_runtime (cbid, correlation, External id of the operator that made it)
    device        kernel (device, stream, correlation, grid, block, registers, shared memory, blocks and warps
                  per SM, est. achieved occupancy %; NCCL kernels also the collective's name, sizes and group),
                  gpu_memcpy / gpu_memset (bytes, memory bandwidth), cuda_sync (Stream Sync),
                  gpu_user_annotation (the marks that have kernels under them)
    flows         ac2g: `s` at the launch call, `f` at the device event it started (same id as the correlation)
    collectives   record_param_comms (Collective name, In/Out msg nelems, dtype, Group size, Process Group
                  Name/Description/Ranks) around the NCCL launch; the ranks of one job run in lockstep: an
                  all-reduce ends on every rank when the last rank has started it plus its transfer time
    metadata      process_name/labels/sort_index per process and GPU, thread_name per thread and stream, the
                  profiler's `Trace` span and its instant events

Times are µs with three decimals (ns), on a monotonic clock, relative to baseTimeNanoseconds, as in recent
Kineto versions.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
from collections import deque
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent

# ---------------------------------------------------------------------------------------------
# the machine (NVIDIA A100-SXM4-80GB as deviceProperties prints it) and the profiler's constants

A100 = {"name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 85097971712, "computeMajor": 8, "computeMinor": 0,
        "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536, "warpSize": 32,
        "sharedMemPerBlock": 49152, "numSms": 108, "regsPerMultiprocessor": 65536,
        "sharedMemPerBlockOptin": 166912, "sharedMemPerMultiprocessor": 167936}
SMS = A100["numSms"]
COMPUTE, NCCL = 7, 24  # the default stream's id as Kineto prints it, and NCCL's stream
CBID = {"cudaLaunchKernel": 211, "cudaLaunchKernelExC": 430, "cudaMemcpyAsync": 41, "cudaStreamSynchronize": 131,
        "cudaEventRecord": 135, "cudaStreamWaitEvent": 147, "cudaMalloc": 20, "cudaGraphLaunch": 311,
        "cudaDeviceSynchronize": 165, "cudaFuncGetAttributes": 13, "cudaStreamIsCapturing": 317}
QUEUE_LIMIT = 1024  # kernels a stream holds queued before a launch call blocks (the launch queue's depth)
BASE_NS = 1_716_800_000_000_000_000  # baseTimeNanoseconds: the wall clock at the trace clock's zero
CLOCK0_US = 2_431_907_551  # the trace clock (µs) when the profiler started


def us(x: float) -> int:
    """µs -> whole ns."""
    return round(x * 1000)


# ---------------------------------------------------------------------------------------------
# kernels as the trace names and describes them


@dataclass(frozen=True)
class K:
    """A kernel: its name, nominal duration (µs) and launch shape; `occ` is Kineto's est. achieved occupancy %."""

    name: str
    us: float
    grid: tuple[int, int, int] = (1024, 1, 1)
    block: tuple[int, int, int] = (128, 1, 1)
    regs: int = 32
    smem: int = 0
    occ: int = 100

    def scaled(self, factor: float, **shape: object) -> K:
        return K(**{**self.__dict__, "us": self.us * factor, **shape})


def ew(functor: str, t: float, arity: int = 3, grid: int = 2048) -> K:
    return K(f"void at::native::vectorized_elementwise_kernel<4, {functor}, at::detail::Array<char*, {arity}> >(int, "
             f"{functor}, at::detail::Array<char*, {arity}>)", t, (grid, 1, 1), (128, 1, 1), 20, 0, 100)


ADD, MUL = "at::native::CUDAFunctor_add<float>", "at::native::binary_internal::MulFunctor<float>"
GELU = "at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() " \
       "const::{lambda()#2}::operator()() const::{lambda(float)#1}"
GELU_BWD = "at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::" \
           "operator()() const::{lambda()#2}::operator()() const::{lambda(float, float)#1}"
RELU = "at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, " \
       "at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::" \
       "{lambda(float)#1}"
THRESHOLD_BWD = "at::native::(anonymous namespace)::threshold_kernel_impl<float>(at::TensorIteratorBase&, float, " \
                "float)::{lambda(float, float)#1}"
FILL = "at::native::FillFunctor<float>"


def gemm(t: float, tile: str = "128x128_32x3", layout: str = "tn", occ: int = 25, grid: int = 216) -> K:
    kind = f"cutlass_80_tensorop_s1688gemm_{tile}_{layout}_align4"
    return K(f"void cutlass::Kernel<{kind}>({kind}::Params)", t, (grid, 1, 1), (256, 1, 1), 230, 73728, occ)


def sgemm(t: float, occ: int = 25) -> K:
    return K("ampere_sgemm_128x64_tn", t, (8, 16, 1), (128, 1, 1), 122, 16384, occ)


LAYER_NORM = "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float, " \
             "float const*, float const*, float const*, float*, float*, float*)"
LN_BWD_INPUT = "void at::native::(anonymous namespace)::layer_norm_grad_input_kernel_vectorized<float, float>(float " \
               "const*, float const*, float const*, float const*, float const*, float*, int)"
LN_BWD_GAMMA = "void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel_32x32<float, float>(long, long, " \
               "float const*, float const*, float const*, float const*, float*, float*)"
SOFTMAX = "void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, true, false>(float*, float " \
          "const*, int, int, int, bool const*, int, bool)"
SOFTMAX_BWD = "void (anonymous namespace)::softmax_warp_backward<float, float, float, 10, true, false>(float*, float " \
              "const*, float const*, int, int, int, bool const*)"
NLL = "void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<float, float, long>(float*, " \
      "float*, float const*, long const*, float const*, bool, long, long, long, long)"
NLL_BWD = "void at::native::(anonymous namespace)::nll_loss_backward_reduce_cuda_kernel_2d<float, long>(float*, " \
          "float const*, long const*, float const*, float const*, bool, int, int, long, long)"
SUM = "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, " \
      "at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, " \
      "unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::func_wrapper_t<float, " \
      "at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, " \
      "unsigned int, float, 4>)"
FLASH = "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, " \
        "cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, false, true, false, false, " \
        "true, true, false>(pytorch_flash::Flash_fwd_params)"
FLASH_BWD = "void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<64, 128, 128, " \
            "8, 2, 4, 2, false, false, cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, 8, " \
            "cutlass::bfloat16_t> >, true, false, false, false, false, true>(pytorch_flash::Flash_bwd_params)"
ADAM = "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::" \
       "TensorListMetadata<{n}>, at::native::(anonymous namespace)::{f}<float>, float>(at::native::(anonymous " \
       "namespace)::TensorListMetadata<{n}>, at::native::(anonymous namespace)::{f}<float>, float)"
FUSED_ADAM = "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::" \
             "FusedOptimizerTensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, " \
             "(at::native::ADAM_MODE)1, false>, double*, double, double, double, double, double, bool, float " \
             "const*, float const*>(at::native::(anonymous namespace)::FusedOptimizerTensorListMetadata<4>, " \
             "at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, " \
             "double*, double, double, double, double, double, bool, float const*, float const*)"
CAT = "void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 1, 128, 1>(float*, " \
      "at::native::(anonymous namespace)::CatArrInputTensorMetadata<float, unsigned int, 128, 1>, " \
      "at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)"
CONV = "sm80_xmma_{what}_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x128x16_stage4_" \
       "warpsize2x2x1_g1_tensor16x8x8_kernel"
BN_FWD = "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1, true>(cudnnTensorStruct, float " \
         "const*, cudnnTensorStruct, float*, float const*, float const*, float, float, float*, float*, float*, float*, " \
         "float, float)"
BN_BWD = "void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 512, true, 1>(float, float, float, float, " \
         "cudnnTensorStruct, float const*, cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, " \
         "float*, float*, float const*, float const*, float)"
MAXPOOL = "void at::native::(anonymous namespace)::max_pool_forward_nchw<float>(int, float const*, long, long, long, " \
          "int, int, int, int, int, int, int, int, int, int, float*, long*)"
NCCL_ALLREDUCE = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"
GEMV = "void gemv2T_kernel_val<int, int, __half, __half, float, float, 128, 16, 4, 4, false, false, " \
       "cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<__half const>, cublasGemvTensorStridedBatched<__half " \
       "const>, cublasGemvTensorStridedBatched<__half>, float> >(cublasGemvParamsEx<int, " \
       "cublasGemvTensorStridedBatched<__half const>, cublasGemvTensorStridedBatched<__half const>, " \
       "cublasGemvTensorStridedBatched<__half>, float>, float, float)"
FLASH_DECODE = "void pytorch_flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<64, 64, 256, 4, false, false, " \
               "cutlass::half_t, Flash_kernel_traits<64, 64, 256, 4, cutlass::half_t> >, false, false, false, false, " \
               "true, false, true, false>(pytorch_flash::Flash_fwd_params)"


# ---------------------------------------------------------------------------------------------
# one rank: a host that runs operators one after another and a device whose streams run what they queue


@dataclass(frozen=True)
class Collective:
    """What a rank asks of the job at a collective: its kernel's start on its own device (ns), the transfer's
    length (ns) and the process group's ranks; the job answers with the end, the same on every rank of the group."""

    start: int
    transfer: int
    group: tuple[int, ...]


@dataclass(frozen=True)
class Group:
    """A process group: its c10d name and description, its ranks, and NCCL's bus bandwidth on its links (GB/s)."""

    name: str
    desc: str
    ranks: tuple[int, ...]
    busbw: float


@dataclass
class Rank:
    """One rank's process as the profiler sees it: a host (a main thread and an autograd thread, one running at a
    time) that runs operators, and a device whose streams run what they queue. Times are whole ns on the trace's
    clock; the events collected are written by `kineto()`."""

    rank: int
    seed: int
    world: int = 1  # ranks in the process group (1: not distributed, no distributedInfo)
    gpus_per_node: int = 8  # GPUs of the node (deviceProperties lists them all)
    ranks_per_node: int = 0  # ranks on each node (0: one per GPU); a rank runs on GPU rank % ranks_per_node
    device_name: str = A100["name"]
    groups: tuple[Group, ...] = ()  # process groups besides the default one (distributedInfo pg_config)
    slow: float = 1.0  # every compute kernel runs this many times longer (a throttled GPU, a larger shard)
    cost: float = 12.0  # µs of host time per operator besides its launch calls (dispatch, Python)
    gap: float = 6.0  # µs of Python between two operators
    launch_us: float = 6.0  # a cudaLaunchKernel call, µs (with the profiler on)
    host: list[dict] = field(default_factory=list)  # cpu_op and user_annotation events (ns times)
    activity: list[dict] = field(default_factory=list)  # runtime calls, device events and flows
    marks: list[dict] = field(default_factory=list)  # gpu_user_annotation
    kernels: list[tuple[int, int]] = field(default_factory=list)  # (start, end) of every device event, in order
    cold: set[str] | None = None  # kernels launched so far while modules load lazily (None: all loaded)
    first_call: dict[str, float] = field(default_factory=dict)  # µs an operator takes the first time (library init)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed * 7919 + self.rank)
        self.pid = 41_203 + 1_117 * self.rank
        self.main, self.autograd = self.pid, self.pid + 291
        self.device = self.rank % (self.ranks_per_node or self.gpus_per_node)
        self.now = us(CLOCK0_US) + us(1_830.337 + 97.0 * self.rank)  # the first step starts after the profiler
        self.free = {COMPUTE: 0, NCCL: 0}
        self.ext, self.correlation = 0, 9_000
        self.stack: list[tuple[int, int]] = []  # open operators: (external id, thread)
        self.pending: dict[int, deque[int]] = {COMPUTE: deque(), NCCL: deque()}  # ends of queued kernels per stream

    # -- bookkeeping

    def j(self, x: float, spread: float = 0.04) -> int:
        """x µs with a little jitter, as whole ns."""
        return us(x * (1.0 + self.rng.uniform(-spread, spread)))

    def next_ext(self) -> int:
        self.ext += 1
        return self.ext

    def next_correlation(self) -> int:
        self.correlation += 1
        return self.correlation

    @property
    def tid(self) -> int:
        return self.stack[-1][1] if self.stack else self.main

    @property
    def current(self) -> int:
        """The External id the runtime calls of the innermost open operator carry."""
        return self.stack[-1][0] if self.stack else 0

    def _host(self, cat: str, name: str, tid: int, start: int, end: int, ext: int, **args: object) -> None:
        self.host.append({"ph": "X", "cat": cat, "name": name, "pid": self.pid, "tid": tid, "ts": start,
                          "dur": end - start, "args": {"External id": ext, "Record function id": ext, **args}})

    def runtime(self, name: str, start: int, dur: int, correlation: int | None = None, cat: str = "cuda_runtime",
                ) -> int:
        correlation = correlation or self.next_correlation()
        self.activity.append({"ph": "X", "cat": cat, "name": name, "pid": self.pid, "tid": self.tid, "ts": start,
                              "dur": dur, "args": {"External id": self.current or correlation,
                                                   **({"cbid": CBID[name]} if name in CBID else {}),
                                                   "correlation": correlation}})
        return correlation

    def _device(self, cat: str, name: str, stream: int, start: int, dur: int, correlation: int,
                **args: object) -> None:
        self.activity.append({"ph": "X", "cat": cat, "name": name, "pid": self.device, "tid": stream, "ts": start,
                              "dur": dur, "args": {"External id": self.current, **({"queued": 0} if cat == "kernel"
                                                                                  else {}),
                                                   "device": self.device, "context": 1, "stream": stream,
                                                   "correlation": correlation, **args}})
        if cat != "cuda_sync":
            self.kernels.append((start, start + dur))

    def _flow(self, correlation: int, launched: int, stream: int, start: int) -> None:
        self.activity.append({"ph": "s", "id": correlation, "pid": self.pid, "tid": self.tid, "ts": launched,
                              "cat": "ac2g", "name": "ac2g"})
        self.activity.append({"ph": "f", "id": correlation, "pid": self.device, "tid": stream, "ts": start,
                              "cat": "ac2g", "name": "ac2g", "bp": "e"})

    def arrival(self, t: int) -> int:
        """When work queued by a call starting at t reaches an idle stream."""
        return t + self.j(4.5, 0.25)

    def after_last(self, stream: int) -> int:
        """The earliest start on a stream: a microsecond or so after its last event ends, as on a GPU."""
        return self.free[stream] + self.j(1.1, 0.3) if self.free[stream] else 0

    # -- the host

    @contextmanager
    def ops(self, *names: str, tid: int | None = None, cost: float | None = None,
            gap: float | None = None) -> Iterator[None]:
        """Nested operators (outer first) on a thread; the body's launches come from the innermost one."""
        tid = tid or self.tid
        opened = []
        for name in names:
            opened.append((name, self.now, self.next_ext()))
            self.stack.append((opened[-1][2], tid))
            self.now += us(0.4)
        cost = (self.cost if cost is None else cost) + (self.first_call.pop(names[-1], 0.0) if names else 0.0)
        self.now += self.j(cost * 0.6, 0.2)
        yield
        self.now += self.j(cost * 0.4, 0.2)
        for name, start, ext in reversed(opened):
            self.stack.pop()
            self._host("cpu_op", name, tid, start, self.now, ext)
            self.now += us(0.3)
        self.now += self.j(self.gap if gap is None else gap, 0.3)

    @contextmanager
    def mark(self, name: str, tid: int | None = None, gpu: bool = False) -> Iterator[None]:
        """A record_function region (user_annotation); `gpu`: also on the device's timeline over its kernels. The
        calls made inside carry the enclosing operator's External id, as in Kineto's traces."""
        tid, start, ext, first = tid or self.tid, self.now, self.next_ext(), len(self.kernels)
        self.stack.append((self.current, tid))
        yield
        self.stack.pop()
        self._host("user_annotation", name, tid, start, self.now, ext)
        if gpu and len(self.kernels) > first:
            a = min(s for s, _ in self.kernels[first:])
            b = max(e for _, e in self.kernels[first:])
            self.marks.append({"ph": "X", "cat": "gpu_user_annotation", "name": name, "pid": self.device,
                               "tid": COMPUTE, "ts": a, "dur": b - a, "args": {"External id": ext}})

    def idle(self, x: float) -> None:
        """Host work without operators (Python, I/O): x µs."""
        self.now += self.j(x, 0.05)

    def call(self, name: str, x: float) -> int:
        """A runtime call that queues nothing (cudaMalloc, cudaEventRecord, …): x µs."""
        dur = self.j(x, 0.2)
        self.runtime(name, self.now, dur)
        self.now += dur
        return dur

    # -- launches

    def launch(self, k: K, stream: int = COMPUTE, after: int = 0, call: float | None = None,
               api: str = "cudaLaunchKernel", slow: float | None = None, correlation: int | None = None,
               **args: object) -> int:
        """Launch k: the call at the host's time, the kernel when the launch has arrived and the stream is free
        (and not before `after`). Returns the kernel's end (ns)."""
        t = self.now
        if correlation is None:
            dur = self.j(self.launch_us if call is None else call, 0.25)
            if self.cold is not None and k.name not in self.cold:  # CUDA lazy loading: the first launch loads it
                self.cold.add(k.name)
                dur = self.j(1_650.0, 0.45)
            dur += self.room(stream, t)
            correlation = self.runtime(api, t, dur, cat="cuda_driver" if api.startswith("cu") and
                                       not api.startswith("cuda") else "cuda_runtime")
            self.now += dur
        length = self.j(k.us * (self.slow if slow is None else slow), 0.04)
        start = max(self.arrival(t), self.after_last(stream), after)
        self.kernel(k, stream, start, length, correlation, **args)
        self._flow(correlation, t, stream, start)
        self.free[stream] = start + length
        self.pending[stream].append(start + length)
        return start + length

    def room(self, stream: int, t: int) -> int:
        """How long a launch at t blocks because the stream's queue is full (QUEUE_LIMIT kernels not yet done)."""
        queue = self.pending[stream]
        while queue and queue[0] <= t:
            queue.popleft()
        if len(queue) < QUEUE_LIMIT:
            return 0
        return queue.popleft() - t

    def graph(self, kernels: list[K]) -> int:
        """cudaGraphLaunch of a captured graph: its kernels run back to back, each carrying the launch's
        correlation (no launch call of their own). Returns the last kernel's end (ns)."""
        t = self.now
        dur = self.j(17.0, 0.2)
        correlation = self.runtime("cudaGraphLaunch", t, dur)
        self.now += dur
        start = max(self.arrival(t) + us(6.0), self.after_last(COMPUTE))
        self.activity.append({"ph": "s", "id": correlation, "pid": self.pid, "tid": self.tid, "ts": t,
                              "cat": "ac2g", "name": "ac2g"})
        for k in kernels:
            length = self.j(k.us * self.slow, 0.04)
            self.kernel(k, COMPUTE, start, length, correlation)
            self.activity.append({"ph": "f", "id": correlation, "pid": self.device, "tid": COMPUTE, "ts": start,
                                  "cat": "ac2g", "name": "ac2g", "bp": "e"})
            start += length + self.j(0.7, 0.3)  # graph nodes follow each other closer than launches
        self.free[COMPUTE] = start
        return start

    def kernel(self, k: K, stream: int, start: int, length: int, correlation: int, **args: object) -> None:
        blocks = k.grid[0] * k.grid[1] * k.grid[2]
        warps = -(-(k.block[0] * k.block[1] * k.block[2]) // 32)
        self._device("kernel", k.name, stream, start, length, correlation, **{
            "registers per thread": k.regs, "shared memory": k.smem, "blocks per SM": round(blocks / SMS, 6),
            "warps per SM": round(blocks * warps / SMS, 6), "grid": list(k.grid), "block": list(k.block),
            "est. achieved occupancy %": k.occ, **args})

    def kop(self, *names: str, kernels: tuple[K, ...] | list[K] = (), tid: int | None = None,
            cost: float | None = None, gap: float | None = None, stream: int = COMPUTE, after: int = 0) -> int:
        """An operator that launches kernels; returns the last one's end (ns), 0 without kernels."""
        end = 0
        with self.ops(*names, tid=tid, cost=cost, gap=gap):
            for k in kernels:
                end = self.launch(k, stream, after)
                self.now += us(0.5)
        return end

    def copy(self, nbytes: int, direction: str = "HtoD", pageable: bool = False, gbps: float | None = None,
             stream: int = COMPUTE, sync: bool | None = None) -> int:
        """A cudaMemcpyAsync and its copy. A copy to or from pageable memory blocks the host until it is done
        (the driver stages it), and aten::copy_ then synchronises the stream (non_blocking does not apply)."""
        t = self.now
        host_side = "Pageable" if pageable else "Pinned"
        name = (f"Memcpy HtoD ({host_side} -> Device)" if direction == "HtoD" else
                f"Memcpy DtoH (Device -> {host_side})" if direction == "DtoH" else "Memcpy DtoD (Device -> Device)")
        rate = gbps or (5.8 if pageable else 21.0 if direction != "DtoD" else 700.0)  # GB/s = bytes/ns
        length = max(us(1.4), self.j(nbytes / rate / 1000, 0.03))
        start = max(self.arrival(t), self.after_last(stream))
        end = start + length
        call = (end - t + self.j(3.0, 0.2)) if pageable else self.j(7.5, 0.2)
        correlation = self.runtime("cudaMemcpyAsync", t, call)
        self._device("gpu_memcpy", name, stream, start, length, correlation, bytes=nbytes,
                     **{"memory bandwidth (GB/s)": nbytes / length})
        self._flow(correlation, t, stream, start)
        self.free[stream] = end
        self.now = t + call
        if pageable if sync is None else sync:
            self.stream_sync(stream)
        return end

    def stream_sync(self, stream: int = COMPUTE) -> None:
        """cudaStreamSynchronize: the host waits until the stream has run everything queued."""
        t = self.now
        end = max(t + self.j(2.2, 0.2), self.free[stream] + self.j(1.6, 0.2))
        correlation = self.runtime("cudaStreamSynchronize", t, end - t)
        self._device("cuda_sync", "Stream Sync", stream, t + us(1.0), max(end - t - us(2.0), us(0.5)), correlation,
                     cuda_sync_kind="Stream Sync")
        self.now = end

    def wait_for(self, stream: int, event_at: int) -> None:
        """cudaEventRecord on one stream, cudaStreamWaitEvent on another: `stream` runs nothing before event_at."""
        self.call("cudaEventRecord", 2.1)
        self.call("cudaStreamWaitEvent", 2.4)
        self.free[stream] = max(self.free[stream], event_at)

    # -- common PyTorch calls

    @contextmanager
    def step(self, n: int) -> Iterator[None]:
        with self.mark(f"ProfilerStep#{n}", tid=self.main):
            yield
        self.now += us(9.0)  # the profiler's own step bookkeeping

    def next_batch(self, wait: float = 0.0, workers: bool = True) -> None:
        """The DataLoader's __next__: host time (µs) until the batch is there."""
        name = "_MultiProcessingDataLoaderIter" if workers else "_SingleProcessDataLoaderIter"
        with self.mark(f"enumerate(DataLoader)#{name}.__next__", tid=self.main):
            self.idle(wait + 45.0)

    def to_device(self, nbytes: int, pageable: bool = False, gbps: float | None = None) -> int:
        with self.ops("aten::to", "aten::_to_copy", cost=6.0, gap=3.0):
            with self.ops("aten::empty_strided", cost=3.0, gap=0.5):
                pass
            with self.ops("aten::copy_", cost=4.0, gap=0.5):
                return self.copy(nbytes, "HtoD", pageable, gbps)

    def item(self) -> None:
        """Tensor.item(): a 4-byte copy to pageable memory, which waits for everything queued, then a sync."""
        with self.ops("aten::item", "aten::_local_scalar_dense", cost=5.0, gap=4.0):
            self.copy(4, "DtoH", pageable=True, sync=True)

    def to_host(self, nbytes: int) -> None:
        """Tensor.cpu(): a blocking copy to pageable memory."""
        with self.ops("aten::to", "aten::_to_copy", cost=6.0, gap=3.0), self.ops("aten::copy_", cost=4.0, gap=0.5):
            self.copy(nbytes, "DtoH", pageable=True, gbps=6.5)

    def all_reduce(self, nelems: int, busbw: float = 0.0, tid: int | None = None, group: Group | None = None,
                   bf16: bool = False) -> Generator[Collective, int, int]:
        """dist.all_reduce of fp32 (or bf16) `nelems` as c10d records it, in the default group (NCCL's bus bandwidth
        busbw, GB/s) or `group`. The NCCL stream first waits for the compute stream. Returns the kernel's end (ns)
        on this rank."""
        group = group or Group("0", "default_pg", tuple(range(self.world)), busbw)
        n = len(group.ranks)
        info = {"Collective name": "allreduce", "In msg nelems": nelems, "Out msg nelems": nelems, "Group size": n,
                "dtype": "BFloat16" if bf16 else "Float", "In split size": "[]", "Out split size": "[]",
                "Process Group Name": group.name, "Process Group Description": group.desc,
                "Process Group Ranks": str(list(group.ranks))}
        with self.ops("record_param_comms", tid=tid, cost=9.0, gap=2.0), self.mark("nccl:all_reduce", gpu=True):
            self.wait_for(NCCL, self.free[COMPUTE])
            t = self.now
            dur = self.j(7.0, 0.2)
            correlation = self.runtime("cudaLaunchKernelExC", t, dur)
            self.now += dur
            start = max(self.arrival(t), self.after_last(NCCL))
            transfer = us(2 * (n - 1) / n * nelems * (2 if bf16 else 4) / group.busbw / 1000)
            end = yield Collective(start, transfer, group.ranks)
            k = K(NCCL_ALLREDUCE.replace("f32", "bf16") if bf16 else NCCL_ALLREDUCE, 0, (16, 1, 1), (544, 1, 1),
                  96, 87568, 0)
            self.kernel(k, NCCL, start, end - start, correlation, **info)
            self._flow(correlation, t, NCCL, start)
            self.free[NCCL] = end
        self.host[-1]["args"].update({**info, "Global rank start": group.ranks[0], "Global rank stride": 1})
        return end


Program = Callable[[Rank], Generator[Collective, int, None]]


def run_job(ranks: list[Rank], program: Program) -> None:
    """Run one program on every rank in lockstep: at each collective the ranks wait for the last to arrive."""

    def advance(gen: Generator[Collective, int, None], value: int | None) -> Collective | None:
        try:
            return next(gen) if value is None else gen.send(value)
        except StopIteration:
            return None

    gens = [program(r) for r in ranks]
    asked = [advance(g, None) for g in gens]
    while any(a is not None for a in asked):
        assert all(a is not None for a in asked), "the ranks ran different collectives"
        ends = {}
        for group in {a.group for a in asked if a}:
            mine = [a for r, a in zip(ranks, asked, strict=True) if a and r.rank in group]
            ends[group] = max(a.start for a in mine) + max(a.transfer for a in mine)
        asked = [advance(g, ends[a.group]) for g, a in zip(gens, asked, strict=True) if a]


# ---------------------------------------------------------------------------------------------
# models, as the operators and kernels of one training or inference step


def backward_node(r: Rank, node: str, *children: tuple[tuple[str, ...], list[K]], cost: float = 7.0) -> None:
    """An autograd node on the autograd thread: `autograd::engine::evaluate_function: X` > `X` > its operators."""
    with r.ops(f"autograd::engine::evaluate_function: {node}", node, tid=r.autograd, cost=cost, gap=2.0):
        for names, kernels in children:
            r.kop(*names, kernels=kernels, cost=cost * 0.7, gap=1.0)


@dataclass(frozen=True)
class Transformer:
    """A decoder-only transformer trained eagerly; kernel times in µs."""

    layers: int
    ln: float
    qkv: float
    attn: float
    proj: float
    fc: float
    ew: float
    head: float
    rows: int = 512  # layer-norm grid (rows of the activation)

    def norm(self) -> K:
        return K(LAYER_NORM, self.ln, (self.rows, 1, 1), (128, 1, 1), 28, 0, 100)

    def forward(self, r: Rank) -> None:
        r.kop("aten::embedding", "aten::index_select", kernels=[
            K("void at::native::(anonymous namespace)::indexSelectLargeIndex<float, long, unsigned int, 2, 2, -2, "
              "true>(at::cuda::detail::TensorInfo<float, unsigned int>, at::cuda::detail::TensorInfo<float const, "
              "unsigned int>, at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, "
              "unsigned int, long)", self.ew, (self.rows, 1, 1), (128, 1, 1), 26, 0, 100)])
        for _ in range(self.layers):
            r.kop("aten::layer_norm", "aten::native_layer_norm", kernels=[self.norm()])
            r.kop("aten::linear", "aten::addmm", kernels=[gemm(self.qkv)])
            r.kop("aten::scaled_dot_product_attention", "aten::_scaled_dot_product_flash_attention",
                  "aten::_flash_attention_forward",
                  kernels=[K(FLASH, self.attn, (8, 12, 4), (128, 1, 1), 255, 49152, 25)])
            r.kop("aten::linear", "aten::addmm", kernels=[gemm(self.proj, "64x64_32x6", occ=37)])
            r.kop("aten::add", kernels=[ew(ADD, self.ew)])
            r.kop("aten::layer_norm", "aten::native_layer_norm", kernels=[self.norm()])
            r.kop("aten::linear", "aten::addmm", kernels=[gemm(self.fc, "256x128_32x3", occ=25)])
            r.kop("aten::gelu", kernels=[ew(GELU, self.ew * 1.6, 2)])
            r.kop("aten::linear", "aten::addmm", kernels=[gemm(self.fc, "256x128_32x3", occ=25)])
            r.kop("aten::add", kernels=[ew(ADD, self.ew)])
        r.kop("aten::layer_norm", "aten::native_layer_norm", kernels=[self.norm()])
        r.kop("aten::linear", "aten::mm", kernels=[gemm(self.head, "256x128_32x3", "nt", occ=25)])
        loss(r, self.ew)

    def backward(self, r: Rank, ready: Callable[[int], Generator[Collective, int, None]] | None = None,
                 ) -> Generator[Collective, int, None]:
        """The backward pass; `ready(layer)` runs after each layer's gradients are done (DDP's bucket hook)."""
        seed_grad(r)
        loss_backward(r, self.ew)
        backward_node(r, "MmBackward0", (("aten::mm",), [gemm(self.head, "256x128_32x3", "nn")]),
                      (("aten::mm",), [gemm(self.head, "256x128_32x3", "tn")]))
        for layer in reversed(range(self.layers)):
            backward_node(r, "AddBackward0")
            self._linear_backward(r, self.fc)
            backward_node(r, "GeluBackward0", (("aten::gelu_backward",), [ew(GELU_BWD, self.ew * 2)]))
            self._linear_backward(r, self.fc)
            self._norm_backward(r)
            backward_node(r, "AddBackward0")
            self._linear_backward(r, self.proj)
            backward_node(r, "ScaledDotProductFlashAttentionBackward0",
                          (("aten::_scaled_dot_product_flash_attention_backward", "aten::_flash_attention_backward"),
                           [K(FLASH_BWD, self.attn * 2.6, (8, 12, 4), (256, 1, 1), 255, 98304, 25)]))
            self._linear_backward(r, self.qkv)
            self._norm_backward(r)
            if ready is not None:
                yield from ready(layer)
        backward_node(r, "EmbeddingBackward0", (("aten::embedding_backward", "aten::embedding_dense_backward"), [
            K("void at::native::(anonymous namespace)::embedding_backward_feature_kernel<float, float, long>(long "
              "const*, float const*, float*, int, long, int)", self.ew * 3, (256, 1, 1), (32, 32, 1), 40, 8192, 62)]))

    def _linear_backward(self, r: Rank, t: float) -> None:
        backward_node(r, "AddmmBackward0", (("aten::mm",), [gemm(t, "128x128_32x3", "nn")]),
                      (("aten::mm",), [gemm(t, "128x128_32x3", "nt")]),
                      (("aten::sum",), [K(SUM, self.ew * 0.9, (192, 1, 1), (32, 16, 1), 32, 16, 50)]))

    def _norm_backward(self, r: Rank) -> None:
        backward_node(r, "NativeLayerNormBackward0", (("aten::native_layer_norm_backward",), [
            K(LN_BWD_INPUT, self.ln * 1.3, (self.rows, 1, 1), (128, 1, 1), 32, 0, 100),
            K(LN_BWD_GAMMA, self.ln * 1.1, (24, 1, 1), (32, 32, 1), 40, 8448, 50)]))


def loss(r: Rank, t: float) -> None:
    with r.ops("aten::cross_entropy_loss", cost=4.0, gap=1.0):
        r.kop("aten::log_softmax", "aten::_log_softmax", kernels=[K(SOFTMAX, t * 1.4, (64, 1, 1), (128, 1, 1), 30)])
        r.kop("aten::nll_loss_nd", "aten::nll_loss", "aten::nll_loss_forward",
              kernels=[K(NLL, 2.4, (1, 1, 1), (32, 32, 1), 30, 0, 50)])


def seed_grad(r: Rank) -> None:
    """loss.backward() starts on the main thread: the gradient seed (ones_like), then the autograd thread."""
    r.kop("aten::ones_like", "aten::fill_", kernels=[ew(FILL, 1.5, 1, 1)], tid=r.main, cost=6.0, gap=3.0)


def loss_backward(r: Rank, t: float) -> None:
    backward_node(r, "NllLossBackward0", (("aten::nll_loss_backward",), [ew(FILL, t * 0.6, 1),
                                                                          K(NLL_BWD, 2.2, (1, 1, 1), (32, 1, 1))]))
    backward_node(r, "LogSoftmaxBackward0", (("aten::_log_softmax_backward_data",),
                                             [K(SOFTMAX_BWD, t * 1.6, (64, 1, 1), (128, 1, 1), 30)]))


# c10d's record of work.wait() (a record_param_comms that is not a collective)
WAIT_ARGS = {"Collective name": "wait", "dtype": "Byte", "Out split size": "[]", "In msg nelems": 0, "Group size": 1,
             "Process Group Ranks": "[]", "Out msg nelems": 0, "In split size": "[]"}
FOREACH_ADAMW = (("aten::_foreach_add_", "BinaryOpScalarFunctor", 1), ("aten::_foreach_lerp_", "TernaryOpScalarFunctor", 2),
                 ("aten::_foreach_mul_", "BinaryOpScalarFunctor", 1), ("aten::_foreach_addcmul_", "PointwiseOpScalarFunctor", 3),
                 ("aten::_foreach_sqrt", "UnaryOpFunctor", 2), ("aten::_foreach_div_", "BinaryOpScalarFunctor", 1),
                 ("aten::_foreach_add_", "BinaryOpScalarFunctor", 1), ("aten::_foreach_addcdiv_", "PointwiseOpScalarListFunctor", 3))


def adamw(r: Rank, t: float, fused: bool = False) -> None:
    """optimizer.step() and optimizer.zero_grad(set_to_none=True); t: µs of one foreach kernel."""
    with r.mark("Optimizer.step#AdamW.step", tid=r.main, gpu=True):
        if fused:
            r.kop("aten::_fused_adamw_", kernels=[K(FUSED_ADAM, t * 4, (640, 1, 1), (512, 1, 1), 64, 0, 50)] * 2,
                  tid=r.main)
        else:
            for op, functor, n in FOREACH_ADAMW:
                r.kop(op, kernels=[K(ADAM.format(n=n, f=functor), t, (320, 1, 1), (512, 1, 1), 40, 0, 100)],
                      tid=r.main, cost=14.0)
    with r.mark("Optimizer.zero_grad#AdamW.zero_grad", tid=r.main):
        r.idle(38.0)


@dataclass(frozen=True)
class ConvNet:
    """A ResNet-like network: each conv's forward time (µs), batch norm and ReLU scaled from it."""

    convs: tuple[float, ...]
    fc: float
    occ: int = 37

    def forward(self, r: Rank, with_loss: bool = True) -> None:
        for i, t in enumerate(self.convs):
            r.kop("aten::conv2d", "aten::convolution", "aten::_convolution", "aten::cudnn_convolution", kernels=[
                K(CONV.format(what="fprop"), t, (196, 2, 1), (128, 1, 1), 168, 81920, self.occ)], cost=22.0)
            r.kop("aten::batch_norm", "aten::_batch_norm_impl_index", "aten::cudnn_batch_norm",
                  kernels=[K(BN_FWD, t * 0.32, (128, 1, 1), (512, 1, 1), 36, 4096, 59)], cost=24.0)
            r.kop("aten::relu_", "aten::clamp_min_", kernels=[ew(RELU, t * 0.2, 2, 6272)])
            if i == 0:
                r.kop("aten::max_pool2d", "aten::max_pool2d_with_indices",
                      kernels=[K(MAXPOOL, t * 0.3, (6272, 1, 1), (256, 1, 1), 30, 0, 100)])
            elif i % 3 == 0:
                r.kop("aten::add_", kernels=[ew(ADD, t * 0.25, 3, 6272)])
        r.kop("aten::adaptive_avg_pool2d", "aten::mean", kernels=[K(SUM, 18.0, (128, 1, 1), (32, 16, 1), 32, 16, 50)])
        r.kop("aten::linear", "aten::addmm", kernels=[sgemm(self.fc)])
        if with_loss:
            loss(r, 6.0)

    def backward(self, r: Rank) -> None:
        seed_grad(r)
        loss_backward(r, 6.0)
        backward_node(r, "AddmmBackward0", (("aten::mm",), [sgemm(self.fc)]), (("aten::mm",), [sgemm(self.fc)]))
        for i, t in reversed(list(enumerate(self.convs))):
            if i and i % 3 == 0:
                backward_node(r, "AddBackward0")
            backward_node(r, "ReluBackward0", (("aten::threshold_backward",), [ew(THRESHOLD_BWD, t * 0.3, 3, 6272)]))
            backward_node(r, "CudnnBatchNormBackward0", (("aten::cudnn_batch_norm_backward",), [
                K(BN_BWD, t * 0.6, (128, 1, 1), (512, 1, 1), 40, 8192, 30)]))
            backward_node(r, "ConvolutionBackward0", (("aten::convolution_backward",), [
                K(CONV.format(what="dgrad"), t, (196, 2, 1), (128, 1, 1), 168, 81920, self.occ),
                K(CONV.format(what="wgrad"), t * 1.1, (98, 4, 1), (128, 1, 1), 168, 81920, self.occ)]))

    def sgd(self, r: Rank) -> None:
        with r.mark("Optimizer.step#SGD.step", tid=r.main, gpu=True):
            for op, functor, n in FOREACH_ADAMW[:3]:
                r.kop(op.replace("lerp_", "add_"), kernels=[K(ADAM.format(n=n, f=functor), 35.0, (320, 1, 1),
                                                              (512, 1, 1), 40, 0, 100)], tid=r.main, cost=14.0)
        with r.mark("Optimizer.zero_grad#SGD.zero_grad", tid=r.main):
            r.idle(31.0)


def resnet(scale: float, depth: int = 50) -> ConvNet:
    """Conv times (µs) of a ResNet-50 (53 convolutions) or ResNet-18 (20) at batch 64 on an A100 (TF32), scaled."""
    if depth == 18:
        stages = [(4, 210.0), (4, 175.0), (4, 160.0), (4, 150.0)]
        convs = [900.0] + [t for n, t in stages for _ in range(n)] + [120.0, 110.0, 95.0]
    else:
        stages = [(9, 160.0), (12, 150.0), (18, 140.0), (9, 150.0)]
        convs = [1100.0] + [t * (1.6 if i % 3 == 1 else 1.0) for n, t in stages for i in range(n)] + \
                [260.0, 240.0, 230.0, 220.0]
    return ConvNet(tuple(round(t * scale, 1) for t in convs), 40.0 * scale)


# ---------------------------------------------------------------------------------------------
# scenarios: each returns the ranks to write, {file name: rank}


def training_step(r: Rank, n: int, model: Transformer | ConvNet, batch: int, *, pageable: bool = False,
                  wait: float = 0.0, fused: bool = False, log: float = 0.0) -> Generator[Collective, int, None]:
    """One single-GPU training step: next batch, copy it, forward, backward, optimizer, loss.item()."""
    with r.step(n):
        r.next_batch(wait)
        r.to_device(batch, pageable=pageable)
        r.to_device(batch // 2048, pageable=pageable)  # the labels
        model.forward(r)
        if isinstance(model, Transformer):
            yield from model.backward(r)
            adamw(r, 14.0, fused)
        else:
            model.backward(r)
            model.sgd(r)
        r.item()
        r.idle(log)


def mlp_block(r: Rank, width: float) -> None:
    r.kop("aten::linear", "aten::addmm", kernels=[sgemm(width, occ=19)], cost=16.0, gap=14.0)
    r.kop("aten::layer_norm", "aten::native_layer_norm", kernels=[K(LAYER_NORM, 3.1, (64, 1, 1), (128, 1, 1), 28)],
          cost=16.0, gap=12.0)
    r.kop("aten::gelu", kernels=[ew(GELU, 2.6, 2, 64)], cost=12.0, gap=11.0)
    r.kop("aten::add", kernels=[ew(ADD, 2.3, 3, 64)], cost=11.0, gap=10.0)


def scn_host_bound() -> dict[str, Rank]:
    """An MLP of 24 residual blocks (1024 wide, 25 M parameters) trained eagerly at batch 64: every operator's
    kernel takes 2-8 µs, its Python and dispatch ~25 µs."""
    r = Rank(0, seed=11, cost=10.0, gap=8.0)

    def program(r: Rank) -> Generator[Collective, int, None]:
        for n in range(2, 7):
            with r.step(n):
                r.next_batch(20.0)
                r.to_device(64 * 1024 * 4)
                r.to_device(64 * 8)
                for _ in range(24):
                    mlp_block(r, 7.8)
                loss(r, 2.5)
                seed_grad(r)
                loss_backward(r, 2.5)
                for _ in range(24):
                    backward_node(r, "AddBackward0", cost=6.0)
                    backward_node(r, "GeluBackward0", (("aten::gelu_backward",), [ew(GELU_BWD, 3.0, 3, 64)]))
                    backward_node(r, "NativeLayerNormBackward0", (("aten::native_layer_norm_backward",), [
                        K(LN_BWD_INPUT, 3.4, (64, 1, 1), (128, 1, 1), 32), K(LN_BWD_GAMMA, 4.2, (32, 1, 1), (32, 32, 1),
                                                                             40, 8448, 50)]))
                    backward_node(r, "AddmmBackward0", (("aten::mm",), [sgemm(7.6, occ=19)]),
                                  (("aten::mm",), [sgemm(8.1, occ=19)]),
                                  (("aten::sum",), [K(SUM, 3.3, (32, 1, 1), (32, 16, 1), 32, 16, 50)]))
                adamw(r, 9.0)
                r.item()
        yield from ()

    run_job([r], program)
    return {"host_bound.pt.trace.json.gz": r}


def scn_exposed_allreduce() -> dict[str, Rank]:
    """GPT-2 small (124 M parameters) on 8 ranks (two nodes of four A100s): the gradients are all-reduced by hand
    after loss.backward(), 16 flattened buckets of fp32, so no all-reduce runs under the backward pass."""
    world, params, buckets = 8, 124_439_808, 16
    model = Transformer(12, ln=26.0, qkv=150.0, attn=125.0, proj=52.0, fc=200.0, ew=34.0, head=2900.0, rows=8192)
    ranks = [Rank(i, seed=23, world=world, gpus_per_node=4, cost=14.0, gap=10.0) for i in range(world)]

    def program(r: Rank) -> Generator[Collective, int, None]:
        for n in range(3, 8):
            with r.step(n):
                r.next_batch(35.0)
                r.to_device(8 * 1024 * 8)
                r.to_device(8 * 1024 * 8)
                with r.mark("## forward ##", gpu=True):
                    model.forward(r)
                with r.mark("## backward ##", gpu=True):
                    yield from model.backward(r)
                with r.mark("## allreduce gradients ##", gpu=True):
                    ends = []
                    for b in range(buckets):
                        size = params // buckets + (params % buckets if b == 0 else 0)
                        r.kop("aten::cat", kernels=[K(CAT, 36.0, (216, 64, 1), (128, 1, 1), 32, 0, 100)], cost=9.0)
                        ends.append((yield from r.all_reduce(size, busbw=48.0)))
                        with r.ops("record_param_comms", cost=3.0, gap=2.0):
                            r.wait_for(COMPUTE, ends[-1])
                        r.host[-1]["args"].update(WAIT_ARGS)
                adamw(r, 105.0, fused=True)
                r.item()

    run_job(ranks, program)
    return {"rank0_of8.pt.trace.json.gz": ranks[0]}



def scn_blocking_copy() -> dict[str, Rank]:
    """ResNet-50 trained at batch 128 on one A100 from a DataLoader without pin_memory: each step copies its
    77 MB batch from pageable memory (the host blocked, the device only copying), reads the loss and the accuracy
    with .item() and the predictions with .cpu(), then computes metrics on the CPU."""
    model = resnet(2.0)
    r = Rank(0, seed=31, cost=18.0, gap=14.0)

    def program(r: Rank) -> Generator[Collective, int, None]:
        for n in range(2, 6):
            with r.step(n):
                r.next_batch(290.0)
                r.to_device(128 * 3 * 224 * 224 * 4, pageable=True)
                r.to_device(128 * 8, pageable=True)
                with r.mark("## forward ##", gpu=True):
                    model.forward(r)
                with r.mark("## backward ##", gpu=True):
                    model.backward(r)
                model.sgd(r)
                r.item()  # running_loss += loss.item()
                r.kop("aten::argmax", kernels=[K(SUM, 9.0, (128, 1, 1), (32, 16, 1), 32, 16, 50)])
                r.kop("aten::eq", kernels=[ew("at::native::CompareEqFunctor<long>", 2.1, 3, 1)])
                r.kop("aten::sum", kernels=[K(SUM, 4.0, (1, 1, 1), (32, 16, 1), 32, 16, 3)])
                r.item()  # correct += (outputs.argmax(1) == labels).sum().item()
                r.to_host(128 * 1000 * 4)  # all_outputs.append(outputs.detach().cpu())
                for name, t in (("aten::softmax", 2_600.0), ("aten::topk", 3_900.0), ("aten::bincount", 1_400.0),
                                ("aten::index_put_", 900.0)):  # top-5 accuracy and a confusion matrix, on the CPU
                    with r.ops(name, cost=t, gap=40.0):
                        pass
        yield from ()

    run_job([r], program)
    return {"resnet50_pageable.pt.trace.json.gz": r}


def loader_ready(steps: int, first: int, per_batch: float, offset: float) -> list[int]:
    """When each batch of two DataLoader workers is ready (ns): they alternate, each taking per_batch µs a batch;
    the first two were prefetched before the profiled steps."""
    ready = [first - us(15_000.0), first - us(15_000.0 - offset)]
    while len(ready) < steps:
        ready.append(ready[-2] + us(per_batch))
    return ready


def scn_dataloader_stall() -> dict[str, Rank]:
    """ResNet-18 trained at batch 128 with AMP on one A100; two DataLoader workers decode and augment JPEGs at
    ~92 ms a batch, for steps that compute in ~30 ms: the batches arrive in pairs, and every other step waits."""
    model = resnet(1.6, depth=18)
    r = Rank(0, seed=41, cost=18.0, gap=14.0)
    ready = loader_ready(8, r.now, 92_000.0, 7_000.0)

    def program(r: Rank) -> Generator[Collective, int, None]:
        for i, n in enumerate(range(2, 10)):
            with r.step(n):
                r.next_batch(max(0.0, (ready[i] - r.now) / 1000))
                r.to_device(128 * 3 * 224 * 224 * 2, pageable=False)
                r.to_device(128 * 8)
                model.forward(r)
                model.backward(r)
                model.sgd(r)
                r.item()  # running_loss += loss.item()
        yield from ()

    run_job([r], program)
    return {"resnet18_loader.pt.trace.json.gz": r}


def scn_warm_up() -> dict[str, Rank]:
    """ResNet-18 at batch 64 profiled from its first iteration (schedule(wait=0, warmup=0, active=5)): the first
    step creates the cuDNN and cuBLAS handles in its first convolution and matrix multiply, loads every kernel's
    module on its first launch (CUDA lazy loading) and grows the caching allocator with cudaMalloc; the four steps
    after it take ~20 ms each. The loop reads the loss every 50 steps, so no step synchronises."""
    model = resnet(1.0, depth=18)
    r = Rank(0, seed=53, cost=18.0, gap=14.0, cold=set(),
             first_call={"aten::cudnn_convolution": 310_000.0, "aten::addmm": 42_000.0})

    def program(r: Rank) -> Generator[Collective, int, None]:
        for n in range(5):
            with r.step(n):
                r.next_batch(180.0 if n else 2_400.0, workers=n > 0)
                if n == 0:
                    for size in (2.1, 0.6, 1.4, 0.9, 2.6, 0.5, 1.1, 0.8):
                        r.call("cudaMalloc", 1_000.0 * size)
                r.to_device(64 * 3 * 224 * 224 * 4)
                r.to_device(64 * 8)
                model.forward(r)
                if n == 0:
                    for size in (1.8, 0.7, 1.2):
                        r.call("cudaMalloc", 1_000.0 * size)
                model.backward(r)
                model.sgd(r)
                r.kop("aten::add_", kernels=[ew(ADD, 1.6, 3, 1)])  # running_loss += loss.detach()
            r.cold = None
        yield from ()

    run_job([r], program)
    return {"resnet18_first_steps.pt.trace.json.gz": r}


def decode_kernels(layers: int) -> list[K]:
    """One decoded token of a 1.3 B-parameter Llama-style model (d 2048, fp16, batch 1), compiled: matrix-vector
    products with few blocks, fused Triton norms and activations, split-KV flash decoding."""
    def gv(t: float, grid: int) -> K:
        return K(GEMV, t, (grid, 1, 1), (128, 1, 1), 62, 0, 6)

    def tr(name: str, t: float, block: int = 256, occ: int = 3) -> K:
        return K(name, t, (1, 1, 1), (block, 1, 1), 24, 0, occ)

    per_layer = [tr("triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_0", 3.2), gv(28.0, 96),
                 tr("triton_poi_fused_add_cat_mul_1", 2.1, 128), K(FLASH_DECODE, 8.4, (1, 16, 8), (128, 1, 1), 255,
                                                                   49152, 12),
                 gv(11.0, 64), tr("triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_2", 3.4), gv(50.0, 176),
                 tr("triton_poi_fused_mul_silu_3", 2.6, 512, 6), gv(26.0, 64)]
    head = [tr("triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_4", 3.3), gv(142.0, 250),
            tr("triton_red_fused_argmax_5", 6.1, 1024, 12)]
    return [k for _ in range(layers) for k in per_layer] + head


def scn_low_occupancy() -> dict[str, Rank]:
    """Token-by-token generation with a 1.3 B model compiled with torch.compile(mode="reduce-overhead"): each token
    is one CUDA-graph replay of ~220 kernels, most of them matrix-vector products that fill a few of the 108 SMs."""
    r = Rank(0, seed=61, cost=10.0, gap=6.0)
    kernels = decode_kernels(24)

    def program(r: Rank) -> Generator[Collective, int, None]:
        for n in range(3, 9):
            with r.step(n):
                with r.ops("aten::copy_", cost=3.0, gap=2.0):
                    r.copy(8, "DtoD")  # the new token into the graph's static input
                with r.ops("aten::copy_", cost=3.0, gap=2.0):
                    r.copy(8, "DtoD")  # its position
                with r.mark("Torch-Compiled Region: 0/1"), r.ops("CompiledFunction", cost=9.0, gap=3.0):
                    r.graph(kernels)
                r.kop("aten::eq", kernels=[ew("at::native::CompareEqFunctor<long>", 1.8, 3, 1)], cost=8.0)
                r.kop("aten::max", kernels=[K(SUM, 2.6, (1, 1, 1), (32, 16, 1), 32, 16, 3)], cost=8.0)
                r.item()  # stopping criteria: unfinished_sequences.max() == 0
                r.idle(55.0)  # logits processors and bookkeeping in Python
        yield from ()

    run_job([r], program)
    return {"llm_decode_graphs.pt.trace.json.gz": r}


def small_transformer() -> Transformer:
    return Transformer(6, ln=3.0, qkv=10.0, attn=10.0, proj=5.0, fc=12.0, ew=2.5, head=60.0, rows=512)


def compiled_kernels(m: Transformer) -> tuple[list[K], list[K]]:
    """The same model under torch.compile: Inductor's fused Triton kernels around the matrix multiplies and
    attention (residual adds folded into the norms, bias gradients into reductions)."""
    def tr(name: str, t: float, grid: int = 512) -> K:
        return K(name, t, (grid, 1, 1), (256, 1, 1), 28, 0, 100)

    fwd, bwd = [tr("triton_poi_fused_embedding_0", m.ew)], []
    for i in range(m.layers):
        fwd += [tr(f"triton_per_fused_add_native_layer_norm_{2 * i + 1}", m.ln * 1.2), gemm(m.qkv),
                K(FLASH, m.attn, (8, 12, 4), (128, 1, 1), 255, 49152, 25), gemm(m.proj, "64x64_32x6", occ=37),
                tr(f"triton_per_fused_add_native_layer_norm_{2 * i + 2}", m.ln * 1.3),
                gemm(m.fc, "256x128_32x3"), tr(f"triton_poi_fused_gelu_{i}", m.ew * 1.4), gemm(m.fc, "256x128_32x3")]
        bwd += [gemm(m.fc, "128x128_32x3", "nn"), gemm(m.fc, "128x128_32x3", "nt"),
                tr(f"triton_red_fused_gelu_backward_sum_{i}", m.ew * 2.2, 64), gemm(m.fc, "128x128_32x3", "nn"),
                gemm(m.fc, "128x128_32x3", "nt"), tr(f"triton_red_fused_native_layer_norm_backward_{i}", m.ln * 2.0),
                gemm(m.proj, "128x128_32x3", "nn"), gemm(m.proj, "128x128_32x3", "nt"),
                tr(f"triton_red_fused_sum_{i}", m.ew * 0.9, 64),
                K(FLASH_BWD, m.attn * 2.6, (8, 12, 4), (256, 1, 1), 255, 98304, 25),
                gemm(m.qkv, "128x128_32x3", "nn"), gemm(m.qkv, "128x128_32x3", "nt"),
                tr(f"triton_red_fused_add_native_layer_norm_backward_sum_{i}", m.ln * 2.3)]
    fwd += [tr("triton_per_fused_native_layer_norm_13", m.ln), gemm(m.head, "256x128_32x3", "nt"),
            tr("triton_red_fused__log_softmax_nll_loss_forward_14", m.ew * 2.2, 64)]
    bwd = [tr("triton_red_fused__log_softmax_backward_data_nll_loss_backward_0", m.ew * 2.6, 64),
           gemm(m.head, "256x128_32x3", "nn"), gemm(m.head, "256x128_32x3", "tn")] + bwd + \
          [tr("triton_poi_fused_embedding_dense_backward_15", m.ew * 3)]
    return fwd, bwd


def scn_before_after() -> dict[str, Rank]:
    """A 6-layer transformer (d 512, 19 M parameters) trained at batch 4 × 128 tokens on one A100: eager (before)
    and compiled with torch.compile(mode="reduce-overhead") plus AdamW(fused=True) (after), same batches."""
    m = small_transformer()
    before = Rank(0, seed=71, cost=10.0, gap=8.0, launch_us=7.0)
    after = Rank(0, seed=72, cost=10.0, gap=8.0, launch_us=7.0)
    fwd, bwd = compiled_kernels(m)

    def eager(r: Rank) -> Generator[Collective, int, None]:
        for n in range(2, 7):
            yield from training_step(r, n, m, 4 * 128 * 8)

    def compiled(r: Rank) -> Generator[Collective, int, None]:
        for n in range(2, 7):
            with r.step(n):
                r.next_batch(20.0)
                r.to_device(4 * 128 * 8)
                r.to_device(4 * 128 * 8)
                with r.mark("Torch-Compiled Region: 0/0"), r.ops("CompiledFunction", cost=24.0, gap=4.0):
                    for _ in range(2):  # cudagraph trees copy the inputs into the graph's static buffers
                        with r.ops("aten::copy_", cost=3.0, gap=1.0):
                            r.copy(4 * 128 * 8, "DtoD")
                    r.graph(fwd)
                r.kop("aten::ones_like", "aten::fill_", kernels=[ew(FILL, 1.5, 1, 1)], cost=6.0, gap=3.0)
                with r.ops("autograd::engine::evaluate_function: CompiledFunctionBackward",
                           "CompiledFunctionBackward", tid=r.autograd, cost=20.0, gap=3.0):
                    r.graph(bwd)
                adamw(r, 30.0, fused=True)
                r.item()
        yield from ()

    run_job([before], eager)
    run_job([after], compiled)
    return {"before.pt.trace.json.gz": before, "after.pt.trace.json.gz": after}


def inference_step(r: Rank, n: int, model: ConvNet, batch: int, wait: float) -> None:
    with r.step(n):
        r.next_batch(wait)
        r.to_device(batch * 3 * 224 * 224 * 2)
        with r.ops("aten::to", "aten::_to_copy", cost=8.0):  # .half() on the device
            r.launch(ew("at::native::(anonymous namespace)::direct_copy_kernel_cuda(at::TensorIteratorBase&)::"
                        "{lambda()#3}::operator()() const::{lambda()#10}::operator()() const::{lambda(float)#1}",
                        90.0, 2, 6272))
        model.forward(r, with_loss=False)
        r.kop("aten::argmax", kernels=[K(SUM, 9.0, (256, 1, 1), (32, 16, 1), 32, 16, 50)])
        r.to_host(batch * 8)
        with r.ops("aten::detach", cost=20.0):  # preds.detach().numpy(), then written out on the CPU
            pass
        r.idle(140.0)


def scn_straggler_ranks(throttle: float = 1.3, starved: float = 6_000.0) -> dict[str, Rank]:
    """Offline inference of a ResNet-50 at batch 256 (fp16) sharded over four A100s (DistributedSampler; no
    collective in the profiled steps). Rank 2's GPU is throttled (its kernels take `throttle` ×); rank 3 reads its
    shard from slower storage (its DataLoader waits `starved` µs a batch; the others 150 µs)."""
    model = resnet(2.0)
    ranks = [Rank(i, seed=83, world=4, gpus_per_node=4, cost=18.0, gap=14.0, slow=throttle if i == 2 else 1.0)
             for i in range(4)]

    def program(r: Rank) -> Generator[Collective, int, None]:
        for n in range(2, 8):
            inference_step(r, n, model, 256, starved if r.rank == 3 else 150.0)
        yield from ()

    run_job(ranks, program)
    return {f"rank{r.rank}.pt.trace.json.gz": r for r in ranks}


def scn_ddp_imbalance() -> dict[str, Rank]:
    """GPT-2 small trained with DistributedDataParallel on two A100s in two nodes (400 Gb/s InfiniBand): the
    sequences are packed without balancing, so rank 0's batches hold ~35 % more tokens; rank 1 waits for it in
    every gradient all-reduce. Rank 0 also logs the loss (SummaryWriter) after each step."""
    model = Transformer(12, ln=26.0, qkv=150.0, attn=125.0, proj=52.0, fc=200.0, ew=34.0, head=2900.0, rows=8192)
    params, buckets = 124_439_808, 6
    ranks = [Rank(i, seed=97, world=2, ranks_per_node=1, cost=14.0, gap=10.0, slow=1.35 if i == 0 else 1.0)
             for i in range(2)]

    def program(r: Rank) -> Generator[Collective, int, None]:
        for n in range(4, 9):
            with r.step(n):
                r.next_batch(40.0)
                r.to_device(8 * 1024 * 8)
                r.to_device(8 * 1024 * 8)
                with r.mark("DistributedDataParallel.forward", gpu=True):
                    model.forward(r)
                ends: list[int] = []

                def bucket(layer: int, ends: list[int] = ends) -> Generator[Collective, int, None]:
                    if layer % 2 == 0:  # a bucket's gradients are ready: the reducer all-reduces it
                        ends.append((yield from r.all_reduce(params // buckets, busbw=45.0, tid=r.autograd)))

                yield from model.backward(r, bucket)
                with r.ops("record_param_comms", cost=3.0, gap=2.0):  # finalize_backward: work.wait()
                    r.wait_for(COMPUTE, max(ends))
                r.host[-1]["args"].update(WAIT_ARGS)
                adamw(r, 105.0, fused=True)
                r.item()
                if r.rank == 0:
                    r.idle(850.0)  # writer.add_scalar("loss", loss, step)

    run_job(ranks, program)
    return {f"rank{r.rank}.pt.trace.json.gz": r for r in ranks}


# ---------------------------------------------------------------------------------------------
# writing a rank's trace as Kineto does


def _us(ns: int) -> float:
    return ns / 1000


def _event(e: dict) -> dict:
    out = dict(e)
    out["ts"] = _us(e["ts"])
    if "dur" in e:
        out["dur"] = _us(e["dur"])
    return out


def kineto(r: Rank, trace_name: str) -> bytes:
    """The rank's trace as Kineto writes it: host events first (Ev Idx in order), then the activities with their
    flows, the device-side annotations, the metadata events and the profiler's own span."""
    host = sorted(r.host, key=lambda e: (e["ts"], -e["dur"]))
    for i, e in enumerate(host):
        e["args"]["Ev Idx"] = i
    start = us(CLOCK0_US)
    end = max(max(e["ts"] + e["dur"] for e in host), max(e["ts"] + e.get("dur", 0) for e in r.activity))
    threads = {r.main: "python3.10", **({r.autograd: "pt_autograd_0"} if any(e["tid"] == r.autograd for e in host)
                                        else {})}
    streams = sorted({e["tid"] for e in r.activity if e.get("pid") == r.device and e["ph"] == "X"})
    meta = []
    for pid, label, index in [(r.pid, "CPU", r.pid)] + [(d, f"GPU {d}", 16777216 + d) for d in range(r.gpus_per_node)]:
        meta += [{"name": "process_name", "ph": "M", "ts": start, "pid": pid, "tid": 0, "args": {"name": "python3.10"}},
                 {"name": "process_labels", "ph": "M", "ts": start, "pid": pid, "tid": 0, "args": {"labels": label}},
                 {"name": "process_sort_index", "ph": "M", "ts": start, "pid": pid, "tid": 0,
                  "args": {"sort_index": index}}]
    for s in streams:
        meta += [{"name": "thread_name", "ph": "M", "ts": start, "pid": r.device, "tid": s,
                  "args": {"name": f"stream {s} "}},
                 {"name": "thread_sort_index", "ph": "M", "ts": start, "pid": r.device, "tid": s,
                  "args": {"sort_index": s}}]
    for tid, name in threads.items():
        meta += [{"name": "thread_name", "ph": "M", "ts": start, "pid": r.pid, "tid": tid,
                  "args": {"name": f"thread {tid} ({name})"}},
                 {"name": "thread_sort_index", "ph": "M", "ts": start, "pid": r.pid, "tid": tid,
                  "args": {"sort_index": tid}}]
    tail = [{"ph": "X", "cat": "Trace", "ts": start, "dur": end + us(2_000.0) - start, "pid": "Spans",
             "tid": "PyTorch Profiler", "name": "PyTorch Profiler (0)", "args": {"Op count": 0}},
            {"name": "process_sort_index", "ph": "M", "ts": start, "pid": "Spans", "tid": 0,
             "args": {"sort_index": 536870912}},
            {"name": "Iteration Start: PyTorch Profiler", "ph": "i", "s": "g", "pid": "Traces",
             "tid": "Trace PyTorch Profiler", "ts": start},
            {"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "", "ts": end + us(2_500.0)}]
    events = [*host, *r.activity, *r.marks, *meta, *tail]
    props = [{"id": d, **A100, "name": r.device_name} for d in range(r.gpus_per_node)]
    head = ['  "schemaVersion": 1,', f'  "deviceProperties": {json.dumps(props)},']
    if r.world > 1:
        groups = (Group("0", "default_pg", tuple(range(r.world)), 0.0), *r.groups)
        info = {"backend": "nccl", "rank": r.rank, "world_size": r.world, "pg_count": len(groups),
                "pg_config": [{"pg_name": g.name, "pg_desc": g.desc, "backend_config": "cuda:nccl",
                               "pg_size": len(g.ranks), "ranks": list(g.ranks)} for g in groups],
                "nccl_version": "2.19.3"}
        head.append(f'  "distributedInfo": {json.dumps(info)},')
    head.append('  "cuda_runtime_version": 12010,')
    body = ",\n  ".join(json.dumps(_event(e) if "ts" in e else e) for e in events)
    text = "{\n" + "\n".join(head) + '\n  "traceEvents": [\n  ' + body + "\n],\n" + \
           f'  "traceName": {json.dumps(trace_name)},\n  "displayTimeUnit": "ms",\n' + \
           f'  "baseTimeNanoseconds": {BASE_NS}\n}}\n'
    return gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)


def scn_tp_slow_link() -> dict[str, Rank]:
    """Two replicas of a 7 B-parameter model served with tensor parallelism 2 on one node of four A100 PCIe cards
    (prefill of 8 × 512 tokens, bf16): ranks 0-1 and 2-3 each form a tensor-parallel group, every layer all-reduces
    its attention and MLP outputs in the group. The NVLink bridge of GPUs 2 and 3 is missing, so their all-reduces
    go over PCIe; the replicas share no collective, so replica 2-3 simply runs slower."""
    pairs = (Group("1", "tp_group_0", (0, 1), 190.0), Group("2", "tp_group_1", (2, 3), 20.0))
    model = Transformer(32, ln=40.0, qkv=310.0, attn=260.0, proj=105.0, fc=0.0, ew=52.0, head=1_150.0, rows=4096)
    ranks = [Rank(i, seed=101, world=4, gpus_per_node=4, cost=14.0, gap=10.0, device_name="NVIDIA A100 80GB PCIe",
                  groups=pairs) for i in range(4)]
    activations = 8 * 512 * 4096  # bf16 elements all-reduced after attention and after the MLP

    def program(r: Rank) -> Generator[Collective, int, None]:
        group = pairs[r.rank // 2]
        for n in range(2, 6):
            with r.step(n):
                r.next_batch(60.0)
                r.to_device(8 * 512 * 8)
                r.kop("aten::embedding", "aten::index_select", kernels=[ew(ADD, 45.0, 3, 4096)])
                for _ in range(model.layers):
                    r.kop("aten::layer_norm", "aten::native_layer_norm", kernels=[model.norm()])
                    r.kop("aten::linear", "aten::mm", kernels=[gemm(model.qkv)])
                    r.kop("aten::scaled_dot_product_attention", "aten::_scaled_dot_product_flash_attention",
                          "aten::_flash_attention_forward",
                          kernels=[K(FLASH, model.attn, (8, 16, 8), (128, 1, 1), 255, 49152, 25)])
                    r.kop("aten::linear", "aten::mm", kernels=[gemm(model.proj, "64x64_32x6", occ=37)])
                    yield from r.all_reduce(activations, group=group, bf16=True)
                    r.kop("aten::add", kernels=[ew(ADD, model.ew)], after=r.free[NCCL])
                    r.kop("aten::layer_norm", "aten::native_layer_norm", kernels=[model.norm()])
                    r.kop("aten::linear", "aten::mm", kernels=[gemm(520.0, "256x128_32x3")])
                    r.kop("aten::silu", kernels=[ew(GELU, model.ew * 1.5, 2)])
                    r.kop("aten::mul", kernels=[ew(MUL, model.ew * 1.2)])
                    r.kop("aten::linear", "aten::mm", kernels=[gemm(265.0, "256x128_32x3")])
                    yield from r.all_reduce(activations, group=group, bf16=True)
                    r.kop("aten::add", kernels=[ew(ADD, model.ew)], after=r.free[NCCL])
                r.kop("aten::linear", "aten::mm", kernels=[gemm(model.head, "256x128_32x3", "nt")])
                r.kop("aten::argmax", kernels=[K(SUM, 12.0, (8, 1, 1), (32, 16, 1), 32, 16, 50)])
                r.to_host(8 * 8)

    run_job(ranks, program)
    return {f"rank{r.rank}.pt.trace.json.gz": r for r in ranks}


# folder -> builder
SCENARIOS: dict[str, Callable[[], dict[str, Rank]]] = {
    "torch_host_bound": scn_host_bound, "torch_exposed_allreduce": scn_exposed_allreduce,
    "torch_blocking_copy": scn_blocking_copy, "torch_dataloader_stall": scn_dataloader_stall,
    "torch_warm_up": scn_warm_up, "torch_low_occupancy": scn_low_occupancy, "torch_before_after": scn_before_after,
    "torch_straggler_ranks": scn_straggler_ranks, "torch_ddp_imbalance": scn_ddp_imbalance,
    "torch_tp_slow_link": scn_tp_slow_link,
}
# What advisor finds above info on each sample (input in its folder, `.` the folder; --entry or None): the rules
# each is built to fire, no more and no fewer (tests/profilers/torch/test_samples_generated.py). Every rule of
# rules/torch fires on one sample here, trace-coverage on samples/torch_cpu_only.
FIRES: tuple[tuple[str, str, str | None, tuple[str, ...]], ...] = (
    ("torch_host_bound", "host_bound.pt.trace.json.gz", None, ("host-bound", "launch-overhead")),
    ("torch_exposed_allreduce", "rank0_of8.pt.trace.json.gz", None, ("exposed-communication",)),
    ("torch_blocking_copy", "resnet50_pageable.pt.trace.json.gz", None,
     ("blocking-copy", "memory-ops-dominant")),
    ("torch_dataloader_stall", "resnet18_loader.pt.trace.json.gz", None,
     ("dataloader-stall", "host-bound")),
    ("torch_warm_up", "resnet18_first_steps.pt.trace.json.gz", None,
     ("warm-up-dominated", "host-bound", "step-time-variance")),
    ("torch_low_occupancy", "llm_decode_graphs.pt.trace.json.gz", None, ("low-occupancy-kernels", "device-bound")),
    ("torch_before_after", "before.pt.trace.json.gz", None, ("host-bound", "launch-overhead")),
    ("torch_before_after", "after.pt.trace.json.gz", None, ("sync-in-step",)),
    ("torch_straggler_ranks", ".", None, ("straggler-rank", "straggler-rank-device", "device-bound")),
    ("torch_straggler_ranks", ".", "3", ("straggler-rank", "straggler-rank-host", "dataloader-stall")),
    ("torch_ddp_imbalance", ".", None, ("rank-compute-imbalance", "device-bound")),
    ("torch_tp_slow_link", ".", None, ("straggler-rank", "straggler-rank-comm", "exposed-communication")),
)


def write(folder: str, out: Path) -> list[Path]:
    builder = SCENARIOS[folder]
    target = out / folder
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for name, rank in builder().items():
        path = target / name
        path.write_bytes(kineto(rank, f"traces/{folder.removeprefix('torch_')}/{name.removesuffix('.gz')}"))
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--list", action="store_true", help="list the scenarios and the rules each is built to fire")
    ap.add_argument("--only", action="append", choices=sorted(SCENARIOS), help="only this folder (repeatable)")
    ap.add_argument("--out", type=Path, default=HERE, help="where the folders go (default: samples/)")
    args = ap.parse_args(argv)
    if args.list:
        for folder, name, entry, fired in FIRES:
            print(f"{folder}/{name}" + (f" --entry {entry}" if entry else "") + f": {', '.join(fired)}")
        return
    for folder in args.only or SCENARIOS:
        for path in write(folder, args.out):
            print(f"{path} ({path.stat().st_size / 1024:,.0f} KiB)")


if __name__ == "__main__":
    main()
