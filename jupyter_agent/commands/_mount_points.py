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

from ._mounts import ProtectionPlan
from ._owners import owner_alive, start_time

log = logging.getLogger(__name__)


class _MountPointLedger:
    """Which live launches, in any process of this user, use a /dev/null mount-point file.

    ``<tempdir>/jupyter_agent-mountpoints-<uid>/<hash of the path>/`` holds the path and one
    marker per live launch, ``<pid>-<process start time>-<n>`` (a reused pid does not look
    alive). All of it happens under an exclusive ``flock`` on ``lock``: a launch plans its
    mounts and adds its markers in one locked step before bwrap starts, and a file is removed
    only when no live marker is left.
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
        """Plan a launch's mounts and mark the mount-point files it uses, in one locked step.

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
            for entry in os.listdir(base):
                if entry != "lock":
                    _settle(base / entry)
            plan = make_plan()
            plan.make_filled()
            used = {base / _key(p): p for p in [*plan.blocked_paths(), *plan.filled]}
            used.update((base / _key(p), p) for p in plan.readonly if (base / _key(p)).is_dir())
            folders = list(used)
            marker = f"{os.getpid()}-{start_time(os.getpid())}-{next(self._count)}"
            for folder, path in used.items():
                folder.mkdir(exist_ok=True)
                (folder / "path").write_bytes(os.fsencode(path))
                if path in plan.filled:
                    (folder / "content").write_bytes(plan.filled[path])
                (folder / marker).touch()
        if not folders:
            return plan, lambda: None

        def release() -> None:
            with self._locked(create=False) as base:
                if base is None:
                    return
                for folder in folders:
                    with contextlib.suppress(FileNotFoundError):
                        (folder / marker).unlink()
                    _settle(folder)

        return plan, release


def _key(path: Path) -> str:
    return hashlib.sha256(os.fsencode(path)).hexdigest()[:32]


def _settle(folder: Path) -> None:
    """Drop stale markers; with no live one left, remove the mount-point file if unchanged."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    live = False
    for name in names:
        if name in ("path", "content"):
            continue
        if owner_alive(name):
            live = True
        else:
            with contextlib.suppress(OSError):
                (folder / name).unlink()
    if live:
        return
    with contextlib.suppress(OSError):
        path = os.fsdecode((folder / "path").read_bytes())
        made = (folder / "content").read_bytes() if (folder / "content").exists() else b""
        # Only the file bwrap or the launch made, unchanged: anything else is someone's work.
        if _holds(path, made):
            os.unlink(path)
    with contextlib.suppress(OSError):
        (folder / "content").unlink()
    with contextlib.suppress(OSError):
        (folder / "path").unlink()
    with contextlib.suppress(OSError):
        folder.rmdir()


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
