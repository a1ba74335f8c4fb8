"""Writes that land where they were checked.

The sandbox checks a path, then a tool writes it. Between the two, another process could
turn a folder on the way into a symbolic link to somewhere else, and a write by path
would follow it (time of check to time of use). So the file tools write through folder
descriptors instead: from the workspace's root, each folder on the way is opened beneath
the one before with ``O_NOFOLLOW | O_DIRECTORY``, and the file is created, replaced or
removed relative to the last one (``dir_fd``). A link that appears on the way makes the
write fail; it never follows it. The root itself is opened by its resolved path once.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
SUPPORTED = os.open in os.supports_dir_fd and os.replace in os.supports_dir_fd
"""Whether this platform can write beneath folder descriptors (Linux, macOS)."""


class MovedUnderfoot(OSError):
    """A folder on the way is no longer a folder (a link, a file) since it was checked."""


@contextlib.contextmanager
def folder(root: Path, parts: Sequence[str], *, create: bool = False) -> Iterator[int]:
    """A descriptor of ``root/parts…``, each folder opened beneath the one before without
    following links; missing folders are made when ``create``."""
    fd = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        for part in parts:
            if part in ("", ".", "..") or "/" in part:
                raise MovedUnderfoot(errno.EINVAL, f"not a plain folder name: {part!r}")
            try:
                step = _open_step(part, fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=fd)
                step = _open_step(part, fd)
            os.close(fd)
            fd = step
        yield fd
    finally:
        os.close(fd)


def _open_step(part: str, fd: int) -> int:
    try:
        return os.open(part, _DIR_FLAGS, dir_fd=fd)
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
        try:
            link = stat.S_ISLNK(os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode)
        except OSError:
            link = True  # gone meanwhile: it is changing under us
        if link or exc.errno == errno.ELOOP:
            raise MovedUnderfoot(exc.errno, f"{part!r} is a link now") from None
        raise NotADirectoryError(errno.ENOTDIR, f"{part!r} is a file, not a folder") from None


def write_bytes(
    root: Path,
    parts: Sequence[str],
    data: bytes,
    *,
    make_folders: bool = False,
    durable: bool = True,
    mode: int | None = None,
) -> None:
    """Replace ``root/parts…`` with ``data`` atomically (a temporary file beside it, then a
    rename), keeping an existing file's permission bits; readers see the old or the new
    file, never a mix, and an error leaves nothing behind. ``durable``: the data reaches
    the disk (fsync) before the rename. ``mode``: the new file's permission bits instead,
    which the temporary file has from its creation on (a secret is never readable by
    others, not even for a moment)."""
    *folders, name = parts
    with folder(root, folders, create=make_folders) as parent:
        try:
            old = os.stat(name, dir_fd=parent, follow_symlinks=False)
            kept: int | None = stat.S_IMODE(old.st_mode) if stat.S_ISREG(old.st_mode) else None
        except FileNotFoundError:
            kept = None
        if mode is not None:
            kept = mode
        while True:
            tmp = f".{name}.{secrets.token_hex(4)}.tmp"
            try:
                fd = os.open(
                    tmp,
                    os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
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


def unlink(root: Path, parts: Sequence[str]) -> None:
    """Remove the file (or link) ``root/parts…``."""
    *folders, name = parts
    with folder(root, folders) as parent:
        os.unlink(name, dir_fd=parent)
