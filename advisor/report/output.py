"""Writing results: every file staged beside its name, then renamed into place, so a failed run leaves
nothing behind and an earlier report is never half-overwritten; only regular files at names advisor was
asked for, and in a chart folder only what advisor wrote there is ever removed (core/owned.py)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from advisor.core.errors import AdvisorError
from advisor.core.files import check_name_length, existing_folder, output_target, write_atomic
from advisor.core.owned import FolderResult, write_owned

FORMATS = {".md": "md", ".markdown": "md", ".json": "json", ".html": "html", ".htm": "html", ".pdf": "pdf"}


def format_for(path: Path | None, explicit: str | None, flag: str = "--format") -> str:
    """The format from -o's extension, or `flag` (--format; `format=` in the notebook API); the two must agree
    (no Markdown in a .pdf)."""
    if path is None:
        return explicit or "md"
    found = FORMATS.get(path.suffix.lower())
    if explicit:
        if found is not None and found != explicit:
            raise AdvisorError(str(path), f"{flag} {explicit} does not match the extension {path.suffix}")
        return explicit
    if found is None:
        raise AdvisorError(str(path), f"cannot tell the output format from '{path.suffix or 'no extension'}'; "
                                      f"use .md, .json, .html or .pdf, or {flag}")
    return found


def charts_folder(output: Path) -> str:
    """The folder a Markdown or HTML report's chart files go to, beside it."""
    return f"{output.stem}_files"


def checked_format(output: Path | None, explicit: str | None, read: Iterable[Path], example: str,
                   protected: Iterable[Path] = (), flag: str = "--format") -> str:
    """The format to render, checked before any work: the one check of an output, made by the CLI's -o and
    the notebook API's `save` alike. -o and --format agree, a PDF has a file to go to (`example` is the file
    name the error suggests), and `check_output` holds for the output and its chart folder."""
    fmt = format_for(output, explicit, flag)
    if fmt == "pdf" and output is None:
        raise AdvisorError("-o", f"a PDF needs an output file: -o {example}")
    if output is not None:
        check_output(output, read, charts_folder(output) if fmt in ("md", "html") else None, protected)
    return fmt


def check_output(output: Path, inputs: Iterable[Path], chart_folder: str | None = None,
                 protected: Iterable[Path] = ()) -> None:
    """Before any work: the output is a regular file or a new name in an existing folder (a symlink the user
    named is followed to its target), its chart folder (when it has one) a real folder or a new name, and
    neither is, or lies inside, anything the run reads (`inputs`: files, or folders of rank or profile files,
    any of which may be read now or by the next run) or a folder advisor keeps (`protected`: a fleet store)."""
    check_name_length(output)
    if output.is_dir() and not output.is_symlink():
        raise AdvisorError(str(output), "is a folder; give a file name such as report.md")
    target = output_target(output)
    charts = target.parent / chart_folder if chart_folder else None
    if charts is not None:
        check_name_length(charts)
        existing_folder(charts)
    written = _resolved(target)
    for source in inputs:
        read = _resolved(source)
        if written == read:
            raise AdvisorError(str(output), "names an input file; refusing to overwrite it")
        if source.is_dir() and read in written.parents:
            raise AdvisorError(str(output), f"lies inside {source}, a folder this run reads; write the output "
                                            "elsewhere")
        if charts is not None and (_resolved(charts) == read or _resolved(charts) in read.parents):
            raise AdvisorError(str(output), f"its chart folder {charts} holds an input ({source}); choose another "
                                            "output name")
    for folder in protected:
        kept = _resolved(folder)
        if written == kept or kept in written.parents:
            raise AdvisorError(str(output), f"lies inside {folder}, which advisor keeps; write the output elsewhere")


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a symlink loop: compared as written
        return path.absolute()


def write_report(path: Path, main: bytes, files: dict[str, bytes], folder: str | None) -> FolderResult | None:
    """The report and its chart folder's files (paths relative to the report's folder), all or nothing.
    Files an earlier render of the same output wrote there and this one does not are removed; anything
    else in the folder is left alone and named in the result's note."""
    target = output_target(path)
    if not folder:
        write_atomic(target, main)
        return None
    charts = target.parent / folder
    prefix = f"{folder}/"
    if any(not name.startswith(prefix) for name in files):
        raise AdvisorError(str(path), "a chart file outside the chart folder")  # a renderer bug, never input
    return write_owned(charts, target.name, {name[len(prefix):]: data for name, data in files.items()},
                       main=(target, main))
