"""How much one Neuron summary may hold, checked before anything is analysed: a summary of millions of
lines or keys is not a summary, and reading it whole would take minutes and gigabytes.

- fields in one profile: a real summary names about 150 (Neuron Profiler 2.x). A saved analysis holds
  at most 20,000 metrics and 10,000 text fields (core/analysis_schema.py), so a profile past the limit
  could be analysed but its analysis never read back; every field is also a row of the report's appendix;
- profiles in one summary-json (`neuron-profile view -d DIR`: one per profile of the folder), each analysed;
- lines of a summary-text: its fields and a few headers and rules. Counting lines is cheap, so a file of
  millions of lines is refused before it is parsed.
"""

from __future__ import annotations

from collections.abc import Sized

from advisor.core.errors import AdvisorError

MAX_FIELDS = 10_000
MAX_ENTRIES = 4_096  # as many as the rank files a folder may hold by default (kinds/base.py)
MAX_TEXT_LINES = 10 * MAX_FIELDS  # room for any layout around the most fields


def field_refusal(what: str = "fields") -> str:
    return (f"more than {MAX_FIELDS:,} {what} in one profile, over the field-count limit of a summary (a Neuron "
            "summary names about 150; a saved analysis holds at most 20,000 metrics)")


def check_field_count(fields: Sized, where: str) -> None:
    if len(fields) > MAX_FIELDS:
        raise AdvisorError(where, field_refusal())


def check_entry_count(entries: Sized, where: str) -> None:
    if len(entries) > MAX_ENTRIES:
        raise AdvisorError(where, f"{len(entries):,} profiles, more than the limit of {MAX_ENTRIES:,} in one summary "
                                  "(one per profile of the folder it was made from)")


def check_text_lines(lines: Sized, where: str) -> None:
    if len(lines) > MAX_TEXT_LINES:
        raise AdvisorError(where, f"{len(lines):,} lines, over the {MAX_TEXT_LINES:,}-line limit of a summary-text "
                                  "(a Neuron summary is about 150 lines)")
