"""PyTorch profiler traces: Kineto Chrome-trace JSON (`*.pt.trace.json[.gz]`, one per rank) written by
`torch.profiler` on NVIDIA (CUDA), AMD (ROCm/HIP) and Meta MTIA devices, and folders of per-rank traces."""

from pathlib import Path

from advisor.kinds.base import ProfileKind

KIND = ProfileKind(
    name="torch",
    title="PyTorch profiler (Kineto)",
    formats="Kineto Chrome-trace JSON (*.pt.trace.json, plain or .gz) written by torch.profiler, folder of "
            "per-rank traces",
    package=__name__,
    folder=Path(__file__).parent / "data",
)
