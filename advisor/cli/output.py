"""Where a command's document goes: the format from -o / --format, checked before any work, and the
rendered bytes written to the file (with its chart folder) or stdout."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from pathlib import Path


def output_format(args: argparse.Namespace, inputs: Iterable[Path], example: str,
                  protected: Iterable[Path] = ()) -> str:
    """-o and --format checked before any analysis (report.output.checked_format, which the notebook API's
    `save` makes too): neither the output nor its chart folder is an input, inside a folder read, or inside
    `protected`."""
    from advisor.report.output import checked_format

    return checked_format(args.output, args.format, inputs, example, protected)


def emit(args: argparse.Namespace, rendered) -> None:
    """The rendered document to -o (charts first, all or nothing) or to stdout; a note names the files in
    the chart folder that advisor did not write and so left alone."""
    from advisor.report.output import write_report

    if args.output is None:
        sys.stdout.buffer.write(rendered.main)
        sys.stdout.flush()
        return
    result = write_report(args.output, rendered.main, rendered.files, rendered.folder)
    note = result.note() if result is not None else None
    if note and not getattr(args, "quiet", False):
        print(f"advisor: note: {note}", file=sys.stderr)
