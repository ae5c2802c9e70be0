"""A large JSON file read forward in runs of whole elements (inputs/json_stream.py): whatever the block
size, the values are those msgspec decodes from the whole text, brackets and commas inside strings do
not cut, and malformed or truncated JSON is refused as msgspec refuses it, never read wrongly."""

from __future__ import annotations

import io
import json
import random
import re

import msgspec
import pytest

from advisor.inputs import json_stream
from advisor.inputs.json_stream import Reader, boundaries, members, skip, values, whole

TRICKY = {
    "summary": [{"total_time": 1.5e-3, "name": "a},{b", "nested": {"x": [1, {"y": "]}"}]}}],
    "metadata": {"k": "v", "list": [1, 2, 3], "esc": 'quote \\" and \\\\ and "},{"'},
    "events": [{"ts": i, "label": f"e{i % 7}", "text": "},{" * (i % 3), "q": "\\" * (i % 4),
                "inner": [{"a": [i]}] if i % 5 == 0 else []} for i in range(300)],
    "numbers": list(range(200)),
    "empty": [],
    "empty_object": {},
    "scalar": "a string",
    "number": -12.5e3,
    "flag": True,
    "none": None,
}


def read(text: bytes, limit: int = 1 << 20) -> dict:
    """Every top-level member read whole through runs, as a dict."""
    out = {}
    reader = Reader(io.BytesIO(text), limit)
    for key in members(reader):
        out[key] = whole(reader, limit, key)
    return out


@pytest.mark.parametrize("block", [16, 100, 4096, 1 << 20])
@pytest.mark.parametrize("indent", [None, 2])
def test_members_read_in_runs_are_what_msgspec_decodes(monkeypatch, block, indent):
    monkeypatch.setattr(json_stream, "BLOCK", block)
    text = json.dumps(TRICKY, indent=indent).encode()
    assert read(text) == msgspec.json.decode(text)


def test_runs_are_whole_elements_and_several(monkeypatch):
    monkeypatch.setattr(json_stream, "BLOCK", 512)
    text = json.dumps({"events": TRICKY["events"]}, separators=(",", ":")).encode()
    reader = Reader(io.BytesIO(text), 1 << 20)
    next(members(reader))
    runs = list(values(reader, msgspec.json.decode))
    assert len(runs) > 10 and [e for run in runs for e in run] == TRICKY["events"]


def test_boundaries_skip_brackets_and_commas_inside_strings():
    data = b'x{"a":"],\\"}","b":[1,2]},{"c":"\\\\"},3]  ,'
    end, last = boundaries(data, 1, len(data))
    assert data[end:end + 1] == b"]" and end == data.index(b"3]") + 1
    assert last == data.index(b",3]")  # the last comma between elements, not one inside a string
    assert boundaries(data, 1, 10) == (None, None)  # the window ends inside the first element


@pytest.mark.parametrize("block", [16, 4096])
def test_every_truncation_is_refused(monkeypatch, block):
    monkeypatch.setattr(json_stream, "BLOCK", block)
    text = json.dumps({k: TRICKY[k] for k in ("summary", "metadata", "numbers", "scalar", "flag")}).encode()
    for cut in range(len(text)):
        if not text[:cut].strip():
            continue
        with pytest.raises(msgspec.DecodeError):
            read(text[:cut])


@pytest.mark.parametrize(("text", "problem"), [
    (b'{"a": [1, 2,]}', "malformed"),
    (b'{"a": [{"b": 1},]}', "malformed"),
    (b'{"a": [{"b": 1}, {"b": tru}]}', "malformed"),
    (b'{"a": {"b": 1,}}', "malformed"),
    (b'{"a": [1]} x', "trailing characters"),
    (b'{"a": [1]]}', "malformed"),
    (b'{"a" 1}', "malformed"),
    (b'{"a": ,}', "malformed"),
    (b'{"a": [1, 2', "truncated"),
    (b'{"a": [1, 2,' + b" " * 20 + b"]}", "malformed"),
    (b'{"a": [{"b": 1}, {"b": 2},' + b" " * 20 + b"]}", "malformed"),
])
@pytest.mark.parametrize("block", [8, 4096])
def test_malformed_json_is_refused(monkeypatch, text, problem, block):
    monkeypatch.setattr(json_stream, "BLOCK", block)
    with pytest.raises(msgspec.DecodeError, match=problem):
        read(text)


def test_random_documents_read_the_same_at_any_block(monkeypatch):
    rng = random.Random(7)
    pieces = ["},{", "}]", "[", '"', "\\", ",", "x", "é"]

    def value(depth: int):
        pick = rng.random()
        if depth > 3 or pick < 0.3:
            return rng.choice([1, -2.5, None, False, "".join(rng.choices(pieces, k=rng.randrange(6)))])
        if pick < 0.7:
            return [value(depth + 1) for _ in range(rng.randrange(5))]
        return {f"k{i}": value(depth + 1) for i in range(rng.randrange(5))}

    for _ in range(60):
        doc = {f"m{i}": value(0) for i in range(rng.randrange(5))}
        text = json.dumps(doc, indent=rng.choice([None, 1])).encode()
        monkeypatch.setattr(json_stream, "BLOCK", rng.choice([8, 64, 4096]))
        monkeypatch.setattr(json_stream, "SCAN_FIRST", rng.choice([4, 64, 1 << 16]))  # exact scans grown
        assert read(text) == doc


def test_an_error_names_the_files_byte_as_msgspec_does(monkeypatch):
    monkeypatch.setattr(json_stream, "BLOCK", 64)
    text = b'{"a": [' + b",".join([b'{"b": 1}'] * 40) + b', {"b": tru}]}'
    with pytest.raises(msgspec.DecodeError) as whole_text:
        msgspec.json.decode(text)
    with pytest.raises(msgspec.DecodeError, match=re.escape(str(whole_text.value))):  # (byte 378)
        read(text)


def test_a_value_longer_than_the_limit_is_refused(monkeypatch):
    monkeypatch.setattr(json_stream, "BLOCK", 64)
    text = json.dumps({"a": [{"b": "x" * 1000}]}).encode()
    with pytest.raises(msgspec.DecodeError, match="longer than"):
        read(text, limit=200)  # one element of 1 kB, more than the window may hold
    with pytest.raises(msgspec.ValidationError, match=r"`\$\.a` is longer than"):
        reader = Reader(io.BytesIO(text), 1 << 20)
        for key in members(reader):
            whole(reader, 100, key)


def test_a_skipped_value_is_still_checked():
    reader = Reader(io.BytesIO(b'{"skip": [{"a": 1}, {"a": nul}]}'), 1 << 20)
    with pytest.raises(msgspec.DecodeError):
        for _ in members(reader):
            skip(reader)
