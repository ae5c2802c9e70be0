"""`check(kind)`: a kind honours its contract (advisor/kinds/contract.py): its data files fit their shapes,
its adapters, events and report modules have the functions the stages call, and its report places
sections only where the report has places. Registration runs the data check (cheap: files already read
for options); each module is checked when a stage first asks for it; the tests run everything."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import cache
from typing import TYPE_CHECKING

from advisor.core.errors import AdvisorError
from advisor.core.resources import shipped_dir
from advisor.core.saved_checks import unit_fields
from advisor.core.schema_errors import field_step as step
from advisor.core.trace import TEXT
from advisor.core.yamlsafe import load_yaml_file
from advisor.kinds.base import ProfileKind
from advisor.kinds.data_schema import kind_shapes
from advisor.kinds.option_specs import kind_option_specs

if TYPE_CHECKING:
    from advisor.core.model import Analysis

def check_data(kind: ProfileKind, names: Iterable[str] | None = None) -> None:
    """The kind's data files (`names`, or every shaped one and its command-line options) fit their shapes."""
    for name in kind_shapes(kind.name, kind.folder) if names is None else names:
        kind.data(name)
    if names is None:
        kind_option_specs(kind)


def check(kind: ProfileKind) -> None:
    """The whole contract, modules included (imports the kind's report layer: for tests and `--debug`)."""
    check_data(kind)
    kind.adapters()
    kind.events()
    kind.report()


def check_saved_tables(kind: ProfileKind, analysis: Analysis, where: str) -> None:
    """A saved analysis (untrusted input) against the kind it names, before the kind's report code draws it: one
    error naming the file and the first thing that is not the kind's. Its rule packs, hardware figures, units and
    trace tables must be ones the kind has (a Neuron analysis relabelled `"kind": "torch"` rendered as a PyTorch
    report), its fields read as the kind's conventions read a profile, and each table have the kind's columns,
    which the report looks up by name. Consistency within the file is core/saved_checks.py's."""
    for problems in (_packs(kind, analysis), _hardware(kind, analysis), _units(kind, analysis),
                     _tables(kind, analysis), _fields(kind, analysis)):
        problem = next(problems, None)
        if problem is not None:
            raise AdvisorError(where, problem)


def _packs(kind: ProfileKind, analysis: Analysis) -> Iterator[str]:
    """A built-in pack scoped to other kinds never runs on this kind's profiles (packs/load.py leaves it out)."""
    scoped_packs = _scoped_packs(kind)
    for pack in dict.fromkeys((*analysis.packs, *(f.pack for f in analysis.findings))):
        scoped = scoped_packs.get(pack)
        if scoped and kind.name not in scoped:
            yield (f"kind: '{kind.name}', but its rule pack '{pack}' applies to {' and '.join(scoped)} profiles "
                   f"only: this is no {kind.title} analysis")


def _hardware(kind: ProfileKind, analysis: Analysis) -> Iterator[str]:
    """Hardware figures are the kind's hardware table's, in its units (metrics/hardware.py refuses any other)."""
    known = kind.data("hardware.yaml").get("units") or {}
    for name, unit in (analysis.hardware.units if analysis.hardware else {}).items():
        if name not in known:
            yield (f"hardware.values{step(name)}: not a hardware figure of {kind.title} analyses "
                   f"({', '.join(known) or 'it has none'})")
        elif unit != known[name]:
            yield f"hardware.values{step(name)}.unit: '{unit}', where {kind.title}'s figure is in '{known[name]}'"


def _units(kind: ProfileKind, analysis: Analysis) -> Iterator[str]:
    """A unit beyond the generic ones is one this kind adds (its conventions.yaml `units:`)."""
    from advisor.kinds.conventions import conventions

    own = conventions(kind).units
    for label, unit in unit_fields(analysis):
        if unit not in own and unit != TEXT:
            yield f"{label}: '{unit}' is not a unit of {kind.title} analyses"


def _tables(kind: ProfileKind, analysis: Analysis) -> Iterator[str]:
    """A kind builds each trace table from its report.yaml `breakdowns:` (core.trace.kind_breakdown), so a table
    that is not declared there is another kind's; a declared one has the columns the kind's report looks up."""
    layout = kind.data("report.yaml")
    found = layout.get("breakdowns")
    declared: dict = found if isinstance(found, dict) else {}
    for table in analysis.trace.breakdowns if analysis.trace else ():
        if table.name not in declared:
            yield (f"trace.breakdowns: '{table.name}' is not a table of {kind.title} analyses "
                   f"({', '.join(declared) or 'they have none'})")
        problem = table.layout_problem(layout)
        if problem:
            yield problem


def _fields(kind: ProfileKind, analysis: Analysis) -> Iterator[str]:
    """A reported figure the kind's conventions make unavailable when reading a profile (a share above 100 %, a
    negative sentinel, a zero time) cannot be in an analysis advisor wrote."""
    from advisor.kinds.conventions import conventions

    conv = conventions(kind)
    for name, m in analysis.metrics.items():
        if m.source != "reported" or m.value is None:
            continue
        at = f"metrics{step(name)}.value: {m.value:g}"
        if name.endswith(conv.percent_suffix) and m.value > 1 and name not in conv.unbounded_percent:
            yield f"{at} is outside 0..1: {kind.title}'s {conv.percent_suffix} fields are shares (at most 100 %)"
        elif m.value < 0 and conv.negative_is_unavailable:
            yield f"{at} is negative, which {kind.title} profiles use for unavailable"
        elif m.value == 0 and name in conv.nonzero:
            yield f"{at} is {kind.title}'s \"not measured\" for {name} (read as unavailable, never as 0)"


@cache
def _scoped_packs(kind: ProfileKind) -> dict[str, tuple[str, ...]]:
    """The kinds of each built-in rule pack that names them, by pack: the `kinds:` of its header (rules/*/pack.yaml
    and the packs this kind brings). Read from the headers alone: the kinds layer stands below the packs loader."""
    found: dict[str, tuple[str, ...]] = {}
    for root in (*sorted(shipped_dir("rules").iterdir()), *kind.packs):
        head = root / "pack.yaml" if root.is_dir() else root
        data = load_yaml_file(head) if head.is_file() and head.suffix in (".yaml", ".yml") else None
        if isinstance(data, dict) and isinstance(data.get("pack"), str) and isinstance(data.get("kinds"), list):
            found[data["pack"]] = tuple(map(str, data["kinds"]))
    return found
