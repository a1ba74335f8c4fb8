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
removes a file and fails on any outside the gate (this module, :mod:`.path_files` for
regular files and atomic writes, :mod:`.path_database` for SQLite) that is not on its short
allow-list.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import sqlite3
import stat
import weakref
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import BinaryIO, Literal

from .path_database import SQLITE_HEADER, open_database
from .path_files import (
    CLOEXEC,
    DIR_FLAGS,
    DIRECTORY,
    NOFOLLOW,
    NONBLOCK,
    READ_FLAGS,
    Entry,
    FileTooLarge,
    ForeignDatabase,
    MovedUnderfoot,
    NotRegularFile,
    PathRefused,
    check_regular,
    read_limited,
    read_regular,
    replace_atomically,
)

__all__ = [
    "MAX_LINKS",
    "SQLITE_HEADER",
    "SUPPORTED",
    "Entry",
    "FileTooLarge",
    "ForeignDatabase",
    "LinkPolicy",
    "MovedUnderfoot",
    "NotRegularFile",
    "PathRefused",
    "Root",
    "read_limited",
    "read_regular",
]

LinkPolicy = Literal["beneath", "none"]
"""``beneath``: a link is followed when its target stays beneath the root; ``none``: every
link is refused (the agent's own state)."""

MAX_LINKS = 40
"""Links followed in one path at most (Linux's own limit for a path lookup)."""

SUPPORTED = os.open in os.supports_dir_fd and os.replace in os.supports_dir_fd
"""Whether this platform opens beneath folder descriptors (Linux, macOS)."""


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
        fd = os.open(self.real, os.O_RDONLY | DIRECTORY | CLOEXEC)
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
                        step = os.open(name, DIR_FLAGS, dir_fd=fd)
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
            return os.open(name, DIR_FLAGS, dir_fd=fd)
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
                fd = os.open(place.name or ".", READ_FLAGS, dir_fd=place.fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.EMLINK):
                    follow = True  # a link (or one since): followed if it stays beneath
                    continue
                raise
            finally:
                place.close()
            return check_regular(
                fd, functools.partial(self._shown, place.parts), single=self.links == "none"
            )
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
            replace_atomically(
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
            flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | NOFOLLOW | NONBLOCK | CLOEXEC
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
        check_regular(fd, functools.partial(self._shown, place.parts), single=True)
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
        place = self._walk(self.parts(path), follow_final=False)
        try:
            return open_database(
                place.fd,
                place.name,
                self._shown(place.parts),
                application_id=application_id,
                create=create,
                timeout=timeout,
            )
        finally:
            place.close()


class _Place:
    """A folder descriptor, the name of an entry in it, and the names that led there."""

    __slots__ = ("fd", "name", "parts")

    def __init__(self, fd: int, name: str, parts: tuple[str, ...]) -> None:
        self.fd, self.name, self.parts = fd, name, parts

    def close(self) -> None:
        os.close(self.fd)


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
