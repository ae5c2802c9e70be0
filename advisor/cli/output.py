"""Where a command's document goes: the format from -o / --format, checked before any work, and the
rendered bytes written to the file (with its chart folder) or stdout."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from pathlib import Path


def output_format(args: argparse.Namespace, inputs: Iterable[Path], example: str) -> str:
    """The format to render, checked before any analysis: -o and --format agree, a PDF has a file to go
    to (`example` is the file name the error suggests), the folder exists and -o is not an input."""
    from advisor.core.errors import AdvisorError
    from advisor.report.output import check_output, format_for

    fmt = format_for(args.output, args.format)
    if fmt == "pdf" and args.output is None:
        raise AdvisorError("-o", f"a PDF needs an output file: -o {example}")
    if args.output is not None:
        check_output(args.output, inputs)
    return fmt


def emit(args: argparse.Namespace, rendered) -> None:
    """The rendered document to -o (charts first, atomically) or to stdout."""
    from advisor.report.output import write_report

    if args.output is None:
        sys.stdout.buffer.write(rendered.main)
        sys.stdout.flush()
    else:
        write_report(args.output, rendered.main, rendered.files, rendered.folder)
