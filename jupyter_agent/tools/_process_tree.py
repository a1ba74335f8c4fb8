"""The processes a command started, found and ended by their group and their ancestry.

Invariant: a process counts as running until it is gone or a zombie; where ``/proc`` is
missing the group is asked with signal 0, and the descendants are unknown (empty).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Iterator


def descendants(pid: int) -> set[int]:
    """The processes ``pid`` started, at any depth (read from /proc; empty elsewhere)."""
    parents: dict[int, int] = {}
    for name, fields in _proc_stats():
        with contextlib.suppress(ValueError, IndexError):
            parents[int(name)] = int(fields[1])
    found: set[int] = set()
    todo = [pid]
    while todo:
        parent = todo.pop()
        children = [child for child, ppid in parents.items() if ppid == parent]
        todo.extend(c for c in children if c not in found)
        found.update(children)
    return found


def any_alive(pids: set[int]) -> bool:
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if fields and fields[0] not in (b"Z", b"X"):
            return True
    return False


def close_pipes(proc: asyncio.subprocess.Process) -> None:
    """Stop reading the output (kept open by a process that escaped the group, if any)."""
    transport = getattr(proc, "_transport", None)  # asyncio closes it only at EOF
    if transport is not None:
        transport.close()


def signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def group_alive(pgid: int) -> bool:
    """Whether a process of the group still runs (zombies, waiting to be reaped, do not)."""
    if not os.path.exists("/proc/self/stat"):
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    return any(
        len(fields) > 2 and fields[2] == str(pgid).encode() and fields[0] not in (b"Z", b"X")
        for _name, fields in _proc_stats()
    )


def _proc_stats() -> Iterator[tuple[str, list[bytes]]]:
    """Each process's pid and the fields of ``/proc/<pid>/stat`` after its name (state,
    parent, group…); nothing where there is no /proc."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        yield name, stat[stat.rfind(b")") + 2 :].split()
