"""The memory budget's shares live in one place (inputs/limits.py, issue 38) and docs/security.md states them:
each row of its table of limits is what the code computes, at a budget under every floor and one over them."""

from __future__ import annotations

import re

import pytest
from tests_support import ROOT

from advisor.core.numbers import size_or_reason
from advisor.inputs import limits

GIB = 1 << 30
ROWS = {  # the start of a row of docs/security.md's table -> the limit it states, in bytes (lines: a count)
    "a full trace read whole": limits.whole_trace_limit,
    "in a streamed Neuron trace, a member read whole": limits.member_limit,
    "a text export": lambda m: limits.TextLimits.for_memory(m).max_bytes,
    "lines in a text export": lambda m: limits.TextLimits.for_memory(m).max_lines,
    "one line of a text export": lambda m: limits.TextLimits.for_memory(m).max_line_chars,
    "a PyTorch (Kineto) trace after decompression": limits.inflated_limit,
    "a PyTorch trace's event columns": limits.column_limit,
    "in a PyTorch trace, one JSON value": limits.member_limit,
}


def _rows() -> dict[str, str]:
    page = (ROOT / "docs" / "security.md").read_text(encoding="utf-8")
    return {cells[0]: cells[1] for line in page.splitlines() if line.startswith("| ")
            for cells in [[c.strip() for c in line.strip("|").split(" | ")]] if len(cells) == 3}


@pytest.mark.parametrize("start", sorted(ROWS))
def test_each_documented_share_and_floor_is_the_code_s(start):
    default = next(text for label, text in _rows().items() if label.startswith(start))
    share = re.search(r"`--max-memory` / (\d+)", default)
    floor = re.search(r"at least ([\d,.]+(?: [KMG]iB)?)", default)
    floor_value = 0 if floor is None else size_or_reason(floor.group(1).replace(",", ""))
    assert isinstance(floor_value, int)
    for budget in (64 << 20, 4 * GIB):
        stated = budget // int(share.group(1)) if share else budget
        assert ROWS[start](budget) == max(stated, floor_value), (start, budget)


def test_a_saved_analysis_limit_is_the_documented_sixteenth():
    assert limits.saved_analysis_limit(2 * GIB) == (128 << 20, "1/16 of --max-memory")
    assert "| file size | 1/16 of `--max-memory` (128 MiB at a 2 GiB budget) |" in \
        (ROOT / "docs" / "analysis-json.md").read_text(encoding="utf-8")
