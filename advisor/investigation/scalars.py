"""Values of a context file that YAML recognises but Python cannot build: `date: 2026-02-30` is a YAML
timestamp, and building it raises ValueError (day is out of range for month), as does an integer of
more than 4,300 digits. Without this the error escaped the loader as an internal error blamed on the
profile; here it names the context file, the line and the field.
"""

from __future__ import annotations

import datetime
import re
from pathlib import Path

import yaml
from yaml.constructor import SafeConstructor

from advisor.core.errors import AdvisorError
from advisor.core.regular import read_regular
from advisor.core.yamlsafe import MAX_YAML_BYTES

_TAGS = {"tag:yaml.org,2002:timestamp": "date", "tag:yaml.org,2002:int": "integer",
         "tag:yaml.org,2002:float": "number"}
_ISO_DATE = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})$")  # bounded repeats only: linear on any text
SHOWN = 40  # characters of the value in the error


def unbuildable(path: Path, where: str) -> AdvisorError:
    """The error for the first value (in file order) the YAML loader raised ValueError building. The
    file was loaded once already, so it is regular, small, UTF-8, without aliases and shallow."""
    text = read_regular(path, MAX_YAML_BYTES, "a YAML file").decode("utf-8-sig")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    constructor = SafeConstructor()
    found: list[tuple[int, str]] = []
    stack: list[tuple[yaml.Node, str]] = [(yaml.compose(text, Loader=loader), "")]
    while stack:
        node, field = stack.pop()
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                part = key.value[:SHOWN] if isinstance(key, yaml.ScalarNode) else "…"
                name = f"{field}.{part}" if field else part
                stack += [(key, name), (value, name)]
        elif isinstance(node, yaml.SequenceNode):
            stack += [(item, f"{field}[{i}]") for i, item in enumerate(node.value)]
        elif isinstance(node, yaml.ScalarNode) and node.tag in _TAGS:
            try:
                constructor.construct_object(node)
            except (ValueError, OverflowError) as exc:
                value = node.value if len(node.value) <= SHOWN else node.value[:SHOWN - 1] + "…"
                reason = "too many digits" if node.tag != "tag:yaml.org,2002:timestamp" else str(exc)
                found.append((node.start_mark.line + 1, f"{field}: {value} is not a valid {_TAGS[node.tag]} "
                                                        f"({reason})"))
    if not found:  # not a value of the file after all: still one line, naming the file
        return AdvisorError(where, "a value YAML recognises could not be read")
    line, problem = min(found)
    return AdvisorError(f"{where}:{line}", problem)


def checked_date(where: str, text: str) -> str:
    """A date written as text (`date: "2026-02-30"`) is held to the calendar as the unquoted one is."""
    match = _ISO_DATE.match(text)
    if match:
        try:
            datetime.date(*map(int, match.groups()))
        except ValueError as exc:
            raise AdvisorError(where, f"date: {text} is not a valid date ({exc})") from None
    return text
