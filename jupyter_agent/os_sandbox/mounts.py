"""The bubblewrap mounts beyond the writable roots: protected paths kept read-only and in
place, hidden paths covered.

Invariants (the "why" of each is in :mod:`.os_sandbox`'s docstring):

- Mounts go shallowest first (:func:`depth`): a mount replaces everything mounted below its
  target earlier. At one depth, read-only mounts come last.
- An existing protected path is a read-only mount; each folder on the way to it is mounted
  on itself, through a descriptor opened without following links (a concurrent command
  that swaps it for a link makes the launch fail, never the link's target writable); a
  missing one gets ``/dev/null`` on its first missing component, or, when it
  must read as some content (:class:`Protected`'s ``fills``: git's ``commondir``), a
  read-only file holding that content, made on the host for the launch; a symbolic
  link on the way is pinned by making its folder read-only (the other entries mounted back
  writable), and what it points to is protected in turn.
- A hidden folder gets an empty tmpfs, a hidden file ``/dev/null``; a hidden path that holds
  a writable root is never covered (that would hide the workspace).
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Protected:
    """What the sandbox keeps read-only: ``paths``, and for missing ones among them that a
    program must still be able to read, the content they read as (``fills``)."""

    paths: Sequence[Path]
    fills: Mapping[Path, bytes] = field(default_factory=dict)


def depth(path: Path) -> int:
    """How many parts ``path`` has: mounts are ordered by it, shallowest first."""
    return len(path.parts)


@dataclass
class ProtectionPlan:
    """Mounts that keep the protected paths read-only and in place."""

    pinned: dict[Path, set[str]] = field(default_factory=dict)
    """Folder → names of symbolic links in it that must not change: the folder goes read-only."""
    kept: set[Path] = field(default_factory=set)
    """Folders on the way to a protected path: mounted on themselves so they cannot move."""
    readonly: set[Path] = field(default_factory=set)
    """Existing protected paths, no link on the way."""
    blocked: set[Path] = field(default_factory=set)
    """First missing component of a protected path: /dev/null goes there."""
    filled: dict[Path, bytes] = field(default_factory=dict)
    """Missing protected paths made on the host, holding this content, then mounted
    read-only (:meth:`make_filled`)."""
    _readonly_text: set[str] | None = field(default=None, repr=False, compare=False)

    def _covered(self, path: Path, *, itself: bool) -> bool:
        """Whether a read-only path already covers ``path`` (then a mount there is moot)."""
        if self._readonly_text is None or len(self._readonly_text) != len(self.readonly):
            self._readonly_text = {os.fspath(p) for p in self.readonly}
        readonly = self._readonly_text
        text = os.fspath(path)
        if itself and text in readonly:
            return True
        parent = os.path.dirname(text)
        while parent != text:
            if parent in readonly:
                return True
            text, parent = parent, os.path.dirname(parent)
        return False

    def blocked_paths(self) -> list[Path]:
        # A missing entry of a pinned (read-only) folder cannot be created anyway, and bwrap
        # could not create a mount point there.
        return sorted(
            b
            for b in self.blocked
            if b.parent not in self.pinned and not self._covered(b, itself=False)
        )

    def mount_args(self, hold: Callable[[str], int] | None = None) -> list[str]:
        """bwrap's arguments. ``hold(path)`` opens a folder (or file) mounted writable and
        returns its descriptor: bwrap then mounts what was planned (``--bind-fd``), and
        fails if it was swapped meanwhile, where a path would follow a link a concurrent
        command put there and make the folder it names writable."""

        def writable(path: str) -> list[str]:
            if hold is None:
                return ["--bind", path, path]
            return ["--bind-fd", str(hold(path)), path]

        # A mount replaces everything mounted below its target earlier (its source is the
        # host's folder), so mounts go shallowest first; at one depth, read-only last.
        mounts: list[tuple[int, int, list[str]]] = []
        for folder, links in self.pinned.items():
            if self._covered(folder, itself=True):
                continue
            mounts.append((depth(folder), 1, ["--ro-bind", str(folder), str(folder)]))
            for entry in _entries(folder):
                if entry.name not in links:
                    mounts.append((depth(folder) + 1, 0, writable(entry.path)))
        for folder in self.kept:
            # A folder in a pinned one was mounted back with its siblings already.
            moot = folder in self.pinned or folder.parent in self.pinned
            if not moot and not self._covered(folder, itself=True):
                mounts.append((depth(folder), 0, writable(str(folder))))
        for path in self.readonly:
            if not self._covered(path, itself=False):
                mounts.append((depth(path), 1, ["--ro-bind", str(path), str(path)]))
        for path in self.blocked_paths():
            mounts.append((depth(path), 1, ["--ro-bind", "/dev/null", str(path)]))
        for path in self.filled:
            if path.parent not in self.pinned and not self._covered(path, itself=False):
                mounts.append((depth(path), 1, ["--ro-bind", str(path), str(path)]))
        return [arg for *_, args in sorted(mounts) for arg in args]

    def make_filled(self) -> None:
        """Create the files of :attr:`filled` on the host (never over anything: one that
        appeared meanwhile is mounted as it is). One that cannot be made is blocked with
        /dev/null instead, and the launch fails rather than run unprotected."""
        for path, content in list(self.filled.items()):
            try:
                # path gate: the folder was checked link-free by plan_protection; the file
                # is made new (O_EXCL) and never through a link (O_NOFOLLOW)
                fd = os.open(
                    path,
                    os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                    0o644,
                )
            except FileExistsError:
                continue
            except OSError as exc:
                log.warning("could not make %s for the sandbox: %s", path, exc)
                del self.filled[path]
                self.blocked.add(path)
                continue
            try:
                os.write(fd, content)
            finally:
                os.close(fd)


def _entries(folder: Path) -> list[os.DirEntry[str]]:
    """The entries of a pinned folder that get mounted back writable: files and folders."""
    try:
        with os.scandir(folder) as it:
            return [
                e
                for e in it
                if not e.is_symlink() and (e.is_dir(follow_symlinks=False) or e.is_file())
            ]
    except OSError:
        return []


def plan_protection(
    paths: Iterable[Path],
    roots: Sequence[tuple[Path, Path]],
    fills: Mapping[Path, bytes] | None = None,
) -> ProtectionPlan:
    """The mounts that keep ``paths`` read-only and in place; ``roots`` are the writable
    roots as (written, resolved) pairs, deepest first; ``fills``: missing paths that must
    read as this content."""
    plan = ProtectionPlan()
    fills = {Path(os.path.abspath(p)): c for p, c in (fills or {}).items()}
    todo = [Path(os.path.abspath(p)) for p in [*paths, *fills]]
    seen: set[Path] = set()
    _plan_paths(plan, todo, seen, roots, fills)
    # A protected file's other names (hard links) in a writable root are the same file.
    others = _other_names(_hard_linked(plan.readonly), [real for _, real in roots])
    _plan_paths(plan, [p for p in others if p not in seen], seen, roots, fills)
    return plan


HARD_LINK_SEARCH = 50_000
"""Entries looked at, at most, for the other names of a protected file that has several."""


def _hard_linked(readonly: Iterable[Path], budget: int = 2_000) -> set[tuple[int, int]]:
    """(device, inode) of the protected files that have other names (and of the files in
    protected folders, the first ``budget`` of them)."""
    found: set[tuple[int, int]] = set()
    for path in readonly:
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
            found.add((info.st_dev, info.st_ino))
        elif stat.S_ISDIR(info.st_mode):
            for folder, _dirs, files in os.walk(path):
                budget -= len(files)
                if budget < 0:
                    break
                for name in files:
                    try:
                        inner = os.lstat(os.path.join(folder, name))
                    except OSError:
                        continue
                    if stat.S_ISREG(inner.st_mode) and inner.st_nlink > 1:
                        found.add((inner.st_dev, inner.st_ino))
    return found


def _other_names(inodes: set[tuple[int, int]], roots: Sequence[Path]) -> list[Path]:
    """Every name of these files in the writable roots (a walk of at most
    :data:`HARD_LINK_SEARCH` entries, never through a link)."""
    if not inodes:
        return []
    names: list[Path] = []
    budget = HARD_LINK_SEARCH
    todo = [os.fspath(r) for r in roots]
    while todo and budget > 0:
        folder = todo.pop()
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError:
            continue
        budget -= len(entries)
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    todo.append(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    info = entry.stat(follow_symlinks=False)
                    if (info.st_dev, info.st_ino) in inodes:
                        names.append(Path(entry.path))
            except OSError:
                continue
    return names


def _plan_paths(
    plan: ProtectionPlan,
    todo: list[Path],
    seen: set[Path],
    roots: Sequence[tuple[Path, Path]],
    fills: Mapping[Path, bytes],
) -> None:
    while todo and len(seen) < 10_000:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        anchored = _anchor(path, roots)
        if anchored is None:
            continue  # outside the writable roots: read-only already
        root, parts = anchored
        current = root
        for index, part in enumerate(parts):
            parent, current = current, current / part
            try:
                mode = os.lstat(current).st_mode
            except FileNotFoundError:
                if index == len(parts) - 1 and path in fills:
                    plan.filled[current] = fills[path]
                else:
                    plan.blocked.add(current)
                break
            except OSError:
                break  # e.g. a file where a folder should be: nothing can be created below
            if stat.S_ISLNK(mode):
                plan.pinned.setdefault(parent, set()).add(part)
                target = os.path.realpath(current.joinpath(*parts[index + 1 :]))
                todo.append(Path(target))
                break
            if index < len(parts) - 1:
                if not stat.S_ISDIR(mode):
                    break
                plan.kept.add(current)
        else:
            plan.readonly.add(current)


def _anchor(path: Path, roots: Sequence[tuple[Path, Path]]) -> tuple[Path, tuple[str, ...]] | None:
    """(resolved root, the parts below it) for a path inside a writable root, else None."""
    for written, real in roots:
        for base in (real, written):
            if path == base or base in path.parents:
                return real, path.relative_to(base).parts
    # Spelled through a link above the root: resolve the folders, never the last part.
    resolved = Path(os.path.realpath(path.parent)) / path.name
    if resolved != path:
        for _written, real in roots:
            if resolved == real or real in resolved.parents:
                return real, resolved.relative_to(real).parts
    return None


def hidden_args(hidden: Iterable[Path], roots: Sequence[Path]) -> list[str]:
    """bwrap arguments that cover the existing ``hidden`` paths, outside the ``roots``."""
    places: list[Path] = []
    for spelled in hidden:
        path = Path(os.path.realpath(spelled))
        if not os.path.exists(path) or path in places:  # False, never raising, if unreadable
            continue
        if any(path == root or path in root.parents for root in roots):
            continue  # covering it would hide the workspace itself
        in_tmp = any(path == t or t in path.parents for t in (Path("/tmp"), Path("/var/tmp")))
        if in_tmp and not any(r in path.parents for r in roots):
            continue  # the private /tmp hides it already
        places.append(path)
    args: list[str] = []
    for path in sorted(places, key=depth):
        if any(p in path.parents for p in places):
            continue  # inside a hidden folder
        if os.path.isdir(path):
            args += ["--tmpfs", str(path)]
        else:
            args += ["--ro-bind", "/dev/null", str(path)]
    return args
