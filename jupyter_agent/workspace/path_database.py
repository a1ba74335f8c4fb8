"""SQLite through the path gate: only a database the agent made or verified is opened.

Invariant: :func:`open_database` connects only to a regular file with one name whose header
carries our application id (or that it creates itself, ``O_EXCL``), with side files
(``-wal``, ``-shm``, ``-journal``) that are regular files too. A foreign database is refused
(:class:`~.path_files.ForeignDatabase`), named, and left alone: nothing of ours ever drops
its tables. On Linux the connection reaches the file through its folder's descriptor, so a
folder swapped for a link afterwards is not followed.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import threading
from pathlib import Path

from .path_files import (
    CLOEXEC,
    NOFOLLOW,
    READ_FLAGS,
    ForeignDatabase,
    check_regular,
    kind_of,
    read_limited,
)

SQLITE_HEADER = b"SQLite format 3\x00"


def open_database(
    folder: int,
    name: str,
    shown: str,
    *,
    application_id: int,
    create: bool,
    timeout: float,
) -> sqlite3.Connection:
    """A connection to the database ``name`` in the folder descriptor ``folder`` (see
    :meth:`~jupyter_agent.workspace.paths.Root.database`); ``shown``: its path, for messages."""
    made = False
    try:
        info = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        if not create:
            raise
        flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | NOFOLLOW | CLOEXEC
        try:
            os.close(os.open(name, flags, 0o666, dir_fd=folder))
            made = True
        except FileExistsError:  # made meanwhile by another thread or kernel
            pass
        info = os.stat(name, dir_fd=folder, follow_symlinks=False)
    if not made:
        check_database(folder, name, info, application_id, shown)
    for suffix in ("-wal", "-shm", "-journal"):
        check_side_file(folder, name + suffix, shown + suffix)
    key, folder_fd = _DATABASE_FOLDERS.acquire(folder)
    via_fd = f"/proc/self/fd/{folder_fd}"
    target = f"{via_fd}/{name}" if os.path.isdir(via_fd) else shown
    try:
        db = sqlite3.connect(
            f"{Path(target).as_uri()}?mode=rw",
            uri=True,
            timeout=timeout,
            isolation_level=None,
            factory=_FolderConnection,
        )
    except BaseException:
        _DATABASE_FOLDERS.release(key)
        raise
    db._folder = key  # let go with the connection
    if made:
        try:  # in the file's header from its first write on (before any WAL mode)
            db.execute(f"PRAGMA application_id = {int(application_id)}")
        except BaseException:
            db.close()
            raise
    return db


class _SharedFolders:
    """One descriptor per folder holding open databases, shared by their connections and
    closed with the last of them. SQLite shares a database's WAL index between the
    connections of a process and names its side files after the first connection's path,
    so every connection to a file must reach it by the same path, valid while any is open."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[tuple[int, int], list[int]] = {}  # (device, inode): [fd, users]

    def acquire(self, fd: int) -> tuple[tuple[int, int], int]:
        info = os.fstat(fd)
        key = (info.st_dev, info.st_ino)
        with self._lock:
            held = self._open.get(key)
            if held is None:
                held = self._open[key] = [os.dup(fd), 0]
            held[1] += 1
            return key, held[0]

    def release(self, key: tuple[int, int]) -> None:
        with self._lock:
            held = self._open.get(key)
            if held is None:
                return
            held[1] -= 1
            if held[1] <= 0:
                del self._open[key]
                os.close(held[0])


_DATABASE_FOLDERS = _SharedFolders()


class _FolderConnection(sqlite3.Connection):
    """A connection that lets go of the shared folder descriptor it reaches its file through."""

    _folder: tuple[int, int] | None = None

    def close(self) -> None:
        try:
            super().close()
        finally:
            key, self._folder = self._folder, None
            if key is not None:
                _DATABASE_FOLDERS.release(key)

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()


def check_database(
    folder: int, name: str, info: os.stat_result, application_id: int, shown: str
) -> None:
    """Refuse ``name`` unless it is a regular file with one name that is empty or a SQLite
    database carrying ``application_id``."""
    if not stat.S_ISREG(info.st_mode):
        raise ForeignDatabase(
            f"{shown} is {kind_of(info.st_mode)}, not a database file the agent made: it was "
            "left alone. Remove it to let the agent make its own."
        )
    if info.st_nlink > 1:
        raise ForeignDatabase(
            f"{shown} has {info.st_nlink} names (hard links): it may be another program's "
            "database, so it was left alone. Remove it to let the agent make its own."
        )
    if info.st_size == 0:
        return
    fd = os.open(name, READ_FLAGS, dir_fd=folder)
    try:
        header, _ = read_limited(check_regular(fd, shown), 100)
    finally:
        os.close(fd)
    found = int.from_bytes(header[68:72], "big") if len(header) >= 72 else None
    if not header.startswith(SQLITE_HEADER) or found != application_id:
        what = (
            "a SQLite database of another program"
            if header.startswith(SQLITE_HEADER)
            else ("not a SQLite database")
        )
        raise ForeignDatabase(
            f"{shown} is {what}, not one the agent made: it was left alone (nothing in it was "
            "changed). Remove it to let the agent make its own."
        )


def check_side_file(folder: int, name: str, shown: str) -> None:
    """Refuse a side file SQLite would use that is not a regular file with one name."""
    try:
        info = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
        what = (
            kind_of(info.st_mode) if not stat.S_ISREG(info.st_mode) else "a file of several names"
        )
        raise ForeignDatabase(
            f"{shown} is {what}, where SQLite keeps a database's changes: it was left "
            "alone, and so was the database. Remove it to let the agent use its own."
        )
