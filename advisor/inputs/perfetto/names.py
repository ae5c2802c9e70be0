"""Event names kept compressed. A trace can hold millions of distinct names (an RBLN command name carries
its call's sequence number): as a str each they cost ~80 bytes more than their text, and even their UTF-8
text is most of what the analysis keeps (143 MB of a 500 MB trace). Names are mostly the same words, so
they are kept as zlib blocks of UTF-8 (~10× smaller on command names; ≈ 450 MB/s to write, ≈ 900 MB/s to
read), written by the reader's workers, and a name becomes a str only when read: one block is inflated
for it (kept for the next names), a slice of names inflates each block it touches once.

`NameTable` is the reader's table in order of appearance (raw codes); `Names` is the `Sequence[str]`
the event tables use: the table itself, or a selection of it in another order (codes by first use,
equal names merged)."""

from __future__ import annotations

import zlib
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Sequence
from typing import Any, overload

from advisor.core.events import chunks

BLOCK = 1 << 16  # bytes of text in a block (whole names: a longer name is a block of its own)
LEVEL = 1  # zlib's fastest level: as small as level 6 within 30 % on command names, six times faster
KEPT_BLOCKS = 4  # inflated blocks a table keeps for single reads (names read in about their order)


class NameTable:
    """Names by raw code: UTF-8 text in zlib blocks, and where each name ends in the text (its start is
    where the previous one ends). Blocks end at name ends. Filled by `add` (a range's names, in a worker)
    and `extend` (ranges in file order); read by `text` and `hashes` once complete."""

    def __init__(self) -> None:
        self.blocks: list[bytes] = []
        self.block_starts = array("q")  # offset in the text of each block's first byte
        self.ends: Any = array("q")  # end offset of each name; `freeze` makes it numpy (int32 when it fits)
        self.size = 0  # bytes of text
        self._kept: dict[int, bytes] = {}

    def __len__(self) -> int:
        return len(self.ends)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_kept": {}}  # sent from a worker without its inflated blocks

    def add(self, texts: Sequence[str]) -> None:
        """Names appended, compressed a block at a time."""
        pos = 0
        encoded = [t.encode("utf-8", "surrogatepass") for t in texts]
        base, ends = self.size, array("q")
        for e in encoded:
            pos += len(e)
            ends.append(pos)
        blob = b"".join(encoded)
        del encoded
        at = 0
        while at < len(blob):
            j = bisect_left(ends, at + BLOCK)  # the first name that reaches the block's size ends it
            stop = ends[j] if j < len(ends) else len(blob)
            self.blocks.append(zlib.compress(blob[at:stop], LEVEL))
            self.block_starts.append(base + at)
            at = stop
        if base:
            ends = array("q", (base + e for e in ends))
        self.ends.extend(ends)
        self.size += len(blob)

    def add_empty(self) -> None:
        self.ends.append(self.size)

    def extend(self, other: NameTable) -> None:
        """Another table's names after these (its blocks as they are)."""
        import numpy as np

        shift = self.size
        self.blocks.extend(other.blocks)
        for values, into in ((other.block_starts, self.block_starts), (other.ends, self.ends)):
            if len(values):
                into.frombytes((np.frombuffer(values, dtype=np.int64) + shift).tobytes())
        self.size += other.size

    def freeze(self) -> None:
        """Complete: the ends as numpy (int32 when the text is under 2 GiB)."""
        import numpy as np

        ends = np.frombuffer(self.ends, dtype=np.int64) if isinstance(self.ends, array) else self.ends
        self.ends = ends.astype(np.int32) if self.size < 2**31 else ends.copy()

    def _block(self, k: int) -> bytes:
        kept = self._kept
        found = kept.get(k)
        if found is None:
            if len(kept) >= KEPT_BLOCKS:
                del kept[next(iter(kept))]
            found = kept[k] = zlib.decompress(self.blocks[k])
        return found

    def span(self, i: int) -> tuple[int, int]:
        return (int(self.ends[i - 1]) if i else 0), int(self.ends[i])

    def text(self, i: int) -> bytes:
        """Name i as UTF-8."""
        a, b = self.span(i)
        if a == b:
            return b""
        k = bisect_right(self.block_starts, a) - 1
        base = self.block_starts[k]
        return self._block(k)[a - base:b - base]

    def decode(self, raw: Any) -> list[str]:
        """The names of raw codes `raw` (a numpy array), each block inflated once."""
        import numpy as np

        if not len(raw):
            return []
        ends = self._ends()
        stops = ends[raw].astype(np.int64)
        starts = np.where(raw > 0, ends[np.maximum(raw - 1, 0)], 0).astype(np.int64)
        which = np.searchsorted(np.frombuffer(self.block_starts, dtype=np.int64), starts, side="right") - 1
        texts: dict[int, tuple[int, bytes, str | None]] = {}
        out = []
        for a, b, k in zip(starts.tolist(), stops.tolist(), which.tolist(), strict=True):
            if a == b:
                out.append("")
                continue
            found = texts.get(k)
            if found is None:
                data = zlib.decompress(self.blocks[k])
                found = texts[k] = (self.block_starts[k], data,
                                    data.decode("ascii") if data.isascii() else None)  # slice the str itself
            base, data, ascii_text = found
            out.append(ascii_text[a - base:b - base] if ascii_text is not None
                       else str(data[a - base:b - base], "utf-8", "surrogatepass"))
        return out

    def _ends(self) -> Any:
        import numpy as np

        return np.frombuffer(self.ends, dtype=np.int64) if isinstance(self.ends, array) else self.ends

    def hashes(self) -> Any:
        """hash() of each name's UTF-8 by raw code (int64), a block at a time: equal names hash equal."""
        import numpy as np

        ends = self._ends()
        starts = np.empty(len(ends), dtype=np.int64)
        starts[:1] = 0
        starts[1:] = ends[:-1]
        out = np.full(len(ends), hash(b""), dtype=np.int64)  # empty names, whichever block they sit at
        bounds = np.searchsorted(starts, [*self.block_starts, self.size], side="left")  # each block's names
        for k, blob in enumerate(self.blocks):
            base, first, last = self.block_starts[k], int(bounds[k]), int(bounds[k + 1])
            view = memoryview(zlib.decompress(blob))
            out[first:last] = [hash(bytes(view[x - base:y - base])) for x, y in
                               zip(starts[first:last].tolist(), ends[first:last].tolist(), strict=True)]
            view.release()
        return out


