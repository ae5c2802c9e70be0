"""The contract a profile kind is written against: what its `adapters`, `events` and `report` modules
provide (Protocols a type checker sees), and the typed parts the stages call instead of a module's
attributes, with the optional functions filled in. A kind module missing a required function, or a
report placing a section where the report has no place, is an error naming the kind and its file,
never a section that silently disappears (kinds.check() runs these when the kind is registered and in
the tests)."""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol

from advisor.core.errors import AdvisorError, suggest
from advisor.core.trace import TraceSummary
from advisor.kinds.options import LoadOptions

if TYPE_CHECKING:
    from advisor.core.events import EventTrace
    from advisor.core.model import Analysis, Hardware, Profile

# Where a kind's own sections go in the report, in the report's order.
PLACES = ("utilisation", "memory", "roofline", "trace")
# A report module's optional functions; each takes the analysis.
REPORT_PARTS = ("sections", "tldr", "setup_rows", "hardware_rows")
Members = list[tuple[str, Path]] | None


class KindAdapters(Protocol):
    """`adapters`: detect(path, head) is cheap (the first bytes, or a folder's names); load(path, options) reads
    the input into profiles."""

    def detect(self, path: Path, head: bytes) -> bool: ...
    def load(self, path: Path, options: LoadOptions) -> list[Profile]: ...


class KindMembers(Protocol):
    """Adapters that profile a folder's files separately (per-rank captures) also name them: members(folder,
    limit) (optional: a kind without it reads a folder as one input, or not at all)."""

    def members(self, folder: Path, limit: int) -> Members: ...


class KindEvents(Protocol):
    """`events` (optional): what a full event trace adds, as a summary and metrics in machine units. A kind whose
    summary needs the device's figures (the torch kind's operator roofline) takes them as `hardware=`; one that
    does not may leave the keyword out (api.py passes it only where the function declares it)."""

    def summarize(self, trace: EventTrace,
                  total_time: float | None) -> tuple[TraceSummary, dict[str, float | None]]: ...


class KindReport(Protocol):
    """`report` with sections: the places it fills (`PLACES`) and the sections by place. Sections are the
    report layer's `Section`s, which this layer does not import. Its other parts are optional, each typed
    below (a Protocol member cannot be optional): a kind's check assigns the ones its module has."""

    @property
    def PLACES(self) -> tuple[str, ...]: ...  # the module constant

    def sections(self, analysis: Analysis) -> Mapping[str, Sequence[Any]]: ...


ReportTldr = Callable[["Analysis"], list[tuple[int, str]]]  # `tldr`: candidate TL;DR lines (priority, text)
ReportRows = Callable[["Analysis"], list[tuple[str, str]]]  # `setup_rows`, `hardware_rows`: (item, value)


def where(module: ModuleType) -> str:
    """The module's file, for errors: what a kind's author opens."""
    return str(getattr(module, "__file__", None) or module.__name__)


@dataclass(frozen=True)
class Adapters:
    detect: Callable[[Path, bytes], bool]
    load: Callable[[Path, LoadOptions], list[Profile]]
    _members: Callable[..., Members] | None = None

    def members(self, folder: Path, limit: int | None = None) -> Members:
        if self._members is None:
            return None
        return self._members(folder) if limit is None else self._members(folder, limit)


@dataclass(frozen=True)
class Events:
    summarize: Callable[[EventTrace, float | None], tuple[TraceSummary, dict[str, float | None]]]
    kind: str = ""  # for the error on a summary of the wrong shape: the kind and its module's file
    file: str = ""


