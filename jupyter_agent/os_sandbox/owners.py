"""Names that tie a file on the host to the process that made it: ``<pid>-<start time>``.

Invariant: a name is alive while a process with that pid runs and started at that time (or
its start time cannot be read), so a pid the system reused for another process does not keep
a leftover alive.
"""

from __future__ import annotations

import os


def start_time(pid: int) -> str:
    """When the process started (clock ticks since boot), or "" if that cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
        # The command name (field 2) may hold spaces and parentheses: split after its last ")".
        return data.rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return ""


def owner_alive(name: str) -> bool:
    """Whether the process named ``<pid>-<start time>[-…]`` still runs."""
    pid, start, _n = [*name.split("-", 2), "", ""][:3]
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # alive, another user's: only the start time can tell a reused pid
    return not start or start_time(int(pid)) == start
