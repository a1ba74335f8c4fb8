"""The mount-point files a launch leaves on the host, and when they may go.

bwrap creates an empty file on the host where it mounts ``/dev/null`` on a missing protected
path; a launch itself makes the file of a missing path that must read as some content
(git's ``commondir``: :attr:`ProtectionPlan.filled`). Invariant: such a file is removed only
when no live launch, in any process of this user, still uses it. Removing it early would be
a hole: unlinking a mount point on the host detaches that mount in every sandbox that has
it. Only the empty regular file bwrap made, or one still holding exactly the content the
launch wrote, is ever removed; anything else at that path is someone's work. The markers of
a process that crashed are swept at the next launch, and its files with them.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import logging
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from .mounts import ProtectionPlan
from .owners import owner_alive, start_time

log = logging.getLogger(__name__)


class _MountPointLedger:
    """Which live launches, in any process of this user, use a mount-point file.

    ``<tempdir>/jupyter_agent-mountpoints-<uid>/`` holds, per file (``<key>``: a hash of its
    path), ``<key>.path`` (the path), ``<key>.content`` (what the launch wrote in it, when it
    made it) and one marker per live launch, ``<key>@<pid>-<process start time>-<n>`` (a
    reused pid does not look alive). One flat folder: removing a folder costs milliseconds
    on some file systems, and a launch in a home folder uses a hundred mount points. All of
    it happens under an exclusive ``flock`` on ``lock``: a launch plans its mounts and adds
    its markers in one locked step before bwrap starts, and a file is removed only when no
    live marker is left.
    """

    def __init__(self) -> None:
        self._count = itertools.count()

    @contextlib.contextmanager
    def _locked(self, *, create: bool) -> Iterator[Path | None]:
        import fcntl  # POSIX only; the ledger serves bubblewrap alone

        base = Path(tempfile.gettempdir()) / f"jupyter_agent-mountpoints-{os.getuid()}"
        if create:
            with contextlib.suppress(FileExistsError):
                base.mkdir(mode=0o700)
        try:
            info = os.lstat(base)
        except FileNotFoundError:
            yield None
            return
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
            log.warning("%s is not a private folder of ours: mount points are left in place", base)
            yield None
            return
        fd = os.open(base / "lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield base
        finally:
            os.close(fd)

    def reserve(
        self, make_plan: Callable[[], ProtectionPlan]
    ) -> tuple[ProtectionPlan, Callable[[], None]]:
        """Plan a launch's mounts, make its filled files and mark the mount-point files it
        uses, in one locked step.

        First the files of crashed processes go (else the plan would take one for a real
        file); a planned read-only path that is another launch's mount-point file is marked
        too, so that launch's end does not remove it under this one. The returned function
        releases the marks.
        """
        with self._locked(create=True) as base:
            if base is None:
                plan = make_plan()
                plan.make_filled()
                return plan, lambda: None
            for key, markers in _entries(base).items():
                _settle(base, key, markers)
            plan = make_plan()
            plan.make_filled()
            used = {_key(p): p for p in [*plan.blocked_paths(), *plan.filled]}
            used.update((_key(p), p) for p in plan.readonly if (base / f"{_key(p)}.path").exists())
            marker = f"{os.getpid()}-{start_time(os.getpid())}-{next(self._count)}"
            for key, path in used.items():
                (base / f"{key}.path").write_bytes(os.fsencode(path))
                if path in plan.filled:
                    (base / f"{key}.content").write_bytes(plan.filled[path])
                (base / f"{key}@{marker}").touch()
        if not used:
            return plan, lambda: None
        keys = list(used)

        def release() -> None:
            with self._locked(create=False) as base:
                if base is None:
                    return
                for key in keys:
                    with contextlib.suppress(FileNotFoundError):
                        (base / f"{key}@{marker}").unlink()
                entries = _entries(base)
                for key in keys:
                    _settle(base, key, entries.get(key, []))

        return plan, release


def _key(path: Path) -> str:
    return hashlib.sha256(os.fsencode(path)).hexdigest()[:32]


def _entries(base: Path) -> dict[str, list[str]]:
    """Each key in the ledger with its markers."""
    found: dict[str, list[str]] = {}
    for name in os.listdir(base):
        key, at, marker = name.partition("@")
        if at:
            found.setdefault(key, []).append(marker)
        elif name.endswith(".path"):
            found.setdefault(name.removesuffix(".path"), [])
    return found


def _settle(base: Path, key: str, markers: list[str]) -> None:
    """Drop stale markers; with no live one left, remove the mount-point file if unchanged."""
    live = False
    for marker in markers:
        if owner_alive(marker):
            live = True
        else:
            with contextlib.suppress(OSError):
                (base / f"{key}@{marker}").unlink()
    if live:
        return
    content_file = base / f"{key}.content"
    with contextlib.suppress(OSError):
        path = os.fsdecode((base / f"{key}.path").read_bytes())
        made = content_file.read_bytes() if content_file.exists() else b""
        # Only the file bwrap or the launch made, unchanged: anything else is someone's work.
        if _holds(path, made):
            os.unlink(path)
    for name in (f"{key}.content", f"{key}.path"):
        with contextlib.suppress(OSError):
            (base / name).unlink()


def _holds(path: str, content: bytes) -> bool:
    """Whether ``path`` is a regular file holding exactly ``content`` (never blocks)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size != len(content):
            return False
        return os.read(fd, len(content) + 1) == content
    finally:
        os.close(fd)


LEDGER = _MountPointLedger()
