"""Programs of the system, found only in the system's own folders.

The kernel runs a few programs itself (bubblewrap, git) outside any sandbox. Looked up
on PATH, they could be files the agent wrote: a PATH that starts with a virtual
environment inside the workspace would run its ``bin/bwrap`` — a fake that confines
nothing — or its ``bin/git``. So they are taken from these folders only.
"""

from __future__ import annotations

import os

SYSTEM_FOLDERS = ("/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin", "/sbin", "/usr/local/sbin")
"""A command word naming a path in these folders is that program (``/usr/bin/git`` is git)."""


def system_program(name: str) -> str | None:
    """The path of ``name`` in a system folder, or ``None``."""
    for folder in SYSTEM_FOLDERS:
        path = os.path.join(folder, name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None
