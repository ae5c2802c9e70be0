"""Codes numbered in order of first appearance (so a table does not depend on how the file was split for
decoding), equal labels merged: the tracks' labels (`label_codes`) and the slices' names (`name_codes`, over
the reader's compressed name table, with no str per name). Equal values are found by hash, a dict used only on
a true collision."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from advisor.core.events import Codes, code_type, first_rows, int32_if_fits
from advisor.inputs.perfetto.names import Names, NameTable


def label_codes(values: Any, labels: list[str]) -> Codes:
    """`values` (codes into `labels`) recoded in order of first appearance, equal labels merged."""
    import numpy as np

    n = len(values)
    if not n:
        return Codes(np.zeros(0, np.int32), ())
    first = first_rows(values, len(labels))
    used = np.flatnonzero(first < n)
    order = used[np.argsort(first[used], kind="stable")]  # the values present, in order of first appearance
    del first
    texts = [labels[int(i)] for i in order]
    merged, ordered = _merge(texts)
    rank = np.zeros(len(labels), code_type(len(ordered)))
    rank[order] = merged
    return Codes(rank[values], ordered)  # as narrow as the labels allow (a few tracks: a byte a slice)


def name_codes(raw: Any, table: NameTable) -> Codes:
    """Slice names (raw codes into the reader's compressed table) as codes numbered in order of first
    appearance into a `Names` over that same table: no str per name and no copy of the text (a trace can
    hold millions of distinct names). Equal names get one code, the first one's. The common trace (every
    name used, first used in table order, all distinct) costs one sort of the hashes and no index."""
    import numpy as np

    table.freeze()
    n, count = len(raw), len(table)
    first = first_rows(raw, count)  # each code's first slice
    order = None  # raw codes slices use in order of first appearance; None: all of them, in table order
    if not (bool((first < n).all()) and bool((first[1:] > first[:-1]).all())):
        used = np.flatnonzero(first < n)  # raw codes slices use, ascending (= table order)
        order = int32_if_fits(used[np.argsort(first[used], kind="stable")])  # ... in order of first appearance
        del used
    del first
    hashes = table.hashes()
    if order is not None:
        hashes = hashes[order]
    same = _first_equal(hashes, table.text if order is None else lambda i: table.text(int(order[i])))
    del hashes
    if same is None and order is None:  # the codes are the raw codes
        return Codes(raw, Names(table))
    merged, keep = _ranks(same, count if order is None else len(order))
    if order is None:
        codes = merged[raw]
        index = keep
    else:
        rank = np.zeros(count, dtype=np.int32)
        rank[order] = merged
        del merged
        codes = rank[raw]
        index = order if keep is None else order[keep]
    return Codes(codes, Names(table, None if index is None else int32_if_fits(index)))


def _first_equal(hashes: Any, key: Callable[[int], Hashable]) -> Any:
    """For each item, the index of the first item equal to it (key(i) is its value); None when all
    are distinct. By hash: all distinct (the common case: a command name carries its sequence number)
    costs one sort of the hashes; equal hashes are checked for equal values, and a dict is used only on
    a true collision."""
    import numpy as np

    count = len(hashes)
    ordered = np.sort(hashes)
    distinct = not bool((ordered[1:] == ordered[:-1]).any())
    del ordered
    if distinct:
        return None
    index = np.arange(count)
    order = np.argsort(hashes, kind="stable")
    hashes = hashes[order]
    same = np.flatnonzero(hashes[1:] == hashes[:-1])
    del hashes
    # each item points at the first item with its hash: runs of equal hashes in the (stable) sort start
    # with the one that appeared first
    starts = np.ones(count, dtype=bool)
    starts[same + 1] = False
    head = np.flatnonzero(starts)[np.cumsum(starts) - 1]
    first = np.empty(count, dtype=np.int64)
    first[order] = order[head]
    repeats = np.flatnonzero(first != index)
    if any(key(i) != key(j) for i, j in zip(repeats.tolist(), first[repeats].tolist(), strict=True)):
        seen: dict[Hashable, int] = {}  # a true hash collision: by value
        first = np.fromiter((seen.setdefault(key(i), i) for i in range(count)), dtype=np.int64, count=count)
        return None if bool((first == index).all()) else first
    return first


def _ranks(first: Any, count: int) -> tuple[Any, Any]:
    """Codes from `_first_equal` (numbered by first appearance), and the indices of the distinct items
    (None: all of them)."""
    import numpy as np

    if first is None:
        return np.arange(count, dtype=np.int32), None
    keep = first == np.arange(len(first))
    rank = np.cumsum(keep) - 1
    return rank[first].astype(np.int32), np.flatnonzero(keep)


def _merge(texts: list[str]) -> tuple[Any, tuple[str, ...]]:
    """Codes of `texts` with equal texts merged (first appearance first), and the distinct texts."""
    import numpy as np

    hashes = np.fromiter(map(hash, texts), dtype=np.int64, count=len(texts))
    codes, keep = _ranks(_first_equal(hashes, texts.__getitem__), len(texts))
    return codes, tuple(texts) if keep is None else tuple(texts[i] for i in keep.tolist())
