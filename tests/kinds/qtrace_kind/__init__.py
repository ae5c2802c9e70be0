"""qtrace: a made-up GPU queue tracer's CSV, the worked example of docs/writing-a-kind.md (a fifth kind with an
event trace, written from the docs alone: its files are quoted there, and tests/kinds/test_qtrace_kind.py runs
it end to end through an entry point)."""

from pathlib import Path

from advisor.kinds.base import ProfileKind

KIND = ProfileKind(
    name="qtrace",
    title="qtrace",
    formats="qtrace CSV (first line `qtrace,1`)",
    package=__name__,
    folder=Path(__file__).parent / "data",
    packs=(Path(__file__).parent / "rules",),
)
