"""Files as the path gate reads and writes them: regular files only, read within bounds,
replaced atomically.

Invariants kept here (for :mod:`.paths`, which finds the files):

- **Only regular files.** A descriptor is checked with ``fstat`` before a byte is read or
  written (:func:`check_regular`): a FIFO, a device or a socket planted where a file should
  be cannot hang the kernel or feed it endless data; reads are bounded by ``limit``.
- **Writes are atomic** (:func:`replace_atomically`): a temporary file beside the target,
  then a rename in the same folder descriptor; readers see the old file or the new one, and
  an error leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Callable

CLOEXEC = getattr(os, "O_CLOEXEC", 0)
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
NONBLOCK = getattr(os, "O_NONBLOCK", 0)
DIRECTORY = getattr(os, "O_DIRECTORY", 0)
DIR_FLAGS = os.O_RDONLY | DIRECTORY | NOFOLLOW | CLOEXEC
READ_FLAGS = os.O_RDONLY | NOFOLLOW | NONBLOCK | CLOEXEC


class PathRefused(OSError):
    """A path the gate will not open, with a message that names it and says why.

    An :class:`OSError`, so code that already handles a missing or unreadable file handles
    this one the same way."""

    def __init__(self, message: str, code: int = errno.EPERM) -> None:
        super().__init__(code, message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class MovedUnderfoot(PathRefused):
    """A folder on the way became a link or a file while it was being opened."""


class NotRegularFile(PathRefused):
    """Not a regular file: a folder, a FIFO, a device, a socket."""

    def __init__(self, message: str, what: str) -> None:
        super().__init__(message)
        self.what = what
        """What it is instead, in words ("a folder", "a FIFO (named pipe)", "a device"…)."""


class ForeignDatabase(PathRefused):
    """A database file the agent did not make: left alone."""


class FileTooLarge(OSError):
    """A file larger than the bytes a reader may take."""

    def __init__(self, message: str) -> None:
        super().__init__(errno.EFBIG, message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class Entry:
    """A folder's entry: its name and its status as found (a link is a link)."""

    __slots__ = ("info", "name")

    def __init__(self, name: str, info: os.stat_result) -> None:
        self.name = name
        self.info = info

    def is_dir(self) -> bool:
        return stat.S_ISDIR(self.info.st_mode)

    def is_file(self) -> bool:
        return stat.S_ISREG(self.info.st_mode)

    def is_link(self) -> bool:
        return stat.S_ISLNK(self.info.st_mode)

    def __repr__(self) -> str:
        return f"Entry({self.name!r})"


# --- checking and writing ---------------------------------------------------------------


def check_regular(fd: int, where: str | Callable[[], str], *, single: bool = False) -> int:
    """``fd`` if it is a regular file (with one name, if ``single``); closed and refused
    otherwise. Clears the non-blocking flag it was opened with. ``where``: the path, or
    what makes it (called only for a message)."""
    try:
        info = os.fstat(fd)
        regular = stat.S_ISREG(info.st_mode)
        if regular and not (single and info.st_nlink > 1):
            if NONBLOCK and hasattr(os, "set_blocking"):
                os.set_blocking(fd, True)
            return fd
        shown = where if isinstance(where, str) else where()
        if not regular:
            what = kind_of(info.st_mode)
            raise NotRegularFile(f"Refused {shown}: it is {what}, not a regular file.", what)
        raise PathRefused(
            f"Refused {shown}: it has {info.st_nlink} names (hard links), so writing it "
            "would also change another file."
        )
    except BaseException:
        os.close(fd)
        raise


def kind_of(mode: int) -> str:
    """What a file of ``mode`` is, in words."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISLNK(mode):
        return "a link"
    return "a special file"


def replace_atomically(
    parent: int, name: str, data: bytes, *, durable: bool, mode: int | None, shown: str
) -> None:
    """Replace ``name`` in the folder ``parent`` with ``data``: written to a temporary file
    beside it (with ``mode``, or the old file's bits), then renamed over it."""
    try:
        old = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        kept: int | None = None
    else:
        if stat.S_ISDIR(old.st_mode):
            raise IsADirectoryError(errno.EISDIR, f"{shown} is a folder")
        kept = stat.S_IMODE(old.st_mode) if stat.S_ISREG(old.st_mode) else None
    if mode is not None:
        kept = mode
    while True:
        tmp = f".{name}.{secrets.token_hex(4)}.tmp"
        try:
            fd = os.open(
                tmp,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | CLOEXEC,
                0o666 if mode is None else mode,
                dir_fd=parent,
            )
            break
        except FileExistsError:
            continue
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            if durable:
                os.fsync(f.fileno())
            if kept is not None:
                os.fchmod(f.fileno(), kept)
        os.replace(tmp, name, src_dir_fd=parent, dst_dir_fd=parent)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=parent)
        raise


def read_regular(path: str | os.PathLike[str], limit: int | None) -> tuple[bytes, bool]:
    """At most ``limit`` bytes of the regular file ``path`` wherever it is, and whether
    there were more: for files a user names in code (a replay script, a rules file) or a
    library's source. Never blocks on a FIFO or a device (refused)."""
    shown = os.fspath(path)
    fd = os.open(shown, os.O_RDONLY | NONBLOCK | CLOEXEC)
    check_regular(fd, shown)
    try:
        return read_limited(fd, limit)
    finally:
        os.close(fd)


def read_limited(fd: int, limit: int | None, *, start: int = 0) -> tuple[bytes, bool]:
    """At most ``limit`` bytes of ``fd`` from ``start``, and whether there were more."""
    try:
        expected = max(0, os.fstat(fd).st_size - start)
    except OSError:
        expected = 0
    chunks: list[bytes] = []
    left = None if limit is None else limit + 1
    offset = start
    while left is None or left > 0:
        size = expected + 1 if chunks == [] else 1 << 16  # the file's size, then what it grew
        if left is not None:
            size = min(size, left)
        chunk = os.pread(fd, size, offset) if hasattr(os, "pread") else _read_at(fd, size, offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
        if left is not None:
            left -= len(chunk)
        if len(chunk) < size:
            break  # the end of the file
    data = b"".join(chunks) if len(chunks) != 1 else chunks[0]
    if limit is not None and len(data) > limit:
        return data[:limit], True
    return data, False


def _read_at(fd: int, size: int, offset: int) -> bytes:  # pragma: no cover - no pread: Windows
    os.lseek(fd, offset, os.SEEK_SET)
    return os.read(fd, size)
