"""AWS Neuron (Trainium, Inferentia): neuron-profile and neuron-explorer output."""

from pathlib import Path

from advisor.kinds.base import ProfileKind

KIND = ProfileKind(
    name="neuron",
    title="AWS Neuron",
    formats="summary-json, summary-text, full JSON trace, Neuron Explorer Parquet folder, .ntff capture, "
            "folder of profile_rank_<i> files",
    package=__name__,
    folder=Path(__file__).parent / "data",
)
