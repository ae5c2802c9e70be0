"""Where a command's document goes: the format from -o / --format, checked before any work, and the
rendered bytes written to the file (with its chart folder) or stdout."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from pathlib import Path


def output_format(args: argparse.Namespace, inputs: Iterable[Path], example: str,
                  protected: Iterable[Path] = ()) -> str:
    """The format to render, checked before any analysis: -o and --format agree, a PDF has a file to go
    to (`example` is the file name the error suggests), -o is a regular file or a new name in an existing
    folder, and neither it nor its chart folder is an input, inside a folder read, or inside `protected`."""
    from advisor.core.errors import AdvisorError
    from advisor.report.output import check_output, format_for
    from advisor.report.render import charts_folder

    fmt = format_for(args.output, args.format)
    if fmt == "pdf" and args.output is None:
        raise AdvisorError("-o", f"a PDF needs an output file: -o {example}")
    if args.output is not None:
        check_output(args.output, inputs, charts_folder(args.output) if fmt in ("md", "html") else None, protected)
    return fmt


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
