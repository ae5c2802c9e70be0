"""The limits every text and JSON reader holds to, each derived from --max-memory so one option
raises them all. A refusal names the limit and the option.

Parsing text costs several times its size (the str, the list of lines, the rows built from them),
hence the fractions below; at the default --max-memory (2 GiB) a text export may be 256 MiB,
16 million lines, lines of 4 MiB.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from advisor.core.errors import AdvisorError

TEXT_SIZE_SHARE = 8  # a text export may be an eighth of --max-memory
BYTES_PER_LINE = 128  # a line held in a list costs about this much besides its characters
LINE_SHARE = 512  # one line may be this fraction of --max-memory
MAX_JSON_DEPTH = 64  # a summary nests 3 levels, a full trace 4: deeper is not a profile
MAX_STRING_CHARS = 1 << 20  # one text value (a kernel name, a label); the longest real one is a few KiB
# What str.splitlines splits on: a file of form feeds is as many lines as a file of newlines.
_LINE_BREAKS = ("\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")
RAISE = "raise it with --max-memory SIZE"


@dataclass(frozen=True)
class TextLimits:
    """How much text a reader takes: bytes, lines and characters in one line."""

    max_bytes: int
    max_lines: int
    max_line_chars: int

    @classmethod
    def for_memory(cls, max_memory: int) -> TextLimits:
        """The limits under `max_memory`, never below floors any real summary fits in (a small file is
        read whatever the budget: --max-memory decides only how large traces are read)."""
        return cls(max_bytes=max(max_memory // TEXT_SIZE_SHARE, 1 << 20),
                   max_lines=max(max_memory // BYTES_PER_LINE, 100_000),
                   max_line_chars=max(max_memory // LINE_SHARE, 1 << 16))

    def check_lines(self, text: str, where: str) -> None:
        """Refuse text with more lines, or a longer line, than the limits allow; counted before any
        list of lines is built."""
        lines = sum(text.count(brk) for brk in _LINE_BREAKS) + 1
        if lines > self.max_lines:
            raise AdvisorError(where, f"{lines:,} lines, over the line-count limit of {self.max_lines:,} "
                                      f"(set by --max-memory; {RAISE})")
        if len(text) <= self.max_line_chars:
            return
        longest = max(map(len, text.splitlines()), default=0)
        if longest > self.max_line_chars:
            raise AdvisorError(where, f"a line of {longest:,} characters, over the line-length limit of "
                                      f"{self.max_line_chars:,} (set by --max-memory; {RAISE})")


def check_json_value(value: Any, where: str, max_depth: int = MAX_JSON_DEPTH,
                     max_string: int = MAX_STRING_CHARS) -> None:
    """Refuse a decoded JSON value nested deeper than `max_depth` or holding a string (key or value)
    longer than `max_string`; iterative, so depth costs no recursion."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            if len(item) > max_string:
                raise AdvisorError(where, f"a text value of {len(item):,} characters, over the string-length "
                                          f"limit of {max_string:,} (no profile field is that long)")
            continue
        if not isinstance(item, (dict, list)):
            continue
        if depth > max_depth:
            raise AdvisorError(where, depth_refusal(max_depth))
        children = [*item.keys(), *item.values()] if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children)


def depth_refusal(max_depth: int | None = MAX_JSON_DEPTH) -> str:
    """The refusal of a value nested past `max_depth`; None: past msgspec's recursion guard (about 1,000 levels,
    less the caller's stack), which holds where a streamed file's members are checked and skipped, not kept."""
    limit = f"the nesting-depth limit of {max_depth} levels" if max_depth else "the depth the JSON decoder follows"
    return f"JSON nested too deeply: past {limit} (a profile nests at most 4 levels)"
