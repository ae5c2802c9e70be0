"""Writing a file whole or not at all: what reports, rule docs and the fleet store all need."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from advisor.core.errors import AdvisorError


def write_atomic(path: Path, data: bytes, durable: bool = False) -> None:
    """A temporary file beside `path`, renamed over it: a reader (or a killed writer) never sees half a
    file. `durable` also flushes it to the disk before the rename, and the folder (the rename) after it,
    for what must survive the machine going down (a fleet store's commit records), not only the process."""
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise AdvisorError(str(path), f"folder {folder} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
        if durable and hasattr(os, "O_DIRECTORY"):  # the rename itself is on the disk only once the folder is
            folder_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.fsync(folder_fd)
            finally:
                os.close(folder_fd)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise AdvisorError(str(path), f"cannot write: {exc.strerror or exc}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
