"""A format-free report: sections of blocks. Renderers turn it into Markdown, HTML or PDF.

Text in blocks is inline Markdown written by the builder; anything that comes from a profile or a
rule pack goes through `escape` first, so it can never inject markup into any output format.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import quote

_MD_ALWAYS = re.compile(r"([\\`*\[\]<>|~&])")
_MD_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
_MD_BLOCK_START = re.compile(r"^(\s*)([#+\-=])(?=\s|$)")
_MD_NUMBERED = re.compile(r"^(\s*\d+)([.)])(?=\s|$)")


def escape(text: object) -> str:
    """Inline Markdown for untrusted text: markup characters escaped, newlines folded. Underscores
    inside words stay bare (GitHub does not read them as emphasis), so names remain readable."""
    flat = _MD_ALWAYS.sub(r"\\\1", " ".join(str(text).split()))
    flat = _MD_UNDERSCORE.sub(r"\\_", flat)
    flat = _MD_BLOCK_START.sub(r"\1\\\2", flat)
    return _MD_NUMBERED.sub(r"\1\\\2", flat)


def code(text: object) -> str:
    """Untrusted text as inline code (names, formulas); backticks inside are replaced."""
    return "`" + " ".join(str(text).split()).replace("`", "'") + "`"


_LINK_SCHEME = re.compile(r"\[([^\]\n]*)\]\(\s*<?\s*([A-Za-z][A-Za-z0-9+.-]{0,30}):")
_SAFE_SCHEMES = frozenset({"http", "https", "mailto"})


def author_markdown(text: str) -> str:
    """The author's own Markdown (a context file's notes): emphasis, code spans and http(s) links work;
    raw HTML outside code spans is shown as text in every format (Markdown viewers differ in what they
    strip), and a link of any other scheme (javascript:, data:, file:) is shown as text, not a link."""
    parts = text.split("`")
    for index in range(0, len(parts), 2):  # outside code spans
        outside = parts[index].replace("<", "\\<").replace(">", "\\>")
        parts[index] = _LINK_SCHEME.sub(
            lambda m: m.group(0) if m.group(2).lower() in _SAFE_SCHEMES else "\\" + m.group(0), outside)
    return "`".join(parts)


def link_target(relative_path: str) -> str:
    """A relative file path as a link or image target that works in Markdown and HTML whatever the file
    name holds (spaces, non-ASCII letters, parentheses): percent-encoded, the slashes kept."""
    return quote(relative_path, safe="/")


_UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


def table_cell(text: str) -> str:
    """A cell's inline Markdown with every pipe escaped, code spans included: GitHub and markdown-it split
    a row at any unescaped `|`, even inside backticks, and show an escaped one as a plain `|`."""
    return _UNESCAPED_PIPE.sub(r"\\|", text)


@dataclass(frozen=True)
class Paragraph:
    text: str
    kind: Literal["paragraph"] = "paragraph"


@dataclass(frozen=True)
class Bullets:
    items: tuple[str, ...]
    ordered: bool = False
    kind: Literal["bullets"] = "bullets"


@dataclass(frozen=True)
class Table:
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    align: tuple[str, ...] = ()  # "left" | "right" per column; default left
    caption: str = ""
    kind: Literal["table"] = "table"


@dataclass(frozen=True)
class CodeBlock:
    text: str
    language: str = ""
    kind: Literal["code"] = "code"


@dataclass(frozen=True)
class Chart:
    """A chart: `name` is stable (the file name stem), `spec` says what to draw (report/charts.py)."""

    name: str
    title: str
    spec: dict = field(default_factory=dict)
    alt: str = ""
    kind: Literal["chart"] = "chart"


Block = Paragraph | Bullets | Table | CodeBlock | Chart


@dataclass(frozen=True)
class Section:
    title: str
    blocks: tuple[Block, ...]
    anchor: str = ""
    level: int = 2


@dataclass(frozen=True)
class Document:
    title: str
    lines: tuple[str, ...]  # the lines under the title: source, date, tracker
    sections: tuple[Section, ...]