@dataclass(frozen=True)
class Report:
    """A kind's report parts; each is looked up when called (a plug-in may be reloaded), empty when absent."""

    kind: str
    file: str
    places: tuple[str, ...] = ()
    module: ModuleType | None = None

    def _call(self, part: str, analysis: Analysis, empty: Any) -> Any:
        build = getattr(self.module, part, None)
        return build(analysis) if build else empty

    def sections(self, analysis: Analysis) -> Mapping[str, Sequence[Any]]:
        """The sections by place; a place the module did not declare is an error (a misspelt place would
        otherwise drop its sections from the document)."""
        parts: Mapping[str, Sequence[Any]] = self._call("sections", analysis, {})
        unknown = sorted(set(parts) - set(self.places))
        if unknown:
            raise AdvisorError(f"profile kind '{self.kind}' ({self.file})",
                               f"sections placed under {', '.join(map(repr, unknown))}, which its PLACES "
                               f"({', '.join(self.places) or 'none'}) do not declare{suggest(unknown[0], PLACES)}")
        return parts

    def tldr(self, analysis: Analysis) -> list[tuple[int, str]]:
        return list(self._call("tldr", analysis, []))

    def setup_rows(self, analysis: Analysis) -> list[tuple[str, str]]:
        return list(self._call("setup_rows", analysis, []))

    def hardware_rows(self, analysis: Analysis) -> list[tuple[str, str]]:
        return list(self._call("hardware_rows", analysis, []))


def adapters_of(kind: str, module: ModuleType) -> Adapters:
    _require(kind, module, {"detect": 2, "load": 2})
    _require(kind, module, {"members": 2}, optional=True)
    return Adapters(module.detect, module.load, getattr(module, "members", None))


def events_of(kind: str, module: ModuleType) -> Events:
    _require(kind, module, {"summarize": 2})
    return Events(module.summarize, kind, where(module))


def report_of(kind: str, module: ModuleType) -> Report:
    """The report parts, with the module's declared places checked against the report's."""
    file = where(module)
    own = [name for name, value in vars(module).items()
           if inspect.isfunction(value) and value.__module__ == module.__name__ and not name.startswith("_")]
    near = [name for name in own if name not in REPORT_PARTS and difflib.get_close_matches(name, REPORT_PARTS, 1, 0.8)]
    if near:  # `setup_row` for setup_rows: the rows would silently be left out
        raise AdvisorError(f"profile kind '{kind}' ({file})",
                           f"function '{near[0]}' is not a report part{suggest(near[0], REPORT_PARTS)}")
    places = tuple(getattr(module, "PLACES", ()))
    if hasattr(module, "sections") and not places:
        raise AdvisorError(f"profile kind '{kind}' ({file})",
                           f"has sections() but no PLACES saying where they go (any of {', '.join(PLACES)})")
    for place in places:
        if place not in PLACES:
            raise AdvisorError(f"profile kind '{kind}' ({file})",
                               f"PLACES names '{place}', not a place of the report ({', '.join(PLACES)})"
                               f"{suggest(place, PLACES)}")
    _require(kind, module, dict.fromkeys(REPORT_PARTS, 1), optional=True)
    return Report(kind, file, places, module)


def _require(kind: str, module: ModuleType, functions: Mapping[str, int], optional: bool = False) -> None:
    """Each function present (unless optional) and callable with its number of positional arguments."""
    for name, arguments in functions.items():
        function = getattr(module, name, None)
        if function is None and optional:
            continue
        if not callable(function):
            raise AdvisorError(f"profile kind '{kind}' ({where(module)})", f"has no function {name}()")
        try:
            inspect.signature(function).bind(*range(arguments))
        except TypeError:
            raise AdvisorError(f"profile kind '{kind}' ({where(module)})",
                               f"{name}() cannot be called with {arguments} argument(s), as the contract "
                               f"calls it") from None


def summarize_events(events: Events, trace: EventTrace, total_time: float | None,
                     hardware: Hardware | None) -> tuple[TraceSummary, dict[str, float | None]]:
    """The kind's trace summary, given the device's figures where its summarize declares `hardware` (an
    out-of-tree kind written before the keyword existed keeps working). A result of another shape than
    (TraceSummary, {name: number or None}) is an error naming the kind, not an internal error later."""
    if "hardware" in inspect.signature(events.summarize).parameters:
        found: Any = events.summarize(trace, total_time, hardware=hardware)  # type: ignore[call-arg]
    else:
        found = events.summarize(trace, total_time)
    if not (isinstance(found, tuple) and len(found) == 2 and isinstance(found[0], TraceSummary)
            and isinstance(found[1], dict) and all(isinstance(k, str) for k in found[1])):
        got = f"a tuple of {len(found)}" if isinstance(found, tuple) else type(found).__name__
        raise AdvisorError(f"profile kind '{events.kind}' ({events.file})",
                           f"summarize() returned {got}; the contract expects (TraceSummary, {{metric: value}})")
    return found[0], found[1]
