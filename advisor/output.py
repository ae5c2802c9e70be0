"""Writing results: atomically (temporary file in the target folder, then rename), so a failed
run leaves nothing behind and an earlier report is never half-overwritten."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from advisor.errors import AdvisorError

FORMATS = {".md": "md", ".markdown": "md", ".json": "json", ".html": "html", ".htm": "html", ".pdf": "pdf"}


def format_for(path: Path | None, explicit: str | None) -> str:
    if explicit:
        return explicit
    if path is None:
        return "md"
    found = FORMATS.get(path.suffix.lower())
    if found is None:
        raise AdvisorError(str(path), f"cannot tell the output format from '{path.suffix or 'no extension'}'; "
                                      "use .md, .json, .html or .pdf, or --format")
    return found


def refuse_overwriting_inputs(output: Path, inputs: Iterable[Path]) -> None:
    for source in inputs:
        try:
            same = output.exists() and source.exists() and output.resolve() == source.resolve()
        except OSError:
            same = False
        if same:
            raise AdvisorError(str(output), "-o names an input file; refusing to overwrite it")


def write_atomic(path: Path, data: bytes) -> None:
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise AdvisorError(str(path), f"folder {folder} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise AdvisorError(str(path), f"cannot write: {exc.strerror or exc}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
