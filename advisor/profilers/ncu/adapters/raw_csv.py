"""`ncu --csv --page raw`: one row per launch, the identity columns, then one column per metric
name; the row under the header holds the units (its identity cells empty). No rule results.

No real raw export was available: built to NVIDIA's description and third-party fixtures of the
format. Parsed by header name (identity columns differ across versions: `Kernel Time`, NVTX
columns), values with thousands separators or in base units, `n/a`, and `==PROF==` lines or
application output around the CSV block.
"""

from __future__ import annotations

from advisor.core.errors import AdvisorError
from advisor.profilers.ncu.adapters.details_csv import IDENTITY, csv_block, header_index
from advisor.profilers.ncu.adapters.launches import Launch, Row

NAME = "ncu-csv-raw"
REQUIRED = ("ID", "Kernel Name")
NOT_METRICS = {"ID", "Process ID", "Kernel Name", "Kernel Time", *IDENTITY}


def cell(fields: list[str], i: int | None) -> str:
    """Field `i` of a row, stripped; "" where the row is shorter."""
    return fields[i].strip() if i is not None and i < len(fields) else ""


def _is_metric(column: str) -> bool:
    """Metric names are dotted snake_case; identity and NVTX columns hold spaces or colons."""
    return bool(column) and column not in NOT_METRICS and not any(c in column for c in " :")


def _header(lines: list[str]) -> int | None:
    """The raw page's header: the identity columns and metric-name columns, no `Metric Name` column
    (which would make it a details or --metrics CSV)."""
    start = header_index(lines, REQUIRED)
    if start is None or '"Metric Name"' in lines[start]:
        return None
    return start if "__" in lines[start] else None


def sniff(text: str) -> bool:
    return _header(text.splitlines()[:200]) is not None


def parse(text: str, where: str) -> list[Launch]:
    lines = text.splitlines()
    start = _header(lines)
    if start is None:
        raise AdvisorError(where, "no ncu raw CSV header (\"ID\",…,\"Kernel Name\",…,<metric names>) in it")
    column, rows = csv_block(lines, start)
    metrics = [(i, name) for name, i in column.items() if _is_metric(name)]
    units: list[str] = []
    launches: list[Launch] = []
    for fields in rows:
        launch_id = cell(fields, column["ID"])
        if not launch_id:
            if not units and not launches:  # the units row, right under the header
                units = fields
            continue
        identity = {ours: cell(fields, column.get(theirs)) for theirs, ours in IDENTITY.items()}
        launch = Launch(id=launch_id, kernel=cell(fields, column["Kernel Name"]), identity=identity)
        launch.rows = [Row("", name, cell(units, i), cell(fields, i)) for i, name in metrics
                       if i < len(fields)]
        launches.append(launch)
    return launches
