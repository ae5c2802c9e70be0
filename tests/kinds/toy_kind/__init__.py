"""A made-up profiler, "toyprof", defined entirely inside the test tree: the proof that a new profile
kind is a folder (detection, one adapter, a conventions file, a hardware table, a one-rule pack and
one report section) and needs no change anywhere else."""

from pathlib import Path

from advisor.kinds.base import ProfileKind

KIND = ProfileKind(
    name="toy",
    title="Toy Profiler",
    formats="toyprof CSV (first line `toyprof,1`)",
    package=__name__,
    folder=Path(__file__).parent / "data",
    packs=(Path(__file__).parent / "rules",),
)
