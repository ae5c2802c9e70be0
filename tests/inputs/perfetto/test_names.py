"""Event names kept compressed (advisor/inputs/perfetto/names.py): a range's names become zlib blocks in the
worker, ranges join in file order, and a name becomes a str only when read, whatever its text."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from advisor.inputs.perfetto import names as packed
from advisor.inputs.perfetto.names import Names, NameTable

WORDS = ["0_host_preprocess_0", "", "1_fused(conv1+bn1+relu)_2", "Ünïcode ✓ 名前", "x" * 200_000,
         "bad \udcff surrogate", "1_layer1.0.conv2_7"]


def table(*ranges: list[str]) -> NameTable:
    """Ranges compressed apart (as workers do), then joined in order, with an empty name between them."""
    out = NameTable()
    for texts in ranges:
        part = NameTable()
        part.add(texts)
        out.extend(pickle.loads(pickle.dumps(part)))  # sent from a worker
        out.add_empty()
    out.freeze()
    return out


def test_names_read_back_one_by_one_in_slices_and_whole():
    many = [f"{i}_layer{i % 7}.conv_{i}" for i in range(5000)]
    t = table(WORDS, many)
    expected = [*WORDS, "", *many, ""]
    names = Names(t)
    assert len(names) == len(expected) == len(t)
    assert [names[i] for i in range(len(names))] == expected
    assert names[-1] == "" and names[-3] == many[-2]
    assert names[3:9] == expected[3:9] and names[::7] == expected[::7] and names[5000:] == expected[5000:]
    assert list(names) == expected and names == tuple(expected) and names != tuple(expected[:-1])
    with pytest.raises(IndexError):
        names[len(expected)]
    assert t.text(3) == WORDS[3].encode()  # UTF-8 by raw code


def test_a_selection_reads_through_its_index():
    t = table(WORDS)
    index = np.array([6, 0, 3, 0], dtype=np.int32)
    names = Names(t, index)
    assert list(names) == [WORDS[6], WORDS[0], WORDS[3], WORDS[0]] and names[1:3] == [WORDS[0], WORDS[3]]


def test_the_text_is_kept_compressed_in_blocks_that_end_at_names(monkeypatch):
    monkeypatch.setattr(packed, "BLOCK", 1000)
    many = [f"{i}_causal_lm.model.{i % 32}.mlp.down_proj_{i}" for i in range(20_000)]
    t = table(many)
    text = sum(len(n.encode()) for n in many)
    assert t.size == text  # bytes of UTF-8
    assert sum(map(len, t.blocks)) < text / 4  # command names repeat their words: zlib keeps a fraction
    assert len(t.blocks) > text // 1000 // 2  # about one block per BLOCK bytes of text
    ends = set(np.asarray(t.ends).tolist())
    assert all(start == 0 or start in ends for start in t.block_starts)  # a name is never cut
    assert t.ends.dtype == np.int32  # under 2 GiB of text
    assert list(Names(t)) == [*many, ""]


def test_equal_names_hash_equal_wherever_their_blocks_are(monkeypatch):
    monkeypatch.setattr(packed, "BLOCK", 64)
    t = table(["same", "other"] * 50, ["same", ""])
    hashes = t.hashes()
    same = [i for i in range(len(t)) if t.text(i) == b"same"]
    assert len(set(hashes[same].tolist())) == 1 and hashes[1] != hashes[0]
    assert hashes[len(t) - 1] == hash(b"")  # the empty names between ranges
