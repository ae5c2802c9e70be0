"""What the reader could and could not take from a trace, for the report's data-quality section and
rule RBL000 (read by attribute from `EventTrace.extra["quality"]` and `extra["tracks"]`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TrackInfo:
    """One timeline row: its display path (`rbln0 / Chiplet 2 / Neural DMA`), the category key it was
    given (tracks.yaml; `other` when no pattern matched), its device and chiplet labels ("" when in no
    chiplet group) and how many slices it holds."""

    name: str
    category: str
    device: str
    chiplet: str
    slices: int


@dataclass(frozen=True)
class ReadQuality:
    """Counts of what was read, left out or interpreted."""

    packets: int = 0  # packets decoded (those inside compressed_packets included)
    slices: int = 0  # slices in the tables (closed or not)
    instants: int = 0  # instant events: counted, not slices
    unclosed_begins: int = 0  # BEGINs never ended: in the tables with a NaN duration
    unmatched_ends: int = 0  # ENDs with no open slice on their track: dropped
    dropped_packets: int = 0  # needed interned data a never-cleared sequence lacks, or an unknown iid
    unknown_tracks: tuple[str, ...] = ()  # display paths of the tracks in category `other`
    truncated: bool = False
    truncated_at: int | None = None  # byte offset (of the decompressed data for gzip) where reading stopped
    gzip: bool = False
    compressed_packets: int = 0  # compressed_packets containers inflated
    skipped_packets: int = 0  # undecodable packets (and compressed containers that would not inflate)
    clock_note: str = ""  # how timestamps were converted, "" when they are plain ns
