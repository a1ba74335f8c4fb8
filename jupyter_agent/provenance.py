"""Which files changed during an agent's session, so running one asks again.

"Always allow" on ``python3 analysis.py`` was given for the script as it was then. If the
agent rewrites ``analysis.py`` (file writes do not ask) and runs it again, the rule would
cover code nobody has seen. So before a command runs a workspace file — a script, a
Makefile, a test suite, a notebook — the shell tool asks again when that file was written
by the agent or changed since the agent started (its modification time), whatever rule
would allow the command.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from .sandbox import SKIP_DIRS

MAX_SCAN = 5_000
"""Files a test-suite check looks at before it gives up (and asks)."""


class WrittenFiles:
    """Files an agent wrote, and the moment it started (kept in memory, one per agent)."""

    def __init__(self, since: float | None = None) -> None:
        self.since = time.time() if since is None else since
        self._paths: set[str] = set()

    def add(self, path: Path | str) -> None:
        self._paths.add(os.path.realpath(path))

    def changed(self, path: Path | str) -> bool:
        """Whether ``path`` was written by the agent, or modified since it started."""
        real = os.path.realpath(path)
        if real in self._paths:
            return True
        try:
            return os.stat(real).st_mtime >= self.since
        except OSError:
            return False

    def changed_under(self, folder: Path | str, suffixes: tuple[str, ...] = (".py",)) -> str | None:
        """A changed file under ``folder`` with one of ``suffixes`` (its path), ``""`` when
        there are too many files to tell, ``None`` when none changed."""
        real = os.path.realpath(folder)
        if os.path.isfile(real):
            return real if self.changed(real) else None
        if any(p == real or p.startswith(real + os.sep) for p in self._paths):
            return next(p for p in self._paths if p == real or p.startswith(real + os.sep))
        seen = 0
        for root, dirs, files in os.walk(real):
            dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith(".")]
            for name in files:
                if not name.endswith(suffixes):
                    continue
                seen += 1
                if seen > MAX_SCAN:
                    return ""
                full = os.path.join(root, name)
                if self.changed(full):
                    return full
        return None
