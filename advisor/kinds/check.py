"""`check(kind)`: a kind honours its contract (advisor/kinds/contract.py): its data files fit their shapes,
its adapters, events and report modules have the functions the stages call, and its report places
sections only where the report has places. Registration runs the data check (cheap: files already read
for options); each module is checked when a stage first asks for it; the tests run everything."""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import TYPE_CHECKING, Any

from advisor.core.errors import AdvisorError
from advisor.core.yamlsafe import load_yaml_file
from advisor.kinds.data_schema import merged, problem, shared_shapes

if TYPE_CHECKING:
    from advisor.core.model import Analysis
    from advisor.kinds.base import ProfileKind

OWN_SCHEMA = "schema.yaml"  # a kind's own keys, in the shapes of kind-data.schema.yaml


@cache
def kind_shapes(kind: ProfileKind) -> dict[str, Any]:
    """The shapes of the kind's data files: the shared ones with the kind's own keys (data/schema.yaml) added."""
    own_path = kind.folder / OWN_SCHEMA
    if not own_path.is_file():
        return shared_shapes()
    own = load_yaml_file(own_path)
    try:
        return merged(shared_shapes(), own if isinstance(own, dict) else {})
    except ValueError as exc:
        raise AdvisorError(f"profile kind '{kind.name}' ({own_path})", str(exc)) from None


def check_file(kind: ProfileKind, name: str, data: Any) -> None:
    """One data file against its shape (ProfileKind.data runs it the first time a file is read, so a file is
    parsed once and only when a stage needs it); the error names the kind, the file and the key."""
    shape = kind_shapes(kind).get(name)
    found = problem(data, shape) if shape is not None else None
    if found:
        raise AdvisorError(f"profile kind '{kind.name}' ({kind.folder / name})", found)


def check_data(kind: ProfileKind, names: Iterable[str] | None = None) -> None:
    """The kind's data files (`names`, or every shaped one) fit their shapes."""
    for name in kind_shapes(kind) if names is None else names:
        kind.data(name)


def check(kind: ProfileKind) -> None:
    """The whole contract, modules included (imports the kind's report layer: for tests and `--debug`)."""
    check_data(kind)
    kind.adapters()
    kind.events()
    kind.report()


def check_saved_tables(kind: ProfileKind, analysis: Analysis, where: str) -> None:
    """A saved analysis (untrusted input) draws its trace tables with the kind's report code, which looks their
    columns up by name: a table whose names are not the kind's is one error naming the file, not a crash."""
    layout = kind.data("report.yaml")
    for table in analysis.trace.breakdowns if analysis.trace else ():
        problem = table.layout_problem(layout)
        if problem:
            raise AdvisorError(where, problem)
