"""`ncu --csv --page details` (and `--metrics` lists, which print the same columns): one row per
metric per launch, and one per rule result when rules ran.

Built to real exports: parsed by header name (column sets differ across versions), metric rows
with a trailing comma (16 fields under a 20-column header), rule rows with 20, thousands separators,
`n/a`, and `==PROF==` lines or the application's own output before and after the CSV block.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator

from advisor.core.errors import AdvisorError
from advisor.kinds.ncu.adapters.launches import Launch, Row, vendor_finding

NAME = "ncu-csv-details"
REQUIRED = ("ID", "Kernel Name", "Section Name", "Metric Name", "Metric Unit", "Metric Value")
IDENTITY = {"Process Name": "process_name", "Host Name": "host_name", "Context": "context", "Stream": "stream",
            "Block Size": "block_dims", "Grid Size": "grid_dims", "Device": "device", "CC": "compute_capability"}


def header_index(lines: list[str], required: tuple[str, ...] = REQUIRED) -> int | None:
    """The line holding a CSV header with every `required` column, or None."""
    for i, line in enumerate(lines):
        if line.startswith('"') and all(f'"{name}"' in line for name in required):
            return i
    return None


def csv_block(lines: list[str], start: int) -> tuple[dict[str, int], Iterator[list[str]]]:
    """The header's column positions by name, and the rows of the CSV block that starts at `start`:
    quoted lines, until the first that is not (ncu quotes every field; application output and
    ==PROF== lines are not)."""
    end = start
    while end < len(lines) and lines[end].startswith('"'):
        end += 1
    rows = csv.reader(lines[start:end])
    return {name: i for i, name in enumerate(next(rows))}, rows


def sniff(text: str) -> bool:
    return header_index(text.splitlines()[:200]) is not None


def parse(text: str, where: str) -> list[Launch]:
    lines = text.splitlines()
    start = header_index(lines)
    if start is None:
        raise AdvisorError(where, "no ncu details CSV header (\"ID\",…,\"Metric Name\",…) in it")
    column, rows = csv_block(lines, start)
    launches: dict[str, Launch] = {}
    for fields in rows:
        row = dict(zip(column, fields, strict=False))  # metric rows stop before the rule columns
        launch_id = row.get("ID", "")
        if not launch_id:
            continue
        launch = launches.get(launch_id)
        if launch is None:
            identity = {ours: row.get(theirs, "") for theirs, ours in IDENTITY.items()}
            launch = launches[launch_id] = Launch(id=launch_id, kernel=row.get("Kernel Name", ""), identity=identity)
        if row.get("Rule Name"):  # a rule row: Section Name holds the section identifier, the metric columns are empty
            launch.rules.append(vendor_finding(row["Rule Name"], row.get("Section Name", ""), row.get("Rule Type", ""),
                                               row.get("Rule Description", ""), row.get("Estimated Speedup Type", ""),
                                               row.get("Estimated Speedup")))
        elif row.get("Metric Name"):
            launch.rows.append(Row(row.get("Section Name", ""), row["Metric Name"], row.get("Metric Unit", ""),
                                   row.get("Metric Value", "")))
    return list(launches.values())
