"""The private ``/tmp`` and ``/var/tmp`` of a sandbox, on the host.

Invariants: the private folder is a 0700 folder under :func:`tempfile.gettempdir`, named
``jupyter_agent-tmp-<pid>-<start time>-<random>`` so that the folders of a process that ended
without removing its own (a killed kernel) are recognised and removed by the next one that
makes one; only folders of this user are removed. Installed programs that live under the
real /tmp (a virtual environment made there) stay visible, read-only, above the private one.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from .mounts import depth
from .owners import owner_alive, start_time

_TMP_PREFIX = "jupyter_agent-tmp-"


def make_private_tmp() -> Path:
    """A new private folder holding ``tmp`` and ``var-tmp``; orphaned ones go first."""
    _remove_orphaned_tmps()
    owner = f"{os.getpid()}-{start_time(os.getpid())}"
    tmp = Path(tempfile.mkdtemp(prefix=f"{_TMP_PREFIX}{owner}-"))  # 0700
    for name in ("tmp", "var-tmp"):
        (tmp / name).mkdir()
        # What programs expect of /tmp; the 0700 folder around keeps others out.
        os.chmod(tmp / name, 0o1777)
    return tmp


def _remove_orphaned_tmps() -> None:
    """Remove the private /tmp folders of processes that ended without closing (a killed
    kernel): ``jupyter_agent-tmp-<pid>-<start time>-<random>``."""
    base = tempfile.gettempdir()
    uid = os.getuid() if hasattr(os, "getuid") else None
    try:
        names = [n for n in os.listdir(base) if n.startswith(_TMP_PREFIX)]
    except OSError:
        return
    for name in names:
        owner = name[len(_TMP_PREFIX) :].rsplit("-", 1)[0]
        path = os.path.join(base, name)
        try:
            info = os.lstat(path)
        except OSError:
            continue
        ours = stat.S_ISDIR(info.st_mode) and (uid is None or info.st_uid == uid)
        if ours and owner.count("-") == 1 and not owner_alive(owner):
            remove_tree(Path(path))


def remove_tree(path: Path) -> None:
    """Remove a private /tmp, including folders a command made read-only."""
    for folder, dirs, _files in os.walk(path):
        for name in dirs:
            child = os.path.join(folder, name)
            if not os.path.islink(child):
                with contextlib.suppress(OSError):
                    os.chmod(child, 0o700)
    shutil.rmtree(path, ignore_errors=True)


def programs_under(temps: Sequence[Path], roots: Sequence[Path]) -> list[Path]:
    """Installed programs the private /tmp would hide: this Python's prefixes and the
    PATH's folders that live under the real /tmp (a virtual environment made there, a CI
    checkout), shown read-only, outermost first."""
    places = [Path(sys.prefix), Path(sys.exec_prefix), Path(sys.base_prefix)]
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        if entry and os.path.isabs(entry):
            folder = Path(entry)
            places.append(folder.parent if folder.name == "bin" else folder)
    found: list[Path] = []
    for place in places:
        real = Path(os.path.realpath(place))
        if (
            os.path.isdir(real)
            and any(t in real.parents for t in temps)
            and not any(r == real or r in real.parents for r in roots)
            and not any(f == real or f in real.parents for f in found)
        ):
            found = [f for f in found if real not in f.parents]
            found.append(real)
    return sorted(found, key=depth)
