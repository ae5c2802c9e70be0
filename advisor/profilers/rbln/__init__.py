"""Rebellions RBLN profiler: Perfetto protobuf traces (.pb, .pftrace) of every command the NPU ran
(ATOM and Rebel100), and folders of per-rank traces."""

from pathlib import Path

from advisor.kinds.base import ProfileKind

KIND = ProfileKind(
    name="rbln",
    title="Rebellions RBLN profiler",
    formats="Perfetto trace (.pb, .pftrace; gzip too) written by the RBLN profiler, folder of per-rank traces",
    package=__name__,
    folder=Path(__file__).parent / "data",
)
