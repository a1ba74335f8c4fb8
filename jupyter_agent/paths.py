"""The path gate: every file the agent or its own machinery opens is opened here.

A :class:`Root` is a folder everything is opened beneath: the workspace (for the file and
notebook tools, project instructions, ``%agent remember``), the agent's own state folder
``.jupyter_agent/`` (sessions, their search index, settings), the user's own folder
``~/.jupyter_agent/`` (settings, credentials, trusted folders). The rules it keeps, whoever
asks:

- **Beneath the root, by construction.** The root is opened once, by its resolved path, and
  pinned by that descriptor. Every path below it is walked one component at a time with
  ``openat(…, O_NOFOLLOW)`` relative to the folder before, so a link swapped in on the way is
  seen, never followed blindly. A link is followed only as ``openat2(RESOLVE_BENEATH)`` would:
  when the root allows links at all and the link's target stays beneath the root. A link
  that leads out, ``..`` above the root, or an absolute path elsewhere is refused
  (:class:`PathRefused`, which names the path and why).
- **The agent's own state admits no link** (``links="none"``), symbolic or hard: a cloned
  repository that plants ``.jupyter_agent/sessions`` or ``index.sqlite`` as a link, or a
  session's file as a second name of someone else's file, gets a refusal, not our writes or
  that file's content.
- **Only regular files.** Files are opened non-blocking and checked with ``fstat`` before a
  byte is read or written: a FIFO, a device or a socket planted where a file should be cannot
  hang the kernel or feed it endless data. Reads can be bounded (``limit``).
- **Writes are atomic** (a temporary file beside the target, then a rename in the same folder
  descriptor: readers see the old file or the new one, an error leaves nothing behind), and
  **appends only go to a file with one name**: a hard link would write someone else's file.
- **SQLite opens only a database it made or verified** (:meth:`Root.database`): a regular file
  with one name whose header carries our application id and whose side files (``-wal``,
  ``-shm``, ``-journal``) are regular files too, or a file it creates itself (``O_EXCL``). A
  foreign database is refused, named, and left alone: nothing of ours ever drops its tables.

``tests/test_path_gate.py`` lists every call in the package that opens, lists, creates or
removes a file and fails on any outside this module that is not on its short allow-list.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import sqlite3
import stat
import threading
import weakref
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import BinaryIO, Literal

LinkPolicy = Literal["beneath", "none"]
"""``beneath``: a link is followed when its target stays beneath the root; ``none``: every
link is refused (the agent's own state)."""

MAX_LINKS = 40
"""Links followed in one path at most (Linux's own limit for a path lookup)."""
SQLITE_HEADER = b"SQLite format 3\x00"

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_DIR_FLAGS = os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC
_READ_FLAGS = os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC

SUPPORTED = os.open in os.supports_dir_fd and os.replace in os.supports_dir_fd
"""Whether this platform opens beneath folder descriptors (Linux, macOS)."""


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


class Root:
    """A folder that files are opened beneath (see the module's text).

    >>> workspace = Root("~/project")
    >>> workspace.read("data/sales.csv", limit=1 << 20)
    """

    def __init__(self, folder: str | os.PathLike[str], *, links: LinkPolicy = "beneath") -> None:
        self.path = Path(os.path.abspath(os.path.expanduser(os.fspath(folder))))
        """The folder as given (absolute)."""
        self.real = Path(os.path.realpath(self.path))
        """The folder as resolved when the root was opened."""
        self.links: LinkPolicy = links
        fd = os.open(self.real, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
        self._fd = fd
        self._closer = weakref.finalize(self, os.close, fd)

    @classmethod
    def _pinned(cls, fd: int, path: Path, real: Path, links: LinkPolicy) -> Root:
        root = cls.__new__(cls)
        root.path, root.real, root.links, root._fd = path, real, links, fd
        root._closer = weakref.finalize(root, os.close, fd)
        return root

    def __repr__(self) -> str:
        return f"Root({str(self.real)!r}, links={self.links!r})"

    def close(self) -> None:
        """Let the folder go (also done when the root is garbage collected)."""
        self._closer()

    # --- naming ------------------------------------------------------------------------

    def parts(self, path: str | os.PathLike[str] | Sequence[str]) -> tuple[str, ...]:
        """``path`` as names beneath the root: relative to it, or absolute inside it (as given
        or as resolved). ``..`` is taken lexically and may not climb above the root."""
        if not isinstance(path, (str, os.PathLike)):
            return _clean(list(path), self)
        text = os.fspath(path)
        if "\0" in text:
            raise PathRefused(f"Refused {text!r}: the path contains a NUL byte.", errno.EINVAL)
        if os.path.isabs(text):
            lexical = os.path.normpath(text)
            for base in (self.real, self.path):
                rel = _relative_to(lexical, os.fspath(base))
                if rel is not None:
                    return rel
            raise PathRefused(f"Refused {text}: it is outside {self.real}.")
        return _clean(text.split(os.sep), self)

    def absolute(self, parts: Sequence[str]) -> Path:
        """Where ``parts`` lie, as a path (for messages and for programs given a path)."""
        return self.real.joinpath(*parts)

    # --- walking -----------------------------------------------------------------------

    def resolve(self, path: str | os.PathLike[str] | Sequence[str]) -> tuple[str, ...]:
        """``path`` with every link on it followed (beneath the root), as names that hold no
        link now. Missing names are kept as given."""
        place = self._walk(self.parts(path), follow_final=True)
        try:
            return place.parts
        finally:
            place.close()

    def _walk(
        self, parts: tuple[str, ...], *, follow_final: bool, create: bool = False, mode: int = 0o777
    ) -> _Place:
        """The folder holding ``parts[-1]`` (opened), its name, and the names leading to it.
        Folders on the way are opened without following links; a link met is followed
        (``follow_final`` also for the last name) if the policy allows and it stays beneath.
        ``create``: missing folders on the way are made."""
        hops = 0
        pending = parts
        while True:
            fd = os.dup(self._fd)
            done: list[str] = []
            try:
                restart: tuple[str, ...] | None = None
                for index, name in enumerate(pending):
                    rest = pending[index + 1 :]
                    if not rest:
                        if follow_final and _is_link(name, fd):
                            restart = self._follow(done, name, fd, rest)
                            break
                        return _Place(fd, name, (*done, name))
                    try:
                        step = os.open(name, _DIR_FLAGS, dir_fd=fd)
                    except FileNotFoundError:
                        if not create:
                            raise
                        with contextlib.suppress(FileExistsError):
                            os.mkdir(name, mode, dir_fd=fd)
                        step = self._open_folder(name, fd, done)
                    except OSError as exc:
                        if exc.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                            raise
                        if not _is_link(name, fd):
                            raise NotADirectoryError(
                                errno.ENOTDIR, f"{self._shown(done, name)} is not a folder"
                            ) from None
                        restart = self._follow(done, name, fd, rest)
                        break
                    os.close(fd)
                    fd = step
                    done.append(name)
                else:  # no names: the root itself
                    return _Place(fd, "", ())
            except BaseException:
                os.close(fd)
                raise
            os.close(fd)
            hops += 1
            if hops > MAX_LINKS:
                raise PathRefused(
                    f"Refused {self._shown(parts)}: more than {MAX_LINKS} links on the way.",
                    errno.ELOOP,
                )
            pending = restart

    def _open_folder(self, name: str, fd: int, done: list[str]) -> int:
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                raise MovedUnderfoot(
                    f"{self._shown(done, name)} changed while it was being made (a link or a "
                    "file appeared there)."
                ) from None
            raise

    def _follow(
        self, done: list[str], name: str, fd: int, rest: tuple[str, ...]
    ) -> tuple[str, ...]:
        """The names to walk instead, after the link ``done/name`` (refused if it leads out)."""
        shown = self._shown(done, name)
        if self.links == "none":
            raise PathRefused(
                f"Refused {shown}: it is a link, and the agent follows no link in its own "
                f"folder {self.real}. Remove the link (a copied or cloned folder may have "
                "planted it)."
            )
        try:
            target = os.readlink(name, dir_fd=fd)
        except OSError:
            raise MovedUnderfoot(f"{shown} changed while it was being followed.") from None
        if os.path.isabs(target):
            inside = _relative_to(os.path.normpath(target), os.fspath(self.real))
            if inside is None:
                inside = _relative_to(os.path.normpath(target), os.fspath(self.path))
            if inside is None:
                raise PathRefused(
                    f"Refused {shown}: it is a link to {target}, outside {self.real}."
                )
            return (*inside, *rest)
        combined: list[str] = list(done)
        for part in target.split(os.sep):
            if part in ("", "."):
                continue
            if part == "..":
                if not combined:
                    raise PathRefused(
                        f"Refused {shown}: it is a link to {target}, outside {self.real}."
                    )
                combined.pop()
            else:
                combined.append(part)
        return (*combined, *rest)

    def _shown(self, done: Sequence[str], name: str | None = None) -> str:
        parts = [*done, *([name] if name is not None else [])]
        return os.fspath(self.real.joinpath(*parts))

    # --- folders -----------------------------------------------------------------------

    @contextlib.contextmanager
    def folder(
        self,
        path: str | os.PathLike[str] | Sequence[str] = (),
        *,
        create: bool = False,
        mode: int = 0o777,
    ) -> Iterator[int]:
        """A descriptor of the folder ``path`` (made, with the folders on the way, when
        ``create``); closed when the block ends."""
        parts = self.parts(path)
        if not parts:
            fd = os.dup(self._fd)
        else:
            place = self._walk((*parts, "."), follow_final=False, create=create, mode=mode)
            fd = place.fd
        try:
            yield fd
        finally:
            os.close(fd)

    def subroot(
        self,
        path: str | os.PathLike[str] | Sequence[str],
        *,
        create: bool = False,
        links: LinkPolicy | None = None,
        mode: int = 0o777,
    ) -> Root:
        """The folder ``path`` as a root of its own, reached through this one (made when
        ``create``). ``links``: its policy (default: this root's; ``none`` also refuses a
        link on the way to it)."""
        policy = links or self.links
        walker = (
            self
            if policy == self.links
            else Root._pinned(os.dup(self._fd), self.path, self.real, policy)
        )
        parts = self.parts(path)
        place = walker._walk((*parts, "."), follow_final=False, create=create, mode=mode)
        real = self.real.joinpath(*place.parts[:-1])
        return Root._pinned(place.fd, self.path.joinpath(*parts), real, policy)

    def entries(self, path: str | os.PathLike[str] | Sequence[str] = ()) -> list[Entry]:
        """The entries of the folder ``path``, each with its kind as found (a link is a link)."""
        with self.folder(path) as fd:
            entries = []
            for name in os.listdir(fd):
                try:
                    info = os.stat(name, dir_fd=fd, follow_symlinks=False)
                except FileNotFoundError:
                    continue  # removed meanwhile
                entries.append(Entry(name, info))
            return entries

    def walk(
        self, path: str | os.PathLike[str] | Sequence[str] = ()
    ) -> Iterator[tuple[tuple[str, ...], list[str], list[str], int]]:
        """Like :func:`os.fwalk` beneath ``path``, links never followed: (names of the
        folder, its folders, its other entries, its descriptor). Prune by editing the
        folders' list in place."""
        parts = self.parts(path)
        with self.folder(parts) as fd:
            for top, folders, files, folder_fd in os.fwalk(".", dir_fd=fd, follow_symlinks=False):
                inner = tuple(p for p in top.split(os.sep) if p not in ("", "."))
                yield (*parts, *inner), folders, files, folder_fd

    def stat(
        self, path: str | os.PathLike[str] | Sequence[str], *, follow: bool = True
    ) -> os.stat_result:
        """The status of ``path`` (of a final link itself when not ``follow``)."""
        place = self._walk(self.parts(path), follow_final=follow)
        try:
            if not place.name:
                return os.fstat(place.fd)
            return os.stat(place.name, dir_fd=place.fd, follow_symlinks=False)
        finally:
            place.close()

    def exists(self, path: str | os.PathLike[str] | Sequence[str]) -> bool:
        """Whether ``path`` exists beneath the root (a link counts as itself)."""
        try:
            self.stat(path, follow=False)
        except (FileNotFoundError, NotADirectoryError, PathRefused):
            return False
        return True

    # --- reading -----------------------------------------------------------------------

    def open_file(self, path: str | os.PathLike[str] | Sequence[str]) -> int:
        """A descriptor of the regular file ``path``, open for reading (close it)."""
        parts = self.parts(path)
        follow = False  # the common case first: no link at the end, so no lstat before
        for _attempt in range(4):
            place = self._walk(parts, follow_final=follow)
            try:
                fd = os.open(place.name or ".", _READ_FLAGS, dir_fd=place.fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.EMLINK):
                    follow = True  # a link (or one since): followed if it stays beneath
                    continue
                raise
            finally:
                place.close()
            return _regular(fd, place.parts, self, single=self.links == "none")
        raise MovedUnderfoot(f"{self._shown(parts)} keeps changing while it is being opened.")

    def read(
        self, path: str | os.PathLike[str] | Sequence[str], *, limit: int | None = None
    ) -> bytes:
        """The bytes of the regular file ``path``; :class:`FileTooLarge` past ``limit``."""
        data, cut = self.read_head(path, limit)
        if cut:
            raise FileTooLarge(f"{self._shown(self.parts(path))} is larger than {limit:,} bytes.")
        return data

    def read_head(
        self, path: str | os.PathLike[str] | Sequence[str], limit: int | None, *, start: int = 0
    ) -> tuple[bytes, bool]:
        """At most ``limit`` bytes of ``path`` from byte ``start``, and whether there were more."""
        fd = self.open_file(path)
        try:
            return read_limited(fd, limit, start=start)
        finally:
            os.close(fd)

    # --- writing -----------------------------------------------------------------------

    def write(
        self,
        path: str | os.PathLike[str] | Sequence[str],
        data: bytes,
        *,
        make_folders: bool = False,
        durable: bool = True,
        mode: int | None = None,
    ) -> None:
        """Replace ``path`` with ``data`` atomically (a temporary file beside it, then a
        rename), keeping an existing file's permission bits; readers see the old or the new
        file, never a mix, and an error leaves nothing behind. A final link beneath the root
        is written through (its target is replaced). ``durable``: the data reaches the disk
        (fsync) before the rename. ``mode``: the new file's permission bits, which it has from
        its creation on (a secret is never readable by others, not even for a moment)."""
        parts = self.parts(path)
        if not parts:
            raise IsADirectoryError(errno.EISDIR, f"{self.real} is a folder")
        place = self._walk(parts, follow_final=True, create=make_folders)
        try:
            _replace(
                place.fd,
                place.name,
                data,
                durable=durable,
                mode=mode,
                shown=self._shown(place.parts),
            )
        finally:
            place.close()

    def append(self, path: str | os.PathLike[str] | Sequence[str]) -> BinaryIO:
        """The regular file ``path`` (made if missing) open for reading and appending,
        unbuffered. Refused when it has another name (a hard link) or is not a regular file."""
        parts = self.parts(path)
        place = self._walk(parts, follow_final=True)
        shown = self._shown(place.parts)
        try:
            flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | _NOFOLLOW | _NONBLOCK | _CLOEXEC
            try:
                fd = os.open(place.name, flags, 0o666, dir_fd=place.fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.EMLINK):
                    raise MovedUnderfoot(
                        f"{shown} became a link while it was being opened."
                    ) from None
                raise
        finally:
            place.close()
        _regular(fd, place.parts, self, single=True)
        return os.fdopen(fd, "ab+", buffering=0)

    def make_folder(
        self, path: str | os.PathLike[str] | Sequence[str], *, mode: int = 0o777
    ) -> None:
        """Make the folder ``path`` and the folders on the way (nothing if it exists)."""
        with self.folder(path, create=True, mode=mode):
            pass

    def remove(self, path: str | os.PathLike[str] | Sequence[str]) -> None:
        """Remove the file (or the link itself) ``path``."""
        place = self._walk(self.parts(path), follow_final=False)
        try:
            os.unlink(place.name, dir_fd=place.fd)
        finally:
            place.close()

    # --- databases ---------------------------------------------------------------------

    def database(
        self,
        path: str | os.PathLike[str] | Sequence[str],
        *,
        application_id: int,
        create: bool,
        timeout: float = 5.0,
    ) -> sqlite3.Connection:
        """A SQLite connection to ``path``, which must be a database of ours: a regular
        file with one name, empty or whose header carries ``application_id`` (or, with
        ``create``, made now with ``O_EXCL`` and stamped with ``application_id`` at once),
        its side files regular files or absent. Anything else raises
        :class:`ForeignDatabase` and is left as it is.

        On Linux the connection reaches the file through the descriptor of its folder
        (``/proc/self/fd/N/name``), so a folder swapped for a link afterwards is not followed;
        SQLite's side files sit in that same folder."""
        parts = self.parts(path)
        place = self._walk(parts, follow_final=False)
        shown = self._shown(place.parts)
        try:
            made = False
            try:
                info = os.stat(place.name, dir_fd=place.fd, follow_symlinks=False)
            except FileNotFoundError:
                if not create:
                    raise
                flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
                try:
                    os.close(os.open(place.name, flags, 0o666, dir_fd=place.fd))
                    made = True
                except FileExistsError:  # made meanwhile by another thread or kernel
                    pass
                info = os.stat(place.name, dir_fd=place.fd, follow_symlinks=False)
            if not made:
                _check_database(place.fd, place.name, info, application_id, shown)
            for suffix in ("-wal", "-shm", "-journal"):
                _check_side_file(place.fd, place.name + suffix, shown + suffix)
            key, folder_fd = _DATABASE_FOLDERS.acquire(place.fd)
        finally:
            place.close()
        via_fd = f"/proc/self/fd/{folder_fd}"
        target = f"{via_fd}/{place.name}" if os.path.isdir(via_fd) else shown
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


class _Place:
    """A folder descriptor, the name of an entry in it, and the names that led there."""

    __slots__ = ("fd", "name", "parts")

    def __init__(self, fd: int, name: str, parts: tuple[str, ...]) -> None:
        self.fd, self.name, self.parts = fd, name, parts

    def close(self) -> None:
        os.close(self.fd)


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


# --- files anywhere -----------------------------------------------------------------------


def read_regular(path: str | os.PathLike[str], limit: int | None) -> tuple[bytes, bool]:
    """At most ``limit`` bytes of the regular file ``path`` wherever it is, and whether
    there were more: for files a user names in code (a replay script, a rules file) or a
    library's source. Never blocks on a FIFO or a device (refused)."""
    shown = os.fspath(path)
    fd = os.open(shown, os.O_RDONLY | _NONBLOCK | _CLOEXEC)
    _regular(fd, shown)
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


# --- helpers ------------------------------------------------------------------------------


def _clean(names: list[str], root: Root) -> tuple[str, ...]:
    parts: list[str] = []
    for name in names:
        if name in ("", "."):
            continue
        if name == "..":
            if not parts:
                raise PathRefused(f"Refused {os.sep.join(names)}: '..' leads outside {root.real}.")
            parts.pop()
        elif "\0" in name or os.sep in name:
            raise PathRefused(f"Refused {name!r}: not a plain name.", errno.EINVAL)
        else:
            parts.append(name)
    return tuple(parts)


def _relative_to(path: str, base: str) -> tuple[str, ...] | None:
    if path == base:
        return ()
    prefix = base if base.endswith(os.sep) else base + os.sep
    if not path.startswith(prefix):
        return None
    return tuple(p for p in path[len(prefix) :].split(os.sep) if p)


def _is_link(name: str, fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
    except FileNotFoundError:
        return False


def _regular(
    fd: int, where: str | tuple[str, ...], root: Root | None = None, *, single: bool = False
) -> int:
    """``fd`` if it is a regular file (with one name, if ``single``); closed and refused
    otherwise. Clears the non-blocking flag it was opened with. ``where``: the path, or its
    names beneath ``root`` (made into a path only for a message)."""
    try:
        info = os.fstat(fd)
        regular = stat.S_ISREG(info.st_mode)
        if regular and not (single and info.st_nlink > 1):
            if _NONBLOCK and hasattr(os, "set_blocking"):
                os.set_blocking(fd, True)
            return fd
        shown = where if isinstance(where, str) or root is None else root._shown(where)
        if not regular:
            what = _kind(info.st_mode)
            raise NotRegularFile(f"Refused {shown}: it is {what}, not a regular file.", what)
        raise PathRefused(
            f"Refused {shown}: it has {info.st_nlink} names (hard links), so writing it "
            "would also change another file."
        )
    except BaseException:
        os.close(fd)
        raise


def _kind(mode: int) -> str:
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


def _replace(
    parent: int, name: str, data: bytes, *, durable: bool, mode: int | None, shown: str
) -> None:
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
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC,
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


def _check_database(
    folder: int, name: str, info: os.stat_result, application_id: int, shown: str
) -> None:
    """Refuse ``name`` unless it is a regular file with one name that is empty or a SQLite
    database carrying ``application_id``."""
    if not stat.S_ISREG(info.st_mode):
        raise ForeignDatabase(
            f"{shown} is {_kind(info.st_mode)}, not a database file the agent made: it was "
            "left alone. Remove it to let the agent make its own."
        )
    if info.st_nlink > 1:
        raise ForeignDatabase(
            f"{shown} has {info.st_nlink} names (hard links): it may be another program's "
            "database, so it was left alone. Remove it to let the agent make its own."
        )
    if info.st_size == 0:
        return
    fd = os.open(name, _READ_FLAGS, dir_fd=folder)
    try:
        header, _ = read_limited(_regular(fd, shown), 100)
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


def _check_side_file(folder: int, name: str, shown: str) -> None:
    try:
        info = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
        what = _kind(info.st_mode) if not stat.S_ISREG(info.st_mode) else "a file of several names"
        raise ForeignDatabase(
            f"{shown} is {what}, where SQLite keeps a database's changes: it was left "
            "alone, and so was the database. Remove it to let the agent use its own."
        )
