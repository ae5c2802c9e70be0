"""Writing results: atomically (temporary file in the target folder, then rename), so a failed
run leaves nothing behind and an earlier report is never half-overwritten."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from advisor.core.errors import AdvisorError
from advisor.core.files import write_atomic

FORMATS = {".md": "md", ".markdown": "md", ".json": "json", ".html": "html", ".htm": "html", ".pdf": "pdf"}


def format_for(path: Path | None, explicit: str | None) -> str:
    """The format from -o's extension, or --format; the two must agree (no Markdown in a .pdf)."""
    if path is None:
        return explicit or "md"
    found = FORMATS.get(path.suffix.lower())
    if explicit:
        if found is not None and found != explicit:
            raise AdvisorError(str(path), f"--format {explicit} does not match the extension {path.suffix}")
        return explicit
    if found is None:
        raise AdvisorError(str(path), f"cannot tell the output format from '{path.suffix or 'no extension'}'; "
                                      "use .md, .json, .html or .pdf, or --format")
    return found


def check_output(output: Path, inputs: Iterable[Path]) -> None:
    """Before any work: the folder must exist, and the output must not be one of the inputs."""
    folder = output.parent if str(output.parent) else Path(".")
    if not folder.is_dir():
        raise AdvisorError(str(output), f"folder {folder} does not exist")
    if output.is_dir():
        raise AdvisorError(str(output), "is a folder; give a file name such as report.md")
    for source in inputs:
        try:
            same = output.exists() and source.exists() and output.resolve() == source.resolve()
        except OSError:
            same = False
        if same:
            raise AdvisorError(str(output), "-o names an input file; refusing to overwrite it")


def write_report(path: Path, main: bytes, files: dict[str, bytes], folder: str | None) -> None:
    """The chart files first, then the report that links them; stale charts of earlier runs are
    removed. The chart folder is refused if it is a symlink, so nothing is written outside it."""
    if folder:
        target = path.parent / folder
        if target.is_symlink() or (target.exists() and not target.is_dir()):
            raise AdvisorError(str(target), "exists and is not a plain folder; refusing to write charts into it")
        target.mkdir(exist_ok=True)
        for relative, data in files.items():
            inner = (path.parent / relative).parent
            if inner != target:  # a subfolder (the fleet overview's reports/): made inside the chart folder only
                if any(p.is_symlink() for p in (inner, *inner.parents) if p != target and target in p.parents):
                    raise AdvisorError(str(inner), "is a symlink; refusing to write reports through it")
                inner.mkdir(parents=True, exist_ok=True)
            write_atomic(path.parent / relative, data)
        _remove_stale(target, {path.parent / relative for relative in files})
    write_atomic(path, main)


STALE_SUFFIXES = (".png", ".md", ".html")  # what renders write into a chart folder


def _remove_stale(target: Path, written: set[Path]) -> None:
    """Files of the kinds this render writes that an earlier one left in the chart folder or the
    subfolders this one wrote into (a fleet overview's reports/ of profiles no longer among the top
    offenders, with their chart folders). Another format's files sharing the folder (fleet.md and
    fleet.html both use fleet_files/) are left alone; nothing is touched through a symlink."""
    import shutil

    folders = {p.parent for p in written} | {target}
    suffixes = {p.suffix for p in written} & set(STALE_SUFFIXES)
    writes_folders = any(f.name.endswith("_files") for f in folders - {target})
    for folder in sorted(folders):
        for old in folder.iterdir():
            if old.is_symlink() or old in written or old in folders:
                continue
            if old.is_file() and old.suffix in suffixes:
                old.unlink()
            elif writes_folders and folder != target and old.is_dir() and old.name.endswith("_files"):
                shutil.rmtree(old)
