"""NVIDIA Nsight Compute (ncu): details/raw/--metrics CSV exports, the default text output, and
.ncu-rep reports (read with NVIDIA's `ncu_report` package, an optional extra)."""

from pathlib import Path

from advisor.kinds.base import ProfileKind

KIND = ProfileKind(
    name="ncu",
    title="NVIDIA Nsight Compute",
    formats="ncu --csv (--page details, --page raw, --metrics), ncu text output, .ncu-rep report",
    package=__name__,
    folder=Path(__file__).parent / "data",
)
