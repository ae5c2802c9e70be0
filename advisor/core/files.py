"""Writing files whole or not at all, only where advisor may: what reports, rule docs and the fleet store
all need.

Two promises hold here for every command: advisor writes only regular files at names it was asked for (or
in folders it owns), and a failed write leaves nothing behind. A name is written by a temporary file beside
it renamed over it, so nothing is ever written *through* the name: a device, FIFO or socket there is
refused rather than replaced, and a symlink in a folder advisor owns is refused rather than followed.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from advisor.core.errors import AdvisorError

# What a temporary file of `write_atomic` is called: `.<name>.<random>.tmp`; the name is shortened so the
# temporary name fits wherever the final one does (a 255-byte name must not fail on its temporary).
TEMPORARY_PREFIX_CHARS = 40
TEMPORARY_SUFFIX = ".tmp"


def temporary_prefix(name: str) -> str:
    return f".{name[:TEMPORARY_PREFIX_CHARS]}."


def os_problem(exc: OSError) -> str:
    """An operating-system error as what it is ("permission denied", "no space left on device")."""
    if exc.errno == errno.ENAMETOOLONG:
        return "file name too long for the file system"
    reason = exc.strerror or str(exc)
    return reason[:1].lower() + reason[1:]


@contextmanager
def os_errors(path: Path | str, doing: str = "cannot write") -> Iterator[None]:
    """An OSError as one line naming `path` and what the system said."""
    try:
        yield
    except AdvisorError:
        raise
    except OSError as exc:
        raise AdvisorError(str(path), f"{doing}: {os_problem(exc)}") from None


def describe_node(mode: int) -> str:
    """What a file system entry that is not a regular file is, as the errors name it."""
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symlink")):
        if test(mode):
            return name
    return "not a regular file"


def is_regular(mode: int) -> bool:
    return stat.S_ISREG(mode)


def existing_folder(folder: Path) -> bool:
    """Whether `folder` exists (False when missing); anything there but a real folder, a symlink included,
    is refused: advisor writes into no folder it would reach through a link."""
    try:
        mode = os.lstat(folder).st_mode
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise AdvisorError(str(folder), f"cannot use the folder: {os_problem(exc)}") from None
    if not stat.S_ISDIR(mode):
        raise AdvisorError(str(folder), f"is {describe_node(mode)}, not a plain folder; refusing to write into it")
    return True


def check_replaceable(path: Path) -> None:
    """`path` is a new name or a regular file (not followed: a symlink is refused too)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise AdvisorError(str(path), f"cannot write: {os_problem(exc)}") from None
    if not stat.S_ISREG(mode):
        raise AdvisorError(str(path), f"is {describe_node(mode)}; advisor writes only regular files")


def check_name_length(path: Path) -> None:
    """A name the folder's file system cannot hold, as one line before any work."""
    folder = path.parent if str(path.parent) else Path(".")
    try:
        limit = os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError):
        limit = 255
    size = len(os.fsencode(path.name))
    if size > limit:
        shown = str(path) if len(str(path)) <= 80 else str(path)[:60] + "…" + str(path)[-12:]
        raise AdvisorError(shown, f"file name is {size} bytes; the file system allows {limit}")


def output_target(path: Path) -> Path:
    """The file an output named `path` is written to. The user named it, so a symlink there is followed to
    its target (its folder must exist); whatever it ends at must be a regular file or a new name."""
    check_name_length(path)
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    check_replaceable(target)
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise AdvisorError(str(path), f"folder {folder} does not exist")
    return target


def _stage(path: Path, data: bytes, durable: bool) -> Path:
    """`data` in a new temporary file beside `path` (O_EXCL: never an existing file)."""
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise AdvisorError(str(path), f"folder {folder} does not exist")
    with os_errors(path):
        fd, tmp = tempfile.mkstemp(prefix=temporary_prefix(path.name), suffix=TEMPORARY_SUFFIX, dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise AdvisorError(str(path), f"cannot write: {os_problem(exc)}") from None
        raise
    return Path(tmp)


def _commit(staged: Path, path: Path, durable: bool) -> None:
    try:
        check_replaceable(path)  # again just before the rename: what is there now, not at the start
        os.replace(staged, path)
        if durable and hasattr(os, "O_DIRECTORY"):  # the rename itself is on the disk only once the folder is
            folder_fd = os.open(path.parent if str(path.parent) else ".", os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.fsync(folder_fd)
            finally:
                os.close(folder_fd)
    except BaseException as exc:
        staged.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise AdvisorError(str(path), f"cannot write: {os_problem(exc)}") from None
        raise


def write_atomic(path: Path, data: bytes, durable: bool = False) -> None:
    """A temporary file beside `path`, renamed over it: a reader (or a killed writer) never sees half a
    file. `durable` also flushes it to the disk before the rename, and the folder (the rename) after it,
    for what must survive the machine going down (a fleet store's commit records), not only the process."""
    check_replaceable(path)
    _commit(_stage(path, data, durable), path, durable)


class FileSet:
    """Several files written together or not at all: each is staged beside its name first, and only when
    all are staged are they renamed into place (in the order added). Folders it made are removed again
    when it is abandoned, so a failed write (disk full, a refused name) leaves nothing behind."""

    def __init__(self) -> None:
        self._staged: list[tuple[Path, Path]] = []
        self._made: list[Path] = []

    def make_folder(self, folder: Path) -> None:
        """`folder`, made when missing (with any missing folders above it); an existing one must be a real
        folder, never a symlink."""
        if existing_folder(folder):
            return
        if folder.parent != folder:
            self.make_folder(folder.parent)
        with os_errors(folder, "cannot make the folder"):
            folder.mkdir()
        self._made.append(folder)

    def add(self, path: Path, data: bytes) -> None:
        check_replaceable(path)
        self._staged.append((_stage(path, data, durable=False), path))

    def commit(self) -> None:
        staged, self._staged = self._staged, []
        for index, (temporary, path) in enumerate(staged):
            try:
                _commit(temporary, path, durable=False)
            except BaseException:
                for rest, _ in staged[index + 1:]:
                    rest.unlink(missing_ok=True)
                raise
        self._made = []

    def abandon(self) -> None:
        for temporary, _ in self._staged:
            temporary.unlink(missing_ok=True)
        self._staged = []
        for folder in reversed(self._made):
            with suppress(OSError):
                folder.rmdir()  # only when empty: nothing of anyone else's goes with it
        self._made = []

    def __enter__(self) -> FileSet:
        return self

    def __exit__(self, kind, value, traceback) -> None:
        if kind is not None:
            self.abandon()