class Names(Sequence[str]):
    """A read-only `Sequence[str]` over a `NameTable`: item i is raw name `index[i]` (all of them, in order,
    without an index). Stands in for a tuple: equal to a tuple or Names of the same strings."""

    __slots__ = ("_index", "_table")

    def __init__(self, table: NameTable, index: Any = None) -> None:
        self._table = table
        self._index = index

    def __len__(self) -> int:
        return len(self._table) if self._index is None else len(self._index)

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        import numpy as np

        if isinstance(i, slice):
            picked = range(len(self))[i]
            raw = np.arange(picked.start, picked.stop, picked.step) if self._index is None else self._index[i]
            return self._table.decode(raw)
        n = len(self)
        if not -n <= i < n:
            raise IndexError("name index out of range")
        i = int(i) % n
        raw = i if self._index is None else int(self._index[i])
        return str(self._table.text(raw), "utf-8", "surrogatepass")

    def __iter__(self) -> Iterator[str]:
        for chunk in chunks(self):  # each block inflated once
            yield from chunk

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Names | tuple):
            return NotImplemented
        return len(other) == len(self) and all(mine == list(theirs)
                                               for mine, theirs in zip(chunks(self), chunks(other), strict=True))

    def __hash__(self) -> int:
        return hash(tuple(self))
