"""Every regular expression that runs on profile input, in one place, so one test can hold them all to
linear time (tests/safety/test_ncu_inputs.py). Each reader module declares `INPUT_PATTERNS`: a name,
the compiled pattern, and fragments of the pattern's own text a hostile line would repeat."""

from __future__ import annotations

import importlib
import re

READERS = ("advisor.inputs.text", "advisor.kinds.ncu.adapters", "advisor.kinds.ncu.adapters.launches",
           "advisor.kinds.ncu.adapters.report_file", "advisor.kinds.ncu.adapters.text_output",
           "advisor.kinds.ncu.verdicts", "advisor.kinds.ncu.report.grouped", "advisor.kinds.neuron.adapters",
           "advisor.kinds.neuron.adapters.summary_text")


def input_patterns() -> dict[str, tuple[re.Pattern[str], tuple[str, ...]]]:
    """Name -> (pattern, hostile fragments) for every reader that declares its patterns."""
    found: dict[str, tuple[re.Pattern[str], tuple[str, ...]]] = {}
    for module in READERS:
        found.update(importlib.import_module(module).INPUT_PATTERNS)
    return found
