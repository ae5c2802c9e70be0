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
from advisor.profilers.ncu.adapters.launches import Launch, Row, vendor_finding

NAME = "ncu-csv-details"
REQUIRED = ("ID", "Kernel Name", "Section Name", "Metric Name", "Metric Unit", "Metric Value")
IDENTITY = {"Process Name": "process_name", "Host Name": "host_name", "Context": "context", "Stream": "stream",
            "Block Size": "block_dims", "Grid Size": "grid_dims", "Device": "device", "CC": "compute_capability"}


def header_index(lines: list[str], required: tuple[str, ...] = REQUIRED) -> int | None:
    """The line holding a CSV header with every `required` column, or None."""
    return next((i for i, line in enumerate(lines) if _is_header(line, required)), None)


def _is_header(line: str, required: tuple[str, ...]) -> bool:
    return line.startswith('"') and all(f'"{name}"' in line for name in required)


def csv_block(lines: list[str], start: int) -> tuple[dict[str, int], Iterator[list[str]]]:
    """The header's column positions by name, and the rows of the CSV block that starts at `start`:
    quoted lines, until the first that is not (ncu quotes every field; application output and
    ==PROF== lines are not)."""
    end = start
    while end < len(lines) and lines[end].startswith('"'):
        end += 1
    rows = _rows(lines[start:end], " ".join(lines[start][:60].split()))
    return {name: i for i, name in enumerate(next(rows))}, rows


def _rows(lines: list[str], where: str) -> Iterator[list[str]]:
    """csv.reader's rows, its errors (a field over its 128 KiB limit, a NUL byte) as one line."""
    reader = csv.reader(lines)
    while True:
        try:
            yield next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise AdvisorError(f"CSV line {reader.line_num}", f"unreadable ({exc}); no ncu field is that long "
                                                              "or holds such characters") from None


def header_lines(lines: list[str], required: tuple[str, ...] = REQUIRED) -> list[int]:
    """Every line holding the CSV header: one per ncu run whose output the file holds."""
    return [i for i, line in enumerate(lines) if _is_header(line, required)]


def sniff(text: str) -> bool:
    return header_index(text.splitlines()[:200]) is not None


def parse(text: str, where: str) -> list[Launch]:
    """Every launch of every run in the file. A run's rows of one launch are contiguous; a launch ID seen
    again after another launch began (a second run appended, with or without its own header) starts a new
    launch, kept apart as the raw reader keeps rows apart, so two runs are never merged into one."""
    lines = text.splitlines()
    starts = header_lines(lines)
    if not starts:
        raise AdvisorError(where, "no ncu details CSV header (\"ID\",…,\"Metric Name\",…) in it")
    launches: list[Launch] = []
    for start in starts:
        try:
            launches += _block(lines, start)
        except AdvisorError as error:
            raise AdvisorError(where, f"{error.where}: {error.problem}") from None
    return launches


def _block(lines: list[str], start: int) -> list[Launch]:
    column, rows = csv_block(lines, start)
    launches: list[Launch] = []
    for fields in rows:
        row = dict(zip(column, fields, strict=False))  # metric rows stop before the rule columns
        launch_id = row.get("ID", "")
        if not launch_id or fields == list(column):  # a repeated header line
            continue
        launch = launches[-1] if launches and launches[-1].id == launch_id else None
        if launch is None:
            identity = {ours: row.get(theirs, "") for theirs, ours in IDENTITY.items()}
            launch = Launch(id=launch_id, kernel=row.get("Kernel Name", ""), identity=identity)
            launches.append(launch)
        if row.get("Rule Name"):  # a rule row: Section Name holds the section identifier, the metric columns are empty
            launch.rules.append(vendor_finding(row["Rule Name"], row.get("Section Name", ""), row.get("Rule Type", ""),
                                               row.get("Rule Description", ""), row.get("Estimated Speedup Type", ""),
                                               row.get("Estimated Speedup")))
        elif row.get("Metric Name"):
            launch.rows.append(Row(row.get("Section Name", ""), row["Metric Name"], row.get("Metric Unit", ""),
                                   row.get("Metric Value", "")))
    return launches
